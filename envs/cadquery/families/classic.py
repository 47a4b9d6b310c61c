"""The first thirteen procedural families: a primitive, plates, a bracket, a channel, a finished
block, a shaft, a slotted plate, an enclosure, a pulley, a transition, a bent tube, a flange and
a pillow block.

Their ``spec`` prompts keep the hand-written wording they were first published with (the
``primitives`` and ``procedural`` suites, and the learning figures measured on them, stay as they
were); every other style says the same part from the sentences of ``text``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from toolgym.envs.cadquery.families import classic_calls as calls
from toolgym.envs.cadquery.families.model import (
    Dimension,
    Family,
    Params,
    fmt,
    mm,
    pts,
    resize,
    rule,
)
from toolgym.envs.cadquery.families.phrases import Phrases

# -- families ------------------------------------------------------------------------------------

PRIMITIVES = ("box", "cylinder", "sphere")


def _primitive(rng: np.random.Generator) -> Params:
    kind = PRIMITIVES[rng.integers(len(PRIMITIVES))]
    params: Params = {
        "kind": kind,
        "x": mm(rng, -30, 30),
        "y": mm(rng, -30, 30),
        "z": mm(rng, -20, 20),
    }
    if kind == "box":
        params.update(length=mm(rng, 5, 60), width=mm(rng, 5, 60), height=mm(rng, 3, 40))
    elif kind == "cylinder":
        params.update(diameter=mm(rng, 4, 50), height=mm(rng, 3, 50))
    else:
        params.update(diameter=mm(rng, 4, 50))
    return params


def _primitive_prompt(p: Params) -> str:
    at = f"centred at ({fmt(p['x'])}, {fmt(p['y'])}, {fmt(p['z'])}) mm"
    if p["kind"] == "box":
        size = f"{fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['height'])} mm"
        return f"A {size} block (X × Y × Z), {at}."
    if p["kind"] == "cylinder":
        size = f"{fmt(p['diameter'])} mm in diameter and {fmt(p['height'])} mm tall"
        return f"A cylinder {size} along Z, {at}."
    return f"A sphere {fmt(p['diameter'])} mm in diameter, {at}."


def _primitive_program(p: Params) -> str:
    at = f"({p['x']}, {p['y']}, {p['z']})"
    if p["kind"] == "box":
        shape = f"cq.Workplane('XY').box({p['length']}, {p['width']}, {p['height']})"
    elif p["kind"] == "cylinder":
        shape = f"cq.Workplane('XY').cylinder({p['height']}, {p['diameter']} / 2)"
    else:
        shape = f"cq.Workplane('XY').sphere({p['diameter']} / 2)"
    return f"result = {shape}.translate({at})\n"


def _plate_holes(rng: np.random.Generator) -> Params:
    length, width = mm(rng, 30, 120), mm(rng, 20, 80)
    hole = mm(rng, 2, min(length, width) / 6)
    inset = mm(rng, hole, min(length, width) / 3)
    return {
        "length": length,
        "width": width,
        "thickness": mm(rng, 2, 12),
        "hole": hole,
        "inset": inset,
    }


def _plate_holes_prompt(p: Params) -> str:
    return (
        f"A {fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['thickness'])} mm plate centred on the "
        f"origin with four {fmt(p['hole'])} mm through-holes, {fmt(p['inset'])} mm in from each "
        "corner along both edges."
    )


def _plate_holes_program(p: Params) -> str:
    dx, dy = p["length"] / 2 - p["inset"], p["width"] / 2 - p["inset"]
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane()\n"
        f"    .pushPoints([({dx}, {dy}), ({-dx}, {dy}), ({dx}, {-dy}), ({-dx}, {-dy})])\n"
        f"    .hole({p['hole']})\n"
        f")\n"
    )


def _l_bracket(rng: np.random.Generator) -> Params:
    thickness = mm(rng, 3, 8)
    length, height, width = mm(rng, 25, 70), mm(rng, 25, 70), mm(rng, 15, 50)
    hole = mm(rng, 3, min(width, length - thickness, height - thickness) / 2)
    return {
        "length": length,
        "height": height,
        "width": width,
        "thickness": thickness,
        "hole": hole,
    }


def _l_bracket_prompt(p: Params) -> str:
    return (
        f"An L-bracket bent from {fmt(p['thickness'])} mm plate, {fmt(p['width'])} mm wide along Y "
        f"and centred on Y = 0: a {fmt(p['length'])} mm horizontal leg lying on the XY plane along "
        f"+X and a {fmt(p['height'])} mm vertical leg rising along +Z, their outer faces meeting "
        f"along the Y axis (sharp corners). Each leg has one {fmt(p['hole'])} mm through-hole at "
        "y = 0, midway between the inside face of the other leg and the leg's end."
    )


def _l_bracket_program(p: Params) -> str:
    t, length, height = p["thickness"], p["length"], p["height"]
    profile = [(0, 0), (length, 0), (length, t), (t, t), (t, height), (0, height)]
    return (
        f"result = (\n"
        f"    cq.Workplane('XZ').polyline({pts(profile)}).close()\n"
        f"    .extrude({p['width'] / 2}, both=True)\n"
        f"    .cut(cq.Workplane('XY').center({(t + length) / 2}, 0)"
        f".circle({p['hole'] / 2}).extrude({3 * t}, both=True))\n"
        f"    .cut(cq.Workplane('YZ').center(0, {(t + height) / 2})"
        f".circle({p['hole'] / 2}).extrude({3 * t}, both=True))\n"
        f")\n"
    )


def _u_channel(rng: np.random.Generator) -> Params:
    width, height = mm(rng, 20, 60), mm(rng, 15, 50)
    thickness = mm(rng, 2, min(width, height) / 5)
    return {"length": mm(rng, 30, 150), "width": width, "height": height, "thickness": thickness}


def _u_channel_prompt(p: Params) -> str:
    return (
        f"A U-channel {fmt(p['length'])} mm long along Y, {fmt(p['width'])} mm wide (X) and "
        f"{fmt(p['height'])} mm tall (Z) overall, with {fmt(p['thickness'])} mm thick side walls "
        "and base and square corners, open at the top; base on the XY plane, centred on the "
        "origin in X and Y."
    )


def _u_channel_program(p: Params) -> str:
    w, h, t = p["width"] / 2, p["height"], p["thickness"]
    profile = [(-w, 0), (w, 0), (w, h), (w - t, h), (w - t, t), (t - w, t), (t - w, h), (-w, h)]
    return (
        f"result = (\n"
        f"    cq.Workplane('XZ').polyline({pts(profile)}).close()\n"
        f"    .extrude({p['length'] / 2}, both=True)\n"
        f")\n"
    )


EDGE_SETS = {
    "vertical": ("'|Z'", "its four vertical edges"),
    "top": ("'>Z'", "the four edges of its top face"),
    "all": ("", "all twelve edges"),
}


def _finished_block(rng: np.random.Generator) -> Params:
    length, width, height = mm(rng, 15, 80), mm(rng, 15, 80), mm(rng, 8, 50)
    return {
        "length": length,
        "width": width,
        "height": height,
        "edges": list(EDGE_SETS)[rng.integers(len(EDGE_SETS))],
        "operation": ("fillet", "chamfer")[rng.integers(2)],
        "size": mm(rng, 1, 0.3 * min(length, width, height)),
    }


def _finished_block_prompt(p: Params) -> str:
    finish = (
        f"rounded to a {fmt(p['size'])} mm radius"
        if p["operation"] == "fillet"
        else f"chamfered {fmt(p['size'])} mm at 45°"
    )
    return (
        f"A {fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['height'])} mm block (X × Y × Z) "
        f"centred on the origin, with {EDGE_SETS[str(p['edges'])][1]} {finish}."
    )


def _finished_block_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['height']})\n"
        f"    .edges({EDGE_SETS[str(p['edges'])][0]}).{p['operation']}({p['size']})\n"
        f")\n"
    )


def _stepped_shaft(rng: np.random.Generator) -> Params:
    params: Params = {"steps": int(rng.integers(2, 5))}
    previous = 0.0
    for i in range(1, int(params["steps"]) + 1):
        diameter = mm(rng, 6, 40)
        while abs(diameter - previous) < 3:
            diameter = mm(rng, 6, 40)
        params[f"diameter{i}"], params[f"length{i}"] = diameter, mm(rng, 5, 40)
        previous = diameter
    return params


def _stepped_shaft_prompt(p: Params) -> str:
    steps = [
        f"{fmt(p[f'diameter{i}'])} mm diameter × {fmt(p[f'length{i}'])} mm"
        for i in range(1, int(p["steps"]) + 1)
    ]
    return (
        f"A stepped shaft along the Z axis, its bottom end on the XY plane, made of "
        f"{p['steps']} coaxial cylindrical sections, from the bottom up: {', '.join(steps)}."
    )


def _stepped_shaft_program(p: Params) -> str:
    lines = [f"    cq.Workplane('XY').circle({p['diameter1'] / 2}).extrude({p['length1']})"]
    for i in range(2, int(p["steps"]) + 1):
        radius, length = p[f"diameter{i}"] / 2, p[f"length{i}"]
        lines.append(f"    .faces('>Z').workplane().circle({radius}).extrude({length})")
    return "result = (\n" + "\n".join(lines) + "\n)\n"


def _slotted_plate(rng: np.random.Generator) -> Params:
    length, width, slot_width = mm(rng, 50, 140), mm(rng, 30, 90), mm(rng, 3, 8)
    most = int((width - 8 - slot_width) // (slot_width + 3)) + 1
    count = int(rng.integers(1, min(4, most) + 1))
    pitch = mm(rng, slot_width + 3, (width - 8 - slot_width) / (count - 1)) if count > 1 else 0.0
    return {
        "length": length,
        "width": width,
        "thickness": mm(rng, 3, 10),
        "count": count,
        "slot_length": mm(rng, slot_width + 5, length - 12),
        "slot_width": slot_width,
        "pitch": pitch,
    }


def _slotted_plate_prompt(p: Params) -> str:
    slot = (
        f"{fmt(p['slot_length'])} mm long end to end and {fmt(p['slot_width'])} mm wide with "
        "round ends, running along X and centred in X"
    )
    plate = f"A {fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['thickness'])} mm plate"
    if p["count"] == 1:
        return f"{plate} centred on the origin with one through-slot, {slot} and Y."
    return (
        f"{plate} centred on the origin with {p['count']} parallel through-slots, each {slot}, "
        f"spaced {fmt(p['pitch'])} mm apart in Y and arranged symmetrically about the X axis."
    )


def _slotted_plate_program(p: Params) -> str:
    pattern = f".rarray(1, {p['pitch']}, 1, {p['count']})" if p["count"] > 1 else ""
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').box({p['length']}, {p['width']}, {p['thickness']})\n"
        f"    .faces('>Z').workplane(){pattern}\n"
        f"    .slot2D({p['slot_length']}, {p['slot_width']}).cutThruAll()\n"
        f")\n"
    )


def _enclosure(rng: np.random.Generator) -> Params:
    length, width, wall = mm(rng, 40, 120), mm(rng, 30, 90), mm(rng, 1.5, 4)
    return {
        "length": length,
        "width": width,
        "height": mm(rng, 15, 60),
        "wall": wall,
        "radius": mm(rng, wall + 1.5, min(length, width) / 4),
    }


def _enclosure_prompt(p: Params) -> str:
    return (
        f"An open-top enclosure {fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['height'])} mm "
        f"outside (X × Y × Z), base on the XY plane and centred on the Z axis, hollowed out to "
        f"{fmt(p['wall'])} mm thick walls and floor, with its four vertical outside edges rounded "
        f"to a {fmt(p['radius'])} mm radius (the inside corners follow at "
        f"{fmt(p['radius'] - p['wall'])} mm)."
    )


def _enclosure_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY')\n"
        f"    .box({p['length']}, {p['width']}, {p['height']}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({p['radius']})\n"
        f"    .faces('>Z').shell(-{p['wall']})\n"
        f")\n"
    )


def _v_pulley(rng: np.random.Generator) -> Params:
    diameter, width = mm(rng, 30, 100), mm(rng, 10, 30)
    bore = mm(rng, 5, diameter / 4)
    return {
        "diameter": diameter,
        "width": width,
        "bore": bore,
        "groove_depth": mm(rng, 2, min(diameter / 4, (diameter - bore) / 2 - 4)),
        "groove_width": mm(rng, width / 2, width - 2),
    }


def _v_pulley_prompt(p: Params) -> str:
    return (
        f"A V-groove pulley {fmt(p['diameter'])} mm in outside diameter and {fmt(p['width'])} mm "
        f"wide, lying with one face on the XY plane and centred on the Z axis, with a "
        f"{fmt(p['bore'])} mm through-bore. Around its rim runs a symmetric V-groove "
        f"{fmt(p['groove_width'])} mm wide at the outside diameter and {fmt(p['groove_depth'])} "
        "mm deep, with a sharp bottom at mid-width."
    )


def _v_pulley_program(p: Params) -> str:
    r, b, g, w = p["diameter"] / 2, p["width"], p["groove_depth"], p["groove_width"]
    land = (b - w) / 2
    profile = [
        (p["bore"] / 2, 0),
        (r, 0),
        (r, land),
        (r - g, b / 2),
        (r, b - land),
        (r, b),
        (p["bore"] / 2, b),
    ]
    return (
        f"result = (\n"
        f"    cq.Workplane('XZ').polyline({pts(profile)}).close()\n"
        f"    .revolve(360, (0, 0, 0), (0, 1, 0))\n"
        f")\n"
    )


def _transition(rng: np.random.Generator) -> Params:
    return {
        "length": mm(rng, 15, 70),
        "width": mm(rng, 15, 70),
        "diameter": mm(rng, 10, 60),
        "height": mm(rng, 15, 80),
    }


def _transition_prompt(p: Params) -> str:
    return (
        f"A solid rectangle-to-round transition piece centred on the Z axis: its base is a "
        f"{fmt(p['length'])} × {fmt(p['width'])} mm rectangle (X × Y) on the XY plane, its top a "
        f"{fmt(p['diameter'])} mm diameter circle {fmt(p['height'])} mm above, and its sides a "
        "smooth loft between the two."
    )


def _transition_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').rect({p['length']}, {p['width']})\n"
        f"    .workplane(offset={p['height']}).circle({p['diameter'] / 2})\n"
        f"    .loft()\n"
        f")\n"
    )


def _bent_tube(rng: np.random.Generator) -> Params:
    outside = mm(rng, 8, 30)
    return {
        "outside": outside,
        "wall": mm(rng, 1, outside / 4),
        "radius": mm(rng, outside, 3 * outside),
        "rise": mm(rng, 10, 80),
        "run": mm(rng, 10, 80),
    }


def _bent_tube_prompt(p: Params) -> str:
    return (
        f"A bent tube {fmt(p['outside'])} mm in outside diameter with a {fmt(p['wall'])} mm wall. "
        f"Its centreline starts at the origin, where the square-cut end face lies on the XY plane, "
        f"runs {fmt(p['rise'])} mm straight up the Z axis, bends 90° towards +X around a "
        f"{fmt(p['radius'])} mm centreline radius, then runs {fmt(p['run'])} mm straight along +X "
        "to a square-cut end."
    )


def _bent_tube_program(p: Params) -> str:
    rise, radius, run = p["rise"], p["radius"], p["run"]
    # The arc's midpoint at full precision: its ends stay tangent to the straights.
    mid = float(radius * (1 - np.cos(np.pi / 4))), float(rise + radius * np.sin(np.pi / 4))
    inside = p["outside"] / 2 - p["wall"]
    return (
        f"path = (\n"
        f"    cq.Workplane('XZ').lineTo(0, {rise})\n"
        f"    .threePointArc(({mid[0]!r}, {mid[1]!r}), ({radius}, {rise + radius}))\n"
        f"    .lineTo({radius + run}, {rise + radius})\n"
        f")\n"
        f"result = cq.Workplane('XY').circle({p['outside'] / 2}).circle({inside}).sweep(path)\n"
    )


def _flange(rng: np.random.Generator) -> Params:
    hub = mm(rng, 20, 50)
    hole = mm(rng, 4, 10)
    pitch = mm(rng, hub + hole + 4, hub + hole + 30)
    return {
        "diameter": mm(rng, pitch + hole + 6, pitch + hole + 20),
        "thickness": mm(rng, 5, 15),
        "hub": hub,
        "hub_height": mm(rng, 5, 25),
        "bore": mm(rng, 5, hub - 6),
        "holes": int(rng.integers(3, 9)),
        "hole": hole,
        "pitch": pitch,
    }


def _flange_prompt(p: Params) -> str:
    return (
        f"A round flange {fmt(p['diameter'])} mm in diameter and {fmt(p['thickness'])} mm thick, "
        f"base on the XY plane and centred on the Z axis, with a raised hub "
        f"{fmt(p['hub'])} mm in diameter standing {fmt(p['hub_height'])} mm above its top face, "
        f"a {fmt(p['bore'])} mm bore straight through hub and flange, and {p['holes']} bolt "
        f"holes {fmt(p['hole'])} mm in diameter through the flange, equally spaced on a "
        f"{fmt(p['pitch'])} mm bolt circle with the first on the +X axis."
    )


def _flange_program(p: Params) -> str:
    return (
        f"result = (\n"
        f"    cq.Workplane('XY').circle({p['diameter'] / 2}).extrude({p['thickness']})\n"
        f"    .faces('>Z').workplane().circle({p['hub'] / 2}).extrude({p['hub_height']})\n"
        f"    .faces('>Z').workplane().hole({p['bore']})\n"
        f"    .cut(\n"
        f"        cq.Workplane('XY').polarArray({p['pitch'] / 2}, 0, 360, {p['holes']})\n"
        f"        .circle({p['hole'] / 2}).extrude({p['thickness']})\n"
        f"    )\n"
        f")\n"
    )


def _pillow_block(rng: np.random.Generator) -> Params:
    bore = mm(rng, 8, 30)
    housing = mm(rng, bore + 8, bore + 20)  # housing diameter
    base = mm(rng, 6, 12)
    screw = mm(rng, 4, 8)
    counterbore = mm(rng, screw + 3, screw + 6)
    spacing = mm(rng, housing + counterbore + 4, housing + counterbore + 30)  # screw pitch
    return {
        "length": mm(rng, spacing + counterbore + 6, spacing + counterbore + 20),
        "width": mm(rng, counterbore + 6, max(counterbore + 8, housing)),
        "base": base,
        "centre_height": mm(rng, max(base + bore / 2 + 3, housing / 2 + 0.5), base + housing),
        "housing": housing,
        "bore": bore,
        "screw": screw,
        "counterbore": counterbore,
        "counterbore_depth": mm(rng, 1.5, base / 2),
        "spacing": spacing,
    }


def _pillow_block_prompt(p: Params) -> str:
    return (
        f"A pillow block with its base on the XY plane, centred on the origin in X and Y. A "
        f"{fmt(p['length'])} × {fmt(p['width'])} × {fmt(p['base'])} mm base (X × Y × Z) carries a "
        f"housing whose axis runs along Y at height z = {fmt(p['centre_height'])} mm: a "
        f"{fmt(p['housing'])} mm diameter cylinder through the full {fmt(p['width'])} mm width, "
        f"standing on a pedestal just as wide in X ({fmt(p['housing'])} mm) and through the full "
        f"width in Y, rising from the XY plane to the axis. A {fmt(p['bore'])} mm bore runs "
        f"through the housing on its axis. Two {fmt(p['screw'])} mm mounting holes pass through "
        f"the base at x = ±{fmt(p['spacing'] / 2)} mm, y = 0, counterbored "
        f"{fmt(p['counterbore'])} mm in diameter and {fmt(p['counterbore_depth'])} mm deep from "
        "the base's top face."
    )


def _pillow_block_program(p: Params) -> str:
    half, width, base, height = p["width"] / 2, p["width"], p["base"], p["centre_height"]
    points = f"[({p['spacing'] / 2}, 0), ({-p['spacing'] / 2}, 0)]"
    return (
        f"base = cq.Workplane('XY').box({p['length']}, {width}, {base}, "
        f"centered=(True, True, False))\n"
        f"pedestal = cq.Workplane('XY').box({p['housing']}, {width}, {height}, "
        f"centered=(True, True, False))\n"
        f"housing = cq.Workplane('XZ').center(0, {height}).circle({p['housing'] / 2})"
        f".extrude({half}, both=True)\n"
        f"bore = cq.Workplane('XZ').center(0, {height}).circle({p['bore'] / 2})"
        f".extrude({width}, both=True)\n"
        f"holes = cq.Workplane('XY').pushPoints({points}).circle({p['screw'] / 2})"
        f".extrude({base})\n"
        f"counterbores = (\n"
        f"    cq.Workplane('XY').workplane(offset={base - p['counterbore_depth']})\n"
        f"    .pushPoints({points}).circle({p['counterbore'] / 2})"
        f".extrude({p['counterbore_depth']})\n"
        f")\n"
        f"result = base.union(pedestal).union(housing).cut(bore).cut(holes).cut(counterbores)\n"
    )


# -- the same parts as sentences, for every style -----------------------------------------------


def _primitive_text(p: Params, q: Phrases) -> list[str]:
    at = f"{q.w('centred')} at {q.at(p['x'], p['y'], p['z'])}"
    if p["kind"] == "box":
        return [
            f"a {q.dims(p['length'], p['width'], p['height'])} {q.w('block')} (X × Y × Z), {at}"
        ]
    if p["kind"] == "cylinder":
        return [
            f"a cylinder of {q.len(p['diameter'])} {q.w('diameter')}, {q.len(p['height'])} "
            f"{q.w('tall')} {q.w('along')} Z, {at}"
        ]
    return [f"a sphere of {q.len(p['diameter'])} {q.w('diameter')}, {at}"]


def _plate_holes_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a {q.dims(p['length'], p['width'], p['thickness'])} {q.w('plate')} {q.w('centred')} "
        f"{q.w('on the origin')}",
        f"it has {q.count(4)} {q.dia(p['hole'], 'through-holes')}, {q.len(p['inset'])} "
        f"{q.w('in from')} {q.w('each')} {q.w('corner')} along both {q.w('edges')}",
    ]


def _l_bracket_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"an L-{q.w('bracket')} bent from {q.len(p['thickness'])} {q.w('plate')}, "
        f"{q.len(p['width'])} {q.w('wide')} {q.w('along')} Y and {q.w('centred')} on Y = 0",
        f"its horizontal {q.w('leg')}, {q.len(p['length'])} {q.w('long')}, lies on "
        f"{q.w('the XY plane')} {q.w('along')} +X",
        f"its vertical {q.w('leg')}, {q.len(p['height'])} {q.w('tall')}, rises {q.w('along')} +Z",
        f"the outer faces of the two {q.w('leg')}s meet {q.w('along')} the Y {q.w('axis')} with "
        f"sharp {q.w('corners')}",
        f"{q.w('each')} {q.w('leg')} has one {q.dia(p['hole'], 'through-hole')} at y = 0, midway "
        f"between the inside face of the other {q.w('leg')} and its own end",
    ]


def _u_channel_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a U-{q.w('channel')} {q.len(p['length'])} {q.w('long')} {q.w('along')} Y, open at the "
        f"top, its {q.w('base')} on {q.w('the XY plane')}, {q.w('centred')} "
        f"{q.w('on the origin')} in X and Y",
        f"overall it is {q.len(p['width'])} {q.w('wide')} in X and {q.len(p['height'])} "
        f"{q.w('tall')} in Z",
        f"its side {q.w('walls')} and {q.w('base')} are {q.len(p['thickness'])} {q.w('thick')}, "
        f"with square {q.w('corners')}",
    ]


_EDGE_WORDS = {"vertical": "its four vertical", "top": "the four top", "all": "all twelve"}


def _finished_block_text(p: Params, q: Phrases) -> list[str]:
    finish = (
        f"{q.w('rounded')} to a {q.radius(p['size'])}"
        if p["operation"] == "fillet"
        else f"{q.w('chamfered')} {q.len(p['size'])} at {q.deg(45)}"
    )
    return [
        f"a {q.dims(p['length'], p['width'], p['height'])} {q.w('block')} (X × Y × Z) "
        f"{q.w('centred')} {q.w('on the origin')}",
        f"{_EDGE_WORDS[str(p['edges'])]} {q.w('edges')} are {finish}",
    ]


def _stepped_shaft_text(p: Params, q: Phrases) -> list[str]:
    steps = [
        f"{q.len(p[f'diameter{i}'])} {q.w('diameter')} × {q.len(p[f'length{i}'])} {q.w('long')}"
        for i in range(1, int(p["steps"]) + 1)
    ]
    return [
        f"a stepped {q.w('shaft')} {q.w('along')} the Z {q.w('axis')}, its bottom end on "
        f"{q.w('the XY plane')}",
        f"it is made of {q.count(int(p['steps']))} coaxial cylindrical {q.w('steps')}, from the "
        f"bottom up: {', '.join(steps)}",
    ]


def _slotted_plate_text(p: Params, q: Phrases) -> list[str]:
    plate = (
        f"a {q.dims(p['length'], p['width'], p['thickness'])} {q.w('plate')} {q.w('centred')} "
        f"{q.w('on the origin')}"
    )
    slot = (
        f"{q.len(p['slot_length'])} {q.w('long')} end to end and {q.len(p['slot_width'])} "
        f"{q.w('wide')} with round ends, running {q.w('along')} X and {q.w('centred')} in X"
    )
    if p["count"] == 1:
        return [plate, f"one through-{q.w('slot')}, {slot}, is also {q.w('centred')} in Y"]
    return [
        plate,
        f"{q.count(int(p['count']))} parallel through-{q.w('slots')} are {q.w('cut')}, "
        f"{q.w('each')} {slot}",
        f"the {q.w('slots')} are {q.w('spaced')} {q.len(p['pitch'])} apart in Y, symmetric "
        f"{q.w('about')} the X {q.w('axis')}",
    ]


def _enclosure_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"an open-top {q.w('enclosure')} {q.dims(p['length'], p['width'], p['height'])} "
        f"outside (X × Y × Z), its {q.w('base')} on {q.w('the XY plane')}, {q.w('centred')} "
        f"on the Z {q.w('axis')}",
        f"it is hollowed out to {q.len(p['wall'])} {q.w('thick')} {q.w('walls')} and floor",
        f"its four vertical outside {q.w('edges')} are {q.w('rounded')} to a "
        f"{q.radius(p['radius'])}, the inside {q.w('corners')} following at a "
        f"{q.radius(float(p['radius']) - float(p['wall']))}",
    ]


def _v_pulley_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a V-groove {q.w('pulley')} of {q.len(p['diameter'])} outside {q.w('diameter')}, "
        f"{q.len(p['width'])} {q.w('wide')}, one face on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} it on its {q.w('axis')}",
        f"a symmetric V-{q.w('groove')} runs round its rim, {q.len(p['groove_width'])} "
        f"{q.w('wide')} at the outside {q.w('diameter')} and {q.len(p['groove_depth'])} "
        f"{q.w('deep')}, with a sharp bottom at mid-width",
    ]


def _transition_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a solid rectangle-to-round transition {q.w('part')} {q.w('centred')} on the Z "
        f"{q.w('axis')}, its sides a smooth loft between its two ends",
        f"its bottom end is a {q.dims(p['length'], p['width'])} rectangle (X × Y) on "
        f"{q.w('the XY plane')}",
        f"its top end is a circle of {q.len(p['diameter'])} {q.w('diameter')}, "
        f"{q.len(p['height'])} above {q.w('the XY plane')}",
    ]


def _bent_tube_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a bent {q.w('tube')} of {q.len(p['outside'])} outside {q.w('diameter')} with a "
        f"{q.len(p['wall'])} {q.w('wall')}, square-cut at both ends",
        f"its centreline starts at the origin, where its first end face lies on "
        f"{q.w('the XY plane')}, and runs {q.len(p['rise'])} straight up the Z {q.w('axis')}",
        f"it then turns {q.deg(90)} towards +X in a {q.w('bend')} of {q.len(p['radius'])} "
        f"centreline radius and runs {q.len(p['run'])} straight {q.w('along')} +X",
    ]


def _flange_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a round {q.w('flange')} of {q.len(p['diameter'])} {q.w('diameter')}, "
        f"{q.len(p['thickness'])} {q.w('thick')}, its {q.w('base')} on {q.w('the XY plane')}, "
        f"{q.w('centred')} on the Z {q.w('axis')}",
        f"a {q.w('hub')} of {q.len(p['hub'])} {q.w('diameter')} stands {q.len(p['hub_height'])} "
        f"above its top face",
        f"a {q.dia(p['bore'], 'bore')} runs straight {q.w('through')} {q.w('hub')} and "
        f"{q.w('flange')}",
        f"{q.count(int(p['holes']))} {q.dia(p['hole'], 'holes')} go {q.w('through')} the "
        f"{q.w('flange')}, {q.w('equally')} {q.w('spaced')} on a {q.len(p['pitch'])} bolt circle "
        f"with the first on the +X {q.w('axis')}",
    ]


def _pillow_block_text(p: Params, q: Phrases) -> list[str]:
    return [
        f"a pillow block, its {q.w('base')} on {q.w('the XY plane')}, {q.w('centred')} "
        f"{q.w('on the origin')} in X and Y",
        f"its {q.w('base')} is {q.dims(p['length'], p['width'], p['base'])} (X × Y × Z)",
        f"its {q.w('housing')} is a cylinder of {q.len(p['housing'])} {q.w('diameter')} whose "
        f"{q.w('axis')} runs {q.w('along')} Y at z = {q.len(p['centre_height'])}, {q.w('through')} "
        f"the full {q.len(p['width'])} width",
        f"the {q.w('housing')} stands on a pedestal {q.len(p['housing'])} {q.w('wide')} in X, "
        f"{q.w('through')} the full width in Y, rising from {q.w('the XY plane')} to the "
        f"{q.w('housing')} {q.w('axis')}",
        f"a {q.dia(p['bore'], 'bore')} runs {q.w('through')} the {q.w('housing')} on its "
        f"{q.w('axis')}",
        f"two {q.dia(p['screw'], 'holes')} pass {q.w('through')} the {q.w('base')} at "
        f"x = ±{q.len(float(p['spacing']) / 2)}, y = 0, {q.w('each')} with a "
        f"{q.dia(p['counterbore'], 'counterbore')} {q.len(p['counterbore_depth'])} "
        f"{q.w('deep')} from the {q.w('base')}'s top face",
    ]


# -- the families ---------------------------------------------------------------------------------


def _moved(name: str, by: float) -> Callable[[Params], Params]:
    """A near miss: one dimension off by ``by`` mm (a feature moved or resized)."""
    return lambda p: {**p, name: float(p[name]) + by}  # type: ignore[arg-type]


def _plate_holes_check(p: Params) -> str | None:
    small = min(float(p["length"]), float(p["width"]))  # type: ignore[arg-type]
    hole, inset = float(p["hole"]), float(p["inset"])  # type: ignore[arg-type]
    if not hole + 1 <= 2 * inset <= small - hole - 2:
        return "the holes must sit inside the plate with at least 1 mm of material round them"
    return None


def _shaft_check(p: Params) -> str | None:
    steps = int(p["steps"])  # type: ignore[arg-type]
    diameters = [float(p[f"diameter{i}"]) for i in range(1, steps + 1)]  # type: ignore[arg-type]
    if any(abs(a - b) < 3 for a, b in itertools.pairwise(diameters)):
        return "neighbouring steps must differ by at least 3 mm in diameter"
    return None


def _flange_check(p: Params) -> str | None:
    f = {k: float(v) for k, v in p.items() if not isinstance(v, str)}  # type: ignore[arg-type]
    if not f["bore"] + 4 <= f["hub"] <= f["pitch"] - f["hole"] - 2:
        return "the hub must clear the bore and the bolt holes"
    if f["pitch"] + f["hole"] + 4 > f["diameter"]:
        return "the bolt holes must sit inside the flange"
    return None


def _pillow_block_check(p: Params) -> str | None:
    f = {k: float(v) for k, v in p.items()}  # type: ignore[arg-type]
    if (
        not f["housing"] + f["counterbore"] + 4
        <= f["spacing"]
        <= f["length"] - f["counterbore"] - 4
    ):
        return "the screw holes must sit in the base, clear of the pedestal"
    if f["counterbore_depth"] > f["base"] / 2 + 0.25:
        return "the counterbores may take at most half the base's thickness"
    return None


FAMILY_GROUP: tuple[Family, ...] = (
    Family(
        "primitive",
        "one box, cylinder or sphere",
        ("primitive",),
        (
            Dimension("kind", "kind of solid", unit="choice", choices=PRIMITIVES),
            Dimension("x", "centre's x coordinate", -30, 30),
            Dimension("y", "centre's y coordinate", -30, 30),
            Dimension("z", "centre's z coordinate", -20, 20),
            Dimension("length", "length", 5, 60),
            Dimension("width", "width", 5, 60),
            Dimension("height", "height", 3, 50),
            Dimension("diameter", "diameter", 4, 50),
        ),
        _primitive,
        _primitive_text,
        _primitive_program,
        calls.primitive,
        _moved("x", 1.5),
        (resize("x", 3, 10), resize("y", 3, 10), resize("diameter", 2, 8)),
        prompt=_primitive_prompt,
    ),
    Family(
        "plate_holes",
        "a plate with four corner holes",
        ("hole", "pattern"),
        (
            Dimension("length", "plate length", 30, 120),
            Dimension("width", "plate width", 20, 80),
            Dimension("thickness", "plate thickness", 2, 12),
            Dimension("hole", "hole diameter", 2, 14),
            Dimension("inset", "holes' inset from the edges", 2, 27),
        ),
        _plate_holes,
        _plate_holes_text,
        _plate_holes_program,
        calls.plate_holes,
        _moved("inset", 1.5),
        (resize("thickness", 1, 4), resize("inset", 1.5, 5), resize("length", 5, 20)),
        check=_plate_holes_check,
        prompt=_plate_holes_prompt,
    ),
    Family(
        "u_channel",
        "a U-channel of constant wall",
        ("polygon",),
        (
            Dimension("length", "channel length", 30, 150),
            Dimension("width", "channel width", 20, 60),
            Dimension("height", "channel height", 15, 50),
            Dimension("thickness", "wall thickness", 2, 12),
        ),
        _u_channel,
        _u_channel_text,
        _u_channel_program,
        calls.u_channel,
        _moved("thickness", 1),
        (resize("length", 10, 40), resize("height", 3, 10)),
        check=rule(
            "the walls must leave the channel open",
            lambda f: 5 * f["thickness"] <= min(f["width"], f["height"]) + 2.5,
        ),
        prompt=_u_channel_prompt,
    ),
    Family(
        "finished_block",
        "a block with filleted or chamfered edges",
        ("primitive", "fillet", "chamfer"),
        (
            Dimension("length", "block length", 15, 80),
            Dimension("width", "block width", 15, 80),
            Dimension("height", "block height", 8, 50),
            Dimension("edges", "edges finished", unit="choice", choices=tuple(EDGE_SETS)),
            Dimension("operation", "finish", unit="choice", choices=("fillet", "chamfer")),
            Dimension("size", "fillet radius or chamfer size", 1, 15),
        ),
        _finished_block,
        _finished_block_text,
        _finished_block_program,
        calls.finished_block,
        lambda p: {**p, "operation": "chamfer" if p["operation"] == "fillet" else "fillet"},
        (resize("length", 5, 15), resize("height", 3, 8)),
        check=rule(
            "the finish is too large for the block",
            lambda f: f["size"] <= 0.3 * min(f["length"], f["width"], f["height"]) + 0.25,
        ),
        prompt=_finished_block_prompt,
    ),
    Family(
        "stepped_shaft",
        "a shaft of two to four coaxial steps",
        ("step", "revolve"),
        (
            Dimension("steps", "number of steps", 2, 4, unit="count"),
            *(Dimension(f"diameter{i}", f"step {i}'s diameter", 6, 40) for i in range(1, 5)),
            *(Dimension(f"length{i}", f"step {i}'s length", 5, 40) for i in range(1, 5)),
        ),
        _stepped_shaft,
        _stepped_shaft_text,
        _stepped_shaft_program,
        calls.stepped_shaft,
        _moved("length1", 2),
        (resize("length1", 3, 10), resize("length2", 3, 10)),
        check=_shaft_check,
        prompt=_stepped_shaft_prompt,
    ),
    Family(
        "l_bracket",
        "an L-bracket with a hole in each leg",
        ("bend", "hole"),
        (
            Dimension("length", "horizontal leg's length", 25, 70),
            Dimension("height", "vertical leg's height", 25, 70),
            Dimension("width", "bracket width", 15, 50),
            Dimension("thickness", "plate thickness", 3, 8),
            Dimension("hole", "hole diameter", 3, 25),
        ),
        _l_bracket,
        _l_bracket_text,
        _l_bracket_program,
        calls.l_bracket,
        _moved("hole", 1.5),
        (resize("length", 5, 15), resize("height", 5, 15)),
        check=rule(
            "the holes must fit in the legs",
            lambda f: (
                f["hole"] + 2
                <= min(f["width"], f["length"] - f["thickness"], f["height"] - f["thickness"])
            ),
        ),
        prompt=_l_bracket_prompt,
    ),
    Family(
        "slotted_plate",
        "a plate with parallel round-ended slots",
        ("slot", "pattern"),
        (
            Dimension("length", "plate length", 50, 140),
            Dimension("width", "plate width", 30, 90),
            Dimension("thickness", "plate thickness", 3, 10),
            Dimension("count", "number of slots", 1, 4, unit="count"),
            Dimension("slot_length", "slot length", 8, 128),
            Dimension("slot_width", "slot width", 3, 8),
            Dimension("pitch", "slot pitch", 0, 80),
        ),
        _slotted_plate,
        _slotted_plate_text,
        _slotted_plate_program,
        calls.slotted_plate,
        _moved("slot_length", -3),
        (resize("thickness", 1, 3), resize("slot_length", 4, 12)),
        check=rule(
            "the slots must fit in the plate",
            lambda f: (
                f["slot_width"] + 5 <= f["slot_length"] <= f["length"] - 12
                and (f["count"] - 1) * f["pitch"] + f["slot_width"] <= f["width"] - 8
            ),
        ),
        prompt=_slotted_plate_prompt,
    ),
    Family(
        "enclosure",
        "an open-top shelled enclosure with rounded corners",
        ("shell", "fillet"),
        (
            Dimension("length", "enclosure length", 40, 120),
            Dimension("width", "enclosure width", 30, 90),
            Dimension("height", "enclosure height", 15, 60),
            Dimension("wall", "wall thickness", 1.5, 4),
            Dimension("radius", "corner radius", 3, 30),
        ),
        _enclosure,
        _enclosure_text,
        _enclosure_program,
        calls.enclosure,
        _moved("wall", 1),
        (resize("height", 5, 15), resize("length", 5, 20)),
        check=rule(
            "the corner radius must exceed the wall and fit the box",
            lambda f: f["wall"] + 1.5 <= f["radius"] <= min(f["length"], f["width"]) / 4 + 0.25,
        ),
        prompt=_enclosure_prompt,
    ),
    Family(
        "v_pulley",
        "a V-groove pulley with a bore",
        ("revolve", "groove"),
        (
            Dimension("diameter", "pulley diameter", 30, 100),
            Dimension("width", "pulley width", 10, 30),
            Dimension("bore", "bore diameter", 5, 25),
            Dimension("groove_depth", "groove depth", 2, 25),
            Dimension("groove_width", "groove width", 5, 28),
        ),
        _v_pulley,
        _v_pulley_text,
        _v_pulley_program,
        calls.v_pulley,
        _moved("groove_depth", 2),
        (resize("width", 2, 6), resize("diameter", 5, 15)),
        check=rule(
            "the groove must fit in the rim",
            lambda f: (
                f["groove_width"] <= f["width"] - 2
                and f["groove_depth"] <= (f["diameter"] - f["bore"]) / 2 - 4
            ),
        ),
        prompt=_v_pulley_prompt,
    ),
    Family(
        "transition",
        "a rectangle-to-round lofted transition",
        ("loft",),
        (
            Dimension("length", "base length", 15, 70),
            Dimension("width", "base width", 15, 70),
            Dimension("diameter", "top diameter", 10, 60),
            Dimension("height", "height", 15, 80),
        ),
        _transition,
        _transition_text,
        _transition_program,
        calls.transition,
        _moved("diameter", 3),
        (resize("height", 5, 20), resize("diameter", 4, 12)),
        prompt=_transition_prompt,
    ),
    Family(
        "bent_tube",
        "a tube swept round one 90° bend",
        ("sweep", "bend"),
        (
            Dimension("outside", "outside diameter", 8, 30),
            Dimension("wall", "wall thickness", 1, 7.5),
            Dimension("radius", "bend radius", 8, 90),
            Dimension("rise", "straight rise", 10, 80),
            Dimension("run", "straight run", 10, 80),
        ),
        _bent_tube,
        _bent_tube_text,
        _bent_tube_program,
        calls.bent_tube,
        _moved("rise", 3),
        (resize("rise", 5, 20), resize("run", 5, 20)),
        check=rule(
            "the bend must be no tighter than the tube's diameter",
            lambda f: f["outside"] <= f["radius"] and f["wall"] <= f["outside"] / 4 + 0.25,
        ),
        prompt=_bent_tube_prompt,
    ),
    Family(
        "flange",
        "a hubbed flange with a bolt circle",
        ("hub", "hole", "bolt_circle"),
        (
            Dimension("diameter", "flange diameter", 40, 170),
            Dimension("thickness", "flange thickness", 5, 15),
            Dimension("hub", "hub diameter", 20, 50),
            Dimension("hub_height", "hub height", 5, 25),
            Dimension("bore", "bore diameter", 5, 44),
            Dimension("holes", "number of bolt holes", 3, 8, unit="count"),
            Dimension("hole", "bolt hole diameter", 4, 10),
            Dimension("pitch", "bolt circle diameter", 28, 90),
        ),
        _flange,
        _flange_text,
        _flange_program,
        calls.flange,
        lambda p: {**p, "holes": int(p["holes"]) - 1},  # type: ignore[arg-type]
        (resize("thickness", 2, 4), resize("hub_height", 3, 8), resize("bore", 2, 6)),
        check=_flange_check,
        prompt=_flange_prompt,
    ),
    Family(
        "pillow_block",
        "a pillow block with a bored housing and counterbored feet",
        ("primitive", "hole", "counterbore", "boss"),
        (
            Dimension("length", "base length", 40, 140),
            Dimension("width", "base width", 10, 60),
            Dimension("base", "base thickness", 6, 12),
            Dimension("centre_height", "axis height", 10, 64),
            Dimension("housing", "housing diameter", 16, 50),
            Dimension("bore", "bore diameter", 8, 30),
            Dimension("screw", "screw hole diameter", 4, 8),
            Dimension("counterbore", "counterbore diameter", 7, 14),
            Dimension("counterbore_depth", "counterbore depth", 1.5, 6),
            Dimension("spacing", "screw spacing", 27, 114),
        ),
        _pillow_block,
        _pillow_block_text,
        _pillow_block_program,
        calls.pillow_block,
        _moved("spacing", 3),
        (resize("base", 1, 3), resize("spacing", 2, 6)),
        check=_pillow_block_check,
        prompt=_pillow_block_prompt,
    ),
)
