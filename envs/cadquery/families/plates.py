"""Plates and brackets: a counterbored plate, a countersunk strip, a pocketed plate, a perforated
plate, an adjustment plate with angled slots, a gusseted angle bracket, a clevis and a T-bracket.

Every length is in mm, every angle in degrees, Z up. Screw holes follow the standards: ISO 273
clearance holes (medium series), counterbores for ISO 4762 socket head cap screws (DIN 974-1),
90° countersinks for ISO 10642 screws (ISO 15065) and clevis forks after DIN 71752 (pin, gap and
thread equal to the size). A clevis's tapped hole is a cosmetic thread: an M8 thread is modelled
as a plain 8 mm hole, as its prompt and summary say.

The tool calls build the same surfaces as the programs: a pocket's rounded corners as two crossed
boxes and four flat-bottomed holes of the corner radius, a gusset's triangle with its hidden
corner sunk into the legs, a clevis as its +Y half mirrored in the XZ plane. Every cutter runs
1 mm past the faces it opens, so no boolean leaves a coplanar skin.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from toolgym.envs.cadquery.families.model import (
    Call,
    Dimension,
    Edit,
    Family,
    Params,
    call,
    mm,
    num,
    pts,
    resize,
    whole,
)
from toolgym.envs.cadquery.families.phrases import Phrases
from toolgym.envs.cadquery.families.standards import clearance_holes


def _grid(count: int, pitch: float) -> list[float]:
    """Positions of ``count`` features ``pitch`` apart, centred on 0."""
    return [(k - (count - 1) / 2) * pitch for k in range(count)]


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    """A near miss: one dimension off by ``by`` (a feature moved or resized)."""
    return lambda p: {**p, name: num(p[name]) + by}


def _recount(name: str, by: int) -> Callable[[Params], Params]:
    """A near miss: one feature fewer (or more)."""
    return lambda p: {**p, name: whole(p[name]) + by}


# ISO 273 medium clearance hole; DIN 974-1 counterbore diameter and depth (ISO 4762 head height
# plus 0.4 mm); ISO 15065 90° countersink diameter for ISO 10642 heads.
CLEARANCE = clearance_holes("M3", "M4", "M5", "M6", "M8", "M10")
COUNTERBORE = {
    "M3": (6.5, 3.4),
    "M4": (8.0, 4.4),
    "M5": (10.0, 5.4),
    "M6": (11.0, 6.4),
    "M8": (15.0, 8.6),
    "M10": (18.0, 10.6),
}
COUNTERSINK = {"M3": 6.94, "M4": 9.18, "M5": 11.47, "M6": 13.71, "M8": 18.25, "M10": 22.73}
SCREWS = tuple(CLEARANCE)


def _next_size(p: Params, rng: np.random.Generator) -> str:
    """The screw size one step up or down."""
    at = SCREWS.index(str(p["screw"]))
    step = 1 if rng.random() < 0.5 else -1
    if not 0 <= at + step < len(SCREWS):
        step = -step
    return SCREWS[at + step]


# -- plate_counterbored ----------------------------------------------------------------------------


def _counterbored(rng: np.random.Generator) -> Params:
    screw = SCREWS[int(rng.integers(len(SCREWS)))]
    bore, depth = COUNTERBORE[screw]
    cols, rows = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    pitch_x, pitch_y = mm(rng, bore + 3, bore + 25), mm(rng, bore + 3, bore + 20)
    return {
        "screw": screw,
        "cols": cols,
        "rows": rows,
        "pitch_x": pitch_x,
        "pitch_y": pitch_y,
        "length": (cols - 1) * pitch_x + 2 * mm(rng, bore / 2 + 3, bore / 2 + 12),
        "width": (rows - 1) * pitch_y + 2 * mm(rng, bore / 2 + 3, bore / 2 + 10),
        "thickness": mm(rng, depth + 3, depth + 8),
    }


def _counterbored_holes(p: Params) -> list[tuple[float, float]]:
    return [
        (x, y)
        for y in _grid(whole(p["rows"]), num(p["pitch_y"]))
        for x in _grid(whole(p["cols"]), num(p["pitch_x"]))
    ]


def _counterbored_text(p: Params, q: Phrases) -> list[str]:
    screw = str(p["screw"])
    bore, depth = COUNTERBORE[screw]
    return [
        f"a {q.dims(p['length'], p['width'], p['thickness'])} {q.w('plate')} (X × Y × Z) "
        f"{q.w('centred')} {q.w('on the origin')}, its faces parallel to {q.w('the XY plane')}",
        f"a {q.count(whole(p['cols']))} × {q.count(whole(p['rows']))} {q.w('grid')} (X × Y) of "
        f"counterbored {q.w('holes')} for {screw} socket head cap {q.w('bolt')}s is "
        f"{q.w('centred')} on the {q.w('plate')}",
        f"the {q.w('holes')} are {q.w('spaced')} {q.len(p['pitch_x'])} apart in X and "
        f"{q.len(p['pitch_y'])} apart in Y",
        f"every {q.w('hole')} is a {q.dia(CLEARANCE[screw], 'through-hole')} with a "
        f"{q.dia(bore, 'counterbore')} {q.len(depth)} {q.w('deep')} from the top face",
    ]


def _counterbored_program(p: Params) -> str:
    screw = str(p["screw"])
    bore, depth = COUNTERBORE[screw]
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane()\n"
        f"    .pushPoints({pts(_counterbored_holes(p))})\n"
        f"    .cboreHole({CLEARANCE[screw]}, {bore}, {depth})\n"
        f")\n"
    )


def _counterbored_calls(p: Params) -> list[Call]:
    screw = str(p["screw"])
    bore, depth = COUNTERBORE[screw]
    calls = [call("add_box", length=p["length"], width=p["width"], height=p["thickness"])]
    for x, y in _counterbored_holes(p):
        calls.append(
            call(
                "hole",
                diameter=CLEARANCE[screw],
                x=x,
                y=y,
                counterbore_diameter=bore,
                counterbore_depth=depth,
            )
        )
    return calls


def _counterbored_check(p: Params) -> str | None:
    bore, depth = COUNTERBORE[str(p["screw"])]
    for count, pitch, size in (("cols", "pitch_x", "length"), ("rows", "pitch_y", "width")):
        if num(p[pitch]) < bore + 2:
            return "neighbouring counterbores need at least 2 mm of material between them"
        if (whole(p[count]) - 1) * num(p[pitch]) + bore + 4 > num(p[size]):
            return "the counterbores must stay at least 2 mm in from the plate's edges"
    if num(p["thickness"]) < depth + 2:
        return "the plate must be at least 2 mm thicker than the counterbores are deep"
    return None


def _counterbored_resize_screw(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old, new = str(p["screw"]), _next_size(p, rng)
    return (
        {**p, "screw": new},
        lambda q: (
            f"change the counterbored {q.w('holes')} from {old} to {new} socket head cap "
            f"{q.w('bolt')}s (the standard clearance {q.w('holes')} and counterbores for {new}), "
            f"keeping their positions"
        ),
    )


# -- plate_countersunk -----------------------------------------------------------------------------


def _countersunk(rng: np.random.Generator) -> Params:
    screw = SCREWS[int(rng.integers(len(SCREWS)))]
    sink = COUNTERSINK[screw]
    leg = (sink - CLEARANCE[screw]) / 2
    count = int(rng.integers(2, 7))
    pitch = mm(rng, sink + 3, sink + 15)
    return {
        "screw": screw,
        "count": count,
        "pitch": pitch,
        "length": (count - 1) * pitch + 2 * mm(rng, sink / 2 + 3, sink / 2 + 10),
        "width": mm(rng, sink + 4, sink + 16),
        "thickness": mm(rng, leg + 2, leg + 6),
    }


def _countersunk_holes(p: Params) -> list[tuple[float, float]]:
    return [(x, 0.0) for x in _grid(whole(p["count"]), num(p["pitch"]))]


def _countersunk_text(p: Params, q: Phrases) -> list[str]:
    screw = str(p["screw"])
    return [
        f"a {q.dims(p['length'], p['width'], p['thickness'])} {q.w('strip')} (X × Y × Z) "
        f"{q.w('centred')} {q.w('on the origin')}, its faces parallel to {q.w('the XY plane')}",
        f"a row of {q.count(whole(p['count']))} countersunk {q.w('holes')} for {screw} "
        f"countersunk {q.w('bolt')}s, {q.w('along')} the X {q.w('axis')} and {q.w('centred')} "
        f"on the {q.w('strip')}, is drilled from its top face",
        f"the {q.w('holes')} are {q.w('spaced')} {q.len(p['pitch'])} apart",
        f"every {q.w('hole')} is a {q.dia(CLEARANCE[screw], 'through-hole')} with a {q.deg(90)} "
        f"{q.w('countersink')} of {q.len(COUNTERSINK[screw])} {q.w('diameter')} at the top face",
    ]


def _countersunk_program(p: Params) -> str:
    screw = str(p["screw"])
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane()\n"
        f"    .pushPoints({pts(_countersunk_holes(p))})\n"
        f"    .cskHole({CLEARANCE[screw]}, {COUNTERSINK[screw]}, 90)\n"
        f")\n"
    )


def _countersunk_calls(p: Params) -> list[Call]:
    screw = str(p["screw"])
    calls = [call("add_box", length=p["length"], width=p["width"], height=p["thickness"])]
    for x, y in _countersunk_holes(p):
        calls.append(
            call(
                "hole",
                diameter=CLEARANCE[screw],
                x=x,
                y=y,
                countersink_diameter=COUNTERSINK[screw],
            )
        )
    return calls


def _countersunk_check(p: Params) -> str | None:
    screw = str(p["screw"])
    sink, leg = COUNTERSINK[screw], (COUNTERSINK[screw] - CLEARANCE[screw]) / 2
    if num(p["pitch"]) < sink + 2:
        return "neighbouring countersinks need at least 2 mm of material between them"
    if (whole(p["count"]) - 1) * num(p["pitch"]) + sink + 4 > num(p["length"]):
        return "the countersinks must stay at least 2 mm in from the strip's ends"
    if sink + 3 > num(p["width"]):
        return "the countersinks must stay at least 1.5 mm in from the strip's sides"
    if num(p["thickness"]) < leg + 1.5:
        return "the countersinks must leave at least 1.5 mm of straight hole"
    return None


def _countersunk_recount(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    count = whole(p["count"]) + (1 if rng.random() < 0.5 or whole(p["count"]) <= 2 else -1)
    return (
        {**p, "count": count},
        lambda q: (
            f"make it {q.count(count)} countersunk {q.w('holes')}, still {q.w('spaced')} "
            f"{q.len(p['pitch'])} apart and {q.w('centred')} on the {q.w('strip')}"
        ),
    )


# -- plate_pocketed --------------------------------------------------------------------------------


def _pocketed(rng: np.random.Generator) -> Params:
    hole, pocket_length, pocket_width = mm(rng, 3, 9), mm(rng, 20, 80), mm(rng, 15, 60)
    inset = mm(rng, hole / 2 + 2.5, hole / 2 + 8)
    land = 2 * (inset + hole / 2)  # the holes sit in the plate's ends, beside the pocket
    thickness = mm(rng, 4, 15)
    return {
        "length": mm(rng, pocket_length + land + 4, pocket_length + land + 20),
        "width": mm(rng, max(pocket_width + 6, 2 * inset + hole + 2), pocket_width + 30),
        "thickness": thickness,
        "pocket_length": pocket_length,
        "pocket_width": pocket_width,
        "depth": mm(rng, 1.5, thickness - 2),
        "radius": mm(rng, 1.5, min(pocket_length, pocket_width) / 4),
        "hole": hole,
        "inset": inset,
    }


def _pocketed_corners(p: Params) -> list[tuple[float, float]]:
    dx, dy = num(p["length"]) / 2 - num(p["inset"]), num(p["width"]) / 2 - num(p["inset"])
    return [(dx, dy), (-dx, dy), (dx, -dy), (-dx, -dy)]


def _pocketed_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a {q.dims(p['length'], p['width'], p['thickness'])} {q.w('plate')} (X × Y × Z) "
        f"{q.w('centred')} {q.w('on the origin')}, its faces parallel to {q.w('the XY plane')}",
        f"a rectangular {q.w('pocket')} {q.dims(p['pocket_length'], p['pocket_width'])} "
        f"(X × Y) is {q.w('cut')} {q.len(p['depth'])} {q.w('deep')} into the top face, "
        f"{q.w('centred')} on the {q.w('plate')}, with a flat floor",
        f"the four vertical {q.w('corners')} of the {q.w('pocket')} are {q.w('rounded')} to a "
        f"{q.radius(p['radius'])}",
        f"one of {q.count(4)} {q.dia(p['hole'], 'through-holes')} sits near every "
        f"{q.w('corner')} of the {q.w('plate')}, its centre {q.len(p['inset'])} "
        f"{q.w('in from')} both {q.w('edges')}",
    ]


def _pocketed_program(p: Params) -> str:
    t, depth = num(p["thickness"]), num(p["depth"])
    return (
        f"plate = cq.Workplane('XY').box({p['length']}, {p['width']}, {t})\n"
        f"pocket = (\n"
        f"    cq.Workplane('XY').rect({p['pocket_length']}, {p['pocket_width']})"
        f".extrude({depth + 1})\n"
        f"    .edges('|Z').fillet({p['radius']})\n"
        f"    .translate((0, 0, {t / 2 - depth}))\n"
        f")\n"
        f"holes = (\n"
        f"    cq.Workplane('XY').pushPoints({pts(_pocketed_corners(p))})\n"
        f"    .circle({num(p['hole']) / 2}).extrude({t}, both=True)\n"
        f")\n"
        f"result = plate.cut(pocket).cut(holes)\n"
    )


def _pocketed_calls(p: Params) -> list[Call]:
    """The round-cornered pocket as two crossed boxes and four flat-bottomed corner holes."""
    t, depth, r = num(p["thickness"]), num(p["depth"]), num(p["radius"])
    a, b = num(p["pocket_length"]), num(p["pocket_width"])
    z = t / 2 - depth / 2 + 0.5  # each box runs on 1 mm above the top face: no coplanar cut
    calls = [
        call("add_box", length=p["length"], width=p["width"], height=t),
        call("cut_box", length=a - 2 * r, width=b, height=depth + 1, z=z),
        call("cut_box", length=a, width=b - 2 * r, height=depth + 1, z=z),
    ]
    for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
        calls.append(
            call("hole", diameter=2 * r, x=sx * (a / 2 - r), y=sy * (b / 2 - r), depth=depth)
        )
    calls.append(
        call(
            "pattern_linear",
            feature="hole",
            size=p["hole"],
            count_x=2,
            count_y=2,
            pitch_x=num(p["length"]) - 2 * num(p["inset"]),
            pitch_y=num(p["width"]) - 2 * num(p["inset"]),
        )
    )
    return calls


def _pocketed_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["depth"] > f["thickness"] - 1.5:
        return "the pocket must leave a floor at least 1.5 mm thick"
    if f["radius"] > min(f["pocket_length"], f["pocket_width"]) / 2 - 1:
        return "the pocket's corner radius must be under half its width"
    if f["pocket_width"] + 3 > f["width"]:
        return "the pocket must leave side walls at least 1.5 mm thick"
    if f["pocket_length"] / 2 + 1.5 > f["length"] / 2 - f["inset"] - f["hole"] / 2:
        return "the holes must clear the pocket by at least 1.5 mm"
    if f["inset"] < f["hole"] / 2 + 1 or 2 * f["inset"] + f["hole"] + 2 > f["width"]:
        return "the holes must sit at least 1 mm inside the plate's edges"
    return None


# -- plate_grid_holes ------------------------------------------------------------------------------


def _grid_holes(rng: np.random.Generator) -> Params:
    hole = mm(rng, 3, 10)
    cols, rows = int(rng.integers(3, 8)), int(rng.integers(2, 6))
    pitch_x, pitch_y = mm(rng, hole + 2, hole + 10), mm(rng, hole + 2, hole + 10)
    return {
        "cols": cols,
        "rows": rows,
        "hole": hole,
        "pitch_x": pitch_x,
        "pitch_y": pitch_y,
        "length": (cols - 1) * pitch_x + 2 * mm(rng, hole / 2 + 3, hole / 2 + 12),
        "width": (rows - 1) * pitch_y + 2 * mm(rng, hole / 2 + 3, hole / 2 + 12),
        "thickness": mm(rng, 1.5, 6),
    }


def _grid_points(p: Params) -> list[tuple[float, float]]:
    return [
        (x, y)
        for y in _grid(whole(p["rows"]), num(p["pitch_y"]))
        for x in _grid(whole(p["cols"]), num(p["pitch_x"]))
    ]


def _grid_holes_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a perforated {q.w('plate')} {q.dims(p['length'], p['width'], p['thickness'])} "
        f"(X × Y × Z) {q.w('centred')} {q.w('on the origin')}, its faces parallel to "
        f"{q.w('the XY plane')}",
        f"a {q.count(whole(p['cols']))} × {q.count(whole(p['rows']))} {q.w('grid')} (X × Y) of "
        f"{q.dia(p['hole'], 'through-holes')} is {q.w('centred')} on the {q.w('plate')}",
        f"the {q.w('holes')} are {q.w('spaced')} {q.len(p['pitch_x'])} apart in X and "
        f"{q.len(p['pitch_y'])} apart in Y",
    ]


def _grid_holes_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane()\n"
        f"    .rarray({p['pitch_x']}, {p['pitch_y']}, {p['cols']}, {p['rows']})\n"
        f"    .hole({p['hole']})\n"
        f")\n"
    )


def _grid_holes_calls(p: Params) -> list[Call]:
    return [
        call("add_box", length=p["length"], width=p["width"], height=p["thickness"]),
        call(
            "pattern_linear",
            feature="hole",
            size=p["hole"],
            count_x=p["cols"],
            count_y=p["rows"],
            pitch_x=p["pitch_x"],
            pitch_y=p["pitch_y"],
        ),
    ]


def _grid_holes_check(p: Params) -> str | None:
    hole = num(p["hole"])
    for count, pitch, size in (("cols", "pitch_x", "length"), ("rows", "pitch_y", "width")):
        if num(p[pitch]) < hole + 1.5:
            return "neighbouring holes need at least 1.5 mm of material between them"
        if (whole(p[count]) - 1) * num(p[pitch]) + hole + 4 > num(p[size]):
            return "the holes must stay at least 2 mm in from the plate's edges"
    return None


def _grid_add_row(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """One row more, or one fewer where the plate has no room for another."""
    more = {**p, "rows": whole(p["rows"]) + 1}
    rows = whole(more["rows"]) if _grid_holes_check(more) is None else whole(p["rows"]) - 1
    verb = "add one more row" if rows > whole(p["rows"]) else "remove one row"
    return (
        {**p, "rows": rows},
        lambda q: (
            f"{verb} of {q.w('holes')} at the same pitch, leaving {q.count(rows)} rows "
            f"{q.w('centred')} on the {q.w('plate')}, which keeps its size"
        ),
    )


# -- plate_angled_slots ----------------------------------------------------------------------------


def _slot_reach(p: Params) -> tuple[float, float]:
    """How far one slot reaches from its centre in X and in Y."""
    straight = num(p["slot_length"]) - num(p["slot_width"])
    angle = math.radians(num(p["angle"]))
    half = num(p["slot_width"]) / 2
    return straight / 2 * math.sin(angle) + half, straight / 2 * math.cos(angle) + half


def _angled_slots(rng: np.random.Generator) -> Params:
    slot_width = mm(rng, 4, 10)
    params: Params = {
        "count": int(rng.integers(1, 5)),
        "slot_width": slot_width,
        "slot_length": mm(rng, slot_width + 8, slot_width + 40),
        "angle": float(5 * rng.integers(2, 10)),
        "thickness": mm(rng, 3, 10),
    }
    # Neighbouring slots keep a web of at least 4 mm, measured square to them.
    least = (slot_width + 4) / math.cos(math.radians(num(params["angle"])))
    params["pitch"] = mm(rng, least + 0.5, least + 15) if whole(params["count"]) > 1 else 0.0
    reach_x, reach_y = _slot_reach(params)
    span = (whole(params["count"]) - 1) * num(params["pitch"]) + 2 * reach_x
    params["length"] = mm(rng, span + 8, span + 30)
    params["width"] = mm(rng, 2 * reach_y + 8, 2 * reach_y + 25)
    return params


def _slot_centres(p: Params) -> list[tuple[float, float]]:
    return [(x, 0.0) for x in _grid(whole(p["count"]), num(p["pitch"]))]


def _angled_slots_text(p: Params, q: Phrases) -> list[str]:
    count = whole(p["count"])
    said = [
        f"an adjustment {q.w('plate')} {q.dims(p['length'], p['width'], p['thickness'])} "
        f"(X × Y × Z) {q.w('centred')} {q.w('on the origin')}, its faces parallel to "
        f"{q.w('the XY plane')}",
        f"{q.count(count)} round-ended {q.w('slots') if count > 1 else q.w('slot')}, "
        f"{q.len(p['slot_length'])} {q.w('long')} end to end and {q.len(p['slot_width'])} "
        f"{q.w('wide')}, {'are' if count > 1 else 'is'} {q.w('cut')} {q.w('through')} it, "
        f"centred on y = 0",
        f"{'each' if count > 1 else 'the'} {q.w('slot')}'s long {q.w('axis')} is tilted "
        f"{q.deg(p['angle'])} from the Y {q.w('axis')}, its end towards +Y leaning towards +X",
    ]
    if count > 1:
        said.append(
            f"the {q.w('slots')}' centres are {q.w('spaced')} {q.len(p['pitch'])} apart "
            f"{q.w('along')} X, symmetric {q.w('about')} the Y {q.w('axis')}"
        )
    else:
        said.append(f"the {q.w('slot')} is {q.w('centred')} {q.w('on the origin')}")
    return said


def _angled_slots_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane()\n"
        f"    .pushPoints({pts(_slot_centres(p))})\n"
        f"    .slot2D({p['slot_length']}, {p['slot_width']}, {90 - num(p['angle'])})\n"
        f"    .cutThruAll()\n"
        f")\n"
    )


def _angled_slots_calls(p: Params) -> list[Call]:
    calls = [call("add_box", length=p["length"], width=p["width"], height=p["thickness"])]
    for x, y in _slot_centres(p):
        calls.append(
            call(
                "cut_slot",
                length=p["slot_length"],
                width=p["slot_width"],
                x=x,
                y=y,
                angle=90 - num(p["angle"]),
            )
        )
    return calls


def _angled_slots_check(p: Params) -> str | None:
    if num(p["slot_length"]) < num(p["slot_width"]) + 4:
        return "a slot must be at least 4 mm longer than it is wide"
    angle = math.radians(num(p["angle"]))
    if whole(p["count"]) > 1 and num(p["pitch"]) * math.cos(angle) < num(p["slot_width"]) + 3:
        return "neighbouring slots need a web of at least 3 mm between them"
    reach_x, reach_y = _slot_reach(p)
    if (whole(p["count"]) - 1) * num(p["pitch"]) + 2 * reach_x + 4 > num(p["length"]):
        return "the slots must stay at least 2 mm in from the plate's ends"
    if 2 * reach_y + 4 > num(p["width"]):
        return "the slots must stay at least 2 mm in from the plate's sides"
    return None


def _angled_slots_turn(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    angle = num(p["angle"]) + 5 * float(rng.integers(2, 4)) * (1 if rng.random() < 0.5 else -1)
    return (
        {**p, "angle": angle},
        lambda q: (
            f"turn the {q.w('slots')} about their centres so that their long {q.w('axis')} is "
            f"tilted {q.deg(angle)} from the Y {q.w('axis')}, still leaning towards +X"
        ),
    )


# -- angle_gusset ----------------------------------------------------------------------------------


def _gusset(rng: np.random.Generator) -> Params:
    thickness, hole = mm(rng, 3, 8), mm(rng, 4, 9)
    width = mm(rng, max(25, 2 * hole + 10), 60)
    gusset = mm(rng, thickness + 10, thickness + 25)
    # Each leg's hole sits beyond the gusset, at least 2 mm clear of it and of the leg's end.
    hole_x = mm(rng, gusset + hole / 2 + 2, gusset + hole / 2 + 15)
    hole_y = mm(rng, gusset + hole / 2 + 2, gusset + hole / 2 + 15)
    return {
        "leg_x": mm(rng, hole_x + hole / 2 + 3, hole_x + hole / 2 + 20),
        "leg_y": mm(rng, hole_y + hole / 2 + 3, hole_y + hole / 2 + 20),
        "width": width,
        "thickness": thickness,
        "gusset": gusset,
        "gusset_thickness": mm(rng, 3, min(10, width / 3)),
        "hole": hole,
        "hole_x": hole_x,
        "hole_y": hole_y,
    }


def _gusset_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"an angle {q.w('bracket')} of L profile, drawn in {q.w('the XY plane')} and extruded "
        f"{q.len(p['width'])} up +Z from it, its outer {q.w('corner')} on the Z {q.w('axis')}",
        f"one {q.w('leg')} runs {q.len(p['leg_x'])} {q.w('along')} +X with its outer face on "
        f"y = 0, the other {q.len(p['leg_y'])} {q.w('along')} +Y with its outer face on x = 0, "
        f"both {q.len(p['thickness'])} {q.w('thick')} with sharp {q.w('corners')}",
        f"a triangular {q.w('gusset')} {q.len(p['gusset_thickness'])} {q.w('thick')} fills the "
        f"inside {q.w('corner')}, {q.w('centred')} on z = {q.len(num(p['width']) / 2)}",
        f"the {q.w('gusset')}'s sloping face runs from the point "
        f"{q.at(p['gusset'], p['thickness'])} "
        f"on the inside face of the X {q.w('leg')} to {q.at(p['thickness'], p['gusset'])} on "
        f"the inside face of the Y {q.w('leg')}",
        f"both {q.w('leg')}s have one {q.dia(p['hole'], 'through-hole')} square to them at "
        f"z = {q.len(num(p['width']) / 2)}, x = {q.len(p['hole_x'])} in the X {q.w('leg')} and "
        f"y = {q.len(p['hole_y'])} in the Y {q.w('leg')}",
    ]


def _l_profile(p: Params) -> list[tuple[float, float]]:
    t, a, b = num(p["thickness"]), num(p["leg_x"]), num(p["leg_y"])
    return [(0, 0), (a, 0), (a, t), (t, t), (t, b), (0, b)]


def _gusset_triangle(p: Params) -> list[tuple[float, float]]:
    """The gusset's triangle, its third corner sunk into the legs' overlap (no coplanar
    faces); what shows is the triangle between the legs' inside faces and the sloping face."""
    t, g = num(p["thickness"]), num(p["gusset"])
    return [(t / 2, t / 2), (g, t), (t, g)]


def _gusset_program(p: Params) -> str:
    w, gt, t = num(p["width"]), num(p["gusset_thickness"]), num(p["thickness"])
    r = num(p["hole"]) / 2
    return (
        f"angle = cq.Workplane('XY').polyline({pts(_l_profile(p))}).close().extrude({w})\n"
        f"gusset = (\n"
        f"    cq.Workplane('XY', origin=(0, 0, {w / 2 - gt / 2}))\n"
        f"    .polyline({pts(_gusset_triangle(p))}).close().extrude({gt})\n"
        f")\n"
        f"hole_x = cq.Workplane('XZ').center({p['hole_x']}, {w / 2}).circle({r})"
        f".extrude({2 * t}, both=True)\n"
        f"hole_y = cq.Workplane('YZ').center({p['hole_y']}, {w / 2}).circle({r})"
        f".extrude({2 * t}, both=True)\n"
        f"result = angle.union(gusset).cut(hole_x).cut(hole_y)\n"
    )


def _gusset_calls(p: Params) -> list[Call]:
    w, gt, t = num(p["width"]), num(p["gusset_thickness"]), num(p["thickness"])
    return [
        call("extrude_polygon", points=[list(c) for c in _l_profile(p)], height=w),
        call(
            "extrude_polygon",
            points=[[round(x, 4), round(y, 4)] for x, y in _gusset_triangle(p)],
            height=gt,
            z=w / 2 - gt / 2,
        ),
        call(
            "cut_cylinder",
            diameter=p["hole"],
            height=3 * t,
            x=p["hole_x"],
            y=t / 2,
            z=w / 2,
            axis="Y",
        ),
        call(
            "cut_cylinder",
            diameter=p["hole"],
            height=3 * t,
            x=t / 2,
            y=p["hole_y"],
            z=w / 2,
            axis="X",
        ),
    ]


def _gusset_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["gusset"] < f["thickness"] + 5:
        return "the gusset must reach at least 5 mm beyond the legs' inside faces"
    for at, leg in (("hole_x", "leg_x"), ("hole_y", "leg_y")):
        if f[at] - f["hole"] / 2 < f["gusset"] + 1.5:
            return "each hole must clear the gusset by at least 1.5 mm"
        if f[at] + f["hole"] / 2 > f[leg] - 2:
            return "each hole must stay at least 2 mm in from its leg's end"
    if f["hole"] + 4 > f["width"] or f["gusset_thickness"] > f["width"] - 6:
        return "the holes and the gusset must fit in the bracket's width"
    return None


# -- clevis ----------------------------------------------------------------------------------------

# DIN 71752 forks: thread, pin and gap all equal the size.
CLEVIS_SIZES = ("M6", "M8", "M10", "M12", "M16")


def _size(p: Params) -> float:
    return float(str(p["size"])[1:])


def _clevis(rng: np.random.Generator) -> Params:
    size = CLEVIS_SIZES[int(rng.integers(len(CLEVIS_SIZES)))]
    d = float(size[1:])
    return {
        "size": size,
        "body": mm(rng, 2 * d, 2.5 * d),
        "cheek": mm(rng, max(3, 0.5 * d), 0.8 * d),
        "base": mm(rng, d + 2, 1.5 * d + 4),
        "pin_height": mm(rng, 1.5 * d, 2.5 * d),
    }


def _clevis_text(p: Params, q: Phrases) -> list[str]:
    d, size = _size(p), str(p["size"])
    width = 2 * num(p["cheek"]) + d
    top = num(p["base"]) + num(p["pin_height"])
    return [
        f"a {q.w('clevis')} with a U-shaped fork (DIN 71752, size {size}) standing on "
        f"{q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}, its {q.w('cheek')}s "
        f"parallel to the XZ plane",
        f"its {q.w('base')} is a {q.dims(p['body'], width, p['base'])} {q.w('block')} "
        f"(X × Y × Z) {q.w('lying')} on {q.w('the XY plane')}",
        f"two {q.w('cheek')}s {q.len(p['cheek'])} {q.w('thick')} rise from the full top face of "
        f"the {q.w('base')}, leaving a {q.len(d)} gap between them {q.w('centred')} on y = 0",
        f"the {q.w('cheek')}s end in half-rounds of {q.len(num(p['body']) / 2)} radius about a "
        f"{q.w('cross-hole')} {q.w('axis')} parallel to Y at z = {q.len(top)}",
        f"a {q.dia(d, 'cross-hole')} for the pin runs {q.w('through')} both {q.w('cheek')}s on "
        f"that {q.w('axis')}",
        f"an {size} thread, modelled as a plain {q.dia(d, 'hole')} "
        f"{q.len(num(p['base']) - 2)} {q.w('deep')}, is tapped up into the {q.w('base')} from "
        f"its bottom face on the Z {q.w('axis')}",
    ]


def _clevis_program(p: Params) -> str:
    d = _size(p)
    body, cheek, base, rise = num(p["body"]), num(p["cheek"]), num(p["base"]), num(p["pin_height"])
    width, top, side = 2 * cheek + d, base + rise, d / 2 + cheek / 2
    return (
        f"base = cq.Workplane('XY').box({body}, {width}, {base}, centered=(True, True, False))\n"
        f"# One cheek at +Y, mirrored to -Y; each sinks 1 mm into the base.\n"
        f"cheek = (\n"
        f"    cq.Workplane('XY').box({body}, {cheek}, {rise + 1}).translate((0, {side}, "
        f"{base - 1 + (rise + 1) / 2}))\n"
        f"    .union(cq.Workplane('XZ', origin=(0, {side + cheek / 2}, {top}))"
        f".circle({body / 2}).extrude({cheek}))\n"
        f")\n"
        f"pin = cq.Workplane('XZ', origin=(0, {width / 2 + 1}, {top})).circle({d / 2})"
        f".extrude({width + 2})\n"
        f"# The tapped hole, blind from below (1 mm past the bottom face: no coplanar cut).\n"
        f"thread = cq.Workplane('XY', origin=(0, 0, -1)).circle({d / 2}).extrude({base - 1})\n"
        f"result = base.union(cheek).union(cheek.mirror('XZ')).cut(pin).cut(thread)\n"
    )


def _clevis_calls(p: Params) -> list[Call]:
    """The +Y half (half the base and one cheek), mirrored in the XZ plane, then the holes."""
    d = _size(p)
    body, cheek, base, rise = num(p["body"]), num(p["cheek"]), num(p["base"]), num(p["pin_height"])
    width, top, side = 2 * cheek + d, base + rise, d / 2 + cheek / 2
    return [
        call("add_box", length=body, width=width / 2, height=base, y=width / 4, z=base / 2),
        call(
            "add_box",
            length=body,
            width=cheek,
            height=rise + 1,
            y=side,
            z=base - 1 + (rise + 1) / 2,
        ),
        call("add_cylinder", diameter=body, height=cheek, y=side, z=top, axis="Y"),
        call("mirror", plane="XZ"),
        call("cut_cylinder", diameter=d, height=width + 2, z=top, axis="Y"),
        call("cut_cylinder", diameter=d, height=base - 1, z=(base - 3) / 2),
    ]


def _clevis_check(p: Params) -> str | None:
    d = _size(p)
    if num(p["body"]) < 2 * d:
        return "the cheeks' half-rounds must leave at least half the pin's diameter round it"
    if num(p["cheek"]) < 3:
        return "the cheeks must be at least 3 mm thick"
    if num(p["pin_height"]) < d / 2 + 2 + 0.5 * d:
        return "the pin hole must clear the base by at least half the pin's diameter"
    if num(p["base"]) - 2 < 0.75 * d:
        return "the base must carry at least three quarters of a diameter of thread, 2 mm short"
    return None


# -- t_bracket -------------------------------------------------------------------------------------


def _t_bracket(rng: np.random.Generator) -> Params:
    flange_thickness, web_thickness = mm(rng, 4, 10), mm(rng, 4, 10)
    hole, web_hole = mm(rng, 4, 9), mm(rng, 4, 9)
    width = mm(rng, max(30, 2 * hole + 16, 2 * web_hole + 16), 80)
    # Flange holes in the wings, clear of the web and the ends by at least 2 mm.
    hole_x = mm(rng, web_thickness / 2 + hole / 2 + 3, web_thickness / 2 + hole / 2 + 20)
    hole_y = mm(rng, hole / 2 + 3, width / 2 - hole / 2 - 3)
    web_z = mm(rng, flange_thickness + web_hole / 2 + 3, flange_thickness + web_hole / 2 + 25)
    return {
        "length": 2 * mm(rng, hole_x + hole / 2 + 3, hole_x + hole / 2 + 20),
        "width": width,
        "flange_thickness": flange_thickness,
        "height": mm(rng, web_z + web_hole / 2 + 4, web_z + web_hole / 2 + 25),
        "web_thickness": web_thickness,
        "hole": hole,
        "hole_x": hole_x,
        "hole_y": hole_y,
        "web_hole": web_hole,
        "web_z": web_z,
        "web_y": mm(rng, web_hole / 2 + 3, width / 2 - web_hole / 2 - 3),
    }


def _t_bracket_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a T-shaped mounting {q.w('bracket')} {q.len(p['width'])} {q.w('long')} "
        f"{q.w('along')} Y, {q.w('centred')} {q.w('on the origin')} in X and Y, its "
        f"{q.w('base')} {q.w('lying')} on {q.w('the XY plane')}",
        f"its {q.w('base')} is {q.len(p['length'])} {q.w('wide')} in X and "
        f"{q.len(p['flange_thickness'])} {q.w('thick')}",
        f"a {q.w('upright')} {q.len(p['web_thickness'])} {q.w('thick')} in X, "
        f"{q.w('centred')} on x = 0, rises from the {q.w('base')} over the full length to "
        f"{q.len(p['height'])} above {q.w('the XY plane')}",
        f"the {q.w('base')} is pierced at x = ±{q.len(p['hole_x'])}, y = ±{q.len(p['hole_y'])} "
        f"by {q.dia(p['hole'], 'through-holes')}, {q.count(4)} in all",
        f"the {q.w('upright')} is pierced {q.w('along')} X at y = ±{q.len(p['web_y'])}, "
        f"z = {q.len(p['web_z'])} by {q.dia(p['web_hole'], 'through-holes')}, "
        f"{q.count(2)} in all",
    ]


def _t_bracket_points(p: Params) -> list[tuple[float, float]]:
    x, y = num(p["hole_x"]), num(p["hole_y"])
    return [(x, y), (-x, y), (x, -y), (-x, -y)]


def _t_bracket_program(p: Params) -> str:
    length, width, tf = num(p["length"]), num(p["width"]), num(p["flange_thickness"])
    tw, height, y, z = num(p["web_thickness"]), num(p["height"]), num(p["web_y"]), num(p["web_z"])
    return (
        f"base = cq.Workplane('XY').box({length}, {width}, {tf}, centered=(True, True, False))\n"
        f"web = cq.Workplane('XY').box({tw}, {width}, {height}, centered=(True, True, False))\n"
        f"holes = (\n"
        f"    cq.Workplane('XY').pushPoints({pts(_t_bracket_points(p))})\n"
        f"    .circle({num(p['hole']) / 2}).extrude({tf})\n"
        f")\n"
        f"web_holes = (\n"
        f"    cq.Workplane('YZ', origin=({-tw},0, 0)).pushPoints([({y}, {z}), ({-y}, {z})])\n"
        f"    .circle({num(p['web_hole']) / 2}).extrude({2 * tw})\n"
        f")\n"
        f"result = base.union(web).cut(holes).cut(web_holes)\n"
    )


def _t_bracket_calls(p: Params) -> list[Call]:
    height, tw, z = num(p["height"]), num(p["web_thickness"]), num(p["web_z"])
    tf = num(p["flange_thickness"])
    calls = [
        call("add_box", length=p["length"], width=p["width"], height=tf, z=tf / 2),
        call("add_box", length=tw, width=p["width"], height=height, z=height / 2),
    ]
    calls += [call("cut_hole", diameter=p["hole"], x=x, y=y) for x, y in _t_bracket_points(p)]
    for y in (num(p["web_y"]), -num(p["web_y"])):
        calls.append(
            call("cut_cylinder", diameter=p["web_hole"], height=2 * tw, y=y, z=z, axis="X")
        )
    return calls


def _t_bracket_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["hole_x"] - f["hole"] / 2 < f["web_thickness"] / 2 + 2:
        return "the base holes must clear the web by at least 2 mm"
    if f["hole_x"] + f["hole"] / 2 > f["length"] / 2 - 2:
        return "the base holes must stay at least 2 mm in from the base's ends"
    for at, hole in (("hole_y", "hole"), ("web_y", "web_hole")):
        if f[at] - f[hole] / 2 < 1.5 or f[at] + f[hole] / 2 > f["width"] / 2 - 2:
            return "the holes must stay apart and at least 2 mm in from the bracket's ends"
    if f["web_z"] - f["web_hole"] / 2 < f["flange_thickness"] + 2:
        return "the web holes must clear the base by at least 2 mm"
    if f["web_z"] + f["web_hole"] / 2 > f["height"] - 2:
        return "the web holes must stay at least 2 mm below the web's top"
    return None


# -- the families ----------------------------------------------------------------------------------

FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "plate_counterbored",
        "a plate with a grid of counterbored socket-head screw holes",
        ("hole", "counterbore", "pattern"),
        (
            Dimension("screw", "screw size", unit="choice", choices=SCREWS),
            Dimension("cols", "number of hole columns", 2, 4, unit="count"),
            Dimension("rows", "number of hole rows", 2, 3, unit="count"),
            Dimension("pitch_x", "hole pitch in X", 9, 43.5),
            Dimension("pitch_y", "hole pitch in Y", 9, 38.5),
            Dimension("length", "plate length", 20, 180),
            Dimension("width", "plate width", 20, 120),
            Dimension("thickness", "plate thickness", 6, 19),
        ),
        _counterbored,
        _counterbored_text,
        _counterbored_program,
        _counterbored_calls,
        _recount("cols", -1),
        (
            resize("thickness", 1, 4),
            resize("pitch_x", 1.5, 5),
            Edit("change screw size", apply=_counterbored_resize_screw),
        ),
        check=_counterbored_check,
        words={"grid": ("grid", "rectangular array", "matrix")},
    ),
    Family(
        "plate_countersunk",
        "a strip with a row of 90° countersunk screw holes",
        ("hole", "countersink", "pattern"),
        (
            Dimension("screw", "screw size", unit="choice", choices=SCREWS),
            Dimension("count", "number of holes", 2, 6, unit="count"),
            Dimension("pitch", "hole pitch", 9.5, 38),
            Dimension("length", "strip length", 20, 240),
            Dimension("width", "strip width", 10.5, 39),
            Dimension("thickness", "strip thickness", 2.5, 12),
        ),
        _countersunk,
        _countersunk_text,
        _countersunk_program,
        _countersunk_calls,
        _recount("count", -1),
        (
            resize("thickness", 1, 3),
            resize("pitch", 1.5, 5),
            Edit("change hole count", apply=_countersunk_recount),
        ),
        check=_countersunk_check,
        words={"strip": ("strip", "flat bar", "bar stock")},
    ),
    Family(
        "plate_pocketed",
        "a plate with a round-cornered blind pocket and four corner holes",
        ("pocket", "fillet", "hole"),
        (
            Dimension("length", "plate length", 30, 140),
            Dimension("width", "plate width", 20, 90),
            Dimension("thickness", "plate thickness", 4, 15),
            Dimension("pocket_length", "pocket length", 20, 80),
            Dimension("pocket_width", "pocket width", 15, 60),
            Dimension("depth", "pocket depth", 1.5, 13),
            Dimension("radius", "pocket corner radius", 1.5, 15),
            Dimension("hole", "hole diameter", 3, 9),
            Dimension("inset", "holes' inset from the plate's edges", 3.5, 12.5),
        ),
        _pocketed,
        _pocketed_text,
        _pocketed_program,
        _pocketed_calls,
        _moved("inset", -1.5),
        (resize("depth", 1, 3), resize("pocket_length", 3, 8), resize("radius", 1.5, 3)),
        check=_pocketed_check,
    ),
    Family(
        "plate_grid_holes",
        "a perforated plate with a rectangular grid of through-holes",
        ("hole",),
        (
            Dimension("cols", "number of hole columns", 3, 7, unit="count"),
            Dimension("rows", "number of hole rows", 2, 6, unit="count"),
            Dimension("hole", "hole diameter", 3, 10),
            Dimension("pitch_x", "hole pitch in X", 5, 20),
            Dimension("pitch_y", "hole pitch in Y", 5, 20),
            Dimension("length", "plate length", 20, 150),
            Dimension("width", "plate width", 15, 130),
            Dimension("thickness", "plate thickness", 1.5, 6),
        ),
        _grid_holes,
        _grid_holes_text,
        _grid_holes_program,
        _grid_holes_calls,
        _recount("cols", -1),
        (
            resize("thickness", 1, 2),
            resize("hole", 1, 2),
            Edit("change the row count", apply=_grid_add_row),
        ),
        check=_grid_holes_check,
        words={"grid": ("grid", "rectangular array", "matrix")},
    ),
    Family(
        "plate_angled_slots",
        "an adjustment plate with parallel slots tilted from the Y axis",
        ("slot", "pattern"),
        (
            Dimension("count", "number of slots", 1, 4, unit="count"),
            Dimension("slot_width", "slot width", 4, 10),
            Dimension("slot_length", "slot length", 12, 50),
            Dimension("angle", "slot tilt from the Y axis", 10, 45, unit="deg"),
            Dimension("thickness", "plate thickness", 3, 10),
            Dimension("pitch", "slot pitch", 0, 40),
            Dimension("length", "plate length", 15, 190),
            Dimension("width", "plate width", 15, 90),
        ),
        _angled_slots,
        _angled_slots_text,
        _angled_slots_program,
        _angled_slots_calls,
        lambda p: {**p, "angle": -num(p["angle"])},
        (
            resize("thickness", 1, 3),
            resize("slot_length", 3, 8),
            Edit("turn the slots", apply=_angled_slots_turn),
        ),
        check=_angled_slots_check,
    ),
    Family(
        "angle_gusset",
        "an L angle bracket with a triangular gusset and a hole in each leg",
        ("rib", "hole", "polygon"),
        (
            Dimension("leg_x", "X leg's length", 20, 90),
            Dimension("leg_y", "Y leg's length", 20, 90),
            Dimension("width", "bracket width", 25, 60),
            Dimension("thickness", "leg thickness", 3, 8),
            Dimension("gusset", "gusset's reach along each leg", 13, 33),
            Dimension("gusset_thickness", "gusset thickness", 3, 10),
            Dimension("hole", "hole diameter", 4, 9),
            Dimension("hole_x", "X leg hole's distance from the outer corner", 15, 55),
            Dimension("hole_y", "Y leg hole's distance from the outer corner", 15, 55),
        ),
        _gusset,
        _gusset_text,
        _gusset_program,
        _gusset_calls,
        _moved("gusset", -3),
        (resize("gusset_thickness", 1.5, 3), resize("leg_x", 3, 10), resize("width", 3, 8)),
        check=_gusset_check,
        words={"gusset": ("gusset", "gusset plate", "corner brace")},
    ),
    Family(
        "clevis",
        "a U-shaped clevis fork with a cross pin hole and a cosmetic M-thread hole "
        "(the thread modelled as a plain blind hole of its nominal diameter)",
        ("hole", "mirror", "thread"),
        (
            Dimension("size", "clevis size", unit="choice", choices=CLEVIS_SIZES),
            Dimension("body", "clevis body width", 12, 40),
            Dimension("cheek", "cheek thickness", 3, 13),
            Dimension("base", "base height", 8, 28),
            Dimension("pin_height", "pin axis height above the base", 9, 40),
        ),
        _clevis,
        _clevis_text,
        _clevis_program,
        _clevis_calls,
        _moved("pin_height", 2),
        (resize("base", 1, 4), resize("cheek", 1, 2.5), resize("pin_height", 2, 5)),
        check=_clevis_check,
        words={
            "clevis": ("clevis", "fork end", "yoke"),
            "cheek": ("cheek", "side plate", "jaw"),
            "cross-hole": ("cross-hole", "pin hole", "transverse bore"),
        },
    ),
    Family(
        "t_bracket",
        "an inverted-T mounting bracket with holes in its base and web",
        ("hole",),
        (
            Dimension("length", "base width", 25, 110),
            Dimension("width", "bracket length", 30, 80),
            Dimension("flange_thickness", "base thickness", 4, 10),
            Dimension("height", "bracket height", 17, 80),
            Dimension("web_thickness", "web thickness", 4, 10),
            Dimension("hole", "base hole diameter", 4, 9),
            Dimension("hole_x", "base holes' offset in X", 5, 30),
            Dimension("hole_y", "base holes' offset in Y", 4.5, 36),
            Dimension("web_hole", "web hole diameter", 4, 9),
            Dimension("web_z", "web holes' height", 8.5, 40),
            Dimension("web_y", "web holes' offset in Y", 4.5, 36),
        ),
        _t_bracket,
        _t_bracket_text,
        _t_bracket_program,
        _t_bracket_calls,
        _moved("web_z", 3),
        (resize("height", 3, 10), resize("hole_x", 1.5, 4), resize("flange_thickness", 1, 3)),
        check=_t_bracket_check,
        words={"upright": ("web", "upright web", "stem")},
    ),
)
