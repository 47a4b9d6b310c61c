"""The CadQuery domain: what ``toolgym/CadQuery-v0`` plugs into the shared suites, CLI and agents.

Generated suites:

- ``primitives``: the easiest tier, one box, cylinder or sphere of varied size and placement;
- ``procedural``: every procedural family, a few seeds each.

The hand-written ``curated`` suite is ``assets/cadquery/curated.toml``.
"""

from __future__ import annotations

import functools

from toolgym.envs.cadquery import CARD, cheats, verification
from toolgym.envs.cadquery.families import FAMILIES
from toolgym.envs.domains import Domain
from toolgym.envs.tasks.model import Suite, Task
from toolgym.envs.tasks.suites import generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

PRIMITIVE_SEEDS = {"train": 200, "test": 50}
PROCEDURAL_SEEDS = {"train": 10, "test": 3}
# The families each generated suite draws from, by suite.
FAMILIES_BY_SUITE = {
    "primitives": {"primitive": FAMILIES["primitive"]},
    "procedural": FAMILIES,
}


@functools.cache
def suites() -> dict[str, Suite]:
    return {
        "primitives": generated_suite(
            "primitives",
            "cadquery",
            "One box, cylinder or sphere of varied size and placement.",
            FAMILIES_BY_SUITE["primitives"].values(),
            PRIMITIVE_SEEDS,
        ),
        "procedural": generated_suite(
            "procedural",
            "cadquery",
            "Every procedural family, a few seeds each.",
            [FAMILIES[name] for name in sorted(FAMILIES)],
            PROCEDURAL_SEEDS,
        ),
    }


def task(task_id: str) -> Task | None:
    return generated_task(task_id, FAMILIES_BY_SUITE)


def registry() -> ToolRegistry:
    from toolgym.envs.cadquery.tools import registry

    return registry


DOMAIN = Domain(
    card=CARD,
    default_suite="curated",
    suites=suites,
    task=task,
    registry=registry,
    verify_script=verification.verify_script,
    export_reference=verification.export_reference,
    export_formats=("step", "stl", "brep", "glb"),
    target_image=verification.target_image,
    families=tuple(FAMILIES),
    cheats=cheats.cheats,
    near_miss=cheats.near_miss,
    code_scope="`cq` (CadQuery) and `tools` are in scope; bind the part to `result`",
    # CAD tools take and return the part
    code_call=("result = ", "globals().get('result')"),
    verify_files=lambda candidate, reference, tier, alignment: verification.verify_files(
        candidate, reference, tier=tier, alignment=alignment
    ),
)
