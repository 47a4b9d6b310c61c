"""Every relation a game-scene prompt states, mapped to the rule that checks it.

A prompt is read against :data:`PHRASES`: each entry is a phrase (a regular expression) and what
checks it: the constraints that must be among the task's (a kind and the fields that must match,
built from the phrase's own numbers and names), or, for a phrase that describes the level or the
conventions and asks nothing, a note saying so. Two rules make the table complete:

- every phrase found must have its constraints among the task's, and
- every relation word (:data:`WORDS`: on, beside, facing, against, along, inside, rest, fall,
  open, ...) and every count of things to place must lie inside a phrase the table knows.

A family may bring phrases of its own (``Template.relations``), checked the same way on its
prompts only.

:func:`unchecked` lists what breaks them, in words; :func:`require_checked` raises
:class:`UncheckedRelation` so that a task whose prompt states a relation no rule checks does not
load (``families.spec_for`` and ``families.task_spec`` call it). A new template, or a new wording,
needs its phrases here before its tasks ship.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: Words that state a relation between things, or something that must happen to them.
WORDS = (
    r"on", r"onto", r"next to", r"beside", r"near", r"facing", r"faces?", r"against", r"along",
    r"inside", r"under", r"below", r"above", r"over", r"beyond", r"between", r"within",
    r"centred", r"upright", r"apart", r"rest(?:s|ing)?", r"stand(?:s|ing)?", r"falls?",
    r"reach(?:es)?", r"enters?", r"open(?:s)?", r"closed", r"vanish(?:es)?", r"touch(?:es)?",
    r"move", r"emit", r"interpenetrate", r"leave", r"walkway", r"chain", r"stack", r"shifted",
    r"jumps?", r"knocks?", r"turned", r"stay(?:s)?", r"lead", r"counts?",
)  # fmt: skip
_WORD = re.compile(r"\b(?:" + "|".join(WORDS) + r")\b", re.IGNORECASE)
_COUNT = re.compile(
    r"\b(one|\d+) (tables?|chairs?|crates?|shelf|shelves|ramps?|dominoes|domino)\b(?! objects)"
)
_NUMBER = r"-?\d+(?:\.\d+)?"
_POINT = rf"\(({_NUMBER}), ({_NUMBER})\)"
_SINGULAR = {"dominoes": "domino", "shelves": "shelf"}

Need = dict[str, Any]  # a constraint's kind and the fields that must match


@dataclasses.dataclass(frozen=True)
class Phrase:
    """A phrase of prompts (``pattern``) and what checks it: ``needs(match)``, the constraints
    that must be among the task's, or ``note``, why it needs none (it describes the level)."""

    pattern: str
    needs: Callable[[re.Match[str]], list[Need]] | None = None
    note: str = ""

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _CACHE:
        _CACHE[pattern] = re.compile(pattern)
    return _CACHE[pattern]


def _f(text: str) -> float:
    return float(text)


def _single(word: str) -> str:
    return _SINGULAR.get(word, word.rstrip("s") if word.endswith("s") else word)


def _kinds(*kinds: str) -> Callable[[re.Match[str]], list[Need]]:
    return lambda m: [{"kind": k} for k in kinds]


#: The phrases of every template's prompt. Level descriptions come first in the table only for
#: reading; the order does not matter (every phrase found is checked).
PHRASES: tuple[Phrase, ...] = (
    # -- the level and the conventions: described, nothing asked
    Phrase(
        r"The room is [^.]*?, centred on the origin \(x from [^)]*\), with its doorway in the "
        rf"south wall \(y = {_NUMBER}\) at x = {_NUMBER}\.",
        note="the room, as the level has",
    ),
    Phrase(
        rf"The room is {_NUMBER} × {_NUMBER} m, centred on the origin \(x from [^)]*\), with "
        rf"its doorway in the south wall \(y = {_NUMBER} m\) at x = {_NUMBER} m\.",
        note="the room, as the level has (a styled prompt's wording)",
    ),
    Phrase(
        r"Units: metres, seconds, degrees; Z is up; positions are the centres of bounding "
        r"boxes; at heading 0 an object's front faces \+Y and a heading turns it "
        r"counter-clockwise\.",
        note="the conventions",
    ),
    Phrase(r"at heading 0 they fall along ±Y", note="the catalogue's domino"),
    Phrase(
        r"it rises 0\.4 m over 1\.2 m towards its front; heading -90 makes it rise towards \+X",
        note="the catalogue's ramp",
    ),
    Phrase(
        rf"The ball ball_1 rolls from {_POINT} along \+[XY] at {_NUMBER} m/s",
        note="the level's ball",
    ),
    Phrase(r"The ball ball_1 rests at the origin", note="the level's ball"),
    Phrase(
        rf"towards a wall of static crates \(0\.5 m high\) at x = {_NUMBER}",
        note="the level's wall",
    ),
    Phrase(rf"\(a 1 × 1 m square centred at {_POINT}\)", note="the level's goal zone"),
    Phrase(r"centres at height 0\.5 m\) stand in a row along X", note="the level's coins"),
    Phrase(
        r"The player is the object named 'player'|When the player \(the object 'player'\)",
        note="who the player is",
    ),
    Phrase(
        r"Try it with world\.player_path\([^;]*?\) and world\.run\(\d+\); the verifier plays "
        r"its own paths on a fresh copy of the level\.",
        note="how to try it",
    ),
    Phrase(
        r"The verifier plays the level for [\d.]+ s and (?:checks every frame|counts them)\.",
        note="how it is played",
    ),
    Phrase(
        r"Placed things keep the catalogue's body, mass and friction",
        note="enforced when the scene is taken over (a change is refused and fails)",
    ),
    # -- layout
    Phrase(
        rf"with its centre at {_POINT}", lambda m: [{"kind": "near", "x": _f(m[1]), "y": _f(m[2])}]
    ),
    Phrase(
        r"its long side along X",
        lambda m: [{"kind": "aligned", "asset": "table", "heading": 0.0, "period": 180.0}],
    ),
    Phrase(
        r"(\d+) chairs next to it \(at most ([\d.]+) m away\), each facing the table",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": int(m[1])},
            {"kind": "next_to", "asset": "chair", "other": "table", "gap": _f(m[2])},
            {"kind": "facing", "asset": "chair", "other": "table"},
        ],
    ),
    Phrase(
        r"one chair next to the table facing it",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": 1},
            {"kind": "next_to", "asset": "chair", "other": "table"},
            {"kind": "facing", "asset": "chair", "other": "table"},
        ],
    ),
    Phrase(
        r"one shelf against the (north|south|east|west) wall \(its back within ([\d.]+) m of "
        r"the wall, its open front facing into the room\)",
        lambda m: [
            {"kind": "count", "asset": "shelf", "n": 1},
            {"kind": "against_wall", "asset": "shelf", "wall": m[1], "gap": _f(m[2])},
        ],
    ),
    Phrase(
        rf"centred at {_NUMBER} m along that wall", lambda m: [{"kind": "near", "asset": "shelf"}]
    ),
    Phrase(
        r"(\d+) crates on the floor against the same wall, each within ([\d.]+) m of the shelf",
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "on", "asset": "crate", "other": "floor"},
            {"kind": "against_wall", "asset": "crate"},
            {"kind": "next_to", "asset": "crate", "other": "shelf", "gap": _f(m[2])},
        ],
    ),
    Phrase(
        r"(\d+) crates resting on the table top",
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "on", "asset": "crate", "other": "table"},
        ],
    ),
    Phrase(
        r"the table and the chair on the floor",
        lambda m: [
            {"kind": "on", "asset": "table", "other": "floor"},
            {"kind": "on", "asset": "chair", "other": "floor"},
        ],
    ),
    Phrase(r"one table", lambda m: [{"kind": "count", "asset": "table", "n": 1}]),
    Phrase(r"[Nn]othing may interpenetrate or leave the room", _kinds("no_overlap", "inside_room")),
    Phrase(
        r"everything must rest on the floor",
        lambda m: [{"kind": "resting"}, {"kind": "on", "other": "floor"}],
    ),
    Phrase(r"everything must rest where it is", _kinds("resting")),
    Phrase(
        r"a 0\.5 m wide walkway must lead from the doorway to the (\w+)",
        lambda m: [{"kind": "walkway", "to": m[1]}],
    ),
    # -- physics
    Phrase(
        r"Build a stack of (\d+) crates \(0\.5 m cubes\) on the goal pad at " + _POINT,
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "stands", "n": int(m[1]), "x": _f(m[2]), "y": _f(m[3])},
        ],
    ),
    Phrase(r"the bottom crate on the floor centred on the pad", _kinds("stands")),
    Phrase(
        r"each crate shifted ([\d.]+) m further along \+X than the one below it",
        lambda m: [{"kind": "stands", "overhang": _f(m[1])}],
    ),
    Phrase(
        r"After \d+ s of simulation the stack must still stand \(every crate within 5 cm of "
        r"where it was placed, even when the placement is off by a millimetre\)",
        _kinds("stands"),
    ),
    Phrase(
        r"must start at rest, upright, on the floor or on each other, and apart",
        lambda m: [{"kind": "initial"}],
    ),
    Phrase(
        r"must start at rest, upright, standing on the floor, and apart",
        lambda m: [{"kind": "initial", "on": ("floor",)}],
    ),
    Phrase(r"so that it enters the goal zone (\w+)", lambda m: [{"kind": "reaches", "zone": m[1]}]),
    Phrase(r"within \d+ s of simulation", note="how long it is simulated"),
    Phrase(r"Place one ramp", lambda m: [{"kind": "count", "asset": "ramp", "n": 1}]),
    Phrase(
        r"so that the ball jumps over the wall \(not round its ends at y = ±[\d.]+\)",
        _kinds("clears"),
    ),
    Phrase(
        rf"is beyond x = ({_NUMBER}) after \d+ s",
        lambda m: [{"kind": "beyond", "axis": 0, "value": _f(m[1])}],
    ),
    Phrase(
        rf"Stand (\d+) dominoes \(0\.2 × 0\.05 × 0\.4 m; at heading 0 they fall along ±Y\) in "
        rf"a chain from {_POINT} to {_POINT}",
        lambda m: [
            {"kind": "count", "asset": "domino", "n": int(m[1])},
            {"kind": "chain", "asset": "domino", "x": _f(m[2]), "y0": _f(m[3]), "y1": _f(m[5])},
        ],
    ),
    Phrase(
        r"each turned to fall along the chain",
        lambda m: [{"kind": "aligned", "asset": "domino", "heading": 0.0, "period": 180.0}],
    ),
    Phrase(
        r"so that the ball knocks over the first and each domino knocks over the next, in "
        r"order",
        lambda m: [{"kind": "chain", "by": "ball_1"}],
    ),
    Phrase(r"every domino falls within \d+ s", _kinds("all_fallen")),
    # -- logic
    Phrase(
        r"must open \(world\.open\('(\w+)'\): the player can then walk through its doorway\) "
        r"when the player enters the [\d.]+ × [\d.]+ m zone centred at "
        + _POINT
        + r" \(within 0\.1 s of its first overlap with the zone, from any side\) and stay open",
        lambda m: [{"kind": "door", "door": m[1]}],
    ),
    Phrase(r"the door (\w+) at " + _POINT, lambda m: [{"kind": "door", "door": m[1]}]),
    Phrase(r"and only then: a player who walks past the zone must find it closed", _kinds("door")),
    Phrase(
        r"touches a coin, the coin must vanish \(world\.destroy\) and the counter '(\w+)' "
        r"\(world\.count\('\w+'\)\) must go up by one",
        lambda m: [{"kind": "coins", "counter": m[1]}],
    ),
    Phrase(r"coins the player never touches stay", _kinds("coins")),
    Phrase(
        r"the platform (\w+) must move back and forth between \(([^)]*)\) and \(([^)]*)\) at "
        r"([\d.]+) m/s, starting at the first point when the game starts and turning at each "
        r"end",
        lambda m: [{"kind": "platform", "name": m[1], "speed": _f(m[4])}],
    ),
    Phrase(
        rf"a spawner at \({_NUMBER}, {_NUMBER}, {_NUMBER}\) must emit (\d+) (\w+) objects, one "
        r"every ([\d.]+) s, the first [\d.]+ s after the game starts, and then stop",
        lambda m: [{"kind": "spawner", "count": int(m[1]), "asset": m[2], "interval": _f(m[3])}],
    ),
)


class UncheckedRelation(ValueError):
    """A prompt states a relation that no rule of its task checks; the message names it."""


def _has(constraints: Sequence[Mapping[str, Any]], need: Need) -> bool:
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float | int) and isinstance(b, float | int):
            return abs(float(a) - float(b)) < 1e-6
        if isinstance(a, list | tuple) and isinstance(b, list | tuple):
            return tuple(a) == tuple(b)
        return a == b

    return any(all(k in c and same(c[k], v) for k, v in need.items()) for c in constraints)


def unchecked(
    prompt: str, constraints: Sequence[Mapping[str, Any]], extra: Sequence[Phrase] = ()
) -> list[str]:
    """What ``prompt`` states that no constraint of ``constraints`` checks, in words: a phrase
    whose rule is missing, or a relation word or count outside every known phrase (the table's
    and ``extra``, a family's own)."""
    problems: list[str] = []
    covered: list[tuple[int, int]] = []
    for phrase in (*PHRASES, *extra):
        for match in phrase.regex.finditer(prompt):
            covered.append(match.span())
            for need in phrase.needs(match) if phrase.needs else ():
                if not _has(constraints, need):
                    fields = ", ".join(f"{k}={v!r}" for k, v in need.items() if k != "kind")
                    problems.append(
                        f"'{match[0]}' needs a {need['kind']} rule"
                        + (f" ({fields})" if fields else "")
                    )
    for found in (*_WORD.finditer(prompt), *_COUNT.finditer(prompt)):
        if not any(a <= found.start() and found.end() <= b for a, b in covered):
            start, end = max(0, found.start() - 30), min(len(prompt), found.end() + 30)
            problems.append(
                f"'{found[0]}' in '...{prompt[start:end]}...' is a relation no rule maps"
            )
    return problems


def require_checked(
    prompt: str,
    constraints: Sequence[Mapping[str, Any]],
    where: str,
    extra: Sequence[Phrase] = (),
) -> None:
    """Raise :class:`UncheckedRelation` naming the first relation of ``prompt`` that no rule
    checks (``where`` names the task or template; ``extra``: a family's own phrases)."""
    problems = unchecked(prompt, constraints, extra)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UncheckedRelation(f"{where}: the prompt states {problems[0]}{more}")
