"""``toolgym doctor``: is this machine ready?"""

from __future__ import annotations

import typer
from rich.table import Table

from toolgym.cli.common import app, console


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
