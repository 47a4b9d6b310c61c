"""Procedural Blender task families: seeded generators of BlenderGym's five kinds of edit
(placement, material, lighting, shape keys, procedural geometry: each starts from a given scene)
and of modelling from nothing.

Each family (``toolgym.envs.blender.families.model.Family``) draws one task from a seed: its
start scene, its reference (tool calls, or a program where calls cannot say it) and its
description, said in any style of the phrase bank (``toolgym.envs.blender.families.phrases``).
The families live by kind, one module each, which lists them as ``FAMILY_GROUP``; this module
gathers every such module of the package, in name order (``_...`` modules are drafts).

Agent code never reads these modules: the sandbox refuses every module under ``families``.
"""

from __future__ import annotations

from toolgym.envs.blender.families.model import Family
from toolgym.envs.tasks.families import gather, lookup

__all__ = ["FAMILIES", "HELD_OUT_FAMILIES", "Family", "family"]

FAMILIES: dict[str, Family] = gather(__name__, __path__)

#: The families no training suite uses: the ``blender-families`` suite's test split, one of
#: each kind, so a score on them says how far training carried to tasks never seen.
HELD_OUT_FAMILIES: tuple[str, ...] = (
    "window_frame",
    "turn_to_face",
    "procedural_texture",
    "solidify_shell",
    "sun_daylight",
)


def family(name: str) -> Family:
    """A family by name; an unknown name is a one-line error naming the known ones."""
    return lookup(FAMILIES, name, "Blender family")
