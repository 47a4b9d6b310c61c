"""CAD's phrase bank and styles: one part description, said in several styles.

A family writes its prompt once, as sentences with marked quantities and words
(:class:`Phrases`); a :class:`Style` says them: in mm, cm or inches, diameters plain, as ``⌀``
callouts or as radii, counts in digits or words, points as tuples or named coordinates, the
bank's first, second or third word for each thing, and the feature sentences in the family's
order or shuffled. The first sentence names the part; every later one must read correctly in
any order.

Styles are split: the training styles never use the held-out styles' wording forms (the third
word of every bank entry, radii for diameters, "by" between dimensions, inches), so a prompt in
a held-out style shares no sentence with any training prompt once its numbers and units are
masked (``tests/test_cad_families.py`` checks it on every family).

The recombined styles are unseen wording made only of seen parts: the training styles' words
(each entry's first or second word, mixed by the entry) and forms, in combinations no training
style uses, so that no recombined prompt, numbers and units masked, is worded as any training
prompt (checked on every family). A policy can learn what their words and forms mean from the
training styles; the held-out styles' new words it cannot.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolgym.envs.tasks import phrases
from toolgym.envs.tasks.phrases import Style, named_style, say, skeleton

__all__ = [
    "HELD_OUT_STYLES",
    "RECOMBINED_STYLES",
    "STYLES",
    "TRAIN_STYLES",
    "WORDS",
    "Phrases",
    "Style",
    "get_style",
]
__all__ += ["say", "skeleton"]

#: Each entry: the training styles' two words, then the held-out styles' word.
WORDS: dict[str, tuple[str, str, str]] = {
    # parts
    "plate": ("plate", "flat plate", "slab"),
    "block": ("block", "solid block", "billet"),
    "bracket": ("bracket", "mounting bracket", "support"),
    "shaft": ("shaft", "spindle", "arbor"),
    "flange": ("flange", "mounting flange", "collar plate"),
    "pulley": ("pulley", "belt pulley", "sheave"),
    "gear": ("gear", "spur gear", "toothed wheel"),
    "housing": ("housing", "case", "casing"),
    "enclosure": ("enclosure", "box", "shroud"),
    "tube": ("tube", "pipe", "conduit"),
    "part": ("part", "component", "piece"),
    "disc": ("disc", "round plate", "circular blank"),
    "ring": ("ring", "annulus", "hoop"),
    "channel": ("channel", "channel section", "trough"),
    "knob": ("knob", "grip", "hand knob"),
    "nut": ("nut", "threaded nut", "hex nut body"),
    "washer": ("washer", "flat washer", "spacer ring"),
    "bolt": ("bolt", "screw", "fastener"),
    # features
    "hole": ("hole", "drilled hole", "bore"),
    "holes": ("holes", "drilled holes", "bores"),
    "through-hole": ("through-hole", "clearance hole", "thru bore"),
    "through-holes": ("through-holes", "clearance holes", "thru bores"),
    "bore": ("bore", "central bore", "axial hole"),
    "slot": ("slot", "elongated slot", "oblong cut-out"),
    "slots": ("slots", "elongated slots", "oblong cut-outs"),
    "pocket": ("pocket", "recess", "blind cavity"),
    "counterbore": ("counterbore", "counterbored recess", "spot-face recess"),
    "countersink": ("countersink", "countersunk recess", "conical recess"),
    "fillet": ("fillet", "rounded edge", "radiused edge"),
    "chamfer": ("chamfer", "bevel", "bevelled edge"),
    "boss": ("boss", "raised boss", "stud"),
    "bosses": ("bosses", "raised bosses", "studs"),
    "rib": ("rib", "stiffening rib", "web"),
    "ribs": ("ribs", "stiffening ribs", "webs"),
    "hub": ("hub", "raised hub", "centre boss"),
    "groove": ("groove", "ring groove", "circumferential recess"),
    "keyway": ("keyway", "key slot", "key seat"),
    "wall": ("wall", "side wall", "skin"),
    "walls": ("walls", "side walls", "skins"),
    "leg": ("leg", "flange leg", "arm"),
    "base": ("base", "base plate", "foot"),
    "lid": ("lid", "cover", "cap"),
    "tooth": ("tooth", "gear tooth", "cog"),
    "teeth": ("teeth", "gear teeth", "cogs"),
    "step": ("step", "shoulder", "stage"),
    "steps": ("steps", "shoulders", "stages"),
    "bend": ("bend", "fold", "curved turn"),
    "edge": ("edge", "corner edge", "arris"),
    "edges": ("edges", "corner edges", "arrises"),
    # placement and verbs
    "centred": ("centred", "centered", "positioned symmetrically"),
    "on the origin": ("on the origin", "at the origin", "about the world origin"),
    "lying": ("lying", "resting", "sitting"),
    "standing": ("standing", "upright", "erected"),
    "with": ("with", "having", "featuring"),
    "through": ("through", "right through", "clean through"),
    "rounded": ("rounded", "filleted", "radiused"),
    "chamfered": ("chamfered", "bevelled", "edge-broken"),
    "cut": ("cut", "machined", "milled"),
    "drilled": ("drilled", "bored", "pierced"),
    "spaced": ("spaced", "pitched", "distributed"),
    "equally": ("equally", "evenly", "uniformly"),
    "thick": ("thick", "in thickness", "of stock"),
    "wide": ("wide", "in width", "across"),
    "long": ("long", "in length", "overall"),
    "tall": ("tall", "high", "in height"),
    "deep": ("deep", "in depth", "down"),
    "diameter": ("diameter", "dia.", "across"),
    "each": ("each", "every one", "apiece"),
    "along": ("along", "following", "running with"),
    "about": ("about", "around", "round"),
    "axis": ("axis", "axis line", "datum axis"),
    "from": ("from", "measured from", "starting at"),
    "in from": ("in from", "inset from", "back from"),
    "corner": ("corner", "corner point", "vertex"),
    "corners": ("corners", "corner points", "vertices"),
    "the XY plane": ("the XY plane", "the ground plane (XY)", "the horizontal datum (XY)"),
}

STYLES: dict[str, Style] = phrases.style_table(
    Style("spec", "train"),
    Style("drawing", "train", diameters="symbol", points="named", dims="each", lexicon=1),
    Style("metric", "train", unit="cm", counts="words", angles="words", lexicon=1),
    Style("shuffled", "train", counts="words", points="named", order="shuffled"),
    Style(
        "imperial",
        "held-out",
        unit="in",
        diameters="radius",
        counts="words",
        points="named",
        dims="by",
        angles="words",
        lexicon=2,
        order="shuffled",
    ),
    Style("workshop", "held-out", diameters="radius", dims="by", lexicon=2),
    Style("catalogue", "recombined", diameters="symbol", dims="each", mixed=True),
    Style(
        "datasheet",
        "recombined",
        unit="cm",
        counts="words",
        points="named",
        angles="words",
        lexicon=1,
        order="shuffled",
        mixed=True,
    ),
)
TRAIN_STYLES = tuple(name for name, style in STYLES.items() if style.split == "train")
HELD_OUT_STYLES = tuple(name for name, style in STYLES.items() if style.split == "held-out")
RECOMBINED_STYLES = tuple(name for name, style in STYLES.items() if style.split == "recombined")


def get_style(name: str) -> Style:
    """A style by name; an unknown name is a one-line error naming the known ones."""
    return named_style(STYLES, name)


class Phrases(phrases.Phrases):
    """What a CAD family's ``text`` writes with (lengths in mm), the bank's words and the
    family's own."""

    def __init__(self, words: Mapping[str, tuple[str, str, str]] | None = None) -> None:
        super().__init__({**WORDS, **(words or {})}, base="mm")
