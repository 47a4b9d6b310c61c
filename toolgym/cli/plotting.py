"""``toolgym plot``: a training run's progress as a picture."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from toolgym.cli.common import app, check_writable_file, console, fail


@app.command()
def plot(
    run: Annotated[Path, typer.Argument(help="A run folder of `toolgym train` (or its CSV).")],
    out: Annotated[
        Path | None, typer.Option(help="PNG to write (default: RUN/progress.png).")
    ] = None,
) -> None:
    """Plot a training run's progress.csv: score, success, return, losses, speed (PNG)."""
    from toolgym.renderers.training_plot import plot_progress

    progress = run if run.is_file() else run / "progress.csv"
    if not run.exists():
        fail(f"{run}: no such run folder")
    if not progress.is_file():
        fail(f"{run}: no progress.csv in it; give a folder written by `toolgym train --out`")
    target = out or progress.with_name("progress.png")
    check_writable_file(target)
    try:
        iterations = plot_progress(progress, target)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    console.print(f"{iterations} iterations: {escape(str(target))}", soft_wrap=True)
