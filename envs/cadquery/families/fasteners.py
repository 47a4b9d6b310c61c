"""Fasteners and pipe fittings: an ISO 4032 hex nut, an ISO 7089/7090 plain washer, an ISO 4017
hex bolt, an ISO 4762 socket head cap screw, an equal pipe tee, a concentric pipe reducer, a
flanged 90° pipe elbow and a socket-weld pipe cap.

Every length is in mm, every angle in degrees; Z is up and every part is centred on the Z axis.
Standards fix the sizes: ISO 4032 nuts (across flats s, height m, bearing diameter dw), ISO 7089
washers (and their ISO 7090 chamfered form), ISO 4017 bolt heads and preferred lengths, ISO 4762
cap screw heads and hexagon sockets, ISO 261 coarse pitches and ISO 2306 tap drills, EN 10220
pipe outside diameters, EN 10253-2 tee centre-to-end lengths and 3D elbow bend radii, and
EN 1092-1 PN16 plate flanges (diameter, bolt circle, hole count and size, thickness).

Documented approximations: threads are cosmetic (an M10 bolt's thread is modelled as a plain
10 mm cylinder, a nut's as a plain bore of the tap-drill diameter, as the prompts say); the
hex corners are chamfered by a 30° cone meeting the face on the bearing diameter dw; a socket's
bottom is flat (no drill point); bolt and screw heads have no under-head fillet or washer face;
the fittings' centre-to-end lengths, walls and socket depths are drawn around the standards'
values (fabricated fittings), and a fastener's turn about its axis and a nut's or washer's
height are drawn so that parts of one standard size differ.
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
    round4,
)
from toolgym.envs.cadquery.families.phrases import Phrases

Point = tuple[float, float]
TAN30 = math.tan(math.radians(30))

# -- standards -----------------------------------------------------------------------------------

#: ISO 261 coarse pitch and ISO 2306 tap drill of each thread.
PITCH = {
    "M4": 0.7,
    "M5": 0.8,
    "M6": 1.0,
    "M8": 1.25,
    "M10": 1.5,
    "M12": 1.75,
    "M16": 2.0,
    "M20": 2.5,
    "M24": 3.0,
}
TAP_DRILL = {"M6": 5.0, "M8": 6.8, "M10": 8.5, "M12": 10.2, "M16": 14.0, "M20": 17.5, "M24": 21.0}
#: ISO 4032 hex nuts: across flats s, height m, bearing face diameter dw (min).
NUTS = {
    "M6": (10.0, 5.2, 8.9),
    "M8": (13.0, 6.8, 11.6),
    "M10": (16.0, 8.4, 14.6),
    "M12": (18.0, 10.8, 16.6),
    "M16": (24.0, 14.8, 22.5),
    "M20": (30.0, 18.0, 27.7),
    "M24": (36.0, 21.5, 33.3),
}
#: ISO 7089 plain washers: inside d1, outside d2, thickness h.
WASHERS = {
    "M6": (6.4, 12.0, 1.6),
    "M8": (8.4, 16.0, 1.6),
    "M10": (10.5, 20.0, 2.0),
    "M12": (13.0, 24.0, 2.5),
    "M14": (15.0, 28.0, 2.5),
    "M16": (17.0, 30.0, 3.0),
    "M20": (21.0, 37.0, 3.0),
    "M24": (25.0, 44.0, 4.0),
    "M30": (31.0, 56.0, 4.0),
    "M36": (37.0, 66.0, 5.0),
}
#: ISO 4017 hex bolts: across flats s, head height k, bearing diameter dw (min), lengths l.
BOLTS = {
    "M6": (10.0, 4.0, 8.9, (12, 60)),
    "M8": (13.0, 5.3, 11.6, (16, 80)),
    "M10": (16.0, 6.4, 14.6, (20, 100)),
    "M12": (18.0, 7.5, 16.6, (25, 120)),
    "M16": (24.0, 10.0, 22.5, (30, 150)),
    "M20": (30.0, 12.5, 28.2, (40, 160)),
    "M24": (36.0, 15.0, 33.6, (50, 200)),
}
#: ISO 4762 socket head cap screws: head diameter dk, head height k, socket s, socket depth t,
#: lengths l.
CAP_SCREWS = {
    "M4": (7.0, 4.0, 3.0, 2.0, (10, 40)),
    "M5": (8.5, 5.0, 4.0, 2.5, (10, 50)),
    "M6": (10.0, 6.0, 5.0, 3.0, (10, 60)),
    "M8": (13.0, 8.0, 6.0, 4.0, (12, 80)),
    "M10": (16.0, 10.0, 8.0, 5.0, (16, 100)),
    "M12": (18.0, 12.0, 10.0, 6.0, (20, 120)),
    "M16": (24.0, 16.0, 14.0, 8.0, (25, 160)),
    "M20": (30.0, 20.0, 17.0, 10.0, (30, 200)),
}
#: ISO 4017 / ISO 4762 preferred nominal lengths.
LENGTHS = (10, 12, 16, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 80, 90, 100, 110, 120, 130,
           140, 150, 160, 180, 200)  # fmt: skip
#: EN 10220 pipe outside diameters.
PIPES = {
    "DN15": 21.3,
    "DN20": 26.9,
    "DN25": 33.7,
    "DN32": 42.4,
    "DN40": 48.3,
    "DN50": 60.3,
    "DN65": 76.1,
    "DN80": 88.9,
    "DN100": 114.3,
}
#: EN 10253-2 equal tees: centre-to-end length C.
TEE_CENTRE = {
    "DN25": 38.0,
    "DN32": 48.0,
    "DN40": 57.0,
    "DN50": 64.0,
    "DN65": 76.0,
    "DN80": 86.0,
    "DN100": 105.0,
}
#: EN 10253-2 3D elbows: bend radius; EN 1092-1 PN16 plate flanges: diameter D, bolt circle K,
#: hole diameter, thickness (four holes each).
ELBOW_RADIUS = {"DN15": 28.0, "DN20": 29.0, "DN25": 38.0, "DN32": 48.0, "DN40": 57.0, "DN50": 76.0}
FLANGES = {
    "DN15": (95.0, 65.0, 14.0, 14.0),
    "DN20": (105.0, 75.0, 14.0, 16.0),
    "DN25": (115.0, 85.0, 14.0, 16.0),
    "DN32": (140.0, 100.0, 18.0, 18.0),
    "DN40": (150.0, 110.0, 18.0, 18.0),
    "DN50": (165.0, 125.0, 18.0, 20.0),
}
CAP_SIZES = ("DN15", "DN20", "DN25", "DN32", "DN40", "DN50")
SOCKET_CLEARANCE = 1.0  # a socket-weld cap's bore over the pipe's outside diameter

WORDS = {
    "hex prism": ("hexagonal prism", "hex prism", "six-sided prism"),
    "across flats": ("across flats", "across the flats", "flat to flat"),
    "head": ("head", "screw head", "driving head"),
    "shank": ("shank", "bolt shank", "stem"),
    "thread": ("thread", "screw thread", "helical thread"),
    "cosmetic": ("cosmetic", "drawn-only", "symbolic"),
    "socket": ("hex socket", "hexagon socket", "key recess"),
    "cap screw": ("socket head cap screw", "cap screw", "Allen screw"),
    "tee": ("equal tee", "tee fitting", "T-piece"),
    "run": ("run", "main run", "through-line"),
    "branch": ("branch", "branch outlet", "side outlet"),
    "reducer": ("concentric reducer", "reducing fitting", "taper coupling"),
    "cone": ("cone", "conical section", "taper"),
    "elbow": ("pipe elbow", "elbow fitting", "long-radius ell"),
    "centreline": ("centreline", "center line", "pipe axis"),
    "pipe cap": ("pipe cap", "end cap", "blanking cap"),
    "closed end": ("closed end", "end wall", "blind end"),
}

# -- helpers -------------------------------------------------------------------------------------


def _up(value: float) -> float:
    return math.ceil(value * 2 - 1e-9) / 2


def _down(value: float) -> float:
    return math.floor(value * 2 + 1e-9) / 2


def _draw(rng: np.random.Generator, low: float, high: float) -> float:
    """A length on the 0.5 mm grid inside [low, high] (bounds off the grid stay respected)."""
    low, high = _up(low), _down(high)
    return low if high <= low else mm(rng, low, high)


def _pick(rng: np.random.Generator, options: tuple | list) -> str:  # type: ignore[type-arg]
    return str(options[int(rng.integers(len(options)))])


def _turn(rng: np.random.Generator) -> float:
    """A hexagon's turn about its axis: 0..55° in 5° steps (it repeats every 60°)."""
    return float(5 * int(rng.integers(12)))


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    """A near miss: one dimension off by ``by`` (a feature moved or resized)."""
    return lambda p: {**p, name: num(p[name]) + by}


def _hexagon(across: float, angle: float) -> list[Point]:
    """A regular hexagon ``across`` flats, centred on the origin, one corner at ``angle``."""
    radius = across / math.sqrt(3)
    return [
        (
            round4(radius * math.cos(math.radians(angle + 60 * k))),
            round4(radius * math.sin(math.radians(angle + 60 * k))),
        )
        for k in range(6)
    ]


def _corner_chamfer(across: float, dw: float, face: float, up: bool) -> list[Point]:
    """The [radius, z] triangle that, revolved and cut, chamfers a hexagon's corners at 30° to a
    face at ``face``: a cone meeting the face on the circle of diameter ``dw``. The triangle
    reaches 1 mm past the face and past the corners (no coplanar cut)."""
    side = 1 if up else -1
    outer = across / math.sqrt(3) + 1
    return [
        (round4(dw / 2 - 1 / TAN30), round4(face + side)),
        (round4(outer), round4(face - side * (outer - dw / 2) * TAN30)),
        (round4(outer), round4(face + side)),
    ]


def _revolved(profile: list[Point]) -> str:
    """A closed [radius, z] profile revolved about the Z axis, as a program writes it."""
    return f"cq.Workplane('XZ').polyline({pts(profile)}).close().revolve(360, (0, 0, 0), (0, 1, 0))"


def _profile(profile: list[Point]) -> list[list[float]]:
    return [[round4(a), round4(b)] for a, b in profile]


def _next(options: list[str], current: str, rng: np.random.Generator) -> str:
    """The option one step up or down from ``current`` (up or down by chance where both exist)."""
    at = options.index(current)
    step = 1 if at == 0 or (at < len(options) - 1 and rng.random() < 0.5) else -1
    return options[at + step]


def _lengths(size_range: tuple[int, int]) -> list[float]:
    low, high = size_range
    return [float(n) for n in LENGTHS if low <= n <= high]


# -- hex nut -------------------------------------------------------------------------------------


def _hex_nut(rng: np.random.Generator) -> Params:
    return {
        "size": _pick(rng, tuple(NUTS)),
        "chamfers": "both" if rng.random() < 0.7 else "top",
        "angle": _turn(rng),
        "z": mm(rng, 0, 30),
    }


def _nut_chamfer_sentence(p: Params, q: Phrases) -> str:
    dw = NUTS[str(p["size"])][2]
    cone = (
        f"by a cone at {q.deg(30)} to the face that meets it on a circle of {q.len(dw)} "
        f"{q.w('diameter')}"
    )
    if p["chamfers"] == "both":
        return f"the {q.w('corners')} of both faces are {q.w('chamfered')} {cone}"
    return (
        f"only the top face's {q.w('corners')} are {q.w('chamfered')}, {cone}; the bearing "
        f"face's {q.w('corners')} are left sharp"
    )


def _hex_nut_text(p: Params, q: Phrases) -> list[str]:
    size = str(p["size"])
    s, m, _ = NUTS[size]
    return [
        f"an ISO 4032 {size} {q.w('nut')} {q.w('centred')} on the Z {q.w('axis')}, its "
        f"bearing face {q.w('lying')} parallel to {q.w('the XY plane')} at "
        f"z = {q.len(num(p['z']))}, its top face above it",
        f"its body is a {q.w('hex prism')} {q.len(s)} {q.w('across flats')} and {q.len(m)} "
        f"{q.w('thick')}, one {q.w('corner')} at {q.deg(num(p['angle']))} from the +X "
        f"{q.w('axis')}",
        _nut_chamfer_sentence(p, q),
        f"its {size} {q.w('thread')} runs {q.w('through')} it on the Z {q.w('axis')}, a "
        f"{q.w('cosmetic')} {q.w('thread')} modelled as a plain {q.dia(TAP_DRILL[size], 'bore')} "
        f"(the tap-drill size)",
    ]


def _nut_chamfers(p: Params) -> list[list[Point]]:
    s, m, dw = NUTS[str(p["size"])]
    z = num(p["z"])
    cuts = [_corner_chamfer(s, dw, z + m, up=True)]
    if p["chamfers"] == "both":
        cuts.append(_corner_chamfer(s, dw, z, up=False))
    return cuts


def _hex_nut_program(p: Params) -> str:
    size = str(p["size"])
    s, m, _ = NUTS[size]
    z = num(p["z"])
    lines = [
        f"body = cq.Workplane('XY', origin=(0, 0, {z})).polyline("
        f"{pts(_hexagon(s, num(p['angle'])))}).close().extrude({m})",
        "result = body",
    ]
    for cut in _nut_chamfers(p):
        lines.append(f"result = result.cut({_revolved(cut)})")
    lines.append(
        f"result = result.cut(cq.Workplane('XY', origin=(0, 0, {round4(z - 1)}))"
        f".circle({round4(TAP_DRILL[size] / 2)}).extrude({round4(m + 2)}))"
    )
    return "\n".join(lines) + "\n"


def _hex_nut_calls(p: Params) -> list[Call]:
    size = str(p["size"])
    s, m, _ = NUTS[size]
    points = [list(c) for c in _hexagon(s, num(p["angle"]))]
    calls = [call("extrude_polygon", points=points, height=m, z=num(p["z"]))]
    calls += [call("cut_revolve", points=_profile(cut)) for cut in _nut_chamfers(p)]
    calls.append(call("cut_hole", diameter=TAP_DRILL[size]))
    return calls


def _nut_size(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    new = _next(list(NUTS), str(p["size"]), rng)
    s, m, dw = NUTS[new]
    return (
        {**p, "size": new},
        lambda q: (
            f"change it to an ISO 4032 {new} {q.w('nut')} in the same place and turn: "
            f"{q.len(s)} {q.w('across flats')}, {q.len(m)} {q.w('thick')}, the chamfer cones "
            f"meeting the faces on {q.len(dw)} {q.w('diameter')} and the {q.w('thread')} "
            f"modelled as a plain {q.dia(TAP_DRILL[new], 'bore')}"
        ),
    )


def _nut_recount_chamfers(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    if p["chamfers"] == "both":
        return (
            {**p, "chamfers": "top"},
            lambda q: (
                f"remove the {q.w('chamfer')} of the bearing face's {q.w('corners')}, leaving "
                f"them sharp (keep the top face's)"
            ),
        )
    return (
        {**p, "chamfers": "both"},
        lambda q: (
            f"{q.w('chamfer')} the bearing face's {q.w('corners')} as the top face's are: a "
            f"cone at {q.deg(30)} to the face meeting it on the same circle"
        ),
    )


# -- washer --------------------------------------------------------------------------------------


def _washer(rng: np.random.Generator) -> Params:
    return {
        "size": _pick(rng, tuple(WASHERS)),
        "form": "chamfered" if rng.random() < 0.4 else "plain",
        "z": mm(rng, 0, 30),
    }


def _washer_profile(p: Params) -> list[Point]:
    d1, d2, h = WASHERS[str(p["size"])]
    z = num(p["z"])
    if p["form"] == "plain":
        return [(d1 / 2, z), (d2 / 2, z), (d2 / 2, z + h), (d1 / 2, z + h)]
    return [
        (d1 / 2, z),
        (d2 / 2, z),
        (d2 / 2, z + h / 2),
        (d2 / 2 - h / 2 / TAN30, z + h),
        (d1 / 2, z + h),
    ]


def _washer_chamfer_sentence(p: Params, q: Phrases) -> str:
    h = WASHERS[str(p["size"])][2]
    if p["form"] == "plain":
        return f"both its outer {q.w('edges')} are left sharp, not {q.w('chamfered')}"
    return (
        f"the outer {q.w('edge')} of its top face is {q.w('chamfered')} at {q.deg(30)} to that "
        f"face, {q.len(h / 2)} {q.w('deep')} down the outside"
    )


def _washer_text(p: Params, q: Phrases) -> list[str]:
    size = str(p["size"])
    d1, d2, h = WASHERS[size]
    standard = "ISO 7090" if p["form"] == "chamfered" else "ISO 7089"
    return [
        f"a {standard} {size} plain {q.w('washer')} {q.w('centred')} on the Z {q.w('axis')}, "
        f"its underside {q.w('lying')} parallel to {q.w('the XY plane')} at "
        f"z = {q.len(num(p['z']))}",
        f"it is {q.len(d2)} outside {q.w('diameter')} and {q.len(h)} {q.w('thick')}",
        f"its {q.dia(d1, 'bore')} runs {q.w('through')} it on the Z {q.w('axis')}",
        _washer_chamfer_sentence(p, q),
    ]


def _washer_program(p: Params) -> str:
    return f"result = {_revolved(_washer_profile(p))}\n"


def _washer_calls(p: Params) -> list[Call]:
    return [call("revolve_profile", points=_profile(_washer_profile(p)))]


def _washer_size(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    new = _next(list(WASHERS), str(p["size"]), rng)
    d1, d2, h = WASHERS[new]
    return (
        {**p, "size": new},
        lambda q: (
            f"change it to the {new} {q.w('washer')} of the same form and place: "
            f"{q.len(d2)} outside {q.w('diameter')}, {q.len(h)} {q.w('thick')}, with a "
            f"{q.dia(d1, 'bore')}"
            + (
                f", its top outer {q.w('chamfer')} {q.len(h / 2)} {q.w('deep')} at {q.deg(30)}"
                if p["form"] == "chamfered"
                else ""
            )
        ),
    )


def _washer_form(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    h = WASHERS[str(p["size"])][2]
    if p["form"] == "chamfered":
        return (
            {**p, "form": "plain"},
            lambda q: (
                f"remove the {q.w('chamfer')} of the top outer {q.w('edge')}, leaving it sharp"
            ),
        )
    return (
        {**p, "form": "chamfered"},
        lambda q: (
            f"{q.w('chamfer')} the outer {q.w('edge')} of the top face at {q.deg(30)} to that "
            f"face, {q.len(h / 2)} {q.w('deep')} down the outside (ISO 7090)"
        ),
    )


# -- hex bolt and socket head cap screw ----------------------------------------------------------


def _hex_bolt(rng: np.random.Generator) -> Params:
    size = _pick(rng, tuple(BOLTS))
    return {
        "size": size,
        "length": float(_pick(rng, _lengths(BOLTS[size][3]))),
        "angle": _turn(rng),
    }


def _shank_sentences(size: str, length: float, q: Phrases) -> list[str]:
    return [
        f"the {q.w('shank')} is an {size} {q.w('thread')} {q.len(length)} {q.w('long')} below the "
        f"{q.w('head')}, a {q.w('cosmetic')} {q.w('thread')} modelled as a plain "
        f"{q.dia(float(size[1:]), 'shank')}",
        f"the {q.w('shank')}'s free end is {q.w('chamfered')} {q.len(PITCH[size])} at "
        f"{q.deg(45)} (one pitch)",
    ]


def _hex_bolt_text(p: Params, q: Phrases) -> list[str]:
    size, length = str(p["size"]), num(p["length"])
    s, k, dw, _ = BOLTS[size]
    return [
        f"an ISO 4017 {size} × {length:g} hex {q.w('bolt')} on the Z {q.w('axis')}: the "
        f"underside of its {q.w('head')} {q.w('lying')} on {q.w('the XY plane')}, the "
        f"{q.w('head')} above it and the {q.w('shank')} running down -Z",
        f"its {q.w('head')} is a {q.w('hex prism')} {q.len(s)} {q.w('across flats')} and "
        f"{q.len(k)} {q.w('tall')}, one {q.w('corner')} at {q.deg(num(p['angle']))} from the +X "
        f"{q.w('axis')}",
        f"the top {q.w('corners')} of the {q.w('head')} are {q.w('chamfered')} by a cone at "
        f"{q.deg(30)} to the top face that meets it on a circle of {q.len(dw)} {q.w('diameter')}",
        *_shank_sentences(size, length, q),
    ]


def _shank_program(size: str, length: float, into: float) -> str:
    """The shank from the free end up ``into`` mm into the head (no coplanar faces)."""
    return (
        f"cq.Workplane('XY', origin=(0, 0, {-length})).circle({round4(float(size[1:]) / 2)})"
        f".extrude({round4(length + into)})"
    )


def _shank_call(size: str, length: float, into: float) -> Call:
    return call(
        "add_cylinder",
        diameter=float(size[1:]),
        height=length + into,
        z=(into - length) / 2,
    )


def _hex_bolt_program(p: Params) -> str:
    size, length = str(p["size"]), num(p["length"])
    s, k, dw, _ = BOLTS[size]
    head = pts(_hexagon(s, num(p["angle"])))
    return (
        f"head = cq.Workplane('XY').polyline({head}).close().extrude({k})\n"
        f"head = head.cut({_revolved(_corner_chamfer(s, dw, k, up=True))})\n"
        f"shank = {_shank_program(size, length, k / 2)}\n"
        f"result = head.union(shank).edges('<Z').chamfer({PITCH[size]})\n"
    )


def _hex_bolt_calls(p: Params) -> list[Call]:
    size, length = str(p["size"]), num(p["length"])
    s, k, dw, _ = BOLTS[size]
    return [
        call("extrude_polygon", points=[list(c) for c in _hexagon(s, num(p["angle"]))], height=k),
        call("cut_revolve", points=_profile(_corner_chamfer(s, dw, k, up=True))),
        _shank_call(size, length, k / 2),
        call("chamfer_edges", length=PITCH[size], edges="<Z"),
    ]


def _length_edit(table: dict, standard: str) -> Callable:  # type: ignore[type-arg]
    """The next preferred length up or down, within the size's range."""

    def apply(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
        size, length = str(p["size"]), num(p["length"])
        options = [str(n) for n in _lengths(table[size][-1])]
        new = float(_next(options, str(length), rng))
        verb = "lengthen" if new > length else "shorten"
        return (
            {**p, "length": new},
            lambda q: (
                f"{verb} it to {standard} {size} × {new:g}: the {q.w('shank')} "
                f"{q.len(new)} {q.w('long')} below the {q.w('head')}, its end "
                f"{q.w('chamfer')} as before"
            ),
        )

    return apply


def _bolt_size(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    new = _next(list(BOLTS), str(p["size"]), rng)
    s, k, dw, span = BOLTS[new]
    length = num(p["length"])
    if not span[0] <= length <= span[1]:
        return p, lambda q: ""  # the length is not made in that size: the edit is drawn again
    return (
        {**p, "size": new},
        lambda q: (
            f"change it to an ISO 4017 {new} × {length:g} {q.w('bolt')}, turned as before: the "
            f"{q.w('head')} {q.len(s)} {q.w('across flats')} and {q.len(k)} {q.w('tall')} with "
            f"its chamfer cone meeting the top on {q.len(dw)} {q.w('diameter')}, the "
            f"{q.w('shank')} a plain {q.dia(float(new[1:]), 'shank')} {q.len(length)} "
            f"{q.w('long')} with its end {q.w('chamfered')} {q.len(PITCH[new])} at {q.deg(45)}"
        ),
    )


def _cap_screw(rng: np.random.Generator) -> Params:
    size = _pick(rng, tuple(CAP_SCREWS))
    return {
        "size": size,
        "length": float(_pick(rng, _lengths(CAP_SCREWS[size][4]))),
        "angle": _turn(rng),
    }


def _cap_screw_text(p: Params, q: Phrases) -> list[str]:
    size, length = str(p["size"]), num(p["length"])
    dk, k, s, t, _ = CAP_SCREWS[size]
    return [
        f"an ISO 4762 {size} × {length:g} {q.w('cap screw')} on the Z {q.w('axis')}: the "
        f"underside of its cylindrical {q.w('head')} {q.w('lying')} on {q.w('the XY plane')}, "
        f"the {q.w('head')} above it and the {q.w('shank')} running down -Z",
        f"its {q.w('head')} is a cylinder of {q.len(dk)} {q.w('diameter')}, {q.len(k)} "
        f"{q.w('tall')}, its {q.w('edges')} left sharp",
        f"a {q.w('socket')} {q.len(s)} {q.w('across flats')} is {q.w('cut')} {q.len(t)} "
        f"{q.w('deep')} into the top of the {q.w('head')}, flat-bottomed, one of its "
        f"{q.w('corners')} at {q.deg(num(p['angle']))} from the +X {q.w('axis')}",
        *_shank_sentences(size, length, q),
    ]


def _cap_screw_program(p: Params) -> str:
    size, length = str(p["size"]), num(p["length"])
    dk, k, s, t, _ = CAP_SCREWS[size]
    socket = pts(_hexagon(s, num(p["angle"])))
    return (
        f"head = cq.Workplane('XY').circle({round4(dk / 2)}).extrude({k})\n"
        f"shank = {_shank_program(size, length, k / 2)}\n"
        f"socket = cq.Workplane('XY', origin=(0, 0, {round4(k - t)})).polyline({socket}).close()"
        f".extrude({round4(t + 1)})\n"
        f"result = head.union(shank).edges('<Z').chamfer({PITCH[size]}).cut(socket)\n"
    )


def _cap_screw_calls(p: Params) -> list[Call]:
    size, length = str(p["size"]), num(p["length"])
    dk, k, s, t, _ = CAP_SCREWS[size]
    return [
        call("add_cylinder", diameter=dk, height=k, z=k / 2),
        _shank_call(size, length, k / 2),
        call("chamfer_edges", length=PITCH[size], edges="<Z"),
        call("cut_polygon", points=[list(c) for c in _hexagon(s, num(p["angle"]))], depth=t),
    ]


def _cap_screw_size(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    new = _next(list(CAP_SCREWS), str(p["size"]), rng)
    dk, k, s, t, span = CAP_SCREWS[new]
    length = num(p["length"])
    if not span[0] <= length <= span[1]:
        return p, lambda q: ""  # the length is not made in that size: the edit is drawn again
    return (
        {**p, "size": new},
        lambda q: (
            f"change it to an ISO 4762 {new} × {length:g} {q.w('cap screw')}: the {q.w('head')} "
            f"{q.len(dk)} in {q.w('diameter')} and {q.len(k)} {q.w('tall')}, the "
            f"{q.w('socket')} {q.len(s)} {q.w('across flats')} and {q.len(t)} {q.w('deep')} "
            f"(turned as before), the {q.w('shank')} a plain {q.dia(float(new[1:]), 'shank')} "
            f"{q.len(length)} {q.w('long')} with its end {q.w('chamfered')} "
            f"{q.len(PITCH[new])} at {q.deg(45)}"
        ),
    )


def _standard_length(table: dict) -> Callable[[Params], str | None]:  # type: ignore[type-arg]
    def check(p: Params) -> str | None:
        if num(p["length"]) not in _lengths(table[str(p["size"])][-1]):
            return "the length must be a preferred length made in that thread size"
        return None

    return check


# -- pipe tee ------------------------------------------------------------------------------------


def _pipe_tee(rng: np.random.Generator) -> Params:
    size = _pick(rng, tuple(TEE_CENTRE))
    od, centre = PIPES[size], TEE_CENTRE[size]
    return {
        "size": size,
        "wall": _draw(rng, 2, min(od / 8, 8)),
        "centre": _draw(rng, centre, min(centre + 40, 120)),
        "branch": _draw(rng, centre, min(centre + 40, 120)),
    }


def _pipe_tee_text(p: Params, q: Phrases) -> list[str]:
    size = str(p["size"])
    od, wall = PIPES[size], num(p["wall"])
    return [
        f"a {size} {q.w('tee')}: its {q.w('run')} lies {q.w('along')} the X {q.w('axis')}, "
        f"{q.w('centred')} {q.w('on the origin')}, and its {q.w('branch')} rises {q.w('along')} "
        f"+Z from the {q.w('run')}'s {q.w('axis')}",
        f"{q.w('run')} and {q.w('branch')} are the same {q.w('tube')}, {q.len(od)} outside "
        f"{q.w('diameter')} with a {q.len(wall)} {q.w('wall')}",
        f"{q.w('each')} end of the {q.w('run')} is {q.len(num(p['centre']))} from the "
        f"{q.w('branch')}'s {q.w('axis')}, square-cut",
        f"the {q.w('branch')}'s square-cut end is {q.len(num(p['branch']))} above the "
        f"{q.w('run')}'s {q.w('axis')}",
        f"the {q.w('branch')}'s {q.w('bore')} opens into the {q.w('run')}'s {q.w('bore')}, "
        f"{q.w('cut')} {q.w('through')} the {q.w('run')}'s {q.w('wall')}",
    ]


def _pipe_tee_program(p: Params) -> str:
    od, wall = PIPES[str(p["size"])], num(p["wall"])
    centre, branch, bore = (
        num(p["centre"]),
        num(p["branch"]),
        round4(PIPES[str(p["size"])] - 2 * wall),
    )
    # The run's sketch plane faces +X with its seam underneath, as the tools' cylinder has it.
    return (
        f"run = cq.Workplane(cq.Plane(({-centre}, 0, 0), (0, 0, -1), (1, 0, 0)))"
        f".circle({round4(od / 2)}).extrude({2 * centre})\n"
        f"branch = cq.Workplane('XY').circle({round4(od / 2)}).extrude({branch})\n"
        f"run_bore = cq.Workplane(cq.Plane(({-centre - 1}, 0, 0), (0, 0, -1), (1, 0, 0)))"
        f".circle({round4(bore / 2)}).extrude({2 * centre + 2})\n"
        f"branch_bore = cq.Workplane('XY').circle({round4(bore / 2)}).extrude({branch + 1})\n"
        f"result = run.union(branch).cut(run_bore).cut(branch_bore)\n"
    )


def _pipe_tee_calls(p: Params) -> list[Call]:
    od, wall = PIPES[str(p["size"])], num(p["wall"])
    centre, branch, bore = num(p["centre"]), num(p["branch"]), od - 2 * wall
    return [
        call("add_cylinder", diameter=od, height=2 * centre, axis="X"),
        call("add_cylinder", diameter=od, height=branch, z=branch / 2),
        call("cut_cylinder", diameter=bore, height=2 * centre + 2, axis="X"),
        call("cut_cylinder", diameter=bore, height=branch + 1, z=(branch + 1) / 2),
    ]


def _pipe_tee_check(p: Params) -> str | None:
    od, f = PIPES[str(p["size"])], {k: num(p[k]) for k in ("wall", "centre", "branch")}
    if not 2 <= f["wall"] <= od / 8 + 0.25:
        return "the wall must be 2 mm to an eighth of the outside diameter"
    if min(f["centre"], f["branch"]) < od / 2 + 5:
        return "every end must stand at least 5 mm clear of the other pipe's outside"
    if max(f["centre"], f["branch"]) > 120:
        return "the tee's ends may stand at most 120 mm from its centre"
    return None


# -- pipe reducer --------------------------------------------------------------------------------

REDUCER_LARGE = ("DN25", "DN32", "DN40", "DN50", "DN65", "DN80", "DN100")
REDUCER_SMALL = ("DN15", "DN20", "DN25", "DN32", "DN40", "DN50", "DN65", "DN80")


def _shortest_cone(large: float, small: float) -> float:
    """The cone length at a 30° half-angle, the steepest a concentric reducer is made."""
    return (large - small) / 2 / TAN30


def _pipe_reducer(rng: np.random.Generator) -> Params:
    names = list(PIPES)
    large = _pick(rng, REDUCER_LARGE)
    at = names.index(large)
    small = _pick(rng, names[max(0, at - 3) : at])
    d1, d2 = PIPES[large], PIPES[small]
    shortest = _up(_shortest_cone(d1, d2))
    return {
        "large": large,
        "small": small,
        "wall": _draw(rng, 2, min(d2 / 8, 6)),
        "large_length": mm(rng, 5, 30),
        "cone": _draw(rng, shortest, shortest + 30),
        "small_length": mm(rng, 5, 30),
    }


def _reducer_profile(p: Params) -> list[Point]:
    r1, r2, t = PIPES[str(p["large"])] / 2, PIPES[str(p["small"])] / 2, num(p["wall"])
    z1 = num(p["large_length"])
    z2 = z1 + num(p["cone"])
    z3 = z2 + num(p["small_length"])
    return [
        (r1 - t, 0),
        (r1, 0),
        (r1, z1),
        (r2, z2),
        (r2, z3),
        (r2 - t, z3),
        (r2 - t, z2),
        (r1 - t, z1),
    ]


def _pipe_reducer_text(p: Params, q: Phrases) -> list[str]:
    large, small = str(p["large"]), str(p["small"])
    d1, d2 = PIPES[large], PIPES[small]
    total = num(p["large_length"]) + num(p["cone"]) + num(p["small_length"])
    return [
        f"a {large} × {small} {q.w('reducer')} revolved {q.w('about')} the Z {q.w('axis')}, "
        f"its large end face {q.w('lying')} on {q.w('the XY plane')} and its small end face "
        f"{q.len(total)} above it",
        f"the large end is a straight {q.w('tube')} {q.len(d1)} outside {q.w('diameter')} and "
        f"{q.len(num(p['large_length']))} {q.w('long')}, rising from {q.w('the XY plane')}",
        f"the small end is a straight {q.w('tube')} {q.len(d2)} outside {q.w('diameter')} and "
        f"{q.len(num(p['small_length']))} {q.w('long')}, up to the top",
        f"between the two straight ends the outside narrows as a {q.w('cone')} "
        f"{q.len(num(p['cone']))} {q.w('long')}",
        f"the {q.w('wall')} is {q.len(num(p['wall']))} {q.w('thick')} measured radially at "
        f"every height: the inside follows the outside, straights and {q.w('cone')} starting "
        f"and ending at the same heights",
    ]


def _pipe_reducer_program(p: Params) -> str:
    return f"result = {_revolved(_reducer_profile(p))}\n"


def _pipe_reducer_calls(p: Params) -> list[Call]:
    return [call("revolve_profile", points=_profile(_reducer_profile(p)))]


def _pipe_reducer_check(p: Params) -> str | None:
    d1, d2 = PIPES[str(p["large"])], PIPES[str(p["small"])]
    if d2 >= d1:
        return "the small end must be smaller than the large end"
    if num(p["cone"]) < _shortest_cone(d1, d2) - 0.01:
        return "the cone may be at most 30° to the axis"
    if not 2 <= num(p["wall"]) <= d2 / 8 + 0.25:
        return "the wall must be 2 mm to an eighth of the small end's diameter"
    return None


# -- flanged elbow -------------------------------------------------------------------------------


def _elbow_shortest(size: str) -> float:
    """The centre-to-face length at which the flanges clear each other by 2 mm and a 5 mm
    straight stands between the bend and each flange."""
    diameter, _, _, thickness = FLANGES[size]
    return max(ELBOW_RADIUS[size] + thickness + 5, diameter / 2 + thickness + 2)


def _pipe_elbow(rng: np.random.Generator) -> Params:
    size = _pick(rng, tuple(FLANGES))
    shortest = _up(_elbow_shortest(size))
    return {
        "size": size,
        "wall": _draw(rng, 2, PIPES[size] / 8),
        "face": _draw(rng, shortest, min(shortest + 30, 135)),
    }


def _elbow_holes(p: Params) -> list[Point]:
    """The bolt holes' centres in a flange's own plane, 45° either side of the bend's plane."""
    pitch = FLANGES[str(p["size"])][1] / 2
    return [
        (
            round4(pitch * math.cos(math.radians(45 + 90 * k))),
            round4(pitch * math.sin(math.radians(45 + 90 * k))),
        )
        for k in range(4)
    ]


def _pipe_elbow_text(p: Params, q: Phrases) -> list[str]:
    size = str(p["size"])
    od, radius = PIPES[size], ELBOW_RADIUS[size]
    diameter, pitch, hole, thickness = FLANGES[size]
    face = num(p["face"])
    return [
        f"a flanged {q.deg(90)} {size} {q.w('elbow')}: its {q.w('centreline')} rises from the "
        f"origin up the Z {q.w('axis')}, turns towards +X in the XZ plane and runs "
        f"{q.w('along')} +X at z = {q.len(face)}",
        f"the {q.w('tube')} is {q.len(od)} outside {q.w('diameter')} with a "
        f"{q.len(num(p['wall']))} {q.w('wall')}, bent on a {q.radius(radius)} at the "
        f"{q.w('centreline')}, straight either side of the {q.w('bend')}",
        f"the lower {q.w('flange')}'s face lies on {q.w('the XY plane')} and the other "
        f"{q.w('flange')}'s face on the plane x = {q.len(face)}",
        f"{q.w('each')} {q.w('flange')} is an EN 1092-1 PN16 disc of {q.len(diameter)} "
        f"{q.w('diameter')} and {q.len(thickness)} {q.w('thick')}, {q.w('centred')} on the "
        f"{q.w('centreline')}, the {q.w('tube')}'s {q.w('bore')} continuing {q.w('through')} it",
        f"{q.w('each')} {q.w('flange')} has a ring of {q.count(4)} bolt {q.w('holes')}, "
        f"{q.dia(hole, 'through-holes')} {q.w('equally')} {q.w('spaced')} on a {q.len(pitch)} "
        f"bolt circle, {q.w('each')} {q.deg(45)} off the XZ plane",
    ]


def _pipe_elbow_program(p: Params) -> str:
    size = str(p["size"])
    od, radius = PIPES[size], ELBOW_RADIUS[size]
    diameter, _, hole, t = FLANGES[size]
    face, inside = num(p["face"]), round4(od / 2 - num(p["wall"]))
    # The arc's middle point at full precision: its ends stay tangent to the straight legs.
    mid = (radius * (1 - math.cos(math.pi / 4)), face - radius + radius * math.sin(math.pi / 4))
    holes = _elbow_holes(p)
    side_holes = [(y, round4(face + z)) for y, z in holes]
    return (
        f"path = (\n"
        f"    cq.Workplane('XZ').moveTo(0, {t / 2}).lineTo(0, {round4(face - radius)})\n"
        f"    .threePointArc(({mid[0]!r}, {mid[1]!r}), ({radius}, {face}))\n"
        f"    .lineTo({round4(face - t / 2)}, {face})\n"
        f")\n"
        f"pipe = cq.Workplane('XY', origin=(0, 0, {t / 2})).circle({round4(od / 2)})"
        f".circle({inside}).sweep(path)\n"
        f"lower = cq.Workplane('XY').circle({diameter / 2}).extrude({t})\n"
        f"upper = cq.Workplane('YZ', origin=({round4(face - t)}, 0, 0)).center(0, {face})"
        f".circle({diameter / 2}).extrude({t})\n"
        f"bores = cq.Workplane('XY', origin=(0, 0, -1)).circle({inside}).extrude({t + 2}).union(\n"
        f"    cq.Workplane('YZ', origin=({round4(face - t - 1)}, 0, 0)).center(0, {face})"
        f".circle({inside}).extrude({t + 2})\n"
        f")\n"
        f"holes = cq.Workplane('XY', origin=(0, 0, -1)).pushPoints({pts(holes)})"
        f".circle({hole / 2}).extrude({t + 2}).union(\n"
        f"    cq.Workplane('YZ', origin=({round4(face - t - 1)}, 0, 0))"
        f".pushPoints({pts(side_holes)})"
        f".circle({hole / 2}).extrude({t + 2})\n"
        f")\n"
        f"result = pipe.union(lower).union(upper).cut(bores).cut(holes)\n"
    )


def _pipe_elbow_calls(p: Params) -> list[Call]:
    size = str(p["size"])
    od, radius = PIPES[size], ELBOW_RADIUS[size]
    diameter, _, hole, t = FLANGES[size]
    face, inside = num(p["face"]), od - 2 * num(p["wall"])
    path = [[0.0, t / 2], [0.0, face], [face - t / 2, face]]
    across = face - t / 2
    calls = [
        call(
            "sweep",
            profile="tube",
            size=od,
            size2=inside,
            path=path,
            plane="XZ",
            bend_radius=radius,
        ),
        call("add_cylinder", diameter=diameter, height=t, z=t / 2),
        call("add_cylinder", diameter=diameter, height=t, x=across, z=face, axis="X"),
        call("cut_cylinder", diameter=inside, height=t + 2, z=t / 2),
        call("cut_cylinder", diameter=inside, height=t + 2, x=across, z=face, axis="X"),
    ]
    for x, y in _elbow_holes(p):
        calls.append(call("cut_cylinder", diameter=hole, height=t + 2, x=x, y=y, z=t / 2))
    for y, z in _elbow_holes(p):
        calls.append(
            call("cut_cylinder", diameter=hole, height=t + 2, x=across, y=y, z=face + z, axis="X")
        )
    return calls


def _pipe_elbow_check(p: Params) -> str | None:
    size = str(p["size"])
    if num(p["face"]) < _elbow_shortest(size) - 0.01:
        return "the flanges must clear each other and the bend"
    if num(p["face"]) > 135:
        return "the centre-to-face length may be at most 135 mm"
    if not 2 <= num(p["wall"]) <= PIPES[size] / 8 + 0.25:
        return "the wall must be 2 mm to an eighth of the outside diameter"
    return None


# -- pipe cap ------------------------------------------------------------------------------------


def _pipe_cap(rng: np.random.Generator) -> Params:
    size = _pick(rng, CAP_SIZES)
    wall, end = mm(rng, 3, 6), mm(rng, 3, 10)
    return {
        "size": size,
        "wall": wall,
        "end": end,
        "height": _draw(rng, end + 10, end + 25),
        "radius": _draw(rng, 1.5, min(wall, end) - 0.5),
    }


def _cap_bore(p: Params) -> float:
    return PIPES[str(p["size"])] + SOCKET_CLEARANCE


def _cap_profile(p: Params) -> list[Point]:
    bore = _cap_bore(p) / 2
    outside, height, end = bore + num(p["wall"]), num(p["height"]), num(p["end"])
    return [(0, 0), (outside, 0), (outside, height), (bore, height), (bore, end), (0, end)]


def _cap_fillet_sentence(p: Params, q: Phrases) -> str:
    if num(p["radius"]) <= 0:
        return (
            f"the outer {q.w('edge')} of the {q.w('closed end')} is left sharp, not "
            f"{q.w('rounded')}"
        )
    return (
        f"the outer {q.w('edge')} of the {q.w('closed end')} is {q.w('rounded')} to a "
        f"{q.radius(num(p['radius']))}"
    )


def _pipe_cap_text(p: Params, q: Phrases) -> list[str]:
    size = str(p["size"])
    outside = _cap_bore(p) + 2 * num(p["wall"])
    return [
        f"a socket-weld {q.w('pipe cap')} for {size} {q.w('tube')}, revolved {q.w('about')} "
        f"the Z {q.w('axis')}, its {q.w('closed end')} {q.w('lying')} on {q.w('the XY plane')} "
        f"and its socket opening upwards",
        f"it is {q.len(outside)} outside {q.w('diameter')} and {q.len(num(p['height']))} "
        f"{q.w('tall')}",
        f"its socket is a {q.dia(_cap_bore(p), 'bore')} down from the open top to the "
        f"{q.w('closed end')}, flat-bottomed, a slip fit over the {q.len(PIPES[size])} "
        f"{q.w('tube')}",
        f"the {q.w('closed end')} is {q.len(num(p['end']))} {q.w('thick')}",
        _cap_fillet_sentence(p, q),
    ]


def _pipe_cap_program(p: Params) -> str:
    fillet = f".edges('<Z').fillet({num(p['radius'])})" if num(p["radius"]) > 0 else ""
    return f"result = {_revolved(_cap_profile(p))}{fillet}\n"


def _pipe_cap_calls(p: Params) -> list[Call]:
    calls = [call("revolve_profile", points=_profile(_cap_profile(p)))]
    if num(p["radius"]) > 0:
        calls.append(call("fillet_edges", radius=num(p["radius"]), edges="<Z"))
    return calls


def _pipe_cap_check(p: Params) -> str | None:
    wall, end, radius = num(p["wall"]), num(p["end"]), num(p["radius"])
    if num(p["height"]) - end < 10:
        return "the socket must be at least 10 mm deep"
    if radius and not 1.5 <= radius <= min(wall, end) - 0.5:
        return "the fillet must be 1.5 mm or more and stay 0.5 mm inside the wall and the end"
    return None


def _cap_fillet(p: Params, rng: np.random.Generator) -> tuple[Params, Instruction]:
    if num(p["radius"]) > 0:
        return (
            {**p, "radius": 0.0},
            lambda q: (
                f"remove the {q.w('fillet')} of the {q.w('closed end')}'s outer {q.w('edge')}, "
                f"leaving a sharp {q.w('edge')}"
            ),
        )
    radius = _draw(rng, 1.5, min(num(p["wall"]), num(p["end"])) - 0.5)
    return (
        {**p, "radius": radius},
        lambda q: (
            f"round the outer {q.w('edge')} of the {q.w('closed end')} to a {q.radius(radius)}"
        ),
    )


# -- the families ---------------------------------------------------------------------------------

FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "hex_nut",
        "an ISO 4032 hex nut (M6–M24) with 30° chamfered corners; its thread cosmetic, "
        "modelled as a plain tap-drill bore",
        ("polygon", "chamfer", "hole", "thread"),
        (
            Dimension("size", "thread size", unit="choice", choices=tuple(NUTS)),
            Dimension("chamfers", "chamfered faces", unit="choice", choices=("both", "top")),
            Dimension("angle", "turn of the hexagon", 0, 55, unit="deg"),
            Dimension("z", "bearing face's height", 0, 30),
        ),
        _hex_nut,
        _hex_nut_text,
        _hex_nut_program,
        _hex_nut_calls,
        lambda p: {**p, "chamfers": "top" if p["chamfers"] == "both" else "both"},
        (
            Edit("change the thread size", apply=_nut_size),
            Edit("chamfer one face or both", apply=_nut_recount_chamfers),
            resize("z", 2, 6),
        ),
        words=WORDS,
    ),
    Family(
        "washer_iso",
        "an ISO 7089 plain washer (M6–M36), or its ISO 7090 form with a 30° outer chamfer",
        ("revolve", "chamfer"),
        (
            Dimension("size", "washer size", unit="choice", choices=tuple(WASHERS)),
            Dimension("form", "washer form", unit="choice", choices=("plain", "chamfered")),
            Dimension("z", "underside's height", 0, 30),
        ),
        _washer,
        _washer_text,
        _washer_program,
        _washer_calls,
        lambda p: {**p, "form": "plain" if p["form"] == "chamfered" else "chamfered"},
        (
            Edit("change the washer size", apply=_washer_size),
            Edit("add or remove the chamfer", apply=_washer_form),
            resize("z", 2, 6),
        ),
        words=WORDS,
    ),
    Family(
        "hex_bolt",
        "an ISO 4017 hex bolt (M6–M24) with a chamfered head and a chamfered end; its thread "
        "cosmetic, modelled as a plain cylinder of the nominal diameter",
        ("polygon", "chamfer", "thread", "primitive"),
        (
            Dimension("size", "thread size", unit="choice", choices=tuple(BOLTS)),
            Dimension("length", "bolt length", 12, 200),
            Dimension("angle", "turn of the head", 0, 55, unit="deg"),
        ),
        _hex_bolt,
        _hex_bolt_text,
        _hex_bolt_program,
        _hex_bolt_calls,
        _moved("length", -3),
        (
            Edit("next standard length", apply=_length_edit(BOLTS, "ISO 4017")),
            Edit("change the thread size", apply=_bolt_size),
        ),
        check=_standard_length(BOLTS),
        words=WORDS,
    ),
    Family(
        "socket_cap_screw",
        "an ISO 4762 socket head cap screw (M4–M20) with a hexagon socket and a chamfered end; "
        "its thread cosmetic, modelled as a plain cylinder of the nominal diameter",
        ("polygon", "pocket", "chamfer", "thread"),
        (
            Dimension("size", "thread size", unit="choice", choices=tuple(CAP_SCREWS)),
            Dimension("length", "screw length", 10, 200),
            Dimension("angle", "turn of the socket", 0, 55, unit="deg"),
        ),
        _cap_screw,
        _cap_screw_text,
        _cap_screw_program,
        _cap_screw_calls,
        _moved("angle", 30),
        (
            Edit("next standard length", apply=_length_edit(CAP_SCREWS, "ISO 4762")),
            Edit("change the thread size", apply=_cap_screw_size),
        ),
        check=_standard_length(CAP_SCREWS),
        words=WORDS,
    ),
    Family(
        "pipe_tee",
        "an equal pipe tee (DN25–DN100): two crossing tubes with their bores joined",
        ("primitive", "hole"),
        (
            Dimension("size", "pipe size", unit="choice", choices=tuple(TEE_CENTRE)),
            Dimension("wall", "wall thickness", 2, 8),
            Dimension("centre", "run's centre-to-end length", 38, 120),
            Dimension("branch", "branch's centre-to-end length", 38, 120),
        ),
        _pipe_tee,
        _pipe_tee_text,
        _pipe_tee_program,
        _pipe_tee_calls,
        _moved("branch", -3),
        (
            resize("centre", 3, 10),
            resize("branch", 3, 10),
            resize("wall", 1, 2),
        ),
        check=_pipe_tee_check,
        words=WORDS,
    ),
    Family(
        "pipe_reducer",
        "a concentric pipe reducer (DN25–DN100 to one to three sizes smaller), revolved with "
        "straight ends and a constant radial wall",
        ("revolve",),
        (
            Dimension("large", "large end's pipe size", unit="choice", choices=REDUCER_LARGE),
            Dimension("small", "small end's pipe size", unit="choice", choices=REDUCER_SMALL),
            Dimension("wall", "wall thickness", 2, 6),
            Dimension("large_length", "large end's straight length", 5, 30),
            Dimension("cone", "cone length", 5, 90),
            Dimension("small_length", "small end's straight length", 5, 30),
        ),
        _pipe_reducer,
        _pipe_reducer_text,
        _pipe_reducer_program,
        _pipe_reducer_calls,
        _moved("cone", 3),
        (
            resize("cone", 3, 10),
            resize("large_length", 3, 8),
            resize("small_length", 3, 8),
        ),
        check=_pipe_reducer_check,
        words=WORDS,
    ),
    Family(
        "pipe_elbow_flanged",
        "a swept 90° 3D pipe elbow (DN15–DN50) with an EN 1092-1 PN16 flange at each end",
        ("sweep", "bend", "hole", "bolt_circle"),
        (
            Dimension("size", "pipe size", unit="choice", choices=tuple(FLANGES)),
            Dimension("wall", "wall thickness", 2, 7.5),
            Dimension("face", "centre-to-face length", 63.5, 135),
        ),
        _pipe_elbow,
        _pipe_elbow_text,
        _pipe_elbow_program,
        _pipe_elbow_calls,
        _moved("face", 3),
        (
            resize("face", 3, 10),
            resize("wall", 1, 2),
        ),
        check=_pipe_elbow_check,
        words=WORDS,
    ),
    Family(
        "pipe_cap",
        "a revolved socket-weld pipe cap (DN15–DN50) with its closed end's outer edge rounded",
        ("revolve", "fillet"),
        (
            Dimension("size", "pipe size", unit="choice", choices=CAP_SIZES),
            Dimension("wall", "wall thickness", 3, 6),
            Dimension("end", "closed end's thickness", 3, 10),
            Dimension("height", "cap height", 13, 35),
            Dimension("radius", "end fillet radius", 0, 5.5),
        ),
        _pipe_cap,
        _pipe_cap_text,
        _pipe_cap_program,
        _pipe_cap_calls,
        lambda p: {**p, "radius": 0.0},
        (
            resize("height", 3, 8),
            resize("wall", 1, 2),
            Edit("add or remove the fillet", apply=_cap_fillet),
        ),
        check=_pipe_cap_check,
        words=WORDS,
    ),
)
