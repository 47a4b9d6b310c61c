"""Blender's phrase bank and styles: one task description, said in several ways.

Lengths in metres (said in m, cm or feet), angles in degrees, colours linear RGB. The training
styles use the first two words of every bank entry; the held-out styles the third, feet, "by"
between sizes and colours in words, so that with numbers and units masked a held-out prompt
shares no sentence with any training prompt (``tests/test_blender_families.py`` checks every
family). The ``relative`` styles place things from a named object ("0.5 m left of Table"), as
seen from the front (:data:`toolgym.envs.tasks.phrases.RELATIVE_CONVENTION`).
"""

from __future__ import annotations

from collections.abc import Mapping

from toolgym.envs.tasks import phrases
from toolgym.envs.tasks.phrases import RELATIVE_CONVENTION, Style, named_style, say, skeleton

__all__ = ["HELD_OUT_STYLES", "RELATIVE_CONVENTION", "STYLES", "TRAIN_STYLES", "WORDS"]
__all__ += ["Phrases", "Style", "get_style", "say", "skeleton"]

#: Each entry: the training styles' two words, then the held-out styles' word.
WORDS: dict[str, tuple[str, str, str]] = {
    # what is made
    "model": ("model", "build", "construct"),
    "object": ("object", "mesh object", "item"),
    "objects": ("objects", "mesh objects", "items"),
    "table": ("table", "dining table", "board on legs"),
    "chair": ("chair", "side chair", "seat"),
    "shelf": ("shelf", "shelving unit", "rack"),
    "lamp": ("lamp", "floor lamp", "light fitting"),
    "leg": ("leg", "support leg", "post"),
    "legs": ("legs", "support legs", "posts"),
    "top": ("top", "tabletop", "upper slab"),
    "seat": ("seat", "seat board", "sitting slab"),
    "back": ("back", "backrest", "rear panel"),
    "board": ("board", "plank", "slat"),
    "boards": ("boards", "planks", "slats"),
    "wall": ("wall", "wall panel", "partition"),
    "column": ("column", "pillar", "upright shaft"),
    "columns": ("columns", "pillars", "upright shafts"),
    "step": ("step", "stair", "tread block"),
    "steps": ("steps", "stairs", "tread blocks"),
    "floor": ("floor", "ground plane", "base plane"),
    "block": ("block", "cuboid", "brick"),
    "ball": ("ball", "sphere", "orb"),
    "cylinder": ("cylinder", "round bar", "drum shape"),
    # what is changed
    "move": ("move", "place", "relocate"),
    "turn": ("turn", "rotate", "spin"),
    "scale": ("scale", "resize", "size"),
    "material": ("material", "surface material", "shader"),
    "colour": ("colour", "base colour", "albedo"),
    "roughness": ("roughness", "surface roughness", "micro-roughness"),
    "metallic": ("metallic", "metalness", "metal factor"),
    "light": ("light", "lamp light", "luminaire"),
    "lights": ("lights", "lamp lights", "luminaires"),
    "power": ("power", "wattage", "output"),
    "modifier": ("modifier", "stack modifier", "generator"),
    "copies": ("copies", "instances", "repeats"),
    "width": ("width", "size", "breadth"),
    "segments": ("segments", "bevel segments", "subdivisions"),
    "set": ("set", "change", "adjust"),
    "give": ("give", "assign", "apply"),
    "each": ("each", "every one", "apiece"),
    "centred": ("centred", "centered", "positioned symmetrically"),
    "on the origin": ("on the origin", "at the origin", "about the world origin"),
    "about Z": ("about Z", "around the Z axis", "round the vertical"),
    "above the floor": ("above the floor", "over the floor", "up from the ground"),
    "wide": ("wide", "in width", "across"),
    "deep": ("deep", "in depth", "front to back"),
    "tall": ("tall", "high", "in height"),
    "thick": ("thick", "in thickness", "of stock"),
    "apart": ("apart", "from each other", "between centres"),
    "with": ("with", "having", "featuring"),
}

STYLES: dict[str, Style] = phrases.style_table(
    Style("spec", "train", unit="m"),
    Style("brief", "train", unit="m", points="named", dims="each", colours="named", lexicon=1),
    Style("metric", "train", unit="cm", counts="words", angles="words", lexicon=1),
    Style("relative", "train", unit="m", points="relative", order="shuffled"),
    Style(
        "imperial",
        "held-out",
        unit="ft",
        counts="words",
        points="named",
        dims="by",
        angles="words",
        colours="words",
        lexicon=2,
        order="shuffled",
    ),
    Style("studio", "held-out", unit="m", points="relative", dims="by", colours="words", lexicon=2),
)
TRAIN_STYLES = tuple(name for name, style in STYLES.items() if style.split == "train")
HELD_OUT_STYLES = tuple(name for name, style in STYLES.items() if style.split == "held-out")


def get_style(name: str) -> Style:
    """A style by name; an unknown name is a one-line error naming the known ones."""
    return named_style(STYLES, name)


class Phrases(phrases.Phrases):
    """What a Blender family's text writes with (lengths in m): the bank's words and the
    family's own."""

    def __init__(self, words: Mapping[str, tuple[str, str, str]] | None = None) -> None:
        super().__init__({**WORDS, **(words or {})}, base="m")
