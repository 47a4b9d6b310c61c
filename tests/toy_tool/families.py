"""The abacus's task family: a number on four rods, from a seed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from toolgym.envs.tasks.model import Task, Verification

from .tools import BEADS, RODS


@dataclasses.dataclass(frozen=True)
class Number:
    name: str = "number"

    def task(self, seed: int, split: str = "train", suite: str = "abacus-numbers") -> Task:
        rng = np.random.default_rng([seed, split == "test"])
        beads = [int(b) for b in rng.integers(0, BEADS + 1, RODS)]
        calls = tuple(
            json.dumps({"name": "slide", "arguments": {"rod": rod, "beads": count}})
            for rod, count in enumerate(beads)
            if count
        )
        return Task(
            id=f"{suite}/{self.name}/{split}-{seed}",
            domain="abacus",
            prompt=f"Slide up {', '.join(map(str, beads))} beads on the rods, left to right.",
            reference=f"rods[:] = {beads}\n",
            parameters={f"rod_{rod}": count for rod, count in enumerate(beads)},
            difficulty=1,
            verification=Verification(thresholds={"placed": 1.0}),
            split=split,
            family=self.name,
            seed=seed,
            tool_calls=calls,
        )


FAMILIES = {"number": Number()}
