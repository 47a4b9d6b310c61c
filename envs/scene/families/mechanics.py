"""Mechanics: physics set-ups judged after simulating, said in any style of the phrase bank, with
edit tasks that start from a set-up already built.

- ``plank_bridge``: two crates on the floor and a plank laid across them that stays on both;
- ``launch_to_goal``: a ball's launch velocity, with an upward part, that flies it up into a goal
  zone on top of a block of static crates (a ball cannot roll up there);
- ``ramp_to_goal``: a ramp under a hanging ball, turned so that the ball, dropping onto it, rolls
  into a goal zone on the floor;
- ``domino_run``: a ramp under a hanging ball and a chain of dominoes along +Y that the ball,
  rolling off the ramp, knocks over piece by piece;
- ``knock_off``: a ball's velocity on a static table top that knocks a domino off the table's
  east or north edge.

Conventions as in the runtime (metres, seconds, degrees, Z up; positions are bounding-box
centres; at heading 0 an object's front faces +Y). The catalogue's ramp (0.6 × 1.2 × 0.4 m)
rises towards its front, so at heading ``h`` it slopes down along ``(sin h, -cos h)``; a ball
dropped on it 0.2 m up-slope of its centre leaves it at about 2 m/s and rolls on without
slowing. A plank is 2 × 0.3 × 0.05 m (its long side along X at heading 0); a domino
0.2 × 0.05 × 0.4 m (it falls along ±Y at heading 0); a crate a 0.5 m cube; the table
1.6 × 0.9 × 0.75 m. The verifier simulates the unperturbed set-up and, at the exact tier, three
runs with every placed object moved by up to 1 mm and turned by up to 0.5°.
"""

from __future__ import annotations

import math
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
from toolgym.envs.scene.verifier import ALIGN_DEG, CHAIN_M, RESTING_MOVE_M

G = 9.81  # m/s², the runtime's gravity
BALL_R = 0.15  # the catalogue ball's radius (m)
RAMP_UP = 0.2  # ramp_to_goal: the ball drops this far up-slope of the ramp's centre (m)
RUN_DOWN = 0.3  # domino_run: the ball drops this far down-slope of the ramp's centre (m), so
# that it rolls off slowly enough to tip the first domino before shoving it into the next
TABLE_TOP = 0.75  # the table's top (m)
TABLE_HALF = (0.8, 0.45)  # the table's half sizes along X and Y at heading 0 (m)
OFF_TABLE_M = 0.3  # a knocked-off domino ends this far past the table's edge, or further


def _r(value: float, digits: int = 3) -> float:
    return round(value + 0.0, digits) + 0.0  # + 0.0: no "-0"


def physics_rules_said(s: Phrases, floor_only: bool = False) -> list[str]:
    """The rules every styled physics prompt ends with (the catalogue's bodies kept; the set-up
    starts at rest, upright, supported and apart), as the classic templates say them, and the
    conventions; each sentence has words a style changes."""
    where = "standing on the floor" if floor_only else "on the floor or on each other"
    return [
        f"placed things {s.w('keep')} the catalogue's body, mass and friction, and "
        f"{s.w('must (they)')} start at rest, upright, {where}, and apart",
        conventions_said(s),
    ]


def _initial(floor_only: bool = False) -> dict[str, Any]:
    return dict(INITIAL, on=("floor",)) if floor_only else dict(INITIAL)


# -- plank_bridge --------------------------------------------------------------------------------


def _bridge_points(p: Mapping[str, Any]) -> tuple[tuple[float, float], ...]:
    """The two crates' centres (x, y), along the bridge's axis either side of its centre."""
    cx, cy, half = float(p["x"]), float(p["y"]), float(p["span"]) / 2
    if p["axis"] == "X":
        return (_r(cx - half), _r(cy)), (_r(cx + half), _r(cy))
    return (_r(cx), _r(cy - half)), (_r(cx), _r(cy + half))


def plank_bridge(p: Mapping[str, Any]) -> Spec:
    """Two crates on the floor, ``span`` m apart (centre to centre) along ``axis`` ("X" or
    "Y"), either side of (``x``, ``y``), and a plank centred there across them, its long side
    along the axis; everything rests ``seconds`` s later, the plank still on both crates."""
    cx, cy, axis, seconds = float(p["x"]), float(p["y"]), str(p["axis"]), float(p["seconds"])
    heading = 0.0 if axis == "X" else 90.0
    (x1, y1), (x2, y2) = _bridge_points(p)
    calls = [
        tool_call("spawn", asset="crate", x=x1, y=y1),
        tool_call("spawn", asset="crate", x=x2, y=y2),
        tool_call("spawn", asset="plank", x=cx, y=cy, z=0.525, heading=heading),
    ]
    constraints = [
        {"kind": "count", "asset": "crate", "n": 2, "weight": 1.0},
        {"kind": "count", "asset": "plank", "n": 1, "weight": 1.0},
        {"kind": "near", "asset": "crate", "x": x1, "y": y1, "weight": 1.0},
        {"kind": "near", "asset": "crate", "x": x2, "y": y2, "weight": 1.0},
        {"kind": "near", "asset": "plank", "x": cx, "y": cy, "weight": 1.0},
        {
            "kind": "aligned",
            "asset": "plank",
            "heading": heading,
            "period": 180.0,
            "what": f"lengthwise along {axis}",
            "weight": 1.0,
        },
        {"kind": "on", "asset": "crate", "other": "floor", "weight": 1.0},
        {"kind": "on", "asset": "plank", "other": "crate", "weight": 2.0},
        {"kind": "resting", "weight": 2.0},
        _initial(),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('build')} a small {s.w('bridge')}",
            f"{s.w('put')} {s.count(2)} {s.w('crates')} ({s.len(0.5)} cubes) on the floor, one "
            f"centred at {s.at(x1, y1)} and one at {s.at(x2, y2)}",
            f"lay one plank ({s.dims(2.0, 0.3, 0.05)}) {s.w('across')} the two crates, "
            f"centred at "
            f"{s.at(cx, cy)}, lengthwise along {axis}, resting on both {s.w('crates')}",
            f"after {s.count(int(seconds))} {s.w('seconds of simulation')} everything "
            f"{s.w('must')} still rest where it was placed (each thing within "
            f"{s.len(RESTING_MOVE_M)} of it), the plank on both {s.w('crates')}",
            *physics_rules_said(s),
        ]

    reach = float(p["span"]) / 2 + 2
    return Spec(
        "plank_bridge",
        "physics",
        new_level(),
        tuple(constraints),
        seconds,
        seconds,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        bounds=(cx - reach, cy - reach, cx + reach, cy + reach),
    )


def _bridge_draw(rng: random.Random) -> dict[str, Any]:
    """The bridge's centre within ±2 m of the origin (0.1 m steps), its axis X or Y, its span
    (crate centre to centre) 0.8-2 m in 0.2 m steps: the 2 m plank lies at least 0.25 m on
    each crate's top."""
    return {
        "axis": rng.choice(["X", "Y"]),
        "x": round(rng.uniform(-2, 2), 1),
        "y": round(rng.uniform(-2, 2), 1),
        "span": rng.choice([0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
        "seconds": 3.0,
    }


def _bridge_spread(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Another span (0.6-2.2 m), at least 0.8 m longer or shorter: each crate moves 0.4 m or
    more, past the verifier's ``near`` tolerance, so the crates left where they were fail."""
    span = float(before["span"])
    spans = [s / 10 for s in range(6, 23, 2) if abs(s / 10 - span) >= 0.8 - 1e-9]
    return {**before, "span": rng.choice(spans)}


def _bridge_spread_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    (x1, y1), (x2, y2) = _bridge_points(after)
    cx, cy = float(after["x"]), float(after["y"])

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('move')} the two {s.w('crates')} so that their centres are "
            f"{s.len(float(after['span']))} apart, one at {s.at(x1, y1)} and one at "
            f"{s.at(x2, y2)}, and lay the plank {s.w('across')} them again, still centred at "
            f"{s.at(cx, cy)} and resting on both",
        ]

    return text


def _bridge_shift(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The whole bridge 0.6-0.8 m across its axis: twice the ``near`` tolerance, so the bridge
    left where it was fails."""
    key = "y" if before["axis"] == "X" else "x"
    step = rng.choice([-0.8, -0.6, 0.6, 0.8])
    value = float(before[key]) + step
    if abs(value) > 2.5:
        value = float(before[key]) - step
    return {**before, key: round(value, 1)}


def _bridge_shift_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    (x1, y1), (x2, y2) = _bridge_points(after)
    cx, cy = float(after["x"]), float(after["y"])

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('move')} the whole {s.w('bridge')}, {s.w('crates')} and plank, so that the "
            f"plank is centred at {s.at(cx, cy)} and the {s.w('crates')} at {s.at(x1, y1)} and "
            f"{s.at(x2, y2)}, the plank still resting on both",
        ]

    return text


def _bridge_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the plank turned 5° further off its axis than the verifier allows:
    it still lies on both crates, but not lengthwise along the axis."""
    turn = ALIGN_DEG + 5.0
    return (
        f"{task.reference.rstrip()}\n"
        "_plank = next(o for o in world.objects.values() if not o.level and o.asset == 'plank')\n"
        f"_plank.set_hpr((_plank.hpr[0] + {turn}, 0, 0))\n"
    )


# -- launch_to_goal -------------------------------------------------------------------------------


def _pad_level(gx: float, gy: float, high: int) -> tuple[dict[str, Any], float]:
    """The level: the ball at rest at the origin, a 1 × 1 m block of static crates ``high``
    crates high centred at (gx, gy), the goal zone on its top; and the top's height."""
    level = new_level()
    add_object(level, "ball_1", "ball", (0.0, 0.0, BALL_R))
    k = 0
    for h in range(high):
        for i in (-1, 1):
            for j in (-1, 1):
                k += 1
                pos = (gx + 0.25 * i, gy + 0.25 * j, 0.25 + 0.5 * h)
                add_object(level, f"crate_{k}", "crate", pos, body="static")
    top = 0.5 * high
    add_object(level, "goal_zone_1", "goal_zone", (gx, gy, top + 0.25))
    return level, top


def _launch(gx: float, gy: float, top: float, apex: float) -> tuple[float, float, float]:
    """The launch velocity (m/s) that flies the ball from the origin up to ``apex`` (its
    centre's height, m) and down onto the middle of the pad, ``top`` m high, at (gx, gy)."""
    vz = math.sqrt(2 * G * (apex - BALL_R))
    flight = vz / G + math.sqrt(2 * (apex - top - BALL_R) / G)
    return _r(gx / flight, 2), _r(gy / flight, 2), _r(vz, 2)


def launch_to_goal(p: Mapping[str, Any]) -> Spec:
    """The ball at the origin; a block of static crates (1 × 1 m, ``high`` crates high)
    centred at (``goal_x``, ``goal_y``) with the goal zone on it; the agent sets the ball's
    launch velocity so that it flies into the zone within ``seconds`` s (the reference's arc
    rises to ``apex`` m)."""
    gx, gy, high = float(p["goal_x"]), float(p["goal_y"]), int(p["high"])
    seconds = float(p["seconds"])
    level, top = _pad_level(gx, gy, high)
    vx, vy, vz = _launch(gx, gy, top, float(p["apex"]))
    calls = [tool_call("set_velocity", name="ball_1", vx=vx, vy=vy, vz=vz)]
    constraints = [
        {"kind": "reaches", "name": "ball_1", "zone": "goal_zone_1", "weight": 1.0},
        _initial(),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('ball')} ball_1 rests at the origin",
            f"a {s.w('block')} of static {s.w('crates')} ({s.dims(1.0, 1.0, top)}) stands "
            f"centred at {s.at(gx, gy)}, the goal {s.w('zone')} goal_zone_1 "
            f"({s.dims(1.0, 1.0, 0.5)}) on its top",
            *_launch_request(s, seconds),
            *physics_rules_said(s),
        ]

    reach = max(abs(gx), abs(gy)) + 2
    return Spec(
        "launch_to_goal",
        "physics",
        level,
        tuple(constraints),
        seconds,
        seconds,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        adjustable={"ball_1": ("velocity",)},
        bounds=(-reach, -reach, reach, reach),
    )


def _launch_request(s: Phrases, seconds: float) -> list[str]:
    return [
        f"{s.w('set')} the {s.w('ball')}'s launch velocity, with an upward part (set_velocity "
        f"with vz, or world.get('ball_1').set_velocity(...)), so that it flies up into "
        f"goal_zone_1 (the {s.w('ball')}'s centre inside the zone's box) within "
        f"{s.count(int(seconds))} {s.w('seconds of simulation')}",
    ]


def _launch_draw(rng: random.Random) -> dict[str, Any]:
    """The pad 2.5-5 m from the origin in any direction (its centre to 0.1 m), one or two
    crates high; the reference's arc peaks 1-1.6 m above the pad's top."""
    distance, angle = rng.uniform(2.5, 5.0), rng.uniform(0, 2 * math.pi)
    high = rng.choice([1, 2])
    return {
        "goal_x": round(distance * math.cos(angle), 1),
        "goal_y": round(distance * math.sin(angle), 1),
        "high": high,
        "apex": round(0.5 * high + rng.uniform(1.0, 1.6), 1),
        "seconds": 3.0,
    }


def _launch_further(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The pad 1.5 m further from the ball along the same line: the old launch lands on the
    floor short of it and rolls into its side."""
    gx, gy = float(before["goal_x"]), float(before["goal_y"])
    scale = (math.hypot(gx, gy) + 1.5) / math.hypot(gx, gy)
    return {**before, "goal_x": round(gx * scale, 1), "goal_y": round(gy * scale, 1)}


def _launch_aside(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The pad 1.5 m to one side of the line from the ball: the old launch lands beside it."""
    gx, gy = float(before["goal_x"]), float(before["goal_y"])
    side = rng.choice([-1, 1]) * 1.5 / math.hypot(gx, gy)
    return {**before, "goal_x": round(gx - side * gy, 1), "goal_y": round(gy + side * gx, 1)}


def _launch_moved_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    gx, gy, seconds = float(after["goal_x"]), float(after["goal_y"]), float(after["seconds"])

    def text(s: Phrases) -> list[str]:
        return [
            f"the level's {s.w('block')} of static {s.w('crates')}, with goal_zone_1 on its "
            f"top, now stands centred at {s.at(gx, gy)}",
            f"{s.w('change')} the {s.w('ball')}'s launch so that it flies up into goal_zone_1 "
            f"(the {s.w('ball')}'s centre inside the zone's box) within "
            f"{s.count(int(seconds))} {s.w('seconds of simulation')}",
        ]

    return text


def _launch_near_miss(task: Any, spec: Spec) -> str:
    """The launch a little too fast along the ground: the ball passes 0.2 m beyond the zone's
    far side as it comes down through the zone's top, and lands past the pad."""
    call = next(c for c in spec.tool_calls if c["name"] == "set_velocity")["arguments"]
    p = task.parameters
    gx, gy, top = float(p["goal_x"]), float(p["goal_y"]), 0.5 * int(p["high"])
    distance = math.hypot(gx, gy)
    exit_m = 0.5 / max(abs(gx), abs(gy)) * distance  # centre to the square's side, on the line
    vz = float(call["vz"])
    down = (vz + math.sqrt(vz * vz - 2 * G * (top + 0.5 - BALL_R))) / G  # through the zone's top
    scale = (distance + exit_m + 0.2) / (math.hypot(call["vx"], call["vy"]) * down)
    vx, vy = _r(call["vx"] * scale, 2), _r(call["vy"] * scale, 2)
    return f"world.get('ball_1').set_velocity(({vx!r}, {vy!r}, {vz!r}))\n"


# -- ramp_to_goal ---------------------------------------------------------------------------------


def _ramp_under(bx: float, by: float, gx: float, gy: float) -> tuple[float, float, float]:
    """The ramp (x, y, heading) under a ball hanging over (bx, by) that slopes down towards
    (gx, gy): the ball 0.2 m up-slope of the ramp's centre."""
    dx, dy = gx - bx, gy - by
    length = math.hypot(dx, dy)
    heading = math.degrees(math.atan2(dx, -dy))  # the ramp slopes down along (sin h, -cos h)
    return _r(bx + RAMP_UP * dx / length), _r(by + RAMP_UP * dy / length), _r(heading, 1)


def _ramp_said(s: Phrases) -> str:
    return (
        f"one {s.w('ramp')} ({s.dims(0.6, 1.2, 0.4)}; it rises {s.len(0.4)} over "
        f"{s.len(1.2)} towards its front)"
    )


def _hanging_said(s: Phrases, bx: float, by: float, bz: float) -> str:
    return (
        f"the {s.w('ball')} ball_1 {s.w('hangs')} with its centre at {s.at(bx, by, bz)} and "
        f"drops when the simulation starts"
    )


def ramp_to_goal(p: Mapping[str, Any]) -> Spec:
    """A ball hanging at (``ball_x``, ``ball_y``, ``ball_z``), a goal zone on the floor at
    (``goal_x``, ``goal_y``); the agent places one ramp under the ball, sloping down towards
    the goal, so that the ball rolls into the zone within ``seconds`` s."""
    bx, by, bz = float(p["ball_x"]), float(p["ball_y"]), float(p["ball_z"])
    gx, gy, seconds = float(p["goal_x"]), float(p["goal_y"]), float(p["seconds"])
    level = new_level()
    add_object(level, "ball_1", "ball", (bx, by, bz))
    add_object(level, "goal_zone_1", "goal_zone", (gx, gy, 0.25))
    rx, ry, heading = _ramp_under(bx, by, gx, gy)
    calls = [tool_call("spawn", asset="ramp", x=rx, y=ry, heading=heading)]
    constraints = [
        {"kind": "count", "asset": "ramp", "n": 1, "weight": 0.5},
        {"kind": "reaches", "name": "ball_1", "zone": "goal_zone_1", "weight": 2.0},
        _initial(floor_only=True),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            _hanging_said(s, bx, by, bz),
            f"the goal {s.w('zone')} goal_zone_1 ({s.dims(1.0, 1.0, 0.5)}) lies centred at "
            f"{s.at(gx, gy)} on the floor",
            *_ramp_request(s, seconds),
            *physics_rules_said(s, floor_only=True),
        ]

    xs, ys = (bx, gx), (by, gy)
    return Spec(
        "ramp_to_goal",
        "physics",
        level,
        tuple(constraints),
        seconds,
        seconds,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        bounds=(min(xs) - 2, min(ys) - 2, max(xs) + 2, max(ys) + 2),
    )


def _ramp_request(s: Phrases, seconds: float) -> list[str]:
    return [
        f"{s.w('put')} {_ramp_said(s)} so that the {s.w('ball')}, dropping onto it, rolls into "
        f"goal_zone_1 (the {s.w('ball')}'s centre inside the zone's box) within "
        f"{s.count(int(seconds))} {s.w('seconds of simulation')}",
    ]


def _ramp_draw(rng: random.Random) -> dict[str, Any]:
    """The ball over a point within ±1.5 m of the origin (0.1 m steps), its centre 1-1.5 m
    up; the goal 2.5-4 m from it (0.1 m steps) in a direction a multiple of 15°."""
    bx, by = round(rng.uniform(-1.5, 1.5), 1), round(rng.uniform(-1.5, 1.5), 1)
    heading = math.radians(rng.randrange(-180, 180, 15))
    distance = round(rng.uniform(2.5, 4.0), 1)
    return {
        "ball_x": bx,
        "ball_y": by,
        "ball_z": rng.choice([1.0, 1.2, 1.5]),
        "goal_x": _r(bx + distance * math.sin(heading), 2),
        "goal_y": _r(by - distance * math.cos(heading), 2),
        "seconds": 5.0,
    }


def _ramp_goal_moved(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The goal turned 60-120° about the ball (15° steps), as far from it: the ramp left as it
    was rolls the ball the old way."""
    bx, by = float(before["ball_x"]), float(before["ball_y"])
    dx, dy = float(before["goal_x"]) - bx, float(before["goal_y"]) - by
    turn = math.radians(rng.choice([-1, 1]) * rng.randrange(60, 121, 15))
    c, s = math.cos(turn), math.sin(turn)
    return {**before, "goal_x": _r(bx + c * dx - s * dy, 2), "goal_y": _r(by + s * dx + c * dy, 2)}


def _ramp_drop_moved(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The ball hung 1.3-1.6 m from where it was (0.1 m steps), still 2-4.5 m from the goal:
    it now drops clear of the ramp left as it was."""
    gx, gy = float(before["goal_x"]), float(before["goal_y"])
    bx, by = float(before["ball_x"]), float(before["ball_y"])
    for _ in range(100):
        angle, step = rng.uniform(0, 2 * math.pi), rng.uniform(1.3, 1.6)
        x, y = round(bx + step * math.cos(angle), 1), round(by + step * math.sin(angle), 1)
        if math.hypot(x - bx, y - by) >= 1.3 and 2.0 <= math.hypot(gx - x, gy - y) <= 4.5:
            return {**before, "ball_x": x, "ball_y": y}
    raise AssertionError("no place for the ball")  # pragma: no cover (never with these ranges)


def _ramp_moved_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    bx, by, bz = float(after["ball_x"]), float(after["ball_y"]), float(after["ball_z"])
    gx, gy, seconds = float(after["goal_x"]), float(after["goal_y"]), float(after["seconds"])

    def text(s: Phrases) -> list[str]:
        return [
            f"the level has changed: {_hanging_said(s, bx, by, bz)}, and the goal "
            f"{s.w('zone')} goal_zone_1 lies centred at {s.at(gx, gy)} on the floor",
            f"{s.w('move')} and turn the {s.w('ramp')} so that the {s.w('ball')}, dropping "
            f"onto it, rolls into goal_zone_1 (the {s.w('ball')}'s centre inside the zone's "
            f"box) within {s.count(int(seconds))} {s.w('seconds of simulation')}",
        ]

    return text


def _path_miss(start: Any, direction: Any, goal: Any, length: float) -> float:
    """How far a straight path (from ``start`` along the unit ``direction`` for ``length`` m)
    passes from the 1 × 1 m square centred at ``goal`` (0 when it enters it)."""
    closest = math.inf
    for k in range(401):
        t = length * k / 400
        x, y = start[0] + t * direction[0] - goal[0], start[1] + t * direction[1] - goal[1]
        closest = min(closest, math.hypot(max(abs(x) - 0.5, 0), max(abs(y) - 0.5, 0)))
    return closest


def _turned_past(
    bx: float, by: float, gx: float, gy: float, heading: float, miss: float = 0.2
) -> float:
    """The smallest turn (a multiple of 5°) of a ramp at ``heading`` under (bx, by) after which
    a ball rolling down it passes ``miss`` m or more beside the goal square at (gx, gy)."""
    length = math.hypot(gx - bx, gy - by) + 1.0
    for turn in range(5, 90, 5):
        h = math.radians(heading + turn)
        if _path_miss((bx, by), (math.sin(h), -math.cos(h)), (gx, gy), length) >= miss:
            return float(turn)
    return 90.0


def _ramp_near_miss(task: Any, spec: Spec) -> str:
    """The ramp turned a few degrees too far (a multiple of 5°): the ball rolls down it and
    passes 0.2 m or more beside the goal zone."""
    p = task.parameters
    call = spec.tool_calls[-1]["arguments"]
    bx, by, gx, gy = (float(p[k]) for k in ("ball_x", "ball_y", "goal_x", "goal_y"))
    turn = _turned_past(bx, by, gx, gy, float(call["heading"]))
    turned = tool_call("spawn", **{**call, "heading": call["heading"] + turn})
    return call_script([*spec.tool_calls[:-1], turned])


# -- domino_run -----------------------------------------------------------------------------------


def _run_ends(p: Mapping[str, Any]) -> tuple[float, float]:
    y0 = float(p["chain_y"])
    return y0, _r(y0 + (int(p["count"]) - 1) * float(p["spacing"]))


def domino_run(p: Mapping[str, Any]) -> Spec:
    """A ball hanging at (``x``, ``ball_y``, ``ball_z``); the agent places a ramp under it that
    rolls it along +Y, and ``count`` dominoes ``spacing`` m apart from (``x``, ``chain_y``)
    along +Y, so that the ball knocks over the first and each the next, all within
    ``seconds`` s."""
    x, by, bz, n = float(p["x"]), float(p["ball_y"]), float(p["ball_z"]), int(p["count"])
    spacing, seconds = float(p["spacing"]), float(p["seconds"])
    y0, y1 = _run_ends(p)
    level = new_level()
    add_object(level, "ball_1", "ball", (x, by, bz))
    calls = [
        tool_call("spawn", asset="ramp", x=x, y=_r(by - RUN_DOWN), heading=180.0),
        tool_call("spawn_row", asset="domino", count=n, x=x, y=y0, dx=0.0, dy=spacing),
    ]
    constraints = [
        {"kind": "count", "asset": "ramp", "n": 1, "weight": 0.5},
        {"kind": "count", "asset": "domino", "n": n, "weight": 1.0},
        {
            "kind": "aligned",
            "asset": "domino",
            "heading": 0.0,
            "period": 180.0,
            "what": "falling along the chain",
            "weight": 1.0,
        },
        {
            "kind": "chain",
            "asset": "domino",
            "x": x,
            "y0": y0,
            "y1": y1,
            "by": "ball_1",
            "weight": 2.0,
        },
        {"kind": "all_fallen", "asset": "domino", "n": n, "weight": 2.0},
        _initial(floor_only=True),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            _hanging_said(s, x, by, bz),
            *_run_request(s, n, x, y0, y1, seconds),
            *physics_rules_said(s, floor_only=True),
        ]

    return Spec(
        "domino_run",
        "physics",
        level,
        tuple(constraints),
        seconds,
        seconds,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        bounds=(x - 2, by - 1.5, x + 2, y1 + 1.5),
    )


def _run_request(
    s: Phrases, n: int, x: float, y0: float, y1: float, seconds: float, edit: bool = False
) -> list[str]:
    ramp = f"the {s.w('ramp')}" if edit else _ramp_said(s)
    return [
        f"{s.w('stand')} {s.count(n)} {s.w('dominoes')} ({s.dims(0.2, 0.05, 0.4)}; at heading "
        f"0 they fall along ±Y) in a chain from {s.at(x, y0)} to {s.at(x, y1)}, each turned to "
        f"fall along the chain",
        f"{s.w('put')} {ramp} so that the {s.w('ball')}, dropping onto it, rolls into the first "
        f"domino and knocks it over, each domino knocks over the next, in order, and every "
        f"domino falls within {s.count(int(seconds))} {s.w('seconds of simulation')}",
    ]


def _run_draw(rng: random.Random) -> dict[str, Any]:
    """The ball over (x, ball_y), x within ±2 m and ball_y -2.5 to -1.5 m (0.1 m steps), its
    centre 1-1.5 m up; 5-10 dominoes 0.25-0.3 m apart from 0.3-0.8 m past the ramp's low end
    (the reference's ramp, at heading 180 under the ball, ends 0.3 m along +Y from it)."""
    by = round(rng.uniform(-2.5, -1.5), 1)
    return {
        "x": round(rng.uniform(-2, 2), 1),
        "ball_y": by,
        "ball_z": rng.choice([1.0, 1.2, 1.5]),
        "count": rng.randint(5, 10),
        "spacing": rng.choice([0.25, 0.28, 0.3]),
        "chain_y": round(by + 0.6 - RUN_DOWN + rng.uniform(0.3, 0.8), 1),
        "seconds": 5.0,
    }


def _run_longer(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Two to four more dominoes, as far apart: the chain left as it was has too few."""
    return {**before, "count": int(before["count"]) + rng.randint(2, 4)}


def _run_longer_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    y0, y1 = _run_ends(after)
    n, x, seconds = int(after["count"]), float(after["x"]), float(after["seconds"])

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('extend')} the chain: {_run_request(s, n, x, y0, y1, seconds, True)[0]}",
            f"keep the {s.w('ramp')}: the {s.w('ball')}, dropping onto it, still rolls into the "
            f"first domino and knocks it over, each domino knocks over the next, in order, and "
            f"every domino falls within {s.count(int(seconds))} {s.w('seconds of simulation')}",
        ]

    return text


def _run_shift(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The hanging ball, and with it the chain, 0.6-1 m along X: the ramp left as it was no
    longer catches the ball, and the chain is off its marks."""
    step = rng.choice([-1.0, -0.8, -0.6, 0.6, 0.8, 1.0])
    x = float(before["x"]) + step
    if abs(x) > 2.5:
        x = float(before["x"]) - step
    return {**before, "x": round(x, 1)}


def _run_shift_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    y0, y1 = _run_ends(after)
    x, by, bz = float(after["x"]), float(after["ball_y"]), float(after["ball_z"])
    n, seconds = int(after["count"]), float(after["seconds"])

    def text(s: Phrases) -> list[str]:
        request = _run_request(s, n, x, y0, y1, seconds, True)
        return [
            f"the level has changed: {_hanging_said(s, x, by, bz)}",
            f"{s.w('move')} the {s.w('ramp')} and the {s.w('dominoes')} to match: {request[0]}",
            request[1],
        ]

    return text


def _run_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the last domino set 5 cm further off the chain's line than the
    verifier allows."""
    return (
        f"{task.reference.rstrip()}\n"
        "_last = max((o for o in world.objects.values() if o.asset == 'domino'),\n"
        "            key=lambda o: o.pos[1])\n"
        f"x, y, z = _last.pos\n_last.set_pos((x + {CHAIN_M + 0.05}, y, z))\n"
    )


# -- knock_off ------------------------------------------------------------------------------------


def _knock_layout(p: Mapping[str, Any]) -> dict[str, Any]:
    """Where things are: the table's centre, the domino's (at ``gap`` m from the chosen edge,
    ``along`` m from the edge's middle), the ball's, the domino's heading (it falls across the
    edge), the axis it must pass and the value it must pass."""
    tx, ty, gap, along = (
        float(p["table_x"]),
        float(p["table_y"]),
        float(p["gap"]),
        float(p["along"]),
    )
    if p["edge"] == "east":
        domino, heading, axis = (_r(tx + TABLE_HALF[0] - gap), _r(ty + along)), 90.0, 0
        edge = tx + TABLE_HALF[0]
    else:
        domino, heading, axis = (_r(tx + along), _r(ty + TABLE_HALF[1] - gap)), 0.0, 1
        edge = ty + TABLE_HALF[1]
    ball = (_r(tx + float(p["ball_dx"])), _r(ty + float(p["ball_dy"])))
    return {
        "table": (tx, ty),
        "domino": domino,
        "heading": heading,
        "ball": ball,
        "axis": axis,
        "edge": _r(edge),
        "value": _r(edge + OFF_TABLE_M),
    }


def _knock_velocity(layout: Mapping[str, Any], speed: float, miss: float = 0.0) -> tuple:
    """The ball's velocity (vx, vy) at ``speed`` m/s aimed at the domino's centre, or passing
    ``miss`` m beside it."""
    (bx, by), (dx, dy) = layout["ball"], layout["domino"]
    ux, uy = dx - bx, dy - by
    length = math.hypot(ux, uy)
    ux, uy = ux / length, uy / length
    if miss:  # aim at a point beside the domino, across the path
        tx, ty = dx - miss * uy - bx, dy + miss * ux - by
        length = math.hypot(tx, ty)
        ux, uy = tx / length, ty / length
    return _r(speed * ux, 2), _r(speed * uy, 2)


def knock_off(p: Mapping[str, Any]) -> Spec:
    """A static table centred at (``table_x``, ``table_y``), its long side along X; a domino
    standing on it ``gap`` m in from its ``edge`` ("east" or "north"), turned to fall across
    that edge; the ball at rest on it. The agent sets the ball's velocity so that the domino
    ends more than 0.3 m past the edge within ``seconds`` s."""
    layout = _knock_layout(p)
    (tx, ty), (dx, dy), (bx, by) = layout["table"], layout["domino"], layout["ball"]
    seconds = float(p["seconds"])
    level = new_level()
    add_object(level, "table_1", "table", (tx, ty, TABLE_TOP / 2), body="static")
    add_object(level, "domino_1", "domino", (dx, dy, TABLE_TOP + 0.2), layout["heading"])
    add_object(level, "ball_1", "ball", (bx, by, TABLE_TOP + BALL_R))
    vx, vy = _knock_velocity(layout, float(p["speed"]))
    calls = [tool_call("set_velocity", name="ball_1", vx=vx, vy=vy)]
    constraints = [
        {
            "kind": "beyond",
            "name": "domino_1",
            "axis": layout["axis"],
            "value": layout["value"],
            "weight": 1.0,
        },
        _initial(),
    ]
    fall = "±X" if layout["axis"] == 0 else "±Y"

    def text(s: Phrases) -> list[str]:
        return [
            f"a static {s.w('table')} ({s.dims(1.6, 0.9, TABLE_TOP)}) stands centred at "
            f"{s.at(tx, ty)}, lengthwise along X",
            f"the {s.w('domino')} domino_1 stands on the {s.w('table')}'s top with its centre over "
            f"{s.at(dx, dy)}, turned to fall along {fall}, {s.len(float(p['gap']))} in from the "
            f"{s.w(p['edge'])} edge, and the {s.w('ball')} ball_1 rests on the top over "
            f"{s.at(bx, by)}",
            *_knock_request(s, layout, seconds),
            *physics_rules_said(s),
        ]

    return Spec(
        "knock_off",
        "physics",
        level,
        tuple(constraints),
        seconds,
        seconds,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        adjustable={"ball_1": ("velocity",)},
        bounds=(tx - 2.5, ty - 2.5, tx + 2.5, ty + 2.5),
    )


def _knock_request(
    s: Phrases, layout: Mapping[str, Any], seconds: float, edit: bool = False
) -> list[str]:
    ask = (
        f"{s.w('change')} the {s.w('ball')}'s velocity"
        if edit
        else f"{s.w('set')} the {s.w('ball')}'s velocity"
    )
    axis = "xy"[layout["axis"]]
    return [
        f"{ask} (set_velocity, or world.get('ball_1').set_velocity(...)) so that it knocks "
        f"domino_1 off the {s.w('table')}: after {s.count(int(seconds))} "
        f"{s.w('seconds of simulation')} the {s.w('domino')}'s centre must be beyond {axis} = "
        f"{s.len(layout['value'])}, clear of the {s.w('table')}",
    ]


def _knock_draw(rng: random.Random) -> dict[str, Any]:
    """The table within ±1.5 m of the origin (0.1 m steps); the domino 0.1-0.2 m in from its
    east or north edge, 0.1-0.25 m (east) or up to 0.3 m (north) from the edge's middle; the
    ball on the top's far side (east: 0.2-0.6 m west of the table's centre, within 0.25 m of
    it across; north: 0.25 m south of it, within 0.25 m of the domino's line across the edge);
    2-3 m/s. Offsets in m from the table's centre, to 0.01 m."""
    edge = rng.choice(["east", "north"])
    if edge == "east":
        along = round(rng.choice([-1, 1]) * rng.uniform(0.1, 0.25), 2)
        ball = {"ball_dx": round(rng.uniform(-0.6, -0.2), 2)}
        ball["ball_dy"] = round(rng.uniform(-0.25, 0.25), 2)
    else:
        along = round(rng.uniform(-0.3, 0.3), 2)
        ball_dx = min(0.55, max(-0.55, along + rng.uniform(-0.25, 0.25)))
        ball = {"ball_dx": round(ball_dx, 2), "ball_dy": -0.25}
    return {
        "table_x": round(rng.uniform(-1.5, 1.5), 1),
        "table_y": round(rng.uniform(-1.5, 1.5), 1),
        "edge": edge,
        "gap": rng.choice([0.1, 0.15, 0.2]),
        "along": along,
        **ball,
        "speed": rng.choice([2.0, 2.5, 3.0]),
        "seconds": 3.0,
    }


def _knock_slide(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The domino 0.35-0.5 m further along its edge (east: within 0.33 m of the edge's middle;
    north: within 0.65 m of it and 0.55 m of the ball's line across the edge): the old aim
    passes beside it."""
    along, east = float(before["along"]), before["edge"] == "east"
    ball = float(before["ball_dx"])
    options = [
        round(along + d * step, 2)
        for step in (0.35, 0.4, 0.45, 0.5)
        for d in (-1, 1)
        if abs(along + d * step) <= (0.33 if east else 0.65)
        and (east or abs(along + d * step - ball) <= 0.55)
    ]
    return {**before, "along": rng.choice(options)}


def _knock_other_edge(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The domino moved to the other edge (east or north), the ball moved where it can reach
    it: the old aim misses it."""
    after = dict(before)
    if before["edge"] == "east":
        along = round(rng.uniform(-0.3, 0.3), 2)
        ball_dx = round(min(0.55, max(-0.55, along + rng.uniform(-0.25, 0.25))), 2)
        after.update(edge="north", along=along, ball_dx=ball_dx, ball_dy=-0.25)
    else:
        along = round(rng.choice([-1, 1]) * rng.uniform(0.1, 0.25), 2)
        after.update(edge="east", along=along, ball_dx=round(rng.uniform(-0.6, -0.2), 2))
    return after


def _knock_moved_text(before: Mapping[str, Any], after: Mapping[str, Any]) -> Text:
    layout = _knock_layout(after)
    dx, dy = layout["domino"]
    seconds = float(after["seconds"])
    fall = "±X" if layout["axis"] == 0 else "±Y"
    ball_moved = (after["ball_dx"], after["ball_dy"]) != (before["ball_dx"], before["ball_dy"])

    def text(s: Phrases) -> list[str]:
        out = [
            f"the level has changed: the {s.w('domino')} domino_1 now stands on the "
            f"{s.w('table')}'s top with its centre over {s.at(dx, dy)}, turned to fall along "
            f"{fall}, {s.len(float(after['gap']))} in from the {s.w(after['edge'])} edge",
        ]
        if ball_moved:
            bx, by = layout["ball"]
            out.append(f"the {s.w('ball')} ball_1 now rests on the top over {s.at(bx, by)}")
        return [*out, *_knock_request(s, layout, seconds, edit=True)]

    return text


def _knock_near_miss(task: Any, spec: Spec) -> str:
    """The ball aimed a little wide: its path passes 5 cm clear of the domino's side."""
    layout = _knock_layout(task.parameters)
    vx, vy = _knock_velocity(layout, float(task.parameters["speed"]), miss=0.1 + BALL_R + 0.05)
    return f"world.get('ball_1').set_velocity(({vx!r}, {vy!r}, 0.0))\n"


# -- words and relations --------------------------------------------------------------------------

WORDS = {
    "build": ("build", "put up", "assemble"),
    "bridge": ("bridge", "footbridge", "crossing"),
    "across": ("across", "spanning", "bridging"),
    "seconds of simulation": ("seconds", "simulated seconds", "seconds of play"),
    "block": ("block", "pillar", "plinth"),
    "set": ("set", "choose", "pick"),
    "must (they)": ("must", "have to", "are to"),
    "change": ("change", "adjust", "rework"),
    "hangs": ("hangs", "is held", "is suspended"),
    "move": ("move", "shift", "relocate"),
    "stand": ("stand", "set up", "line up"),
    "dominoes": ("dominoes", "domino tiles", "domino pieces"),
    "domino": ("domino", "domino tile", "domino piece"),
    "extend": ("extend", "lengthen", "grow"),
    "east": ("east", "+X", "eastern"),
    "north": ("north", "+Y", "northern"),
}

_N = r"-?\d+(?:\.\d+)?"
_AT = rf"\(({_N}), ({_N})\) m"  # a point, as the spec style says it
_AT3 = rf"\(({_N}), ({_N}), ({_N})\) m"
_RAMP = r"one ramp \([^)]*; it rises [\d.]+ m over [\d.]+ m towards its front\)"


def _near(asset: str, m: Any, at: int) -> dict[str, Any]:
    return {"kind": "near", "asset": asset, "x": float(m[at]), "y": float(m[at + 1])}


RELATIONS = (
    # -- plank_bridge
    Phrase(
        rf"(\d+) crates \([\d.]+ m cubes\) on the floor, one centred at {_AT} and one at {_AT}",
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "on", "asset": "crate", "other": "floor"},
            _near("crate", m, 2),
            _near("crate", m, 4),
        ],
    ),
    Phrase(
        rf"one plank \([^)]*\) across the two crates, centred at {_AT}, lengthwise along ([XY]), "
        r"resting on both crates",
        lambda m: [
            {"kind": "count", "asset": "plank", "n": 1},
            _near("plank", m, 1),
            {
                "kind": "aligned",
                "asset": "plank",
                "heading": 0.0 if m[3] == "X" else 90.0,
                "period": 180.0,
            },
            {"kind": "on", "asset": "plank", "other": "crate"},
        ],
    ),
    Phrase(
        r"everything must still rest where it was placed \(each thing within ([\d.]+) m of it\), "
        r"the plank on both crates",
        lambda m: [
            {"kind": "resting"},
            {"kind": "on", "asset": "plank", "other": "crate"},
        ],
    ),
    Phrase(
        rf"[Mm]ove the two crates so that their centres are {_N} m apart, one at {_AT} and one "
        rf"at {_AT}, and lay the plank across them again, still centred at {_AT} and resting on "
        r"both",
        lambda m: [
            _near("crate", m, 1),
            _near("crate", m, 3),
            _near("plank", m, 5),
            {"kind": "on", "asset": "plank", "other": "crate"},
        ],
    ),
    Phrase(
        rf"[Mm]ove the whole bridge, crates and plank, so that the plank is centred at {_AT} and "
        rf"the crates at {_AT} and {_AT}, the plank still resting on both",
        lambda m: [
            _near("plank", m, 1),
            _near("crate", m, 3),
            _near("crate", m, 5),
            {"kind": "on", "asset": "plank", "other": "crate"},
        ],
    ),
    # -- launch_to_goal
    Phrase(
        rf"[Aa] block of static crates \([^)]*\) stands centred at {_AT}, the goal zone "
        r"goal_zone_1 \([^)]*\) on its top",
        note="the level's pad and its goal zone",
    ),
    Phrase(
        rf"[Tt]he level's block of static crates, with goal_zone_1 on its top, now stands "
        rf"centred at {_AT}",
        note="the level's pad and its goal zone, moved",
    ),
    Phrase(
        r"so that it flies up into (goal_zone_\d+) \(the ball's centre inside the zone's box\) "
        r"within \d+ seconds",
        lambda m: [{"kind": "reaches", "name": "ball_1", "zone": m[1]}],
    ),
    # -- ramp_to_goal and domino_run
    Phrase(
        rf"[Tt]he ball ball_1 hangs with its centre at {_AT3} and drops when the simulation starts",
        note="the level's ball",
    ),
    Phrase(
        rf"[Tt]he goal zone (goal_zone_\d+)(?: \([^)]*\))? lies centred at {_AT} on the floor",
        note="the level's goal zone",
    ),
    Phrase(_RAMP, lambda m: [{"kind": "count", "asset": "ramp", "n": 1}]),
    Phrase(
        r"so that the ball, dropping onto it, rolls into (goal_zone_\d+) \(the ball's centre "
        r"inside the zone's box\) within \d+ seconds",
        lambda m: [{"kind": "reaches", "name": "ball_1", "zone": m[1]}],
    ),
    Phrase(
        r"[Mm]ove and turn the ramp so that",
        lambda m: [{"kind": "count", "asset": "ramp", "n": 1}],
    ),
    Phrase(
        rf"(?:[Ee]xtend the chain: )?[Ss]tand (\d+) dominoes \([^;]*; at heading 0 they fall "
        rf"along ±Y\) in a chain from {_AT} to {_AT}, each turned to fall along the chain",
        lambda m: [
            {"kind": "count", "asset": "domino", "n": int(m[1])},
            {
                "kind": "chain",
                "asset": "domino",
                "x": float(m[2]),
                "y0": float(m[3]),
                "y1": float(m[5]),
            },
            {"kind": "aligned", "asset": "domino", "heading": 0.0, "period": 180.0},
        ],
    ),
    Phrase(
        r"the ball, dropping onto it, (?:still )?rolls into the first domino and knocks it over, "
        r"each domino knocks over the next, in order, and every domino falls within \d+ seconds",
        lambda m: [
            {"kind": "chain", "by": "ball_1"},
            {"kind": "all_fallen", "asset": "domino"},
        ],
    ),
    Phrase(
        r"[Mm]ove the ramp and the dominoes to match",
        lambda m: [
            {"kind": "count", "asset": "ramp", "n": 1},
            {"kind": "chain", "asset": "domino"},
        ],
    ),
    # -- knock_off
    Phrase(
        rf"[Aa] static table \([^)]*\) stands centred at {_AT}, lengthwise along X",
        note="the level's table",
    ),
    Phrase(
        rf"[Tt]he domino domino_1 (?:now )?stands on the table's top with its centre over "
        rf"{_AT}, turned to fall along ±[XY], [\d.]+ m in from the (?:east|north) edge",
        note="the level's domino",
    ),
    Phrase(
        rf"[Tt]he ball ball_1 (?:now )?rests on the top over {_AT}",
        note="the level's ball",
    ),
    Phrase(
        rf"so that it knocks (\w+) off the table: after \d+ seconds the domino's centre must be "
        rf"beyond ([xy]) = ({_N}) m, clear of the table",
        lambda m: [
            {
                "kind": "beyond",
                "name": m[1],
                "axis": "xy".index(m[2]),
                "value": float(m[3]),
            }
        ],
    ),
)

FAMILY_GROUP = (
    Template(
        "plank_bridge",
        "physics",
        plank_bridge,
        _bridge_draw,
        2,
        "a plank laid across two crates that stays on both",
        styled=True,
        near_miss=_bridge_near_miss,
        edits=(
            Edit("spread", _bridge_spread, _bridge_spread_text),
            Edit("shift", _bridge_shift, _bridge_shift_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "launch_to_goal",
        "physics",
        launch_to_goal,
        _launch_draw,
        2,
        "a ball's launch that flies it up into a goal on a block",
        styled=True,
        near_miss=_launch_near_miss,
        edits=(
            Edit("further", _launch_further, _launch_moved_text),
            Edit("aside", _launch_aside, _launch_moved_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "ramp_to_goal",
        "physics",
        ramp_to_goal,
        _ramp_draw,
        2,
        "a ramp that rolls a dropped ball into a goal",
        styled=True,
        near_miss=_ramp_near_miss,
        edits=(
            Edit("goal_moved", _ramp_goal_moved, _ramp_moved_text),
            Edit("drop_moved", _ramp_drop_moved, _ramp_moved_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "domino_run",
        "physics",
        domino_run,
        _run_draw,
        3,
        "a ramp and a domino chain that a dropped ball sets off",
        styled=True,
        near_miss=_run_near_miss,
        edits=(
            Edit("longer", _run_longer, _run_longer_text),
            Edit("shift", _run_shift, _run_shift_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "knock_off",
        "physics",
        knock_off,
        _knock_draw,
        1,
        "a ball's push that knocks a domino off a table",
        styled=True,
        near_miss=_knock_near_miss,
        edits=(
            Edit("slide", _knock_slide, _knock_moved_text),
            Edit("other_edge", _knock_other_edge, _knock_moved_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
)

__all__ = ["FAMILY_GROUP", "RELATIONS", "WORDS"]
