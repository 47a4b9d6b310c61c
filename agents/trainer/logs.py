"""The run's figures: one row per iteration, into ``progress.csv`` and TensorBoard, and its status
line.

Mixed runs add each tool's score, its share of the iteration's steps and its share of the
sampler's weight (``score_<tool>``, ``share_<tool>``, ``weight_<tool>``).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.agents.trainer.rollout import Rollout
from toolgym.agents.trainer.runners import Timing

CSV_FIELDS = (
    "iteration",
    "env_steps",
    "episodes",
    "return",
    "score",
    "success_rate",
    "sps",
    "lr",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "old_approx_kl",
    "clipfrac",
    "explained_variance",
    "epochs",
    "learner_waits_env",
    "env_waits_learner",
    "sampler_max_weight",
    "sampler_entropy",
    "seconds",
)


def progress_row(
    rollout: Rollout,
    stats: dict[str, float],
    lr: float,
    timing: Timing,
    iteration: int,
    env_steps: int,
    episodes: int,
) -> dict[str, Any]:
    """Iteration ``iteration``'s figures (``progress.csv``), the run's totals ``env_steps`` and
    ``episodes`` counted to its end; ``sampler_weights`` too (for TensorBoard, not the CSV)."""
    seconds, learner_waits, envs_wait = timing
    scores, passes, returns = rollout["scores"], rollout["passes"], rollout["episode_returns"]
    # Taken at the rollout's end: overlapped, the next rollout's episodes already update the
    # sampler while the learner writes this row.
    weights, shares = rollout["sampler_weights"], rollout["group_shares"]
    tool_steps = rollout["tool_steps"]
    per_tool: dict[str, float] = {}
    # Mixed: each tool's columns (the sampler's groups are then the tools; in a suite of several
    # families they are the families, which have no columns).
    for k, (tool, found) in enumerate(rollout["tool_scores"].items()):
        per_tool[f"score_{tool}"] = float(np.mean(found)) if found else float("nan")
        per_tool[f"share_{tool}"] = float(tool_steps[k] / max(tool_steps.sum(), 1))
        per_tool[f"weight_{tool}"] = shares.get(tool, float("nan"))
    steps = rollout["rewards"].size  # calls this iteration: envs x steps
    return {
        "iteration": iteration,
        "env_steps": env_steps,
        "episodes": episodes,
        "return": float(np.mean(returns)) if returns else float("nan"),
        "score": float(np.mean(scores)) if scores else float("nan"),
        "success_rate": float(np.mean(passes)) if passes else float("nan"),
        "sps": steps / seconds,
        "lr": lr,
        **stats,
        "learner_waits_env": learner_waits,
        "env_waits_learner": envs_wait,
        "sampler_max_weight": float(weights.max()),
        "sampler_entropy": float(-(weights * np.log(weights + 1e-12)).sum()),
        "seconds": seconds,
        **per_tool,
        "sampler_weights": weights,
    }


class ProgressLog:
    """``out/progress.csv`` (one row per iteration; a run's first row starts it afresh) and
    ``out/tensorboard`` (the same figures, and the sampler's weight per level of
    ``levels``). ``tools``: a mixed run's, for their columns; ``purge_step``: where a resumed
    run's TensorBoard curves pick up."""

    def __init__(
        self, out: Path, levels: Sequence[str], tools: Sequence[str] = (), purge_step: int = 0
    ) -> None:
        from torch.utils.tensorboard import SummaryWriter  # slow to import: only for a run

        self.path = out / "progress.csv"
        self.levels = list(levels)
        self.fields = csv_fields(tools)
        self.writer = SummaryWriter(str(out / "tensorboard"), purge_step=purge_step)

    def write(self, row: dict[str, Any]) -> None:
        fresh = not self.path.exists() or row["iteration"] == 1
        with self.path.open("w" if fresh else "a", newline="") as handle:
            out = csv.DictWriter(handle, self.fields, extrasaction="ignore")
            if fresh:
                out.writeheader()
            out.writerow(row)
        for key in self.fields[1:]:
            if isinstance(row.get(key), float | int) and np.isfinite(row[key]):
                self.writer.add_scalar(f"train/{key}", row[key], row["env_steps"])
        weights = row["sampler_weights"]
        if len(weights) <= 64:  # one curve per level stays readable up to a few dozen
            for level, weight in zip(self.levels, weights, strict=True):
                self.writer.add_scalar(f"sampler/{level}", weight, row["env_steps"])
        else:
            self.writer.add_histogram("sampler/weights", weights, row["env_steps"])

    def cloning(self, losses: Sequence[float]) -> None:
        """Behaviour cloning's NLL per step."""
        for k, loss in enumerate(losses):
            self.writer.add_scalar("bc/nll", loss, k)

    def close(self) -> None:
        self.writer.close()


def csv_fields(tools: Sequence[str] = ()) -> tuple[str, ...]:
    """``progress.csv``'s columns: :data:`CSV_FIELDS`, then each tool's of a mixed run."""
    per_tool = (f"{kind}_{tool}" for tool in tools for kind in ("score", "share", "weight"))
    return CSV_FIELDS + tuple(per_tool)


def status(row: dict[str, Any]) -> str:
    """The iteration's one line: steps, score, success, speed (and, mixed, each tool's)."""
    line = (
        f"steps {row['env_steps']}  score {row['score']:.3f}  "
        f"success {row['success_rate']:.2f}  {row['sps']:.1f} steps/s"
    )
    for tool in (k.removeprefix("share_") for k in row if k.startswith("share_")):
        # Mixed: each tool's score and its share of the iteration's steps.
        line += f"  {tool} {row[f'score_{tool}']:.3f} ({row[f'share_{tool}']:.0%})"
    return line
