"""The game-scene domain: what ``toolgym/GameScene-v0`` plugs into the shared suites, CLI and
agents.

Generated suites:

- ``scene-procedural``: every template's family (layout, physics, logic), a few seeds each;
- ``scene-layout``, ``scene-physics``, ``scene-logic``: the families of one kind;
- ``scene-styles``: the training families said in the training styles; its test split says
  unseen seeds in the held-out styles (``phrases.HELD_OUT_STYLES``);
- ``scene-families``: the training families; its test split holds only the held-out families
  (``families.HELD_OUT_FAMILIES``);
- ``scene-edits``: edit tasks of every family that has them: the level starts with one draw's
  reference placed, and the prompt asks for a change.

The hand-written suite ``scene-curated`` is ``assets/scene/curated.toml``.
"""

from __future__ import annotations

import functools

import numpy as np

from toolgym.envs.domains import Domain, lazy
from toolgym.envs.sandbox import Session
from toolgym.envs.scene import CARD
from toolgym.envs.scene.families import FAMILIES, HELD_OUT_FAMILIES, KINDS
from toolgym.envs.scene.families.phrases import HELD_OUT_STYLES, TRAIN_STYLES
from toolgym.envs.tasks.families import SuiteFamily, drawn_columns, family_rows
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import UNSEEN_SEEDS, LazySuites, generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

SEEDS = {"train": 4, "test": 2}
STYLE_SEEDS = {"train": 8, "test": 3}
TRAINING_FAMILIES = tuple(name for name in FAMILIES if name not in HELD_OUT_FAMILIES)
SPEC = {"train": ("spec",), "test": ("spec",)}
TRAINED = {"train": TRAIN_STYLES, "test": TRAIN_STYLES}
# The families each generated suite draws from, by suite.
FAMILIES_BY_SUITE: dict[str, dict[str, SuiteFamily]] = {
    "scene-procedural": {name: SuiteFamily(f, SPEC) for name, f in FAMILIES.items()},
    # One suite per kind of the first eleven families, as the learning figures were measured on
    # (the mixed-tool run trains on scene-layout); every family is in the suites below.
    **{
        f"scene-{kind}": {
            name: SuiteFamily(f, SPEC)
            for name, f in FAMILIES.items()
            if KINDS[name] == kind and not f.styled
        }
        for kind in ("layout", "physics", "logic")
    },
    "scene-styles": {
        name: SuiteFamily(FAMILIES[name], {"train": TRAIN_STYLES, "test": HELD_OUT_STYLES})
        for name in TRAINING_FAMILIES
        if FAMILIES[name].styled
    },
    "scene-families": {
        name: SuiteFamily(f, TRAINED, ("test",) if name in HELD_OUT_FAMILIES else ("train",))
        for name, f in FAMILIES.items()
        if f.styled
    },
    "scene-edits": {
        name: SuiteFamily(f, TRAINED if f.styled else SPEC, edit=True)
        for name, f in FAMILIES.items()
        if f.edits
    },
}
DESCRIPTIONS = {
    "scene-procedural": "Every game-scene family (layout, physics, logic), a few seeds each.",
    "scene-layout": "Furnish a room so that spatial relations hold (the first families).",
    "scene-physics": "Arrange things so that a condition holds after simulation (the first "
    "families).",
    "scene-logic": "Game logic, checked by playing held-out player paths (the first families).",
    "scene-styles": "The training families in every training style; the test split in "
    "held-out styles.",
    "scene-families": "The training families; the test split holds the held-out families.",
    "scene-edits": "Edit tasks of every family that has them: start from a level, change it.",
}
SPLIT_RULES = {
    "scene-styles": "held-out styles: test prompts use wording forms no training prompt uses "
    f"({', '.join(HELD_OUT_STYLES)}; with numbers and units masked, no sentence in common), "
    "on unseen seeds",
    "scene-families": "held-out families: the test split holds only "
    f"{', '.join(HELD_OUT_FAMILIES) or 'none yet'}, which no training task uses",
    "scene-edits": "unseen seeds: each task starts from a level and asks for a change",
}


@functools.cache
def suites() -> LazySuites:
    return LazySuites(
        {
            name: functools.partial(
                generated_suite,
                name,
                "scene",
                DESCRIPTIONS[name],
                families.values(),
                STYLE_SEEDS if name in SPLIT_RULES else SEEDS,
                SPLIT_RULES.get(name, UNSEEN_SEEDS),
            )
            for name, families in FAMILIES_BY_SUITE.items()
            if families  # a suite waits for its first styled family
        }
    )


def family_table() -> list[dict[str, object]]:
    """Each family: kind, tiers, tools, whether it is said in styles and has edits, whether it
    is held out, and per generated suite its ``train/test`` task counts and styles."""
    return family_rows(FAMILIES, FAMILIES_BY_SUITE, suites(), HELD_OUT_FAMILIES, drawn_columns)


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
    families=tuple(FAMILIES),
    family_table=family_table,
    code_scope="`world` (the scene runtime), `core` and `bullet` (Panda3D) are in scope",
    code_call=("", "world"),  # scene tools take the session's world
    doctor_check=("Panda3D offscreen render", offscreen_render),
    verifier_version="2026.12.04",  # the last change that can move a score
)
