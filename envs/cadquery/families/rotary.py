"""Rotary parts: a weld-neck flange with a raised face, a keyed hub, a shaft with a milled keyway,
a shaft with retaining-ring grooves, a chamfered stepped shaft, a shaft with a threaded end and
an undercut, a shaft collar with set screws and a flanged bushing.

Every length is in mm, every angle in degrees, Z up; every part stands on the XY plane, centred
on the Z axis. Standards: keyways after DIN 6885-1 (key width b, shaft depth t1 and hub depth t2
by shaft diameter, key lengths from its series), retaining-ring grooves after DIN 471 (groove
diameter and width by shaft diameter), ISO coarse pitches for metric threads, thread undercuts
after DIN 76-1 form A (diameter d - dg by pitch, width between g1 and g2), ISO 273 medium
clearance holes for flange bolts. Documented approximations: threads are cosmetic (an M12
thread is modelled as a plain 12 mm cylinder, as the prompt says), thread undercuts are
square-bottomed (without their transition radius), and a tapped set-screw hole is a plain hole
of the thread's nominal diameter.
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
    fmt4,
    mm,
    num,
    pts,
    resize,
    whole,
)
from toolgym.envs.cadquery.families.phrases import Phrases
from toolgym.envs.cadquery.families.standards import ISO_273_MEDIUM

Point = tuple[float, float]


def _pick(rng: np.random.Generator, options: list) -> object:  # type: ignore[type-arg]
    return options[int(rng.integers(len(options)))]


def _revolved(profile: list[Point]) -> str:
    """A closed [radius, z] profile revolved about the Z axis, as a program writes it."""
    return f"cq.Workplane('XZ').polyline({pts(profile)}).close().revolve(360, (0, 0, 0), (0, 1, 0))"


def _profile_call(profile: list[Point], tool: str = "revolve_profile") -> Call:
    return call(tool, points=[[round(r, 4), round(z, 4)] for r, z in profile])


def _chamfered_end(radius: float, z: float, size: float, top: bool) -> list[Point]:
    """The two profile corners of an outer edge at ``z`` chamfered ``size`` at 45°, in the
    order a profile running up the outside meets them (one corner when ``size`` is 0)."""
    if size <= 0:
        return [(radius, z)]
    if top:
        return [(radius, z - size), (radius - size, z)]
    return [(radius - size, z), (radius, z + size)]


# DIN 6885-1 parallel keys: (shaft diameter above, up to) -> key width b, shaft depth t1 and hub
# depth t2 (both from the shaft's or bore's surface on the keyway's centre line).
DIN_6885 = (
    (10, 12, 4, 2.5, 1.8),
    (12, 17, 5, 3.0, 2.3),
    (17, 22, 6, 3.5, 2.8),
    (22, 30, 8, 4.0, 3.3),
    (30, 38, 10, 5.0, 3.3),
    (38, 44, 12, 5.0, 3.3),
    (44, 50, 14, 5.5, 3.8),
    (50, 58, 16, 6.0, 4.3),
    (58, 65, 18, 7.0, 4.4),
)
KEY_LENGTHS = (10, 12, 14, 16, 18, 20, 22, 25, 28, 32, 36, 40, 45, 50, 56, 63, 70, 80, 90, 100)
BORES = (12, 14, 15, 16, 18, 20, 22, 24, 25, 28, 30, 32, 35, 38, 40, 42, 45, 48, 50, 55, 60)


def _key(diameter: float) -> tuple[float, float, float]:
    """DIN 6885-1 (b, t1, t2) of a shaft or bore diameter."""
    for above, upto, b, t1, t2 in DIN_6885:
        if above < diameter <= upto:
            return float(b), t1, t2
    raise ValueError(f"no DIN 6885 key for a {diameter:g} mm shaft")


# -- flange_raised_face ------------------------------------------------------------------------

# ISO 273 medium-series clearance holes of the flange bolts.
FLANGE_BOLTS = {f"M{n}": (n, ISO_273_MEDIUM[f"M{n}"]) for n in (10, 12, 16, 20)}


def _bolt_gap(p: Params) -> float:
    """Chord between neighbouring bolt holes' centres, less what a nut needs there."""
    size = FLANGE_BOLTS[str(p["bolt"])][0]
    return num(p["pitch"]) * math.sin(math.pi / whole(p["holes"])) - (1.8 * size + 2)


def _flange_rf(rng: np.random.Generator) -> Params:
    bolt = str(_pick(rng, list(FLANGE_BOLTS)))
    size, hole = FLANGE_BOLTS[bolt]
    bore = mm(rng, 20, 80)
    neck = bore + 2 * mm(rng, 3, 8)
    hub = neck + mm(rng, 8, 20)
    # Nuts on the hub side need about 0.8 × the bolt size of room beside the hub.
    pitch = mm(rng, hub + 1.6 * size + 2, hub + 1.6 * size + 14)
    thickness = mm(rng, size, size + 10)
    params: Params = {
        "bolt": bolt,
        "hole": hole,
        "holes": 4,
        "pitch": pitch,
        "diameter": mm(rng, pitch + 2 * hole, pitch + 2 * hole + 10),
        "thickness": thickness,
        "face": mm(rng, bore + 12, pitch - hole - 4),
        "face_height": mm(rng, 1.5, 3),
        "bore": bore,
        "hub": hub,
        "neck": neck,
        "hub_length": mm(rng, thickness, 2.5 * thickness),
    }
    if rng.random() < 0.5 and _bolt_gap({**params, "holes": 8}) >= 0:
        params["holes"] = 8
    return params


def _flange_rf_profile(p: Params) -> list[Point]:
    h, t = num(p["face_height"]), num(p["thickness"])
    top = h + t + num(p["hub_length"])
    return [
        (num(p["bore"]) / 2, 0),
        (num(p["face"]) / 2, 0),
        (num(p["face"]) / 2, h),
        (num(p["diameter"]) / 2, h),
        (num(p["diameter"]) / 2, h + t),
        (num(p["hub"]) / 2, h + t),
        (num(p["neck"]) / 2, top),
        (num(p["bore"]) / 2, top),
    ]


def _flange_rf_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a {q.w('weld neck')} {q.w('flange')} {q.w('centred')} on the Z {q.w('axis')}, its "
        f"{q.w('raised face')} on {q.w('the XY plane')} and its {q.w('weld neck')} rising "
        f"{q.w('along')} +Z",
        f"the {q.w('raised face')}, of {q.len(p['face'])} {q.w('diameter')}, stands "
        f"{q.len(p['face_height'])} proud of the {q.w('flange')}'s front face",
        f"the {q.w('flange')} disc, of {q.len(p['diameter'])} {q.w('diameter')}, is "
        f"{q.len(p['thickness'])} {q.w('thick')}",
        f"the {q.w('weld neck')} tapers {q.w('from')} {q.len(p['hub'])} {q.w('diameter')} at the "
        f"{q.w('flange')}'s back face to {q.len(p['neck'])} {q.w('diameter')} at its end, "
        f"{q.len(p['hub_length'])} above that back face",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} the whole {q.w('part')}",
        f"{q.count(whole(p['holes']))} {q.w('through-holes')} of {q.len(p['hole'])} "
        f"{q.w('diameter')}, for {p['bolt']} {q.w('bolt')}s, go {q.w('through')} the "
        f"{q.w('flange')} disc, {q.w('equally')} "
        f"{q.w('spaced')} on a {q.len(p['pitch'])} {q.w('bolt circle')} with the first on the +X "
        f"{q.w('axis')}",
    ]


def _flange_rf_program(p: Params) -> str:
    h, t = num(p["face_height"]), num(p["thickness"])
    return (
        f"body = {_revolved(_flange_rf_profile(p))}\n"
        f"bolt_holes = (\n"
        f"    cq.Workplane('XY').workplane(offset=-1)\n"
        f"    .polarArray({fmt4(num(p['pitch']) / 2)}, 0, 360, {whole(p['holes'])})\n"
        f"    .circle({fmt4(num(p['hole']) / 2)}).extrude({fmt4(h + t + 2)})\n"
        f")\n"
        f"result = body.cut(bolt_holes)\n"
    )


def _flange_rf_calls(p: Params) -> list[Call]:
    return [
        _profile_call(_flange_rf_profile(p)),
        call(
            "pattern_polar",
            feature="hole",
            size=num(p["hole"]),
            count=whole(p["holes"]),
            pitch_diameter=num(p["pitch"]),
        ),
    ]


def _flange_rf_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items() if k != "bolt"}
    size = FLANGE_BOLTS[str(p["bolt"])][0]
    if not f["bore"] + 6 <= f["neck"] <= f["hub"] - 4:
        return "the weld neck needs a 3 mm wall round the bore and must taper outwards"
    if f["pitch"] < f["hub"] + 1.6 * size + 1.5:
        return "the bolt holes must leave room for the nuts beside the hub"
    if not f["bore"] + 8 <= f["face"] <= f["pitch"] - f["hole"] - 2:
        return "the raised face must lie between the bore and the bolt holes"
    if f["diameter"] < f["pitch"] + 2 * f["hole"] - 0.5:
        return "the bolt holes need half a hole of material outside them"
    if _bolt_gap(p) < 0:
        return "the bolt holes are too close together for their nuts"
    return None


def _flange_rf_recount(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    holes = 8 if whole(p["holes"]) == 4 else 4
    return (
        {**p, "holes": holes},
        lambda q: (
            f"change the {q.w('flange')} to {q.count(holes)} {q.w('bolt')} "
            f"{q.w('holes')}, the same size, {q.w('equally')} {q.w('spaced')} on the same "
            f"{q.w('bolt circle')} with the first still on the +X {q.w('axis')}"
        ),
    )


# -- hub_keyed ----------------------------------------------------------------------------------


def _hub_keyed(rng: np.random.Generator) -> Params:
    bore = float(_pick(rng, [b for b in BORES if b <= 60]))  # type: ignore[arg-type]
    width, _, depth = _key(bore)
    low = math.ceil(2 * max(1.6 * bore, bore + 2 * depth + 8)) / 2  # a 4 mm wall past the key
    diameter = mm(rng, low, max(low, 2.2 * bore))
    wall = (diameter - bore) / 2 - depth
    return {
        "bore": bore,
        "key_width": width,
        "key_depth": depth,
        "diameter": diameter,
        "length": mm(rng, max(12, 0.8 * bore), 1.6 * bore),
        "chamfer": 0.0 if rng.random() < 0.5 else mm(rng, 1, min(2.5, wall / 2 - 0.25)),
    }


def _hub_profile(p: Params) -> list[Point]:
    r, length, c = num(p["diameter"]) / 2, num(p["length"]), num(p["chamfer"])
    bore = num(p["bore"]) / 2
    return [
        (bore, 0),
        *_chamfered_end(r, 0, c, top=False),
        *_chamfered_end(r, length, c, top=True),
        (bore, length),
    ]


def _hub_keyed_text(p: Params, q: Phrases) -> list[str]:
    depth = num(p["key_depth"])
    finish = (
        f"both outer {q.w('edges')} of the {q.w('hub')} are {q.w('chamfered')} "
        f"{q.len(p['chamfer'])} at {q.deg(45)}"
        if num(p["chamfer"]) > 0
        else f"the outer {q.w('edges')} of the {q.w('hub')} are left sharp, with no "
        f"{q.w('chamfer')}"
    )
    return [
        f"a keyed {q.w('hub')} of {q.len(p['diameter'])} outside {q.w('diameter')}, "
        f"{q.len(p['length'])} {q.w('long')}, one end face on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
        f"a DIN 6885 {q.w('keyway')} {q.len(p['key_width'])} {q.w('wide')} is {q.w('cut')} "
        f"{q.w('through')} the full length on the +X side of the {q.w('bore')}, its sides "
        f"parallel to X and symmetric about y = 0",
        f"the {q.w('keyway')}'s flat bottom lies {q.len(depth)} beyond the {q.w('bore')} "
        f"surface, {q.len(num(p['bore']) / 2 + depth)} {q.w('from')} the {q.w('axis')}",
        finish,
    ]


def _hub_keyed_program(p: Params) -> str:
    reach, length = num(p["bore"]) / 2 + num(p["key_depth"]), num(p["length"])
    program = f"result = {_revolved(_hub_profile(p))}\n"
    if num(p["key_depth"]) > 0:
        program += (
            f"keyway = cq.Workplane('XY').box({fmt4(reach)}, {fmt4(num(p['key_width']))}, "
            f"{fmt4(length + 2)}, centered=(False, True, False)).translate((0, 0, -1))\n"
            f"result = result.cut(keyway)\n"
        )
    return program


def _hub_keyed_calls(p: Params) -> list[Call]:
    reach, length = num(p["bore"]) / 2 + num(p["key_depth"]), num(p["length"])
    return [
        _profile_call(_hub_profile(p)),
        call(
            "cut_box",
            length=reach,
            width=num(p["key_width"]),
            height=length + 2,
            x=reach / 2,
            z=length / 2,
        ),
    ]


def _hub_keyed_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    wall = (f["diameter"] - f["bore"]) / 2 - f["key_depth"]
    if wall < 4:
        return "the hub needs a 4 mm wall outside the keyway"
    if f["chamfer"] > wall / 2:
        return "the chamfers may take at most half the wall outside the keyway"
    if f["length"] < 10:
        return "the hub must be at least 10 mm long"
    return None


def _hub_keyed_chamfer(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if num(p["chamfer"]) > 0:
        return (
            {**p, "chamfer": 0.0},
            lambda q: (
                f"remove the {q.w('chamfer')} from both outer {q.w('edges')} of the "
                f"{q.w('hub')}, leaving them sharp"
            ),
        )
    size = mm(rng, 1, 2.5)
    return (
        {**p, "chamfer": size},
        lambda q: (
            f"add a {q.len(size)} {q.w('chamfer')} at {q.deg(45)} to both outer "
            f"{q.w('edges')} of the {q.w('hub')}, leaving the {q.w('bore')} {q.w('edges')} sharp"
        ),
    )


# -- shaft_keyway -------------------------------------------------------------------------------


def _shaft_keyway(rng: np.random.Generator) -> Params:
    keyed = float(_pick(rng, [b for b in BORES if b <= 50]))  # type: ignore[arg-type]
    width, depth, _ = _key(keyed)
    length2 = mm(rng, max(20, 1.2 * keyed), max(24, 2.2 * keyed))
    lengths = [k for k in KEY_LENGTHS if 2 * width <= k <= length2 - 6]
    diameter = keyed + mm(rng, 4, 12)
    return {
        "diameter": diameter,
        "length1": mm(rng, max(15, 0.8 * diameter), 2.5 * diameter),
        "keyed": keyed,
        "length2": length2,
        "key_width": width,
        "key_depth": depth,
        "key_length": float(_pick(rng, lengths)),  # type: ignore[arg-type]
    }


def _shaft_keyway_text(p: Params, q: Phrases) -> list[str]:
    depth = num(p["key_depth"])
    return [
        f"a keyed {q.w('shaft')} {q.w('along')} the Z {q.w('axis')}, its bottom end on "
        f"{q.w('the XY plane')}, made of two coaxial {q.w('steps')}",
        f"the lower {q.w('step')}, of {q.len(p['diameter'])} {q.w('diameter')}, is "
        f"{q.len(p['length1'])} {q.w('long')}",
        f"the upper {q.w('step')}, standing on the lower one, is of {q.len(p['keyed'])} "
        f"{q.w('diameter')} and {q.len(p['length2'])} {q.w('long')}",
        f"a DIN 6885 {q.w('keyway')} is {q.w('cut')} into the upper {q.w('step')} on its +X side, "
        f"{q.len(p['key_width'])} {q.w('wide')} and {q.len(p['key_length'])} {q.w('long')} end "
        f"to end with round ends, {q.w('centred')} along that {q.w('step')}'s length",
        f"the {q.w('keyway')}'s flat bottom lies {q.len(depth)} below the {q.w('shaft')} surface "
        f"on its centre line, {q.len(num(p['keyed']) / 2 - depth)} {q.w('from')} the "
        f"{q.w('axis')}",
    ]


def _keyway_place(p: Params) -> tuple[float, float, float]:
    """(x of the keyway's bottom, its centre's z, the cutter's reach in X)."""
    bottom = num(p["keyed"]) / 2 - num(p["key_depth"])
    return bottom, num(p["length1"]) + num(p["length2"]) / 2, num(p["key_depth"]) + 1


def _shaft_keyway_program(p: Params) -> str:
    bottom, centre, reach = _keyway_place(p)
    program = (
        f"result = (\n"
        f"    cq.Workplane('XY').circle({fmt4(num(p['diameter']) / 2)}).extrude({p['length1']})\n"
        f"    .faces('>Z').workplane().circle({fmt4(num(p['keyed']) / 2)})"
        f".extrude({p['length2']})\n"
        f")\n"
    )
    if num(p["key_depth"]) > 0:
        program += (
            f"keyway = (\n"
            f"    cq.Workplane('YZ', origin=({fmt4(bottom)}, 0, 0)).center(0, {fmt4(centre)})\n"
            f"    .slot2D({p['key_length']}, {p['key_width']}, 90).extrude({fmt4(reach)})\n"
            f")\n"
            f"result = result.cut(keyway)\n"
        )
    return program


def _shaft_keyway_calls(p: Params) -> list[Call]:
    bottom, centre, reach = _keyway_place(p)
    length1, length2, width = num(p["length1"]), num(p["length2"]), num(p["key_width"])
    straight = num(p["key_length"]) - width
    x = bottom + reach / 2
    return [
        call("add_cylinder", diameter=num(p["diameter"]), height=length1, z=length1 / 2),
        call("add_cylinder", diameter=num(p["keyed"]), height=length2, z=length1 + length2 / 2),
        call("cut_box", length=reach, width=width, height=straight, x=x, z=centre),
        *(
            call(
                "cut_cylinder",
                diameter=width,
                height=reach,
                x=x,
                z=centre + s * straight / 2,
                axis="X",
            )
            for s in (1, -1)
        ),
    ]


def _shaft_keyway_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["diameter"] < f["keyed"] + 4:
        return "the lower step must be at least 4 mm larger than the keyed step"
    if not 2 * f["key_width"] <= f["key_length"] <= f["length2"] - 6:
        return "the keyway must be at least twice its width long and clear the step's ends"
    if f["key_depth"] > f["keyed"] / 4:
        return "the keyway may be at most a quarter of the shaft's diameter deep"
    return None


def _shaft_keyway_lengthen(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    old = num(p["key_length"])
    longer = [k for k in KEY_LENGTHS if old < k <= num(p["length2"]) - 6]
    shorter = [k for k in KEY_LENGTHS if 2 * num(p["key_width"]) <= k < old]
    new = float(longer[0] if longer and (not shorter or rng.random() < 0.5) else shorter[-1])
    return (
        {**p, "key_length": new},
        lambda q: (
            f"change the {q.w('keyway')} to the standard length {q.len(new)} end to end, still "
            f"{q.w('centred')} along its {q.w('step')} with the same width and depth"
        ),
    )


# -- shaft_grooved ------------------------------------------------------------------------------

# DIN 471 retaining-ring grooves: shaft diameter -> (groove diameter d2, groove width m).
DIN_471 = {
    30: (28.6, 1.6),
    35: (33.0, 1.6),
    40: (37.5, 1.85),
    45: (42.5, 1.85),
    50: (47.0, 2.15),
    55: (52.0, 2.15),
    60: (57.0, 2.15),
}


def _shaft_grooved(rng: np.random.Generator) -> Params:
    diameter = int(_pick(rng, list(DIN_471)))  # type: ignore[call-overload]
    bottom, width = DIN_471[diameter]
    length = mm(rng, max(40, 1.5 * diameter), min(240, 4 * diameter))
    return {
        "diameter": float(diameter),
        "length": length,
        "grooves": int(rng.integers(1, 3)),
        "groove_diameter": bottom,
        "groove_width": width,
        "inset": mm(rng, 3, min(30, 0.25 * length)),
    }


def _grooves(p: Params) -> list[tuple[float, float]]:
    """(z of the lower flank, z of the upper flank) of each groove, bottom first."""
    inset, width, length = num(p["inset"]), num(p["groove_width"]), num(p["length"])
    spans = [(inset, inset + width), (length - inset - width, length - inset)]
    return spans[: whole(p["grooves"])]


def _shaft_grooved_profile(p: Params) -> list[Point]:
    r, bottom = num(p["diameter"]) / 2, num(p["groove_diameter"]) / 2
    profile: list[Point] = [(0, 0), (r, 0)]
    for low, high in _grooves(p):
        profile += [(r, low), (bottom, low), (bottom, high), (r, high)]
    return [*profile, (r, num(p["length"])), (0, num(p["length"]))]


def _shaft_grooved_text(p: Params, q: Phrases) -> list[str]:
    grooves = whole(p["grooves"])
    size = (
        f"{q.len(p['groove_width'])} {q.w('wide')} with its bottom at "
        f"{q.len(p['groove_diameter'])} {q.w('diameter')}"
    )
    if grooves == 1:
        where = (
            f"one {q.w('groove')} is {q.w('cut')} near the bottom end, {size}, its lower flank "
            f"{q.len(p['inset'])} above the bottom end face"
        )
    else:
        where = (
            f"{q.count(grooves)} {q.w('grooves')} are {q.w('cut')}, {q.w('each')} {size}: one "
            f"with its lower flank {q.len(p['inset'])} above the bottom end face, the other with "
            f"its upper flank {q.len(p['inset'])} below the top end face"
        )
    return [
        f"a plain {q.w('shaft')} of {q.len(p['diameter'])} {q.w('diameter')}, "
        f"{q.len(p['length'])} {q.w('long')}, {q.w('standing')} on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        where,
        f"the {q.w('grooves')} are sized for DIN 471 {q.w('retaining ring')}s on a "
        f"{q.len(p['diameter'])} {q.w('shaft')}, square-bottomed with sharp {q.w('edges')}",
    ]


def _shaft_grooved_program(p: Params) -> str:
    return f"result = {_revolved(_shaft_grooved_profile(p))}\n"


def _shaft_grooved_calls(p: Params) -> list[Call]:
    length, bottom = num(p["length"]), num(p["groove_diameter"]) / 2
    outside = num(p["diameter"]) / 2 + 1  # the cutter reaches past the surface: no coplanar face
    calls = [call("add_cylinder", diameter=num(p["diameter"]), height=length, z=length / 2)]
    for low, high in _grooves(p):
        ring = [(bottom, low), (outside, low), (outside, high), (bottom, high)]
        calls.append(_profile_call(ring, "cut_revolve"))
    return calls


def _shaft_grooved_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["groove_diameter"] >= f["diameter"] - 1:
        return "the grooves must be at least 0.5 mm deep"
    if f["inset"] < 2:
        return "the grooves must sit at least 2 mm in from the ends"
    if whole(p["grooves"]) * (f["inset"] + f["groove_width"]) + 5 > f["length"]:
        return "the grooves must leave at least 5 mm of shaft between them"
    return None


def _shaft_grooved_toggle(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if whole(p["grooves"]) == 2:
        return (
            {**p, "grooves": 1},
            lambda q: (
                f"remove the {q.w('groove')} near the top end, keeping the one near the bottom "
                f"end as it is"
            ),
        )
    return (
        {**p, "grooves": 2},
        lambda q: (
            f"add a second {q.w('groove')} of the same size near the top end, its upper flank "
            f"{q.len(p['inset'])} below the top end face"
        ),
    )


# -- shaft_chamfered ----------------------------------------------------------------------------


def _shaft_chamfered(rng: np.random.Generator) -> Params:
    diameter = mm(rng, 15, 60)
    small = mm(rng, max(8, 0.5 * diameter), diameter - 4)
    room = (diameter - small) / 2 - 1  # the shoulder chamfer leaves a 1 mm flat shoulder
    return {
        "diameter1": diameter,
        "length1": mm(rng, 15, 100),
        "diameter2": small,
        "length2": mm(rng, 10, 80),
        "chamfer1": mm(rng, 1, max(1, min(3, diameter / 10))),
        "chamfer2": mm(rng, 1, max(1, min(3, small / 10))),
        "shoulder": 0.0 if rng.random() < 0.5 else mm(rng, 1, max(1, min(2, room))),
    }


def _shaft_chamfered_profile(p: Params) -> list[Point]:
    big, small = num(p["diameter1"]) / 2, num(p["diameter2"]) / 2
    length1, top = num(p["length1"]), num(p["length1"]) + num(p["length2"])
    return [
        (0, 0),
        *_chamfered_end(big, 0, num(p["chamfer1"]), top=False),
        *_chamfered_end(big, length1, num(p["shoulder"]), top=True),
        (small, length1),
        *_chamfered_end(small, top, num(p["chamfer2"]), top=True),
        (0, top),
    ]


def _shaft_chamfered_text(p: Params, q: Phrases) -> list[str]:
    shoulder = (
        f"the outer {q.w('edge')} of the shoulder, where the lower {q.w('step')} ends, is "
        f"{q.w('chamfered')} {q.len(p['shoulder'])} at {q.deg(45)}"
        if num(p["shoulder"]) > 0
        else f"the outer {q.w('edge')} of the shoulder, where the lower {q.w('step')} ends, is "
        f"left sharp"
    )
    return [
        f"a stepped {q.w('shaft')} {q.w('along')} the Z {q.w('axis')}, its bottom end on "
        f"{q.w('the XY plane')}",
        f"its lower {q.w('step')}, of {q.len(p['diameter1'])} {q.w('diameter')}, is "
        f"{q.len(p['length1'])} {q.w('long')}",
        f"its upper {q.w('step')}, standing on the lower one, is of {q.len(p['diameter2'])} "
        f"{q.w('diameter')} and {q.len(p['length2'])} {q.w('long')}",
        f"the outer {q.w('edge')} of the bottom end face is {q.w('chamfered')} "
        f"{q.len(p['chamfer1'])} at {q.deg(45)}",
        f"the outer {q.w('edge')} of the top end face is {q.w('chamfered')} "
        f"{q.len(p['chamfer2'])} at {q.deg(45)}",
        shoulder,
    ]


def _shaft_chamfered_program(p: Params) -> str:
    return f"result = {_revolved(_shaft_chamfered_profile(p))}\n"


def _shaft_chamfered_calls(p: Params) -> list[Call]:
    return [_profile_call(_shaft_chamfered_profile(p))]


def _shaft_chamfered_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["diameter1"] < f["diameter2"] + 4:
        return "the lower step must be at least 4 mm larger than the upper one"
    if f["shoulder"] > (f["diameter1"] - f["diameter2"]) / 2 - 1:
        return "the shoulder chamfer must leave a 1 mm flat shoulder"
    if f["chamfer1"] > min(f["diameter1"] / 5, f["length1"] / 3):
        return "the bottom chamfer is too large for the lower step"
    if f["chamfer2"] > min(f["diameter2"] / 5, f["length2"] / 3):
        return "the top chamfer is too large for the upper step"
    return None


def _shaft_chamfered_shoulder(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if num(p["shoulder"]) > 0:
        return (
            {**p, "shoulder": 0.0},
            lambda q: (
                f"remove the {q.w('chamfer')} from the shoulder's outer {q.w('edge')}, "
                f"leaving it sharp"
            ),
        )
    room = (num(p["diameter1"]) - num(p["diameter2"])) / 2 - 1
    size = mm(rng, 1, max(1, min(2, room)))
    return (
        {**p, "shoulder": size},
        lambda q: (
            f"add a {q.len(size)} {q.w('chamfer')} at {q.deg(45)} to the outer {q.w('edge')} of "
            f"the shoulder, where the lower {q.w('step')} ends"
        ),
    )


# -- shaft_threaded_end -------------------------------------------------------------------------

# ISO coarse pitch, and DIN 76-1 form A: d - dg, g1 and g2 by pitch; the end chamfer by pitch.
THREADS = {"M8": 1.25, "M10": 1.5, "M12": 1.75, "M16": 2.0, "M20": 2.5, "M24": 3.0}
DIN_76 = {
    1.25: (2.0, 2.7, 4.4),
    1.5: (2.3, 3.2, 5.2),
    1.75: (2.6, 3.9, 6.1),
    2.0: (3.0, 4.5, 7.0),
    2.5: (3.6, 5.6, 8.7),
    3.0: (4.4, 6.7, 10.5),
}
THREAD_CHAMFERS = {1.25: 1.5, 1.5: 1.5, 1.75: 2.0, 2.0: 2.0, 2.5: 2.5, 3.0: 3.0}


def _shaft_threaded(rng: np.random.Generator) -> Params:
    thread = str(_pick(rng, list(THREADS)))
    size, pitch = float(thread[1:]), THREADS[thread]
    relief, g1, g2 = DIN_76[pitch]
    diameter = mm(rng, size + 4, size + 20)
    return {
        "thread": thread,
        "thread_diameter": size,
        "diameter": diameter,
        "length": mm(rng, max(15, diameter), min(150, 4 * diameter)),
        "thread_length": mm(rng, 1.5 * size, 3 * size),
        "undercut_diameter": round(size - relief, 4),
        "undercut_width": float(rng.integers(math.ceil(2 * g1), math.floor(2 * g2) + 1)) / 2,
        "thread_chamfer": THREAD_CHAMFERS[pitch],
    }


def _shaft_threaded_profile(p: Params) -> list[Point]:
    body, length = num(p["diameter"]) / 2, num(p["length"])
    thread, relief = num(p["thread_diameter"]) / 2, num(p["undercut_diameter"]) / 2
    start = length + num(p["undercut_width"])
    top = start + num(p["thread_length"])
    neck = [(relief, length), (relief, start)] if num(p["undercut_width"]) > 0 else []
    return [
        (0, 0),
        (body, 0),
        (body, length),
        *neck,
        (thread, start),
        *_chamfered_end(thread, top, num(p["thread_chamfer"]), top=True),
        (0, top),
    ]


def _shaft_threaded_text(p: Params, q: Phrases) -> list[str]:
    thread = str(p["thread"])
    return [
        f"a {q.w('shaft')} with a threaded end, {q.w('standing')} on {q.w('the XY plane')} "
        f"{q.w('along')} the Z {q.w('axis')}, the threaded end at the top",
        f"its body, of {q.len(p['diameter'])} {q.w('diameter')}, is {q.len(p['length'])} "
        f"{q.w('long')}, {q.w('from')} {q.w('the XY plane')} up to a square shoulder",
        f"above the shoulder a thread {q.w('undercut')} {q.len(p['undercut_width'])} "
        f"{q.w('long')} is turned down to {q.len(p['undercut_diameter'])} {q.w('diameter')}, "
        f"square-bottomed",
        f"above the {q.w('undercut')} an {thread} {q.w('thread')} (ISO coarse pitch) runs "
        f"{q.len(p['thread_length'])} to the top end, modelled as a plain "
        f"{q.len(p['thread_diameter'])} cylinder",
        f"the top end's outer {q.w('edge')} is {q.w('chamfered')} {q.len(p['thread_chamfer'])} "
        f"at {q.deg(45)}",
    ]


def _shaft_threaded_program(p: Params) -> str:
    return f"result = {_revolved(_shaft_threaded_profile(p))}\n"


def _shaft_threaded_calls(p: Params) -> list[Call]:
    length, width = num(p["length"]), num(p["undercut_width"])
    thread_length = num(p["thread_length"])
    start = length + width
    return [
        call("add_cylinder", diameter=num(p["diameter"]), height=length, z=length / 2),
        # The undercut's neck runs 1 mm into the body and into the thread: no coplanar faces.
        call(
            "add_cylinder",
            diameter=num(p["undercut_diameter"]),
            height=width + 2,
            z=length + width / 2,
        ),
        call(
            "add_cylinder",
            diameter=num(p["thread_diameter"]),
            height=thread_length,
            z=start + thread_length / 2,
        ),
        call("chamfer_edges", length=num(p["thread_chamfer"]), edges=">Z"),
    ]


def _shaft_threaded_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items() if k != "thread"}
    if f["diameter"] < f["thread_diameter"] + 4:
        return "the body must be at least 4 mm larger than the thread, for a shoulder"
    if f["thread_length"] < f["thread_diameter"]:
        return "the thread must be at least one diameter long"
    if f["length"] < 10:
        return "the body must be at least 10 mm long"
    return None


# -- collar_set_screw ---------------------------------------------------------------------------

COLLAR_BORES = (8, 10, 12, 14, 15, 16, 18, 20, 22, 25, 28, 30, 32, 35, 40, 45, 50)


def _set_screw(bore: float) -> int:
    """Set-screw size by bore, as catalogue shaft collars have them."""
    return 4 if bore <= 10 else 5 if bore <= 14 else 6 if bore <= 22 else 8 if bore <= 35 else 10


def _collar(rng: np.random.Generator) -> Params:
    bore = float(_pick(rng, list(COLLAR_BORES)))  # type: ignore[arg-type]
    screw = _set_screw(bore)
    chamfer = mm(rng, 0.5, 1.5)
    outside = max(bore + 2 * screw, 1.5 * bore)  # a wall at least the screw's diameter thick
    width = max(screw + 2 * chamfer + 3, 0.4 * bore)  # the hole clears the chamfers
    outside, width = mm(rng, outside, outside + 10), mm(rng, width, width + 8)
    return {
        "bore": bore,
        "diameter": outside,
        "width": width,
        "chamfer": chamfer,
        "screw": f"M{screw}",
        "screw_diameter": float(screw),
        "screws": int(rng.integers(1, 3)),
    }


def _collar_text(p: Params, q: Phrases) -> list[str]:
    screw, size = str(p["screw"]), num(p["screw_diameter"])
    second = (
        f"a second, identical {q.w('set screw')} hole is {q.w('drilled')} {q.w('along')} +Y, at "
        f"{q.deg(90)} to the first and at the same height"
        if whole(p["screws"]) == 2
        else f"the {q.w('collar')} has no other {q.w('set screw')} hole"
    )
    return [
        f"a {q.w('collar')} of {q.len(p['diameter'])} outside {q.w('diameter')}, "
        f"{q.len(p['width'])} {q.w('wide')}, one face on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
        f"all four circular {q.w('edges')}, outside and {q.w('bore')} at both faces, are "
        f"{q.w('chamfered')} {q.len(p['chamfer'])} at {q.deg(45)}",
        f"a radial {screw} {q.w('set screw')} hole is {q.w('drilled')} {q.w('along')} +X "
        f"{q.w('from')} the outside into the {q.w('bore')}, halfway across the width, modelled "
        f"as a plain {q.len(size)} hole through one wall",
        second,
    ]


def _collar_program(p: Params) -> str:
    reach, middle = num(p["diameter"]) / 2 + 1, num(p["width"]) / 2
    hole = fmt4(num(p["screw_diameter"]) / 2)
    program = (
        f"result = (\n"
        f"    cq.Workplane('XY').circle({fmt4(num(p['diameter']) / 2)})"
        f".circle({fmt4(num(p['bore']) / 2)}).extrude({p['width']})\n"
        f"    .edges('>Z').chamfer({p['chamfer']}).edges('<Z').chamfer({p['chamfer']})\n"
        f")\n"
    )
    if whole(p["screws"]) >= 1:
        program += (
            f"result = result.cut(cq.Workplane('YZ').center(0, {fmt4(middle)}).circle({hole})"
            f".extrude({fmt4(reach)}))\n"
        )
    if whole(p["screws"]) >= 2:
        program += (
            f"result = result.cut(cq.Workplane('XZ').center(0, {fmt4(middle)}).circle({hole})"
            f".extrude({fmt4(-reach)}))\n"
        )
    return program


def _collar_calls(p: Params) -> list[Call]:
    width, reach, size = num(p["width"]), num(p["diameter"]) / 2 + 1, num(p["screw_diameter"])
    calls = [
        call("add_cylinder", diameter=num(p["diameter"]), height=width, z=width / 2),
        call("cut_hole", diameter=num(p["bore"])),
        call("chamfer_edges", length=num(p["chamfer"]), edges=">Z"),
        call("chamfer_edges", length=num(p["chamfer"]), edges="<Z"),
        call("cut_cylinder", diameter=size, height=reach, x=reach / 2, z=width / 2, axis="X"),
    ]
    if whole(p["screws"]) == 2:
        calls.append(
            call("cut_cylinder", diameter=size, height=reach, y=reach / 2, z=width / 2, axis="Y")
        )
    return calls


def _collar_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items() if k != "screw"}
    if f["diameter"] < f["bore"] + 2 * f["screw_diameter"]:
        return "the wall must be at least as thick as the set screw's diameter"
    if f["width"] < f["screw_diameter"] + 2 * f["chamfer"] + 2:
        return "the set-screw hole must clear the chamfered faces by 1 mm"
    return None


def _collar_toggle(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if whole(p["screws"]) == 2:
        return (
            {**p, "screws": 1},
            lambda q: f"remove the {q.w('set screw')} hole on the +Y side, keeping the one on +X",
        )
    return (
        {**p, "screws": 2},
        lambda q: (
            f"add a second {q.w('set screw')} hole, the same size, {q.w('along')} +Y at "
            f"{q.deg(90)} to the first and at the same height"
        ),
    )


# -- bushing_flanged ----------------------------------------------------------------------------

BUSHING_BORES = (8, 10, 12, 14, 15, 16, 18, 20, 22, 25, 28, 30, 32, 35, 40, 45, 50)


def _bushing(rng: np.random.Generator) -> Params:
    bore = float(_pick(rng, list(BUSHING_BORES)))  # type: ignore[arg-type]
    outside = bore + 2 * mm(rng, 2, max(2, 0.12 * bore + 1))
    flange = mm(rng, 2, max(2, 0.1 * bore + 1.5))
    length = mm(rng, max(flange + 8, 0.8 * bore), 1.5 * bore + flange)
    sleeve = length - flange
    oil = 0.0 if rng.random() < 0.5 else mm(rng, 2, min(4, sleeve / 3))
    return {
        "bore": bore,
        "diameter": outside,
        "flange_diameter": outside + 2 * mm(rng, 3, max(3, 0.2 * outside)),
        "flange_thickness": flange,
        "length": length,
        "oil_hole": oil,
    }


def _bushing_profile(p: Params) -> list[Point]:
    bore, outside, flange = (
        num(p["bore"]) / 2,
        num(p["diameter"]) / 2,
        num(p["flange_diameter"]) / 2,
    )
    thickness, length = num(p["flange_thickness"]), num(p["length"])
    return [
        (bore, 0),
        (flange, 0),
        (flange, thickness),
        (outside, thickness),
        (outside, length),
        (bore, length),
    ]


def _oil_height(p: Params) -> float:
    return (num(p["flange_thickness"]) + num(p["length"])) / 2


def _bushing_text(p: Params, q: Phrases) -> list[str]:
    oil = (
        f"an {q.dia(p['oil_hole'], 'oil hole')} is {q.w('drilled')} radially {q.w('along')} +X "
        f"{q.w('through')} one wall of the {q.w('sleeve')} into the {q.w('bore')}, halfway "
        f"along the {q.w('sleeve')}, {q.len(_oil_height(p))} above {q.w('the XY plane')}"
        if num(p["oil_hole"]) > 0
        else f"the {q.w('sleeve')} has no {q.w('oil hole')}"
    )
    return [
        f"a {q.w('bushing')} {q.len(p['length'])} {q.w('long')} end to end, its {q.w('flange')} "
        f"on {q.w('the XY plane')}, {q.w('centred')} on the Z {q.w('axis')}",
        f"the {q.w('flange')}, of {q.len(p['flange_diameter'])} {q.w('diameter')}, is "
        f"{q.len(p['flange_thickness'])} {q.w('thick')}",
        f"the {q.w('sleeve')} above the {q.w('flange')}, of {q.len(p['diameter'])} outside "
        f"{q.w('diameter')}, runs up to the top end",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} {q.w('sleeve')} and "
        f"{q.w('flange')}, with sharp {q.w('edges')}",
        oil,
    ]


def _bushing_program(p: Params) -> str:
    program = f"result = {_revolved(_bushing_profile(p))}\n"
    if num(p["oil_hole"]) > 0:
        program += (
            f"result = result.cut(cq.Workplane('YZ').center(0, {fmt4(_oil_height(p))})"
            f".circle({fmt4(num(p['oil_hole']) / 2)})"
            f".extrude({fmt4(num(p['diameter']) / 2 + 1)}))\n"
        )
    return program


def _bushing_calls(p: Params) -> list[Call]:
    calls = [_profile_call(_bushing_profile(p))]
    if num(p["oil_hole"]) > 0:
        reach = num(p["diameter"]) / 2 + 1
        calls.append(
            call(
                "cut_cylinder",
                diameter=num(p["oil_hole"]),
                height=reach,
                x=reach / 2,
                z=_oil_height(p),
                axis="X",
            )
        )
    return calls


def _bushing_check(p: Params) -> str | None:
    f = {k: num(v) for k, v in p.items()}
    if f["diameter"] < f["bore"] + 4:
        return "the sleeve needs a 2 mm wall"
    if f["flange_diameter"] < f["diameter"] + 6:
        return "the flange must stand at least 3 mm proud of the sleeve"
    if f["length"] < f["flange_thickness"] + 8:
        return "the sleeve must be at least 8 mm long above the flange"
    if f["oil_hole"] > (f["length"] - f["flange_thickness"]) / 3 + 0.25:
        return "the oil hole must be at most a third of the sleeve's length"
    return None


def _bushing_oil(p: Params, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    if num(p["oil_hole"]) > 0:
        return (
            {**p, "oil_hole": 0.0},
            lambda q: f"remove the {q.w('oil hole')} from the {q.w('sleeve')}, closing it up",
        )
    size = mm(rng, 2, min(4, (num(p["length"]) - num(p["flange_thickness"])) / 3))
    after = {**p, "oil_hole": size}
    return (
        after,
        lambda q: (
            f"add an {q.dia(size, 'oil hole')} {q.w('drilled')} radially {q.w('along')} +X "
            f"{q.w('through')} one wall of the {q.w('sleeve')}, halfway along the "
            f"{q.w('sleeve')}, {q.len(_oil_height(after))} above {q.w('the XY plane')}"
        ),
    )


# -- the families -------------------------------------------------------------------------------


def _without(name: str, value: float | int = 0.0) -> Callable[[Params], Params]:
    """A near miss: one feature removed (its size or count set to ``value``)."""
    return lambda p: {**p, name: value}


def _fewer(name: str) -> Callable[[Params], Params]:
    return lambda p: {**p, name: whole(p[name]) - 1}


FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "flange_raised_face",
        "a weld-neck flange with a raised face and a bolt circle",
        ("hub", "hole", "bolt_circle", "pattern", "revolve"),
        (
            Dimension("bolt", "bolt size", unit="choice", choices=tuple(FLANGE_BOLTS)),
            Dimension("hole", "bolt hole diameter", 11, 22),
            Dimension("holes", "number of bolt holes", 4, 8, unit="count"),
            Dimension("pitch", "bolt circle diameter", 50, 165),
            Dimension("diameter", "flange diameter", 70, 220),
            Dimension("thickness", "flange thickness", 10, 30),
            Dimension("face", "raised face diameter", 32, 150),
            Dimension("face_height", "raised face height", 1.5, 3),
            Dimension("bore", "bore diameter", 20, 80),
            Dimension("hub", "hub diameter at the flange", 34, 116),
            Dimension("neck", "neck diameter at the weld end", 26, 96),
            Dimension("hub_length", "hub length", 10, 75),
        ),
        _flange_rf,
        _flange_rf_text,
        _flange_rf_program,
        _flange_rf_calls,
        _fewer("holes"),
        (
            resize("thickness", 1, 4),
            resize("pitch", 2, 6),
            Edit("change the bolt count", apply=_flange_rf_recount),
        ),
        check=_flange_rf_check,
        words={
            "bolt circle": ("bolt circle", "pitch circle", "bolt-hole circle"),
            "raised face": ("raised face", "raised sealing face", "gasket face"),
            "weld neck": ("weld-neck", "welding-neck", "tapered-neck"),
        },
    ),
    Family(
        "hub_keyed",
        "a hub with a bore and a DIN 6885 keyway",
        ("hub", "hole", "keyway", "chamfer"),
        (
            Dimension("bore", "bore diameter", 12, 60),
            Dimension("key_width", "keyway width", 4, 18),
            Dimension("key_depth", "keyway depth in the hub", 1.8, 4.4),
            Dimension("diameter", "hub diameter", 19, 132),
            Dimension("length", "hub length", 10, 96),
            Dimension("chamfer", "outer edge chamfer", 0, 2.5),
        ),
        _hub_keyed,
        _hub_keyed_text,
        _hub_keyed_program,
        _hub_keyed_calls,
        _without("key_depth"),
        (
            resize("length", 1, 4),
            resize("diameter", 2, 6),
            Edit("add or remove the chamfers", apply=_hub_keyed_chamfer),
        ),
        check=_hub_keyed_check,
    ),
    Family(
        "shaft_keyway",
        "a two-step shaft with a DIN 6885 keyway milled in its upper step",
        ("step", "keyway"),
        (
            Dimension("diameter", "lower step diameter", 16, 62),
            Dimension("length1", "lower step length", 15, 155),
            Dimension("keyed", "keyed step diameter", 12, 50),
            Dimension("length2", "keyed step length", 20, 110),
            Dimension("key_width", "keyway width", 4, 14),
            Dimension("key_depth", "keyway depth in the shaft", 2.5, 5.5),
            Dimension("key_length", "keyway length", 10, 100),
        ),
        _shaft_keyway,
        _shaft_keyway_text,
        _shaft_keyway_program,
        _shaft_keyway_calls,
        _without("key_depth"),
        (
            resize("length1", 2, 6),
            resize("length2", 2, 6),
            Edit("change the keyway length", apply=_shaft_keyway_lengthen),
        ),
        check=_shaft_keyway_check,
    ),
    Family(
        "shaft_grooved",
        "a plain shaft with DIN 471 retaining-ring grooves",
        ("groove",),
        (
            Dimension("diameter", "shaft diameter", 30, 60),
            Dimension("length", "shaft length", 40, 240),
            Dimension("grooves", "number of grooves", 1, 2, unit="count"),
            Dimension("groove_diameter", "groove diameter", 28.6, 57),
            Dimension("groove_width", "groove width", 1.6, 2.15),
            Dimension("inset", "groove inset from the end", 3, 30),
        ),
        _shaft_grooved,
        _shaft_grooved_text,
        _shaft_grooved_program,
        _shaft_grooved_calls,
        _fewer("grooves"),
        (
            resize("length", 3, 10),
            resize("inset", 1.5, 4),
            Edit("add or remove a groove", apply=_shaft_grooved_toggle),
        ),
        check=_shaft_grooved_check,
        words={
            "grooves": ("grooves", "ring grooves", "circumferential recesses"),
            "retaining ring": ("retaining ring", "circlip", "snap ring"),
        },
    ),
    Family(
        "shaft_chamfered",
        "a two-step shaft with chamfered ends and a shoulder",
        ("step", "chamfer"),
        (
            Dimension("diameter1", "lower step diameter", 15, 60),
            Dimension("length1", "lower step length", 15, 100),
            Dimension("diameter2", "upper step diameter", 8, 56),
            Dimension("length2", "upper step length", 10, 80),
            Dimension("chamfer1", "bottom end chamfer", 1, 3),
            Dimension("chamfer2", "top end chamfer", 1, 3),
            Dimension("shoulder", "shoulder chamfer", 0, 2),
        ),
        _shaft_chamfered,
        _shaft_chamfered_text,
        _shaft_chamfered_program,
        _shaft_chamfered_calls,
        _without("chamfer2"),
        (
            resize("length1", 2, 8),
            resize("length2", 2, 8),
            Edit("chamfer the shoulder", apply=_shaft_chamfered_shoulder),
        ),
        check=_shaft_chamfered_check,
    ),
    Family(
        "shaft_threaded_end",
        "a shaft with a cosmetic metric thread end (a plain cylinder of the thread's diameter) "
        "and a DIN 76 undercut",
        ("step", "thread", "groove", "chamfer"),
        (
            Dimension("thread", "thread size", unit="choice", choices=tuple(THREADS)),
            Dimension("thread_diameter", "thread diameter", 8, 24),
            Dimension("diameter", "body diameter", 12, 44),
            Dimension("length", "body length", 15, 150),
            Dimension("thread_length", "thread length", 12, 72),
            Dimension("undercut_diameter", "undercut diameter", 6, 19.6),
            Dimension("undercut_width", "undercut width", 3, 10.5),
            Dimension("thread_chamfer", "thread end chamfer", 1.5, 3),
        ),
        _shaft_threaded,
        _shaft_threaded_text,
        _shaft_threaded_program,
        _shaft_threaded_calls,
        _without("undercut_width"),
        (resize("length", 2, 8), resize("thread_length", 2, 6)),
        check=_shaft_threaded_check,
        words={
            "thread": ("thread", "screw thread", "male thread"),
            "undercut": ("undercut", "thread undercut", "relief groove"),
        },
    ),
    Family(
        "collar_set_screw",
        "a shaft collar with chamfered edges and one or two radial set-screw holes (cosmetic "
        "threads: plain holes of the screw's diameter)",
        ("hole", "thread", "chamfer"),
        (
            Dimension("bore", "bore diameter", 8, 50),
            Dimension("diameter", "collar diameter", 16, 85),
            Dimension("width", "collar width", 7, 31),
            Dimension("chamfer", "edge chamfer", 0.5, 1.5),
            Dimension(
                "screw", "set screw size", unit="choice", choices=("M4", "M5", "M6", "M8", "M10")
            ),
            Dimension("screw_diameter", "set screw diameter", 4, 10),
            Dimension("screws", "number of set screws", 1, 2, unit="count"),
        ),
        _collar,
        _collar_text,
        _collar_program,
        _collar_calls,
        _fewer("screws"),
        (
            resize("width", 1, 4),
            resize("diameter", 2, 6),
            Edit("add or remove a set screw", apply=_collar_toggle),
        ),
        check=_collar_check,
        words={
            "collar": ("shaft collar", "set collar", "retaining collar"),
            "set screw": ("set-screw", "grub-screw", "locking-screw"),
        },
    ),
    Family(
        "bushing_flanged",
        "a flanged bushing, optionally with a radial oil hole",
        ("step", "hole"),
        (
            Dimension("bore", "bore diameter", 8, 50),
            Dimension("diameter", "sleeve diameter", 12, 64),
            Dimension("flange_diameter", "flange diameter", 18, 90),
            Dimension("flange_thickness", "flange thickness", 2, 6.5),
            Dimension("length", "bushing length", 10, 82),
            Dimension("oil_hole", "oil hole diameter", 0, 4),
        ),
        _bushing,
        _bushing_text,
        _bushing_program,
        _bushing_calls,
        lambda p: {**p, "flange_diameter": num(p["flange_diameter"]) + 3},
        (
            resize("length", 1, 4),
            resize("flange_diameter", 2, 6),
            Edit("add or remove the oil hole", apply=_bushing_oil),
        ),
        check=_bushing_check,
        words={
            "bushing": ("flanged bushing", "flanged sleeve bearing", "collar bush"),
            "sleeve": ("sleeve", "bearing sleeve", "barrel"),
            "oil hole": ("oil hole", "lubrication hole", "grease port"),
        },
    ),
)
