"""Rooms a level designer furnishes: a classroom, a reading corner, a warehouse, a lounge and a
corridor, each said in any style of the phrase bank, with edit tasks that start from a furnished
room.

Conventions as in the runtime (metres, degrees, Z up; the room centred on the origin, its doorway
in the south wall, 1 m wide; positions are bounding-box centres; at heading 0 a thing's front
faces +Y). Things come from the catalogue: the table (1.6 × 0.9 × 0.75 m, its long side along X at
heading 0), the chair (0.45 m square, its seat open to its front), the crate (a 0.5 m cube) and
the shelf (1 × 0.4 × 1.8 m, open to its front). A thing placed "against" a wall stands 2 cm off
it (the rule allows 0.1 m); a chair that faces something is turned to the centre of it (the rule
allows 30°).

The families and what each draws (lengths in m):

- ``classroom``: a 7-8 m square room; the teacher's table against the north wall, centred at
  x ∈ [-0.5, 0.5]; 2-3 rows of 2-4 pupils' chairs (rows 1-1.2 apart, chairs 0.8-1 apart), half
  each side of an aisle on the table's axis (the nearest chairs 0.7-1.2 from it), the front row
  1.2-1.5 from the table; every chair turned to face the table.
- ``reading_corner``: a 5.5-6.5 m room; a shelf against the north, east or west wall; a chair
  0.5-0.7 in front of it facing it; a table beside the chair (0.1-0.2 from it, on its left or
  right), its long side along the wall.
- ``warehouse``: an 8-10 × 7-9 m room; a shelf against the back (north) wall; 2-3 rows of 2-4
  crates in a grid 0.9-1.2 apart in the west or east half, the doorway in the other half.
- ``lounge``: a 6-8 m room; a table near the middle, its long side along X; 3-6 chairs on a
  ring of radius 1.4-1.9 round it, evenly spaced from due south, each facing it.
- ``corridor``: a 3-3.5 m wide, 8-10 m long room; 3-5 crates against one long wall and 2-4
  chairs against the other (facing into the corridor), in rows along Y 0.6-1 apart; a shelf at
  the far (north) end.

The relative styles place things from a named thing ("1.5 m in front of table_1", "2 m behind
the doorway"); their prompts say how (:func:`relative_said`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolgym.envs.scene.families.model import (
    WALLS,
    Edit,
    Spec,
    Template,
    call_script,
    common_layout,
    layout_rules_said,
    new_level,
    on_floor,
    room_said,
    said,
    tool_call,
)
from toolgym.envs.scene.families.phrases import Phrases, get_style
from toolgym.envs.scene.relations import Phrase

FACING_DEG = 30  # the ``facing`` rule's tolerance, as the prompts state it
WALL_GAP = 0.1  # ``against_wall``: a back this close to its wall (the prompts say so)
OFF_WALL = 0.02  # how far the references stand things off their walls
CHAIR = 0.45  # the chair's footprint (a square), m
SHELF_DEPTH = 0.4
TABLE_L, TABLE_W = 1.6, 0.9
CRATE = 0.5

# -- shared pieces ---------------------------------------------------------------------------------


def _r(value: float) -> float:
    """A coordinate as the prompt and the reference both give it (mm; no ``-0``)."""
    return round(value, 3) + 0.0


def _heading_to(x: float, y: float, tx: float, ty: float) -> float:
    """The heading (degrees) that turns a thing at (x, y) to face (tx, ty): its front, which
    faces (-sin h, cos h), points at the target."""
    heading = round(math.degrees(math.atan2(-(tx - x), ty - y)), 1) + 0.0
    return 180.0 if heading == -180.0 else heading


def _spawn(asset: str, x: float, y: float, heading: float = 0.0) -> dict[str, Any]:
    if heading:
        return tool_call("spawn", asset=asset, x=_r(x), y=_r(y), heading=heading)
    return tool_call("spawn", asset=asset, x=_r(x), y=_r(y))


def _listed(s: Phrases, values: Sequence[float]) -> str:
    """Lengths as a list: "1 m, 2 m and 3 m"."""
    said_ = [s.len(v) for v in values]
    return said_[0] if len(said_) == 1 else ", ".join(said_[:-1]) + " and " + said_[-1]


def _relative(p: Mapping[str, Any]) -> bool:
    """Whether the parameters' style places things relative to named things."""
    return get_style(str(p.get("style", "spec"))).points == "relative"


def relative_said(s: Phrases) -> str:
    """How a relative style's "left of", "behind"... read (``RELATIVE_CONVENTION``, in the
    style's words), for the prompts that place things relative to named things."""
    return (
        f"{s.w('-x')}, {s.w('+x')}, {s.w('-y')} and {s.w('+y')} a {s.w('named thing')} are as "
        f"seen from the front (from -Y, Z up): -X, +X, -Y and +Y"
    )


def _with_relative(p: Mapping[str, Any], sentences: list[str], s: Phrases) -> list[str]:
    return [*sentences, relative_said(s)] if _relative(p) else sentences


def _spec(
    name: str,
    p: Mapping[str, Any],
    constraints: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    text: Callable[[Phrases], list[str]],
    words: Mapping[str, tuple[str, str, str]],
) -> Spec:
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    return Spec(
        name,
        "layout",
        new_level((w, d, door_x)),
        tuple(constraints),
        2.0,
        0.5,
        said(p, text, words),
        call_script(calls),
        tuple(calls),
        bounds=(-w / 2, -d / 2, w / 2, d / 2),
    )


def _near(asset: str, x: float, y: float) -> dict[str, Any]:
    return {"kind": "near", "asset": asset, "x": _r(x), "y": _r(y), "weight": 1.0}


def _count(asset: str, n: int) -> dict[str, Any]:
    return {"kind": "count", "asset": asset, "n": n, "weight": 1.0}


def _against(asset: str, wall: str, facing: bool = True) -> dict[str, Any]:
    found = {"kind": "against_wall", "asset": asset, "wall": wall, "gap": WALL_GAP, "weight": 1.0}
    return found if facing else {**found, "facing": False}


def _facing(asset: str, other: str) -> dict[str, Any]:
    return {"kind": "facing", "asset": asset, "other": other, "tol_deg": FACING_DEG, "weight": 1.0}


def _aligned_table(heading: float) -> dict[str, Any]:
    what = "its long side along X" if heading == 0 else "its long side along Y"
    return {
        "kind": "aligned",
        "asset": "table",
        "heading": heading,
        "period": 180.0,
        "what": what,
        "weight": 1.0,
    }


def _turned_last(task: Any, asset: str, turn: float) -> str:
    """The reference with the last ``asset`` it placed turned ``turn`` degrees further."""
    return (
        f"{task.reference.rstrip()}\n"
        f"_last = [o for o in world.objects.values() if not o.level and o.asset == {asset!r}][-1]\n"
        f"_last.set_hpr((_last.hpr[0] + {turn}, 0, 0))\n"
    )


def _shifted_last(task: Any, asset: str, dx: float, dy: float) -> str:
    """The reference with the last ``asset`` it placed moved by (dx, dy)."""
    return (
        f"{task.reference.rstrip()}\n"
        f"_last = [o for o in world.objects.values() if not o.level and o.asset == {asset!r}][-1]\n"
        "x, y, z = _last.pos\n"
        f"_last.set_pos((x + {dx!r}, y + {dy!r}, z))\n"
    )


def _in_range(rng: random.Random, lo: float, hi: float) -> float:
    """A value on the 0.1 grid inside [lo, hi] (``lo`` rounded up, ``hi`` down)."""
    lo, hi = math.ceil(lo * 10 - 1e-9) / 10, math.floor(hi * 10 + 1e-9) / 10
    return round(lo + rng.randint(0, max(0, round((hi - lo) * 10))) / 10, 1) + 0.0


#: Words every family of this module uses (each family adds its own).
COMMON = {
    "furnish": ("furnish", "fit out", "equip"),
    "rearrange": ("rearrange", "redo", "reorganise"),
    "relocate": ("relocate", "shift", "transfer"),
    "wider": ("widen", "broaden", "enlarge"),
    "narrower": ("narrow", "tighten", "shrink"),
    "named thing": ("named thing", "named object", "thing called by name"),
}

_NUMBER = r"-?\d+(?:\.\d+)?"
_LIST = rf"{_NUMBER} m(?:(?:, | and ){_NUMBER} m)*"
_AT = rf"at \({_NUMBER}, {_NUMBER}\) m"
_SHELF = (  # a shelf against a wall, named or not, at the back or the far end or not
    r"one shelf (?:\(shelf_1\) )?(?:at the (?:back|far end), )?against the "
    r"(north|south|east|west) wall \(its back within ([\d.]+) m of the wall, its open front "
    r"facing into the room\)"
)


def _shelf_needs(m: Any) -> list[dict[str, Any]]:
    return [
        {"kind": "count", "asset": "shelf", "n": 1},
        {"kind": "against_wall", "asset": "shelf", "wall": m[1], "gap": float(m[2])},
    ]


SHELF_PHRASES = (
    Phrase(rf"{_SHELF}, centred at x = {_NUMBER} m", lambda m: [
        *_shelf_needs(m), {"kind": "near", "asset": "shelf"}
    ]),
    Phrase(_SHELF, _shelf_needs),
)  # fmt: skip


# -- classroom -------------------------------------------------------------------------------------


def _table_y(p: Mapping[str, Any]) -> float:
    """The teacher's table's centre: 2 cm off the north wall."""
    return _r(float(p["room_d"]) / 2 - TABLE_W / 2 - OFF_WALL)


def _class_rows(p: Mapping[str, Any]) -> list[float]:
    front = _table_y(p) - TABLE_W / 2 - float(p["front"])
    return [_r(front - k * float(p["row_gap"])) for k in range(int(p["rows"]))]


def _class_columns(p: Mapping[str, Any]) -> list[float]:
    tx, half, gap, k = (float(p["table_x"]), float(p["aisle"]), float(p["seat_gap"]),
                        int(p["per_side"]))  # fmt: skip
    right = [half + i * gap for i in range(k)]
    return [_r(tx - v) for v in reversed(right)] + [_r(tx + v) for v in right]


def _pupils_said(s: Phrases, p: Mapping[str, Any]) -> str:
    """The pupils' chairs: how many, in what rows, facing what."""
    rows, columns = _class_rows(p), _class_columns(p)
    return (
        f"{s.count(len(rows) * len(columns))} {s.w('chairs')} for the {s.w('pupils')} in "
        f"{s.count(len(rows))} rows of {s.count(len(columns))}, each facing the {s.w('table')}'s "
        f"centre (within {s.deg(FACING_DEG)}): the rows at y = {_listed(s, rows)}, and in each "
        f"row the {s.w('chairs')} at x = {_listed(s, columns)}, {s.count(int(p['per_side']))} "
        f"{s.w('each side')} of an aisle at x = {s.len(float(p['table_x']))}"
    )


def classroom(p: Mapping[str, Any]) -> Spec:
    """Rows of pupils' chairs, all facing the teacher's table at the north wall, an aisle down
    the middle (``p``: room, table x, rows, chairs each side, their gaps; m)."""
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    tx, ty = float(p["table_x"]), _table_y(p)
    seats = [(x, y) for y in _class_rows(p) for x in _class_columns(p)]
    calls = [_spawn("table", tx, ty)]
    calls += [_spawn("chair", x, y, _heading_to(x, y, tx, ty)) for x, y in seats]
    constraints = [
        _count("table", 1),
        _near("table", tx, ty),
        _aligned_table(0.0),
        _against("table", "north", facing=False),
        _count("chair", len(seats)),
        *(_near("chair", x, y) for x, y in seats),
        _facing("chair", "table"),
        *common_layout(w, d, door_x, "table"),
        *on_floor("table", "chair"),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('furnish')} a {s.w('classroom')}",
            room_said(s, w, d, door_x),
            f"{s.w('put')} one table, the {s.w('teacher')}'s desk (table_1), against the north "
            f"wall (within {s.len(WALL_GAP)} of it), its long side along X, centred at x = "
            f"{s.len(tx)}",
            f"{s.w('put')} {_pupils_said(s, p)}",
            *layout_rules_said(s, "table"),
        ]

    return _spec("classroom", p, constraints, calls, text, CLASSROOM_WORDS)


def _classroom_draw(rng: random.Random) -> dict[str, Any]:
    w = rng.choice([7.0, 8.0])
    return {
        "room_w": w,
        "room_d": rng.choice([7.0, 8.0]),
        "door_x": _in_range(rng, -w / 2 + 1, w / 2 - 1),
        "table_x": _in_range(rng, -0.5, 0.5),
        "rows": rng.randint(2, 3),
        "per_side": rng.randint(1, 2),
        "row_gap": rng.choice([1.0, 1.1, 1.2]),
        "seat_gap": rng.choice([0.8, 0.9, 1.0]),
        "aisle": rng.choice([0.7, 0.8, 1.1, 1.2]),  # the nearest chairs' centres from the axis
        "front": rng.choice([1.2, 1.5]),  # the table's front edge to the front row's centres
    }


def _classroom_rows(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A row more (two rows) or fewer (three): the chair count changes."""
    return {**before, "rows": 5 - int(before["rows"])}


def _classroom_rows_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        return [f"{s.w('rearrange')} the {s.w('seating')}: {_pupils_said(s, after)}"]

    return text


def _classroom_aisle(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The aisle 0.8 m wider or narrower: every chair 0.4 m along X, past ``near``'s 0.3 m."""
    half = float(before["aisle"])
    return {**before, "aisle": round(half + 0.4 if half < 1.0 else half - 0.4, 1)}


def _classroom_aisle_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    wider = float(after["aisle"]) > float(before["aisle"])

    def text(s: Phrases) -> list[str]:
        verb = s.w("wider" if wider else "narrower")
        return [f"{verb} the aisle, so that the {s.w('seating')} is {_pupils_said(s, after)}"]

    return text


def classroom_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the last chair turned 5° past "facing"."""
    return _turned_last(task, "chair", FACING_DEG + 5)


CLASSROOM_WORDS = {
    **COMMON,
    "classroom": ("classroom", "schoolroom", "teaching room"),
    "teacher": ("teacher", "instructor", "lecturer"),
    "pupils": ("pupils", "students", "class"),
    "each side": ("each side", "on either side", "to each flank"),
    "seating": ("seating", "seats", "seating plan"),
}

CLASSROOM_RELATIONS = (
    Phrase(
        r"one table, the teacher's desk \(table_1\), against the north wall \(within ([\d.]+) m "
        rf"of it\), its long side along X, centred at x = {_NUMBER} m",
        lambda m: [
            {"kind": "count", "asset": "table", "n": 1},
            {"kind": "against_wall", "asset": "table", "wall": "north", "gap": float(m[1])},
            {"kind": "aligned", "asset": "table", "heading": 0.0, "period": 180.0},
            {"kind": "near", "asset": "table"},
        ],
    ),
    Phrase(
        r"(\d+) chairs for the pupils in \d+ rows of \d+, each facing the table's centre "
        rf"\(within (\d+)°\): the rows at y = {_LIST}, and in each row the chairs at x = {_LIST}, "
        rf"\d+ each side of an aisle at x = {_NUMBER} m",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": int(m[1])},
            {"kind": "near", "asset": "chair"},
            {"kind": "facing", "asset": "chair", "other": "table", "tol_deg": int(m[2])},
        ],
    ),
)


# -- reading corner --------------------------------------------------------------------------------


def _corner(p: Mapping[str, Any]) -> dict[str, Any]:
    """The reading corner's pieces: the shelf's, chair's and table's centres and headings."""
    w, d, wall = float(p["room_w"]), float(p["room_d"]), str(p["wall"])
    face, normal, shelf_heading = WALLS[wall]
    inner, along = face(w, d), float(p["along"])

    def out(metres: float) -> tuple[float, float]:  # this far from the wall, into the room
        if normal[1]:
            return along, inner - normal[1] * metres
        return inner - normal[0] * metres, along

    shelf = out(SHELF_DEPTH / 2 + OFF_WALL)
    chair = out(SHELF_DEPTH + OFF_WALL + float(p["clear"]) + CHAIR / 2)
    ax, ay = abs(normal[1]), abs(normal[0])  # along the wall
    step = int(p["side"]) * (CHAIR / 2 + float(p["table_gap"]) + TABLE_L / 2)
    table = (chair[0] + ax * step, chair[1] + ay * step)
    return {
        "shelf": tuple(map(_r, shelf)),
        "shelf_heading": shelf_heading,
        "chair": tuple(map(_r, chair)),
        "chair_heading": _heading_to(*chair, *shelf),
        "table": tuple(map(_r, table)),
        "table_heading": 0.0 if wall == "north" else 90.0,
    }


def _corner_said(s: Phrases, p: Mapping[str, Any]) -> list[str]:
    """The three placements of a reading corner, each its own clause."""
    c = _corner(p)
    axis = "X" if c["table_heading"] == 0 else "Y"
    return [
        f"one {s.w('shelf')} (shelf_1) against the {p['wall']} wall (its back within "
        f"{s.len(WALL_GAP)} of the wall, its open front facing into the room), with its centre "
        f"{s.place(*c['shelf'])}",
        f"one {s.w('chair')} (chair_1) {s.w('in front of it')}, facing the {s.w('shelf')} "
        f"(within {s.deg(FACING_DEG)} of its centre), with its centre "
        f"{s.place(*c['chair'], anchor=('shelf_1', c['shelf']))}",
        f"one {s.w('table')} {s.w('beside')} the {s.w('chair')} (at most {s.len(0.3)} from it), "
        f"its long side along {axis}, with its centre "
        f"{s.place(*c['table'], anchor=('chair_1', c['chair']))}",
    ]


def reading_corner(p: Mapping[str, Any]) -> Spec:
    """A shelf against a wall, a chair in front of it facing it, a table beside the chair
    (``p``: room, wall, centre along it, clearances, side; m)."""
    c = _corner(p)
    calls = [
        _spawn("shelf", *c["shelf"], c["shelf_heading"]),
        _spawn("chair", *c["chair"], c["chair_heading"]),
        _spawn("table", *c["table"], c["table_heading"]),
    ]
    constraints = [
        _count("shelf", 1),
        _against("shelf", str(p["wall"])),
        _near("shelf", *c["shelf"]),
        _count("chair", 1),
        _near("chair", *c["chair"]),
        _facing("chair", "shelf"),
        _count("table", 1),
        _near("table", *c["table"]),
        {"kind": "next_to", "asset": "table", "other": "chair", "gap": 0.3, "weight": 1.0},
        _aligned_table(c["table_heading"]),
        *common_layout(float(p["room_w"]), float(p["room_d"]), float(p["door_x"]), "shelf"),
        *on_floor("shelf", "chair", "table"),
    ]

    def text(s: Phrases) -> list[str]:
        shelf, chair, table = _corner_said(s, p)
        sentences = [
            f"{s.w('furnish')} a {s.w('reading corner')}",
            room_said(s, float(p["room_w"]), float(p["room_d"]), float(p["door_x"])),
            f"{s.w('put')} {shelf}",
            f"{s.w('put')} {chair}",
            f"{s.w('put')} {table}",
            *layout_rules_said(s, "shelf"),
        ]
        return _with_relative(p, sentences, s)

    return _spec("reading_corner", p, constraints, calls, text, CORNER_WORDS)


def _corner_along(rng: random.Random, wall: str, w: float, d: float) -> float:
    """Where along its wall a corner is centred, so that its table fits on either side of the
    chair and, on a side wall, everything stays 1.2 m clear of the south wall."""
    reach = CHAIR / 2 + 0.2 + TABLE_L  # the chair's centre to the table's far end, at most
    if wall == "north":
        return _in_range(rng, -w / 2 + 0.1 + reach, w / 2 - 0.1 - reach)
    return _in_range(rng, -d / 2 + 1.2 + reach, d / 2 - 0.1 - reach)


def _corner_draw(rng: random.Random) -> dict[str, Any]:
    w, d = rng.choice([5.5, 6.0, 6.5]), rng.choice([5.5, 6.0, 6.5])
    wall = rng.choice(["north", "east", "west"])
    return {
        "room_w": w,
        "room_d": d,
        "door_x": _in_range(rng, -1.0, 1.0),
        "wall": wall,
        "along": _corner_along(rng, wall, w, d),
        "clear": rng.choice([0.5, 0.6, 0.7]),  # the shelf's front to the chair's
        "table_gap": rng.choice([0.1, 0.15, 0.2]),  # the chair to the table
        "side": rng.choice([-1, 1]),  # the table towards -X/-Y or +X/+Y of the chair
    }


def _corner_wall(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The corner to another wall: the shelf's wall changes, so ``against_wall`` fails."""
    wall = rng.choice([x for x in ("north", "east", "west") if x != before["wall"]])
    along = _corner_along(rng, wall, float(before["room_w"]), float(before["room_d"]))
    return {**before, "wall": wall, "along": along}


def _corner_wall_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        shelf, chair, table = _corner_said(s, after)
        request = [
            f"{s.w('relocate')} the {s.w('reading corner')} to the {after['wall']} wall: "
            f"{shelf}; {chair}; and {table}"
        ]
        return _with_relative(after, request, s)

    return text


def _corner_side(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The table to the chair's other side: it moves 2.25-2.35 m, past ``near``'s 0.3 m."""
    return {**before, "side": -int(before["side"])}


def _corner_side_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        table = _corner_said(s, after)[2]
        request = [f"{s.w('relocate')} the {s.w('table')} to the chair's other side: {table}"]
        return _with_relative(after, request, s)

    return text


def corner_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the chair pulled along the wall, away from the table, 5 cm past
    "beside" (the table may stand at the end of the room; the chair has room on its other side,
    and it still faces the shelf within 15°)."""
    p = task.parameters
    c = _corner(p)
    gap = next(x["gap"] for x in spec.constraints if x["kind"] == "next_to")
    far = gap + 0.05 - float(p["table_gap"])
    (cx, cy), (tx, ty) = c["chair"], c["table"]
    norm = math.hypot(tx - cx, ty - cy)
    dx, dy = round(far * (cx - tx) / norm, 4) + 0.0, round(far * (cy - ty) / norm, 4) + 0.0
    return _shifted_last(task, "chair", dx, dy)


CORNER_WORDS = {
    **COMMON,
    "reading corner": ("reading corner", "reading nook", "book nook"),
    "in front of it": ("in front of it", "before its open front", "opposite its shelves"),
    "beside": ("beside", "next to", "alongside"),
}

_WALL_CLAUSE = (
    r"one shelf \(shelf_1\) against the (north|south|east|west) wall \(its back within ([\d.]+) "
    r"m of the wall, its open front facing into the room\), with its centre " + _AT
)
CORNER_RELATIONS = (
    Phrase(_WALL_CLAUSE, _shelf_needs),
    Phrase(
        r"one chair \(chair_1\) in front of it, facing the shelf \(within (\d+)° of its "
        rf"centre\), with its centre {_AT}",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": 1},
            {"kind": "facing", "asset": "chair", "other": "shelf", "tol_deg": int(m[1])},
            {"kind": "near", "asset": "chair"},
        ],
    ),
    Phrase(
        r"one table beside the chair \(at most ([\d.]+) m from it\), its long side along (X|Y), "
        rf"with its centre {_AT}",
        lambda m: [
            {"kind": "count", "asset": "table", "n": 1},
            {"kind": "next_to", "asset": "table", "other": "chair", "gap": float(m[1])},
            {"kind": "aligned", "asset": "table", "heading": 0.0 if m[2] == "X" else 90.0},
            {"kind": "near", "asset": "table"},
        ],
    ),
    Phrase(r"[Rr]elocate the reading corner to the (north|east|west) wall", lambda m: [
        {"kind": "against_wall", "asset": "shelf", "wall": m[1]}
    ]),
)  # fmt: skip


# -- warehouse -------------------------------------------------------------------------------------


def _grid(p: Mapping[str, Any]) -> list[tuple[float, float]]:
    """The crates' centres, row by row from the south, west to east."""
    side, gap = int(p["side"]), float(p["spacing"])
    xs = sorted(_r(side * (0.6 + k * gap)) for k in range(int(p["columns"])))
    return [(x, _r(float(p["grid_y"]) + r * gap)) for r in range(int(p["rows"])) for x in xs]


def _stock_said(s: Phrases, p: Mapping[str, Any]) -> str:
    grid = _grid(p)
    shelf = (float(p["shelf_x"]), _r(float(p["room_d"]) / 2 - SHELF_DEPTH / 2 - OFF_WALL))
    return (
        f"{s.count(len(grid))} {s.w('crates')} on the floor in a {s.w('grid')} of "
        f"{s.count(int(p['rows']))} rows along X and {s.count(int(p['columns']))} columns, their "
        f"centres {s.len(float(p['spacing']))} apart both ways, the {s.w('grid')}'s south-west "
        f"{s.w('crate')} {s.place(*grid[0], anchor=('shelf_1', shelf))}"
    )


def _back_shelf_said(s: Phrases, p: Mapping[str, Any]) -> str:
    return (
        f"one {s.w('shelf')} (shelf_1) at the back, against the north wall (its back within "
        f"{s.len(WALL_GAP)} of the wall, its open front facing into the room), centred at x = "
        f"{s.len(float(p['shelf_x']))}"
    )


def warehouse(p: Mapping[str, Any]) -> Spec:
    """A grid of crates in one half of the room and a shelf at the back, a walkway from the
    doorway to it (``p``: room, grid rows, columns, spacing, side, south row; shelf x; m)."""
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    shelf = (float(p["shelf_x"]), _r(d / 2 - SHELF_DEPTH / 2 - OFF_WALL))
    grid = _grid(p)
    calls = [_spawn("shelf", *shelf, 180.0), *(_spawn("crate", x, y) for x, y in grid)]
    constraints = [
        _count("shelf", 1),
        _against("shelf", "north"),
        _near("shelf", *shelf),
        _count("crate", len(grid)),
        *(_near("crate", x, y) for x, y in grid),
        *common_layout(w, d, door_x, "shelf"),
        *on_floor("shelf", "crate"),
    ]

    def text(s: Phrases) -> list[str]:
        sentences = [
            f"{s.w('furnish')} a {s.w('warehouse')}",
            room_said(s, w, d, door_x),
            f"{s.w('put')} {_back_shelf_said(s, p)}",
            f"{s.w('put')} {_stock_said(s, p)}",
            *layout_rules_said(s, "shelf"),
        ]
        return _with_relative(p, sentences, s)

    return _spec("warehouse", p, constraints, calls, text, WAREHOUSE_WORDS)


def _warehouse_draw(rng: random.Random) -> dict[str, Any]:
    w, d = rng.choice([8.0, 9.0, 10.0]), rng.choice([7.0, 8.0, 9.0])
    side = rng.choice([-1, 1])
    spacing = rng.choice([0.9, 1.0, 1.2])
    # The outer column's far face 0.5 m or more off its wall; three rows clear of the shelf by 1 m.
    most = min(4, int((w / 2 - 0.5 - 0.6 - CRATE / 2) / spacing + 1e-9) + 1)
    top = d / 2 - SHELF_DEPTH - OFF_WALL - 1.0 - CRATE / 2 - 2 * spacing
    return {
        "room_w": w,
        "room_d": d,
        "door_x": -side * _in_range(rng, 0.8, w / 2 - 1.0),
        "side": side,
        "rows": rng.randint(2, 3),
        "columns": rng.randint(2, most),
        "spacing": spacing,
        "grid_y": _in_range(rng, -d / 2 + 1.0, min(-d / 2 + 2.0, top)),
        "shelf_x": _in_range(rng, -w / 2 + 0.7, w / 2 - 0.7),
    }


def _warehouse_rows(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A row of crates more (two rows) or fewer (three): the crate count changes."""
    return {**before, "rows": 5 - int(before["rows"])}


def _warehouse_rows_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        request = [f"{s.w('rearrange')} the {s.w('stock')}: {_stock_said(s, after)}"]
        return _with_relative(after, request, s)

    return text


def _warehouse_shelf(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The shelf 1 m or more along the back wall: past ``near``'s 0.3 m."""
    w, was = float(before["room_w"]), float(before["shelf_x"])
    while abs((x := _in_range(rng, -w / 2 + 0.7, w / 2 - 0.7)) - was) < 1.0:
        pass
    return {**before, "shelf_x": x}


def _warehouse_shelf_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('relocate')} the {s.w('shelf')}, leaving the {s.w('stock')} where it is: "
            f"{_back_shelf_said(s, after)}"
        ]

    return text


def warehouse_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the shelf 5 cm further from the wall than "against" allows."""
    return _shifted_last(task, "shelf", 0.0, -(WALL_GAP + 0.05 - OFF_WALL))


WAREHOUSE_WORDS = {
    **COMMON,
    "warehouse": ("warehouse", "stockroom", "depot"),
    "grid": ("grid", "block", "rectangular array"),
    "stock": ("stock", "goods", "inventory"),
}

WAREHOUSE_RELATIONS = (
    *SHELF_PHRASES,
    Phrase(
        r"(\d+) crates on the floor in a grid of \d+ rows along X and \d+ columns, their centres "
        rf"{_NUMBER} m apart both ways, the grid's south-west crate {_AT}",
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "on", "asset": "crate", "other": "floor"},
            {"kind": "near", "asset": "crate"},
        ],
    ),
)


# -- lounge ----------------------------------------------------------------------------------------


def _ring(p: Mapping[str, Any]) -> list[tuple[float, float, float]]:
    """The chairs' centres and headings: the first due south of the table, the rest evenly
    spaced counter-clockwise, each facing the table's centre."""
    tx, ty, r, n = float(p["table_x"]), float(p["table_y"]), float(p["radius"]), int(p["chairs"])
    seats = []
    for k in range(n):
        a = math.radians(-90 + 360 * k / n)
        x, y = _r(tx + r * math.cos(a)), _r(ty + r * math.sin(a))
        seats.append((x, y, _heading_to(x, y, tx, ty)))
    return seats


def _ring_said(s: Phrases, p: Mapping[str, Any]) -> str:
    tx, ty = float(p["table_x"]), float(p["table_y"])
    first = _ring(p)[0]
    return (
        f"{s.count(int(p['chairs']))} {s.w('chairs')} in a {s.w('ring')} round the "
        f"{s.w('table')}, each facing its centre (within {s.deg(FACING_DEG)}): their centres "
        f"{s.len(float(p['radius']))} from the {s.w('table')}'s centre, evenly spaced "
        f"{s.w('counter-clockwise')}, the first {s.place(*first[:2], anchor=('table_1', (tx, ty)))}"
    )


def lounge(p: Mapping[str, Any]) -> Spec:
    """Chairs in a ring round a central table, each facing it (``p``: room, table centre,
    chairs, ring radius; m)."""
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    tx, ty = float(p["table_x"]), float(p["table_y"])
    ring = _ring(p)
    calls = [_spawn("table", tx, ty), *(_spawn("chair", x, y, h) for x, y, h in ring)]
    constraints = [
        _count("table", 1),
        _near("table", tx, ty),
        _aligned_table(0.0),
        _count("chair", len(ring)),
        *(_near("chair", x, y) for x, y, _ in ring),
        _facing("chair", "table"),
        *common_layout(w, d, door_x, "table"),
        *on_floor("table", "chair"),
    ]

    def text(s: Phrases) -> list[str]:
        sentences = [
            f"{s.w('furnish')} a {s.w('lounge')}",
            room_said(s, w, d, door_x),
            f"{s.w('put')} one {s.w('table')} (table_1) {s.w('in the middle')}, with its centre "
            f"{s.place(tx, ty)}, its long side along X",
            f"{s.w('put')} {_ring_said(s, p)}",
            *layout_rules_said(s, "table"),
        ]
        return _with_relative(p, sentences, s)

    return _spec("lounge", p, constraints, calls, text, LOUNGE_WORDS)


def _lounge_draw(rng: random.Random) -> dict[str, Any]:
    w, d = rng.choice([6.0, 7.0, 8.0]), rng.choice([6.0, 7.0, 8.0])
    far = 1.9 + CHAIR / math.sqrt(2) + 0.1  # the widest ring's reach, a turned chair's corner
    return {
        "room_w": w,
        "room_d": d,
        "door_x": _in_range(rng, -w / 2 + 1, w / 2 - 1),
        "table_x": _in_range(rng, max(-0.5, -w / 2 + far), min(0.5, w / 2 - far)),
        # the ring 0.9 m or more clear of the south wall, where the doorway's walk starts
        "table_y": _in_range(rng, -d / 2 + 0.8 + far, d / 2 - far),
        "chairs": rng.randint(3, 6),
        "radius": rng.choice([1.4, 1.5, 1.8, 1.9]),
    }


def _lounge_chairs(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """One or two chairs more or fewer (3-6 in all): the chair count changes."""
    n = int(before["chairs"])
    return {**before, "chairs": rng.choice([k for k in range(3, 7) if k != n])}


def _lounge_chairs_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        request = [f"{s.w('rearrange')} the {s.w('ring')}: {_ring_said(s, after)}"]
        return _with_relative(after, request, s)

    return text


def _lounge_radius(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The ring 0.4 m wider or narrower: every chair 0.4 m out or in, past ``near``'s 0.3 m."""
    r = float(before["radius"])
    return {**before, "radius": round(r + 0.4 if r < 1.6 else r - 0.4, 1)}


def _lounge_radius_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    wider = float(after["radius"]) > float(before["radius"])

    def text(s: Phrases) -> list[str]:
        verb = s.w("wider" if wider else "narrower")
        request = [f"{verb} the {s.w('ring')}: {_ring_said(s, after)}"]
        return _with_relative(after, request, s)

    return text


def lounge_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the last chair turned 5° past "facing"."""
    return _turned_last(task, "chair", FACING_DEG + 5)


LOUNGE_WORDS = {
    **COMMON,
    "lounge": ("lounge", "sitting room", "common room"),
    "in the middle": ("in the middle", "centrally", "mid-room"),
    "ring": ("ring", "circle", "circular row"),
    "counter-clockwise": ("counter-clockwise", "anticlockwise", "going counterclockwise"),
}

LOUNGE_RELATIONS = (
    Phrase(
        r"(\d+) chairs in a ring round the table, each facing its centre \(within "
        rf"(\d+)°\): their centres {_NUMBER} m from the table's centre, evenly spaced "
        rf"counter-clockwise, the first {_AT}",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": int(m[1])},
            {"kind": "facing", "asset": "chair", "other": "table", "tol_deg": int(m[2])},
            {"kind": "near", "asset": "chair"},
        ],
    ),
)


# -- corridor --------------------------------------------------------------------------------------

_OTHER = {"west": "east", "east": "west"}


def _lined(p: Mapping[str, Any]) -> dict[str, Any]:
    """The corridor's crates (centres) and chairs (centres and their heading), by its walls."""
    w = float(p["room_w"])
    crate_wall = str(p["crate_wall"])
    chair_wall = _OTHER[crate_wall]
    sign = {"west": -1, "east": 1}
    cx = sign[crate_wall] * (w / 2 - CRATE / 2 - OFF_WALL)
    hx = sign[chair_wall] * (w / 2 - CHAIR / 2 - OFF_WALL)
    c0, cg, h0, hg = (float(p[k]) for k in ("crate_y", "crate_gap", "chair_y", "chair_gap"))
    return {
        "crate_wall": crate_wall,
        "chair_wall": chair_wall,
        "crates": [(_r(cx), _r(c0 + k * cg)) for k in range(int(p["crates"]))],
        "chairs": [(_r(hx), _r(h0 + k * hg)) for k in range(int(p["chairs"]))],
        "chair_heading": WALLS[chair_wall][2],
    }


def _corridor_crates_said(s: Phrases, p: Mapping[str, Any]) -> str:
    lined, door = _lined(p), (float(p["door_x"]), -float(p["room_d"]) / 2)
    return (
        f"{s.count(int(p['crates']))} {s.w('crates')} on the floor against the "
        f"{lined['crate_wall']} wall (each within {s.len(WALL_GAP)} of it), their centres "
        f"{s.len(float(p['crate_gap']))} apart along Y, the first "
        f"{s.place(*lined['crates'][0], anchor=('the doorway', door))}"
    )


def _corridor_chairs_said(s: Phrases, p: Mapping[str, Any]) -> str:
    lined, door = _lined(p), (float(p["door_x"]), -float(p["room_d"]) / 2)
    return (
        f"{s.count(int(p['chairs']))} {s.w('chairs')} against the {lined['chair_wall']} wall "
        f"(their backs within {s.len(WALL_GAP)} of it, facing into the {s.w('corridor')}), "
        f"their centres {s.len(float(p['chair_gap']))} apart along Y, the first "
        f"{s.place(*lined['chairs'][0], anchor=('the doorway', door))}"
    )


def corridor(p: Mapping[str, Any]) -> Spec:
    """Crates against one long wall, chairs against the other, a shelf at the far end and a
    clear walkway to it (``p``: room, walls, counts, first centres and gaps; shelf x; m)."""
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    lined = _lined(p)
    shelf = (float(p["shelf_x"]), _r(d / 2 - SHELF_DEPTH / 2 - OFF_WALL))
    calls = [_spawn("crate", x, y) for x, y in lined["crates"]]
    calls += [_spawn("chair", x, y, lined["chair_heading"]) for x, y in lined["chairs"]]
    calls.append(_spawn("shelf", *shelf, 180.0))
    constraints = [
        _count("crate", len(lined["crates"])),
        _against("crate", lined["crate_wall"], facing=False),
        *(_near("crate", x, y) for x, y in lined["crates"]),
        _count("chair", len(lined["chairs"])),
        _against("chair", lined["chair_wall"]),
        *(_near("chair", x, y) for x, y in lined["chairs"]),
        _count("shelf", 1),
        _against("shelf", "north"),
        _near("shelf", *shelf),
        *common_layout(w, d, door_x, "shelf"),
        *on_floor("crate", "chair", "shelf"),
    ]

    def text(s: Phrases) -> list[str]:
        sentences = [
            f"{s.w('furnish')} a {s.w('corridor')}",
            room_said(s, w, d, door_x),
            f"{s.w('put')} {_corridor_crates_said(s, p)}",
            f"{s.w('put')} {_corridor_chairs_said(s, p)}",
            f"{s.w('put')} one {s.w('shelf')} at the far end, against the north wall (its back "
            f"within {s.len(WALL_GAP)} of the wall, its open front facing into the room), "
            f"centred at x = {s.len(shelf[0])}",
            *layout_rules_said(s, "shelf"),
        ]
        return _with_relative(p, sentences, s)

    return _spec("corridor", p, constraints, calls, text, CORRIDOR_WORDS)


def _corridor_draw(rng: random.Random) -> dict[str, Any]:
    w, d = rng.choice([3.0, 3.5]), rng.choice([8.0, 9.0, 10.0])
    return {
        "room_w": w,
        "room_d": d,
        "door_x": _in_range(rng, -0.3, 0.3),
        "crate_wall": rng.choice(["west", "east"]),
        "crates": rng.randint(3, 5),  # an edit makes it 3-5 again: the last ends 2.3 m or more
        "crate_gap": rng.choice([0.6, 0.8, 1.0]),  # from the north wall, clear of the shelf
        "crate_y": _in_range(rng, -d / 2 + 1.0, -d / 2 + 2.0),
        "chairs": rng.randint(2, 4),
        "chair_gap": rng.choice([0.6, 0.7, 0.8]),
        "chair_y": _in_range(rng, -d / 2 + 1.5, -d / 2 + 3.0),
        "shelf_x": _in_range(rng, -w / 2 + 0.6, w / 2 - 0.6),
    }


def _corridor_crates(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A crate more or fewer (3-5 in all): the crate count changes."""
    n = int(before["crates"])
    return {**before, "crates": 4 if n != 4 else rng.choice([3, 5])}


def _corridor_crates_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        request = [f"{s.w('rearrange')} the {s.w('crates')}: {_corridor_crates_said(s, after)}"]
        return _with_relative(after, request, s)

    return text


def _corridor_swap(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The crates and the chairs to each other's walls: every ``against_wall`` of theirs fails."""
    return {**before, "crate_wall": _OTHER[str(before["crate_wall"])]}


def _corridor_swap_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        request = [
            f"{s.w('swap')} the sides of the {s.w('crates')} and the {s.w('chairs')}: "
            f"{_corridor_crates_said(s, after)}, and {_corridor_chairs_said(s, after)}"
        ]
        return _with_relative(after, request, s)

    return text


def corridor_near_miss(task: Any, spec: Spec) -> str:
    """The reference with the last crate 5 cm further from its wall than "against" allows."""
    wall = _lined(task.parameters)["crate_wall"]
    off = WALL_GAP + 0.05 - OFF_WALL
    return _shifted_last(task, "crate", off if wall == "west" else -off, 0.0)


CORRIDOR_WORDS = {
    **COMMON,
    "corridor": ("corridor", "hallway", "passage"),
    "swap": ("swap", "exchange", "trade"),
}

CORRIDOR_RELATIONS = (
    *SHELF_PHRASES,
    Phrase(
        r"(\d+) crates on the floor against the (east|west) wall \(each within ([\d.]+) m of "
        rf"it\), their centres {_NUMBER} m apart along Y, the first {_AT}",
        lambda m: [
            {"kind": "count", "asset": "crate", "n": int(m[1])},
            {"kind": "on", "asset": "crate", "other": "floor"},
            {"kind": "against_wall", "asset": "crate", "wall": m[2], "gap": float(m[3])},
            {"kind": "near", "asset": "crate"},
        ],
    ),
    Phrase(
        r"(\d+) chairs against the (east|west) wall \(their backs within ([\d.]+) m of it, "
        rf"facing into the corridor\), their centres {_NUMBER} m apart along Y, the first {_AT}",
        lambda m: [
            {"kind": "count", "asset": "chair", "n": int(m[1])},
            {"kind": "against_wall", "asset": "chair", "wall": m[2], "gap": float(m[3])},
            {"kind": "near", "asset": "chair"},
        ],
    ),
)


FAMILY_GROUP = (
    Template(
        "classroom",
        "layout",
        classroom,
        _classroom_draw,
        3,
        "rows of chairs facing the teacher's table, an aisle down the middle",
        styled=True,
        near_miss=classroom_near_miss,
        edits=(
            Edit("rows", _classroom_rows, _classroom_rows_text),
            Edit("aisle", _classroom_aisle, _classroom_aisle_text),
        ),
        words=CLASSROOM_WORDS,
        relations=CLASSROOM_RELATIONS,
    ),
    Template(
        "reading_corner",
        "layout",
        reading_corner,
        _corner_draw,
        2,
        "a shelf against a wall, a chair facing it, a table beside the chair",
        styled=True,
        near_miss=corner_near_miss,
        edits=(
            Edit("wall", _corner_wall, _corner_wall_text),
            Edit("table_side", _corner_side, _corner_side_text),
        ),
        words=CORNER_WORDS,
        relations=CORNER_RELATIONS,
    ),
    Template(
        "warehouse",
        "layout",
        warehouse,
        _warehouse_draw,
        2,
        "a grid of crates and a shelf at the back, a walkway to it",
        styled=True,
        near_miss=warehouse_near_miss,
        edits=(
            Edit("rows", _warehouse_rows, _warehouse_rows_text),
            Edit("shelf", _warehouse_shelf, _warehouse_shelf_text),
        ),
        words=WAREHOUSE_WORDS,
        relations=WAREHOUSE_RELATIONS,
    ),
    Template(
        "lounge",
        "layout",
        lounge,
        _lounge_draw,
        3,
        "chairs in a ring round a central table, each facing it",
        styled=True,
        near_miss=lounge_near_miss,
        edits=(
            Edit("chairs", _lounge_chairs, _lounge_chairs_text),
            Edit("radius", _lounge_radius, _lounge_radius_text),
        ),
        words=LOUNGE_WORDS,
        relations=LOUNGE_RELATIONS,
    ),
    Template(
        "corridor",
        "layout",
        corridor,
        _corridor_draw,
        2,
        "crates and chairs against the long walls, a clear walkway to the far end",
        styled=True,
        near_miss=corridor_near_miss,
        edits=(
            Edit("crates", _corridor_crates, _corridor_crates_text),
            Edit("swap", _corridor_swap, _corridor_swap_text),
        ),
        words=CORRIDOR_WORDS,
        relations=CORRIDOR_RELATIONS,
    ),
)
