"""The procedural families' references as sequences of CadQuery tool calls (tool mode).

Each function turns a family's parameters into the calls ``{"name": ..., "arguments": {...}}``
that build the same part as the family's reference program, with the tools of
``toolgym.envs.cadquery.tools`` (lengths in mm, Z up). Families whose parts need an operation the
tool set has since gained (a loft, a sweep) use them: ``transition`` and ``bent_tube``.
"""

from __future__ import annotations

import math

from toolgym.envs.cadquery.families.model import Call, Params, call, num


def primitive(p: Params) -> list[Call]:
    at = {"x": num(p["x"]), "y": num(p["y"]), "z": num(p["z"])}
    if p["kind"] == "box":
        size = {k: num(p[k]) for k in ("length", "width", "height")}
        return [call("add_box", **size, **at)]
    if p["kind"] == "cylinder":
        return [call("add_cylinder", diameter=num(p["diameter"]), height=num(p["height"]), **at)]
    return [call("add_sphere", diameter=num(p["diameter"]), **at)]


def plate_holes(p: Params) -> list[Call]:
    dx, dy = num(p["length"]) / 2 - num(p["inset"]), num(p["width"]) / 2 - num(p["inset"])
    plate = call(
        "add_box", length=num(p["length"]), width=num(p["width"]), height=num(p["thickness"])
    )
    holes = [
        call("cut_hole", diameter=num(p["hole"]), x=sx * dx, y=sy * dy)
        for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1))
    ]
    return [plate, *holes]


def u_channel(p: Params) -> list[Call]:
    width, length, height, t = (
        num(p["width"]),
        num(p["length"]),
        num(p["height"]),
        num(p["thickness"]),
    )
    # The open inside cut a little past the top, so no skin of the block's top face is left.
    inside = height - t + 1
    return [
        call("add_box", length=width, width=length, height=height, z=height / 2),
        call("cut_box", length=width - 2 * t, width=length + 2, height=inside, z=t + inside / 2),
    ]


def finished_block(p: Params) -> list[Call]:
    edges = {"vertical": "|Z", "top": ">Z", "all": "all"}[str(p["edges"])]
    block = call("add_box", length=num(p["length"]), width=num(p["width"]), height=num(p["height"]))
    if p["operation"] == "fillet":
        return [block, call("fillet_edges", radius=num(p["size"]), edges=edges)]
    return [block, call("chamfer_edges", length=num(p["size"]), edges=edges)]


def stepped_shaft(p: Params) -> list[Call]:
    calls, bottom = [], 0.0
    for i in range(1, int(p["steps"]) + 1):
        length = num(p[f"length{i}"])
        calls.append(
            call(
                "add_cylinder",
                diameter=num(p[f"diameter{i}"]),
                height=length,
                z=bottom + length / 2,
            )
        )
        bottom += length
    return calls


def l_bracket(p: Params) -> list[Call]:
    t, length, height, width = (
        num(p["thickness"]),
        num(p["length"]),
        num(p["height"]),
        num(p["width"]),
    )
    return [
        call("add_box", length=length, width=width, height=t, x=length / 2, z=t / 2),
        call("add_box", length=t, width=width, height=height, x=t / 2, z=height / 2),
        call("cut_hole", diameter=num(p["hole"]), x=(t + length) / 2),
        call(
            "cut_cylinder",
            diameter=num(p["hole"]),
            height=3 * t,
            x=t / 2,
            z=(t + height) / 2,
            axis="X",
        ),
    ]


def slotted_plate(p: Params) -> list[Call]:
    """Each round-ended slot as a box between two holes of the slot's width."""
    thickness, count, pitch = num(p["thickness"]), int(p["count"]), num(p["pitch"])
    slot_length, slot_width = num(p["slot_length"]), num(p["slot_width"])
    straight = slot_length - slot_width
    calls = [call("add_box", length=num(p["length"]), width=num(p["width"]), height=thickness)]
    for k in range(count):
        y = (k - (count - 1) / 2) * pitch
        calls.append(call("cut_box", length=straight, width=slot_width, height=thickness + 2, y=y))
        calls += [call("cut_hole", diameter=slot_width, x=s * straight / 2, y=y) for s in (1, -1)]
    return calls


def enclosure(p: Params) -> list[Call]:
    height = num(p["height"])
    return [
        call(
            "add_box", length=num(p["length"]), width=num(p["width"]), height=height, z=height / 2
        ),
        call("fillet_edges", radius=num(p["radius"]), edges="|Z"),
        call("shell", thickness=num(p["wall"]), open_face=">Z"),
    ]


def v_pulley(p: Params) -> list[Call]:
    r, b, g, w = (
        num(p["diameter"]) / 2,
        num(p["width"]),
        num(p["groove_depth"]),
        num(p["groove_width"]),
    )
    land, bore = (b - w) / 2, num(p["bore"]) / 2
    profile = [[bore, 0], [r, 0], [r, land], [r - g, b / 2], [r, b - land], [r, b], [bore, b]]
    return [call("revolve_profile", points=[[round(a, 4), round(z, 4)] for a, z in profile])]


def flange(p: Params) -> list[Call]:
    thickness, hub_height, holes = num(p["thickness"]), num(p["hub_height"]), int(p["holes"])
    radius = num(p["pitch"]) / 2
    calls = [
        call("add_cylinder", diameter=num(p["diameter"]), height=thickness, z=thickness / 2),
        call(
            "add_cylinder", diameter=num(p["hub"]), height=hub_height, z=thickness + hub_height / 2
        ),
        call("cut_hole", diameter=num(p["bore"])),
    ]
    for k in range(holes):
        angle = 2 * math.pi * k / holes
        x, y = radius * math.cos(angle), radius * math.sin(angle)
        calls.append(call("cut_hole", diameter=num(p["hole"]), x=x, y=y))
    return calls


def pillow_block(p: Params) -> list[Call]:
    width, base, height = num(p["width"]), num(p["base"]), num(p["centre_height"])
    half_spacing, depth = num(p["spacing"]) / 2, num(p["counterbore_depth"])
    calls = [
        call("add_box", length=num(p["length"]), width=width, height=base, z=base / 2),
        call("add_box", length=num(p["housing"]), width=width, height=height, z=height / 2),
        call("add_cylinder", diameter=num(p["housing"]), height=width, z=height, axis="Y"),
        call("cut_cylinder", diameter=num(p["bore"]), height=2 * width, z=height, axis="Y"),
    ]
    for x in (half_spacing, -half_spacing):
        calls.append(call("cut_hole", diameter=num(p["screw"]), x=x))
        # Counterbores run on 1 mm past the base's top face: no coplanar cut.
        calls.append(
            call(
                "cut_cylinder",
                diameter=num(p["counterbore"]),
                height=depth + 1,
                x=x,
                z=base - depth + (depth + 1) / 2,
            )
        )
    return calls


def transition(p: Params) -> list[Call]:
    return [
        call(
            "loft",
            bottom="rect",
            bottom_size=num(p["length"]),
            bottom_size2=num(p["width"]),
            top="circle",
            top_size=num(p["diameter"]),
            height=num(p["height"]),
        )
    ]


def bent_tube(p: Params) -> list[Call]:
    rise, radius, run = num(p["rise"]), num(p["radius"]), num(p["run"])
    path = [[0.0, 0.0], [0.0, rise + radius], [radius + run, rise + radius]]
    inside = num(p["outside"]) - 2 * num(p["wall"])
    return [
        call(
            "sweep",
            profile="tube",
            size=num(p["outside"]),
            size2=inside,
            path=path,
            plane="XZ",
            bend_radius=radius,
        )
    ]
