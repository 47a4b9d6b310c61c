"""The shared phrase bank: one part description, said in several styles.

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
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

import numpy as np

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

COUNT_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
UNIT_MM = {"mm": 1.0, "cm": 10.0, "in": 25.4}
DECIMALS = {"mm": 2, "cm": 3, "in": 4}


@dataclasses.dataclass(frozen=True)
class Style:
    """How a description is said.

    Attributes:
        name: the style's name (``style=`` of the CadQuery env, ``Task.style``).
        split: ``"train"`` (training suites may use it) or ``"held-out"`` (only test splits).
        unit: lengths in ``"mm"``, ``"cm"`` or ``"in"`` (inches to 4 decimals: under 0.003 mm
            off, far inside every tolerance).
        diameters: ``"plain"`` ("5 mm holes"), ``"symbol"`` ("⌀5 mm holes") or ``"radius"``
            ("holes of 2.5 mm radius").
        counts: ``"digits"`` or ``"words"``.
        points: ``"tuple"`` ("(10, 5) mm") or ``"named"`` ("x = 10 mm, y = 5 mm").
        dims: ``"times"`` ("60 × 40 × 6 mm"), ``"each"`` ("60 mm × 40 mm × 6 mm") or ``"by"``
            ("60 by 40 by 6 mm").
        angles: ``"symbol"`` ("30°") or ``"words"`` ("30 degrees").
        lexicon: which word of each bank entry (0, 1: training; 2: held-out).
        order: ``"given"`` or ``"shuffled"`` (the sentences after the first, by the task's seed).
    """

    name: str
    split: str
    unit: str = "mm"
    diameters: str = "plain"
    counts: str = "digits"
    points: str = "tuple"
    dims: str = "times"
    angles: str = "symbol"
    lexicon: int = 0
    order: str = "given"


STYLES: dict[str, Style] = {
    style.name: style
    for style in (
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
    )
}
TRAIN_STYLES = tuple(name for name, style in STYLES.items() if style.split == "train")
HELD_OUT_STYLES = tuple(name for name, style in STYLES.items() if style.split == "held-out")


def get_style(name: str) -> Style:
    """A style by name; an unknown name is a one-line error naming the known ones."""
    try:
        return STYLES[name]
    except KeyError:
        raise ValueError(f"style must be one of {list(STYLES)}, got {name!r}") from None


# Quantities and words are marked in the sentences a family writes, and said by a style.
_OPEN, _CLOSE, _SEP = "\ue000", "\ue001", "\ue002"
_MARK = re.compile(f"{_OPEN}([^{_CLOSE}]*){_CLOSE}")


def _mark(kind: str, *fields: object) -> str:
    return _OPEN + _SEP.join((kind, *map(str, fields))) + _CLOSE


class Phrases:
    """What a family's ``text`` writes with: each method marks one quantity or word.

    Lengths are in mm (the family's units); a style converts them.
    """

    def __init__(self, words: Mapping[str, tuple[str, str, str]] | None = None) -> None:
        self.words = {**WORDS, **(words or {})}

    def w(self, key: str) -> str:
        """A word from the bank (``KeyError`` for a word it lacks: add it to the bank)."""
        if key not in self.words:
            raise KeyError(f"the phrase bank has no word {key!r}")
        return _mark("W", key)

    def len(self, mm: float) -> str:
        """A length: "12.5 mm"."""
        return _mark("L", mm)

    def dims(self, *mm: float) -> str:
        """Sizes along X, Y (, Z): "60 × 40 × 6 mm"."""
        return _mark("X", *mm)

    def dia(self, mm: float, noun: str) -> str:
        """A diameter with what has it: "5 mm holes", "⌀5 mm holes", "holes of 2.5 mm radius"."""
        self.w(noun)
        return _mark("D", mm, noun)

    def radius(self, mm: float) -> str:
        """A radius (a fillet's, a bend's): "a 3 mm radius"."""
        return _mark("R", mm)

    def count(self, n: int) -> str:
        """A count: "4" or "four"."""
        return _mark("N", int(n))

    def deg(self, degrees: float) -> str:
        """An angle: "30°" or "30 degrees"."""
        return _mark("A", degrees)

    def at(self, *mm: float) -> str:
        """A point: "(10, 5) mm" or "x = 10 mm, y = 5 mm" (two or three coordinates)."""
        return _mark("P", *mm)


def _number(value: float, unit: str) -> str:
    shown = round(value / UNIT_MM[unit], DECIMALS[unit])
    text = f"{shown:.{DECIMALS[unit]}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def say(
    sentences: Sequence[str],
    style: Style,
    words: Mapping[str, tuple[str, str, str]],
    rng: np.random.Generator | None = None,
) -> str:
    """The sentences said in ``style``: the prompt a task shows."""
    order = list(sentences)
    if style.order == "shuffled" and len(order) > 2:
        rest = order[1:]
        generator = rng if rng is not None else np.random.default_rng(0)
        order = [order[0], *(rest[i] for i in generator.permutation(len(rest)))]
    said = []
    for sentence in order:
        text = _MARK.sub(lambda m: _say(m.group(1).split(_SEP), style, words), sentence)
        text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU]|8|1[18](?!\d))", r"\1n ", text)
        text = text.strip()
        said.append(text[:1].upper() + text[1:])
    return " ".join(s if s.endswith((".", "?", "!")) else s + "." for s in said)


def _say(fields: list[str], style: Style, words: Mapping[str, tuple[str, str, str]]) -> str:
    kind, values = fields[0], fields[1:]
    unit = style.unit
    if kind == "W":
        return words[values[0]][style.lexicon]
    if kind == "N":
        n = int(values[0])
        return COUNT_WORDS[n] if style.counts == "words" and n < len(COUNT_WORDS) else str(n)
    if kind == "A":
        degrees = _number(float(values[0]), "mm")
        return f"{degrees} degrees" if style.angles == "words" else f"{degrees}°"
    numbers = [_number(float(v), unit) for v in values[: 3 if kind in "XP" else 1]]
    if kind == "L":
        return f"{numbers[0]} {unit}"
    if kind == "R":
        return f"{numbers[0]} {unit} radius"
    if kind == "D":
        noun = words[values[1]][style.lexicon]
        if style.diameters == "radius":
            return f"{noun} of {_number(float(values[0]) / 2, unit)} {unit} radius"
        return f"{'⌀' if style.diameters == 'symbol' else ''}{numbers[0]} {unit} {noun}"
    if kind == "X":
        joiner = {"times": " × ", "each": f" {unit} × ", "by": " by "}[style.dims]
        return joiner.join(numbers) + f" {unit}"
    if kind == "P":
        if style.points == "named":
            return ", ".join(
                f"{axis} = {n} {unit}" for axis, n in zip("xyz", numbers, strict=False)
            )
        return f"({', '.join(numbers)}) {unit}"
    raise ValueError(f"unknown phrase mark {kind!r}")


NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")
UNITS = re.compile(r"\b(?:mm|cm|in|degrees)\b|°")


def skeleton(prompt: str) -> list[str]:
    """A prompt's sentences with numbers and units masked: its wording forms."""
    masked = UNITS.sub("<u>", NUMBER.sub("<n>", prompt))
    return [s.strip() for s in re.split(r"(?<=\.)\s+", masked) if s.strip()]
