"""Housings and enclosures: a shelled enclosure with screw bosses, a lid with a locating lip, a
ribbed open box, a flanged bearing housing, a NEMA stepper-motor mount plate, a vented case, a
revolved cup and a square junction box with cable-gland knock-outs.

Every length is in mm, every angle in degrees; Z is up and every part stands on (or, for the
lid, hangs its lip below) the XY plane, centred on the Z axis. Real standards fix the sizes
where they exist: ISO 273 medium clearance holes, ISO 2306 tap drills, ISO 15 deep-groove ball
bearings (62xx series), the NEMA ICS 16 stepper-motor faces and metric cable-gland entries
(EN 62444). Documented approximation: tapped holes are cosmetic threads, modelled as plain holes
of the tap-drill diameter (the prompt and the family summary say so).
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
    Instruction,
    Params,
    call,
    mm,
    pts,
    resize,
    round4,
)
from toolgym.envs.cadquery.families.phrases import Phrases
from toolgym.envs.cadquery.families.standards import clearance_holes

# -- standards -----------------------------------------------------------------------------------

NOMINAL = {"M2.5": 2.5, "M3": 3.0, "M4": 4.0, "M5": 5.0, "M6": 6.0, "M8": 8.0}
CLEARANCE = clearance_holes("M2.5", "M3", "M4", "M5", "M6", "M8")  # ISO 273 medium
TAP_DRILL = {"M2.5": 2.05, "M3": 2.5, "M4": 3.3}  # ISO 2306
BOSS_SCREWS = ("M2.5", "M3", "M4")
#: ISO 15 deep-groove ball bearings: bore d, outside diameter D, width B.
BEARINGS = {
    "6200": (10.0, 30.0, 9.0),
    "6201": (12.0, 32.0, 10.0),
    "6202": (15.0, 35.0, 11.0),
    "6203": (17.0, 40.0, 12.0),
    "6204": (20.0, 47.0, 14.0),
    "6205": (25.0, 52.0, 15.0),
    "6206": (30.0, 62.0, 16.0),
}
#: NEMA ICS 16 stepper faces: face square, pilot diameter, hole spacing, mounting screw.
NEMA = {
    "NEMA 17": (42.3, 22.0, 31.0, "M3"),
    "NEMA 23": (56.4, 38.1, 47.14, "M5"),
}
PILOT_CLEARANCE = 0.5  # the plate's bore over the motor's pilot diameter
#: Metric cable-gland entry holes (EN 62444 thread size + 0.5 mm clearance).
GLANDS = {"M16": 16.5, "M20": 20.5, "M25": 25.5, "M32": 32.5}

WORDS = {
    "lip": ("lip", "locating lip", "spigot rim"),
    "open box": ("open box", "open-top box", "open tray"),
    "bearing": ("bearing", "ball bearing", "rolling bearing"),
    "bearing seat": ("bearing seat", "seat bore", "bearing recess"),
    "motor mount": ("motor mount plate", "motor plate", "motor adaptor plate"),
    "stepper motor": ("stepper motor", "stepping motor", "step motor"),
    "vent": ("vent", "ventilation", "air"),
    "cup": ("cup", "round container", "beaker"),
    "junction box": ("junction box", "terminal box", "electrical box"),
    "knock-out": ("knock-out", "knockout hole", "cable entry"),
    "knock-outs": ("knock-outs", "knockout holes", "cable entries"),
    "cable gland": ("cable gland", "gland", "cord grip"),
    "tapped": ("tapped", "threaded", "screw-cut"),
}

# -- helpers -------------------------------------------------------------------------------------


def _up(value: float) -> float:
    """The 0.5 mm grid value at or above ``value``."""
    return math.ceil(value * 2 - 1e-9) / 2


def _down(value: float) -> float:
    """The 0.5 mm grid value at or below ``value``."""
    return math.floor(value * 2 + 1e-9) / 2


def _draw(rng: np.random.Generator, low: float, high: float) -> float:
    """A length on the 0.5 mm grid inside [low, high] (bounds off the grid stay respected)."""
    low, high = _up(low), _down(high)
    return low if high <= low else mm(rng, low, high)


def _v(p: Params) -> dict[str, float]:
    """The numeric parameters as floats."""
    return {k: float(v) for k, v in p.items() if not isinstance(v, str)}  # type: ignore[arg-type]


def _corners(a: float, b: float) -> list[tuple[float, float]]:
    return [(a, b), (-a, b), (a, -b), (-a, -b)]


def _row(count: int, pitch: float) -> list[float]:
    """Centres of ``count`` features ``pitch`` apart, symmetric about 0."""
    return [(k - (count - 1) / 2) * pitch for k in range(count)]


def _rounded_box(length: float, width: float, height: float, radius: float) -> list[Call]:
    return [
        call("add_box", length=length, width=width, height=height, z=height / 2),
        call("fillet_edges", radius=radius, edges="|Z"),
    ]


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    """A near miss: one dimension off by ``by`` mm (a feature moved or resized)."""
    return lambda p: {**p, name: float(p[name]) + by}  # type: ignore[arg-type]


def _signed(q: Phrases, a: float, b: float) -> str:
    return f"x = ±{q.len(a)}, y = ±{q.len(b)}"


def _shell_sentences(p: dict[str, float], q: Phrases, skin: str) -> list[str]:
    """The wall and rounded-corner sentences shared by the shelled boxes."""
    return [
        f"it is hollowed out to {q.len(p['wall'])} {q.w('thick')} {q.w('walls')} and {skin}",
        f"its four vertical outside {q.w('edges')} are {q.w('rounded')} to a "
        f"{q.radius(p['radius'])}, the inside {q.w('corners')} following at a "
        f"{q.radius(p['radius'] - p['wall'])}",
    ]


# -- enclosure with screw bosses -----------------------------------------------------------------


def _enclosure_bosses(rng: np.random.Generator) -> Params:
    screw = BOSS_SCREWS[int(rng.integers(len(BOSS_SCREWS)))]
    d, pilot = NOMINAL[screw], TAP_DRILL[screw]
    length, width = mm(rng, 60, 160), mm(rng, 40, 120)
    height, wall = mm(rng, 20, 70), mm(rng, 1.5, 3.5)
    radius = _draw(rng, wall + 1.5, min(length, width) / 8)
    boss = _draw(rng, max(pilot + 3.5, 2 * d), 2.5 * d + 2)
    # Bosses stand clear of the walls (and of the rounded corners) by at least 1.5 mm.
    inset_low = max(radius, wall + boss / 2 + 1.5)
    inset = _draw(rng, inset_low, min(inset_low + 6, (min(length, width) - boss - 4) / 2))
    boss_height = _draw(rng, 2 * d + 3, height - wall - 2)
    return {
        "length": length,
        "width": width,
        "height": height,
        "wall": wall,
        "radius": radius,
        "screw": screw,
        "boss": boss,
        "inset": inset,
        "boss_height": boss_height,
        "pilot_depth": _draw(rng, 2 * d, boss_height - 1),
    }


def _boss_spots(p: dict[str, float]) -> list[tuple[float, float]]:
    return _corners(p["length"] / 2 - p["inset"], p["width"] / 2 - p["inset"])


def _enclosure_bosses_text(p: Params, q: Phrases) -> list[str]:
    f, screw = _v(p), str(p["screw"])
    return [
        f"an open-top {q.w('enclosure')} {q.dims(f['length'], f['width'], f['height'])} outside "
        f"(X × Y × Z), its {q.w('base')} on {q.w('the XY plane')}, {q.w('centred')} on the Z "
        f"{q.w('axis')}",
        *_shell_sentences(f, q, "floor"),
        f"{q.count(4)} cylindrical screw {q.w('bosses')} of {q.len(f['boss'])} "
        f"{q.w('diameter')} stand on the floor, clear of the {q.w('walls')}, and rise "
        f"{q.len(f['boss_height'])} above the floor's top face",
        f"the {q.w('bosses')} are {q.w('centred')} at "
        f"{_signed(q, f['length'] / 2 - f['inset'], f['width'] / 2 - f['inset'])}",
        f"{q.w('each')} {q.w('boss')} has an {screw} {q.w('tapped')} {q.w('hole')} on its "
        f"{q.w('axis')}, a cosmetic thread modelled as a plain {q.dia(TAP_DRILL[screw], 'hole')} "
        f"{q.len(f['pilot_depth'])} {q.w('deep')} from the {q.w('boss')}'s top",
    ]


def _enclosure_bosses_program(p: Params) -> str:
    f, pilot = _v(p), TAP_DRILL[str(p["screw"])]
    wall, rise, depth = f["wall"], f["boss_height"], f["pilot_depth"]
    spots = pts(_boss_spots(f))
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({f['length']}, {f['width']}, {f['height']}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({f['radius']})\n"
        f"    .faces('>Z').shell(-{wall})\n"
        f"    .union(\n"
        f"        cq.Workplane('XY').workplane(offset={round4(wall / 2)}).pushPoints({spots})\n"
        f"        .circle({round4(f['boss'] / 2)}).extrude({round4(rise + wall / 2)})\n"
        f"    )\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset={round4(wall + rise - depth)})"
        f".pushPoints({spots})\n"
        f"        .circle({round4(pilot / 2)}).extrude({round4(depth + 1)})\n"
        f"    )\n"
        f")\n"
    )


def _enclosure_bosses_calls(p: Params) -> list[Call]:
    f, pilot = _v(p), TAP_DRILL[str(p["screw"])]
    wall, rise, depth = f["wall"], f["boss_height"], f["pilot_depth"]
    a, b = f["length"] / 2 - f["inset"], f["width"] / 2 - f["inset"]
    calls = [
        *_rounded_box(f["length"], f["width"], f["height"], f["radius"]),
        call("shell", thickness=wall, open_face=">Z"),
    ]
    # Bosses start half-way into the floor (no coplanar faces).
    for x, y in _boss_spots(f):
        calls.append(
            call(
                "add_cylinder",
                diameter=f["boss"],
                height=rise + wall / 2,
                x=x,
                y=y,
                z=wall / 2 + (rise + wall / 2) / 2,
            )
        )
    # The pattern drills from the rim (the part's top) down through air to the holes' bottoms.
    return [
        *calls,
        call(
            "pattern_linear",
            feature="hole",
            size=pilot,
            count_x=2,
            count_y=2,
            pitch_x=2 * a,
            pitch_y=2 * b,
            depth=f["height"] - wall - rise + depth,
        ),
    ]


def _enclosure_bosses_check(p: Params) -> str | None:
    f = _v(p)
    pilot, d = TAP_DRILL[str(p["screw"])], NOMINAL[str(p["screw"])]
    if not f["wall"] + 1.5 <= f["radius"] <= min(f["length"], f["width"]) / 8 + 0.25:
        return "the corner radius must exceed the wall by 1.5 mm and fit the box"
    if f["boss"] < pilot + 3.5:
        return "a boss needs at least 1.5 mm of wall round its tapped hole"
    if f["inset"] < max(f["radius"], f["wall"] + f["boss"] / 2 + 1.5):
        return "the bosses must stand at least 1.5 mm clear of the walls and corners"
    if 2 * f["inset"] > min(f["length"], f["width"]) - f["boss"] - 4:
        return "the bosses must stand at least 4 mm apart"
    if f["wall"] + f["boss_height"] > f["height"] - 2:
        return "the bosses must end at least 2 mm below the rim"
    if not 2 * d <= f["pilot_depth"] <= f["boss_height"] - 1:
        return "the tapped holes must be two diameters deep and stop 1 mm above the floor"
    return None


def _boss_screw(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """Re-size the bosses' tapped holes to another screw (same boss, same depth)."""
    old = str(p["screw"])
    new = [s for s in BOSS_SCREWS if s != old][int(rng.integers(len(BOSS_SCREWS) - 1))]
    return (
        {**p, "screw": new},
        lambda q: (
            f"change the {q.w('tapped')} {q.w('holes')} in the {q.w('bosses')} from {old} to "
            f"{new}, modelled as plain {q.dia(TAP_DRILL[new], 'holes')} of the same depth"
        ),
    )


# -- lid with a locating lip ---------------------------------------------------------------------


def _lid_with_lip(rng: np.random.Generator) -> Params:
    screw = BOSS_SCREWS[int(rng.integers(len(BOSS_SCREWS)))]
    hole = CLEARANCE[screw]
    length, width = mm(rng, 60, 160), mm(rng, 40, 120)
    thickness, lip_wall = mm(rng, 2, 5), mm(rng, 1.5, 3)
    chamfer = _draw(rng, 0.5, min(1.5, thickness / 2))
    # Holes stay 1 mm clear of the chamfer; the lip 1.5 mm clear of the holes.
    inset = _draw(rng, hole / 2 + max(2, chamfer + 1), hole / 2 + 5)
    return {
        "length": length,
        "width": width,
        "thickness": thickness,
        "chamfer": chamfer,
        "screw": screw,
        "holes": (4, 6)[int(rng.integers(2))],
        "inset": inset,
        # The lip leaves at least 10 mm of room inside it.
        "lip_inset": _draw(
            rng,
            inset + hole / 2 + 1.5,
            min(inset + hole / 2 + 5, (min(length, width) - 2 * lip_wall - 10) / 2),
        ),
        "lip_wall": lip_wall,
        "lip_depth": mm(rng, 3, 10),
    }


def _lid_holes(p: Params) -> list[tuple[float, float]]:
    f = _v(p)
    a, b = f["length"] / 2 - f["inset"], f["width"] / 2 - f["inset"]
    return _corners(a, b) + ([(0.0, b), (0.0, -b)] if p["holes"] == 6 else [])


def _lid_text(p: Params, q: Phrases) -> list[str]:
    f = _v(p)
    outside = f["length"] - 2 * f["lip_inset"], f["width"] - 2 * f["lip_inset"]
    a, b = f["length"] / 2 - f["inset"], f["width"] / 2 - f["inset"]
    middle = f", and two more at x = 0, y = ±{q.len(b)}" if p["holes"] == 6 else ""
    return [
        f"a {q.w('lid')} for a {q.w('enclosure')}: a "
        f"{q.dims(f['length'], f['width'], f['thickness'])} {q.w('plate')} (X × Y × Z) "
        f"{q.w('lying')} with its underside on {q.w('the XY plane')}, {q.w('centred')} on the Z "
        f"{q.w('axis')}, its {q.w('lip')} hanging below that plane",
        f"the four top {q.w('edges')} of the {q.w('plate')} are {q.w('chamfered')} "
        f"{q.len(f['chamfer'])} at {q.deg(45)}",
        f"the rectangular {q.w('lip')} hangs {q.len(f['lip_depth'])} below the underside, "
        f"{q.w('centred')} under the {q.w('plate')}: its outside is {q.dims(*outside)} (X × Y) "
        f"and its {q.w('wall')} is {q.len(f['lip_wall'])} {q.w('thick')}, with square "
        f"{q.w('corners')}",
        f"{q.count(int(p['holes']))} {q.dia(CLEARANCE[str(p['screw'])], 'through-holes')} for "
        f"{p['screw']} {q.w('bolt')}s go {q.w('through')} the {q.w('plate')} outside the "
        f"{q.w('lip')}, at {_signed(q, a, b)}{middle}",
    ]


def _lid_program(p: Params) -> str:
    f = _v(p)
    lo, wo = f["length"] - 2 * f["lip_inset"], f["width"] - 2 * f["lip_inset"]
    t, lw, ld = f["thickness"], f["lip_wall"], f["lip_depth"]
    hole = CLEARANCE[str(p["screw"])]
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({f['length']}, {f['width']}, {t}, centered=(True, True, False))\n"
        f"    .edges('>Z').chamfer({f['chamfer']})\n"
        f"    .union(\n"
        f"        cq.Workplane('XY').workplane(offset={-ld})\n"
        f"        .rect({round4(lo)}, {round4(wo)})"
        f".rect({round4(lo - 2 * lw)}, {round4(wo - 2 * lw)})"
        f".extrude({round4(ld + t / 2)})\n"
        f"    )\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset=-1).pushPoints({pts(_lid_holes(p))})\n"
        f"        .circle({round4(hole / 2)}).extrude({round4(t + 2)})\n"
        f"    )\n"
        f")\n"
    )


def _lid_calls(p: Params) -> list[Call]:
    f = _v(p)
    lo, wo = f["length"] - 2 * f["lip_inset"], f["width"] - 2 * f["lip_inset"]
    t, lw, ld = f["thickness"], f["lip_wall"], f["lip_depth"]
    # The lip as four bars reaching half-way into the plate (no coplanar faces).
    tall, z = ld + t / 2, (t / 2 - ld) / 2
    calls = [
        call("add_box", length=f["length"], width=f["width"], height=t, z=t / 2),
        call("chamfer_edges", length=f["chamfer"], edges=">Z"),
    ]
    for s in (1, -1):
        calls.append(call("add_box", length=lo, width=lw, height=tall, y=s * (wo - lw) / 2, z=z))
    for s in (1, -1):
        calls.append(call("add_box", length=lw, width=wo, height=tall, x=s * (lo - lw) / 2, z=z))
    a, b = f["length"] / 2 - f["inset"], f["width"] / 2 - f["inset"]
    across = 3 if p["holes"] == 6 else 2
    holes = call(
        "pattern_linear",
        feature="hole",
        size=CLEARANCE[str(p["screw"])],
        count_x=across,
        count_y=2,
        pitch_x=2 * a / (across - 1),
        pitch_y=2 * b,
    )
    return [*calls, holes]


def _lid_check(p: Params) -> str | None:
    f = _v(p)
    hole = CLEARANCE[str(p["screw"])]
    if f["chamfer"] > f["thickness"] / 2:
        return "the chamfer may take at most half the plate's thickness"
    if f["inset"] < hole / 2 + max(2, f["chamfer"] + 1):
        return "the holes must stay 2 mm from the edges and 1 mm clear of the chamfer"
    if f["lip_inset"] < f["inset"] + hole / 2 + 1.5:
        return "the lip must stand 1.5 mm clear of the holes"
    if min(f["length"], f["width"]) - 2 * f["lip_inset"] - 2 * f["lip_wall"] < 10:
        return "the lip must leave room inside it"
    return None


def _lid_recount(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """Add or remove the two holes at mid-length."""
    b = float(p["width"]) / 2 - float(p["inset"])  # type: ignore[arg-type]
    if p["holes"] == 4:
        return (
            {**p, "holes": 6},
            lambda q: (
                f"add two more {q.dia(CLEARANCE[str(p['screw'])], 'through-holes')} "
                f"{q.w('through')} the {q.w('plate')} at x = 0, y = ±{q.len(b)}, for six in all"
            ),
        )
    return (
        {**p, "holes": 4},
        lambda q: (
            f"remove the two {q.w('through-holes')} at x = 0, y = ±{q.len(b)}, leaving the four "
            f"at the {q.w('corners')}"
        ),
    )


# -- ribbed open box -----------------------------------------------------------------------------


def _rib_row(
    rng: np.random.Generator, inside: float, rib: float, low: int, high: int
) -> tuple[int, float]:
    """A count of ribs and their pitch, leaving bays of at least 8 mm between ribs and walls."""
    count = int(rng.integers(low, high + 1))
    while count > 1 and _up(rib + 8) > _down((inside - rib - 16) / (count - 1)):
        count -= 1
    if count <= 1:
        return count, 0.0
    return count, _draw(rng, rib + 8, min((inside - rib - 16) / (count - 1), inside / count))


def _box_ribbed(rng: np.random.Generator) -> Params:
    length, width, height = mm(rng, 50, 160), mm(rng, 40, 120), mm(rng, 15, 60)
    wall, floor = mm(rng, 1.5, 4), mm(rng, 1.5, 4)
    rib = _draw(rng, 1.5, wall)
    ribs_x, pitch_x = _rib_row(rng, length - 2 * wall, rib, 1, 4)
    ribs_y, pitch_y = _rib_row(rng, width - 2 * wall, rib, 0, 2)
    return {
        "length": length,
        "width": width,
        "height": height,
        "wall": wall,
        "floor": floor,
        "rib": rib,
        "rib_height": _draw(rng, max(4, (height - floor) / 3), height - floor - 2),
        "ribs_x": ribs_x,
        "pitch_x": pitch_x,
        "ribs_y": ribs_y,
        "pitch_y": pitch_y,
    }


def _rib_boxes(p: Params) -> list[tuple[float, float, float, float]]:
    """Each rib as (x, y, size along X, size along Y), reaching half-way into the walls."""
    f = _v(p)
    inner_l, inner_w = f["length"] - 2 * f["wall"], f["width"] - 2 * f["wall"]
    boxes = [(x, 0.0, f["rib"], inner_w + f["wall"]) for x in _row(int(p["ribs_x"]), f["pitch_x"])]
    boxes += [(0.0, y, inner_l + f["wall"], f["rib"]) for y in _row(int(p["ribs_y"]), f["pitch_y"])]
    return boxes


def _rib_sentence(q: Phrases, count: int, rib: float, pitch: float, run: str, across: str) -> str:
    start = f"run across the inside parallel to {run}, from {q.w('wall')} to {q.w('wall')}"
    if count == 1:
        return (
            f"one {q.w('rib')} {q.len(rib)} {q.w('thick')} runs across the inside parallel to "
            f"{run}, from {q.w('wall')} to {q.w('wall')}, {q.w('centred')} on the {run} "
            f"{q.w('axis')}"
        )
    return (
        f"{q.count(count)} {q.w('ribs')} {q.len(rib)} {q.w('thick')} {start}, {q.w('spaced')} "
        f"{q.len(pitch)} apart {q.w('along')} {across} and symmetric {q.w('about')} the {run} "
        f"{q.w('axis')}"
    )


def _box_ribbed_text(p: Params, q: Phrases) -> list[str]:
    f = _v(p)
    sentences = [
        f"an {q.w('open box')} {q.dims(f['length'], f['width'], f['height'])} outside "
        f"(X × Y × Z), its {q.w('base')} on {q.w('the XY plane')}, {q.w('centred')} on the Z "
        f"{q.w('axis')}",
        f"its four {q.w('walls')} are {q.len(f['wall'])} {q.w('thick')} and its floor "
        f"{q.len(f['floor'])} {q.w('thick')}, with square {q.w('corners')} inside and out",
        _rib_sentence(q, int(p["ribs_x"]), f["rib"], f["pitch_x"], "Y", "X"),
    ]
    if int(p["ribs_y"]) > 0:
        sentences.append(_rib_sentence(q, int(p["ribs_y"]), f["rib"], f["pitch_y"], "X", "Y"))
    sentences.append(
        f"{q.w('each')} {q.w('rib')} stands on the floor and rises {q.len(f['rib_height'])} "
        f"above the floor's top face"
    )
    return sentences


def _box_ribbed_program(p: Params) -> str:
    f = _v(p)
    inner_l, inner_w = f["length"] - 2 * f["wall"], f["width"] - 2 * f["wall"]
    floor, tall = f["floor"], f["rib_height"] + f["floor"] / 2
    lines = [
        "result = (",
        "    cq.Workplane('XY')",
        f"    .box({f['length']}, {f['width']}, {f['height']}, centered=(True, True, False))",
        f"    .cut(cq.Workplane('XY').workplane(offset={floor})"
        f".box({round4(inner_l)}, {round4(inner_w)}, {f['height']}, centered=(True, True, False)))",
    ]
    # Ribs start half-way into the floor and reach half-way into the walls: no coplanar faces.
    for x, y, sx, sy in _rib_boxes(p):
        lines.append(
            f"    .union(cq.Workplane('XY').workplane(offset={round4(floor / 2)})"
            f".center({round4(x)}, {round4(y)})"
            f".box({round4(sx)}, {round4(sy)}, {round4(tall)}, centered=(True, True, False)))"
        )
    return "\n".join([*lines, ")"]) + "\n"


def _box_ribbed_calls(p: Params) -> list[Call]:
    """The box as a floor and four walls (boxes overlapping at the corners), then the ribs."""
    f = _v(p)
    length, width, height, wall, floor = (
        f[k] for k in ("length", "width", "height", "wall", "floor")
    )
    calls = [call("add_box", length=length, width=width, height=floor, z=floor / 2)]
    for s in (1, -1):
        calls.append(
            call(
                "add_box",
                length=length,
                width=wall,
                height=height,
                y=s * (width - wall) / 2,
                z=height / 2,
            )
        )
    for s in (1, -1):
        calls.append(
            call(
                "add_box",
                length=wall,
                width=width,
                height=height,
                x=s * (length - wall) / 2,
                z=height / 2,
            )
        )
    tall = f["rib_height"] + floor / 2
    for x, y, sx, sy in _rib_boxes(p):
        calls.append(
            call("add_box", length=sx, width=sy, height=tall, x=x, y=y, z=floor / 2 + tall / 2)
        )
    return calls


def _rows_fit(count: int, pitch: float, inside: float, rib: float) -> bool:
    if count <= 1:
        return True
    return pitch >= rib + 8 and (count - 1) * pitch + rib + 16 <= inside


def _box_ribbed_check(p: Params) -> str | None:
    f = _v(p)
    if f["rib"] > f["wall"]:
        return "a rib may be at most as thick as the walls"
    if f["floor"] + f["rib_height"] > f["height"] - 2:
        return "the ribs must end at least 2 mm below the rim"
    if not _rows_fit(int(p["ribs_x"]), f["pitch_x"], f["length"] - 2 * f["wall"], f["rib"]):
        return "the ribs across X must leave bays of at least 8 mm"
    if not _rows_fit(int(p["ribs_y"]), f["pitch_y"], f["width"] - 2 * f["wall"], f["rib"]):
        return "the ribs across Y must leave bays of at least 8 mm"
    return None


def _recount_ribs(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """One rib more or fewer across X, re-spaced to equal bays."""
    f = _v(p)
    old = int(p["ribs_x"])
    new = old + 1 if old == 1 or (old < 4 and rng.random() < 0.5) else old - 1
    inside = f["length"] - 2 * f["wall"]
    pitch = _down(inside / (new + 1)) if new > 1 else 0.0
    after = {**p, "ribs_x": new, "pitch_x": pitch}

    def instruction(q: Phrases) -> str:
        if new == 1:
            placed = f"one, {q.w('centred')} on the Y {q.w('axis')}"
        else:
            placed = (
                f"{q.count(new)}, {q.w('spaced')} {q.len(pitch)} apart {q.w('along')} X and "
                f"symmetric {q.w('about')} the Y {q.w('axis')}"
            )
        return (
            f"change the {q.w('ribs')} running parallel to Y from {q.count(old)} to {placed}, "
            f"keeping their thickness and height"
        )

    return after, instruction


# -- flanged bearing housing ---------------------------------------------------------------------

BOLT_SCREWS = ("M4", "M5", "M6", "M8")


def _bearing_housing(rng: np.random.Generator) -> Params:
    bearing = list(BEARINGS)[int(rng.integers(len(BEARINGS)))]
    d, outside, width = BEARINGS[bearing]
    screw = BOLT_SCREWS[int(rng.integers(len(BOLT_SCREWS)))]
    n, hole = NOMINAL[screw], CLEARANCE[screw]
    flange_thickness = mm(rng, 6, 14)
    hub = _draw(rng, outside + 8, outside + 20)
    # The bolt circle leaves room for the bolt heads round the hub, the flange an edge of one
    # bolt diameter beyond the holes.
    pitch = _draw(rng, hub + 2 * n + 2, hub + 2 * n + 14)
    return {
        "bearing": bearing,
        "flange_diameter": _draw(rng, pitch + hole + 2 * n, pitch + hole + 2 * n + 12),
        "flange_thickness": flange_thickness,
        "hub": hub,
        "hub_height": _draw(rng, max(3, width + 3 - flange_thickness), width + 12),
        "through_bore": _draw(rng, d + 2, outside - 6),
        "screw": screw,
        "holes": (3, 4, 6)[int(rng.integers(3))],
        "pitch": pitch,
    }


def _bearing_text(p: Params, q: Phrases) -> list[str]:
    f, bearing, screw = _v(p), str(p["bearing"]), str(p["screw"])
    d, outside, width = BEARINGS[bearing]
    return [
        f"a flanged {q.w('bearing')} {q.w('housing')} {q.w('centred')} on the Z {q.w('axis')}: "
        f"a round {q.w('flange')} {q.w('lying')} on {q.w('the XY plane')} with a cylindrical "
        f"{q.w('hub')} standing up from it",
        f"the {q.w('flange')} has a {q.len(f['flange_diameter'])} {q.w('diameter')} and is "
        f"{q.len(f['flange_thickness'])} {q.w('thick')}",
        f"the {q.w('hub')} has a {q.len(f['hub'])} {q.w('diameter')} and stands "
        f"{q.len(f['hub_height'])} above the {q.w('flange')}'s top face",
        f"a {q.w('bearing seat')} for a {bearing} {q.w('bearing')} ({q.dims(d, outside, width)}, "
        f"bore × outside {q.w('diameter')} × width) is {q.w('cut')} into the top of the "
        f"{q.w('hub')}: a {q.dia(outside, 'bore')} {q.len(width)} {q.w('deep')}",
        f"below the {q.w('bearing seat')} a {q.dia(f['through_bore'], 'through-hole')} on the Z "
        f"{q.w('axis')} runs {q.w('through')} to the underside, leaving a shoulder for the "
        f"{q.w('bearing')}",
        f"{q.count(int(p['holes']))} {q.dia(CLEARANCE[screw], 'holes')} for {screw} "
        f"{q.w('bolt')}s go {q.w('through')} the {q.w('flange')}, {q.w('equally')} "
        f"{q.w('spaced')} on a {q.len(f['pitch'])} bolt circle with the first on the +X "
        f"{q.w('axis')}",
    ]


def _bearing_program(p: Params) -> str:
    f = _v(p)
    _, outside, width = BEARINGS[str(p["bearing"])]
    ft, top = f["flange_thickness"], f["flange_thickness"] + f["hub_height"]
    hole = CLEARANCE[str(p["screw"])]
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').circle({round4(f['flange_diameter'] / 2)}).extrude({ft})\n"
        f"    .union(cq.Workplane('XY').workplane(offset={round4(ft / 2)})"
        f".circle({round4(f['hub'] / 2)}).extrude({round4(top - ft / 2)}))\n"
        f"    .cut(cq.Workplane('XY').workplane(offset={round4(top - width)})"
        f".circle({round4(outside / 2)}).extrude({round4(width + 1)}))\n"
        f"    .cut(cq.Workplane('XY').workplane(offset=-1)"
        f".circle({round4(f['through_bore'] / 2)}).extrude({round4(top + 2)}))\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset=-1)"
        f".polarArray({round4(f['pitch'] / 2)}, 0, 360, {int(p['holes'])})\n"
        f"        .circle({round4(hole / 2)}).extrude({round4(ft + 2)})\n"
        f"    )\n"
        f")\n"
    )


def _bearing_calls(p: Params) -> list[Call]:
    """The seat as the counterbore of the through-hole; the bolt holes as a polar pattern."""
    f = _v(p)
    _, outside, width = BEARINGS[str(p["bearing"])]
    ft, top = f["flange_thickness"], f["flange_thickness"] + f["hub_height"]
    return [
        call("add_cylinder", diameter=f["flange_diameter"], height=ft, z=ft / 2),
        # The hub starts half-way into the flange: no coplanar faces.
        call("add_cylinder", diameter=f["hub"], height=top - ft / 2, z=(top + ft / 2) / 2),
        call(
            "hole",
            diameter=f["through_bore"],
            counterbore_diameter=outside,
            counterbore_depth=width,
        ),
        call(
            "pattern_polar",
            feature="hole",
            size=CLEARANCE[str(p["screw"])],
            count=int(p["holes"]),
            pitch_diameter=f["pitch"],
        ),
    ]


def _bearing_check(p: Params) -> str | None:
    f = _v(p)
    d, outside, width = BEARINGS[str(p["bearing"])]
    n, hole = NOMINAL[str(p["screw"])], CLEARANCE[str(p["screw"])]
    if not d + 1 <= f["through_bore"] <= outside - 6:
        return "the through-hole must clear the shaft and leave a 3 mm shoulder for the bearing"
    if f["hub"] < outside + 8:
        return "the hub needs a wall of at least 4 mm round the bearing seat"
    if f["flange_thickness"] + f["hub_height"] < width + 3:
        return "the housing must be at least 3 mm taller than the bearing seat is deep"
    if f["pitch"] < f["hub"] + 2 * n + 2:
        return "the bolt circle must leave room for the bolt heads round the hub"
    if f["flange_diameter"] < f["pitch"] + hole + 2 * n:
        return "the bolt holes need an edge of one bolt diameter inside the flange"
    if f["pitch"] * math.sin(math.pi / int(p["holes"])) < hole + 3:
        return "the bolt holes must stand 3 mm apart"
    return None


def _change_bearing(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """The next bearing size up or down in the 62xx series (the check rejects a misfit)."""
    names = list(BEARINGS)
    at = names.index(str(p["bearing"]))
    step = 1 if at == 0 or (at < len(names) - 1 and rng.random() < 0.5) else -1
    new = names[at + step]
    _, outside, width = BEARINGS[new]
    return (
        {**p, "bearing": new},
        lambda q: (
            f"change the {q.w('bearing seat')} to suit a {new} {q.w('bearing')}: a "
            f"{q.dia(outside, 'bore')} {q.len(width)} {q.w('deep')} from the {q.w('hub')}'s top, "
            f"keeping the rest"
        ),
    )


# -- NEMA stepper-motor mount plate --------------------------------------------------------------

SLOT_SCREWS = ("M4", "M5", "M6")


def _motor_mount(rng: np.random.Generator) -> Params:
    frame = list(NEMA)[int(rng.integers(len(NEMA)))]
    face = NEMA[frame][0]
    slot_screw = SLOT_SCREWS[int(rng.integers(len(SLOT_SCREWS)))]
    slot = CLEARANCE[slot_screw]
    width = _draw(rng, face + 2, face + 20)
    radius = _draw(rng, 2, 6)
    # The slots stand 2 mm clear of the motor's face square and 3 mm in from the plate's ends;
    # their ends stay out of the rounded corners.
    slot_x = _draw(rng, face / 2 + slot / 2 + 2, face / 2 + slot / 2 + 10)
    end = 2 * (slot_x + slot / 2 + 3)
    return {
        "frame": frame,
        "length": _draw(rng, end, end + 16),
        "width": width,
        "thickness": mm(rng, 3, 8),
        "radius": radius,
        "slot_screw": slot_screw,
        "slot_length": _draw(rng, slot + 6, min(width - 8, width - 2 * radius - 2)),
        "slot_x": slot_x,
    }


def _motor_text(p: Params, q: Phrases) -> list[str]:
    f, frame = _v(p), str(p["frame"])
    _, pilot, spacing, screw = NEMA[frame]
    slot_screw = str(p["slot_screw"])
    return [
        f"a {q.w('motor mount')} for a {frame} {q.w('stepper motor')}: a "
        f"{q.dims(f['length'], f['width'], f['thickness'])} {q.w('plate')} (X × Y × Z) "
        f"{q.w('lying')} on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}, which "
        f"is the motor's {q.w('axis')}",
        f"its four vertical {q.w('edges')} are {q.w('rounded')} to a {q.radius(f['radius'])}",
        f"a {q.dia(pilot + PILOT_CLEARANCE, 'bore')} {q.w('through')} the {q.w('plate')} on the "
        f"Z {q.w('axis')} clears the motor's {q.len(pilot)} pilot",
        f"{q.count(4)} {q.dia(CLEARANCE[screw], 'through-holes')} for {screw} {q.w('bolt')}s "
        f"sit on the {frame} square pattern, {q.len(spacing)} apart, at "
        f"{_signed(q, spacing / 2, spacing / 2)}",
        f"{q.count(2)} {q.w('slots')} for {slot_screw} {q.w('bolt')}s go {q.w('through')} the "
        f"{q.w('plate')}, {q.w('centred')} at x = ±{q.len(f['slot_x'])}, y = 0, {q.w('each')} "
        f"{q.len(f['slot_length'])} {q.w('long')} end to end and "
        f"{q.len(CLEARANCE[slot_screw])} {q.w('wide')} with round ends, its length "
        f"{q.w('along')} Y",
    ]


def _motor_program(p: Params) -> str:
    f = _v(p)
    _, pilot, spacing, screw = NEMA[str(p["frame"])]
    slot = CLEARANCE[str(p["slot_screw"])]
    holes = pts(_corners(spacing / 2, spacing / 2))
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({f['length']}, {f['width']}, {f['thickness']}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({f['radius']})\n"
        f"    .faces('>Z').workplane().hole({round4(pilot + PILOT_CLEARANCE)})\n"
        f"    .faces('>Z').workplane().pushPoints({holes}).hole({CLEARANCE[screw]})\n"
        f"    .faces('>Z').workplane().pushPoints({pts([(f['slot_x'], 0), (-f['slot_x'], 0)])})\n"
        f"    .slot2D({f['slot_length']}, {slot}, 90).cutThruAll()\n"
        f")\n"
    )


def _motor_calls(p: Params) -> list[Call]:
    f = _v(p)
    _, pilot, spacing, screw = NEMA[str(p["frame"])]
    slot = CLEARANCE[str(p["slot_screw"])]
    return [
        *_rounded_box(f["length"], f["width"], f["thickness"], f["radius"]),
        call("hole", diameter=pilot + PILOT_CLEARANCE),
        call(
            "pattern_linear",
            feature="hole",
            size=CLEARANCE[screw],
            count_x=2,
            count_y=2,
            pitch_x=spacing,
            pitch_y=spacing,
        ),
        *(
            call("cut_slot", length=f["slot_length"], width=slot, x=x, angle=90.0)
            for x in (f["slot_x"], -f["slot_x"])
        ),
    ]


def _motor_check(p: Params) -> str | None:
    f = _v(p)
    face = NEMA[str(p["frame"])][0]
    slot = CLEARANCE[str(p["slot_screw"])]
    if f["width"] < face + 2:
        return "the plate must be wider than the motor's face"
    if f["slot_x"] < face / 2 + slot / 2 + 2:
        return "the slots must stand 2 mm clear of the motor's face"
    if f["slot_x"] + slot / 2 + 3 > f["length"] / 2:
        return "the slots must stay 3 mm in from the plate's ends"
    if not slot + 6 <= f["slot_length"] <= min(f["width"] - 8, f["width"] - 2 * f["radius"] - 2):
        return "the slots must fit the plate's width, clear of the rounded corners"
    return None


# -- vented case ---------------------------------------------------------------------------------


def _vented_case(rng: np.random.Generator) -> Params:
    length, width = mm(rng, 60, 160), mm(rng, 40, 120)
    wall = mm(rng, 1.5, 3)
    radius = _draw(rng, wall + 1.5, min(length, width) / 8)
    slot = mm(rng, 2, 4)
    pitch = _draw(rng, slot + 2, slot + 5)
    # The vent field stays 1 mm inside the flat of the top face, clear of the rounded corners.
    most = int((width - 2 * radius - 2 - slot) // pitch) + 1
    return {
        "length": length,
        "width": width,
        "height": mm(rng, 20, 60),
        "wall": wall,
        "radius": radius,
        "vents": int(rng.integers(3, min(12, most) + 1)),
        "slot_length": _draw(rng, max(slot + 6, 15), min(length - 2 * radius - 2, 0.8 * length)),
        "slot_width": slot,
        "pitch": pitch,
    }


def _vented_text(p: Params, q: Phrases) -> list[str]:
    f = _v(p)
    return [
        f"a vented {q.w('housing')}: a {q.w('enclosure')} "
        f"{q.dims(f['length'], f['width'], f['height'])} outside (X × Y × Z), open at the "
        f"bottom, its rim on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}",
        *_shell_sentences(f, q, f"top face (the {q.w('lid')} face)"),
        f"{q.count(int(p['vents']))} parallel {q.w('vent')} {q.w('slots')} are {q.w('cut')} "
        f"{q.w('through')} the top face, {q.w('each')} {q.len(f['slot_length'])} {q.w('long')} "
        f"end to end and {q.len(f['slot_width'])} {q.w('wide')} with round ends, their length "
        f"{q.w('along')} X and {q.w('centred')} in X",
        f"the {q.w('vent')} {q.w('slots')} are {q.w('spaced')} {q.len(f['pitch'])} apart in Y, "
        f"symmetric {q.w('about')} the X {q.w('axis')}",
    ]


def _vented_program(p: Params) -> str:
    f = _v(p)
    h, t = f["height"], f["wall"]
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({f['length']}, {f['width']}, {h}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({f['radius']})\n"
        f"    .faces('<Z').shell(-{t})\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset={round4(h - t - 1)})"
        f".rarray(1, {f['pitch']}, 1, {int(p['vents'])})\n"
        f"        .slot2D({f['slot_length']}, {f['slot_width']}).extrude({round4(t + 2)})\n"
        f"    )\n"
        f")\n"
    )


def _vented_calls(p: Params) -> list[Call]:
    """The vents cut through the whole height: below the top face the case is open."""
    f = _v(p)
    return [
        *_rounded_box(f["length"], f["width"], f["height"], f["radius"]),
        call("shell", thickness=f["wall"], open_face="<Z"),
        call(
            "pattern_linear",
            feature="slot",
            size=f["slot_width"],
            length=f["slot_length"],
            count_y=int(p["vents"]),
            pitch_y=f["pitch"],
        ),
    ]


def _vented_check(p: Params) -> str | None:
    f = _v(p)
    if not f["wall"] + 1.5 <= f["radius"] <= min(f["length"], f["width"]) / 8 + 0.25:
        return "the corner radius must exceed the wall by 1.5 mm and fit the case"
    if f["pitch"] < f["slot_width"] + 2:
        return "the vent slots need 2 mm of material between them"
    if (int(p["vents"]) - 1) * f["pitch"] + f["slot_width"] > f["width"] - 2 * f["radius"] - 2:
        return "the vent field must fit the top face, clear of the rounded corners"
    if not f["slot_width"] + 6 <= f["slot_length"] <= f["length"] - 2 * f["radius"] - 2:
        return "the vent slots must fit the top face, clear of the rounded corners"
    return None


def _recount_vents(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """One vent slot more or fewer at the same pitch, the pattern kept centred."""
    old, pitch = int(p["vents"]), float(p["pitch"])  # type: ignore[arg-type]
    new = old + 1 if old == 3 or rng.random() < 0.5 else old - 1
    return (
        {**p, "vents": new},
        lambda q: (
            f"change the {q.w('vent')} {q.w('slots')} from {q.count(old)} to {q.count(new)}, "
            f"at the same {q.len(pitch)} pitch and still symmetric {q.w('about')} the X "
            f"{q.w('axis')}"
        ),
    )


# -- revolved cup --------------------------------------------------------------------------------


def _cup(rng: np.random.Generator) -> Params:
    diameter = mm(rng, 30, 120)
    height = mm(rng, 20, min(150, 2.5 * diameter))
    wall = mm(rng, 1.5, 4)
    return {
        "diameter": diameter,
        "height": height,
        "wall": wall,
        "radius": _draw(rng, wall + 1.5, min(diameter / 4, height / 3)),
    }


def _cup_text(p: Params, q: Phrases) -> list[str]:
    f = _v(p)
    return [
        f"a {q.w('cup')} revolved {q.w('about')} the Z {q.w('axis')}, its {q.w('base')} on "
        f"{q.w('the XY plane')}, open at the top",
        f"its outside {q.w('diameter')} is {q.len(f['diameter'])} and it is "
        f"{q.len(f['height'])} {q.w('tall')}",
        f"its {q.w('wall')} and floor are {q.len(f['wall'])} {q.w('thick')}",
        f"the outside {q.w('edge')} where the floor meets the {q.w('wall')} is "
        f"{q.w('rounded')} to a {q.radius(f['radius'])}, the inside following at a "
        f"{q.radius(f['radius'] - f['wall'])}",
    ]


def _cup_program(p: Params) -> str:
    """The half-section revolved; with no fillet (a near miss) its corners are square."""
    f = _v(p)
    r, h, t, fillet = f["diameter"] / 2, f["height"], f["wall"], f["radius"]
    if fillet <= 0:
        profile = pts([(0, 0), (r, 0), (r, h), (r - t, h), (r - t, t), (0, t)])
        sketch = f"polyline({profile}).close()"
    else:
        s = math.sqrt(0.5)
        cx, inner = r - fillet, fillet - t
        sketch = (
            f"moveTo(0, 0).lineTo({round4(cx)}, 0)\n"
            f"    .threePointArc(({round4(cx + fillet * s)}, {round4(fillet - fillet * s)}), "
            f"({round4(r)}, {round4(fillet)}))\n"
            f"    .lineTo({round4(r)}, {h}).lineTo({round4(r - t)}, {h})"
            f".lineTo({round4(r - t)}, {round4(fillet)})\n"
            f"    .threePointArc(({round4(cx + inner * s)}, {round4(fillet - inner * s)}), "
            f"({round4(cx)}, {t}))\n"
            f"    .lineTo(0, {t}).close()"
        )
    return (
        f"result = (\n    cq.Workplane('XZ').{sketch}\n    .revolve(360, (0, 0, 0), (0, 1, 0))\n)\n"
    )


def _cup_calls(p: Params) -> list[Call]:
    """A cylinder with its bottom edge rounded, shelled open at the top: the inside fillet is
    the outside one offset by the wall."""
    f = _v(p)
    return [
        call("add_cylinder", diameter=f["diameter"], height=f["height"], z=f["height"] / 2),
        call("fillet_edges", radius=f["radius"], edges="<Z"),
        call("shell", thickness=f["wall"], open_face=">Z"),
    ]


def _cup_check(p: Params) -> str | None:
    f = _v(p)
    if f["radius"] < f["wall"] + 1.5:
        return (
            "the fillet must exceed the wall by 1.5 mm (the inside one follows at the difference)"
        )
    if f["radius"] > min(f["diameter"] / 4, f["height"] / 3) + 0.25:
        return "the fillet must fit the cup"
    if f["height"] > 2.5 * f["diameter"] + 0.25:
        return "the cup may be at most 2.5 diameters tall"
    return None


# -- junction box --------------------------------------------------------------------------------


def _knockout_room(size: float, radius: float) -> float:
    """How far from a wall's centre a knock-out's edge may reach (1.5 mm short of the corner)."""
    return size / 2 - radius - 1.5


def _junction_box(rng: np.random.Generator) -> Params:
    size, wall = mm(rng, 60, 150), mm(rng, 2, 4)
    radius = _draw(rng, wall + 1.5, size / 8)
    room = _knockout_room(size, radius)
    fitting = [g for g, d in GLANDS.items() if d / 2 <= room]
    gland = fitting[int(rng.integers(len(fitting)))]
    hole = GLANDS[gland]
    height = _draw(rng, max(35, hole + wall + 8), 100)
    two = 2 * room - hole >= _up(hole + 6) and rng.random() < 0.6
    return {
        "size": size,
        "height": height,
        "wall": wall,
        "radius": radius,
        "gland": gland,
        "per_side": 2 if two else 1,
        "pitch": _draw(rng, hole + 6, 2 * room - hole) if two else 0.0,
        "knockout_z": _draw(rng, wall + 2 + hole / 2, height - 3 - hole / 2),
    }


def _junction_text(p: Params, q: Phrases) -> list[str]:
    f, gland = _v(p), str(p["gland"])
    per_side = int(p["per_side"])
    noun = "knock-outs" if per_side == 2 else "knock-out"
    if per_side == 2:
        spacing = (
            f"on {q.w('each')} {q.w('wall')} the two {q.w('knock-outs')} are {q.w('spaced')} "
            f"{q.len(f['pitch'])} apart, symmetric about the {q.w('wall')}'s centre"
        )
    else:
        spacing = (
            f"on {q.w('each')} {q.w('wall')} the {q.w('knock-out')} is {q.w('centred')} on the "
            f"{q.w('wall')}'s width"
        )
    return [
        f"a square {q.w('junction box')} {q.dims(f['size'], f['size'], f['height'])} outside "
        f"(X × Y × Z), open at the top, its {q.w('base')} on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        *_shell_sentences(f, q, "floor"),
        f"{q.w('each')} of its four {q.w('walls')} has {q.count(per_side)} "
        f"{q.dia(GLANDS[gland], noun)} for {gland} {q.w('cable gland')}s {q.w('cut')} "
        f"{q.w('through')} it square to the {q.w('wall')}, {q.w('centred')} "
        f"{q.len(f['knockout_z'])} above {q.w('the XY plane')}",
        spacing,
    ]


def _knockout_spots(p: Params) -> list[tuple[float, float]]:
    f = _v(p)
    return [(c, f["knockout_z"]) for c in _row(int(p["per_side"]), f["pitch"])]


def _junction_program(p: Params) -> str:
    f = _v(p)
    spots, hole, reach = pts(_knockout_spots(p)), GLANDS[str(p["gland"])], f["size"] / 2 + 1
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({f['size']}, {f['size']}, {f['height']}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({f['radius']})\n"
        f"    .faces('>Z').shell(-{f['wall']})\n"
        f"    .cut(cq.Workplane('YZ').pushPoints({spots}).circle({round4(hole / 2)})"
        f".extrude({round4(reach)}, both=True))\n"
        f"    .cut(cq.Workplane('XZ').pushPoints({spots}).circle({round4(hole / 2)})"
        f".extrude({round4(reach)}, both=True))\n"
        f")\n"
    )


def _junction_calls(p: Params) -> list[Call]:
    """Each knock-out pair as one cylinder through two opposite walls."""
    f = _v(p)
    hole, span = GLANDS[str(p["gland"])], f["size"] + 2
    calls = [
        *_rounded_box(f["size"], f["size"], f["height"], f["radius"]),
        call("shell", thickness=f["wall"], open_face=">Z"),
    ]
    for c, z in _knockout_spots(p):
        calls.append(call("cut_cylinder", diameter=hole, height=span, y=c, z=z, axis="X"))
    for c, z in _knockout_spots(p):
        calls.append(call("cut_cylinder", diameter=hole, height=span, x=c, z=z, axis="Y"))
    return calls


def _junction_check(p: Params) -> str | None:
    f = _v(p)
    hole = GLANDS[str(p["gland"])]
    if not f["wall"] + 1.5 <= f["radius"] <= f["size"] / 8 + 0.25:
        return "the corner radius must exceed the wall by 1.5 mm and fit the box"
    if not f["wall"] + 2 + hole / 2 <= f["knockout_z"] <= f["height"] - 3 - hole / 2:
        return "the knock-outs must clear the floor by 2 mm and the rim by 3 mm"
    if (int(p["per_side"]) - 1) * f["pitch"] / 2 + hole / 2 > _knockout_room(
        f["size"], f["radius"]
    ):
        return "the knock-outs must stay on the flat of the wall, clear of the rounded corners"
    if int(p["per_side"]) == 2 and f["pitch"] < hole + 6:
        return "two knock-outs on a wall need 6 mm of material between them"
    return None


def _recount_knockouts(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """Two knock-outs a wall instead of one, or one instead of two."""
    f = _v(p)
    hole = GLANDS[str(p["gland"])]
    if int(p["per_side"]) == 2:
        return (
            {**p, "per_side": 1, "pitch": 0.0},
            lambda q: (
                f"replace the two {q.w('knock-outs')} on {q.w('each')} {q.w('wall')} by one "
                f"{q.w('knock-out')} of the same size, {q.w('centred')} on the {q.w('wall')}'s "
                f"width at the same height"
            ),
        )
    room = _knockout_room(f["size"], f["radius"])
    if 2 * room - hole < _up(hole + 6):
        return p, lambda q: ""  # no room for two: the edit is drawn again
    pitch = _draw(rng, hole + 6, 2 * room - hole)
    return (
        {**p, "per_side": 2, "pitch": pitch},
        lambda q: (
            f"replace the {q.w('knock-out')} on {q.w('each')} {q.w('wall')} by two of the same "
            f"size at the same height, {q.w('spaced')} {q.len(pitch)} apart and symmetric about "
            f"the {q.w('wall')}'s centre"
        ),
    )


def _change_gland(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    """The knock-outs re-sized to the next gland size up or down."""
    names = list(GLANDS)
    at = names.index(str(p["gland"]))
    step = 1 if at == 0 or (at < len(names) - 1 and rng.random() < 0.5) else -1
    new = names[at + step]
    verb = "enlarge" if step > 0 else "shrink"
    return (
        {**p, "gland": new},
        lambda q: (
            f"{verb} {q.w('each')} {q.w('knock-out')} to a "
            f"{q.dia(GLANDS[new], 'knock-out')} for {new} {q.w('cable gland')}s, keeping the "
            f"centres"
        ),
    )


# -- the families ---------------------------------------------------------------------------------

FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "enclosure_bosses",
        "a shelled enclosure with four corner screw bosses (M2.5–M4 tapped holes, cosmetic "
        "threads modelled as plain tap-drill holes)",
        ("shell", "fillet", "boss", "hole", "thread", "pattern"),
        (
            Dimension("length", "enclosure length", 60, 160),
            Dimension("width", "enclosure width", 40, 120),
            Dimension("height", "enclosure height", 20, 70),
            Dimension("wall", "wall thickness", 1.5, 3.5),
            Dimension("radius", "corner radius", 3, 15),
            Dimension("screw", "boss screw size", unit="choice", choices=BOSS_SCREWS),
            Dimension("boss", "boss diameter", 5.5, 12),
            Dimension("inset", "bosses' inset from the outside faces", 5, 30),
            Dimension("boss_height", "boss height", 8, 66.5),
            Dimension("pilot_depth", "tapped hole depth", 5, 65.5),
        ),
        _enclosure_bosses,
        _enclosure_bosses_text,
        _enclosure_bosses_program,
        _enclosure_bosses_calls,
        _moved("inset", 3),
        (
            resize("height", 3, 10),
            resize("boss_height", 2, 5),
            Edit("change the boss screw size", apply=_boss_screw),
        ),
        check=_enclosure_bosses_check,
        words=WORDS,
    ),
    Family(
        "lid_with_lip",
        "an enclosure lid with a chamfered top, an inner locating lip and corner holes",
        ("hole", "chamfer", "step"),
        (
            Dimension("length", "lid length", 60, 160),
            Dimension("width", "lid width", 40, 120),
            Dimension("thickness", "lid thickness", 2, 5),
            Dimension("chamfer", "top chamfer", 0.5, 1.5),
            Dimension("screw", "screw size", unit="choice", choices=BOSS_SCREWS),
            Dimension("holes", "number of holes", 4, 6, unit="count"),
            Dimension("inset", "holes' inset from the edges", 3, 8),
            Dimension("lip_inset", "lip's inset from the edges", 5, 16),
            Dimension("lip_wall", "lip thickness", 1.5, 3),
            Dimension("lip_depth", "lip depth", 3, 10),
        ),
        _lid_with_lip,
        _lid_text,
        _lid_program,
        _lid_calls,
        _moved("lip_inset", 2),
        (
            resize("thickness", 1, 2),
            resize("lip_depth", 2, 5),
            Edit("add or remove the middle holes", apply=_lid_recount),
        ),
        check=_lid_check,
        words=WORDS,
    ),
    Family(
        "box_ribbed",
        "an open box with internal stiffening ribs",
        ("shell", "rib"),
        (
            Dimension("length", "box length", 50, 160),
            Dimension("width", "box width", 40, 120),
            Dimension("height", "box height", 15, 60),
            Dimension("wall", "wall thickness", 1.5, 4),
            Dimension("floor", "floor thickness", 1.5, 4),
            Dimension("rib", "rib thickness", 1.5, 4),
            Dimension("rib_height", "rib height", 4, 56.5),
            Dimension("ribs_x", "number of ribs across the length", 1, 4, unit="count"),
            Dimension("pitch_x", "rib pitch along the length", 0, 80),
            Dimension("ribs_y", "number of ribs across the width", 0, 2, unit="count"),
            Dimension("pitch_y", "rib pitch along the width", 0, 60),
        ),
        _box_ribbed,
        _box_ribbed_text,
        _box_ribbed_program,
        _box_ribbed_calls,
        lambda p: {**p, "ribs_x": int(p["ribs_x"]) - 1},  # type: ignore[arg-type]
        (
            resize("height", 3, 10),
            resize("rib_height", 2, 5),
            Edit("add or remove a rib", apply=_recount_ribs),
        ),
        check=_box_ribbed_check,
        words=WORDS,
    ),
    Family(
        "bearing_housing",
        "a flanged housing for a 62xx ball bearing, with a shouldered seat and a bolt circle",
        ("hub", "hole", "bolt_circle", "step"),
        (
            Dimension("bearing", "bearing", unit="choice", choices=tuple(BEARINGS)),
            Dimension("flange_diameter", "flange diameter", 50, 160),
            Dimension("flange_thickness", "flange thickness", 6, 14),
            Dimension("hub", "hub diameter", 38, 82),
            Dimension("hub_height", "hub height", 3, 28),
            Dimension("through_bore", "through-hole diameter", 12, 56),
            Dimension("screw", "bolt size", unit="choice", choices=BOLT_SCREWS),
            Dimension("holes", "number of bolt holes", 3, 6, unit="count"),
            Dimension("pitch", "bolt circle diameter", 46, 120),
        ),
        _bearing_housing,
        _bearing_text,
        _bearing_program,
        _bearing_calls,
        lambda p: {**p, "holes": int(p["holes"]) - 1},  # type: ignore[arg-type]
        (
            resize("flange_thickness", 1, 4),
            resize("hub_height", 2, 5),
            Edit("change the bearing size", apply=_change_bearing),
        ),
        check=_bearing_check,
        words=WORDS,
    ),
    Family(
        "motor_mount",
        "a NEMA 17 or 23 stepper-motor mount plate with a pilot bore, the standard hole square "
        "and two adjusting slots",
        ("hole", "slot", "fillet", "pattern"),
        (
            Dimension("frame", "motor frame size", unit="choice", choices=tuple(NEMA)),
            Dimension("length", "plate length", 60, 110),
            Dimension("width", "plate width", 44, 77),
            Dimension("thickness", "plate thickness", 3, 8),
            Dimension("radius", "corner radius", 2, 6),
            Dimension("slot_screw", "slot screw size", unit="choice", choices=SLOT_SCREWS),
            Dimension("slot_length", "slot length", 10, 69),
            Dimension("slot_x", "slots' distance from the centre", 25, 45),
        ),
        _motor_mount,
        _motor_text,
        _motor_program,
        _motor_calls,
        _moved("slot_x", 3),
        (
            resize("thickness", 1, 3),
            resize("slot_length", 3, 8),
            resize("length", 4, 10),
        ),
        check=_motor_check,
        words=WORDS,
    ),
    Family(
        "vented_case",
        "a shelled case open at the bottom with a row of vent slots in its top face",
        ("shell", "fillet", "slot", "pattern"),
        (
            Dimension("length", "case length", 60, 160),
            Dimension("width", "case width", 40, 120),
            Dimension("height", "case height", 20, 60),
            Dimension("wall", "wall thickness", 1.5, 3),
            Dimension("radius", "corner radius", 3, 15),
            Dimension("vents", "number of vent slots", 3, 12, unit="count"),
            Dimension("slot_length", "vent slot length", 15, 128),
            Dimension("slot_width", "vent slot width", 2, 4),
            Dimension("pitch", "vent slot pitch", 4, 9),
        ),
        _vented_case,
        _vented_text,
        _vented_program,
        _vented_calls,
        lambda p: {**p, "vents": int(p["vents"]) - 1},  # type: ignore[arg-type]
        (
            resize("height", 3, 10),
            resize("slot_length", 3, 10),
            Edit("add or remove a vent slot", apply=_recount_vents),
        ),
        check=_vented_check,
        words=WORDS,
    ),
    Family(
        "cup_revolved",
        "a revolved cup with its floor edge rounded inside and out",
        ("revolve", "shell", "fillet"),
        (
            Dimension("diameter", "cup diameter", 30, 120),
            Dimension("height", "cup height", 20, 150),
            Dimension("wall", "wall thickness", 1.5, 4),
            Dimension("radius", "floor fillet radius", 3, 30),
        ),
        _cup,
        _cup_text,
        _cup_program,
        _cup_calls,
        lambda p: {**p, "radius": 0.0},
        (
            resize("height", 3, 10),
            resize("diameter", 3, 10),
            resize("radius", 1.5, 3),
        ),
        check=_cup_check,
        words=WORDS,
    ),
    Family(
        "junction_box",
        "a square junction box with cable-gland knock-outs in its four walls",
        ("shell", "fillet", "hole", "pattern"),
        (
            Dimension("size", "box size", 60, 150),
            Dimension("height", "box height", 35, 100),
            Dimension("wall", "wall thickness", 2, 4),
            Dimension("radius", "corner radius", 3.5, 18.5),
            Dimension("gland", "cable gland size", unit="choice", choices=tuple(GLANDS)),
            Dimension("per_side", "knock-outs per wall", 1, 2, unit="count"),
            Dimension("pitch", "knock-out pitch", 0, 110),
            Dimension("knockout_z", "knock-outs' height", 12, 97),
        ),
        _junction_box,
        _junction_text,
        _junction_program,
        _junction_calls,
        lambda p: {**p, "knockout_z": float(p["knockout_z"]) + 2},  # type: ignore[arg-type]
        (
            resize("height", 3, 10),
            Edit("one or two knock-outs a wall", apply=_recount_knockouts),
            Edit("change the cable gland size", apply=_change_gland),
        ),
        check=_junction_check,
        words=WORDS,
    ),
)
