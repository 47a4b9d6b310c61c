"""The Blender domain: what ``toolgym/Blender-v0`` plugs into the shared suites, CLI and agents.

Generated suites:

- ``blender-procedural``: every family of :mod:`toolgym.envs.blender.families` (all six task
  kinds), a few seeds each;
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
from toolgym.envs.blender.families import FAMILIES
from toolgym.envs.domains import Domain, lazy
from toolgym.envs.sandbox import Session
from toolgym.envs.tasks.model import Suite, Task
from toolgym.envs.tasks.suites import generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

PROCEDURAL = "blender-procedural"
# The families each generated suite draws from, its seeds per split and its description.
FAMILIES_BY_SUITE = {PROCEDURAL: FAMILIES, "blender-moves": {"move": FAMILIES["move"]}}
SEEDS = {PROCEDURAL: {"train": 4, "test": 2}, "blender-moves": {"train": 120, "test": 30}}
DESCRIPTIONS = {
    PROCEDURAL: "Every Blender procedural family (all six task kinds), a few seeds each.",
    "blender-moves": "Move one to three objects, one call each, to points the prompt gives.",
}


@functools.cache
def suites() -> dict[str, Suite]:
    return {
        name: generated_suite(name, "blender", DESCRIPTIONS[name], families.values(), SEEDS[name])
        for name, families in FAMILIES_BY_SUITE.items()
    }


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
    code_scope="`bpy` and `tools` are in scope; the scene persists between calls",
    doctor_check=("Workbench render", workbench_render),
)
