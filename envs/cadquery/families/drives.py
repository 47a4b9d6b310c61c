"""Power-transmission parts: spur gears (plain and hubbed), a roller-chain sprocket, a timing
pulley, a flat or crowned pulley, a handwheel, a gear rack and a ratchet wheel.

Lengths in mm, angles in degrees, Z up; every toothed part lies with its bottom face on the XY
plane, centred on the Z axis (the rack: its bar along X). Tooth forms are polygons, so that a
program and the tool calls build the same planar faces; the approximations are said in each
prompt:

- involute gears (module, 20° pressure angle, addendum 1 m, dedendum 1.25 m, tooth thickness
  half the circular pitch on the pitch circle, no backlash, no undercut or root fillet): each
  flank a polyline through 6 involute points at radii equally spaced from the base circle (or
  the root circle, where that is larger) to the tip circle, running radially from the base
  circle down to the root circle; tips and roots straight chords;
- sprockets for ISO 606 B-series chain (06B, 08B, 10B): each tooth gap a roller seat of radius
  ri = 0.505·d1 + 0.069·∛d1 spanning 140° − 90°/z, as a 7-point polyline, continued by straight
  flanks tangent to it out to the tip circle da = d − d1 + p·(1.125 − 0.8/z) (the mean of ISO
  606's limits); tooth width 0.93·b1 (0.95·b1 above 12.7 mm pitch); no tooth-side chamfer;
- T5/T10 timing pulleys (after DIN 7721-2): trapezoidal grooves, lands as two chords each;
- racks: straight 20° flanks, addendum 1 m, dedendum 1.25 m;
- ratchet wheels: saw teeth, a radial face and a straight back each;
- crowned pulleys: the crown (ISO 100 rise) as a symmetric double taper;
- the handwheel's tapped handle hole: a cosmetic M thread, modelled as its tap-drill hole.

The tool calls take at most 256 corners per polygon, so a longer toothed outline is built as a
core cylinder and overlapping chunks of whole teeth: the same faces as the program's one polygon.
"""

from __future__ import annotations

import itertools
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
    fmt4,
    mm,
    num,
    pts,
    resize,
    whole,
)
from toolgym.envs.cadquery.families.phrases import Phrases
from toolgym.envs.cadquery.families.standards import clearance_holes

Point = tuple[float, float]


def _polar(radius: float, angle: float) -> Point:
    return radius * math.cos(angle), radius * math.sin(angle)


def _listed(points: list[Point]) -> list[list[float]]:
    """Points as a tool call's argument."""
    return [[round(x, 4), round(y, 4)] for x, y in points]


def _mm(rng: np.random.Generator, low: float, high: float) -> float:
    """:func:`mm` on a range that may have closed up (the draw is then checked and redrawn)."""
    return mm(rng, low, max(low, high))


def _valid(draw: Callable[[np.random.Generator], Params], check: Callable[[Params], str | None]):
    """A sampler that draws again until the check holds (the draws are cheap arithmetic)."""

    def sample(rng: np.random.Generator) -> Params:
        for _ in range(500):
            params = draw(rng)
            if check(params) is None:
                return params
        raise RuntimeError("no valid draw")  # pragma: no cover - the ranges always allow one

    return sample


def _first_problem(*rules: tuple[bool, str]) -> str | None:
    """The first rule's message whose condition fails; ``None`` when all hold."""
    return next((message for holds, message in rules if not holds), None)


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    return lambda p: {**p, name: num(p[name]) + by}


def _recount(name: str, by: int) -> Callable[[Params], Params]:
    return lambda p: {**p, name: whole(p[name]) + by}


def _cylinder_cut(radius: float, x: float, y: float, bottom: float, height: float) -> str:
    """A program's vertical cylinder cutter (through cuts reach 1 mm past both faces)."""
    return (
        f"cq.Workplane('XY').workplane(offset={fmt4(bottom)}).center({fmt4(x)}, {fmt4(y)})"
        f".circle({fmt4(radius)}).extrude({fmt4(height)})"
    )


MAX_POINTS = 256  # the most corners one extrude_polygon call takes


def _outline_calls(units: list[list[Point]], inner: float, height: float, z: float = 0.0):
    """A toothed outline (its repeating units, each starting where material runs inwards) as
    tool calls: one extrude_polygon when it fits, else a core cylinder and chunks of whole units.
    Each chunk closes through two points at radius ``inner``, a little past its ends, so that
    neighbouring chunks overlap (no coplanar contact) and the core holds their inner chords."""
    outline = [point for unit in units for point in unit]
    if len(outline) <= MAX_POINTS:
        return [call("extrude_polygon", points=_listed(outline), height=height, z=z)]
    per = (MAX_POINTS - 3) // len(units[0])
    count = math.ceil(len(units) / per)
    bounds = [round(k * len(units) / count) for k in range(count + 1)]
    past = 0.3 / inner  # the chunks' overlap at the inner radius: 0.3 mm either way
    calls = [call("add_cylinder", diameter=2 * inner + 4, height=height, z=z + height / 2)]
    for a, b in itertools.pairwise(bounds):
        start, end = units[a][0], units[b % len(units)][0]
        chunk = [point for unit in units[a:b] for point in unit]
        chunk += [
            end,
            _polar(inner, math.atan2(end[1], end[0]) + past),
            _polar(inner, math.atan2(start[1], start[0]) - past),
        ]
        calls.append(call("extrude_polygon", points=_listed(chunk), height=height, z=z))
    return calls


WORDS: dict[str, tuple[str, str, str]] = {
    "module": ("module", "gear module", "metric module"),
    "flank": ("flank", "tooth flank", "tooth side"),
    "flanks": ("flanks", "tooth flanks", "tooth sides"),
    "polyline": ("polyline", "chain of straight segments", "broken line"),
    "pitch circle": ("pitch circle", "reference circle", "rolling circle"),
    "tip circle": ("tip circle", "addendum circle", "crest circle"),
    "root circle": ("root circle", "dedendum circle", "foot circle"),
    "base circle": ("base circle", "involute base circle", "generating circle"),
    "sprocket": ("sprocket", "chain sprocket", "chain wheel"),
    "roller": ("roller", "chain roller", "roller link"),
    "seat": ("seat", "roller seat", "seating curve"),
    "rack": ("rack", "gear rack", "toothed bar"),
    "ratchet": ("ratchet wheel", "ratchet", "pawl wheel"),
    "timing pulley": ("timing pulley", "synchronous pulley", "toothed belt pulley"),
    "grooves": ("grooves", "tooth gaps", "tooth spaces"),
    "side flange": ("side flange", "belt flange", "guide disc"),
    "side flanges": ("side flanges", "belt flanges", "guide discs"),
    "web": ("web", "centre web", "disc web"),
    "rim": ("rim", "outer rim", "rim ring"),
    "lightening holes": ("lightening holes", "weight-saving holes", "relief holes"),
    "handwheel": ("handwheel", "hand wheel", "operating wheel"),
    "spokes": ("spokes", "wheel spokes", "arms"),
    "tapped": ("tapped", "threaded", "internally threaded"),
    "crowned": ("crowned", "crown-faced", "barrelled"),
}


# -- involute gears ------------------------------------------------------------------------------

MODULES = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0)  # ISO 54, series I
PRESSURE_ANGLE = 20.0
FLANK_POINTS = 6


def _involute(base: float, radius: float) -> float:
    """inv(α) = tan α − α of the involute of ``base`` at ``radius``."""
    alpha = math.acos(min(1.0, base / radius))
    return math.tan(alpha) - alpha


def _gear_circles(m: float, z: int) -> dict[str, float]:
    """The gear's diameters: pitch, base, tip (addendum 1 m) and root (dedendum 1.25 m)."""
    pitch = m * z
    return {
        "pitch": pitch,
        "base": pitch * math.cos(math.radians(PRESSURE_ANGLE)),
        "tip": pitch + 2 * m,
        "root": pitch - 2.5 * m,
    }


def _gear_outline(m: float, z: int) -> list[Point]:
    return [point for tooth in _gear_teeth(m, z) for point in tooth]


def _gear_calls(m: float, z: int, height: float) -> list[Call]:
    return _outline_calls(_gear_teeth(m, z), _gear_circles(m, z)["root"] / 2 - 3, height)


def _gear_teeth(m: float, z: int) -> list[list[Point]]:
    """The gear's outline by tooth, counter-clockwise, the first tooth centred on +X: each flank
    a polyline through FLANK_POINTS involute points, radial below the base circle, tips and
    roots chords."""
    c = _gear_circles(m, z)
    rb, ra, rf = c["base"] / 2, c["tip"] / 2, c["root"] / 2
    # Half the tooth's angular thickness at the base circle: half the circular pitch on the pitch
    # circle (π / 2z) plus the involute function of the pressure angle.
    half = math.pi / (2 * z) + _involute(rb, c["pitch"] / 2)
    start = max(rb, rf)
    radii = [start + (ra - start) * i / (FLANK_POINTS - 1) for i in range(FLANK_POINTS)]
    teeth: list[list[Point]] = []
    for k in range(z):
        centre = 2 * math.pi * k / z
        tooth = [(r, centre - half + _involute(rb, r)) for r in radii]
        tooth += [(r, centre + half - _involute(rb, r)) for r in reversed(radii)]
        if rf < rb:
            tooth = [(rf, centre - half), *tooth, (rf, centre + half)]
        teeth.append([_polar(r, a) for r, a in tooth])
    return teeth


def _gear_text(p: Params, q: Phrases) -> list[str]:
    """The sentences every involute gear shares (after its first)."""
    m, z = num(p["module"]), whole(p["teeth"])
    c = _gear_circles(m, z)
    return [
        f"its {q.w('module')} is {q.len(m)} and its pressure angle {q.deg(PRESSURE_ANGLE)}, "
        f"giving a {q.w('pitch circle')} of {q.len(c['pitch'])} {q.w('diameter')}",
        f"it has a {q.w('tip circle')} of {q.len(c['tip'])} {q.w('diameter')} and a "
        f"{q.w('root circle')} of {q.len(c['root'])} {q.w('diameter')} (addendum one "
        f"{q.w('module')}, dedendum 1.25 {q.w('module')}s)",
        f"on the {q.w('pitch circle')} {q.w('each')} {q.w('tooth')} is half the circular pitch "
        f"{q.w('thick')}, without backlash",
        f"{q.w('each')} {q.w('flank')} is a {q.w('polyline')} through {q.count(FLANK_POINTS)} "
        f"points of the involute of the {q.len(c['base'])} {q.w('base circle')}, at radii "
        f"{q.w('equally')} {q.w('spaced')} from the {q.w('base circle')} to the "
        f"{q.w('tip circle')}",
        f"below the {q.w('base circle')} {q.w('each')} {q.w('flank')} runs radially down to the "
        f"{q.w('root circle')}, and the tips and roots between the {q.w('flanks')} are straight "
        f"lines (no undercut, no root fillet)",
    ]


def _spur_gear_draw(rng: np.random.Generator) -> Params:
    m = MODULES[int(rng.integers(len(MODULES)))]
    z = int(rng.integers(14, 41))
    root = m * (z - 2.5)
    return {
        "module": m,
        "teeth": z,
        "face_width": _mm(rng, max(5, 4 * m), min(30, 10 * m)),
        "bore": _mm(rng, 4, max(4, root - 2 * max(3, 2 * m))),
    }


def _spur_gear_check(p: Params) -> str | None:
    m, z = num(p["module"]), whole(p["teeth"])
    root = m * (z - 2.5)
    return _first_problem(
        (m in MODULES, "the module must be an ISO 54 series I module from 1 to 3 mm"),
        (m * (z + 2) <= 130, "the gear must stay within 130 mm tip diameter"),
        (num(p["bore"]) + 2 * max(3, 2 * m) <= root + 0.25, "the bore must leave 2 modules of rim"),
    )


def _spur_gear_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a {q.w('gear')} with {q.count(whole(p['teeth']))} involute {q.w('teeth')}, its bottom "
        f"face on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}, the first "
        f"{q.w('tooth')} {q.w('centred')} on the +X {q.w('axis')}",
        *_gear_text(p, q),
        f"the {q.w('teeth')} are extruded straight up Z, {q.len(p['face_width'])} {q.w('thick')} "
        f"(the face width)",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
    ]


def _spur_gear_program(p: Params) -> str:
    b = num(p["face_width"])
    outline = _gear_outline(num(p["module"]), whole(p["teeth"]))
    return (
        f"outline = {pts(outline)}\n"
        f"result = (\n"
        f"    cq.Workplane('XY').polyline(outline).close().extrude({fmt4(b)})\n"
        f"    .cut({_cylinder_cut(num(p['bore']) / 2, 0, 0, -1, b + 2)})\n"
        f")\n"
    )


def _spur_gear_calls(p: Params) -> list[Call]:
    return [
        *_gear_calls(num(p["module"]), whole(p["teeth"]), num(p["face_width"])),
        call("cut_hole", diameter=num(p["bore"])),
    ]


# -- hubbed gear with a DIN 6885 keyway ------------------------------------------------------------

# DIN 6885-1 parallel keys: shaft diameter up to (inclusive) -> key width b, hub keyway depth t2.
KEYWAYS = (
    (10, 3, 1.4),
    (12, 4, 1.8),
    (17, 5, 2.3),
    (22, 6, 2.8),
    (30, 8, 3.3),
    (38, 10, 3.3),
    (44, 12, 3.3),
    (50, 14, 3.8),
)
BORES = (10, 12, 14, 15, 16, 18, 20, 22, 24, 25, 28, 30, 32, 35, 38, 40, 42, 45)


def _keyway(bore: float) -> tuple[float, float]:
    """DIN 6885 key width and hub keyway depth t2 of a bore."""
    return next((b, t2) for top, b, t2 in KEYWAYS if bore <= top)


def _hubbed_draw(rng: np.random.Generator) -> Params:
    m = MODULES[2 + int(rng.integers(len(MODULES) - 2))]
    z = int(rng.integers(18, 61))
    root = m * (z - 2.5)
    fits = [d for d in BORES if d + 2 * _keyway(d)[1] + 6 <= root - 6] or [10]
    bore = float(fits[int(rng.integers(len(fits)))])
    smallest = bore + 2 * _keyway(bore)[1] + 6
    return {
        "module": m,
        "teeth": z,
        "face_width": _mm(rng, max(8, 5 * m), min(36, 10 * m)),
        "bore": bore,
        "hub": _mm(rng, smallest, max(smallest, min(root - 6, 2 * bore + 14))),
        "hub_height": _mm(rng, 5, 25),
        "keyway": "DIN 6885" if rng.random() < 0.8 else "none",
    }


def _hubbed_check(p: Params) -> str | None:
    m, z, bore, hub = num(p["module"]), whole(p["teeth"]), num(p["bore"]), num(p["hub"])
    root = m * (z - 2.5)
    return _first_problem(
        (m in MODULES, "the module must be an ISO 54 series I module from 1 to 3 mm"),
        (m * (z + 2) <= 200, "the gear must stay within 200 mm tip diameter"),
        (10 <= bore <= 50, "the bore must take a DIN 6885 key (10 to 50 mm)"),
        (hub >= bore + 2 * _keyway(bore)[1] + 6 - 0.25, "the hub needs 3 mm of wall past the key"),
        (hub <= root - 6 + 0.25, "the hub must stay 3 mm inside the root circle"),
    )


def _hubbed_height(p: Params) -> float:
    return num(p["face_width"]) + num(p["hub_height"])


def _hubbed_keyway_box(p: Params) -> tuple[float, float, float]:
    """The keyway cutter: width (X), length (Y) and centre y; from a quarter of the bore out to
    t2 beyond the bore's wall on +Y, through the whole part."""
    bore = num(p["bore"])
    width, depth = _keyway(bore)
    inner, outer = bore / 4, bore / 2 + depth
    return width, outer - inner, (inner + outer) / 2


def _keyway_sentence(p: Params, q: Phrases) -> str:
    bore = num(p["bore"])
    width, depth = _keyway(bore)
    return (
        f"a DIN 6885 {q.w('keyway')} {q.len(width)} {q.w('wide')} is {q.w('cut')} {q.w('through')} "
        f"the full length of the {q.w('bore')} on its +Y side, {q.w('centred')} on x = 0, its flat "
        f"bottom {q.len(bore / 2 + depth)} from the {q.w('axis')} ({q.len(depth)} into the "
        f"{q.w('hub')} past the {q.w('bore')})"
    )


def _hubbed_text(p: Params, q: Phrases) -> list[str]:
    sentences = [
        f"a {q.w('gear')} with {q.count(whole(p['teeth']))} involute {q.w('teeth')} and a "
        f"{q.w('hub')} on one side, its bottom face on {q.w('the XY plane')}, {q.w('centred')} "
        f"on the Z {q.w('axis')}, the first {q.w('tooth')} {q.w('centred')} on the +X "
        f"{q.w('axis')}",
        *_gear_text(p, q),
        f"the {q.w('teeth')} are extruded straight up Z from {q.w('the XY plane')}, "
        f"{q.len(p['face_width'])} {q.w('thick')} (the face width)",
        f"a cylindrical {q.w('hub')} of {q.len(p['hub'])} {q.w('diameter')} stands "
        f"{q.len(p['hub_height'])} {q.w('tall')} on the top face of the {q.w('teeth')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} {q.w('hub')} and {q.w('gear')} on "
        f"the {q.w('axis')}",
    ]
    if p["keyway"] != "none":
        sentences.append(_keyway_sentence(p, q))
    return sentences


def _hubbed_program(p: Params) -> str:
    b, height = num(p["face_width"]), _hubbed_height(p)
    outline = _gear_outline(num(p["module"]), whole(p["teeth"]))
    lines = [
        f"outline = {pts(outline)}",
        f"gear = cq.Workplane('XY').polyline(outline).close().extrude({fmt4(b)})",
        f"hub = {_cylinder_cut(num(p['hub']) / 2, 0, 0, b, num(p['hub_height']))}",
        f"result = gear.union(hub).cut({_cylinder_cut(num(p['bore']) / 2, 0, 0, -1, height + 2)})",
    ]
    if p["keyway"] != "none":
        width, length, y = _hubbed_keyway_box(p)
        lines.append(
            f"result = result.cut(cq.Workplane('XY').box({fmt4(width)}, {fmt4(length)}, "
            f"{fmt4(height + 2)}).translate((0, {fmt4(y)}, {fmt4(height / 2)})))"
        )
    return "\n".join(lines) + "\n"


def _hubbed_calls(p: Params) -> list[Call]:
    b, hub_height, height = num(p["face_width"]), num(p["hub_height"]), _hubbed_height(p)
    calls = [
        *_gear_calls(num(p["module"]), whole(p["teeth"]), b),
        call("add_cylinder", diameter=num(p["hub"]), height=hub_height, z=b + hub_height / 2),
        call("cut_hole", diameter=num(p["bore"])),
    ]
    if p["keyway"] != "none":
        width, length, y = _hubbed_keyway_box(p)
        calls.append(
            call("cut_box", length=width, width=length, height=height + 2, y=y, z=height / 2)
        )
    return calls


def _hubbed_toggle_keyway(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if p["keyway"] == "none":
        after = {**p, "keyway": "DIN 6885"}
        return after, lambda q: f"add {_keyway_sentence(after, q)}"
    return (
        {**p, "keyway": "none"},
        lambda q: f"remove the {q.w('keyway')}, leaving a plain round {q.w('bore')}",
    )


# -- roller-chain sprocket -------------------------------------------------------------------------

# ISO 606 B-series simple chain: pitch p, roller diameter d1, inner width b1.
CHAINS = {"06B": (9.525, 6.35, 5.72), "08B": (12.7, 8.51, 7.75), "10B": (15.875, 10.16, 9.65)}
SEAT_POINTS = 7
CLEARANCE_HOLES = tuple(clearance_holes("M4", "M5", "M6").values())  # ISO 273 medium


def _sprocket_form(chain: str, z: int) -> dict[str, float]:
    """The ISO 606 tooth form's numbers, rounded as the prompt says them."""
    p, d1, b1 = CHAINS[chain]
    pitch = round(p / math.sin(math.pi / z), 2)
    return {
        "p": p,
        "d1": d1,
        "pitch": pitch,
        "seat": round(0.505 * d1 + 0.069 * d1 ** (1 / 3), 2),
        "angle": round(140 - 90 / z, 2),
        "tip": round(pitch - d1 + p * (1.125 - 0.8 / z), 2),
        "width": round((0.93 if p <= 12.7 else 0.95) * b1, 1),
    }


def _sprocket_outline(chain: str, z: int) -> list[Point]:
    return [point for gap in _sprocket_gaps(chain, z) for point in gap]


def _sprocket_gaps(chain: str, z: int) -> list[list[Point]]:
    """The outline by gap, counter-clockwise, the first gap centred on +X: per gap the middle of
    the tip before it, a flank, the roller seat's polyline and the other flank; the tooth tips
    chords of the tip circle (split at their middles, where the calls' chunks meet)."""
    f = _sprocket_form(chain, z)
    rp, ri, ra = f["pitch"] / 2, f["seat"], f["tip"] / 2
    half = math.radians(f["angle"]) / 2
    # Gap 0 in its own frame (roller centre (rp, 0)): the seat runs from angle π + half (the
    # -Y side) through π (towards the axis) to π − half, about the roller's centre.
    seat = [
        (rp + ri * math.cos(a), ri * math.sin(a))
        for a in (math.pi + half - 2 * half * i / (SEAT_POINTS - 1) for i in range(SEAT_POINTS))
    ]
    # The +Y flank leaves the seat's end along its tangent, outwards, to the tip circle.
    ex, ey = seat[-1]
    tx, ty = math.sin(math.pi - half), -math.cos(math.pi - half)
    along = -(ex * tx + ey * ty) + math.sqrt((ex * tx + ey * ty) ** 2 - (ex**2 + ey**2 - ra**2))
    tip = (ex + along * tx, ey + along * ty)
    before = _polar(math.hypot(*tip), -2 * math.pi / z - math.atan2(-tip[1], tip[0]))
    middle = ((before[0] + tip[0]) / 2, (before[1] - tip[1]) / 2)
    gap = [middle, (tip[0], -tip[1]), *seat, tip]
    gaps: list[list[Point]] = []
    for k in range(z):
        turn = 2 * math.pi * k / z
        cos, sin = math.cos(turn), math.sin(turn)
        gaps.append([(x * cos - y * sin, x * sin + y * cos) for x, y in gap])
    return gaps


def _sprocket_bottom(chain: str, z: int) -> float:
    """The gaps' bottom radius: the seats' innermost point."""
    f = _sprocket_form(chain, z)
    return f["pitch"] / 2 - f["seat"]


def _sprocket_draw(rng: np.random.Generator) -> Params:
    chain = tuple(CHAINS)[int(rng.integers(len(CHAINS)))]
    z = int(rng.integers(15, 37 if chain != "10B" else 33))
    hole = CLEARANCE_HOLES[int(rng.integers(len(CLEARANCE_HOLES)))]
    bottom = _sprocket_bottom(chain, z)
    bore = _mm(rng, 8, max(8, min(0.8 * bottom, 2 * bottom - 2 * hole - 12)))
    return {
        "chain": chain,
        "teeth": z,
        "bore": bore,
        "holes": int(rng.integers(3, 7)),
        "hole": hole,
        "bolt_circle": _mm(rng, bore + hole + 4, 2 * bottom - hole - 6),
    }


def _sprocket_check(p: Params) -> str | None:
    z, bore, hole, pcd = whole(p["teeth"]), num(p["bore"]), num(p["hole"]), num(p["bolt_circle"])
    bottom = _sprocket_bottom(str(p["chain"]), z)
    return _first_problem(
        (pcd >= bore + hole + 4 - 0.25, "the bolt holes need 2 mm of material round the bore"),
        (pcd <= 2 * bottom - hole - 6 + 0.25, "the bolt holes must stay 3 mm inside the gaps"),
        (pcd * math.sin(math.pi / whole(p["holes"])) >= hole + 2, "the bolt holes are too close"),
        (_sprocket_form(str(p["chain"]), z)["tip"] <= 200, "the sprocket must stay within 200 mm"),
    )


def _sprocket_text(p: Params, q: Phrases) -> list[str]:
    chain, z = str(p["chain"]), whole(p["teeth"])
    f = _sprocket_form(chain, z)
    return [
        f"a plate {q.w('sprocket')} with {q.count(z)} {q.w('teeth')} for ISO 606 {chain} "
        f"roller chain, its bottom face on {q.w('the XY plane')}, {q.w('centred')} on the Z "
        f"{q.w('axis')}, the first tooth gap {q.w('centred')} on the +X {q.w('axis')}",
        f"the chain has a pitch of {q.len(f['p'])} and {q.w('roller')}s of {q.len(f['d1'])} "
        f"{q.w('diameter')}, so the {q.w('roller')} centres lie on a {q.w('pitch circle')} of "
        f"{q.len(f['pitch'])} {q.w('diameter')}",
        f"it has a {q.w('tip circle')} of {q.len(f['tip'])} {q.w('diameter')}, and the "
        f"{q.w('teeth')} are {q.len(f['width'])} {q.w('thick')}, extruded straight up Z",
        f"{q.w('each')} tooth gap is a {q.w('roller')} {q.w('seat')}: an arc of "
        f"{q.radius(f['seat'])} about the {q.w('roller')} centre on the {q.w('pitch circle')}, "
        f"spanning {q.deg(f['angle'])} symmetrically about the line to the {q.w('axis')}, drawn as "
        f"a {q.w('polyline')} through {q.count(SEAT_POINTS)} {q.w('equally')} {q.w('spaced')} "
        f"points",
        f"from {q.w('each')} end of a {q.w('seat')} a straight {q.w('flank')} runs on, tangent to "
        f"it, out to the {q.w('tip circle')}, and the tooth tips are straight lines between the "
        f"{q.w('flanks')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
        f"{q.count(whole(p['holes']))} {q.dia(p['hole'], 'through-holes')} "
        f"are {q.w('drilled')} on a "
        f"{q.len(p['bolt_circle'])} bolt circle, {q.w('equally')} {q.w('spaced')} with the first "
        f"on the +X {q.w('axis')}",
    ]


def _sprocket_program(p: Params) -> str:
    f = _sprocket_form(str(p["chain"]), whole(p["teeth"]))
    b = f["width"]
    return (
        f"outline = {pts(_sprocket_outline(str(p['chain']), whole(p['teeth'])))}\n"
        f"result = (\n"
        f"    cq.Workplane('XY').polyline(outline).close().extrude({fmt4(b)})\n"
        f"    .cut({_cylinder_cut(num(p['bore']) / 2, 0, 0, -1, b + 2)})\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset=-1)\n"
        f"        .polarArray({fmt4(num(p['bolt_circle']) / 2)}, 0, 360, {whole(p['holes'])})\n"
        f"        .circle({fmt4(num(p['hole']) / 2)}).extrude({fmt4(b + 2)})\n"
        f"    )\n"
        f")\n"
    )


def _sprocket_calls(p: Params) -> list[Call]:
    f = _sprocket_form(str(p["chain"]), whole(p["teeth"]))
    gaps = _sprocket_gaps(str(p["chain"]), whole(p["teeth"]))
    inner = _sprocket_bottom(str(p["chain"]), whole(p["teeth"])) - 3
    return [
        *_outline_calls(gaps, inner, f["width"]),
        call("cut_hole", diameter=num(p["bore"])),
        call(
            "pattern_polar",
            feature="hole",
            size=num(p["hole"]),
            count=whole(p["holes"]),
            pitch_diameter=num(p["bolt_circle"]),
        ),
    ]


def _sprocket_recount(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old = whole(p["holes"])
    new = old + (1 if (rng.random() < 0.5 and old < 6) or old == 3 else -1)
    return (
        {**p, "holes": new},
        lambda q: (
            f"change the bolt circle from {q.count(old)} to {q.count(new)} "
            f"{q.w('through-holes')}, still {q.w('equally')} {q.w('spaced')} with the first on "
            f"the +X {q.w('axis')}"
        ),
    )


# -- timing pulley ---------------------------------------------------------------------------------

# T-profile pulleys after DIN 7721-2: pitch, outside diameter = pitch diameter − 2u, groove
# width at the outside circle, groove depth, flank angle 2β (the groove's bottom follows).
PROFILES = {"T5": (5.0, 0.85, 1.75, 1.25, 50.0), "T10": (10.0, 1.85, 3.05, 2.6, 50.0)}


def _timing_form(profile: str, z: int) -> dict[str, float]:
    pitch, two_u, width, depth, angle = PROFILES[profile]
    outside = round(z * pitch / math.pi - two_u, 2)
    bottom = round(width - 2 * depth * math.tan(math.radians(angle / 2)), 2)
    return {"pitch": pitch, "outside": outside, "width": width, "bottom": bottom, "depth": depth}


def _timing_outline(profile: str, z: int) -> list[Point]:
    """Counter-clockwise, the first groove centred on +X: per groove its four corners (in the
    groove's frame: the top corners on the outside circle), then the land's midpoint on it."""
    f = _timing_form(profile, z)
    ro = f["outside"] / 2
    top = math.sqrt(ro**2 - (f["width"] / 2) ** 2)
    groove = [
        (top, -f["width"] / 2),
        (ro - f["depth"], -f["bottom"] / 2),
        (ro - f["depth"], f["bottom"] / 2),
        (top, f["width"] / 2),
        _polar(ro, math.pi / z),
    ]
    outline: list[Point] = []
    for k in range(z):
        turn = 2 * math.pi * k / z
        cos, sin = math.cos(turn), math.sin(turn)
        outline += [(x * cos - y * sin, x * sin + y * cos) for x, y in groove]
    return outline


def _timing_draw(rng: np.random.Generator) -> Params:
    profile = tuple(PROFILES)[int(rng.integers(len(PROFILES)))]
    z = int(rng.integers(15, 49 if profile == "T5" else 37))
    f = _timing_form(profile, z)
    small = profile == "T5"
    root = f["outside"] - 2 * f["depth"]
    return {
        "profile": profile,
        "teeth": z,
        "face_width": _mm(rng, 8, 28) if small else _mm(rng, 14, 40),
        "flange_diameter": _mm(rng, f["outside"] + 4, f["outside"] + (8 if small else 14)),
        "flange_thickness": _mm(rng, 1.5, 3),
        "bore": _mm(rng, 4, max(4, min(root - 6, 0.6 * root))),
    }


def _timing_check(p: Params) -> str | None:
    f = _timing_form(str(p["profile"]), whole(p["teeth"]))
    root = f["outside"] - 2 * f["depth"]
    return _first_problem(
        (num(p["flange_diameter"]) >= f["outside"] + 4 - 0.25, "the flanges must stand 2 mm proud"),
        (num(p["bore"]) <= root - 6 + 0.25, "the bore must leave 3 mm below the grooves"),
    )


def _timing_text(p: Params, q: Phrases) -> list[str]:
    profile, z = str(p["profile"]), whole(p["teeth"])
    f = _timing_form(profile, z)
    tf, b = num(p["flange_thickness"]), num(p["face_width"])
    return [
        f"a {profile} {q.w('timing pulley')} with {q.count(z)} {q.w('teeth')} between two "
        f"{q.w('side flanges')}, its bottom face on {q.w('the XY plane')}, {q.w('centred')} on "
        f"the Z {q.w('axis')}, the first groove {q.w('centred')} on the +X {q.w('axis')}",
        f"the {q.w('teeth')} are {q.len(b)} {q.w('wide')}, from z = {q.len(tf)} to z = "
        f"{q.len(tf + b)}, with an outside circle of {q.len(f['outside'])} {q.w('diameter')} (the "
        f"{q.len(f['pitch'])} belt pitch)",
        f"between the {q.w('teeth')} run {q.count(z)} trapezoidal {q.w('grooves')}: {q.w('each')} "
        f"is symmetric about its centreline, {q.len(f['width'])} {q.w('wide')} where it meets "
        f"the outside circle, {q.len(f['bottom'])} {q.w('wide')} at its flat bottom and "
        f"{q.len(f['depth'])} {q.w('deep')} from the outside circle at the centreline",
        f"{q.w('each')} land between two {q.w('grooves')} is two straight lines meeting on the "
        f"outside circle midway between the {q.w('grooves')}",
        f"a {q.w('side flange')} of {q.len(p['flange_diameter'])} {q.w('diameter')} and "
        f"{q.len(tf)} {q.w('thick')} closes {q.w('each')} side of the {q.w('teeth')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
    ]


def _timing_height(p: Params) -> float:
    return 2 * num(p["flange_thickness"]) + num(p["face_width"])


def _timing_program(p: Params) -> str:
    tf, b, r = num(p["flange_thickness"]), num(p["face_width"]), num(p["flange_diameter"]) / 2
    outline = _timing_outline(str(p["profile"]), whole(p["teeth"]))
    return (
        f"outline = {pts(outline)}\n"
        f"teeth = cq.Workplane('XY').workplane(offset={fmt4(tf)}).polyline(outline).close()"
        f".extrude({fmt4(b)})\n"
        f"flanges = {_cylinder_cut(r, 0, 0, 0, tf)}.union({_cylinder_cut(r, 0, 0, tf + b, tf)})\n"
        f"bore = {_cylinder_cut(num(p['bore']) / 2, 0, 0, -1, _timing_height(p) + 2)}\n"
        f"result = teeth.union(flanges).cut(bore)\n"
    )


def _timing_calls(p: Params) -> list[Call]:
    tf, b, d = num(p["flange_thickness"]), num(p["face_width"]), num(p["flange_diameter"])
    outline = _timing_outline(str(p["profile"]), whole(p["teeth"]))
    return [
        call("add_cylinder", diameter=d, height=tf, z=tf / 2),
        call("extrude_polygon", points=_listed(outline), height=b, z=tf),
        call("add_cylinder", diameter=d, height=tf, z=tf + b + tf / 2),
        call("cut_hole", diameter=num(p["bore"])),
    ]


# -- flat or crowned pulley ------------------------------------------------------------------------

PULLEY_DIAMETERS = (50, 56, 63, 71, 80, 90, 100, 112, 125, 140, 160, 180, 200)  # ISO 100 (R20)


def _crown_rise(diameter: float) -> float:
    """ISO 100 crown rise for a pulley diameter (face widths up to 125 mm)."""
    return 0.3 if diameter <= 112 else 0.4 if diameter <= 140 else 0.5 if diameter <= 180 else 0.6


def _pulley_profile(p: Params) -> list[Point]:
    """The revolved section (radius, z): hub, web and rim, the crown a double taper."""
    r, w = num(p["diameter"]) / 2, num(p["width"])
    edge = r - (_crown_rise(num(p["diameter"])) if p["crown"] == "crowned" else 0)
    inner, rb, rh = edge - num(p["rim"]), num(p["bore"]) / 2, num(p["hub"]) / 2
    web0, web1 = (w - num(p["web"])) / 2, (w + num(p["web"])) / 2
    hub0, hub1 = (w - num(p["hub_length"])) / 2, (w + num(p["hub_length"])) / 2
    face = [(edge, 0.0), (r, w / 2), (edge, w)] if p["crown"] == "crowned" else [(r, 0.0), (r, w)]
    return [
        (rb, hub0),
        (rh, hub0),
        (rh, web0),
        (inner, web0),
        (inner, 0.0),
        *face,
        (inner, w),
        (inner, web1),
        (rh, web1),
        (rh, hub1),
        (rb, hub1),
    ]


def _pulley_draw(rng: np.random.Generator) -> Params:
    d = float(PULLEY_DIAMETERS[int(rng.integers(len(PULLEY_DIAMETERS)))])
    width = _mm(rng, 20, min(60, d * 0.6))
    rim = _mm(rng, 3, 6)
    bore = _mm(rng, 8, d / 5)
    hub = _mm(rng, bore + 10, bore + 24)
    web = _mm(rng, 5, width / 2)
    room = d / 2 - _crown_rise(d) - rim - hub / 2 - 4
    hole = _mm(rng, 5, max(5, min(room, 30)))
    return {
        "diameter": d,
        "width": width,
        "crown": ("flat", "crowned")[int(rng.integers(2))],
        "rim": rim,
        "web": web,
        "hub": hub,
        "hub_length": _mm(rng, web + 6, width + 10),
        "bore": bore,
        "holes": int(rng.integers(4, 9)),
        "hole": hole,
        "hole_circle": _mm(rng, hub + hole + 4, 2 * (d / 2 - _crown_rise(d) - rim) - hole - 4),
    }


def _pulley_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items() if k != "crown"}
    inner = f["diameter"] / 2 - _crown_rise(f["diameter"]) - f["rim"]
    return _first_problem(
        (f["diameter"] in PULLEY_DIAMETERS, "the diameter must be an ISO 100 (R20) size"),
        (f["web"] + 4 <= f["width"], "the web must leave 2 mm of rim on either side"),
        (f["hub_length"] >= f["web"] + 6 - 0.25, "the hub must stand 3 mm proud of the web"),
        (f["hub"] >= f["bore"] + 10 - 0.25, "the hub needs a 5 mm wall round the bore"),
        (f["hole_circle"] >= f["hub"] + f["hole"] + 4 - 0.25, "the holes must clear the hub"),
        (f["hole_circle"] <= 2 * inner - f["hole"] - 4 + 0.25, "the holes must clear the rim"),
        (
            f["hole_circle"] * math.sin(math.pi / f["holes"]) >= f["hole"] + 3,
            "neighbouring holes need 3 mm between them",
        ),
    )


def _pulley_text(p: Params, q: Phrases) -> list[str]:
    d, w = num(p["diameter"]), num(p["width"])
    rise = _crown_rise(d)
    if p["crown"] == "crowned":
        face = (
            f"its face is {q.w('crowned')}: a symmetric double taper from {q.len(d - 2 * rise)} "
            f"{q.w('diameter')} at both edges up to {q.len(d)} at mid-width (a "
            f"{q.len(rise)} rise)"
        )
    else:
        face = f"its face is a plain cylinder of {q.len(d)} {q.w('diameter')}, not {q.w('crowned')}"
    return [
        f"a flat-belt {q.w('pulley')} {q.len(w)} {q.w('tall')} in Z (its face width), its "
        f"{q.w('rim')} standing on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}",
        face,
        f"its {q.w('rim')} is {q.len(p['rim'])} {q.w('thick')} radially, measured at its edges",
        f"a {q.w('web')} {q.len(p['web'])} {q.w('thick')}, {q.w('centred')} in the "
        f"{q.w('rim')}'s width, joins the {q.w('rim')} to the {q.w('hub')}",
        f"its {q.w('hub')} is of {q.len(p['hub'])} {q.w('diameter')} and "
        f"{q.len(p['hub_length'])} {q.w('long')}, {q.w('centred')} on the {q.w('rim')}'s mid-width",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} the {q.w('hub')}",
        f"{q.count(whole(p['holes']))} {q.dia(p['hole'], 'lightening holes')} "
        f"go {q.w('through')} the "
        f"{q.w('web')}, {q.w('equally')} {q.w('spaced')} on a {q.len(p['hole_circle'])} circle "
        f"with the first on the +X {q.w('axis')}",
    ]


def _pulley_bottom(p: Params) -> tuple[float, float]:
    """The lowest z of the pulley and its height."""
    w, hub = num(p["width"]), num(p["hub_length"])
    return min(0.0, (w - hub) / 2), max(w, hub)


def _pulley_program(p: Params) -> str:
    bottom, height = _pulley_bottom(p)
    return (
        f"result = (\n"
        f"    cq.Workplane('XZ').polyline({pts(_pulley_profile(p))}).close()\n"
        f"    .revolve(360, (0, 0, 0), (0, 1, 0))\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').workplane(offset={fmt4(bottom - 1)})\n"
        f"        .polarArray({fmt4(num(p['hole_circle']) / 2)}, 0, 360, {whole(p['holes'])})\n"
        f"        .circle({fmt4(num(p['hole']) / 2)}).extrude({fmt4(height + 2)})\n"
        f"    )\n"
        f")\n"
    )


def _pulley_calls(p: Params) -> list[Call]:
    return [
        call("revolve_profile", points=_listed(_pulley_profile(p))),
        call(
            "pattern_polar",
            feature="hole",
            size=num(p["hole"]),
            count=whole(p["holes"]),
            pitch_diameter=num(p["hole_circle"]),
        ),
    ]


def _pulley_recount(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old = whole(p["holes"])
    new = old + (1 if rng.random() < 0.5 else -1) * int(rng.integers(1, 3))
    return (
        {**p, "holes": new},
        lambda q: (
            f"make it {q.count(new)} {q.w('lightening holes')} instead of {q.count(old)}, same "
            f"size and circle, still {q.w('equally')} {q.w('spaced')} with the first on the +X "
            f"{q.w('axis')}"
        ),
    )


def _pulley_toggle_crown(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    d = num(p["diameter"])
    if p["crown"] == "crowned":
        return (
            {**p, "crown": "flat"},
            lambda q: (
                f"make the face a plain cylinder of {q.len(d)} {q.w('diameter')}, no longer "
                f"{q.w('crowned')}"
            ),
        )
    return (
        {**p, "crown": "crowned"},
        lambda q: (
            f"make the face {q.w('crowned')}: a symmetric double taper from "
            f"{q.len(d - 2 * _crown_rise(d))} {q.w('diameter')} at both edges up to {q.len(d)} at "
            f"mid-width"
        ),
    )


# -- handwheel -------------------------------------------------------------------------------------

HANDWHEEL_DIAMETERS = (125, 160, 200, 250)  # DIN 950 sizes
TAP_DRILLS = {"M6": 5.0, "M8": 6.8, "M10": 8.5}  # ISO 2306 tap drills for coarse threads


def _handwheel_radii(p: Params) -> tuple[float, float, float, float]:
    """Outside, rim inside, hub and bore radii."""
    ro = num(p["diameter"]) / 2
    return ro, ro - num(p["rim_width"]), num(p["hub"]) / 2, num(p["bore"]) / 2


def _handwheel_profile(p: Params) -> list[Point]:
    ro, ri, rh, rb = _handwheel_radii(p)
    c, hr = num(p["chamfer"]), num(p["rim_height"])
    return [
        (rb, 0.0),
        (ro - c, 0.0),
        (ro, c),
        (ro, hr - c),
        (ro - c, hr),
        (ri, hr),
        (ri, num(p["web"])),
        (rh, num(p["web"])),
        (rh, num(p["hub_height"])),
        (rb, num(p["hub_height"])),
    ]


def _handle_point(p: Params) -> Point:
    """The handle hole: midway across the rim, half an opening pitch from +X."""
    ro, ri, _, _ = _handwheel_radii(p)
    return _polar((ro + ri) / 2, math.pi / whole(p["openings"]))


def _handwheel_draw(rng: np.random.Generator) -> Params:
    d = float(HANDWHEEL_DIAMETERS[int(rng.integers(len(HANDWHEEL_DIAMETERS)))])
    thread = tuple(TAP_DRILLS)[int(rng.integers(len(TAP_DRILLS)))]
    chamfer = _mm(rng, 1.5, 3)
    rim_width = _mm(rng, max(12, TAP_DRILLS[thread] + 2 * chamfer + 5), 24)
    rim_height = _mm(rng, 14, 24)
    bore = _mm(rng, 10, d / 8)
    hub = _mm(rng, bore + 14, bore + 26)
    params: Params = {
        "diameter": d,
        "rim_width": rim_width,
        "rim_height": rim_height,
        "chamfer": chamfer,
        "web": _mm(rng, 5, min(10, rim_height - 5)),
        "hub": hub,
        "hub_height": _mm(rng, rim_height + 4, rim_height + 20),
        "bore": bore,
        "thread": thread,
        "style": ("holes", "slots")[int(rng.integers(2))],
    }
    inner, rh = d / 2 - rim_width - 3, hub / 2 + 3  # the openings' radial room
    if params["style"] == "holes":
        params["openings"] = int(rng.integers(4, 9))
        params["opening"] = _mm(rng, 8, max(8, min(40, inner - rh)))
        half = num(params["opening"]) / 2
        params["opening_circle"] = _mm(rng, 2 * (rh + half), 2 * max(rh + half, inner - half))
    else:
        params["openings"] = int(rng.integers(3, 7))
        params["opening"] = _mm(rng, 10, 24)
        params["slot_length"] = _mm(rng, num(params["opening"]) + 6, max(20, inner - rh))
        half = num(params["slot_length"]) / 2
        params["opening_circle"] = _mm(rng, 2 * (rh + half), 2 * max(rh + half, inner - half))
    return params


def _handwheel_check(p: Params) -> str | None:
    ro, ri, rh, rb = _handwheel_radii(p)
    n, width, pcd = whole(p["openings"]), num(p["opening"]), num(p["opening_circle"])
    reach = num(p.get("slot_length", width)) / 2  # the openings' radial half-extent
    tap, c = TAP_DRILLS[str(p["thread"])], num(p["chamfer"])
    if p["style"] == "holes":
        apart = (pcd * math.sin(math.pi / n) >= width + 5, "the holes need 5 mm between them")
    else:
        inner = pcd / 2 - reach + width / 2  # where the spokes between the slots are narrowest
        apart = (2 * inner * math.sin(math.pi / n) - width >= 6, "the spokes must be 6 mm wide")
    return _first_problem(
        (num(p["diameter"]) in HANDWHEEL_DIAMETERS, "the diameter must be a DIN 950 size"),
        (pcd / 2 - reach >= rh + 3 - 0.25, "the openings must stay 3 mm off the hub"),
        (pcd / 2 + reach <= ri - 3 + 0.25, "the openings must stay 3 mm inside the rim"),
        apart,
        ((ro - ri) >= tap + 2 * c + 5 - 0.25, "the handle hole must clear the rim's chamfers"),
        (num(p["web"]) <= num(p["rim_height"]) - 5 + 0.25, "the web must be 5 mm under the rim"),
        (
            num(p["hub_height"]) >= num(p["rim_height"]) + 4 - 0.25,
            "the hub must stand above the rim",
        ),
        (rh >= rb + 7 - 0.25, "the hub needs a 7 mm wall round the bore"),
    )


def _handwheel_text(p: Params, q: Phrases) -> list[str]:
    n, thread = whole(p["openings"]), str(p["thread"])
    sentences = [
        f"a {q.w('handwheel')} of {q.len(p['diameter'])} outside {q.w('diameter')}, its flat "
        f"bottom on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}",
        f"its {q.w('rim')} is {q.len(p['rim_width'])} {q.w('wide')} radially and "
        f"{q.len(p['rim_height'])} {q.w('tall')}, its top and bottom outer {q.w('edges')} "
        f"{q.w('chamfered')} {q.len(p['chamfer'])} at {q.deg(45)}",
        f"a flat {q.w('web')} {q.len(p['web'])} {q.w('thick')} joins the {q.w('rim')} to the "
        f"{q.w('hub')}, its bottom flush with theirs on {q.w('the XY plane')}",
        f"its {q.w('hub')} is of {q.len(p['hub'])} {q.w('diameter')} and "
        f"{q.len(p['hub_height'])} {q.w('tall')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} the {q.w('hub')}",
        f"an {thread} {q.w('tapped')} {q.w('hole')} for the handle goes {q.w('through')} the "
        f"{q.w('rim')} at {q.at(*_handle_point(p))} (midway across the {q.w('rim')}, "
        f"{q.deg(180 / n)} from +X), modelled as a plain {q.dia(TAP_DRILLS[thread], 'hole')} "
        f"(the tap drill)",
    ]
    if p["style"] == "holes":
        sentences.append(
            f"{q.count(n)} {q.dia(p['opening'], 'lightening holes')} go {q.w('through')} the "
            f"{q.w('web')}, {q.w('equally')} {q.w('spaced')} on a {q.len(p['opening_circle'])} "
            f"circle with the first on the +X {q.w('axis')}"
        )
    else:
        sentences.append(
            f"{q.count(n)} radial round-ended {q.w('slots')}, {q.w('each')} "
            f"{q.len(p['slot_length'])} {q.w('long')} end to end and {q.len(p['opening'])} "
            f"{q.w('wide')}, go {q.w('through')} the {q.w('web')}, leaving {q.count(n)} "
            f"{q.w('spokes')}; their centres are {q.w('equally')} {q.w('spaced')} on a "
            f"{q.len(p['opening_circle'])} circle with the first on the +X {q.w('axis')}"
        )
    return sentences


def _handwheel_program(p: Params) -> str:
    height = num(p["hub_height"])
    n, width, radius = whole(p["openings"]), num(p["opening"]), num(p["opening_circle"]) / 2
    shape = (
        f".circle({fmt4(width / 2)})"
        if p["style"] == "holes"
        else f".slot2D({fmt4(num(p['slot_length']))}, {fmt4(width)}, 0)"
    )
    hx, hy = _handle_point(p)
    tap = TAP_DRILLS[str(p["thread"])]
    return (
        f"wheel = (\n"
        f"    cq.Workplane('XZ').polyline({pts(_handwheel_profile(p))}).close()\n"
        f"    .revolve(360, (0, 0, 0), (0, 1, 0))\n"
        f")\n"
        f"openings = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1).polarArray({fmt4(radius)}, 0, 360, {n})\n"
        f"    {shape}.extrude({fmt4(height + 2)})\n"
        f")\n"
        f"handle = {_cylinder_cut(tap / 2, hx, hy, -1, height + 2)}\n"
        f"result = wheel.cut(openings).cut(handle)\n"
    )


def _handwheel_calls(p: Params) -> list[Call]:
    slots = p["style"] == "slots"
    hx, hy = _handle_point(p)
    return [
        call("revolve_profile", points=_listed(_handwheel_profile(p))),
        call(
            "pattern_polar",
            feature="slot" if slots else "hole",
            size=num(p["opening"]),
            count=whole(p["openings"]),
            pitch_diameter=num(p["opening_circle"]),
            length=num(p["slot_length"]) if slots else 0.0,
        ),
        call("cut_hole", diameter=TAP_DRILLS[str(p["thread"])], x=hx, y=hy),
    ]


def _handwheel_recount(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old = whole(p["openings"])
    new = old + (1 if rng.random() < 0.5 else -1)
    what = "lightening holes" if p["style"] == "holes" else "slots"
    return (
        {**p, "openings": new},
        lambda q: (
            f"make it {q.count(new)} {q.w(what)} instead of {q.count(old)}, same size and circle, "
            f"the first still on the +X {q.w('axis')}, and move the {q.w('tapped')} handle "
            f"{q.w('hole')} to stay midway between the first two, {q.deg(180 / new)} from +X"
        ),
    )


# -- gear rack -------------------------------------------------------------------------------------

RACK_MODULES = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)


def _rack_outline(p: Params) -> list[Point]:
    """Counter-clockwise from the bar's back: teeth on +Y, the ends at mid-gap."""
    m, n, height = num(p["module"]), whole(p["teeth"]), num(p["height"])
    pitch = math.pi * m
    slope = math.tan(math.radians(PRESSURE_ANGLE))
    tip, root = pitch / 2 - 2 * m * slope, pitch / 2 + 2 * 1.25 * m * slope
    half, yt, yr = n * pitch / 2, height + m, height - 1.25 * m
    outline: list[Point] = [(-half, 0.0), (half, 0.0), (half, yr)]
    for k in reversed(range(n)):
        x = -half + (k + 0.5) * pitch
        outline += [(x + root / 2, yr), (x + tip / 2, yt), (x - tip / 2, yt), (x - root / 2, yr)]
    return [*outline, (-half, yr)]


def _rack_draw(rng: np.random.Generator) -> Params:
    m = RACK_MODULES[int(rng.integers(len(RACK_MODULES)))]
    most = int(200 // (math.pi * m))
    return {
        "module": m,
        "teeth": int(rng.integers(6, min(30, most) + 1)),
        "face_width": _mm(rng, max(8, 4 * m), min(40, 10 * m)),
        "height": _mm(rng, max(10, 1.25 * m + 6), 30),
    }


def _rack_check(p: Params) -> str | None:
    m = num(p["module"])
    return _first_problem(
        (m in RACK_MODULES, "the module must be an ISO 54 series I module from 1 to 4 mm"),
        (whole(p["teeth"]) * math.pi * m <= 200 + 1e-9, "the rack must stay within 200 mm long"),
        (num(p["height"]) - 1.25 * m >= 6 - 0.25, "the bar needs 6 mm of stock under the roots"),
    )


def _rack_text(p: Params, q: Phrases) -> list[str]:
    m, n = num(p["module"]), whole(p["teeth"])
    pitch = math.pi * m
    return [
        f"a straight {q.w('rack')} with {q.count(n)} {q.w('teeth')} {q.w('along')} X, "
        f"{q.w('lying')} on {q.w('the XY plane')} (its profile in XY, extruded up Z), its back "
        f"face on y = 0, {q.w('centred')} on the origin in X, the {q.w('teeth')} pointing +Y",
        f"its {q.w('module')} is {q.len(m)} and its pressure angle {q.deg(PRESSURE_ANGLE)}: "
        f"the {q.w('teeth')} are {q.len(pitch)} apart, and {q.w('each')} {q.w('tooth')} is half "
        f"of that {q.w('thick')} on the pitch line, with straight {q.w('flanks')}",
        f"the bar is {q.len(n * pitch)} {q.w('long')}, {q.count(n)} pitches, its ends at the "
        f"middle of a tooth gap",
        f"its pitch line is {q.len(p['height'])} from the back face, the tooth tips "
        f"{q.len(m)} above it and the roots {q.len(1.25 * m)} below it, tips and roots flat "
        f"(no root fillet), the bar's ends {q.w('cut')} square",
        f"the {q.w('rack')} is {q.len(p['face_width'])} {q.w('thick')} in Z (the face width)",
    ]


def _rack_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').polyline({pts(_rack_outline(p))}).close()\n"
        f"    .extrude({fmt4(num(p['face_width']))})\n"
        f")\n"
    )


def _rack_calls(p: Params) -> list[Call]:
    return [call("extrude_polygon", points=_listed(_rack_outline(p)), height=num(p["face_width"]))]


def _rack_add_tooth(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old = whole(p["teeth"])
    new = old + (1 if rng.random() < 0.5 or old <= 6 else -1)
    return (
        {**p, "teeth": new},
        lambda q: (
            f"make the {q.w('rack')} {q.count(new)} {q.w('teeth')} {q.w('long')} instead of "
            f"{q.count(old)} (the bar {q.len(new * math.pi * num(p['module']))} {q.w('long')}), "
            f"still {q.w('centred')} on the origin in X with its ends at mid-gap"
        ),
    )


# -- ratchet wheel ---------------------------------------------------------------------------------


def _ratchet_outline(p: Params) -> list[Point]:
    """Counter-clockwise: each tip at 360k/z from +X, a radial face down to the root circle, then
    the tooth's straight back up to the next tip."""
    z = whole(p["teeth"])
    ra = num(p["diameter"]) / 2
    rf = ra - num(p["depth"])
    outline: list[Point] = []
    for k in range(z):
        angle = 2 * math.pi * k / z
        outline += [_polar(ra, angle), _polar(rf, angle)]
    return outline


def _ratchet_draw(rng: np.random.Generator) -> Params:
    z = int(rng.integers(12, 37))
    d = _mm(rng, max(30, 2.5 * z), 150)
    pitch = math.pi * d / z
    depth = _mm(rng, max(2, 0.3 * pitch), max(2, 0.6 * pitch))
    return {
        "teeth": z,
        "diameter": d,
        "depth": depth,
        "face_width": _mm(rng, 5, 25),
        "bore": _mm(rng, 6, max(6, 0.6 * (d - 2 * depth))),
    }


def _ratchet_check(p: Params) -> str | None:
    d, depth, z = num(p["diameter"]), num(p["depth"]), whole(p["teeth"])
    pitch = math.pi * d / z
    return _first_problem(
        (0.3 * pitch - 0.25 <= depth <= 0.6 * pitch + 0.25, "the teeth must be 0.3-0.6 pitch deep"),
        (num(p["bore"]) <= d - 2 * depth - 8 + 0.25, "the bore must leave 4 mm under the teeth"),
    )


def _ratchet_text(p: Params, q: Phrases) -> list[str]:
    d, depth = num(p["diameter"]), num(p["depth"])
    z = whole(p["teeth"])
    return [
        f"a {q.w('ratchet')} with {q.count(z)} saw {q.w('teeth')}, its bottom face on "
        f"{q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}, the first tooth tip "
        f"on the +X {q.w('axis')}",
        f"its tooth tips lie on a {q.len(d)} {q.w('tip circle')} and its roots on a "
        f"{q.len(d - 2 * depth)} {q.w('root circle')} ({q.len(depth)} {q.w('deep')} "
        f"{q.w('teeth')})",
        f"{q.w('each')} {q.w('tooth')} has a radial face that drops from its tip, on a radius "
        f"{q.w('spaced')} {q.deg(360 / z)} from its neighbours, to the {q.w('root circle')}, "
        f"and from the foot of that face a straight back rises counter-clockwise (seen from +Z) "
        f"to the next tip",
        f"the {q.w('ratchet')} is {q.len(p['face_width'])} {q.w('thick')}, extruded straight up Z",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
    ]


def _ratchet_program(p: Params) -> str:
    b = num(p["face_width"])
    return (
        f"outline = {pts(_ratchet_outline(p))}\n"
        f"result = (\n"
        f"    cq.Workplane('XY').polyline(outline).close().extrude({fmt4(b)})\n"
        f"    .cut({_cylinder_cut(num(p['bore']) / 2, 0, 0, -1, b + 2)})\n"
        f")\n"
    )


def _ratchet_calls(p: Params) -> list[Call]:
    return [
        call("extrude_polygon", points=_listed(_ratchet_outline(p)), height=num(p["face_width"])),
        call("cut_hole", diameter=num(p["bore"])),
    ]


# -- the families ----------------------------------------------------------------------------------

_GEAR_DIMENSIONS = (
    Dimension("module", "module", 1, 3),
    Dimension("face_width", "face width", 5, 36),
)

FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "spur_gear",
        "an involute spur gear (20° pressure angle, polyline flanks) with a bore",
        ("teeth", "polygon", "hole"),
        (
            *_GEAR_DIMENSIONS,
            Dimension("teeth", "number of teeth", 14, 40, unit="count"),
            Dimension("bore", "bore diameter", 4, 92),
        ),
        _valid(_spur_gear_draw, _spur_gear_check),
        _spur_gear_text,
        _spur_gear_program,
        _spur_gear_calls,
        _recount("teeth", -1),
        (resize("face_width", 1, 4), resize("bore", 2, 4)),
        check=_spur_gear_check,
        words=WORDS,
    ),
    Family(
        "gear_hubbed",
        "an involute spur gear with a hub and a bore with a DIN 6885 keyway",
        ("teeth", "polygon", "hub", "hole", "keyway"),
        (
            *_GEAR_DIMENSIONS,
            Dimension("teeth", "number of teeth", 18, 60, unit="count"),
            Dimension("bore", "bore diameter", 10, 50),
            Dimension("hub", "hub diameter", 18, 120),
            Dimension("hub_height", "hub height", 5, 25),
            Dimension("keyway", "keyway", unit="choice", choices=("DIN 6885", "none")),
        ),
        _valid(_hubbed_draw, _hubbed_check),
        _hubbed_text,
        _hubbed_program,
        _hubbed_calls,
        lambda p: {**p, "hub_height": num(p["hub_height"]) + 3},
        (
            resize("face_width", 1, 4),
            resize("hub_height", 2, 5),
            Edit("add or remove the keyway", apply=_hubbed_toggle_keyway),
        ),
        check=_hubbed_check,
        words=WORDS,
    ),
    Family(
        "sprocket",
        "a plate sprocket for ISO 606 06B/08B/10B chain with a bore and a bolt circle",
        ("teeth", "polygon", "hole", "bolt_circle", "pattern"),
        (
            Dimension("chain", "chain size", unit="choice", choices=tuple(CHAINS)),
            Dimension("teeth", "number of teeth", 15, 36, unit="count"),
            Dimension("bore", "bore diameter", 8, 80),
            Dimension("holes", "number of bolt holes", 3, 6, unit="count"),
            Dimension("hole", "bolt hole diameter", 4.5, 6.6),
            Dimension("bolt_circle", "bolt circle diameter", 16, 180),
        ),
        _valid(_sprocket_draw, _sprocket_check),
        _sprocket_text,
        _sprocket_program,
        _sprocket_calls,
        _recount("holes", -1),
        (
            resize("bore", 2, 4),
            resize("bolt_circle", 2, 6),
            Edit("re-count the bolt holes", apply=_sprocket_recount),
        ),
        check=_sprocket_check,
        words=WORDS,
    ),
    Family(
        "timing_pulley",
        "a T5/T10 timing pulley with trapezoidal grooves, two side flanges and a bore",
        ("teeth", "polygon", "hole"),
        (
            Dimension("profile", "belt profile", unit="choice", choices=tuple(PROFILES)),
            Dimension("teeth", "number of teeth", 15, 48, unit="count"),
            Dimension("face_width", "toothed width", 8, 40),
            Dimension("flange_diameter", "flange diameter", 20, 130),
            Dimension("flange_thickness", "flange thickness", 1.5, 3),
            Dimension("bore", "bore diameter", 4, 70),
        ),
        _valid(_timing_draw, _timing_check),
        _timing_text,
        _timing_program,
        _timing_calls,
        _recount("teeth", -1),
        (resize("face_width", 1, 4), resize("flange_diameter", 2, 5), resize("bore", 2, 4)),
        check=_timing_check,
        words=WORDS,
    ),
    Family(
        "flat_pulley",
        "a flat or crowned belt pulley: rim, web with lightening holes, hub and bore",
        ("revolve", "hub", "hole", "pattern"),
        (
            Dimension("diameter", "pulley diameter", 50, 200),
            Dimension("width", "face width", 20, 60),
            Dimension("crown", "face", unit="choice", choices=("flat", "crowned")),
            Dimension("rim", "rim thickness", 3, 6),
            Dimension("web", "web thickness", 5, 30),
            Dimension("hub", "hub diameter", 18, 64),
            Dimension("hub_length", "hub length", 11, 70),
            Dimension("bore", "bore diameter", 8, 40),
            Dimension("holes", "number of lightening holes", 2, 10, unit="count"),
            Dimension("hole", "lightening hole diameter", 5, 30),
            Dimension("hole_circle", "lightening hole circle diameter", 28, 190),
        ),
        _valid(_pulley_draw, _pulley_check),
        _pulley_text,
        _pulley_program,
        _pulley_calls,
        _recount("holes", -1),
        (
            resize("width", 2, 6),
            resize("hub_length", 2, 6),
            Edit("re-count the lightening holes", apply=_pulley_recount),
            Edit("crown or flatten the face", apply=_pulley_toggle_crown),
        ),
        check=_pulley_check,
        words=WORDS,
    ),
    Family(
        "handwheel",
        "a web handwheel with lightening holes or spoke-forming slots, hub, bore and an M6-M10 "
        "tapped handle hole (thread cosmetic: the tap-drill hole)",
        ("revolve", "hub", "hole", "pattern", "chamfer", "thread"),
        (
            Dimension("diameter", "wheel diameter", 125, 250),
            Dimension("rim_width", "rim width", 12, 24),
            Dimension("rim_height", "rim height", 14, 24),
            Dimension("chamfer", "rim chamfer", 1.5, 3),
            Dimension("web", "web thickness", 5, 10),
            Dimension("hub", "hub diameter", 24, 60),
            Dimension("hub_height", "hub height", 18, 44),
            Dimension("bore", "bore diameter", 10, 31.5),
            Dimension("thread", "handle thread", unit="choice", choices=tuple(TAP_DRILLS)),
            Dimension("style", "openings", unit="choice", choices=("holes", "slots")),
            Dimension("openings", "number of openings", 2, 9, unit="count"),
            Dimension("opening", "opening width", 8, 40),
            Dimension("slot_length", "slot length", 16, 90),
            Dimension("opening_circle", "opening circle diameter", 40, 220),
        ),
        _valid(_handwheel_draw, _handwheel_check),
        _handwheel_text,
        _handwheel_program,
        _handwheel_calls,
        _recount("openings", -1),
        (
            resize("hub_height", 2, 6),
            resize("rim_height", 2, 4),
            Edit("re-count the openings", apply=_handwheel_recount),
        ),
        check=_handwheel_check,
        words=WORDS,
    ),
    Family(
        "rack",
        "a straight gear rack (20° pressure angle) on a rectangular bar",
        ("teeth", "polygon"),
        (
            Dimension("module", "module", 1, 4),
            Dimension("teeth", "number of teeth", 6, 30, unit="count"),
            Dimension("face_width", "face width", 8, 40),
            Dimension("height", "height to the pitch line", 10, 30),
        ),
        _valid(_rack_draw, _rack_check),
        _rack_text,
        _rack_program,
        _rack_calls,
        _recount("teeth", -1),
        (
            resize("face_width", 1, 4),
            resize("height", 2, 5),
            Edit("add or remove a tooth", apply=_rack_add_tooth),
        ),
        check=_rack_check,
        words=WORDS,
    ),
    Family(
        "ratchet_wheel",
        "a ratchet wheel with saw teeth and a bore",
        ("teeth", "polygon", "hole"),
        (
            Dimension("teeth", "number of teeth", 12, 36, unit="count"),
            Dimension("diameter", "tip diameter", 30, 150),
            Dimension("depth", "tooth depth", 2, 24),
            Dimension("face_width", "thickness", 5, 25),
            Dimension("bore", "bore diameter", 6, 90),
        ),
        _valid(_ratchet_draw, _ratchet_check),
        _ratchet_text,
        _ratchet_program,
        _ratchet_calls,
        _recount("teeth", -1),
        (resize("face_width", 1, 4), resize("bore", 2, 4), resize("diameter", 3, 8)),
        check=_ratchet_check,
        words=WORDS,
    ),
)
