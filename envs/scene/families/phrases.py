"""The game scenes' phrase bank and styles: one level description, said in several ways.

Lengths in metres (said in m, cm or feet), angles in degrees, times in seconds. The training
styles use the first two words of every bank entry; the held-out styles the third, feet and
"by" between sizes, so that with numbers and units masked a held-out prompt shares no sentence
with any training prompt (``tests/test_scene_families.py`` checks every styled family). The
``relative`` styles place things from a named object ("1 m behind door_1"), as seen from the
front (:data:`toolgym.envs.tasks.phrases.RELATIVE_CONVENTION`).

A styled prompt states the same relations as its ``spec`` prompt, word for word in the marks:
the relation table (``toolgym.envs.scene.relations``) reads the ``spec`` prompt, and a style
only changes how the marked words and numbers are said.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolgym.envs.tasks import phrases
from toolgym.envs.tasks.phrases import RELATIVE_CONVENTION, Style, named_style, say, skeleton

__all__ = ["HELD_OUT_STYLES", "RELATIVE_CONVENTION", "STYLES", "TRAIN_STYLES", "WORDS"]
__all__ += ["Phrases", "Style", "get_style", "say", "skeleton"]

#: Each entry: the training styles' two words, then the held-out styles' word.
WORDS: dict[str, tuple[str, str, str]] = {
    "room": ("room", "chamber", "interior"),
    "doorway": ("doorway", "entrance", "way in"),
    "wall": ("wall", "side wall", "partition"),
    "table": ("table", "desk", "work surface"),
    "chair": ("chair", "seat", "stool"),
    "chairs": ("chairs", "seats", "stools"),
    "crate": ("crate", "box", "case"),
    "crates": ("crates", "boxes", "cases"),
    "shelf": ("shelf", "shelving unit", "rack"),
    "ball": ("ball", "sphere", "orb"),
    "ramp": ("ramp", "slope", "incline"),
    "coin": ("coin", "token", "pickup"),
    "coins": ("coins", "tokens", "pickups"),
    "door": ("door", "gate", "hatch"),
    "platform": ("platform", "lift", "moving floor"),
    "player": ("player", "player character", "avatar"),
    "zone": ("zone", "trigger zone", "trigger volume"),
    "switch": ("switch", "button", "lever"),
    "put": ("put", "place", "set down"),
    "each": ("each", "every one", "apiece"),
    "must": ("must", "has to", "shall"),
    "when": ("when", "as soon as", "the moment"),
    "seconds": ("seconds", "s", "secs"),
    "wide": ("wide", "in width", "across"),
    "deep": ("deep", "in depth", "front to back"),
    "tall": ("tall", "high", "in height"),
    "centred": ("centred", "centered", "positioned symmetrically"),
    "may": ("may", "can", "is allowed to"),
    "keep": ("keep", "retain", "hold on to"),
    "units": ("units", "measures", "conventions of measure"),
    "wide (walkway)": ("wide", "broad", "wide, clear"),
}

STYLES: dict[str, Style] = phrases.style_table(
    Style("spec", "train", unit="m"),
    Style("brief", "train", unit="m", points="named", dims="each", lexicon=1),
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
        lexicon=2,
        order="shuffled",
    ),
    Style("designer", "held-out", unit="m", points="relative", dims="by", lexicon=2),
)
TRAIN_STYLES = tuple(name for name, style in STYLES.items() if style.split == "train")
HELD_OUT_STYLES = tuple(name for name, style in STYLES.items() if style.split == "held-out")


def get_style(name: str) -> Style:
    """A style by name; an unknown name is a one-line error naming the known ones."""
    return named_style(STYLES, name)


class Phrases(phrases.Phrases):
    """What a scene family's text writes with (lengths in m): the bank's words and its own."""

    def __init__(self, words: Mapping[str, tuple[str, str, str]] | None = None) -> None:
        super().__init__({**WORDS, **(words or {})}, base="m")
