"""The Blender domain: what ``toolgym/Blender-v0`` plugs into the shared suites, CLI and agents.

Generated suites:

- ``blender-procedural``: every family of :mod:`toolgym.envs.blender.families` (all six task
  kinds), a few seeds each, in the ``spec`` style;
- ``blender-styles``: the training families said in the training styles; its test split says
  unseen seeds in the held-out styles (``phrases.HELD_OUT_STYLES``);
- ``blender-families``: the training families; its test split holds only the held-out families
  (``families.HELD_OUT_FAMILIES``);
- ``blender-edits``: edit tasks of every family that has them: a modelling family's start from
  one of its models and ask for a change; every other kind's tasks start from a scene already;
- ``blender-moves``: the ``move`` family alone, many seeds: one to three objects, each moved by
  one call to a point the prompt gives (short references, a score that counts each object
  placed), the placement suite to learn from first.

Hand-written suites are ``assets/blender/*.toml``, one
per kind: ``blender-modelling``, ``blender-placement``, ``blender-material``,
``blender-shape-keys``, ``blender-lighting``, ``blender-procedural-curated``.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from toolgym.envs.blender import CARD
from toolgym.envs.blender.families import FAMILIES, HELD_OUT_FAMILIES
from toolgym.envs.blender.families.phrases import HELD_OUT_STYLES, TRAIN_STYLES
from toolgym.envs.domains import Domain, lazy
from toolgym.envs.sandbox import Session
from toolgym.envs.tasks.families import SuiteFamily, drawn_columns, family_rows
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import LazySuites, generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

PROCEDURAL = "blender-procedural"
TRAINING_FAMILIES = tuple(name for name in FAMILIES if name not in HELD_OUT_FAMILIES)
STYLED = tuple(name for name in TRAINING_FAMILIES if FAMILIES[name].styled)
SPEC = {"train": ("spec",), "test": ("spec",)}
TRAINED = {"train": TRAIN_STYLES, "test": TRAIN_STYLES}
# The families each generated suite draws from, by suite.
FAMILIES_BY_SUITE: dict[str, dict[str, SuiteFamily]] = {
    PROCEDURAL: {name: SuiteFamily(f, SPEC) for name, f in FAMILIES.items()},
    "blender-moves": {"move": SuiteFamily(FAMILIES["move"], SPEC)},
    "blender-styles": {
        name: SuiteFamily(FAMILIES[name], {"train": TRAIN_STYLES, "test": HELD_OUT_STYLES})
        for name in STYLED
    },
    "blender-families": {
        name: SuiteFamily(f, TRAINED, ("test",) if name in HELD_OUT_FAMILIES else ("train",))
        for name, f in FAMILIES.items()
        if f.styled
    },
    "blender-edits": {
        name: SuiteFamily(f, TRAINED, edit=True)
        for name, f in FAMILIES.items()
        if f.styled and f.edits
    },
}
SEEDS = {
    PROCEDURAL: {"train": 4, "test": 2},
    "blender-moves": {"train": 120, "test": 30},
    "blender-styles": {"train": 8, "test": 3},
    "blender-families": {"train": 8, "test": 3},
    "blender-edits": {"train": 5, "test": 2},
}
DESCRIPTIONS = {
    PROCEDURAL: "Every Blender procedural family (all six task kinds), a few seeds each.",
    "blender-moves": "Move one to three objects, one call each, to points the prompt gives.",
    "blender-styles": "The training families in every training style; the test split in "
    "held-out styles.",
    "blender-families": "The training families; the test split holds the held-out families.",
    "blender-edits": "Edit tasks of every family: start from a scene, change it as asked.",
}
SPLIT_RULES = {
    PROCEDURAL: "unseen seeds: test tasks draw from seeds no training task uses",
    "blender-moves": "unseen seeds: no test task is a training task (the grid's CRC parity)",
    "blender-styles": "held-out styles: test prompts use wording forms no training prompt uses "
    f"({', '.join(HELD_OUT_STYLES)}; with numbers and units masked, no sentence in common), "
    "on unseen seeds",
    "blender-families": "held-out families: the test split holds only "
    f"{', '.join(HELD_OUT_FAMILIES) or 'none yet'}, which no training task uses",
    "blender-edits": "unseen seeds: each task starts from a scene and asks for a change",
}


@functools.cache
def suites() -> LazySuites:
    return LazySuites(
        {
            name: functools.partial(
                generated_suite,
                name,
                "blender",
                DESCRIPTIONS[name],
                families.values(),
                SEEDS[name],
                SPLIT_RULES[name],
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
    from toolgym.envs.blender.tools import registry

    return registry


def workbench_render() -> tuple[bool, str]:
    """``toolgym doctor``'s check: a cube rendered with Workbench in a session covers part of
    the picture."""
    with Session("blender", snapshot_on_start=False) as session:
        built = session.run("bpy.ops.mesh.primitive_cube_add(size=2)")
        if not built.ok:
            return False, built.feedback()
        started = time.perf_counter()
        result = session.request("render", {"width": 64, "height": 64})
        elapsed = time.perf_counter() - started
    if not result.ok:
        return False, result.feedback()
    image = np.asarray(result.value)
    covered = float((image[..., 3] > 0).mean())
    ok = image.shape == (64, 64, 4) and 0.02 < covered < 0.98
    return ok, f"64x64 in {elapsed:.2f} s, cube covers {covered:.0%}"


DOMAIN = Domain(
    card=CARD,
    default_suite=PROCEDURAL,
    suites=suites,
    task=task,
    registry=registry,
    verify_script=lazy("toolgym.envs.blender.verification", "verify_script"),
    export_reference=lazy("toolgym.envs.blender.verification", "export_reference"),
    export_formats=("blend", "glb", "png"),
    target_image=lazy("toolgym.envs.blender.verification", "target_image"),
    cheats=lazy("toolgym.envs.blender.cheats", "cheats"),
    near_miss=lazy("toolgym.envs.blender.cheats", "near_miss"),
    families=tuple(FAMILIES),
    family_table=family_table,
    code_scope="`bpy` and `tools` are in scope; the scene persists between calls",
    doctor_check=("Workbench render", workbench_render),
    verifier_version="2026.12.04",  # the last change that can move a score
)
