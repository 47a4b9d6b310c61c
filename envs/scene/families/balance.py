"""Balance: a seesaw the level designer loads so that, once simulated, it stays level or tips to a
named side, said in any style of the phrase bank, with edit tasks that start from a loaded seesaw.

- ``balance``: a plank lying level across a static fulcrum, a load crate of a drawn mass at a
  drawn distance on one side; the agent puts one 10 kg crate on the other side so that after the
  simulation the plank stays level, or tips down at its named end, and nothing falls off it.

The seesaw (units: metres, kilograms, seconds, degrees; Z up; positions are bounding-box centres)
stands centred at (``x``, ``y``), within ±1.5 m of the origin, its plank lengthwise along X, so
its ends are west (-X) and east (+X). The fulcrum is the level's static domino laid on its side
and set halfway into the floor: a ridge 0.05 m wide along the plank (X) and 0.4 m across it (Y),
its top 0.1 m above the floor. The plank (the catalogue's 2 × 0.3 × 0.05 m, 3 kg) lies level on
it, centred over it; its top is 0.15 m up, so a crate on it has its centre at z = 0.4 m. The
load is a level crate (0.5 m cube) of ``mass`` kg centred ``distance`` m west or east of the
fulcrum (``load_side``), one of :data:`LOADS` (5-19 kg, 0.3-0.75 m in 0.05 m steps); the agent's
crate is the catalogue's (10 kg).

Statics: the plank stays level while the load's and the crate's moment about the fulcrum's centre
cancel to within what the ridge's 0.05 m top holds (the whole set-up's centre of mass over the
ridge: in Bullet, within about 2 cm of its middle); otherwise it tips until its low end rests on
the floor, about 5.8° from level. ``goal`` is ``"level"`` (the crate at ``mass × distance / 10``
m from the fulcrum) or the end that must go down, ``"west"`` or ``"east"``: the crate's own end
(the reference puts the crate 0.75 m out) or the load's (0.25 m out). Every drawn set-up has all
three outcomes within reach with a margin: the balance point between 0.3 and 0.75 m out, and
either tip moving the centre of mass at least ``TIP_MARGIN_M`` past the ridge's middle. The
verifier simulates 3 s (the level's 16 substeps per frame slow a tipped plank's creep along the
floor to a few mm/s) unperturbed and, at the exact tier, three runs with the placed crate moved
by up to 1 mm and turned by up to 0.5°; the ``seesaw`` rule reads the plank's final tilt (level
within ``SEESAW_LEVEL_DEG``, tipped at least ``SEESAW_TIPPED_DEG`` with the named end lower) and
that the load and the crate still lie on the plank.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from toolgym.envs.scene.families.model import (
    INITIAL,
    Edit,
    Spec,
    Template,
    Text,
    add_object,
    call_script,
    conventions_said,
    new_level,
    said,
    tool_call,
)
from toolgym.envs.scene.families.phrases import Phrases
from toolgym.envs.scene.relations import Phrase
from toolgym.envs.scene.verifier import SEESAW_LEVEL_DEG, SEESAW_TIPPED_DEG

RIDGE_TOP = 0.1  # the fulcrum's top above the floor (m)
PLANK_MASS = 3.0  # the catalogue plank's (kg)
CRATE_MASS = 10.0  # the catalogue crate's (kg)
CRATE_Z = RIDGE_TOP + 0.05 + 0.25  # a crate's centre on the plank (m)
NEAR, FAR = 0.25, 0.75  # the reference crate's distance from the fulcrum when it tips (m)
TIP_MARGIN_M = 0.05  # a tip moves the centre of mass this far past the ridge's middle, or more
UNEVEN_M = 0.04  # an edit's unedited start is this far off balance (centre of mass), or more
SECONDS = 3.0
SIDES = ("west", "east")


def _r(value: float, digits: int = 3) -> float:
    return round(value + 0.0, digits) + 0.0  # + 0.0: no "-0"


def _other(side: str) -> str:
    return SIDES[1 - SIDES.index(side)]


def _crate_distance(p: Mapping[str, Any]) -> float:
    """How far (m) from the fulcrum's centre the reference crate stands, on its own side."""
    goal, crate_side = str(p["goal"]), _other(str(p["load_side"]))
    if goal == "level":
        return _r(float(p["mass"]) * float(p["distance"]) / CRATE_MASS)
    return FAR if goal == crate_side else NEAR


def _offset(mass: float, distance: float, crate: float) -> float:
    """How far (m) the set-up's centre of mass lies from the fulcrum's middle towards the crate's
    side, with the load ``mass`` kg at ``distance`` m and the crate ``crate`` m out."""
    return (CRATE_MASS * crate - mass * distance) / (PLANK_MASS + mass + CRATE_MASS)


def _sign(side: str) -> int:
    return 1 if side == "east" else -1


def _xs(p: Mapping[str, Any], crate: float | None = None) -> tuple[float, float]:
    """The load's and the crate's centre x (m); the crate ``crate`` m out (default: the
    reference's)."""
    cx, load = float(p["x"]), _sign(str(p["load_side"]))
    out = _crate_distance(p) if crate is None else crate
    return _r(cx + load * float(p["distance"])), _r(cx - load * out)


def balance(p: Mapping[str, Any]) -> Spec:
    """The seesaw centred at (``x``, ``y``) with the load crate (``mass`` kg) ``distance`` m on
    its ``load_side``; the agent puts one crate on the plank's other side so that after
    ``SECONDS`` s it stays level (``goal`` ``"level"``) or has tipped down at its ``goal`` end,
    the load and the crate still on the plank."""
    cx, cy, mass = float(p["x"]), float(p["y"]), int(p["mass"])
    load_side, goal = str(p["load_side"]), str(p["goal"])
    crate_side = _other(load_side)
    load_x, crate_x = _xs(p)
    level = new_level()
    level["substeps"] = 16
    add_object(level, "fulcrum_1", "domino", (cx, cy, RIDGE_TOP - 0.1), body="static")
    level["objects"][-1]["hpr"] = [90.0, 0.0, 90.0]  # 0.05 m along X, 0.2 m up, 0.4 m along Y
    add_object(level, "plank_1", "plank", (cx, cy, RIDGE_TOP + 0.025))
    add_object(level, "load_1", "crate", (load_x, cy, CRATE_Z))
    level["objects"][-1]["mass"] = float(mass)
    calls = [tool_call("spawn", asset="crate", x=crate_x, y=cy, z=CRATE_Z)]
    constraints = [
        {"kind": "count", "asset": "crate", "n": 1, "weight": 1.0},
        {
            "kind": "seesaw",
            "name": "plank_1",
            "axis": 0,
            "pivot": [cx, cy],
            "down": 0 if goal == "level" else _sign(goal),
            "side": _sign(crate_side),
            "loads": ["load_1"],
            "carry": "crate",
            "weight": 2.0,
        },
        dict(INITIAL, on=("plank",)),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            *_level_said(s, p),
            _request(s, crate_side, goal, put=True),
            f"placed things {s.w('keep')} the catalogue's body, mass and friction, and "
            f"{s.w('must (they)')} start at rest, upright, on the plank, and apart",
            conventions_said(s),
        ]

    return Spec(
        "balance",
        "physics",
        level,
        tuple(constraints),
        SECONDS,
        SECONDS,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        bounds=(cx - 2.5, cy - 2.5, cx + 2.5, cy + 2.5),
    )


def _level_said(s: Phrases, p: Mapping[str, Any]) -> list[str]:
    cx, cy, load_x = float(p["x"]), float(p["y"]), _xs(p)[0]
    return [
        f"a {s.w('seesaw')} stands centred at {s.at(cx, cy)}: a static {s.w('fulcrum')} (a "
        f"ridge set into the floor, {s.len(0.05)} wide along X and {s.len(0.4)} along Y, its top "
        f"{s.len(RIDGE_TOP)} above the floor) and the plank plank_1 ({s.dims(2.0, 0.3, 0.05)}, "
        f"{s.count(int(PLANK_MASS))} kg) lying {s.w('level')} on it, lengthwise along X, "
        f"centred over it",
        f"the {s.w('load')} load_1, a {s.w('crate')} {s.w('weighing')} "
        f"{s.count(int(p['mass']))} kg, rests on the plank centred at {s.at(load_x, cy)}, "
        f"{s.len(float(p['distance']))} {s.w(str(p['load_side']) + ' of')} the "
        f"{s.w('fulcrum')}'s centre",
    ]


def _request(s: Phrases, crate_side: str, goal: str, put: bool) -> str:
    """The ask: put (or move) the crate on ``crate_side`` so that the seesaw ends ``goal``."""
    ask = (
        f"{s.w('put')} one {s.w('crate')} ({s.count(int(CRATE_MASS))} kg) on the plank,"
        if put
        else f"{s.w('move')} the {s.w('crate')} along the plank, keeping it"
    )
    if goal == "level":
        outcome = (
            f"{s.w('stays')} {s.w('level')}: the plank within {s.deg(SEESAW_LEVEL_DEG)} of "
            f"{s.w('level')}"
        )
    else:
        outcome = (
            f"{s.w('tips')} down at its {s.w(goal)} end: the plank at least "
            f"{s.deg(SEESAW_TIPPED_DEG)} from {s.w('level')}, that end lower"
        )
    return (
        f"{ask} {s.w(crate_side + ' of')} the {s.w('fulcrum')}, so that, after "
        f"{s.count(int(SECONDS))} {s.w('seconds of simulation')}, the {s.w('seesaw')} {outcome}, "
        f"and nothing falls off it (the {s.w('load')} and the {s.w('crate')} still on the plank)"
    )


def _feasible(mass: int, distance: float) -> bool:
    """Whether the load (``mass`` kg, ``distance`` m out) leaves all three outcomes within
    reach: the balance point from 0.3 to 0.75 m out, and the crate 0.75 m out (its own end
    down) and 0.25 m out (the load's end down) each ``TIP_MARGIN_M`` past it."""
    return (
        0.3 - 1e-9 <= mass * distance / CRATE_MASS <= 0.75 + 1e-9
        and _offset(mass, distance, FAR) >= TIP_MARGIN_M
        and -_offset(mass, distance, NEAR) >= TIP_MARGIN_M
    )


DISTANCES = tuple(k / 20 for k in range(6, 16))  # 0.3-0.75 m in 0.05 m steps
LOADS = tuple((m, d) for m in range(4, 21) for d in DISTANCES if _feasible(m, d))


def _draw(rng: random.Random) -> dict[str, Any]:
    """The seesaw's centre within ±1.5 m of the origin (0.1 m steps), the load on its west or
    east side, its mass (kg) and distance (m) one of :data:`LOADS`; the goal level half the
    time, else either end down."""
    mass, distance = rng.choice(LOADS)
    return {
        "x": round(rng.uniform(-1.5, 1.5), 1),
        "y": round(rng.uniform(-1.5, 1.5), 1),
        "load_side": rng.choice(SIDES),
        "mass": mass,
        "distance": distance,
        "goal": rng.choice(["level", "level", "west", "east"]),
    }


# -- edits -----------------------------------------------------------------------------------------


def _reload(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The load's mass changed (4-20 kg) so that the crate must move to keep the seesaw level:
    the new balance point from 0.3 to 0.75 m out, the crate left where it was at
    least ``UNEVEN_M`` off balance (it tips)."""
    distance, crate = float(before["distance"]), _crate_distance(before)
    options = []
    for mass in range(4, 21):
        if not 0.3 - 1e-9 <= mass * distance / CRATE_MASS <= 0.75 + 1e-9:
            continue
        if abs(_offset(mass, distance, crate)) >= UNEVEN_M:
            options.append(mass)
    return {**before, "mass": rng.choice(options), "goal": "level"}


def _reload_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    crate_side = _other(str(after["load_side"]))

    def text(s: Phrases) -> list[str]:
        return [
            f"the level has changed: the {s.w('load')} load_1 now {s.w('weighs')} "
            f"{s.count(int(after['mass']))} kg",
            _request(s, crate_side, "level", put=False),
        ]

    return text


def _tip(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Tip the seesaw: a level one down at either end, a tipped one down at its other end (the
    crate left where it was keeps it level, or tipped the old way)."""
    goal = str(before["goal"])
    return {**before, "goal": rng.choice(SIDES) if goal == "level" else _other(goal)}


def _tip_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    crate_side = _other(str(after["load_side"]))

    def text(s: Phrases) -> list[str]:
        return [_request(s, crate_side, str(after["goal"]), put=False)]

    return text


def _near_miss(task: Any, spec: Spec) -> str:
    """The crate a little out of place: for a level seesaw 0.15 m from the balance point (the
    centre of mass then lies at least 0.045 m off the ridge's middle, past its 0.025 m edge, and
    the plank tips); for a tip, at the balance point (the plank stays level)."""
    p = task.parameters
    if p["goal"] == "level":
        point = _crate_distance(p)
        crate = point - 0.15 if point >= 0.45 else point + 0.15
    else:
        crate = float(p["mass"]) * float(p["distance"]) / CRATE_MASS
    call = spec.tool_calls[-1]["arguments"]
    moved = tool_call("spawn", **{**call, "x": _xs(p, crate)[1]})
    return call_script([*spec.tool_calls[:-1], moved])


# -- words and relations ---------------------------------------------------------------------------

WORDS = {
    "seesaw": ("seesaw", "teeter-totter", "balance beam"),
    "fulcrum": ("fulcrum", "pivot", "pivot ridge"),
    "level": ("level", "horizontal", "flat"),
    "load": ("load", "weight", "ballast"),
    "weighing": ("weighing", "with a mass of", "of mass"),
    "weighs": ("weighs", "has a mass of", "comes to"),
    "stays": ("stays", "remains", "holds"),
    "tips": ("tips", "tilts", "leans"),
    "move": ("move", "shift", "slide"),
    "seconds of simulation": ("seconds", "simulated seconds", "seconds of play"),
    "west": ("west", "-X", "western"),
    "east": ("east", "+X", "eastern"),
    "west of": ("west of", "on the -X side of", "westward of"),
    "east of": ("east of", "on the +X side of", "eastward of"),
    "must (they)": ("must", "have to", "are to"),
}

_N = r"-?\d+(?:\.\d+)?"
_AT = rf"\({_N}, {_N}\) m"  # a point, as the spec style says it
_SIDE = {"west": -1, "east": 1}


def _seesaw(m: Any) -> list[dict[str, Any]]:
    down = _SIDE[m[3]] if m[3] else 0
    return [
        {"kind": "seesaw", "name": "plank_1", "axis": 0, "side": _SIDE[m[2]], "down": down},
        {"kind": "initial", "on": ("plank",)},
        *([{"kind": "count", "asset": "crate", "n": 1}] if m[1] else []),
    ]


RELATIONS = (
    Phrase(
        rf"[Aa] seesaw stands centred at {_AT}: a static fulcrum \(a ridge set into the floor, "
        r"[\d.]+ m wide along X and [\d.]+ m along Y, its top [\d.]+ m above the floor\) and the "
        r"plank plank_1 \([^)]*\) lying level on it, lengthwise along X, centred over it",
        note="the level's seesaw: its fulcrum and plank",
    ),
    Phrase(
        rf"[Tt]he load load_1, a crate weighing \d+ kg, rests on the plank centred at {_AT}, "
        r"[\d.]+ m (?:west|east) of the fulcrum's centre",
        note="the level's load",
    ),
    Phrase(
        r"[Tt]he level has changed: the load load_1 now weighs \d+ kg",
        note="the level's load, reloaded",
    ),
    Phrase(
        r"(?:[Pp]ut (one) crate \(10 kg\) on the plank,|[Mm]ove the crate along the plank, "
        r"keeping it) (west|east) of the fulcrum, so that, after \d+ seconds, the seesaw "
        r"(?:stays level: the plank within [\d.]+° of level|tips down at its (west|east) end: "
        r"the plank at least [\d.]+° from level, that end lower), and nothing falls off it "
        r"\(the load and the crate still on the plank\)",
        _seesaw,
    ),
    Phrase(
        r"[Pp]laced things keep the catalogue's body, mass and friction, and must start at rest, "
        r"upright, on the plank, and apart",
        lambda m: [{"kind": "initial", "on": ("plank",)}],
    ),
)

FAMILY_GROUP = (
    Template(
        "balance",
        "physics",
        balance,
        _draw,
        2,
        "a crate on a seesaw that leaves it level or tips it to a named end",
        styled=True,
        near_miss=_near_miss,
        edits=(
            Edit("reload", _reload, _reload_text),
            Edit("tip", _tip, _tip_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
)

__all__ = ["FAMILY_GROUP", "LOADS", "RELATIONS", "WORDS"]
