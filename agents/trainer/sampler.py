"""Task sampling weighted towards weakness, after Prioritized Level Replay (Jiang et al., 2021).

Levels are task ids (any strings: tasks of one suite, or of several domains mixed). Each level
keeps a recent score (an exponential moving average of its episodes' final scores) and the
episode count at which it was last played. Its weight mixes:

- weakness: ``1 - recent score``, ranked (PLR's rank prioritisation: the weakest level gets
  ``1/1``, the next ``1/2`` ...) and sharpened by ``1 / temperature``;
- staleness: episodes since the level was last played, so scores do not go stale;
- a uniform floor, so every level keeps a chance.

Levels never played come first, in order, until each has been played once (PLR's "unseen" rule).
With ``enabled=False`` the weights are uniform.

With ``groups`` (each level's group: its tool, when several tools train together) the weight is
hierarchical: a group's weight comes from the same rule over the groups (a group's recent score
is the mean of its played levels'; it is stale since any of its levels was played), then each
level's within its group. So the share of the weakest tool rises however many tasks each tool
has (a 200-task suite beside a 6-task one would otherwise hold 97 % of the unseen levels).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np


@dataclasses.dataclass
class SamplerConfig:
    enabled: bool = True
    temperature: float = 1.0  # on ranks: 1, 1/2, 1/3 ... (lower is peakier)
    staleness: float = 0.3  # the staleness share of the weight (PLR's rho)
    uniform: float = 0.05  # the uniform floor's share
    ema: float = 0.5  # weight of a new score in the recent score


class WeaknessSampler:
    """Weights over levels from their recent scores; see the module docstring."""

    def __init__(
        self,
        levels: Sequence[str],
        config: SamplerConfig | None = None,
        groups: Sequence[str] | None = None,
    ) -> None:
        if not levels:
            raise ValueError("the sampler needs at least one level")
        if groups is not None and len(groups) != len(levels):
            raise ValueError(f"{len(groups)} groups for {len(levels)} levels")
        self.levels = list(levels)
        self.groups = list(dict.fromkeys(groups)) if groups is not None else None
        self.members = (
            [np.flatnonzero(np.asarray(groups) == g) for g in self.groups] if groups else []
        )
        self.index = {level: i for i, level in enumerate(self.levels)}
        self.config = config or SamplerConfig()
        self.scores = np.zeros(len(self.levels))
        self.seen = np.zeros(len(self.levels), bool)
        self.last_played = np.zeros(len(self.levels))
        self.episodes = 0

    def update(self, level: str, score: float) -> None:
        """Record one finished episode of ``level`` with final score ``score`` in [0, 1]."""
        i = self.index.get(level)
        if i is None:
            return
        ema = self.config.ema if self.seen[i] else 1.0
        self.scores[i] = (1 - ema) * self.scores[i] + ema * float(score)
        self.seen[i] = True
        self.episodes += 1
        self.last_played[i] = self.episodes

    def weights(self) -> np.ndarray:
        """Probabilities over ``levels`` (sum 1)."""
        if self.groups is None:
            return self._plr(self.scores, self.seen, self.last_played)
        seen = np.array([self.seen[m].any() for m in self.members])
        scores = np.array(
            [
                self.scores[m][self.seen[m]].mean() if s else 0.0
                for m, s in zip(self.members, seen, strict=True)
            ]
        )
        last = np.array([self.last_played[m].max() for m in self.members])
        by_group = self._plr(scores, seen, last)
        out = np.zeros(len(self.levels))
        for share, m in zip(by_group, self.members, strict=True):
            out[m] = share * self._plr(self.scores[m], self.seen[m], self.last_played[m])
        return out

    def group_shares(self) -> dict[str, float]:
        """Each group's share of the weights (empty without groups)."""
        weights = self.weights()
        return {
            g: float(weights[m].sum())
            for g, m in zip(self.groups or (), self.members, strict=False)
        }

    def _plr(self, scores: np.ndarray, seen: np.ndarray, last_played: np.ndarray) -> np.ndarray:
        """PLR's weights over one set of levels (see the module docstring)."""
        n, c = len(scores), self.config
        if not c.enabled:
            return np.full(n, 1.0 / n)
        if not seen.all():  # unseen levels first
            return (~seen).astype(float) / (~seen).sum()
        weakness = 1.0 - scores
        ranks = np.empty(n)
        ranks[np.argsort(-weakness, kind="stable")] = np.arange(1, n + 1)
        by_score = (1.0 / ranks) ** (1.0 / c.temperature)
        by_score /= by_score.sum()
        stale = self.episodes - last_played
        by_staleness = stale / stale.sum() if stale.sum() > 0 else np.full(n, 1.0 / n)
        mixed = (1 - c.staleness) * by_score + c.staleness * by_staleness
        return (1 - c.uniform) * mixed + c.uniform / n

    def state_dict(self) -> dict[str, Any]:
        return {
            "levels": self.levels,
            "scores": self.scores.tolist(),
            "seen": self.seen.tolist(),
            "last_played": self.last_played.tolist(),
            "episodes": self.episodes,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["levels"] != self.levels:
            raise ValueError("the checkpoint's sampler has other levels than this run")
        self.scores = np.asarray(state["scores"], float)
        self.seen = np.asarray(state["seen"], bool)
        self.last_played = np.asarray(state["last_played"], float)
        self.episodes = int(state["episodes"])
