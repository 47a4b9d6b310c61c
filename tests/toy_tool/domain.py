"""The abacus domain: what ``toyspace/Abacus-v0`` plugs into toolgym's suites, CLI and agents."""

from __future__ import annotations

import functools

from toolgym.envs.domains import Domain
from toolgym.envs.tasks.model import Suite, Task
from toolgym.envs.tasks.suites import generated_suite, generated_task

from . import CARD, verification
from .families import FAMILIES
from .tools import registry

FAMILIES_BY_SUITE = {"abacus-numbers": FAMILIES}


@functools.cache
def suites() -> dict[str, Suite]:
    description = "Numbers on an abacus's four rods."
    seeds = {"train": 3, "test": 2}
    return {
        "abacus-numbers": generated_suite(
            "abacus-numbers", "abacus", description, FAMILIES.values(), seeds
        )
    }


def task(task_id: str) -> Task | None:
    return generated_task(task_id, FAMILIES_BY_SUITE)


DOMAIN = Domain(
    card=CARD,
    default_suite="abacus-numbers",
    suites=suites,
    task=task,
    registry=lambda: registry,
    verify_script=verification.verify_script,
    export_reference=verification.export_reference,
    export_formats=("json",),
    target_image=verification.target_image,
    code_scope="`rods` (beads up on each rod) and `tools` are in scope",
    code_call=("rods = ", "rods"),
)
