"""The game-scene domain: what ``toolgym/GameScene-v0`` plugs into the shared suites, CLI and
agents.

Generated suites:

- ``scene-procedural``: every template's family (layout, physics, logic), a few seeds each;
- ``scene-layout``, ``scene-physics``, ``scene-logic``: the families of one kind.

The hand-written suite ``scene-curated`` is ``assets/scene/curated.toml``.
"""

from __future__ import annotations

import functools

import numpy as np

from toolgym.envs.domains import Domain, lazy
from toolgym.envs.sandbox import Session
from toolgym.envs.scene import CARD
from toolgym.envs.scene.families import FAMILIES, KINDS
from toolgym.envs.tasks.model import Suite, Task
from toolgym.envs.tasks.suites import generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

SEEDS = {"train": 4, "test": 2}
FAMILIES_BY_SUITE = {
    "scene-procedural": FAMILIES,
    **{
        f"scene-{kind}": {name: f for name, f in FAMILIES.items() if KINDS[name] == kind}
        for kind in ("layout", "physics", "logic")
    },
}
DESCRIPTIONS = {
    "scene-procedural": "Every game-scene family (layout, physics, logic), a few seeds each.",
    "scene-layout": "Furnish a room so that spatial relations hold.",
    "scene-physics": "Arrange things so that a condition holds after simulation.",
    "scene-logic": "Game logic, checked by playing held-out player paths.",
}


@functools.cache
def suites() -> dict[str, Suite]:
    return {
        name: generated_suite(name, "scene", DESCRIPTIONS[name], families.values(), SEEDS)
        for name, families in FAMILIES_BY_SUITE.items()
    }


def task(task_id: str) -> Task | None:
    return generated_task(task_id, FAMILIES_BY_SUITE)


def registry() -> ToolRegistry:
    from toolgym.envs.scene.tools import registry

    return registry


def offscreen_render() -> tuple[bool, str]:
    """``toolgym doctor``'s check: a card rendered by the software pipe in a session is not
    blank."""
    with Session("scene", snapshot_on_start=False) as session:
        session.run("core.NodePath(core.CardMaker('c').generate()).reparent_to(scene)")
        result = session.request("render", {"width": 32, "height": 32})
    if not result.ok:
        return False, result.feedback()
    image = np.asarray(result.value)
    return bool(image.std() > 0), f"{image.shape[1]}x{image.shape[0]} software"


DOMAIN = Domain(
    card=CARD,
    default_suite="scene-curated",
    suites=suites,
    task=task,
    registry=registry,
    verify_script=lazy("toolgym.envs.scene.verification", "verify_script"),
    export_reference=lazy("toolgym.envs.scene.verification", "export_reference"),
    export_formats=("json", "glb"),
    target_image=lazy("toolgym.envs.scene.verification", "target_image"),
    cheats=lazy("toolgym.envs.scene.cheats", "cheats"),
    near_miss=lazy("toolgym.envs.scene.cheats", "near_miss"),
    code_scope="`world` (the scene runtime), `core` and `bullet` (Panda3D) are in scope",
    code_call=("", "world"),  # scene tools take the session's world
    doctor_check=("Panda3D offscreen render", offscreen_render),
)
