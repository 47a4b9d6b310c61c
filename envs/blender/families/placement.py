"""Placement edits, said in any style of the phrase bank: line objects up in a row, stack them on
a table and on each other, turn chairs about Z to face a table, each other or a point.

Lengths in metres, angles in degrees about Z (counter-clockwise seen from above); Z is up and
the floor is z = 0. Objects are Blender primitives standing on the floor, and a table and chairs
joined from boxes (a table's origin is the middle of its top slab; a chair's the middle of its
seat, its front toward -Y at 0°, its back toward +Y). The verifier matches each goal mesh by
name and compares its world vertices (so a turn, a place and a height all count); the prompts
give every target (points, offsets, spacings) and leave what stays unsaid as it was.
"""

from __future__ import annotations

import math

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

# The loose objects: kind, size (m), depth (m; 0: the size) and height (m).
PROPS = {
    "Ball": ("uv_sphere", 0.5, 0.0, 0.5),
    "Block": ("cube", 0.4, 0.0, 0.4),
    "Cone": ("cone", 0.5, 0.8, 0.8),
    "Crate": ("cube", 0.6, 0.0, 0.6),
    "Drum": ("cylinder", 0.5, 0.7, 0.7),
}


def _prop(name: str, x: float, y: float, z: float | None = None) -> Call:
    """``name`` (one of :data:`PROPS`) centred at ``(x, y)``, standing on the floor (or with its
    centre at height ``z``)."""
    kind, size, depth, height = PROPS[name]
    args = {"kind": kind, "name": name, "size": size, "x": x, "y": y}
    args |= {"z": height / 2 if z is None else z} | ({"depth": depth} if depth else {})
    return ("add_primitive", args)


def _boxes(name: str, parts: list[tuple[tuple[float, ...], tuple[float, ...]]]) -> list[Call]:
    """One mesh object ``name`` joined from boxes, each ``(size, centre)`` (m); the first box's
    centre is the object's origin."""
    calls: list[Call] = []
    for k, (size, at) in enumerate(parts):
        part = name if k == 0 else f"{name}Part{k}"
        x, y, z = (snap(v, 0.001) for v in at)
        sx, sy, sz = (snap(v, 0.001) for v in size)
        calls += [
            ("add_primitive", {"kind": "cube", "name": part, "size": 1.0, "x": x, "y": y, "z": z}),
            ("set_scale", {"name": part, "x": sx, "y": sy, "z": sz}),
        ]
        if k:
            calls.append(("join_objects", {"name": name, "other": part}))
    return calls


TABLE_TOP, TABLE_LEG = 0.05, 0.06  # m: a table's top slab is this thick, its legs this square


def _table(at: tuple[float, float], width: float, depth: float, height: float) -> list[Call]:
    """A table called Table: a top slab (origin: its middle) on four square legs at the corners,
    its top face ``height`` above the floor."""
    x, y = at
    parts = [((width, depth, TABLE_TOP), (x, y, height - TABLE_TOP / 2))]
    lx, ly, leg = width / 2 - TABLE_LEG / 2, depth / 2 - TABLE_LEG / 2, height - TABLE_TOP
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        parts.append(((TABLE_LEG, TABLE_LEG, leg), (x + sx * lx, y + sy * ly, leg / 2)))
    return _boxes("Table", parts)


SEAT_HEIGHT, SEAT, CHAIR_WIDTH = 0.45, 0.05, 0.45  # m


def _chair(name: str, at: tuple[float, float], heading: float) -> list[Call]:
    """A chair: a seat (origin: its middle, ``SEAT_HEIGHT`` up) on four legs with a back on its
    +Y side, so it faces -Y at 0°; turned ``heading`` degrees about Z."""
    x, y = at
    half, leg = CHAIR_WIDTH / 2, 0.04
    parts = [((CHAIR_WIDTH, CHAIR_WIDTH, SEAT), (x, y, SEAT_HEIGHT - SEAT / 2))]
    parts.append(((CHAIR_WIDTH, 0.05, 0.45), (x, y + half - 0.025, SEAT_HEIGHT + 0.225)))
    low = SEAT_HEIGHT - SEAT
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        at_leg = (x + sx * (half - leg / 2), y + sy * (half - leg / 2), low / 2)
        parts.append(((leg, leg, low), at_leg))
    return [*_boxes(name, parts), _turn(name, heading)]


def _turn(name: str, heading: float) -> Call:
    return ("set_rotation", {"name": name, "x": 0.0, "y": 0.0, "z": heading})


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _scatter(
    rng: np.random.Generator, count: int, reach: float, apart: float
) -> list[tuple[float, float]]:
    """``count`` points on a 0.1 m grid in ``[-reach, reach]²``, at least ``apart`` apart."""
    found: list[tuple[float, float]] = []
    while len(found) < count:
        x, y = (snap(v, 0.1) for v in rng.uniform(-reach, reach, 2))
        if all(math.hypot(x - a, y - b) >= apart for a, b in found):
            found.append((x, y))
    return found


def _conventions(s: Phrases, origin: str) -> str:
    """The relative placement convention and what a named object's centre is."""
    return (
        f"{s.w('as seen from the front')} (from -Y, Z up), left, right, in front of and behind "
        f"are -X, +X, -Y and +Y; {s.w('offsets')} are between centres, and {origin}"
    )


# -- line_up -------------------------------------------------------------------------------------


def _line_up(rng: np.random.Generator) -> Drawn:
    """Three to five objects, scattered and turned about Z, lined up in a drawn order along +X
    or +Y: the first's centre at a point, the next ones a spacing further each, every one
    turned back to 0° and standing on the floor as before."""
    count = int(rng.integers(3, 6))
    names = [str(n) for n in rng.choice(list(PROPS), count, replace=False)]
    scattered = _scatter(rng, count, 2.5, 1.0)
    headings = [float(rng.choice([-60, -45, -30, -15, 15, 30, 45, 60])) for _ in names]
    start: list[Call] = []
    for name, (x, y), heading in zip(sorted(names), scattered, headings, strict=True):
        start += [_prop(name, x, y), _turn(name, heading)]
    axis = str(rng.choice(["x", "y"]))
    spacing = snap(rng.uniform(0.8, 1.2), 0.1)
    along = snap(rng.uniform(-1.0, 1.0) - (count - 1) * spacing / 2, 0.1)  # the row's middle
    # within 1 m of the origin
    across = snap(rng.uniform(-1.5, 1.5), 0.1)
    calls: list[Call] = []
    for k, name in enumerate(names):
        where = {axis: snap(along + k * spacing, 0.001), ("y" if axis == "x" else "x"): across}
        calls += [
            ("set_location", {"name": name, "x": where["x"], "y": where["y"],
                              "z": PROPS[name][3] / 2}),
            _turn(name, 0.0),
        ]  # fmt: skip
    first = (along, across) if axis == "x" else (across, along)

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('line up')} {_listed(names)} in a row {s.w('along +' + axis.upper())}, in "
            f"that order",
            f"the {s.w('first one')} ({names[0]}) {s.w('has its centre')} {s.place(*first)}, and "
            f"{s.w('each next one')} is {s.len(spacing)} further along ({s.w('centre to centre')})",
            f"{s.w('every one')} {s.w('stays standing on the floor')} as it does now, "
            f"{s.w('turned back')} to {s.deg(0)} {s.w('about Z')}",
        ]

    parameters = {"objects": count, "axis": axis, "spacing": spacing, "first": list(first)}
    return Drawn(text, start, calls, parameters, 2 if count == 3 else 3)


# -- stack_on ------------------------------------------------------------------------------------

# What can sit on the table, and what can sit on top of it (flat tops only).
STACKED = ("Block", "Crate", "Drum")
ON_TOP = ("Ball", "Block", "Cone")


def _stack_on(rng: np.random.Generator) -> Drawn:
    """One or two objects put on Table's top, their centres at drawn offsets from Table's; on
    half the seeds one more on top of one of them, centred on it. Each rests on what carries
    it, unturned."""
    width, depth = snap(rng.uniform(1.4, 1.8), 0.1), snap(rng.uniform(0.7, 0.9), 0.1)
    height = snap(rng.uniform(0.7, 0.8))
    table = (snap(rng.uniform(-1.0, 1.0), 0.1), snap(rng.uniform(0.0, 1.0), 0.1))
    below = [str(n) for n in rng.choice(STACKED, int(rng.integers(1, 3)), replace=False)]
    above = [str(n) for n in ON_TOP if n not in below]
    topped = str(rng.choice(above)) if rng.random() < 0.5 else None
    placed: list[tuple[str, float, float]] = []  # name and offset from Table's centre
    for k, name in enumerate(below):
        half = PROPS[name][1] / 2
        reach_x, reach_y = width / 2 - half - 0.05, max(depth / 2 - half - 0.05, 0.0)
        if len(below) == 1:
            ox = snap(rng.uniform(-reach_x, reach_x))
        else:  # one on each side of the middle, clear of each other
            side = -1 if k == 0 else 1
            ox = side * snap(rng.uniform(max(half + 0.05, 0.25), reach_x))
        oy = snap(rng.uniform(-reach_y, reach_y))
        if ox == 0 and oy == 0:
            ox = 0.1
        placed.append((name, ox, oy))
    loose = [*below, *([topped] if topped else [])]
    start = _table(table, width, depth, height)
    for k, name in enumerate(sorted(loose)):
        start.append(_prop(name, -1.2 + 1.2 * k, -1.5))
    calls: list[Call] = []
    tops = {}
    for name, ox, oy in placed:
        x, y = snap(table[0] + ox, 0.001), snap(table[1] + oy, 0.001)
        z = snap(height + PROPS[name][3] / 2, 0.001)
        tops[name] = (x, y, height + PROPS[name][3])
        calls.append(("set_location", {"name": name, "x": x, "y": y, "z": z}))
    base = str(rng.choice(below))
    if topped:
        x, y, top = tops[base]
        z = snap(top + PROPS[topped][3] / 2, 0.001)
        calls.append(("set_location", {"name": topped, "x": x, "y": y, "z": z}))

    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('put')} {_listed(below)} on Table, {s.w('every one')} "
            f"{s.w('resting on')} Table's top "
            f"({s.len(height)} {s.w('above the floor')}) and {s.w('unturned')}",
        ]
        for name, ox, oy in placed:
            at = s.place(table[0] + ox, table[1] + oy, anchor=("Table", table))
            said.append(f"{name} {s.w('sits')} with its centre {at}")
        if topped:
            said.append(
                f"{s.w('then')} {s.w('put')} {topped} on top of {base}, {s.w('resting on')} it "
                f"and {s.w('centred on it')}, {s.w('unturned')}"
            )
        said.append(_conventions(s, f"Table's centre is {s.w('the middle of its top')}"))
        return said

    parameters = {"table": list(table), "on_table": below, "on_top": topped}
    return Drawn(text, start, calls, parameters, 2 + (len(loose) > 2))


# -- turn_to_face --------------------------------------------------------------------------------


def _facing(at: tuple[float, float], target: tuple[float, float]) -> float:
    """The heading (deg, about Z) that turns a front at -Y from ``at`` toward ``target``."""
    return round(math.degrees(math.atan2(target[0] - at[0], at[1] - target[1])), 2) + 0.0


def _turn_to_face(rng: np.random.Generator) -> Drawn:
    """Two to four chairs around Table, each turned about Z, in place, to face Table's centre;
    on some seeds two of them face each other instead, or the last faces a given point."""
    count = int(rng.integers(2, 5))
    table = (snap(rng.uniform(-0.5, 0.5), 0.1), snap(rng.uniform(-0.5, 0.5), 0.1))
    width, depth = snap(rng.uniform(1.0, 1.4), 0.1), snap(rng.uniform(0.6, 0.8), 0.1)
    names = [f"Chair{k + 1}" for k in range(count)]
    angles = rng.permutation(6)[:count] * 60.0 + rng.uniform(-10.0, 10.0, count)
    radii = rng.uniform(1.3, 1.9, count)
    seats = [
        (snap(table[0] + r * math.cos(math.radians(a)), 0.1),
         snap(table[1] + r * math.sin(math.radians(a)), 0.1))
        for a, r in zip(angles, radii, strict=True)
    ]  # fmt: skip
    targets: dict[str, tuple[float, float]] = dict.fromkeys(names, table)
    pair = count >= 2 and rng.random() < 0.4
    if pair:
        targets[names[0]], targets[names[1]] = seats[1], seats[0]
    point = None
    if (count >= 3 or not pair) and rng.random() < 0.5:
        while point is None or math.dist(point, seats[-1]) < 1.0:
            point = (snap(table[0] + rng.uniform(-2.5, 2.5), 0.1),
                     snap(table[1] + rng.uniform(-2.5, 2.5), 0.1))  # fmt: skip
        targets[names[-1]] = point
    goals = {n: _facing(at, targets[n]) for n, at in zip(names, seats, strict=True)}
    start = _table(table, width, depth, 0.75)
    for name, at in zip(names, seats, strict=True):
        heading = goals[name] + float(rng.choice([-1, 1])) * snap(rng.uniform(30, 150), 15)
        start += _chair(name, at, snap((heading + 180) % 360 - 180, 15))
    calls: list[Call] = [_turn(name, goals[name]) for name in names]
    at_table = [n for n in names if targets[n] == table]

    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('turn')} {_listed(names)} {s.w('about Z')}, {s.w('each in place')}, "
            f"{s.w('as follows')}",
        ]
        if len(at_table) == 1:
            said.append(f"{at_table[0]} {s.w('faces')} Table's centre")
        elif at_table:
            said.append(f"{_listed(at_table)} {s.w('each face')} Table's centre")
        if pair:
            said.append(f"{names[0]} and {names[1]} {s.w('face each other')}")
        if point is not None:
            at = s.place(*point, anchor=("Table", table))
            said.append(f"{names[-1]} {s.w('faces')} the point {s.w('on the floor')} {at}")
        said.append(
            f"a chair's {s.w('front')} is its -Y side at {s.deg(0)} (its back toward +Y), a "
            f"positive turn is {s.w('counter-clockwise')} seen from above, and a chair faces a "
            f"point when its {s.w('front')} points from its origin ({s.w('the seat middle')}) "
            f"straight at it"
        )
        said.append(_conventions(s, f"Table's centre is {s.w('the middle of its top')}"))
        return said

    parameters = {"chairs": count, "pair": pair, "point": list(point) if point else None}
    return Drawn(text, start, calls, parameters, 2 if count == 2 else 3)


WORDS = {
    "line up": ("line up", "arrange", "set out"),
    "along +X": ("along +X", "in the +X direction", "running toward +X"),
    "along +Y": ("along +Y", "in the +Y direction", "running toward +Y"),
    "first one": ("first one", "first object", "leading item"),
    "has its centre": ("has its centre", "is centred", "sits with its middle"),
    "each next one": ("each next one", "every following one", "each successor"),
    "centre to centre": ("centre to centre", "between centres", "middle to middle"),
    "stays standing on the floor": (
        "stays standing on the floor",
        "keeps resting on the floor",
        "remains on the ground",
    ),
    "turned back": ("turned back", "rotated back", "reset"),
    "put": ("put", "place", "set"),
    "resting on": ("resting on", "sitting on", "bearing on"),
    "unturned": ("unturned", "not rotated", "with its rotation unchanged"),
    "sits": ("sits", "stands", "rests"),
    "every one": ("each", "every one", "each of them"),
    "then": ("then", "after that", "next"),
    "centred on it": ("centred on it", "centred over it", "middle over middle"),
    "the middle of its top": ("the middle of its top", "its top's centre", "the top slab's middle"),
    "as seen from the front": (
        "as seen from the front",
        "viewed from the front",
        "from a front view",
    ),
    "offsets": ("offsets", "distances", "displacements"),
    "each in place": ("each in place", "each where it stands", "none of them moved"),
    "as follows": ("as follows", "as the next sentences say", "in the way set out below"),
    "faces": ("faces", "looks toward", "points its front at"),
    "each face": ("each face", "each look toward", "point their fronts at"),
    "face each other": (
        "face each other",
        "look at each other",
        "point their fronts at one another",
    ),
    "on the floor": ("on the floor", "on the ground plane", "at floor level"),
    "front": ("front", "front side", "facing side"),
    "counter-clockwise": ("counter-clockwise", "anticlockwise", "against the clock"),
    "the seat middle": ("the seat's middle", "the seat centre", "mid-seat"),
}

FAMILY_GROUP = (
    Family(
        "line_up",
        "placement",
        _line_up,
        "line up three to five scattered objects along an axis at a spacing",
        words=WORDS,
    ),
    Family(
        "stack_on",
        "placement",
        _stack_on,
        "put objects on a table at offsets from it, and one on top of another",
        words=WORDS,
    ),
    Family(
        "turn_to_face",
        "placement",
        _turn_to_face,
        "turn chairs about Z to face a table, each other or a point",
        words=WORDS,
    ),
)
