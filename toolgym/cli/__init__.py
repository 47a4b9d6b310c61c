"""The ``toolgym`` command line: one module per group of commands, all on one Typer ``app``."""

from toolgym.cli import (  # noqa: F401 - registers commands
    benchmark,
    catalogue,
    doctor,
    episodes,
    fuzzing,
    llm,
    plotting,
    replaying,
    serving,
    training,
    verifying,
)
from toolgym.cli.common import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
