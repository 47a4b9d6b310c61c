"""The phrase machinery every domain's families share: one description, said in several styles.

A family writes its prompt once, as sentences with marked quantities and words
(:class:`Phrases`); a :class:`Style` says them: in a chosen unit, diameters plain, as ``⌀``
callouts or as radii, counts in digits or words, points as tuples, as named coordinates or
relative to a named object ("0.5 m left of Table"), the bank's first, second or third word for
each thing, and the sentences after the first in the family's order or shuffled.

Each domain keeps its own word bank (entries of three words: the training styles' two, then the
held-out styles' one) and its own styles; CAD's lengths are in mm, Blender's and the game
scenes' in metres (``Phrases.base``). Relative placement reads as seen from the front (from -Y,
Z up): left and right are -X and +X, in front of and behind are -Y and +Y, below and above -Z
and +Z (:data:`RELATIVE_CONVENTION`, which a prompt using it must carry).
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Mapping, Sequence

import numpy as np

Words = Mapping[str, tuple[str, str, str]]

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
#: Each unit's length in mm, and the decimals a prompt writes it to (inches to 4: under
#: 0.003 mm off; feet to 3: under 0.16 mm).
UNIT_MM = {"mm": 1.0, "cm": 10.0, "in": 25.4, "m": 1000.0, "ft": 304.8}
DECIMALS = {"mm": 2, "cm": 3, "in": 4, "m": 3, "ft": 3}
UNIT_NAMES = {"mm": "millimetres", "cm": "centimetres", "in": "inches", "m": "metres", "ft": "feet"}
#: Words of relative placement, by axis sign (training two, held-out one).
RELATIVE_WORDS: dict[str, tuple[str, str, str]] = {
    "-x": ("left of", "to the left of", "leftward of"),
    "+x": ("right of", "to the right of", "rightward of"),
    "-y": ("in front of", "forward of", "before"),
    "+y": ("behind", "in back of", "rearward of"),
    "-z": ("below", "under", "beneath"),
    "+z": ("above", "over", "higher than"),
}
RELATIVE_CONVENTION = (
    "Left, right, in front of and behind are as seen from the front (from -Y, Z up): "
    "-X, +X, -Y and +Y."
)


@dataclasses.dataclass(frozen=True)
class Style:
    """How a description is said.

    Attributes:
        name: the style's name (``Task.style``).
        split: ``"train"`` (training suites may use it) or ``"held-out"`` (only test splits).
        unit: lengths in one of :data:`UNIT_MM`.
        diameters: ``"plain"`` ("5 mm holes"), ``"symbol"`` ("⌀5 mm holes") or ``"radius"``
            ("holes of 2.5 mm radius").
        counts: ``"digits"`` or ``"words"``.
        points: ``"tuple"`` ("(10, 5) mm"), ``"named"`` ("x = 10 mm, y = 5 mm") or
            ``"relative"`` (from the anchor a point names, else as ``"named"``).
        dims: ``"times"`` ("60 × 40 × 6 mm"), ``"each"`` ("60 mm × 40 mm × 6 mm") or ``"by"``
            ("60 by 40 by 6 mm").
        angles: ``"symbol"`` ("30°") or ``"words"`` ("30 degrees").
        colours: ``"tuple"`` ("(0.8, 0.1, 0.1)"), ``"named"`` ("R 0.8, G 0.1, B 0.1") or
            ``"words"`` ("red 0.8, green 0.1 and blue 0.1").
        lexicon: which word of each bank entry (0, 1: training; 2: held-out).
        mixed: each entry's word chosen by the entry (its key's CRC-32 parity, plus
            ``lexicon``, modulo 2): the training styles' words, in a mix no one of them uses.
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
    colours: str = "tuple"
    lexicon: int = 0
    order: str = "given"
    mixed: bool = False

    def __post_init__(self) -> None:
        if self.unit not in UNIT_MM:
            raise ValueError(f"style {self.name}: unit must be one of {list(UNIT_MM)}")

    def word(self, words: Words, key: str) -> str:
        """The style's word for the bank entry ``key``."""
        if self.mixed:
            return words[key][(zlib.crc32(key.encode()) + self.lexicon) % 2]
        return words[key][self.lexicon]


def style_table(*styles: Style) -> dict[str, Style]:
    """Styles by name."""
    return {style.name: style for style in styles}


def named_style(styles: Mapping[str, Style], name: str) -> Style:
    """A style by name; an unknown name is a one-line error naming the known ones."""
    try:
        return styles[name]
    except KeyError:
        raise ValueError(f"style must be one of {list(styles)}, got {name!r}") from None


# Quantities and words are marked in the sentences a family writes, and said by a style.
_OPEN, _CLOSE, _SEP = "\ue000", "\ue001", "\ue002"
_MARK = re.compile(f"{_OPEN}([^{_CLOSE}]*){_CLOSE}")


def _mark(kind: str, *fields: object) -> str:
    return _OPEN + _SEP.join((kind, *map(str, fields))) + _CLOSE


class Phrases:
    """What a family's text writes with: each method marks one quantity or word.

    Lengths are in ``base`` units (CAD's mm, Blender's and the scenes' m); a style converts them.
    """

    def __init__(self, words: Words, base: str = "mm") -> None:
        self.words = {**RELATIVE_WORDS, **words}
        self.scale = UNIT_MM[base]

    def w(self, key: str) -> str:
        """A word from the bank (``KeyError`` for a word it lacks: add it to the bank)."""
        if key not in self.words:
            raise KeyError(f"the phrase bank has no word {key!r}")
        return _mark("W", key)

    def _mm(self, value: float) -> float:
        return value if self.scale == 1.0 else value * self.scale

    def len(self, value: float) -> str:
        """A length: "12.5 mm"."""
        return _mark("L", self._mm(value))

    def dims(self, *values: float) -> str:
        """Sizes along X, Y (, Z): "60 × 40 × 6 mm"."""
        return _mark("X", *map(self._mm, values))

    def dia(self, value: float, noun: str) -> str:
        """A diameter with what has it: "5 mm holes", "⌀5 mm holes", "holes of 2.5 mm radius"."""
        self.w(noun)
        return _mark("D", self._mm(value), noun)

    def radius(self, value: float) -> str:
        """A radius (a fillet's, a bend's): "a 3 mm radius"."""
        return _mark("R", self._mm(value))

    def unit(self) -> str:
        """The name of the style's length unit: "metres", "centimetres", "feet"..."""
        return _mark("U")

    def count(self, n: int) -> str:
        """A count: "4" or "four"."""
        return _mark("N", int(n))

    def deg(self, degrees: float) -> str:
        """An angle: "30°" or "30 degrees"."""
        return _mark("A", degrees)

    def rgb(self, r: float, g: float, b: float) -> str:
        """A colour's three channels (0..1, no unit): "(0.8, 0.1, 0.1)"."""
        return _mark("C", r, g, b)

    def at(self, *coords: float) -> str:
        """A point: "(10, 5) mm" or "x = 10 mm, y = 5 mm" (two or three coordinates)."""
        return _mark("P", *map(self._mm, coords))

    def place(self, *coords: float, anchor: tuple[str, Sequence[float]] | None = None) -> str:
        """Where a thing goes, with its preposition: "at (1.5, 0, 0.8) m", "at x = 1.5 m, ..."
        or, in a relative style and with an ``anchor`` (a name and its point), "0.5 m left of
        and 1 m behind Table" (a point at the anchor's: "where Table is")."""
        fields: list[object] = [*map(self._mm, coords)]
        if anchor is not None:
            name, where = anchor
            fields += ["@", name, *map(self._mm, where)]
        return _mark("Q", *fields)


def number(value: float, unit: str) -> str:
    """``value`` mm in ``unit``, to the unit's decimals, without trailing zeros."""
    shown = round(value / UNIT_MM[unit], DECIMALS[unit])
    text = f"{shown:.{DECIMALS[unit]}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def say(
    sentences: Sequence[str], style: Style, words: Words, rng: np.random.Generator | None = None
) -> str:
    """The sentences said in ``style``: the prompt a task shows."""
    order = list(sentences)
    if style.order == "shuffled" and len(order) > 2:
        rest = order[1:]
        generator = rng if rng is not None else np.random.default_rng(0)
        order = [order[0], *(rest[i] for i in generator.permutation(len(rest)))]
    bank = {**RELATIVE_WORDS, **words}
    said = []
    for sentence in order:
        text = _MARK.sub(lambda m: _say(m.group(1).split(_SEP), style, bank), sentence)
        text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU]|8|1[18](?!\d))", r"\1n ", text)
        text = text.strip()
        said.append(text[:1].upper() + text[1:])
    return " ".join(s if s.endswith((".", "?", "!")) else s + "." for s in said)


def _say(fields: list[str], style: Style, words: Words) -> str:
    kind, values = fields[0], fields[1:]
    unit = style.unit
    if kind == "W":
        return style.word(words, values[0])
    if kind == "U":
        return UNIT_NAMES[unit]
    if kind == "N":
        n = int(values[0])
        return COUNT_WORDS[n] if style.counts == "words" and n < len(COUNT_WORDS) else str(n)
    if kind == "A":
        degrees = number(float(values[0]), "mm")
        return f"{degrees} degrees" if style.angles == "words" else f"{degrees}°"
    if kind in "PQ":
        return _point(values, style, words, placed=kind == "Q")
    if kind == "C":
        channels = [number(float(v) * 10, "cm") for v in values]  # three decimals, no unit
        if style.colours == "named":
            return ", ".join(f"{c} {n}" for c, n in zip("RGB", channels, strict=True))
        if style.colours == "words":
            return f"red {channels[0]}, green {channels[1]} and blue {channels[2]}"
        return f"({', '.join(channels)})"
    numbers = [number(float(v), unit) for v in values[: 3 if kind == "X" else 1]]
    if kind == "L":
        return f"{numbers[0]} {unit}"
    if kind == "R":
        return f"{numbers[0]} {unit} radius"
    if kind == "D":
        noun = style.word(words, values[1])
        if style.diameters == "radius":
            return f"{noun} of {number(float(values[0]) / 2, unit)} {unit} radius"
        return f"{'⌀' if style.diameters == 'symbol' else ''}{numbers[0]} {unit} {noun}"
    if kind == "X":
        joiner = {"times": " × ", "each": f" {unit} × ", "by": " by "}[style.dims]
        return joiner.join(numbers) + f" {unit}"
    raise ValueError(f"unknown phrase mark {kind!r}")


def _point(values: list[str], style: Style, words: Words, placed: bool) -> str:
    unit = style.unit
    cut = values.index("@") if "@" in values else len(values)
    coords = [float(v) for v in values[:cut][:3]]
    if style.points == "relative" and cut < len(values):
        name, where = values[cut + 1], [float(v) for v in values[cut + 2 :]]
        parts = []
        for axis, have, of in zip("xyz", coords, where, strict=False):
            offset = have - of
            if number(abs(offset), unit) != "0":
                side = style.word(words, ("+" if offset > 0 else "-") + axis)
                parts.append(f"{number(abs(offset), unit)} {unit} {side}")
        if not parts:
            return f"where {name} is"
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"{joined} {name}"
    numbers = [number(v, unit) for v in coords]
    at = "at " if placed else ""
    if style.points in ("named", "relative"):
        named = ", ".join(f"{axis} = {n} {unit}" for axis, n in zip("xyz", numbers, strict=False))
        return at + named
    return f"{at}({', '.join(numbers)}) {unit}"


NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")
UNITS = re.compile(r"\b(?:mm|cm|in|m|ft|degrees|millimetres|centimetres|inches|metres|feet)\b|°")


def skeleton(prompt: str) -> list[str]:
    """A prompt's sentences with numbers and units masked: its wording forms."""
    masked = UNITS.sub("<u>", NUMBER.sub("<n>", prompt))
    return [s.strip() for s in re.split(r"(?<=\.)\s+", masked) if s.strip()]
