"""Sheet metal, bent bar and hand parts: a Z-bracket, a hat channel, an L-bracket with a row of
holes, a U-clip, a bent round-bar pull handle, a lofted knob, a fluted knob and a finned heat sink.

Every length is in mm, every angle in degrees, Z up. Sheet parts are swept: a rectangular section
(the sheet's thickness by its width) along the sheet's mid-line in the XZ plane, every bend a
tangent arc of the mid-line's radius (inner radius plus half the thickness), so flats are planes
and bends cylinders, as a press brake makes them. Sheet gauges are 1.5 to 4 mm, inner bend radii
one to two thicknesses; screw holes are ISO 273 medium clearance holes; holes keep at least
max(2 mm, 2 × thickness) from a bend's start and from the sheet's edges. Pull handles are bent
from 8 to 16 mm bar at the furniture hole spacings (multiples of 32 mm); their tapped bosses are
cosmetic threads: an M5 thread is modelled as a plain 5 mm flat-bottomed hole, as the prompt and
the summary say. Reference programs write the bends' arc points at full float precision, so
their straight legs meet the arcs tangentially exactly as the sweep tool's do.
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
    num,
    pts,
    resize,
    rule,
    whole,
)
from toolgym.envs.cadquery.families.phrases import Phrases
from toolgym.envs.cadquery.families.standards import clearance_holes
from toolgym.envs.cadquery.feature_tools import path_pieces


def _draw(rng: np.random.Generator, low: float, high: float) -> float:
    """A length on the 0.5 mm grid inside [low, high] (both bounds kept, unlike :func:`mm`'s
    rounding); ``low`` rounded up when the range holds no grid point."""
    lo, hi = math.ceil(low * 2 - 1e-9) / 2, math.floor(high * 2 + 1e-9) / 2
    return mm(rng, lo, max(lo, hi))


def _grid(count: int, pitch: float) -> list[float]:
    """Positions of ``count`` features ``pitch`` apart, centred on 0."""
    return [(k - (count - 1) / 2) * pitch for k in range(count)]


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    """A near miss: one dimension off by ``by`` mm (a feature moved or resized)."""
    return lambda p: {**p, name: num(p[name]) + by}


def _recount(name: str, by: int) -> Callable[[Params], Params]:
    """A near miss: one feature fewer (or more)."""
    return lambda p: {**p, name: whole(p[name]) + by}


def _choose(rng: np.random.Generator, options: tuple) -> object:  # type: ignore[type-arg]
    return options[int(rng.integers(len(options)))]


# ISO 273 medium clearance holes.
CLEARANCE = clearance_holes("M3", "M4", "M5", "M6", "M8", "M10")
SHEET_SCREWS = ("M3", "M4", "M5", "M6", "M8")
GAUGES = (1.5, 2.0, 2.5, 3.0, 4.0)

WORDS = {
    "sheet-metal": ("sheet-metal", "pressed sheet", "folded-sheet"),
    "sheet": ("sheet", "sheet steel", "gauge stock"),
    "bends": ("bends", "folds", "curved turns"),
    "on the inside": ("on the inside", "at the inside face", "measured inside"),
    "sheet flange": ("flange", "bent flange", "folded leg"),
    "sheet flanges": ("flanges", "bent flanges", "folded legs"),
    "legs": ("legs", "flange legs", "arms"),
    "web": ("web", "vertical web", "upright"),
    "z-bracket": ("Z-bracket", "Z-shaped bracket", "Z-section support"),
    "hat channel": ("hat channel", "hat section", "top-hat profile"),
    "crown": ("crown", "crown panel", "raised roof"),
    "clip": ("U-clip", "U-shaped clip", "saddle clip"),
    "handle": ("pull handle", "D-handle", "grab handle"),
    "bar": ("bar", "bar stock", "rod"),
    "handle leg": ("leg", "upright leg", "post"),
    "bar bend": ("bend", "bent corner", "radiused turn"),
    "thread": ("thread", "tapped thread", "internal screw thread"),
    "tapered": ("tapered", "lofted", "narrowing"),
    "flutes": ("flutes", "grip flutes", "scallops"),
    "heat sink": ("heat sink", "finned heat sink", "cooling block"),
    "fins": ("fins", "cooling fins", "vanes"),
    "gaps": ("gaps", "fin gaps", "open channels"),
}


def _hole_edge(thickness: float) -> float:
    """A hole's least distance from a bend's start or a sheet edge (to its rim)."""
    return max(2.0, 2 * thickness)


def _exact(point: tuple[float, float]) -> str:
    """A point at full float precision (a bend's tangent points are irrational)."""
    return f"({float(point[0])!r}, {float(point[1])!r})"


def _path_program(points: list[tuple[float, float]], radius: float) -> str:
    """The sweep path as a program writes it: an XZ workplane chain of lines and arcs."""
    lines = [f"    cq.Workplane('XZ').moveTo{_exact(points[0])}"]
    for piece in path_pieces(points, radius):
        if piece[0] == "line":
            lines.append(f"    .lineTo{_exact(piece[2])}")
        else:
            lines.append(f"    .threePointArc({_exact(piece[2])}, {_exact(piece[3])})")
    return "path = (\n" + "\n".join(lines) + "\n)\n"


def _sheet_sweep(p: Params, path: list[tuple[float, float]], width: float) -> Call:
    t, r = num(p["thickness"]), num(p["radius"])
    return call(
        "sweep",
        profile="rect",
        size=t,
        size2=width,
        path=[list(q) for q in path],
        plane="XZ",
        bend_radius=r + t / 2,
    )


def _sheet_check(p: Params) -> str | None:
    if not num(p["thickness"]) <= num(p["radius"]) <= 2 * num(p["thickness"]):
        return "the inner bend radius must be one to two sheet thicknesses"
    return None


def _all(*checks: Callable[[Params], str | None]) -> Callable[[Params], str | None]:
    def check(p: Params) -> str | None:
        for one in checks:
            problem = one(p)
            if problem:
                return problem
        return None

    return check


def _screw_step(p: Params, rng: np.random.Generator, sizes: tuple[str, ...]) -> str:
    """The screw size one step up or down."""
    at = sizes.index(str(p["screw"]))
    step = 1 if rng.random() < 0.5 else -1
    if not 0 <= at + step < len(sizes):
        step = -step
    return sizes[at + step]


# -- z_bracket ------------------------------------------------------------------------------------


def _z_bracket(rng: np.random.Generator) -> Params:
    t = float(_choose(rng, GAUGES))  # type: ignore[arg-type]
    r = _draw(rng, t, 2 * t)
    screw = str(_choose(rng, SHEET_SCREWS))
    d, edge = CLEARANCE[screw], _hole_edge(t)
    holes = int(rng.integers(1, 3))
    spacing = _draw(rng, d + 4, d + 24) if holes == 2 else 0.0
    flange = t + r + d + 2 * edge + 0.5  # the least flange that holds its hole
    return {
        "thickness": t,
        "radius": r,
        "width": _draw(rng, spacing + d + 2 * edge, spacing + d + 2 * edge + 30),
        "lower": _draw(rng, flange, flange + 40),
        "height": _draw(rng, 2 * t + 2 * r + 5, 2 * t + 2 * r + 60),
        "upper": _draw(rng, flange, flange + 40),
        "screw": screw,
        "holes": holes,
        "spacing": spacing,
    }


def _z_geometry(p: Params) -> dict[str, float]:
    t, r, lower, upper = num(p["thickness"]), num(p["radius"]), num(p["lower"]), num(p["upper"])
    end = lower - t + upper  # the upper flange's free end
    return {
        "end": end,
        "x1": (lower - t - r) / 2,  # the middle of each flange's flat
        "x2": (lower + r + end) / 2,
    }


def _z_path(p: Params) -> list[tuple[float, float]]:
    t, lower, height = num(p["thickness"]), num(p["lower"]), num(p["height"])
    web = lower - t / 2
    end = _z_geometry(p)["end"]
    return [(0.0, t / 2), (web, t / 2), (web, height - t / 2), (end, height - t / 2)]


def _z_holes(p: Params) -> list[tuple[float, float]]:
    g = _z_geometry(p)
    ys = _grid(whole(p["holes"]), num(p["spacing"]))
    return [(x, y) for x in (g["x1"], g["x2"]) for y in ys]


def _z_bracket_text(p: Params, q: Phrases) -> list[str]:
    t, lower, height = num(p["thickness"]), num(p["lower"]), num(p["height"])
    g = _z_geometry(p)
    screw, holes = str(p["screw"]), whole(p["holes"])
    at_y = f"y = ±{q.len(num(p['spacing']) / 2)}" if holes == 2 else "y = 0"
    return [
        f"a {q.w('sheet-metal')} {q.w('z-bracket')} bent from {q.len(t)} {q.w('sheet')}, "
        f"{q.len(p['width'])} {q.w('wide')} {q.w('along')} Y and {q.w('centred')} on Y = 0, "
        f"its profile in the XZ plane",
        f"its lower {q.w('sheet flange')} lies on {q.w('the XY plane')} with its free end at "
        f"x = 0 and reaches towards +X",
        f"its {q.w('web')} rises straight up (+Z), its faces at x = {q.len(lower - t)} and "
        f"x = {q.len(lower)}",
        f"its upper {q.w('sheet flange')} has its top face at z = {q.len(height)} and reaches "
        f"towards +X from the top of the {q.w('web')} to its free end at x = {q.len(g['end'])}",
        f"both {q.w('bends')} have a {q.radius(p['radius'])} {q.w('on the inside')}",
        f"each {q.w('sheet flange')} has {q.count(holes)} "
        f"{q.dia(CLEARANCE[screw], 'through-holes' if holes > 1 else 'through-hole')} for "
        f"{screw} {q.w('bolt')}s at {at_y}, at x = {q.len(g['x1'])} in the lower "
        f"{q.w('sheet flange')} and x = {q.len(g['x2'])} in the upper one",
    ]


def _z_bracket_program(p: Params) -> str:
    t, width, height = num(p["thickness"]), num(p["width"]), num(p["height"])
    path_code = _path_program(_z_path(p), num(p["radius"]) + t / 2)
    return path_code + (
        f"body = cq.Workplane('YZ', origin=(0, 0, {t / 2})).rect({width}, {t}).sweep(path)\n"
        f"holes = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).pushPoints({pts(_z_holes(p))})\n"
        f"    .circle({CLEARANCE[str(p['screw'])] / 2}).extrude({height + 2})\n"
        f")\n"
        f"result = body.cut(holes)\n"
    )


def _z_bracket_calls(p: Params) -> list[Call]:
    d = CLEARANCE[str(p["screw"])]
    holes = [call("hole", diameter=d, x=x, y=y) for x, y in _z_holes(p)]
    return [_sheet_sweep(p, _z_path(p), num(p["width"])), *holes]


def _z_bracket_check(p: Params) -> str | None:
    t, r = num(p["thickness"]), num(p["radius"])
    d, edge = CLEARANCE[str(p["screw"])], _hole_edge(t)
    for name in ("lower", "upper"):
        if num(p[name]) - t - r < d + 2 * edge:
            return f"the {name} flange's flat must hold its holes clear of the bend and the end"
    if num(p["height"]) < 2 * t + 2 * r + 5:
        return "the web needs at least 5 mm straight between its bends"
    if whole(p["holes"]) == 2 and num(p["spacing"]) < d + 4:
        return "the two holes of a flange need at least 4 mm between them"
    if (whole(p["holes"]) - 1) * num(p["spacing"]) + d + 2 * edge > num(p["width"]):
        return "the holes must stay clear of the bracket's sides"
    return None


def _z_bracket_screw(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    old, new = str(p["screw"]), _screw_step(p, rng, SHEET_SCREWS)
    return (
        {**p, "screw": new},
        lambda q: (
            f"change the {q.w('holes')} in both {q.w('sheet flanges')} from {old} to {new} "
            f"clearance {q.w('holes')} ({q.dia(CLEARANCE[new], 'holes')}), keeping their centres"
        ),
    )


# -- hat_channel ----------------------------------------------------------------------------------


def _hat_channel(rng: np.random.Generator) -> Params:
    t = float(_choose(rng, GAUGES))  # type: ignore[arg-type]
    r = _draw(rng, t, 2 * t)
    return {
        "thickness": t,
        "radius": r,
        "length": _draw(rng, 30, 200),
        "crown": _draw(rng, 2 * t + 2 * r + 8, 2 * t + 2 * r + 60),
        "height": _draw(rng, 2 * t + 2 * r + 6, 2 * t + 2 * r + 50),
        "flange": _draw(rng, r + 6, r + 30),
    }


def _hat_path(p: Params) -> list[tuple[float, float]]:
    t, height = num(p["thickness"]), num(p["height"])
    wall = num(p["crown"]) / 2 - t / 2  # the walls' mid-planes
    end = num(p["crown"]) / 2 + num(p["flange"])
    low, high = t / 2, height - t / 2
    return [(-end, low), (-wall, low), (-wall, high), (wall, high), (wall, low), (end, low)]


def _hat_channel_text(p: Params, q: Phrases) -> list[str]:
    half = num(p["crown"]) / 2
    return [
        f"a {q.w('sheet-metal')} {q.w('hat channel')} {q.len(p['length'])} {q.w('long')} "
        f"{q.w('along')} Y, bent from {q.len(p['thickness'])} {q.w('sheet')}, {q.w('centred')} "
        f"on Y = 0 and symmetric {q.w('about')} the YZ plane, its profile in the XZ plane",
        f"its two {q.w('sheet flanges')} lie on {q.w('the XY plane')} and reach out to free ends "
        f"at x = ±{q.len(half + num(p['flange']))}",
        f"its two {q.w('walls')} rise straight up (+Z), their outer faces at x = ±{q.len(half)}",
        f"its {q.w('crown')} joins the tops of the {q.w('walls')}, its top face at "
        f"z = {q.len(p['height'])}",
        f"all four {q.w('bends')} have a {q.radius(p['radius'])} {q.w('on the inside')}",
    ]


def _hat_channel_program(p: Params) -> str:
    t, path = num(p["thickness"]), _hat_path(p)
    path_code = _path_program(path, num(p["radius"]) + t / 2)
    return path_code + (
        f"result = (\n"
        f"    cq.Workplane('YZ', origin=({path[0][0]}, 0, {t / 2})).rect({p['length']}, {t})\n"
        f"    .sweep(path)\n"
        f")\n"
    )


def _hat_channel_calls(p: Params) -> list[Call]:
    return [_sheet_sweep(p, _hat_path(p), num(p["length"]))]


def _hat_channel_check(p: Params) -> str | None:
    t, r = num(p["thickness"]), num(p["radius"])
    if num(p["flange"]) < r + 6:
        return "the flanges need at least 6 mm of flat beyond their bends"
    if min(num(p["crown"]), num(p["height"])) < 2 * t + 2 * r + 6:
        return "the crown and the walls need at least 6 mm straight between their bends"
    return None


# -- sheet_l_holes --------------------------------------------------------------------------------


def _sheet_l(rng: np.random.Generator) -> Params:
    t = float(_choose(rng, GAUGES))  # type: ignore[arg-type]
    r = _draw(rng, t, 2 * t)
    screw = str(_choose(rng, SHEET_SCREWS))
    d, edge = CLEARANCE[screw], _hole_edge(t)
    count = int(rng.integers(2, 7))
    pitch = _draw(rng, d + 4, d + 20)
    leg = _draw(rng, t + r + d + 2 * edge + 1, t + r + d + 2 * edge + 50)
    return {
        "thickness": t,
        "radius": r,
        "width": _draw(rng, (count - 1) * pitch + d + 2 * edge, (count - 1) * pitch + d + 40),
        "length": leg,
        "height": _draw(rng, t + r + 8, t + r + 70),
        "screw": screw,
        "count": count,
        "pitch": pitch,
        "row": _draw(rng, t + r + edge + d / 2, leg - edge - d / 2),
    }


def _l_path(p: Params) -> list[tuple[float, float]]:
    t = num(p["thickness"])
    return [(num(p["length"]), t / 2), (t / 2, t / 2), (t / 2, num(p["height"]))]


def _l_holes(p: Params) -> list[tuple[float, float]]:
    return [(num(p["row"]), y) for y in _grid(whole(p["count"]), num(p["pitch"]))]


def _sheet_l_text(p: Params, q: Phrases) -> list[str]:
    screw = str(p["screw"])
    return [
        f"a {q.w('sheet-metal')} L-{q.w('bracket')} bent from {q.len(p['thickness'])} "
        f"{q.w('sheet')}, {q.len(p['width'])} {q.w('wide')} {q.w('along')} Y and "
        f"{q.w('centred')} on Y = 0, its profile in the XZ plane",
        f"its horizontal {q.w('leg')} lies on {q.w('the XY plane')} and reaches towards +X to "
        f"its free end at x = {q.len(p['length'])}",
        f"its vertical {q.w('leg')} has its outer face on the YZ plane and rises straight up "
        f"(+Z) to its free end at z = {q.len(p['height'])}",
        f"the {q.w('bend')} joining the two {q.w('legs')} has a {q.radius(p['radius'])} "
        f"{q.w('on the inside')}",
        f"a row of {q.count(whole(p['count']))} {q.dia(CLEARANCE[screw], 'through-holes')} for "
        f"{screw} {q.w('bolt')}s is {q.w('drilled')} {q.w('through')} the horizontal "
        f"{q.w('leg')} at x = {q.len(p['row'])}, the {q.w('holes')} {q.w('spaced')} "
        f"{q.len(p['pitch'])} apart in Y and {q.w('centred')} on Y = 0",
    ]


def _sheet_l_program(p: Params) -> str:
    t = num(p["thickness"])
    path_code = _path_program(_l_path(p), num(p["radius"]) + t / 2)
    return path_code + (
        f"body = (\n"
        f"    cq.Workplane('YZ', origin=({p['length']}, 0, {t / 2})).rect({p['width']}, {t})\n"
        f"    .sweep(path)\n"
        f")\n"
        f"holes = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).pushPoints({pts(_l_holes(p))})\n"
        f"    .circle({CLEARANCE[str(p['screw'])] / 2}).extrude({t + 2})\n"
        f")\n"
        f"result = body.cut(holes)\n"
    )


def _sheet_l_calls(p: Params) -> list[Call]:
    return [
        _sheet_sweep(p, _l_path(p), num(p["width"])),
        call(
            "pattern_linear",
            feature="hole",
            size=CLEARANCE[str(p["screw"])],
            count_y=whole(p["count"]),
            pitch_y=num(p["pitch"]),
            x=num(p["row"]),
        ),
    ]


def _sheet_l_check(p: Params) -> str | None:
    t, r = num(p["thickness"]), num(p["radius"])
    d, edge = CLEARANCE[str(p["screw"])], _hole_edge(t)
    if not t + r + edge + d / 2 <= num(p["row"]) <= num(p["length"]) - edge - d / 2:
        return "the row of holes must sit on the flat, clear of the bend and the leg's end"
    if num(p["pitch"]) < d + 4:
        return "neighbouring holes need at least 4 mm between them"
    if (whole(p["count"]) - 1) * num(p["pitch"]) + d + 2 * edge > num(p["width"]):
        return "the row of holes must stay clear of the bracket's sides"
    if num(p["height"]) < t + r + 8:
        return "the vertical leg needs at least 8 mm of flat above its bend"
    return None


def _sheet_l_recount(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    count = whole(p["count"]) + (1 if rng.random() < 0.5 or whole(p["count"]) <= 2 else -1)
    return (
        {**p, "count": count},
        lambda q: (
            f"make the row {q.count(count)} {q.w('through-holes')}, still {q.w('spaced')} "
            f"{q.len(p['pitch'])} apart, {q.w('centred')} on Y = 0 at x = {q.len(p['row'])}"
        ),
    )


# -- u_clip ---------------------------------------------------------------------------------------

CLIP_SCREWS = ("M4", "M5", "M6", "M8", "M10")


def _u_clip(rng: np.random.Generator) -> Params:
    t = float(_choose(rng, GAUGES))  # type: ignore[arg-type]
    r = _draw(rng, t, 2 * t)
    screw = str(_choose(rng, CLIP_SCREWS))
    d, edge = CLEARANCE[screw], _hole_edge(t)
    low = t + r + edge + d / 2  # the lowest hole centre, clear of the bends
    height = _draw(rng, low + edge + d / 2 + 1, low + edge + d / 2 + 40)
    return {
        "thickness": t,
        "radius": r,
        "width": _draw(rng, d + 2 * edge, d + 2 * edge + 25),
        "gap": _draw(rng, 2 * r + 4, 2 * r + 50),
        "height": height,
        "screw": screw,
        "hole_z": _draw(rng, low, height - edge - d / 2),
    }


def _clip_path(p: Params) -> list[tuple[float, float]]:
    t, height = num(p["thickness"]), num(p["height"])
    leg = num(p["gap"]) / 2 + t / 2
    return [(-leg, height), (-leg, t / 2), (leg, t / 2), (leg, height)]


def _u_clip_text(p: Params, q: Phrases) -> list[str]:
    t, half = num(p["thickness"]), num(p["gap"]) / 2
    screw = str(p["screw"])
    return [
        f"a {q.w('sheet-metal')} {q.w('clip')} bent from {q.len(t)} {q.w('sheet')}, "
        f"{q.len(p['width'])} {q.w('wide')} {q.w('along')} Y, {q.w('centred')} on the Z "
        f"{q.w('axis')} and open at the top, its profile in the XZ plane",
        f"its {q.w('base')} lies flat on {q.w('the XY plane')} between the two {q.w('legs')}",
        f"its two {q.w('legs')} rise straight up (+Z) to z = {q.len(p['height'])}, their "
        f"inside faces at x = ±{q.len(half)} and their outside faces at x = ±{q.len(half + t)}",
        f"both {q.w('bends')} have a {q.radius(p['radius'])} {q.w('on the inside')}",
        f"one {q.dia(CLEARANCE[screw], 'through-hole')} for an {screw} {q.w('bolt')} is "
        f"{q.w('drilled')} {q.w('through')} both {q.w('legs')} parallel to X, its {q.w('axis')} "
        f"at y = 0, z = {q.len(p['hole_z'])}",
    ]


def _u_clip_program(p: Params) -> str:
    t, path = num(p["thickness"]), _clip_path(p)
    reach = num(p["gap"]) / 2 + t + 2
    path_code = _path_program(path, num(p["radius"]) + t / 2)
    return path_code + (
        f"body = (\n"
        f"    cq.Workplane('XY', origin=({path[0][0]}, 0, {p['height']})).rect({t}, {p['width']})\n"
        f"    .sweep(path)\n"
        f")\n"
        f"hole = (\n"
        f"    cq.Workplane('YZ').workplane(offset={-reach}).center(0, {p['hole_z']})\n"
        f"    .circle({CLEARANCE[str(p['screw'])] / 2}).extrude({2 * reach})\n"
        f")\n"
        f"result = body.cut(hole)\n"
    )


def _u_clip_calls(p: Params) -> list[Call]:
    t = num(p["thickness"])
    return [
        _sheet_sweep(p, _clip_path(p), num(p["width"])),
        call(
            "cut_cylinder",
            diameter=CLEARANCE[str(p["screw"])],
            height=num(p["gap"]) + 2 * t + 4,
            z=num(p["hole_z"]),
            axis="X",
        ),
    ]


def _u_clip_check(p: Params) -> str | None:
    t, r = num(p["thickness"]), num(p["radius"])
    d, edge = CLEARANCE[str(p["screw"])], _hole_edge(t)
    if not t + r + edge + d / 2 <= num(p["hole_z"]) <= num(p["height"]) - edge - d / 2:
        return "the hole must sit on the legs' flats, clear of the bends and the legs' ends"
    if num(p["width"]) < d + 2 * edge:
        return "the hole must stay clear of the legs' sides"
    if num(p["gap"]) < 2 * r + 4:
        return "the base needs at least 4 mm of flat between its bends"
    return None


def _u_clip_screw(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    old, new = str(p["screw"]), _screw_step(p, rng, CLIP_SCREWS)
    return (
        {**p, "screw": new},
        lambda q: (
            f"open the cross {q.w('hole')} from {old} to {new} clearance, a "
            f"{q.dia(CLEARANCE[new], 'through-hole')} on the same {q.w('axis')}"
        ),
    )


# -- pull_handle ----------------------------------------------------------------------------------

# Bar diameter -> the boss's tapped thread (nominal diameter, modelled as a plain hole).
HANDLE_THREADS = {8.0: ("M4", 4.0), 10.0: ("M5", 5.0), 12.0: ("M6", 6.0), 14.0: ("M6", 6.0)}
HANDLE_THREADS[16.0] = ("M8", 8.0)
SPACINGS = (64.0, 96.0, 128.0, 160.0, 192.0)  # furniture handle hole spacings


def _pull_handle(rng: np.random.Generator) -> Params:
    bar = float(_choose(rng, tuple(HANDLE_THREADS)))  # type: ignore[arg-type]
    spacing = float(_choose(rng, SPACINGS))  # type: ignore[arg-type]
    thread = HANDLE_THREADS[bar][1]
    radius = _draw(rng, bar, min(2.5 * bar, (spacing - 10) / 2))
    depth = _draw(rng, 1.5 * thread, 2 * thread)
    boss_height = _draw(rng, depth + 2, depth + 12)
    return {
        "bar": bar,
        "spacing": spacing,
        "radius": radius,
        "height": _draw(rng, boss_height + radius + 5, boss_height + radius + 45),
        "boss": _draw(rng, bar + 4, bar + 10),
        "boss_height": boss_height,
        "thread_depth": depth,
    }


def _handle_path(p: Params) -> list[tuple[float, float]]:
    half, low, high = num(p["spacing"]) / 2, num(p["boss_height"]) / 2, num(p["height"])
    # The bar starts inside the bosses (at half their height): its ends are buried, no face
    # of the bar lies on a boss's face.
    return [(-half, low), (-half, high), (half, high), (half, low)]


def _pull_handle_text(p: Params, q: Phrases) -> list[str]:
    name, thread = HANDLE_THREADS[num(p["bar"])]
    return [
        f"a {q.w('handle')} bent from round {q.w('bar')}, standing on {q.w('the XY plane')}, "
        f"symmetric {q.w('about')} the YZ plane, the {q.w('bar')}'s centreline in the XZ plane",
        f"it is bent from a {q.dia(p['bar'], 'bar')}",
        f"two {q.w('bosses')} of {q.len(p['boss'])} {q.w('diameter')} and "
        f"{q.len(p['boss_height'])} {q.w('tall')} stand on {q.w('the XY plane')} at "
        f"x = ±{q.len(num(p['spacing']) / 2)}, y = 0",
        f"each {q.w('handle leg')} of the {q.w('bar')} rises straight up (+Z) out of the top of a "
        f"{q.w('boss')}, on the {q.w('boss')}'s {q.w('axis')}",
        f"at the top of each {q.w('handle leg')} the {q.w('bar')} turns {q.deg(90)} in a "
        f"{q.w('bar bend')} of {q.len(p['radius'])} centreline radius into the straight grip, "
        f"which is parallel to X with its centreline at z = {q.len(p['height'])}",
        f"each {q.w('boss')} is tapped {name} from its bottom face: a cosmetic "
        f"{q.w('thread')}, modelled as a plain flat-bottomed {q.dia(thread, 'hole')} reaching "
        f"{q.len(p['thread_depth'])} up into the {q.w('boss')}",
    ]


def _handle_feet(p: Params) -> list[tuple[float, float]]:
    half = num(p["spacing"]) / 2
    return [(-half, 0.0), (half, 0.0)]


def _pull_handle_program(p: Params) -> str:
    path, depth = _handle_path(p), num(p["thread_depth"])
    thread = HANDLE_THREADS[num(p["bar"])][1]
    path_code = _path_program(path, num(p["radius"]))
    return path_code + (
        f"bar = (\n"
        f"    cq.Workplane('XY', origin=({path[0][0]}, 0, {path[0][1]}))\n"
        f"    .circle({num(p['bar']) / 2})\n"
        f"    .sweep(path)\n"
        f")\n"
        f"bosses = (\n"
        f"    cq.Workplane('XY').pushPoints({pts(_handle_feet(p))})\n"
        f"    .circle({num(p['boss']) / 2}).extrude({p['boss_height']})\n"
        f")\n"
        f"threads = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).pushPoints({pts(_handle_feet(p))})\n"
        f"    .circle({thread / 2}).extrude({depth + 1})\n"
        f")\n"
        f"result = bar.union(bosses).cut(threads)\n"
    )


def _pull_handle_calls(p: Params) -> list[Call]:
    boss_height, depth = num(p["boss_height"]), num(p["thread_depth"])
    thread = HANDLE_THREADS[num(p["bar"])][1]
    calls = [
        call(
            "sweep",
            profile="circle",
            size=num(p["bar"]),
            path=[list(q) for q in _handle_path(p)],
            plane="XZ",
            bend_radius=num(p["radius"]),
        )
    ]
    for x, _ in _handle_feet(p):
        calls.append(
            call(
                "add_cylinder", diameter=num(p["boss"]), height=boss_height, x=x, z=boss_height / 2
            )
        )
    for x, _ in _handle_feet(p):  # each tapped hole runs on 1 mm below the boss: no coplanar cut
        calls.append(
            call("cut_cylinder", diameter=thread, height=depth + 1, x=x, z=(depth - 1) / 2)
        )
    return calls


def _pull_handle_check(p: Params) -> str | None:
    bar, radius, thread = num(p["bar"]), num(p["radius"]), HANDLE_THREADS.get(num(p["bar"]))
    if thread is None:
        return "the bar must be 8, 10, 12, 14 or 16 mm"
    if not bar <= radius <= (num(p["spacing"]) - 10) / 2:
        return "the bends need a centreline radius of at least the bar and 10 mm of straight grip"
    if num(p["height"]) < num(p["boss_height"]) + radius + 5:
        return "the legs need at least 5 mm straight above the bosses"
    if num(p["boss"]) < bar + 4 or num(p["spacing"]) < num(p["boss"]) + 10:
        return "the bosses must stand 2 mm proud of the bar and clear of each other"
    if not 1.5 * thread[1] <= num(p["thread_depth"]) <= num(p["boss_height"]) - 2:
        return "the tapped holes must be 1.5 diameters deep and end 2 mm inside the bosses"
    return None


def _pull_handle_spacing(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    at = SPACINGS.index(num(p["spacing"])) if num(p["spacing"]) in SPACINGS else 0
    step = 1 if rng.random() < 0.5 else -1
    if not 0 <= at + step < len(SPACINGS):
        step = -step
    new = SPACINGS[at + step]
    return (
        {**p, "spacing": new},
        lambda q: (
            f"change the {q.w('handle')}'s hole spacing from {q.len(p['spacing'])} to "
            f"{q.len(new)}: the {q.w('bosses')} at x = ±{q.len(new / 2)}, the grip's length "
            f"following"
        ),
    )


# -- knob_lofted ----------------------------------------------------------------------------------

KNOB_BASES = ("square", "circle")
SHAFTS = (4.0, 5.0, 6.0, 8.0, 10.0)


def _knob_lofted(rng: np.random.Generator) -> Params:
    base = _draw(rng, 20, 60)
    top = _draw(rng, max(12, 0.4 * base), base - 4)
    height = _draw(rng, 12, 45)
    shafts = tuple(s for s in SHAFTS if s <= min(top - 6, height - 3))
    bore = float(_choose(rng, shafts))  # type: ignore[arg-type]
    return {
        "shape": str(_choose(rng, KNOB_BASES)),
        "base": base,
        "top": top,
        "height": height,
        "bore": bore,
        "bore_depth": _draw(rng, max(5, bore), height - 3),
    }


def _knob_lofted_text(p: Params, q: Phrases) -> list[str]:
    if p["shape"] == "square":
        base = (
            f"its {q.w('base')} is a {q.len(p['base'])} square on {q.w('the XY plane')}, its "
            f"sides parallel to X and Y"
        )
    else:
        base = (
            f"its {q.w('base')} is a circle of {q.len(p['base'])} {q.w('diameter')} on "
            f"{q.w('the XY plane')}"
        )
    return [
        f"a {q.w('tapered')} {q.w('knob')} standing on {q.w('the XY plane')}, {q.w('centred')} "
        f"on the Z {q.w('axis')}, its sides a straight-sided loft from its {q.w('base')} to its "
        f"top face",
        base,
        f"its top face is a circle of {q.len(p['top'])} {q.w('diameter')}, "
        f"{q.len(p['height'])} above {q.w('the XY plane')}",
        f"a flat-bottomed {q.dia(p['bore'], 'bore')} is {q.w('drilled')} "
        f"{q.len(p['bore_depth'])} up into it from the centre of its {q.w('base')}",
    ]


def _knob_lofted_program(p: Params) -> str:
    base = (
        f".rect({p['base']}, {p['base']})"
        if p["shape"] == "square"
        else f".circle({num(p['base']) / 2})"
    )
    return (
        f"knob = (\n"
        f"    cq.Workplane('XY'){base}\n"
        f"    .workplane(offset={p['height']}).circle({num(p['top']) / 2})\n"
        f"    .loft(ruled=True)\n"
        f")\n"
        f"bore = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).circle({num(p['bore']) / 2})\n"
        f"    .extrude({num(p['bore_depth']) + 1})\n"
        f")\n"
        f"result = knob.cut(bore)\n"
    )


def _knob_lofted_calls(p: Params) -> list[Call]:
    depth = num(p["bore_depth"])
    return [
        call(
            "loft",
            bottom=str(p["shape"]),
            bottom_size=num(p["base"]),
            top="circle",
            top_size=num(p["top"]),
            height=num(p["height"]),
        ),
        call("cut_cylinder", diameter=num(p["bore"]), height=depth + 1, z=(depth - 1) / 2),
    ]


def _knob_lofted_check(p: Params) -> str | None:
    if not 12 <= num(p["top"]) <= num(p["base"]) - 4:
        return "the top must be at least 4 mm smaller than the base (and at least 12 mm)"
    if num(p["bore"]) > num(p["top"]) - 6:
        return "the bore must leave a 3 mm wall at the top's size"
    if not max(5, num(p["bore"])) <= num(p["bore_depth"]) <= num(p["height"]) - 3:
        return "the bore must be one diameter (5 mm) deep and stop 3 mm below the top"
    return None


def _knob_lofted_shape(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    new = "circle" if p["shape"] == "square" else "square"
    if new == "square":
        return (
            {**p, "shape": new},
            lambda q: (
                f"make the {q.w('knob')}'s {q.w('base')} a {q.len(p['base'])} square, its sides "
                f"parallel to X and Y, lofted to the same round top"
            ),
        )
    return (
        {**p, "shape": new},
        lambda q: (
            f"make the {q.w('knob')}'s {q.w('base')} a circle of {q.len(p['base'])} "
            f"{q.w('diameter')}, lofted to the same round top"
        ),
    )


# -- knob_fluted ----------------------------------------------------------------------------------


def _flute_geometry(p: Params) -> dict[str, float]:
    """The flutes' pitch radius, and the land left between neighbours at the rim (mm)."""
    radius, flute, n = num(p["diameter"]) / 2, num(p["flute"]), whole(p["flutes"])
    pitch = radius - num(p["flute_depth"]) + flute / 2
    # The flute circle crosses the rim at ±phi about its own centre's direction.
    cos_phi = (radius**2 + pitch**2 - (flute / 2) ** 2) / (2 * radius * pitch)
    phi = math.acos(max(-1.0, min(1.0, cos_phi)))
    return {
        "pitch": pitch,
        "land": radius * (2 * math.pi / n - 2 * phi),
        "between": 2 * pitch * math.sin(math.pi / n) - flute,
    }


def _flutes_fit(p: Params) -> bool:
    g = _flute_geometry(p)
    return g["land"] >= 2 and g["between"] >= 1.5


def _knob_fluted(rng: np.random.Generator) -> Params:
    diameter = _draw(rng, 25, 70)
    flute = _draw(rng, 5, max(5, diameter / 5))
    depth = _draw(rng, 2, flute / 2 - 0.5)
    params: Params = {
        "diameter": diameter,
        "height": _draw(rng, 12, 35),
        "chamfer": _draw(rng, 1, depth - 0.5),
        "flute": flute,
        "flute_depth": depth,
        "flutes": 4,
    }
    # Every count from 4 up to the most whose lands still fit (the land shrinks with the count).
    most = max([n for n in range(4, 31) if _flutes_fit({**params, "flutes": n})], default=4)
    params["flutes"] = int(rng.integers(4, most + 1))
    height = num(params["height"])
    shafts = tuple(s for s in SHAFTS if s <= min(diameter - 2 * depth - 6, height - 3))
    bore = float(_choose(rng, shafts))  # type: ignore[arg-type]
    params["bore"] = bore
    params["bore_depth"] = _draw(rng, max(5, bore), num(params["height"]) - 3)
    return params


def _knob_fluted_text(p: Params, q: Phrases) -> list[str]:
    g = _flute_geometry(p)
    return [
        f"a fluted {q.w('knob')} turned about the Z {q.w('axis')}, its {q.w('base')} on "
        f"{q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}",
        f"its body is a cylinder of {q.len(p['diameter'])} {q.w('diameter')}, "
        f"{q.len(p['height'])} {q.w('tall')}",
        f"the outer {q.w('edge')} of its top face is {q.w('chamfered')} {q.len(p['chamfer'])} at "
        f"{q.deg(45)}",
        f"{q.count(whole(p['flutes']))} {q.w('flutes')} are {q.w('cut')} {q.w('through')} its full "
        f"height, each a cylinder of {q.len(p['flute'])} {q.w('diameter')} parallel to "
        f"Z, {q.w('equally')} {q.w('spaced')} with their centres on a "
        f"{q.len(2 * g['pitch'])} {q.w('diameter')} circle, the first on the +X {q.w('axis')}",
        f"a flat-bottomed {q.dia(p['bore'], 'bore')} is {q.w('drilled')} "
        f"{q.len(p['bore_depth'])} up into it from the centre of its {q.w('base')}",
    ]


def _knob_profile(p: Params) -> list[tuple[float, float]]:
    radius, height, chamfer = num(p["diameter"]) / 2, num(p["height"]), num(p["chamfer"])
    top = (radius - chamfer, height)
    return [(0.0, 0.0), (radius, 0.0), (radius, height - chamfer), top, (0.0, height)]


def _knob_fluted_program(p: Params) -> str:
    g, height, depth = _flute_geometry(p), num(p["height"]), num(p["bore_depth"])
    return (
        f"body = (\n"
        f"    cq.Workplane('XZ').polyline({pts(_knob_profile(p))}).close()\n"
        f"    .revolve(360, (0, 0, 0), (0, 1, 0))\n"
        f")\n"
        f"flutes = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1)\n"
        f"    .polarArray({round(g['pitch'], 4)}, 0, 360, {p['flutes']})\n"
        f"    .circle({num(p['flute']) / 2}).extrude({height + 2})\n"
        f")\n"
        f"bore = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).circle({num(p['bore']) / 2})"
        f".extrude({depth + 1})\n"
        f")\n"
        f"result = body.cut(flutes).cut(bore)\n"
    )


def _knob_fluted_calls(p: Params) -> list[Call]:
    g, depth = _flute_geometry(p), num(p["bore_depth"])
    return [
        call("revolve_profile", points=[list(q) for q in _knob_profile(p)]),
        call(
            "pattern_polar",
            feature="hole",
            size=num(p["flute"]),
            count=whole(p["flutes"]),
            pitch_diameter=2 * g["pitch"],
        ),
        call("cut_cylinder", diameter=num(p["bore"]), height=depth + 1, z=(depth - 1) / 2),
    ]


def _knob_fluted_check(p: Params) -> str | None:
    flute, depth = num(p["flute"]), num(p["flute_depth"])
    if not 2 <= depth <= flute / 2 - 0.5:
        return "a flute must bite at least 2 mm into the rim and stay open at the rim"
    if not 1 <= num(p["chamfer"]) <= depth - 0.5:
        return "the chamfer must be shallower than the flutes"
    if not _flutes_fit(p):
        return "the flutes must leave lands of at least 2 mm at the rim"
    if num(p["bore"]) > num(p["diameter"]) - 2 * depth - 6:
        return "the bore must leave a 3 mm wall inside the flutes"
    if not max(5, num(p["bore"])) <= num(p["bore_depth"]) <= num(p["height"]) - 3:
        return "the bore must be one diameter (5 mm) deep and stop 3 mm below the top"
    return None


def _knob_fluted_recount(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    count = whole(p["flutes"]) + (1 if rng.random() < 0.5 else -1)
    if not _flutes_fit({**p, "flutes": count}):
        count = whole(p["flutes"]) * 2 - count
    g = _flute_geometry(p)
    return (
        {**p, "flutes": count},
        lambda q: (
            f"make it {q.count(count)} {q.w('flutes')}, the same size and still "
            f"{q.w('equally')} {q.w('spaced')} on the {q.len(2 * g['pitch'])} circle with the "
            f"first on the +X {q.w('axis')}"
        ),
    )


# -- heat_sink ------------------------------------------------------------------------------------


def _heat_sink(rng: np.random.Generator) -> Params:
    fin = _draw(rng, 1.5, 4)
    gap = _draw(rng, max(3, fin), 10)
    most = int((200 - fin) // (fin + gap)) + 1  # the base stays under 200 mm long
    return {
        "fins": int(rng.integers(4, min(16, most) + 1)),
        "fin": fin,
        "gap": gap,
        "width": _draw(rng, 20, 100),
        "base": _draw(rng, 3, 10),
        "fin_height": _draw(rng, 10, 50),
    }


def _sink_length(p: Params) -> float:
    return (whole(p["fins"]) - 1) * (num(p["fin"]) + num(p["gap"])) + num(p["fin"])


def _sink_gaps(p: Params) -> list[tuple[float, float]]:
    return [(x, 0.0) for x in _grid(whole(p["fins"]) - 1, num(p["fin"]) + num(p["gap"]))]


def _heat_sink_text(p: Params, q: Phrases) -> list[str]:
    length, fins = _sink_length(p), whole(p["fins"])
    return [
        f"a {q.w('heat sink')} {q.w('centred')} on the Z {q.w('axis')}, its {q.w('base')} on "
        f"{q.w('the XY plane')}: a {q.dims(length, p['width'], p['base'])} {q.w('base')} "
        f"(X × Y × Z) carrying parallel {q.w('fins')}",
        f"{q.count(fins)} {q.w('fins')} {q.len(p['fin'])} {q.w('thick')} rise "
        f"{q.len(p['fin_height'])} from the {q.w('base')}'s top face, each running the full "
        f"{q.len(p['width'])} {q.w('wide')} in Y",
        f"the {q.w('fins')} are {q.w('spaced')} {q.len(num(p['fin']) + num(p['gap']))} apart in "
        f"X, {q.w('centred')} on the {q.w('base')}, the two outer {q.w('fins')} flush with its "
        f"ends",
        f"the {q.count(fins - 1)} {q.w('gaps')} between the {q.w('fins')} are "
        f"{q.len(p['gap'])} {q.w('wide')}, open at the top and at both ends in Y",
    ]


def _heat_sink_program(p: Params) -> str:
    base, fin_height = num(p["base"]), num(p["fin_height"])
    return (
        f"block = cq.Workplane('XY').box({_sink_length(p)}, {p['width']}, {base + fin_height}, "
        f"centered=(True, True, False))\n"
        f"gaps = (\n"
        f"    cq.Workplane('XY').workplane(offset={base}).pushPoints({pts(_sink_gaps(p))})\n"
        f"    .rect({p['gap']}, {num(p['width']) + 2}).extrude({fin_height + 1})\n"
        f")\n"
        f"result = block.cut(gaps)\n"
    )


def _heat_sink_calls(p: Params) -> list[Call]:
    total = num(p["base"]) + num(p["fin_height"])
    return [
        call("add_box", length=_sink_length(p), width=num(p["width"]), height=total, z=total / 2),
        call(
            "pattern_linear",
            feature="pocket",
            size=num(p["gap"]),
            length=num(p["width"]) + 2,
            count_x=whole(p["fins"]) - 1,
            pitch_x=num(p["fin"]) + num(p["gap"]),
            depth=num(p["fin_height"]),
        ),
    ]


def _heat_sink_recount(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    fins = whole(p["fins"]) + (1 if rng.random() < 0.5 or whole(p["fins"]) <= 4 else -1)
    after = {**p, "fins": fins}
    length = _sink_length(after)
    return (
        after,
        lambda q: (
            f"make it {q.count(fins)} {q.w('fins')} at the same pitch, the {q.w('base')} "
            f"{q.len(length)} {q.w('long')} so the outer {q.w('fins')} stay flush with its ends"
        ),
    )


# -- the families ---------------------------------------------------------------------------------

_SHEET_DIMS = (
    Dimension("thickness", "sheet thickness", 1.5, 4),
    Dimension("radius", "inner bend radius", 1.5, 8),
)

FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "z_bracket",
        "a sheet-metal Z-bracket with clearance holes in both flanges",
        ("bend", "sweep", "hole"),
        (
            *_SHEET_DIMS,
            Dimension("width", "bracket width", 9.5, 100),
            Dimension("lower", "lower flange length (free end to the web's far face)", 15, 90),
            Dimension("height", "bracket height", 11, 100),
            Dimension("upper", "upper flange length (the web's near face to the free end)", 15, 90),
            Dimension("screw", "screw size", unit="choice", choices=SHEET_SCREWS),
            Dimension("holes", "holes per flange", 1, 2, unit="count"),
            Dimension("spacing", "hole spacing across the flange", 0, 40),
        ),
        _z_bracket,
        _z_bracket_text,
        _z_bracket_program,
        _z_bracket_calls,
        _moved("upper", 3),
        (
            resize("height", 3, 10),
            resize("width", 3, 10),
            Edit("change the screw size", apply=_z_bracket_screw),
        ),
        check=_all(_sheet_check, _z_bracket_check),
        words=WORDS,
    ),
    Family(
        "hat_channel",
        "a sheet-metal hat channel: two flanges, two walls and a crown, four bends",
        ("bend", "sweep"),
        (
            *_SHEET_DIMS,
            Dimension("length", "channel length", 30, 200),
            Dimension("crown", "crown width (outside the walls)", 14, 100),
            Dimension("height", "channel height", 12, 90),
            Dimension("flange", "flange width (from the wall's outer face)", 7.5, 40),
        ),
        _hat_channel,
        _hat_channel_text,
        _hat_channel_program,
        _hat_channel_calls,
        _moved("height", 3),
        (resize("height", 3, 10), resize("crown", 3, 10), resize("flange", 2, 6)),
        check=_all(_sheet_check, _hat_channel_check),
        words=WORDS,
    ),
    Family(
        "sheet_l_holes",
        "a sheet-metal L-bracket with a bend radius and a row of clearance holes",
        ("bend", "sweep", "hole", "pattern"),
        (
            *_SHEET_DIMS,
            Dimension("width", "bracket width", 11, 200),
            Dimension("length", "horizontal leg length", 13, 110),
            Dimension("height", "vertical leg height", 11, 90),
            Dimension("screw", "screw size", unit="choice", choices=SHEET_SCREWS),
            Dimension("count", "number of holes", 2, 7, unit="count"),
            Dimension("pitch", "hole pitch", 7, 30),
            Dimension("row", "row's distance from the vertical leg's outer face", 6, 110),
        ),
        _sheet_l,
        _sheet_l_text,
        _sheet_l_program,
        _sheet_l_calls,
        _recount("count", -1),
        (
            resize("height", 3, 10),
            resize("row", 1.5, 4),
            Edit("change the hole count", apply=_sheet_l_recount),
        ),
        check=_all(_sheet_check, _sheet_l_check),
        words=WORDS,
    ),
    Family(
        "u_clip",
        "a sheet-metal U-clip with a cross hole through both legs",
        ("bend", "sweep", "hole"),
        (
            *_SHEET_DIMS,
            Dimension("width", "clip width", 11, 60),
            Dimension("gap", "gap between the legs", 7, 70),
            Dimension("height", "clip height", 15, 100),
            Dimension("screw", "screw size", unit="choice", choices=CLIP_SCREWS),
            Dimension("hole_z", "hole height", 8, 90),
        ),
        _u_clip,
        _u_clip_text,
        _u_clip_program,
        _u_clip_calls,
        _moved("hole_z", -3),
        (
            resize("height", 3, 10),
            resize("gap", 2, 8),
            Edit("change the bolt size", apply=_u_clip_screw),
        ),
        check=_all(_sheet_check, _u_clip_check),
        words=WORDS,
    ),
    Family(
        "pull_handle",
        "a round-bar pull handle bent in a U on two bosses tapped with cosmetic threads "
        "(modelled as plain holes)",
        ("sweep", "bend", "boss", "thread"),
        (
            Dimension("bar", "bar diameter", 8, 16),
            Dimension("spacing", "hole spacing", 64, 192),
            Dimension("radius", "bend radius", 8, 40),
            Dimension("height", "grip height", 20, 130),
            Dimension("boss", "boss diameter", 12, 26),
            Dimension("boss_height", "boss height", 8, 30),
            Dimension("thread_depth", "thread depth", 6, 16),
        ),
        _pull_handle,
        _pull_handle_text,
        _pull_handle_program,
        _pull_handle_calls,
        _moved("height", 3),
        (
            resize("height", 5, 15),
            resize("boss", 2, 4),
            Edit("change the hole spacing", apply=_pull_handle_spacing),
        ),
        check=_pull_handle_check,
        words=WORDS,
    ),
    Family(
        "knob_lofted",
        "a knob lofted from a square or round base to a smaller round top, with a blind bore",
        ("loft", "hole"),
        (
            Dimension("shape", "base shape", unit="choice", choices=KNOB_BASES),
            Dimension("base", "base size", 20, 60),
            Dimension("top", "top diameter", 12, 56),
            Dimension("height", "knob height", 12, 45),
            Dimension("bore", "bore diameter", 4, 10),
            Dimension("bore_depth", "bore depth", 5, 42),
        ),
        _knob_lofted,
        _knob_lofted_text,
        _knob_lofted_program,
        _knob_lofted_calls,
        _moved("top", -3),
        (
            resize("height", 3, 8),
            resize("bore_depth", 2, 5),
            Edit("change the base shape", apply=_knob_lofted_shape),
        ),
        check=_knob_lofted_check,
        words=WORDS,
    ),
    Family(
        "knob_fluted",
        "a turned knob with a chamfered top, a polar pattern of flutes round its rim and a bore",
        ("revolve", "chamfer", "pattern", "hole"),
        (
            Dimension("diameter", "knob diameter", 25, 70),
            Dimension("height", "knob height", 12, 35),
            Dimension("chamfer", "top chamfer", 1, 6.5),
            Dimension("flute", "flute diameter", 4, 14),
            Dimension("flute_depth", "flute depth into the rim", 2, 6.5),
            Dimension("flutes", "number of flutes", 3, 30, unit="count"),
            Dimension("bore", "bore diameter", 4, 10),
            Dimension("bore_depth", "bore depth", 5, 32),
        ),
        _knob_fluted,
        _knob_fluted_text,
        _knob_fluted_program,
        _knob_fluted_calls,
        _recount("flutes", -1),
        (
            resize("height", 3, 8),
            resize("bore_depth", 2, 5),
            Edit("change the flute count", apply=_knob_fluted_recount),
        ),
        check=_knob_fluted_check,
        words=WORDS,
    ),
    Family(
        "heat_sink",
        "a finned heat sink: a base plate with a linear pattern of parallel fins",
        ("rib", "pattern"),
        (
            Dimension("fins", "number of fins", 3, 17, unit="count"),
            Dimension("fin", "fin thickness", 1.5, 4),
            Dimension("gap", "gap between fins", 3, 10),
            Dimension("width", "heat sink width", 20, 100),
            Dimension("base", "base thickness", 3, 10),
            Dimension("fin_height", "fin height", 10, 50),
        ),
        _heat_sink,
        _heat_sink_text,
        _heat_sink_program,
        _heat_sink_calls,
        _recount("fins", -1),
        (
            resize("fin_height", 3, 10),
            resize("base", 1, 3),
            Edit("change the fin count", apply=_heat_sink_recount),
        ),
        check=rule(
            "the heat sink must stay under 250 mm long with at least three fins",
            lambda f: f["fins"] >= 3 and (f["fins"] - 1) * (f["fin"] + f["gap"]) <= 246,
        ),
        words=WORDS,
    ),
)
