"""Scoring an abacus: the share of beads in place, and the target drawn as bars."""

from __future__ import annotations

import json
import time

import numpy as np

from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.batch import Outcome
from toolgym.verifiers.report import VerifierReport

from .tools import BEADS, RODS


def target(task: Task) -> list[int]:
    return [int(task.parameters[f"rod_{rod}"]) for rod in range(RODS)]


def verify_rods(task: Task, rods: list[int], tier: str) -> VerifierReport:
    """Score: one minus the beads out of place over all the beads there are (0 to 1)."""
    wrong = sum(abs(a - b) for a, b in zip(rods, target(task), strict=True))
    placed = 1.0 - wrong / (RODS * BEADS)
    return VerifierReport({"placed": placed}, placed, placed == 1.0, tier)


def verify_script(
    task: Task, script: str, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    started = time.perf_counter()
    with Session("abacus", limits) as session:
        ran = session.run(script, filename=filename)
        rods = session.request("rods", {}) if ran.ok else ran
    if not rods.ok:
        message = rods.error.message if rods.error else "failed"
        return Outcome(task.id, None, "script", message, time.perf_counter() - started)
    report = verify_rods(task, rods.value, task.verification.final_tier)
    return Outcome(task.id, report, None, None, time.perf_counter() - started)


def draw(rods: list[int], view_size: int) -> np.ndarray:
    """The rods as bars, one column of the picture each: ``(view_size, view_size, 3)`` uint8."""
    image = np.zeros((view_size, view_size, 3), np.uint8)
    width = view_size // RODS
    for rod, beads in enumerate(rods):
        height = round(beads / BEADS * view_size)
        image[view_size - height :, rod * width : (rod + 1) * width - 1] = (200, 160, 40)
    return image


def export_reference(task: Task, fmt: str) -> bytes:
    return json.dumps({"rods": target(task)}).encode()


def target_image(task: Task, view_size: int) -> np.ndarray:
    return draw(target(task), view_size)
