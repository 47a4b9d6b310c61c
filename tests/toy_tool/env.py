"""``toyspace/Abacus-v0``: slide beads on an abacus's rods until they show the number asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from toolgym.envs.episode.loop import ToolEnv
from toolgym.envs.episode.options import EnvOptions
from toolgym.envs.tasks.model import Task
from toolgym.verifiers.report import VerifierReport

from . import verification
from .tools import registry


@dataclass(frozen=True)
class AbacusOptions(EnvOptions):
    """The abacus's arguments: every tool's, its default suite, none of its own."""

    suite: str = "abacus-numbers"


class AbacusEnv(ToolEnv):
    """Slide beads on an abacus's four rods until they show the number the prompt asks for.

    ## Action space

    Code mode: a script in a session where ``rods`` (four bead counts) and ``tools`` are in
    scope. Tool mode: ``{"name": "slide", "arguments": {"rod": 0, "beads": 3}}``.

    ## Observation space

    ``image`` (the rods as bars, 64 × 64 RGB), ``target`` (the asked-for rods, drawn alike),
    ``prompt``, ``feedback``, ``step``.

    ## Rewards

    The change in the share of beads in place (0 to 1); a failed step costs ``error_penalty``.

    ## Episode end

    Terminated when every bead is in place; truncated after ``max_steps``.

    ## Arguments

    Every tool's (:class:`~toolgym.envs.episode.options.EnvOptions`); ``suite`` here
    ``"abacus-numbers"``.
    """

    backend = "abacus"
    registry = registry
    Options = AbacusOptions

    def _image_shape(self, view_size: int) -> tuple[int, int, int]:
        return (view_size, view_size, 3)

    def _prepare(self, task: Task) -> np.ndarray:
        return verification.target_image(task, self.view_size)

    def _candidate(self) -> tuple[list[int] | None, str | None]:
        assert self.session is not None
        rods = self.session.request("rods", {})
        if not rods.ok:
            return None, rods.error.message if rods.error else "no rods"
        return rods.value, None

    def _exact(self, candidate: Any) -> tuple[Any, str | None]:
        return candidate, None

    def _verify(self, candidate: list[int], tier: str) -> VerifierReport:
        assert self.task is not None
        return verification.verify_rods(self.task, candidate, tier)

    def _render(self, candidate: list[int] | None) -> np.ndarray:
        return verification.draw(candidate or [0] * 4, self.view_size)

    def _succeeded(self, report: VerifierReport) -> bool:
        return report.passed
