"""The ``toolgym`` command line."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from toolgym._version import __version__

app = typer.Typer(
    help="toolgym: agents that operate professional tools by writing scripts.", no_args_is_help=True
)
console = Console()


def _version(value: bool) -> None:
    if value:
        console.print(f"toolgym {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """toolgym: Gymnasium environments for CadQuery, Blender and a Panda3D game-scene runtime."""


@app.command()
def doctor() -> None:
    """Check the tools, the sandbox's isolation layers and headless rendering on this machine."""
    from toolgym.envs.doctor import run_checks

    checks = run_checks()
    table = Table(title="toolgym doctor")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in checks:
        status = (
            "[green]ok[/]"
            if check.ok
            else ("[red]FAIL[/]" if check.required else "[yellow]warn[/]")
        )
        table.add_row(check.name, status, check.detail)
    console.print(table)
    failed = [c.name for c in checks if c.required and not c.ok]
    warned = [c.name for c in checks if not c.required and not c.ok]
    if failed:
        console.print(f"[red bold]Verdict: NOT READY[/] - failed: {', '.join(failed)}")
        raise typer.Exit(1)
    if warned:
        console.print(
            f"[yellow bold]Verdict: READY, with reduced isolation[/] ({', '.join(warned)})"
        )
    else:
        console.print(
            "[green bold]Verdict: READY[/] - every tool works and every isolation layer is active."
        )


if __name__ == "__main__":
    app()
