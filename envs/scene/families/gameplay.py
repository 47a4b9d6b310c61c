"""Gameplay: five game-logic families, each a behaviour a level designer scripts, said in any style
of the phrase bank, with edit tasks that start from the logic of another draw.

- ``pressure_plate``: a door open exactly while the player stands on a plate (rule ``plate_door``);
- ``timed_door``: a door that opens when the player first enters a zone and closes again a whole
  number of seconds later (rule ``timed_door``);
- ``sequence_lock``: two zones that open a door only when entered in order, A then B
  (rule ``sequence_door``);
- ``coin_gate``: coins that vanish and count when touched, and a door that opens once the counter
  reaches a number (rules ``coins`` and ``coin_gate``);
- ``lift``: a platform that rises straight up at a speed to a height when the player first enters
  a call zone (rule ``lift``).

Each task's held-out player paths are drawn from its ``trajectory_seed``: some do what the
behaviour waits for (and the first of them is on the cheap tier), some walk past, just miss, do
it in the wrong order or stop one short (the second is one of those). The verifier plays them on a
trusted copy of the level and checks every frame (``toolgym.envs.scene.verifier``).

Conventions as in the runtime: metres, seconds, degrees, Z up; positions are bounding-box centres;
the player is 0.5 × 0.5 × 1.8 m, its centre 0.9 m up, and touches a zone while its box overlaps
the zone's; a door (1 × 0.1 × 2 m, its centre 1 m up) is open when ``world.open`` has slid it up
by its height. Ranges (m unless said): zones and plates 1-2 m squares within 2 m of the origin;
doors at y 3-5; holds of 2-4 s; coins 4-6 in a row, 0.8-1.2 m apart, 2 to all but one needed;
lifts rising 0.5 or 1 m/s to 1-2 m.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from toolgym.envs.scene.families.classic import door_paths
from toolgym.envs.scene.families.model import (
    Edit,
    Spec,
    Template,
    add_object,
    conventions_said,
    new_level,
    said,
    straight,
    tool_call,
    walk,
)
from toolgym.envs.scene.families.phrases import Phrases
from toolgym.envs.scene.relations import Phrase

PLAYER_Z = 0.9  # the player's centre height (m)
REACH = 0.25  # half the player's width: its box overlaps a zone this far beyond the zone's edge
LIFT_Z = 0.1  # a lift's centre at rest: the 0.2 m platform on the floor
AXES = ((1, 0), (-1, 0), (0, 1), (0, -1))


def _box(x: float, y: float, size: float) -> list[float]:
    """A zone ``[x, y, z, size_x, size_y, size_z]``: a ``size`` square as tall as the player."""
    return [x, y, PLAYER_Z, size, size, 2 * PLAYER_Z]


def _passages(dx: float, dy: float) -> list[list[list[float]]]:
    """Held out: the player's ways through a door's doorway (its middle and near each jamb),
    along which an open door must leave the player's box clear (as the ``door`` family's)."""
    return [[[dx + o, dy - 1.0, PLAYER_Z], [dx + o, dy + 1.0, PLAYER_Z]] for o in (-0.2, 0.0, 0.2)]


def _trigger(name: str, x: float, y: float, sx: float, sy: float, *callbacks: str) -> str:
    """A ``world.trigger`` line for an ``sx`` × ``sy`` zone at (x, y) as tall as the player,
    with callbacks (``"on_enter=..."``)."""
    hooks = "".join(f", {c}" for c in callbacks)
    return (
        f"world.trigger({name!r}, pos=({x!r}, {y!r}, {PLAYER_Z!r}), "
        f"size=({sx!r}, {sy!r}, {2 * PLAYER_Z!r}){hooks})\n"
    )


def _cleared(task: Any, script: str) -> str:
    """``script`` as an edit task's near miss sends it: after clearing the start's logic."""
    return ("tools.clear(world)\n" if task.start else "") + script


def _rng(p: Mapping[str, Any]) -> random.Random:
    return random.Random(int(p.get("trajectory_seed", 0)))


def _bounds(*points: Sequence[float], margin: float = 3.0) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - margin, min(ys) - margin, max(xs) + margin, max(ys) + margin


def _away(rng: random.Random, x: float, y: float, far: float) -> tuple[float, float]:
    """A point on a 0.1 m grid, x from -2 to 2 m and y from -2 to 1.5 m (the draws' ranges), at
    least ``far`` from (x, y) along some axis (a zone moved so far that its old trigger cannot
    fire for it); where no point of those ranges is that far, the ranges grow by 1 m a side."""
    grow = 0
    while True:
        xs = [k / 10 for k in range(-20 - 10 * grow, 21 + 10 * grow)]
        ys = [k / 10 for k in range(-20 - 10 * grow, 16 + 10 * grow)]
        far_x = [v for v in xs if abs(v - x) >= far - 1e-9]
        far_y = [v for v in ys if abs(v - y) >= far - 1e-9]
        if far_x or far_y:
            # Which axis carries the distance, then the point: uniform over the qualifying grid.
            choices = [(v, w) for v in far_x for w in ys] + [
                (v, w) for v in xs for w in far_y if abs(v - x) < far - 1e-9
            ]
            return choices[rng.randrange(len(choices))]
        grow += 1


# -- the sentences every family says --------------------------------------------------------------


def _player(s: Phrases) -> str:
    return f"the {s.w('player')} is the object named 'player'"


def _demo(s: Phrases, start: Sequence[float], end: Sequence[float]) -> str:
    """How to try the logic: the prompt's one path (the verifier plays its own)."""
    return (
        f"{s.w('try it')} with world.player_path (waypoints {s.len(PLAYER_Z)} up) from "
        f"{s.at(*start)} to {s.at(*end)} and world.run; the {s.w('verifier')} plays its own "
        f"paths on {s.w('a fresh copy')} of the level"
    )


def _door_at(s: Phrases, dx: float, dy: float, door: str = "door_1") -> str:
    return f"the {s.w('door')} {door} {s.w('is at')} {s.at(dx, dy)}"


def _square(s: Phrases, size: float, x: float, y: float, anchor: tuple[str, Any]) -> str:
    """ "the 1 × 1 m square centred at (x, y) m" (relative styles: from ``anchor``)."""
    return f"the {s.dims(size, size)} square centred {s.place(x, y, anchor=anchor)}"


# -- pressure_plate -------------------------------------------------------------------------------


def _plate_code(x: float, y: float, sx: float, sy: float) -> str:
    return (
        "def step_on(world, trigger, other):\n"
        "    if other == 'player':\n"
        "        world.open('door_1')\n\n"
        "def step_off(world, trigger, other):\n"
        "    if other == 'player':\n"
        "        world.close('door_1')\n\n"
        + _trigger("zone_1", x, y, sx, sy, "on_enter=step_on", "on_exit=step_off")
    )


def pressure_plate(p: Mapping[str, Any]) -> Spec:
    """A door open exactly while the player stands on a ``plate_size`` m plate (one floor tile,
    or four) at (``plate_x``, ``plate_y``); the door at (``door_x``, ``door_y``)."""
    px, py, size = float(p["plate_x"]), float(p["plate_y"]), float(p["plate_size"])
    dx, dy = float(p["door_x"]), float(p["door_y"])
    level = new_level()
    add_object(level, "door_1", "door", (dx, dy, 1.0))
    tiles = (
        [(px, py)] if size == 1.0 else [(px + a, py + b) for a in (-0.5, 0.5) for b in (-0.5, 0.5)]
    )
    for k, (x, y) in enumerate(tiles):
        add_object(level, f"floor_tile_{k + 1}", "floor_tile", (x, y, 0.025))
    zone = _box(px, py, size)
    calls = [
        tool_call("add_trigger", name="zone_1", x=px, y=py, z=PLAYER_Z, size_x=size, size_y=size,
                  size_z=2 * PLAYER_Z),
        tool_call("on_trigger", trigger="zone_1", action="open", target="door_1", event="enter",
                  only="player"),
        tool_call("on_trigger", trigger="zone_1", action="close", target="door_1", event="exit",
                  only="player"),
    ]  # fmt: skip
    constraints = [
        {"kind": "plate_door", "door": "door_1", "zone": zone, "passages": _passages(dx, dy),
         "weight": 1.0},
    ]  # fmt: skip
    demo = ((px - 4, py), (px + 4, py))
    door = ("door_1", (dx, dy))

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('write')} the {s.w('game logic')} of a {s.w('pressure plate')} and its "
            f"{s.w('door')}",
            f"{_door_at(s, dx, dy)}, and the {s.w('pressure plate')}, {s.dims(size, size)}, "
            f"{s.w('lies flat')} on the floor centred {s.place(px, py, anchor=door)}",
            f"the {s.w('door')} {s.w('must')} be open exactly while the {s.w('player')} "
            f"{s.w('stands on')} the {s.w('pressure plate')} (their box overlapping its "
            f"footprint): open (world.open('door_1')) {s.w('within a tenth')} after stepping on, "
            f"and closed again (world.close('door_1')) {s.w('within a tenth')} after stepping off",
            f"a {s.w('player')} who never steps on the {s.w('pressure plate')} {s.w('must')} find "
            f"the {s.w('door')} closed at {s.w('every moment')}",
            _player(s),
            _demo(s, *demo),
            conventions_said(s),
        ]

    rng = _rng(p)
    paths = door_paths(rng, px, py, size)
    paths.append(_there_and_back(rng, px, py, size))
    return Spec(
        "pressure_plate",
        "logic",
        level,
        tuple(constraints),
        9.0,
        9.0,
        said(p, text, WORDS),
        _plate_code(px, py, size, size),
        tuple(calls),
        trajectories=tuple(paths),
        bounds=_bounds((px, py), (dx, dy)),
    )


def _there_and_back(rng: random.Random, x: float, y: float, size: float) -> dict:
    """A path across the plate along X or Y, a pause beyond it, and back across it: two steps on
    and two off."""
    ux, uy = rng.choice(AXES)
    out = size / 2 + REACH + rng.uniform(1.0, 1.5)
    side = rng.uniform(-size / 4, size / 4)
    a = (x - ux * out - uy * side, y - uy * out + ux * side)
    b = (x + ux * out - uy * side, y + uy * out + ux * side)
    return straight(rng, a, (a[0] + uy * 0.3, a[1] - ux * 0.3), 1.5, 2.5, waits=[(b, 0.5)])


def _plate_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the trigger reaching 0.55 m too far on the side the 2nd path passes
    (0.3-0.5 m outside the plate's reach): the door opens for a player who never stepped on."""
    (c,) = spec.constraints
    x, y, _, size = c["zone"][:4]
    mid = [sum(w[k] for w in spec.trajectories[1]["path"]) / 2 for k in (0, 1)]
    k = 0 if abs(mid[0] - x) > abs(mid[1] - y) else 1
    grow = [0.0, 0.0]
    grow[k] = 0.55 * math.copysign(1.0, mid[k] - (x, y)[k])
    code = _plate_code(x + grow[0] / 2, y + grow[1] / 2, size + abs(grow[0]), size + abs(grow[1]))
    return _cleared(task, code)


def _plate_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "plate_x": round(rng.uniform(-2, 2), 1),
        "plate_y": round(rng.uniform(-2, 1.5), 1),
        "plate_size": rng.choice([1.0, 2.0]),
        "door_x": round(rng.uniform(-3, 3), 1),
        "door_y": round(rng.uniform(3.5, 4.5), 1),
        "trajectory_seed": rng.randrange(10**6),
    }


def _plate_moved(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The plate elsewhere, its new reach clear of the old trigger's (at least its size and a
    metre away along some axis): the start's trigger never fires for it."""
    size = float(before["plate_size"])
    x, y = _away(rng, float(before["plate_x"]), float(before["plate_y"]), size + 1.0)
    return {**before, "plate_x": x, "plate_y": y}


def _plate_moved_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    x, y, size = float(after["plate_x"]), float(after["plate_y"]), float(after["plate_size"])
    door = ("door_1", (float(after["door_x"]), float(after["door_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('pressure plate')} {s.w('has been moved')}: it now {s.w('lies flat')} on "
            f"the floor centred {s.place(x, y, anchor=door)} ({s.dims(size, size)}), and the "
            f"{s.w('door')} {s.w('must')} still be open exactly while the {s.w('player')} "
            f"{s.w('stands on')} it, {s.w('as before')}",
        ]

    return text


def _plate_resized(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A 1 m plate made 2 m (four tiles), or a 2 m one 1 m: the start's trigger opens the door
    half a metre late, or early."""
    return {**before, "plate_size": 3.0 - float(before["plate_size"])}


def _plate_resized_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    x, y, size = float(after["plate_x"]), float(after["plate_y"]), float(after["plate_size"])
    door = ("door_1", (float(after["door_x"]), float(after["door_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('pressure plate')} centred {s.place(x, y, anchor=door)} is now "
            f"{s.dims(size, size)}, and the {s.w('door')} {s.w('must')} be open exactly while "
            f"the {s.w('player')} {s.w('stands on')} any part of it, {s.w('as before')}",
        ]

    return text


# -- timed_door -----------------------------------------------------------------------------------


def _timed_code(x: float, y: float, size: float, hold: float) -> str:
    return (
        f"HOLD = {hold!r}  # seconds the door stays open\n"
        "opened = []\n\n"
        "def open_for_a_while(world, trigger, other):\n"
        "    if other == 'player' and not opened:\n"
        "        opened.append(world.time)\n"
        "        world.open('door_1')\n"
        "        world.after(HOLD, lambda w: w.close('door_1'))\n\n"
        + _trigger("zone_1", x, y, size, size, "on_enter=open_for_a_while")
    )


def timed_door(p: Mapping[str, Any]) -> Spec:
    """A door at (``door_x``, ``door_y``) that opens the first time the player enters the
    ``zone_size`` m zone at (``zone_x``, ``zone_y``) and closes ``hold`` s (whole) later."""
    zx, zy, size = float(p["zone_x"]), float(p["zone_y"]), float(p["zone_size"])
    dx, dy, hold = float(p["door_x"]), float(p["door_y"]), int(p["hold"])
    level = new_level()
    add_object(level, "door_1", "door", (dx, dy, 1.0))
    constraints = [
        {"kind": "timed_door", "door": "door_1", "zone": _box(zx, zy, size), "hold": float(hold),
         "passages": _passages(dx, dy), "weight": 1.0},
    ]  # fmt: skip
    door = ("door_1", (dx, dy))

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('write')} the {s.w('game logic')} of a {s.w('timed door')}",
            f"{_door_at(s, dx, dy)}; its {s.w('zone')} is {_square(s, size, zx, zy, door)}",
            f"{s.w('the first time')} the {s.w('player')} enters the {s.w('zone')}, the "
            f"{s.w('door')} {s.w('must')} open (world.open('door_1')) {s.w('within a tenth')} "
            f"after the entry and close again (world.close('door_1')) {s.count(hold)} "
            f"{s.w('whole seconds')} after that entry, {s.w('either way')}, then stay closed",
            f"a {s.w('player')} who never enters the {s.w('zone')} {s.w('must')} find the "
            f"{s.w('door')} closed at {s.w('every moment')}",
            _player(s),
            _demo(s, (zx - 4, zy), (zx + 4, zy)),
            conventions_said(s),
        ]

    return Spec(
        "timed_door",
        "logic",
        level,
        tuple(constraints),
        10.0,
        10.0,
        said(p, text, WORDS),
        _timed_code(zx, zy, size, float(hold)),
        (),
        trajectories=tuple(door_paths(_rng(p), zx, zy, size)),
        bounds=_bounds((zx, zy), (dx, dy)),
    )


def _timed_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the door closing 0.3 s late (the hold a little long)."""
    (c,) = spec.constraints
    x, y, _, size = c["zone"][:4]
    return _cleared(task, _timed_code(x, y, size, c["hold"] + 0.3))


def _timed_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "zone_x": round(rng.uniform(-2, 2), 1),
        "zone_y": round(rng.uniform(-2, 1.5), 1),
        "zone_size": rng.choice([1.0, 1.5, 2.0]),
        "door_x": round(rng.uniform(-3, 3), 1),
        "door_y": round(rng.uniform(3.5, 4.5), 1),
        "hold": rng.choice([2, 3, 4]),
        "trajectory_seed": rng.randrange(10**6),
    }


def _timed_delay(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Another hold, a second or two from the old (ten times the slack and more)."""
    return {**before, "hold": rng.choice([h for h in (2, 3, 4) if h != int(before["hold"])])}


def _timed_delay_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    old, new = int(before["hold"]), int(after["hold"])

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('door')} {s.w('must')} now close again {s.count(new)} "
            f"{s.w('whole seconds')} after the {s.w('player')} first enters the {s.w('zone')}, "
            f"{s.w('instead of')} {s.count(old)}, {s.w('either way')}",
        ]

    return text


def _timed_zone(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The zone elsewhere, clear of the old trigger's reach."""
    size = float(before["zone_size"])
    x, y = _away(rng, float(before["zone_x"]), float(before["zone_y"]), size + 1.0)
    return {**before, "zone_x": x, "zone_y": y}


def _timed_zone_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    x, y, size = float(after["zone_x"]), float(after["zone_y"]), float(after["zone_size"])
    door = ("door_1", (float(after["door_x"]), float(after["door_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('zone')} of the {s.w('door')} {s.w('has been moved')}: it is now "
            f"{_square(s, size, x, y, door)}; {s.w('the rest as before')}",
        ]

    return text


# -- sequence_lock --------------------------------------------------------------------------------


def _sequence_code(a: Sequence[float], b: Sequence[float], size: float) -> str:
    return (
        "entered_first = []\n\n"
        "def first(world, trigger, other):\n"
        "    if other == 'player':\n"
        "        entered_first.append(world.time)\n\n"
        "def then(world, trigger, other):\n"
        "    if other == 'player' and entered_first:\n"
        "        world.open('door_1')\n\n"
        + _trigger("zone_1", a[0], a[1], size, size, "on_enter=first")
        + _trigger("zone_2", b[0], b[1], size, size, "on_enter=then")
    )


def _sequence_zones(p: Mapping[str, Any]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Zone A's and zone B's centres (B is ``sep`` m from A along ``axis``)."""
    ax, ay, sep = float(p["a_x"]), float(p["a_y"]), float(p["sep"])
    ux, uy = AXES[int(p["axis"])]
    b = (round(ax + ux * sep, 3), round(ay + uy * sep, 3))
    a = (ax, ay)
    return (b, a) if p.get("reversed") else (a, b)


def sequence_paths(
    rng: random.Random, a: Sequence[float], b: Sequence[float], size: float
) -> list[dict]:
    """Held-out paths for zones A and B (``size`` squares, B along an axis from A): A then B
    straight through both (the cheap tier's first), B then A (its second), across A only,
    across B only, into A from a side with a pause and on into B, along the pair clipping both
    zones' edges by 5-15 cm, B then A then back through B, just missing A (0.3-0.5 m) on the
    way to B, and well beside both."""
    h = size / 2 + REACH
    sep = math.dist(a, b)
    u = ((b[0] - a[0]) / sep, (b[1] - a[1]) / sep)
    n = (-u[1], u[0])

    def pt(base: Sequence[float], along: float, across: float = 0.0) -> tuple[float, float]:
        return (
            base[0] + along * u[0] + across * n[0],
            base[1] + along * u[1] + across * n[1],
        )

    def jitter() -> float:
        return rng.uniform(-size / 4, size / 4)

    side = rng.choice([-1, 1])
    clip = side * (h - rng.uniform(0.05, 0.15))
    miss = -side * (h + rng.uniform(0.3, 0.5))
    far = side * (h + rng.uniform(1.0, 1.6))
    return [
        straight(rng, pt(a, -2, jitter()), pt(b, 2, jitter()), 1.2, 2.5),
        straight(rng, pt(b, 2, jitter()), pt(a, -2, jitter()), 1.2, 2.5),
        straight(rng, pt(a, jitter(), -h - 2), pt(a, jitter(), h + 2)),
        straight(rng, pt(b, jitter(), h + 2), pt(b, jitter(), -h - 2)),
        straight(
            rng, pt(a, 0, -h - 2), pt(b, 0.0), 1.2, 2.0, waits=[(pt(a, 0), rng.uniform(0.5, 1.0))]
        ),
        straight(rng, pt(a, -2, clip), pt(b, 2, clip), 1.2, 2.5),
        straight(rng, pt(b, 2, jitter()), pt(b, 2.3, jitter()), 1.8, 2.5, waits=[(pt(a, 0), 0.3)]),
        straight(rng, pt(a, -2, miss), pt(b, 2.0), 1.2, 2.0, waits=[(pt(a, h + 1, miss), 0.0)]),
        straight(rng, pt(a, -2, far), pt(b, 2, far)),
    ]


def sequence_lock(p: Mapping[str, Any]) -> Spec:
    """A door at (``door_x``, ``door_y``) that opens when the player enters zone B having
    entered zone A before; the zones are ``zone_size`` m squares, B ``sep`` m from A along
    ``axis`` (``reversed``: the two swapped, an edit's order)."""
    (a, b), size = _sequence_zones(p), float(p["zone_size"])
    dx, dy = float(p["door_x"]), float(p["door_y"])
    level = new_level()
    add_object(level, "door_1", "door", (dx, dy, 1.0))
    constraints = [
        {"kind": "sequence_door", "door": "door_1", "first": _box(*a, size),
         "then": _box(*b, size), "passages": _passages(dx, dy), "weight": 1.0},
    ]  # fmt: skip
    door = ("door_1", (dx, dy))
    sep = math.dist(a, b)
    u = ((b[0] - a[0]) / sep, (b[1] - a[1]) / sep)

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('write')} the {s.w('game logic')} of a {s.w('sequence lock')}",
            f"{_door_at(s, dx, dy)}; {s.w('zone')} A, {_square(s, size, *a, door)}, and "
            f"{s.w('zone')} B, {_square(s, size, *b, door)}, lie on the floor",
            f"the {s.w('door')} {s.w('must')} open (world.open('door_1')) {s.w('when')} the "
            f"{s.w('player')} enters {s.w('zone')} B having entered {s.w('zone')} A before, "
            f"{s.w('within a tenth')} after entering B, and stay open",
            f"entering {s.w('zone')} B without having entered {s.w('zone')} A first "
            f"({s.w('the wrong order')}), or only one of them, {s.w('must')} leave the "
            f"{s.w('door')} closed",
            _player(s),
            _demo(
                s,
                (a[0] - 2 * u[0], a[1] - 2 * u[1]),
                (b[0] + 2 * u[0], b[1] + 2 * u[1]),
            ),
            conventions_said(s),
        ]

    return Spec(
        "sequence_lock",
        "logic",
        level,
        tuple(constraints),
        10.0,
        10.0,
        said(p, text, WORDS),
        _sequence_code(a, b, size),
        (),
        trajectories=tuple(sequence_paths(_rng(p), a, b, size)),
        bounds=_bounds(a, b, (dx, dy)),
    )


def _sequence_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the door opening a quarter of a second after the player enters B
    (a tenth is allowed): late on every path that opens it, the cheap tier's first included."""
    (c,) = spec.constraints
    a, b, size = c["first"][:2], c["then"][:2], c["first"][3]
    late = _sequence_code(a, b, size).replace(
        "        world.open('door_1')\n", "        world.after(0.25, lambda w: w.open('door_1'))\n"
    )
    return _cleared(task, late)


def _sequence_draw(rng: random.Random) -> dict[str, Any]:
    sep, axis = rng.choice([3.5, 4.0]), rng.randrange(4)
    ux, uy = AXES[axis]
    lo_x, hi_x = (-3.0, 3.0 - ux * sep) if ux > 0 else (-3.0 - ux * sep, 3.0)
    lo_y, hi_y = (-3.0, 2.0 - uy * sep) if uy > 0 else (-3.0 - uy * sep, 2.0)
    a = (round(rng.uniform(lo_x, hi_x), 1), round(rng.uniform(lo_y, hi_y), 1))
    return {
        "a_x": a[0],
        "a_y": a[1],
        "sep": sep,
        "axis": axis,
        "zone_size": rng.choice([1.0, 1.5]),
        "door_x": round(rng.uniform(-3, 3), 1),
        "door_y": round(rng.uniform(4.5, 5.0), 1),
        "trajectory_seed": rng.randrange(10**6),
    }


def _sequence_reversed(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The other order: the zone entered last before is now the one to enter first."""
    return {**before, "reversed": not before.get("reversed", False)}


def _sequence_reversed_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    first, then = _sequence_zones(after)
    size = float(after["zone_size"])
    door = ("door_1", (float(after["door_x"]), float(after["door_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('reverse')} the order: the {s.w('door')} {s.w('must')} now open "
            f"{s.w('when')} the {s.w('player')} enters {_square(s, size, *then, door)} having "
            f"entered {_square(s, size, *first, door)} before, and not in the other order, "
            f"{s.w('the rest as before')}",
        ]

    return text


def _sequence_turned(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Zone B on another side of zone A (another axis), where the start's trigger B is not; if
    no other side has room, B half a metre nearer or further along the same one."""
    for axis in rng.sample(range(4), 4):
        after = {**before, "axis": axis}
        _, (bx, by) = _sequence_zones(after)
        if axis != int(before["axis"]) and abs(bx) <= 4.0 and -4.0 <= by <= 2.5:
            return after
    return {**before, "sep": 7.5 - float(before["sep"])}


def _sequence_turned_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    _, then = _sequence_zones(after)
    size = float(after["zone_size"])
    door = ("door_1", (float(after["door_x"]), float(after["door_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('zone')} to enter last {s.w('has been moved')}: it is now "
            f"{_square(s, size, *then, door)}; {s.w('the rest as before')}",
        ]

    return text


# -- coin_gate ------------------------------------------------------------------------------------


def _coin_xs(p: Mapping[str, Any]) -> list[float]:
    n, spacing = int(p["coins"]), float(p["spacing"])
    return [round(-spacing * (n - 1) / 2 + spacing * k, 3) for k in range(n)]


def _coin_code(need: int, counter: str, door: str = "door_1", strict: bool = False) -> str:
    test = ">" if strict else ">="
    return (
        f"NEED = {need}  # coins that open the door\n\n"
        "def collect(world, trigger, other):\n"
        "    coin = 'coin_' + trigger.split('_')[1]\n"
        "    if other == 'player' and coin in world.objects:\n"
        "        world.destroy(coin)\n"
        f"        if world.count({counter!r}) {test} NEED:\n"
        f"            world.open({door!r})\n\n"
        "for name in [n for n in world.objects if n.startswith('coin_')]:\n"
        "    world.trigger('zone_' + name.split('_')[1], pos=world.get(name).pos,\n"
        "                  size=(0.3, 0.05, 0.3), on_enter=collect)\n"
    )


def coin_gate_paths(rng: random.Random, xs: list[float], need: int) -> list[dict]:
    """Held-out paths for a row of coins at ``xs`` (y = 0) and a gate that needs ``need``: every
    coin west to east (the cheap tier's first), ``need`` - 1 from the west and away (its
    second), exactly ``need`` from the west and away, a near miss of the row, every coin east
    to west, across the row over one coin, exactly ``need`` from the east with a pause, and
    ``need`` - 1 from the east. The player touches a coin while its centre is within 0.4 m of
    the coin's along X and 0.275 m across; a path stops 0.1-0.2 m short of the next coin's
    reach before it turns away."""
    first, last, touch = xs[0] - 1.5, xs[-1] + 1.5, 0.4
    side = rng.choice([-1, 1])

    def west(k: int, pause: float = 0.0) -> dict:
        """Coins 1..k from the west, then away across the row's side."""
        stop = xs[k] - touch - rng.uniform(0.1, 0.2)
        return straight(rng, (first, 0.0), (stop, -side * 2.0), 1.2, 2.0,
                        waits=[((stop, 0.0), pause or rng.uniform(0.3, 0.8))])  # fmt: skip

    def east(k: int, pause: float = 0.0) -> dict:
        """The k coins at the east end, then away."""
        stop = xs[-k - 1] + touch + rng.uniform(0.1, 0.2)
        return straight(rng, (last, 0.0), (stop, side * 2.0), 1.2, 2.0,
                        waits=[((stop, 0.0), pause or rng.uniform(0.3, 0.8))])  # fmt: skip

    miss = side * (0.025 + 0.25 + rng.uniform(0.3, 0.5))
    c, off = rng.randrange(len(xs)), rng.uniform(-0.1, 0.1)
    return [
        walk(rng, (first, 0.0), (last, 0.0)),
        west(need - 1),
        west(need),
        walk(rng, (first, miss), (last, miss)),
        walk(rng, (last, 0.0), (first, 0.0)),
        straight(rng, (xs[c] + off, -side * 2.0), (xs[c] + off, side * 2.0)),
        east(need, pause=rng.uniform(1.0, 1.5)),
        east(need - 1),
    ]


def coin_gate(p: Mapping[str, Any]) -> Spec:
    """``coins`` coins ``spacing`` m apart in a row along X (y = 0, centred on the origin, 0.5 m
    up) that vanish and count on ``counter`` when touched, and a door at (``door_x``,
    ``door_y``) that opens once the counter reaches ``need``."""
    xs, need, counter = _coin_xs(p), int(p["need"]), str(p["counter"])
    dx, dy, door = float(p["door_x"]), float(p["door_y"]), str(p.get("door", "door_1"))
    level = new_level()
    for k, x in enumerate(xs):
        add_object(level, f"coin_{k + 1}", "coin", (x, 0.0, 0.5))
    add_object(level, door, "door", (dx, dy, 1.0))
    constraints = [
        {"kind": "coins", "counter": counter, "weight": 1.0},
        {"kind": "coin_gate", "door": door, "need": need, "passages": _passages(dx, dy),
         "weight": 1.0},
    ]  # fmt: skip
    n = len(xs)

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('write')} the {s.w('game logic')} of a {s.w('coin gate')}",
            f"{s.count(n)} {s.w('coins')} (coin_1 ... coin_{n}, {s.dims(0.3, 0.05, 0.3)}, centres "
            f"{s.len(0.5)} up) stand in a row along X centred on the origin, and "
            f"{_door_at(s, dx, dy, door)}",
            f"{s.w('when')} the {s.w('player')} touches a {s.w('coin')}, the {s.w('coin')} "
            f"{s.w('must')} vanish (world.destroy) and the counter '{counter}' "
            f"(world.count('{counter}')) {s.w('must')} go up by one; {s.w('coins')} the "
            f"{s.w('player')} never touches stay",
            f"the {s.w('door')} {s.w('must')} open (world.open({door!r})) once the counter "
            f"reaches {s.count(need)}, {s.w('within a tenth')} after the touch that makes it "
            f"{s.count(need)}, and stay open; with fewer {s.w('coins')} {s.w('collected')} it "
            f"{s.w('must')} stay closed",
            _player(s),
            _demo(s, (xs[0] - 1.5, 0.0), (xs[-1] + 1.5, 0.0)),
            conventions_said(s),
        ]

    return Spec(
        "coin_gate",
        "logic",
        level,
        tuple(constraints),
        10.0,
        10.0,
        said(p, text, WORDS),
        _coin_code(need, counter, door),
        (),
        trajectories=tuple(coin_gate_paths(_rng(p), xs, need)),
        bounds=_bounds((xs[0], 0.0), (xs[-1], 0.0), (dx, dy)),
    )


def _coin_near_miss(task: Any, spec: Spec) -> str:
    """The reference with ``>`` for ``>=``: the door waits for one coin more."""
    gate = next(c for c in spec.constraints if c["kind"] == "coin_gate")
    counter = next(c for c in spec.constraints if c["kind"] == "coins")["counter"]
    return _cleared(task, _coin_code(int(gate["need"]), counter, gate["door"], strict=True))


#: The names the coin gate's door may have (a solution copied from another draw opens another).
DOORS = ("door_1", "gate", "exit_door", "vault_door", "portcullis", "hatch")
#: The names a coin counter may have (a solution copied from another draw counts on another).
COUNTERS = ("coins", "score", "gold", "tokens", "points", "collected", "loot", "gems")


def _coin_draw(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(4, 8)
    return {
        "coins": n,
        "spacing": rng.choice([0.8, 1.0, 1.2]),
        "need": rng.randint(2, n - 1),
        "counter": rng.choice(COUNTERS),
        "door_x": round(rng.uniform(-3, 3), 1),
        "door_y": round(rng.uniform(2.5, 3.5), 1),
        "trajectory_seed": rng.randrange(10**6),
        "door": rng.choice(DOORS),
    }


def _coin_need(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """One coin more or fewer (within 2 and all but one): a path that collects exactly the new
    number, or one fewer, finds the start's door wrong."""
    need, n = int(before["need"]), int(before["coins"])
    return {**before, "need": rng.choice([k for k in (need - 1, need + 1) if 2 <= k <= n - 1])}


def _coin_need_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    old, new = int(before["need"]), int(after["need"])

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('door')} {s.w('must')} now open once the counter reaches {s.count(new)} "
            f"{s.w('instead of')} {s.count(old)}, {s.w('within a tenth')} after the touch that "
            f"makes it {s.count(new)}, {s.w('the rest as before')}",
        ]

    return text


def _coin_counter(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Another counter's name: the start counts on the old one."""
    return {**before, "counter": rng.choice([c for c in COUNTERS if c != before["counter"]])}


def _coin_counter_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    old, new, need = str(before["counter"]), str(after["counter"]), int(after["need"])

    def text(s: Phrases) -> list[str]:
        return [
            f"count the {s.w('coins')} {s.w('collected')} on the counter '{new}' "
            f"(world.count('{new}')) {s.w('instead of')} '{old}', the {s.w('door')} still "
            f"opening once it reaches {s.count(need)}",
        ]

    return text


# -- lift -----------------------------------------------------------------------------------------


def _lift_code(p: Mapping[str, Any], zone: Sequence[float], height: float, speed: float) -> str:
    px, py = float(p["platform_x"]), float(p["platform_y"])
    return (
        f"HOME, TOP, SPEED = ({px!r}, {py!r}, {LIFT_Z!r}), {height!r}, {speed!r}\n"
        "called = []  # when the player first entered the call zone\n\n"
        "def rise(world, dt):\n"
        "    z = min(TOP, HOME[2] + SPEED * (world.time + dt - called[0]))\n"
        "    world.get('platform_1').set_pos((HOME[0], HOME[1], z))\n\n"
        "def call(world, trigger, other):\n"
        "    if other == 'player' and not called:\n"
        "        called.append(world.time)\n"
        "        world.on_update(rise)\n\n"
        + _trigger("zone_1", zone[0], zone[1], zone[2], zone[2], "on_enter=call")
    )


def _lift_zone(p: Mapping[str, Any]) -> tuple[float, float, float]:
    """The call zone's centre and size: ``zone_offset`` m from the platform along ``zone_axis``."""
    ux, uy = AXES[int(p["zone_axis"])]
    off = float(p["zone_offset"])
    x, y = float(p["platform_x"]) + ux * off, float(p["platform_y"]) + uy * off
    return round(x, 3), round(y, 3), float(p["zone_size"])


def lift(p: Mapping[str, Any]) -> Spec:
    """The platform at (``platform_x``, ``platform_y``), resting on the floor, rising straight up
    at ``speed`` m/s until its centre is ``height`` up, the first time the player enters its
    call zone (see :func:`_lift_zone`)."""
    px, py = float(p["platform_x"]), float(p["platform_y"])
    height, speed = float(p["height"]), float(p["speed"])
    zx, zy, size = _lift_zone(p)
    level = new_level()
    add_object(level, "platform_1", "platform", (px, py, LIFT_Z))
    constraints = [
        {"kind": "lift", "name": "platform_1", "zone": _box(zx, zy, size),
         "start": [px, py, LIFT_Z], "height": height, "speed": speed, "weight": 1.0},
    ]  # fmt: skip
    home = ("platform_1", (px, py))

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('write')} the {s.w('game logic')} of a {s.w('lift')}",
            f"the {s.w('platform')} platform_1 ({s.dims(1.5, 1.5, 0.2)}) rests on the floor "
            f"centred at {s.at(px, py)} (its centre {s.len(LIFT_Z)} up); its {s.w('call zone')} "
            f"is {_square(s, size, zx, zy, home)}",
            f"{s.w('the first time')} the {s.w('player')} enters the {s.w('call zone')}, the "
            f"{s.w('platform')} {s.w('must')} start to {s.w('rise')} straight up at "
            f"{s.len(speed)} {s.w('per second')}, {s.w('within a tenth')} after that entry, "
            f"until its centre is {s.len(height)} up, then stay there, following that motion "
            f"{s.w('to within')} {s.len(0.05)} at every frame",
            f"a {s.w('player')} who never enters the {s.w('call zone')} {s.w('must')} find the "
            f"{s.w('platform')} at rest where it is",
            _player(s),
            _demo(s, (zx - 4, zy), (zx + 4, zy)),
            conventions_said(s),
        ]

    return Spec(
        "lift",
        "logic",
        level,
        tuple(constraints),
        10.0,
        10.0,
        said(p, text, WORDS),
        _lift_code(p, (zx, zy, size), height, speed),
        (),
        trajectories=tuple(door_paths(_rng(p), zx, zy, size)),
        bounds=_bounds((px, py), (zx, zy)),
    )


def _lift_near_miss(task: Any, spec: Spec) -> str:
    """The reference rising to twice the tolerance too high."""
    from toolgym.envs.scene.verifier import LIFT_TOL_M

    (c,) = spec.constraints
    x, y, _, size = c["zone"][:4]
    code = _lift_code(task.parameters, (x, y, size), c["height"] + 2 * LIFT_TOL_M, c["speed"])
    return _cleared(task, code)


def _lift_draw(rng: random.Random) -> dict[str, Any]:
    axis, offset = rng.randrange(4), rng.choice([2.2, 2.5])

    def span(u: int) -> tuple[float, float]:  # where the platform may be for its zone to fit
        return (-2.5, 2.5 - offset) if u > 0 else (-2.5 + offset, 2.5) if u < 0 else (-2.5, 2.5)

    ux, uy = AXES[axis]
    return {
        "platform_x": round(rng.uniform(*span(ux)), 1),
        "platform_y": round(rng.uniform(*span(uy)), 1),
        "zone_axis": axis,
        "zone_offset": offset,
        "zone_size": rng.choice([1.0, 1.5]),
        "height": rng.choice([1.0, 1.5, 2.0]),
        "speed": rng.choice([0.5, 1.0]),
        "trajectory_seed": rng.randrange(10**6),
    }


def _lift_height(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Another top, half a metre or a metre from the old (ten times the tolerance and more)."""
    return {**before, "height": rng.choice([h for h in (1.0, 1.5, 2.0) if h != before["height"]])}


def _lift_height_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    old, new = float(before["height"]), float(after["height"])

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('platform')} {s.w('must')} now {s.w('rise')} until its centre is "
            f"{s.len(new)} up {s.w('instead of')} {s.len(old)}, {s.w('the rest as before')}",
        ]

    return text


def _lift_zone_moved(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The call zone on the platform's opposite side (where it fits, else another side)."""
    px, py, offset = float(before["platform_x"]), float(before["platform_y"]), before["zone_offset"]
    axes = [a for a in range(4) if a != int(before["zone_axis"])]
    axes.sort(key=lambda a: AXES[a] != tuple(-v for v in AXES[int(before["zone_axis"])]))
    for axis in axes:
        ux, uy = AXES[axis]
        if abs(px + ux * offset) <= 3.0 and abs(py + uy * offset) <= 3.0:
            return {**before, "zone_axis": axis}
    return {**before, "zone_axis": axes[0]}


def _lift_zone_moved_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    zx, zy, size = _lift_zone(after)
    home = ("platform_1", (float(after["platform_x"]), float(after["platform_y"])))

    def text(s: Phrases) -> list[str]:
        return [
            f"the {s.w('call zone')} {s.w('has been moved')}: it is now "
            f"{_square(s, size, zx, zy, home)}; {s.w('the rest as before')}",
        ]

    return text


# -- words and relations --------------------------------------------------------------------------

WORDS = {
    "write": ("write", "script", "program"),
    "game logic": ("game logic", "gameplay logic", "level logic"),
    "pressure plate": ("pressure plate", "floor switch", "step plate"),
    "timed door": ("timed door", "self-closing door", "door on a timer"),
    "sequence lock": ("sequence lock", "combination lock", "ordered lock"),
    "coin gate": ("coin gate", "coin-operated door", "toll door"),
    "lift": ("lift", "elevator", "rising platform"),
    "is at": ("is at", "is placed at", "sits at"),
    "lies flat": ("lies flat", "is set", "sits flush"),
    "stands on": ("stands on", "is standing on", "has a foot on"),
    "within a tenth": (
        "within a tenth of a second",
        "at most a tenth of a second",
        "no later than a tenth of a second",
    ),
    "either way": (
        "within a tenth of a second either way",
        "give or take a tenth of a second",
        "to the nearest tenth of a second",
    ),
    "whole seconds": ("seconds", "whole seconds", "secs"),
    "every moment": ("every moment", "all times", "any instant"),
    "the first time": ("the first time", "the first moment", "on the first occasion"),
    "the wrong order": ("the wrong order", "the reverse order", "out of sequence"),
    "collected": ("collected", "picked up", "gathered"),
    "call zone": ("call zone", "call area", "summoning spot"),
    "rise": ("rise", "climb", "ascend"),
    "per second": ("per second", "each second", "a second"),
    "to within": ("to within", "within", "no further off than"),
    "try it": ("try it", "test it", "check it"),
    "verifier": ("verifier", "grader", "checker"),
    "a fresh copy": ("a fresh copy", "a new copy", "an untouched copy"),
    "has been moved": ("has been moved", "was moved", "has been relocated"),
    "as before": ("as before", "as it did", "just as before"),
    "instead of": ("instead of", "rather than", "in place of"),
    "the rest as before": ("the rest as before", "the rest unchanged", "all else as it was"),
    "reverse": ("reverse", "swap", "invert"),
}

_N = r"-?\d+(?:\.\d+)?"
_P = rf"\(({_N}), ({_N})\) m"  # a point as the spec style says it
_SQUARE = rf"the ({_N}) × {_N} m square centred at {_P}"


def _zone_need(m: Any, at: int) -> list[float]:
    """The zone a prompt's square states (size, x, y from group ``at`` on), as the rules hold it."""
    size, x, y = (float(m[at + k]) for k in range(3))
    return _box(x, y, size)


RELATIONS = (
    # -- every family
    Phrase(
        rf"Try it with world\.player_path \(waypoints 0\.9 m up\) from {_P} to {_P} and "
        r"world\.run; the verifier plays its own paths on a fresh copy of the level",
        note="how to try it",
    ),
    # -- pressure_plate
    Phrase(
        rf"The door (\w+) is at {_P}, and the pressure plate, ({_N}) × {_N} m, lies flat on the "
        rf"floor centred at {_P}",
        lambda m: [
            {
                "kind": "plate_door",
                "door": m[1],
                "zone": _box(float(m[5]), float(m[6]), float(m[4])),
            }
        ],
    ),
    Phrase(
        r"The door must be open exactly while the player stands on the pressure plate \(their "
        r"box overlapping its footprint\): open \(world\.open\('(\w+)'\)\) within a tenth of a "
        r"second after stepping on, and closed again \(world\.close\('\w+'\)\) within a tenth of "
        r"a second after stepping off",
        lambda m: [{"kind": "plate_door", "door": m[1]}],
    ),
    Phrase(
        r"A player who never steps on the pressure plate must find the door closed at every "
        r"moment",
        lambda m: [{"kind": "plate_door"}],
    ),
    Phrase(
        rf"The pressure plate has been moved: it now lies flat on the floor centred at {_P} "
        rf"\(({_N}) × {_N} m\), and the door must still be open exactly while the player stands "
        r"on it, as before",
        lambda m: [{"kind": "plate_door", "zone": _box(float(m[1]), float(m[2]), float(m[3]))}],
    ),
    Phrase(
        rf"The pressure plate centred at {_P} is now ({_N}) × {_N} m, and the door must be open "
        r"exactly while the player stands on any part of it, as before",
        lambda m: [{"kind": "plate_door", "zone": _box(float(m[1]), float(m[2]), float(m[3]))}],
    ),
    # -- timed_door
    Phrase(
        rf"The door (\w+) is at {_P}; its zone is {_SQUARE}",
        lambda m: [{"kind": "timed_door", "door": m[1], "zone": _zone_need(m, 4)}],
    ),
    Phrase(
        r"The first time the player enters the zone, the door must open "
        r"\(world\.open\('(\w+)'\)\) within a tenth of a second after the entry and close again "
        r"\(world\.close\('\w+'\)\) (\d+) seconds after that entry, within a tenth of a second "
        r"either way, then stay closed",
        lambda m: [{"kind": "timed_door", "door": m[1], "hold": float(m[2])}],
    ),
    Phrase(
        r"A player who never enters the zone must find the door closed at every moment",
        lambda m: [{"kind": "timed_door"}],
    ),
    Phrase(
        r"The door must now close again (\d+) seconds after the player first enters the zone, "
        r"instead of \d+, within a tenth of a second either way",
        lambda m: [{"kind": "timed_door", "hold": float(m[1])}],
    ),
    Phrase(
        rf"The zone of the door has been moved: it is now {_SQUARE}; the rest as before",
        lambda m: [{"kind": "timed_door", "zone": _zone_need(m, 1)}],
    ),
    # -- sequence_lock
    Phrase(
        rf"The door (\w+) is at {_P}; zone A, {_SQUARE}, and zone B, {_SQUARE}, lie on the "
        r"floor",
        lambda m: [
            {
                "kind": "sequence_door",
                "door": m[1],
                "first": _zone_need(m, 4),
                "then": _zone_need(m, 7),
            }
        ],
    ),
    Phrase(
        r"The door must open \(world\.open\('(\w+)'\)\) when the player enters zone B having "
        r"entered zone A before, within a tenth of a second after entering B, and stay open",
        lambda m: [{"kind": "sequence_door", "door": m[1]}],
    ),
    Phrase(
        r"Entering zone B without having entered zone A first \(the wrong order\), or only one "
        r"of them, must leave the door closed",
        lambda m: [{"kind": "sequence_door"}],
    ),
    Phrase(
        rf"Reverse the order: the door must now open when the player enters {_SQUARE} having "
        rf"entered {_SQUARE} before, and not in the other order, the rest as before",
        lambda m: [{"kind": "sequence_door", "then": _zone_need(m, 1), "first": _zone_need(m, 4)}],
    ),
    Phrase(
        rf"The zone to enter last has been moved: it is now {_SQUARE}; the rest as before",
        lambda m: [{"kind": "sequence_door", "then": _zone_need(m, 1)}],
    ),
    # -- coin_gate (the coins' own sentence is the shared table's)
    Phrase(
        rf"(\d+) coins \(coin_1 \.\.\. coin_\d+, 0\.3 × 0\.05 × 0\.3 m, centres 0\.5 m up\) stand "
        rf"in a row along X centred on the origin, and the door (\w+) is at {_P}",
        lambda m: [{"kind": "coins"}, {"kind": "coin_gate", "door": m[2]}],
    ),
    Phrase(
        r"The door must open \(world\.open\('(\w+)'\)\) once the counter reaches (\d+), within a "
        r"tenth of a second after the touch that makes it \d+, and stay open; with fewer coins "
        r"collected it must stay closed",
        lambda m: [{"kind": "coin_gate", "door": m[1], "need": int(m[2])}],
    ),
    Phrase(
        r"The door must now open once the counter reaches (\d+) instead of \d+, within a tenth "
        r"of a second after the touch that makes it \d+, the rest as before",
        lambda m: [{"kind": "coin_gate", "need": int(m[1])}],
    ),
    Phrase(
        r"Count the coins collected on the counter '(\w+)' \(world\.count\('\w+'\)\) instead of "
        r"'\w+', the door still opening once it reaches (\d+)",
        lambda m: [{"kind": "coins", "counter": m[1]}, {"kind": "coin_gate", "need": int(m[2])}],
    ),
    # -- lift
    Phrase(
        rf"The platform (\w+) \(1\.5 × 1\.5 × 0\.2 m\) rests on the floor centred at {_P} \(its "
        rf"centre 0\.1 m up\); its call zone is {_SQUARE}",
        lambda m: [{"kind": "lift", "name": m[1], "zone": _zone_need(m, 4)}],
    ),
    Phrase(
        rf"The first time the player enters the call zone, the platform must start to rise "
        rf"straight up at ({_N}) m per second, within a tenth of a second after that entry, "
        rf"until its centre is ({_N}) m up, then stay there, following that motion to within "
        r"0\.05 m at every frame",
        lambda m: [{"kind": "lift", "speed": float(m[1]), "height": float(m[2])}],
    ),
    Phrase(
        r"A player who never enters the call zone must find the platform at rest where it is",
        lambda m: [{"kind": "lift"}],
    ),
    Phrase(
        rf"The platform must now rise until its centre is ({_N}) m up instead of {_N} m, the "
        r"rest as before",
        lambda m: [{"kind": "lift", "height": float(m[1])}],
    ),
    Phrase(
        rf"The call zone has been moved: it is now {_SQUARE}; the rest as before",
        lambda m: [{"kind": "lift", "zone": _zone_need(m, 1)}],
    ),
)

FAMILY_GROUP = (
    Template(
        "pressure_plate",
        "logic",
        pressure_plate,
        _plate_draw,
        1,
        "a door open exactly while the player stands on a plate",
        styled=True,
        near_miss=_plate_near_miss,
        edits=(
            Edit("move_plate", _plate_moved, _plate_moved_text),
            Edit("resize_plate", _plate_resized, _plate_resized_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "timed_door",
        "logic",
        timed_door,
        _timed_draw,
        2,
        "a door that opens on entry and closes seconds later",
        styled=True,
        near_miss=_timed_near_miss,
        edits=(
            Edit("delay", _timed_delay, _timed_delay_text),
            Edit("move_zone", _timed_zone, _timed_zone_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "sequence_lock",
        "logic",
        sequence_lock,
        _sequence_draw,
        3,
        "two zones that open a door only when entered in order",
        styled=True,
        near_miss=_sequence_near_miss,
        edits=(
            Edit("reverse_order", _sequence_reversed, _sequence_reversed_text),
            Edit("move_second", _sequence_turned, _sequence_turned_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "coin_gate",
        "logic",
        coin_gate,
        _coin_draw,
        3,
        "coins that count, and a door that opens at a number",
        styled=True,
        near_miss=_coin_near_miss,
        edits=(
            Edit("need", _coin_need, _coin_need_text),
            Edit("counter", _coin_counter, _coin_counter_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
    Template(
        "lift",
        "logic",
        lift,
        _lift_draw,
        2,
        "a platform that rises when the player calls it",
        styled=True,
        near_miss=_lift_near_miss,
        edits=(
            Edit("height", _lift_height, _lift_height_text),
            Edit("move_zone", _lift_zone_moved, _lift_zone_moved_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
)
