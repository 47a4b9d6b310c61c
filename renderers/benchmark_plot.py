"""A benchmark report as one PNG: mean exact score by tier and by part, one bar per tool.

It reads only the report's plain data (the renderers sit below the agents), so the parts' order
is written here as ``toolgym.agents.benchmark.sets`` names them."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_report(report: dict[str, Any], out: Path) -> None:
    """Draw ``report`` (``toolgym.agents.benchmark.report.summarize``) into ``out`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = report["tasks"]
    tools = sorted({r["tool"] for r in rows})
    figure, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for axis, group in zip(axes, ("tier", "part"), strict=True):
        values = sorted({r[group] for r in rows}, key=lambda v: (_rank(v), str(v)))
        width = 0.8 / max(len(tools), 1)
        for k, tool in enumerate(tools):
            means = []
            for value in values:
                scores = [r["score"] for r in rows if r["tool"] == tool and r[group] == value]
                means.append(float(np.mean(scores)) if scores else np.nan)
            axis.bar(np.arange(len(values)) + k * width, means, width, label=tool)
        axis.set_xticks(np.arange(len(values)) + width * (len(tools) - 1) / 2)
        axis.set_xticklabels([str(v) for v in values])
        axis.set_ylim(0, 1.05)
        axis.set_xlabel(group)
        axis.set_ylabel("mean exact score")
        axis.legend(fontsize=8)
    run = report["run"]
    figure.suptitle(f"{run['agent']['kind']} on {run['set']} ({run['set_hash']})")
    figure.savefig(out, dpi=100)
    plt.close(figure)


# Parts in the order the sets name them (a tier sorts by its number).
PART_ORDER = ("seen", "styles", "families", "edits", "image", "curated")


def _rank(value: Any) -> int:
    return PART_ORDER.index(value) if value in PART_ORDER else 0
