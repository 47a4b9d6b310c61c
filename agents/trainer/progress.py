"""Progress bars for long work (the trainer's phases, evaluation): count, elapsed time and ETA.

A phase says it has started with one line (so a log that is not a terminal shows it at once),
then shows a bar while it runs; ``enabled=False`` shows nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

Advance = Callable[..., None]


@contextlib.contextmanager
def phase(
    label: str,
    total: int,
    enabled: bool = True,
    done: int = 0,
    log: Callable[[str], None] | None = None,
    start: str | None = None,
) -> Iterator[Advance]:
    """A bar over ``total`` units (``done`` already), labelled ``label``, with elapsed time and
    an ETA. Yields ``advance(n=1, status="")``; ``advance(status=..., line=...)`` also prints
    ``line`` above the bar. ``start``: a line logged (with ``log``) before the bar appears."""
    if not enabled:
        yield lambda n=1, status="", line=None: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if start:
        (log or print)(start)
    # The ETA averages over the last hour: one unit (a PPO iteration) may take minutes.
    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}"),
        speed_estimate_period=3600,
    )
    task = bar.add_task(label, total=total, completed=done, status="")

    def advance(n: int = 1, status: str = "", line: str | None = None) -> None:
        if line:
            bar.console.print(line)
        bar.update(task, advance=n, status=status)

    with bar:
        yield advance
