"""Offices: rows of desks, each with its chair, said in any style of the phrase bank, with edit
tasks that start from a furnished room.

Conventions as in the runtime (metres, degrees, Z up; the room centred on the origin, its doorway
in the south wall). A desk is the catalogue's table (1.6 × 0.9 m, its long side along X at
heading 0); its chair stands 0.75 m south of its centre, facing it (heading 0).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from toolgym.envs.scene.families.model import (
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
from toolgym.envs.scene.families.phrases import Phrases
from toolgym.envs.scene.relations import Phrase

CHAIR_OFFSET = 0.75  # m south of a desk's centre: the chair's gap to the desk is 0.1 m


def _desk_xs(p: Mapping[str, Any]) -> list[float]:
    k, gap = int(p["desks"]), float(p["spacing"])
    return [round(float(p["row_x"]) + (i - (k - 1) / 2) * gap, 3) for i in range(k)]


def office_desks(p: Mapping[str, Any]) -> Spec:
    w, d, door_x = float(p["room_w"]), float(p["room_d"]), float(p["door_x"])
    k, gap, row_x, row_y = (
        int(p["desks"]),
        float(p["spacing"]),
        float(p["row_x"]),
        float(p["row_y"]),
    )
    xs = _desk_xs(p)
    calls = [tool_call("spawn", asset="table", x=x, y=row_y) for x in xs]
    calls += [tool_call("spawn", asset="chair", x=x, y=round(row_y - CHAIR_OFFSET, 3)) for x in xs]
    constraints = [
        {"kind": "count", "asset": "table", "n": k, "weight": 1.0},
        {"kind": "count", "asset": "chair", "n": k, "weight": 1.0},
        *({"kind": "near", "asset": "table", "x": x, "y": row_y, "weight": 1.0} for x in xs),
        {
            "kind": "aligned",
            "asset": "table",
            "heading": 0.0,
            "period": 180.0,
            "what": "its long side along X",
            "weight": 1.0,
        },
        {"kind": "next_to", "asset": "chair", "other": "table", "gap": 0.4, "weight": 1.0},
        {"kind": "facing", "asset": "chair", "other": "table", "tol_deg": 30, "weight": 1.0},
        *common_layout(w, d, door_x, "table"),
        *on_floor("table", "chair"),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('furnish')} a {s.w('office')}",
            room_said(s, w, d, door_x),
            f"{s.w('put')} {s.count(k)} desks (tables) in a row along X, their long sides along "
            f"X, centred at x = {s.len(row_x)} and y = {s.len(row_y)}, their centres "
            f"{s.len(gap)} apart",
            f"one chair at {s.w('each desk')}, next to it (at most {s.len(0.4)} away) and "
            f"facing it",
            *layout_rules_said(s, "table"),
        ]

    return Spec(
        "office_desks",
        "layout",
        new_level((w, d, door_x)),
        tuple(constraints),
        2.0,
        0.5,
        said(p, text, WORDS),
        call_script(calls),
        tuple(calls),
        bounds=(-w / 2, -d / 2, w / 2, d / 2),
    )


def _draw(rng: random.Random) -> dict[str, Any]:
    desks = rng.randint(2, 3)
    spacing = rng.choice([1.9, 2.0, 2.2])
    room_w = 8.0 if desks == 3 else rng.choice([6.0, 7.0])
    span = (desks - 1) * spacing + 1.6  # the row's length, desk ends included
    room = {
        "room_w": room_w,
        "room_d": rng.choice([6.0, 7.0]),
        "door_x": round(rng.uniform(-1.5, 1.5), 1),
    }
    slack = max(0.0, (room_w - span) / 2 - 0.8)
    return room | {
        "desks": desks,
        "spacing": spacing,
        "row_x": round(rng.uniform(-slack, slack), 1),
        "row_y": round(rng.uniform(0.5, 1.3), 1),
    }


def _one_more(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    after = dict(before)
    if int(before["desks"]) == 2:
        after.update(desks=3, room_w=8.0, row_x=0.0)
    else:
        after.update(desks=2)
    return after


def _one_more_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('rearrange')} the row so that it holds {s.count(int(after['desks']))} desks "
            f"(tables), centred at x = {s.len(float(after['row_x']))} and y = "
            f"{s.len(float(after['row_y']))}, their centres {s.len(float(after['spacing']))} "
            f"apart, with one chair at {s.w('each desk')}, next to it (at most {s.len(0.4)} "
            f"away) and facing it",
        ]

    return text


def _shift(before: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The row 0.6-0.8 m north or south: twice the verifier's ``near`` tolerance or more, so
    the row left where it was fails."""
    step = rng.choice([-0.8, -0.6, 0.6, 0.8])
    row_y = float(before["row_y"]) + step
    if not -0.5 <= row_y <= 2.0:
        row_y = float(before["row_y"]) - step
    return {**before, "row_y": round(row_y, 1)}


def _shift_text(before: Mapping[str, Any], after: Mapping[str, Any]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('move')} the row of desks, chairs and all, so that it is centred at y = "
            f"{s.len(float(after['row_y']))} (x = {s.len(float(after['row_x']))} as before), "
            f"each chair still next to its desk (at most {s.len(0.4)} away) and facing it",
        ]

    return text


def near_miss(task: Any, spec: Spec) -> str:
    """The reference with the last chair pulled back from its desk 5 cm past "next to"."""
    gap = next(c["gap"] for c in spec.constraints if c["kind"] == "next_to")
    return (
        f"{task.reference.rstrip()}\n"
        "_chairs = [o for o in world.objects.values() if not o.level and o.asset == 'chair']\n"
        "x, y, z = _chairs[-1].pos\n"
        f"_chairs[-1].set_pos((x, y - {gap + 0.05}, z))\n"
    )


WORDS = {
    "furnish": ("furnish", "fit out", "equip"),
    "office": ("office", "study", "workroom"),
    "rearrange": ("rearrange", "change", "redo"),
    "move": ("move", "shift", "relocate"),
    "each desk": ("each desk", "every desk", "every single desk"),
}

_NUMBER = r"-?\d+(?:\.\d+)?"
RELATIONS = (
    Phrase(
        rf"(\d+) desks \(tables\) in a row along X, their long sides along X, centred at "
        rf"x = {_NUMBER} m and y = {_NUMBER} m, their centres {_NUMBER} m apart",
        lambda m: [
            {"kind": "count", "asset": "table", "n": int(m[1])},
            {"kind": "aligned", "asset": "table"},
            {"kind": "near", "asset": "table"},
        ],
    ),
    Phrase(
        r"[Oo]ne chair at each desk, next to it \(at most ([\d.]+) m away\) and facing it",
        lambda m: [
            {"kind": "next_to", "asset": "chair", "other": "table", "gap": float(m[1])},
            {"kind": "facing", "asset": "chair", "other": "table"},
        ],
    ),
    Phrase(
        rf"holds (\d+) desks \(tables\), centred at x = {_NUMBER} m and y = {_NUMBER} m, their "
        rf"centres {_NUMBER} m apart, with one chair at each desk, next to it \(at most "
        r"([\d.]+) m away\) and facing it",
        lambda m: [
            {"kind": "count", "asset": "table", "n": int(m[1])},
            {"kind": "near", "asset": "table"},
            {"kind": "next_to", "asset": "chair", "other": "table", "gap": float(m[2])},
            {"kind": "facing", "asset": "chair", "other": "table"},
        ],
    ),
    Phrase(
        rf"[Mm]ove the row of desks, chairs and all, so that it is centred at y = {_NUMBER} m "
        rf"\(x = {_NUMBER} m as before\), each chair still next to its desk \(at most "
        r"([\d.]+) m away\) and facing it",
        lambda m: [
            {"kind": "near", "asset": "table"},
            {"kind": "next_to", "asset": "chair", "other": "table", "gap": float(m[1])},
            {"kind": "facing", "asset": "chair", "other": "table"},
        ],
    ),
)

FAMILY_GROUP = (
    Template(
        "office_desks",
        "layout",
        office_desks,
        _draw,
        2,
        "a row of desks, a chair facing each",
        styled=True,
        near_miss=near_miss,
        edits=(
            Edit("one_more_or_less", _one_more, _one_more_text),
            Edit("shift", _shift, _shift_text),
        ),
        words=WORDS,
        relations=RELATIONS,
    ),
)
