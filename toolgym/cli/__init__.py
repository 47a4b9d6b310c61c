"""The ``toolgym`` command line: one module per group of commands, all on one Typer ``app``."""

from toolgym.cli import catalogue, doctor, episodes, llm, replaying, serving, training, verifying  # noqa: F401 - registers commands
from toolgym.cli.common import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
