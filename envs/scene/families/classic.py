"""The first game-scene templates, their prompts as first written (fixed texts):

- layout (``dining``, ``storage``, ``table_top``): furnish a room so that relations hold;
- physics (``stack``, ``roll``, ``ramp_jump``, ``dominoes``): arrange things so that a condition
  holds after simulating;
- logic (``door``, ``coins``, ``platform``, ``spawner``): write behaviour that happens when the
  verifier plays the level.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping
from typing import Any

from toolgym.envs.scene.catalogue import asset
from toolgym.envs.scene.families.model import (
    CONVENTIONS,
    FLOOR_SETUP,
    INITIAL,
    LAYOUT_RULES,
    SETUP,
    WALLS,
    Spec,
    Template,
    add_object,
    call_script,
    common_layout,
    new_level,
    on_floor,
    room_text,
    straight,
    tool_call,
    walk,
)
from toolgym.envs.scene.families.model import fmt as _f

# -- layout ------------------------------------------------------------------------------------

_CHAIR_SLOTS = (  # offset from the table's centre and heading facing it, in order of use
    ((-0.4, -0.75), 0.0), ((0.4, 0.75), 180.0), ((0.4, -0.75), 0.0), ((-0.4, 0.75), 180.0),
    ((-1.15, 0.0), -90.0), ((1.15, 0.0), 90.0),
)  # fmt: skip


# "its long side along X": the table's heading is 0 or 180°, within the verifier's ALIGN_DEG.
_ALONG_X = {"kind": "aligned", "asset": "table", "heading": 0.0, "period": 180.0,
            "what": "its long side along X", "weight": 1.0}  # fmt: skip


def dining(p: Mapping[str, Any]) -> Spec:
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    tx, ty, chairs = float(p["table_x"]), float(p["table_y"]), int(p["chairs"])
    calls = [tool_call("spawn", asset="table", x=tx, y=ty)]
    for (dx, dy), heading in _CHAIR_SLOTS[:chairs]:
        calls.append(tool_call("spawn", asset="chair", x=tx + dx, y=ty + dy, heading=heading))
    constraints = [
        {"kind": "count", "asset": "table", "n": 1, "weight": 1.0},
        {"kind": "count", "asset": "chair", "n": chairs, "weight": 1.0},
        {"kind": "near", "asset": "table", "x": tx, "y": ty, "weight": 1.0},
        _ALONG_X,
        {"kind": "next_to", "asset": "chair", "other": "table", "gap": 0.4, "weight": 1.0},
        {"kind": "facing", "asset": "chair", "other": "table", "tol_deg": 30, "weight": 1.0},
        *common_layout(w, d, door_x, "table"),
        *on_floor("table", "chair"),
    ]
    prompt = (
        f"Furnish a dining room. {room_text(w, d, door_x)} Put one table with its centre at "
        f"({_f(tx)}, {_f(ty)}), its long side along X, and {chairs} chairs next to it (at most "
        "0.4 m away), each facing the table. Nothing may interpenetrate or leave the room, "
        "everything must rest on the floor, and a 0.5 m wide walkway must lead from the doorway "
        f"to the table. {LAYOUT_RULES} {CONVENTIONS}"
    )
    return Spec(
        "dining",
        "layout",
        new_level((w, d, door_x)),
        tuple(constraints),
        2.0,
        0.5,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(-w / 2, -d / 2, w / 2, d / 2),
    )


def storage(p: Mapping[str, Any]) -> Spec:
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    wall, crates, along = str(p["wall"]), int(p["crates"]), float(p["along"])
    face, normal, heading = WALLS[wall]
    inner = face(w, d)
    depth = asset("shelf").size[1]
    if normal[1]:  # north or south: the shelf runs along X
        sx, sy = along, inner - normal[1] * (depth / 2 + 0.01)
        crate_spots = [(along + 0.8 + 0.55 * k, inner - normal[1] * 0.3) for k in range(crates)]
    else:
        sx, sy = inner - normal[0] * (depth / 2 + 0.01), along
        crate_spots = [(inner - normal[0] * 0.3, along + 0.8 + 0.55 * k) for k in range(crates)]
    calls = [tool_call("spawn", asset="shelf", x=round(sx, 3), y=round(sy, 3), heading=heading)]
    calls += [
        tool_call("spawn", asset="crate", x=round(x, 3), y=round(y, 3)) for x, y in crate_spots
    ]
    constraints = [
        {"kind": "count", "asset": "shelf", "n": 1, "weight": 1.0},
        {"kind": "count", "asset": "crate", "n": crates, "weight": 1.0},
        {"kind": "against_wall", "asset": "shelf", "wall": wall, "gap": 0.1, "weight": 1.0},
        {"kind": "next_to", "asset": "crate", "other": "shelf", "gap": 2.0, "weight": 1.0},
        {
            "kind": "against_wall",
            "asset": "crate",
            "wall": wall,
            "gap": 0.1,
            "weight": 1.0,
            "facing": False,
        },
        {"kind": "near", "asset": "shelf", "x": round(sx, 3), "y": round(sy, 3), "weight": 1.0},
        *common_layout(w, d, door_x, "shelf"),
        *on_floor("shelf", "crate"),
    ]
    prompt = (
        f"Set up a store room. {room_text(w, d, door_x)} Put one shelf against the {wall} wall "
        f"(its back within 0.1 m of the wall, its open front facing into the room), centred at "
        f"{_f(along)} m along that wall, and {crates} crates on the floor against the same wall, "
        "each within 2 m of the shelf. Nothing may interpenetrate or leave the room, everything "
        "must rest on the floor, and a 0.5 m wide walkway must lead from the doorway to the "
        f"shelf. {LAYOUT_RULES} {CONVENTIONS}"
    )
    return Spec(
        "storage",
        "layout",
        new_level((w, d, door_x)),
        tuple(constraints),
        2.0,
        0.5,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(-w / 2, -d / 2, w / 2, d / 2),
    )


def table_top(p: Mapping[str, Any]) -> Spec:
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    tx, ty, crates = float(p["table_x"]), float(p["table_y"]), int(p["crates"])
    top = asset("table").size[2] + asset("crate").size[2] / 2
    xs = [tx + (k - (crates - 1) / 2) * 0.5 for k in range(crates)]
    calls = [tool_call("spawn", asset="table", x=tx, y=ty)]
    calls += [tool_call("spawn", asset="crate", x=x, y=ty, z=top) for x in xs]
    calls.append(tool_call("spawn", asset="chair", x=tx, y=ty - 0.75))
    constraints = [
        {"kind": "count", "asset": "table", "n": 1, "weight": 1.0},
        {"kind": "count", "asset": "crate", "n": crates, "weight": 1.0},
        {"kind": "near", "asset": "table", "x": tx, "y": ty, "weight": 1.0},
        _ALONG_X,
        {"kind": "on", "asset": "crate", "other": "table", "weight": 2.0},
        {"kind": "next_to", "asset": "chair", "other": "table", "gap": 0.4, "weight": 1.0},
        {"kind": "facing", "asset": "chair", "other": "table", "tol_deg": 30, "weight": 1.0},
        {"kind": "count", "asset": "chair", "n": 1, "weight": 1.0},
        *common_layout(w, d, door_x, "table"),
        *on_floor("table", "chair"),
    ]
    prompt = (
        f"Lay out a work table. {room_text(w, d, door_x)} Put one table with its centre at "
        f"({_f(tx)}, {_f(ty)}), its long side along X (its top is 0.75 m high), {crates} crates "
        "resting on the table top, and one chair next to the table facing it, the table and the "
        "chair on the floor. Nothing may "
        "interpenetrate or leave the room, everything must rest where it is, and a 0.5 m wide "
        f"walkway must lead from the doorway to the table. {LAYOUT_RULES} {CONVENTIONS}"
    )
    return Spec(
        "table_top",
        "layout",
        new_level((w, d, door_x)),
        tuple(constraints),
        2.0,
        0.5,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(-w / 2, -d / 2, w / 2, d / 2),
    )


# -- physics -----------------------------------------------------------------------------------


def stack(p: Mapping[str, Any]) -> Spec:
    n, x, y, overhang = int(p["crates"]), float(p["x"]), float(p["y"]), float(p["overhang"])
    level = new_level()
    add_object(level, "goal_zone_1", "goal_zone", (x, y, 0.25))
    calls = [
        tool_call("spawn", asset="crate", x=round(x + k * overhang, 4), y=y, z=0.25 + 0.5 * k)
        for k in range(n)
    ]
    constraints = [
        {"kind": "count", "asset": "crate", "n": n, "weight": 1.0},
        {
            "kind": "stands",
            "asset": "crate",
            "n": n,
            "x": x,
            "y": y,
            "overhang": overhang,
            "weight": 3.0,
        },
        INITIAL,
    ]
    shift = (
        f", each crate shifted {_f(overhang)} m further along +X than the one below it"
        if overhang
        else ""
    )
    prompt = (
        f"Build a stack of {n} crates (0.5 m cubes) on the goal pad at ({_f(x)}, {_f(y)}): the "
        f"bottom crate on the floor centred on the pad{shift}. After 4 s of simulation the stack "
        "must still stand (every crate within 5 cm of where it was placed, even when the "
        f"placement is off by a millimetre). {SETUP} {CONVENTIONS}"
    )
    return Spec(
        "stack",
        "physics",
        level,
        tuple(constraints),
        4.0,
        1.5,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(x - 3, y - 3, x + 3, y + 3),
    )


def roll(p: Mapping[str, Any]) -> Spec:
    gx, gy, seconds = float(p["goal_x"]), float(p["goal_y"]), float(p["seconds"])
    level = new_level()
    add_object(level, "ball_1", "ball", (0.0, 0.0, 0.15))
    add_object(level, "goal_zone_1", "goal_zone", (gx, gy, 0.25))
    # Rolling without rolling resistance: the ball keeps (almost) its speed; aim at the centre and
    # arrive in half the time.
    speed = math.hypot(gx, gy) / (seconds / 2)
    vx, vy = round(speed * gx / math.hypot(gx, gy), 3), round(speed * gy / math.hypot(gx, gy), 3)
    calls = [tool_call("set_velocity", name="ball_1", vx=vx, vy=vy)]
    constraints = [
        {"kind": "reaches", "name": "ball_1", "zone": "goal_zone_1", "weight": 1.0},
        INITIAL,
    ]
    prompt = (
        f"The ball ball_1 rests at the origin. Give it an initial velocity (set_velocity, or "
        f"world.get('ball_1').set_velocity(...)) so that it enters the goal zone goal_zone_1 "
        f"(a 1 × 1 m square centred at ({_f(gx)}, {_f(gy)})) within {_f(seconds)} s of "
        f"simulation. {SETUP} {CONVENTIONS}"
    )
    reach = max(abs(gx), abs(gy)) + 2
    return Spec(
        "roll",
        "physics",
        level,
        tuple(constraints),
        seconds,
        seconds,
        prompt,
        call_script(calls),
        tuple(calls),
        adjustable={"ball_1": ("velocity",)},
        bounds=(-reach, -reach, reach, reach),
    )


def ramp_jump(p: Mapping[str, Any]) -> Spec:
    wall_x, speed = float(p["wall_x"]), float(p["speed"])
    level = new_level()
    add_object(level, "ball_1", "ball", (-2.0, 0.0, 0.15), velocity=(speed, 0.0, 0.0))
    for k in range(5):
        add_object(level, f"crate_{k + 1}", "crate", (wall_x, -1.0 + 0.5 * k, 0.25), body="static")
    ramp_y = round(wall_x - 0.25 - 0.1 - 0.6, 3)
    calls = [tool_call("spawn", asset="ramp", x=ramp_y, y=0.0, heading=-90.0)]
    target = wall_x + 1.0
    constraints = [
        {"kind": "count", "asset": "ramp", "n": 1, "weight": 0.5},
        {
            "kind": "clears",
            "name": "ball_1",
            "x": wall_x,
            "y0": -1.25,
            "y1": 1.25,
            "top": 0.5,
            "weight": 2.0,
        },
        {"kind": "beyond", "name": "ball_1", "axis": 0, "value": target, "weight": 2.0},
        INITIAL,
    ]
    prompt = (
        f"The ball ball_1 rolls from (-2, 0) along +X at {_f(speed)} m/s towards a wall of "
        f"static crates (0.5 m high) at x = {_f(wall_x)}. Place one ramp (it rises 0.4 m over "
        "1.2 m towards its front; heading -90 makes it rise towards +X) so that the ball jumps "
        f"over the wall (not round its ends at y = ±1.25) and is beyond x = {_f(target)} after "
        f"4 s. {SETUP} {CONVENTIONS}"
    )
    return Spec(
        "ramp_jump",
        "physics",
        level,
        tuple(constraints),
        4.0,
        4.0,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(-3, -3, wall_x + 4, 3),
    )


def dominoes(p: Mapping[str, Any]) -> Spec:
    n, x, length = int(p["count"]), float(p["x"]), float(p["length"])
    level = new_level()
    add_object(level, "ball_1", "ball", (x, -1.0, 0.15), velocity=(0.0, 2.0, 0.0))
    spacing = round(length / (n - 1), 4)
    calls = [tool_call("spawn_row", asset="domino", count=n, x=x, y=0.0, dx=0.0, dy=spacing)]
    constraints = [
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
            "y0": 0.0,
            "y1": length,
            "by": "ball_1",
            "weight": 1.0,
        },
        {"kind": "all_fallen", "asset": "domino", "n": n, "weight": 2.0},
        dict(INITIAL, on=("floor",)),
    ]
    prompt = (
        f"The ball ball_1 rolls from ({_f(x)}, -1) along +Y at 2 m/s. Stand {n} dominoes "
        f"(0.2 × 0.05 × 0.4 m; at heading 0 they fall along ±Y) in a chain from ({_f(x)}, 0) to "
        f"({_f(x)}, {_f(length)}), each turned to fall along the chain, so that the ball knocks "
        "over the first and each domino knocks over the next, in order, and every domino falls "
        f"within 5 s. {FLOOR_SETUP} {CONVENTIONS}"
    )
    return Spec(
        "dominoes",
        "physics",
        level,
        tuple(constraints),
        5.0,
        5.0,
        prompt,
        call_script(calls),
        tuple(calls),
        bounds=(x - 2, -2, x + 2, length + 1),
    )


# -- logic -------------------------------------------------------------------------------------


def door_paths(rng: random.Random, zx: float, zy: float, size: float) -> list[dict]:
    """Held-out player paths for a door zone (a ``size`` square centred at (zx, zy)): from
    every side, through corners, at walking and running speeds, with pauses. The first two (the
    cheap tier's) cross the zone across the prompt's demo path and just miss it. The player
    (0.5 m wide) overlaps the zone while its centre is within ``h`` = size / 2 + 0.25 m of the
    zone's centre on both axes."""
    h = size / 2 + 0.25
    # The prompt's demo path runs along X through the zone: the paths that enter it from a side
    # on the cheap tier (the first and the third) come across it, from the two Y sides, so a
    # trigger fitted to the demo path fails there too; the others come from the X sides.
    ys, xs = [(0, -1), (0, 1)], [(-1, 0), (1, 0)]
    rng.shuffle(ys)
    rng.shuffle(xs)
    sides = [ys[0], xs[0], ys[1], xs[1]]
    c = (zx, zy)

    def at(direction: Any, out: float, along: float = 0.0) -> tuple[float, float]:
        """``out`` m from the centre along ``direction``, shifted ``along`` across it."""
        dx, dy = direction
        return c[0] + dx * out - dy * along, c[1] + dy * out + dx * along

    def corner(s: int, t: int, inset: float, reach: float) -> tuple[Any, Any]:
        """A diagonal line through the point ``inset`` m inside (negative: outside) the
        overlap box's corner (s, t), perpendicular to that corner's diagonal."""
        px, py = zx + s * (h - inset), zy + t * (h - inset)
        ux, uy = -t / math.sqrt(2), s / math.sqrt(2)
        return (px - reach * ux, py - reach * uy), (px + reach * ux, py + reach * uy)

    paths = []
    off = rng.uniform(-size / 3, size / 3)
    paths.append(straight(rng, at(sides[0], -(h + 2)), at(sides[0], h + 2, off)))  # across
    paths.append(
        straight(
            rng,
            at(sides[1], h + rng.uniform(0.3, 0.5), -4),  # a near miss
            at(sides[1], h + rng.uniform(0.3, 0.5), 4),
        )
    )
    inside = size / 2 - rng.uniform(0.05, 0.2)  # stop just inside the zone's edge
    paths.append(straight(rng, at(sides[2], h + 2.5), at(sides[2], inside, rng.uniform(-0.3, 0.3))))
    pause = at(sides[3], h + 0.2)  # wait just outside, then step in slowly
    paths.append(
        straight(
            rng,
            at(sides[3], h + 1.5),
            at(sides[3], 0.1),
            0.6,
            0.9,
            waits=[(pause, rng.uniform(0.8, 1.2))],
        )
    )
    s, t = rng.choice([-1, 1]), rng.choice([-1, 1])
    paths.append(straight(rng, *corner(s, t, rng.uniform(0.08, 0.15), 3.0)))  # clip a corner
    paths.append(straight(rng, *corner(-s, -t, rng.uniform(0.08, 0.15), 3.0), 2.5, 3.0))  # running
    linger = at(sides[3], size / 4)  # in, stand, and back out
    paths.append(
        straight(
            rng,
            at(sides[3], h + 2),
            at(sides[3], h + 2, 0.5),
            1.0,
            1.5,
            waits=[(linger, rng.uniform(0.8, 1.2))],
        )
    )
    near = at(sides[0], h + 0.3)  # walk up to the zone, stand 0.3 m short of it, walk away
    paths.append(
        straight(
            rng,
            at(sides[0], h + 2.5),
            at(sides[0], h + 2.5, 1.0),
            waits=[(near, rng.uniform(1.0, 1.5))],
        )
    )
    far = h + rng.uniform(1.0, 1.6)
    paths.append(straight(rng, at(sides[2], far, -4), at(sides[2], far, 4)))  # well beside it
    paths.append(straight(rng, *corner(s, -t, -rng.uniform(0.15, 0.3), 3.0)))  # miss a corner
    return paths


def coin_paths(rng: random.Random, xs: list[float]) -> list[dict]:
    """Held-out player paths for a row of coins at ``xs`` (y = 0): along the row both ways,
    across it over one coin's end, diagonally, a near miss, stopping short of a coin and pausing.
    The first two (the cheap tier's) take every coin and just miss the row. The player (0.5 m
    wide) touches a coin (0.3 × 0.05 m) while its centre is within 0.4 m of the coin's along X
    and 0.275 m across."""
    first, last, touch = xs[0] - 1.5, xs[-1] + 1.5, 0.025 + 0.25
    side = rng.choice([-1, 1])
    miss = side * (touch + rng.uniform(0.3, 0.5))
    paths = [walk(rng, (first, 0.0), (last, 0.0)), walk(rng, (first, miss), (last, miss))]
    # East to west, stopping 0.1 m past the reach of coin k (never on the edge of a touch: a
    # path must not hinge on rounding).
    k = rng.randrange(1, len(xs))
    paths.append(walk(rng, (last, 0.0), (xs[k] - 0.5, 0.0)))
    # Across the row over one coin's end: the player's box overlaps the coin's last 4-10 cm, and
    # never its centre.
    c, off = rng.randrange(len(xs)), rng.choice([-1, 1]) * rng.uniform(0.3, 0.36)
    paths.append(straight(rng, (xs[c] + off, -side * 2.5), (xs[c] + off, side * 2.5)))
    x0 = rng.uniform(xs[0], xs[-1])  # diagonally across the row
    paths.append(straight(rng, (x0 - 2.0, -2.0), (x0 + 2.0, 2.0)))
    c = rng.randrange(1, len(xs))  # up to a coin, stand 0.15 m short of it, and turn away
    short = xs[c] - 0.4 - 0.15
    paths.append(
        straight(
            rng,
            (first, 0.0),
            (short, -side * 2.0),
            1.2,
            2.0,
            waits=[((short, 0.0), rng.uniform(0.8, 1.2))],
        )
    )
    return paths


def door(p: Mapping[str, Any]) -> Spec:
    zx, zy, size = float(p["zone_x"]), float(p["zone_y"]), float(p["zone_size"])
    dx, dy = float(p["door_x"]), float(p["door_y"])
    rng = random.Random(int(p.get("trajectory_seed", 0)))
    level = new_level()
    add_object(level, "door_1", "door", (dx, dy, 1.0))
    trajectories = door_paths(rng, zx, zy, size)
    calls = [
        tool_call(
            "add_trigger", name="zone_1", x=zx, y=zy, z=0.9, size_x=size, size_y=size, size_z=1.8
        ),
        tool_call(
            "on_trigger",
            trigger="zone_1",
            action="open",
            target="door_1",
            event="enter",
            only="player",
        ),
    ]
    reference = (
        f"def open_door(world, trigger, other):\n"
        f"    if other == 'player':\n"
        f"        world.open('door_1')\n\n"
        f"world.trigger('zone_1', pos=({zx!r}, {zy!r}, 0.9), size=({size!r}, {size!r}, 1.8), "
        f"on_enter=open_door)\n"
    )
    zone = [zx, zy, 0.9, size, size, 1.8]
    # Held out: the player's ways through the doorway (its middle and near each jamb), along
    # which an open door must leave the player's box clear.
    passages = [[[dx + off, dy - 1.0, 0.9], [dx + off, dy + 1.0, 0.9]] for off in (-0.2, 0.0, 0.2)]
    constraints = [
        {"kind": "door", "door": "door_1", "zone": zone, "passages": passages, "weight": 1.0}
    ]
    demo = walk(random.Random(99), (zx - 4, zy), (zx + 4, zy))
    prompt = (
        f"Game logic: the door door_1 at ({_f(dx)}, {_f(dy)}) must open (world.open('door_1'): "
        "the player can then walk through its doorway) "
        f"when the player enters the {_f(size)} × {_f(size)} m zone centred at ({_f(zx)}, "
        f"{_f(zy)}) (within 0.1 s of its first overlap with the zone, from any side) and stay "
        "open, and only then: a player who walks past the zone must find it closed. The "
        "player is the object named 'player'. Try it with world.player_path("
        f"{demo['path']}, speed={demo['speed']}) and world.run(6); the verifier plays its own "
        f"paths on a fresh copy of the level. {CONVENTIONS}"
    )
    return Spec(
        "door",
        "logic",
        level,
        tuple(constraints),
        6.0,
        6.0,
        prompt,
        reference,
        tuple(calls),
        trajectories=tuple(trajectories),
        bounds=(zx - 5, zy - 5, zx + 5, zy + 5),
    )


def coins(p: Mapping[str, Any]) -> Spec:
    n, spacing = int(p["coins"]), float(p["spacing"])
    rng = random.Random(int(p.get("trajectory_seed", 0)))
    level = new_level()
    spots = [(round(-spacing * (n - 1) / 2 + spacing * k, 3), 0.0) for k in range(n)]
    for k, (x, y) in enumerate(spots):
        add_object(level, f"coin_{k + 1}", "coin", (x, y, 0.5))
    first, last = spots[0][0] - 1.5, spots[-1][0] + 1.5
    trajectories = coin_paths(rng, [x for x, _ in spots])
    calls = []
    for k, (x, y) in enumerate(spots):
        zone = f"zone_{k + 1}"
        calls += [
            tool_call(
                "add_trigger", name=zone, x=x, y=y, z=0.5, size_x=0.3, size_y=0.05, size_z=0.3
            ),
            tool_call("on_trigger", trigger=zone, action="count", target="coins", only="player"),
            tool_call(
                "on_trigger", trigger=zone, action="destroy", target=f"coin_{k + 1}", only="player"
            ),
        ]
    reference = (
        "def collect(world, trigger, other):\n"
        "    coin = 'coin_' + trigger.split('_')[1]\n"
        "    if other == 'player' and coin in world.objects:\n"
        "        world.destroy(coin)\n"
        "        world.count('coins')\n\n"
        "for name in [n for n in world.objects if n.startswith('coin_')]:\n"
        "    world.trigger('zone_' + name.split('_')[1], pos=world.get(name).pos,\n"
        "                  size=(0.3, 0.05, 0.3), on_enter=collect)\n"
    )
    constraints = [{"kind": "coins", "counter": "coins", "weight": 1.0}]
    prompt = (
        f"Game logic: {n} coins (coin_1 ... coin_{n}, 0.3 × 0.05 × 0.3 m, centres at height "
        "0.5 m) stand in a row along X. When the player (the object 'player') touches a coin, "
        "the coin must vanish (world.destroy) and the counter 'coins' (world.count('coins')) "
        "must go up by one; coins the player never touches stay. Try it with "
        f"world.player_path([[{_f(first)}, 0, 0.9], [{_f(last)}, 0, 0.9]]) and world.run(8); the "
        f"verifier plays its own paths on a fresh copy of the level. {CONVENTIONS}"
    )
    reach = abs(first) + 1
    return Spec(
        "coins",
        "logic",
        level,
        tuple(constraints),
        8.0,
        8.0,
        prompt,
        reference,
        tuple(calls),
        trajectories=tuple(trajectories),
        bounds=(-reach, -reach, reach, reach),
    )


def platform(p: Mapping[str, Any]) -> Spec:
    ax, ay, bx, by = (float(p[k]) for k in ("ax", "ay", "bx", "by"))
    height, speed = float(p["height"]), float(p["speed"])
    level = new_level()
    add_object(level, "platform_1", "platform", (ax, ay, height))
    calls = [
        tool_call(
            "add_waypoint_mover",
            name="platform_1",
            x1=ax,
            y1=ay,
            z1=height,
            x2=bx,
            y2=by,
            z2=height,
            speed=speed,
            loop="yes",
        ),
    ]
    reference = (
        f"world.mover('platform_1', [({ax!r}, {ay!r}, {height!r}), ({bx!r}, {by!r}, "
        f"{height!r})], speed={speed!r}, loop=True)\n"
    )
    constraints = [
        {
            "kind": "platform",
            "name": "platform_1",
            "points": [[ax, ay, height], [bx, by, height]],
            "speed": speed,
            "weight": 1.0,
        },
    ]
    aside = [[ax, ay + 4.0, 0.9]]
    prompt = (
        f"Game logic: the platform platform_1 must move back and forth between ({_f(ax)}, "
        f"{_f(ay)}, {_f(height)}) and ({_f(bx)}, {_f(by)}, {_f(height)}) at {_f(speed)} m/s, "
        "starting at the first point when the game starts and turning at each end (a mover, "
        f"world.mover(...)). The verifier plays the level for 8 s and checks every frame. "
        f"{CONVENTIONS}"
    )
    lo_x, hi_x = min(ax, bx) - 3, max(ax, bx) + 3
    lo_y, hi_y = min(ay, by) - 3, max(ay, by) + 5
    return Spec(
        "platform",
        "logic",
        level,
        tuple(constraints),
        8.0,
        4.0,
        prompt,
        reference,
        tuple(calls),
        trajectories=({"path": aside, "speed": 1.0},),
        bounds=(lo_x, lo_y, hi_x, hi_y),
    )


def spawner(p: Mapping[str, Any]) -> Spec:
    what, n, interval = str(p["asset"]), int(p["count"]), float(p["interval"])
    x, y, z = float(p["x"]), float(p["y"]), float(p["z"])
    level = new_level()
    add_object(level, "floor_tile_1", "floor_tile", (x, y, 0.025))
    calls = [tool_call("add_spawner", asset=what, x=x, y=y, z=z, interval=interval, count=n)]
    reference = (
        f"world.spawner({what!r}, ({x!r}, {y!r}, {z!r}), interval={interval!r}, count={n})\n"
    )
    seconds = round(min(interval * (n + 2), 10.0), 2)
    constraints = [
        {
            "kind": "spawner",
            "asset": what,
            "pos": [x, y, z],
            "interval": interval,
            "count": n,
            "weight": 1.0,
        },
    ]
    prompt = (
        f"Game logic: a spawner at ({_f(x)}, {_f(y)}, {_f(z)}) must emit {n} {what} objects, one "
        f"every {_f(interval)} s, the first {_f(interval)} s after the game starts, and then stop "
        f"(world.spawner(...), or timers). The verifier plays the level for {_f(seconds)} s "
        f"and counts them. {CONVENTIONS}"
    )
    return Spec(
        "spawner",
        "logic",
        level,
        tuple(constraints),
        seconds,
        seconds,
        prompt,
        reference,
        tuple(calls),
        trajectories=({"path": [[x, y + 5, 0.9]], "speed": 1.0},),
        bounds=(x - 4, y - 4, x + 4, y + 4),
    )


# -- parameters ---------------------------------------------------------------------------------


def _draw(template: str, rng: random.Random) -> dict[str, Any]:
    """Parameters of ``template`` drawn from ``rng`` (ranges in which the reference works)."""
    u = rng.uniform
    room = {
        "room_w": rng.choice([6.0, 7.0, 8.0]),
        "room_d": rng.choice([6.0, 7.0]),
        "door_x": round(u(-1.5, 1.5), 1),
    }
    if template == "dining":
        return room | {
            "table_x": round(u(-0.8, 0.8), 1),
            "table_y": round(u(0.0, 0.8), 1),
            "chairs": rng.randint(2, 6),
        }
    if template == "storage":
        wall = rng.choice(["north", "east", "west"])
        return room | {"wall": wall, "crates": rng.randint(1, 3), "along": round(u(-1.5, -0.5), 1)}
    if template == "table_top":
        return room | {
            "table_x": round(u(-0.8, 0.8), 1),
            "table_y": round(u(0.0, 0.8), 1),
            "crates": rng.randint(1, 3),
        }
    if template == "stack":
        crates = rng.randint(2, 5)  # overhangs well inside the balance limit 0.5 m / crates
        overhang = rng.choice([0.0, 0.0, 0.03, 0.05, 0.08])
        return {
            "crates": crates,
            "x": round(u(-2, 2), 1),
            "y": round(u(-2, 2), 1),
            "overhang": min(overhang, round(0.3 / crates, 2)),
        }
    if template == "roll":
        return {
            "goal_x": round(u(2, 5), 1) * rng.choice([-1, 1]),
            "goal_y": round(u(-3, 3), 1),
            "seconds": rng.choice([3.0, 4.0]),
        }
    if template == "ramp_jump":
        return {"wall_x": round(u(2.0, 3.5), 1), "speed": rng.choice([5.5, 6.0, 6.5])}
    if template == "dominoes":
        count = rng.randint(5, 12)
        return {
            "count": count,
            "x": round(u(-2, 2), 1),
            "length": round((count - 1) * u(0.2, 0.3), 2),
        }
    if template == "door":
        return {
            "zone_x": round(u(-2, 2), 1),
            "zone_y": round(u(-2, 2), 1),
            "zone_size": rng.choice([1.0, 1.5, 2.0]),
            "door_x": round(u(-3, 3), 1),
            "door_y": round(u(3, 4), 1),
            "trajectory_seed": rng.randrange(10**6),
        }
    if template == "coins":
        return {
            "coins": rng.randint(3, 6),
            "spacing": rng.choice([0.8, 1.0, 1.2]),
            "trajectory_seed": rng.randrange(10**6),
        }
    if template == "platform":
        ax, ay = round(u(-2, 0), 1), round(u(-2, 2), 1)
        return {
            "ax": ax,
            "ay": ay,
            "bx": round(ax + u(1.5, 3), 1),
            "by": ay,
            "height": round(u(0.2, 1.0), 1),
            "speed": rng.choice([0.5, 1.0, 1.5]),
        }
    return {
        "asset": rng.choice(["ball", "crate", "coin"]),
        "count": rng.randint(2, 6),
        "interval": rng.choice([0.5, 1.0]),
        "x": round(u(-2, 2), 1),
        "y": round(u(-2, 2), 1),
        "z": 2.0,
    }


def _template(name: str, kind: str, build: Any, difficulty: int, summary: str) -> Template:
    return Template(name, kind, build, functools.partial(_draw, name), difficulty, summary)


FAMILY_GROUP = (
    _template("dining", "layout", dining, 3, "a table and chairs facing it, with a walkway"),
    _template("storage", "layout", storage, 2, "a shelf and crates against one wall"),
    _template("table_top", "layout", table_top, 2, "crates on a table, a chair facing it"),
    _template("stack", "physics", stack, 2, "a stack of crates that stands, overhangs given"),
    _template("roll", "physics", roll, 1, "a ball's push that rolls it into a goal"),
    _template("ramp_jump", "physics", ramp_jump, 3, "a ramp that jumps a ball over a wall"),
    _template("dominoes", "physics", dominoes, 2, "a line of dominoes that all fall"),
    _template("door", "logic", door, 2, "a zone that opens a door for the player only"),
    _template("coins", "logic", coins, 3, "coins that vanish and count when touched"),
    _template("platform", "logic", platform, 1, "a platform moving back and forth"),
    _template("spawner", "logic", spawner, 1, "a spawner emitting a number of things"),
)
