"""The Blender suites: the generated one (every procedural family) and task ids of any seed.

Hand-written suites are the files ``assets/blender/*.toml`` (``blender-<kind>``); this module adds
``blender-procedural``, every family in :mod:`toolgym.envs.blender.families` with a few seeds,
and resolves ``blender-procedural/<family>/<split>-<seed>`` for any seed.
"""

from __future__ import annotations

import functools
import re

from toolgym.envs.blender.families import FAMILIES, family
from toolgym.envs.tasks import Suite, Task

PROCEDURAL = "blender-procedural"
PROCEDURAL_SEEDS = {"train": 4, "test": 2}
_ID = re.compile(rf"^{PROCEDURAL}/(?P<family>\w+)/(?P<split>train|test)-(?P<seed>\d+)$")


@functools.cache
def generated_suites() -> dict[str, Suite]:
    """The generated suites by name."""
    tasks = tuple(
        family(name).task(seed, split, suite=PROCEDURAL)
        for name in FAMILIES
        for split, count in PROCEDURAL_SEEDS.items()
        for seed in range(count)
    )
    description = "Every Blender procedural family (all six task kinds), a few seeds each."
    return {PROCEDURAL: Suite(PROCEDURAL, "blender", description, tasks)}


def generated_task(task_id: str) -> Task | None:
    """A generated task for any seed from its id; ``None`` if the id is not a Blender one."""
    match = _ID.match(task_id)
    if match is None or match["family"] not in FAMILIES:
        return None
    return family(match["family"]).task(int(match["seed"]), match["split"], suite=PROCEDURAL)
