"""Procedural CadQuery task families: seeded generators of real mechanical parts.

Each family (``toolgym.envs.cadquery.families.model.Family``) draws its parameters from a seed,
writes its description once and says it in any style of the phrase bank
(``toolgym.envs.cadquery.families.phrases``), and builds its reference as a program and as tool
calls. The families live by kind of part, one module each, which lists them as
``FAMILY_GROUP``; this module gathers every such module of the package, in name order
(a module named ``_...`` is private: a draft, never gathered).

Agent code never reads these modules: the sandbox refuses every module under ``families``.
"""

from __future__ import annotations

from typing import Any

from toolgym.envs.cadquery.families.model import Family
from toolgym.envs.tasks.families import gather, lookup

__all__ = ["FAMILIES", "HELD_OUT_FAMILIES", "Family", "describe", "family"]


FAMILIES: dict[str, Family] = gather(__name__, __path__)

#: The families no training suite uses: the ``cad-families`` suite's test split, one of each
#: broad kind of part, so a score on them says how far training carried to parts never seen.
HELD_OUT_FAMILIES: tuple[str, ...] = (
    "pillow_block",  # a multi-feature block
    "transition",  # a loft
    "t_bracket",  # a bracket
    "plate_angled_slots",  # a slotted plate
    "shaft_grooved",  # a shaft
    "collar_set_screw",  # a collar with a tapped hole
    "junction_box",  # a shelled housing
    "cup_revolved",  # a revolved container
    "hat_channel",  # a sheet-metal section
    "knob_fluted",  # a knob with a polar pattern
)


def family(name: str) -> Family:
    """A family by name; an unknown name is a one-line error naming the known ones."""
    return lookup(FAMILIES, name)


def describe() -> list[dict[str, Any]]:
    """Each family's name, tier, features and tools, for tables."""
    return [
        {
            "name": f.name,
            "tier": f.tier,
            "summary": f.summary,
            "features": list(f.features),
            "tools": list(f.operations()),
            "held_out": f.name in HELD_OUT_FAMILIES,
        }
        for f in FAMILIES.values()
    ]
