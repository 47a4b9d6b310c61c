"""A training run's course as one PNG: score, success, return, losses and speed over env steps.

Reads the trainer's ``progress.csv`` (one row per PPO iteration, see
``toolgym.agents.trainer.train``) and draws with Matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

PANELS = (
    ("score (mean final score of the episodes that ended)", ("score", "success_rate")),
    ("return", ("return",)),
    ("losses", ("policy_loss", "value_loss")),
    ("entropy and KL", ("entropy", "approx_kl")),
    ("environment steps per second", ("sps",)),
    ("learning rate", ("lr",)),
)


def read_progress(path: Path) -> dict[str, list[float]]:
    """``progress.csv`` as columns of floats (a cell that is not a number is NaN).

    Raises ``ValueError`` when the file has no rows or no ``env_steps`` column."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "env_steps" not in rows[0]:
        raise ValueError(f"{path}: no training progress in it (no rows, or no env_steps column)")
    return {key: [_number(row.get(key)) for row in rows] for key in rows[0]}


def plot_progress(progress: Path, out: Path, title: str | None = None) -> int:
    """Draw ``progress`` (a ``progress.csv``) into ``out`` (PNG); returns the iterations drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = read_progress(progress)
    steps = columns["env_steps"]
    figure, axes = plt.subplots(3, 2, figsize=(11, 9), constrained_layout=True)
    for axis, (name, keys) in zip(axes.flat, PANELS, strict=True):
        for key in keys:
            if key in columns:
                axis.plot(steps, columns[key], marker="." if len(steps) < 30 else None, label=key)
        axis.set_title(name, fontsize=10)
        axis.set_xlabel("environment steps (tool calls)")
        axis.grid(alpha=0.3)
        if len(keys) > 1:
            axis.legend(fontsize=8)
    figure.suptitle(title or str(progress.parent))
    figure.savefig(out, format="png", dpi=80)
    plt.close(figure)
    return len(steps)


def _number(cell: str | None) -> float:
    try:
        return float(cell) if cell not in (None, "") else math.nan
    except ValueError:
        return math.nan
