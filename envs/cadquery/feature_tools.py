"""Feature tools of industrial parts, on the CadQuery registry: holes by callout, slots, pockets,
patterns, sweeps, lofts, mirrors and revolved cuts.

"The part's top" is the top of its bounding box (its highest z); features cut from the top start
there and go down (-Z), so a through cut leaves the part's bottom. Lengths in mm, angles in
degrees, Z up, like every tool in :mod:`toolgym.envs.cadquery.tools`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any

from toolgym.envs.cadquery.base_tools import (
    Coordinate,
    Length,
    Points,
    _check_polygon,
    _check_profile,
    _cut,
    _fuse,
    registry,
)
from toolgym.envs.tools import Param, ToolCallError

Depth = Annotated[float, Param("mm", 0.0, 500.0, 0.5)]
Size = Annotated[float, Param("mm", 0.0, 500.0, 0.5)]
Angle = Annotated[float, Param("deg", -360.0, 360.0, 15.0)]
Count = Annotated[int, Param(None, 1, 64, 1)]
Feature = Annotated[str, Param(choices=("hole", "boss", "pocket", "slot"))]
Plane = Annotated[str, Param(choices=("XY", "XZ", "YZ"))]
Profile = Annotated[str, Param(choices=("circle", "rect", "square"))]

_OVERSHOOT = 1.0  # mm a cutter reaches past the faces it opens, so no face is left coplanar
_EPS = 1e-9


# -- helpers ----------------------------------------------------------------------------------
def _top(part: Any) -> Any:
    return part.val().BoundingBox()


def _span(box: Any, top: float, depth: float) -> tuple[float, float]:
    """(bottom, height) of a cutter from above ``top`` down ``depth`` (0: through the part)."""
    bottom = box.zmin - _OVERSHOOT if depth == 0 else top - depth
    return bottom, top + _OVERSHOOT - bottom


def _workplane(*shapes: Any) -> Any:
    import cadquery as cq

    shape = shapes[0] if len(shapes) == 1 else cq.Compound.makeCompound(list(shapes))
    return cq.Workplane("XY").add(shape)


def _removing(part: Any, cutter: Any, tool: str, what: str) -> Any:
    """:func:`_cut`, and an error when the cutter lies in the part's box but removes nothing."""
    before = part.val().Volume()
    result = _cut(part, cutter, tool, what)
    if result.val().Volume() >= before * (1 - 1e-9):
        raise ToolCallError(f"{tool}: the {what} removes nothing: there is no material there")
    return result


def _one_solid(result: Any, tool: str, what: str) -> Any:
    solids = result.solids().vals()
    if len(solids) != 1:
        raise ToolCallError(
            f"{tool}: {what} does not touch the part, so the result would be "
            f"{len(solids)} separate solids; move it to overlap the part"
        )
    return result


def _cylinder_z(diameter: float, bottom: float, height: float, x: float, y: float) -> Any:
    import cadquery as cq

    return cq.Solid.makeCylinder(diameter / 2, height, cq.Vector(x, y, bottom), cq.Vector(0, 0, 1))


def _slot_z(
    length: float, width: float, angle: float, x: float, y: float, bottom: float, height: float
) -> Any:
    import cadquery as cq

    sketch = cq.Workplane("XY", origin=(x, y, bottom)).slot2D(length, width, angle)
    return sketch.extrude(height).val()


def _rect_z(
    size_x: float, size_y: float, angle: float, x: float, y: float, bottom: float, height: float
) -> Any:
    import cadquery as cq

    box = cq.Solid.makeBox(size_x, size_y, height, cq.Vector(-size_x / 2, -size_y / 2, bottom))
    if angle:
        box = box.rotate(cq.Vector(), cq.Vector(0, 0, 1), angle)
    return box.translate(cq.Vector(x, y, 0))


# -- hole -------------------------------------------------------------------------------------
def _check_hole(a: dict[str, Any]) -> str | None:
    d, cbd, cbh, csd = (
        a["diameter"],
        a["counterbore_diameter"],
        a["counterbore_depth"],
        a["countersink_diameter"],
    )
    if (cbd > 0) != (cbh > 0):
        return "a counterbore needs both counterbore_diameter and counterbore_depth > 0"
    if cbd > 0 and csd > 0:
        return "a hole takes a counterbore or a countersink, not both"
    if cbd > 0 and cbd <= d:
        return f"counterbore_diameter {cbd:g} mm must exceed the hole diameter {d:g} mm"
    if csd > 0 and csd <= d:
        return f"countersink_diameter {csd:g} mm must exceed the hole diameter {d:g} mm"
    depth = a["depth"]
    if depth > 0 and cbh >= depth:
        return f"counterbore_depth {cbh:g} mm must be less than the hole depth {depth:g} mm"
    if depth > 0 and csd > 0:
        sink = (csd - d) / 2 / math.tan(math.radians(a["countersink_angle"]) / 2)
        if sink >= depth:
            return f"the countersink ({sink:g} mm deep) must be shallower than the hole ({depth:g})"
    return None


@registry.tool(
    needs_part=True, check=_check_hole, failure="could not drill the hole at ({x:g}, {y:g})"
)
def hole(
    part: Any,
    diameter: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    depth: Depth = 0.0,
    counterbore_diameter: Size = 0.0,
    counterbore_depth: Depth = 0.0,
    countersink_diameter: Size = 0.0,
    countersink_angle: Annotated[float, Param("deg", 30.0, 150.0, 1.0)] = 90.0,
) -> Any:
    """Drill a hole by callout straight down (-Z) from the part's top (its highest z) at (x, y).

    Args:
        diameter: hole diameter.
        x: hole centre X.
        y: hole centre Y.
        depth: depth from the top, flat-bottomed; 0 drills through the part.
        counterbore_diameter: counterbore diameter at the top, > diameter; 0 for none.
        counterbore_depth: counterbore depth from the top; 0 for none.
        countersink_diameter: countersink diameter at the top, > diameter; 0 for none.
        countersink_angle: countersink included angle.
    """
    import cadquery as cq

    box = _top(part)
    top = box.zmax
    bottom, height = _span(box, top, depth)
    cutters = [_cylinder_z(diameter, bottom, height, x, y)]
    if counterbore_diameter > 0:
        bore = counterbore_depth + _OVERSHOOT
        cutters.append(_cylinder_z(counterbore_diameter, top - counterbore_depth, bore, x, y))
    if countersink_diameter > 0:
        slope = math.tan(math.radians(countersink_angle) / 2)
        sink = (countersink_diameter - diameter) / 2 / slope
        cone = cq.Solid.makeCone(
            diameter / 2,
            countersink_diameter / 2 + _OVERSHOOT * slope,
            sink + _OVERSHOOT,
            cq.Vector(x, y, top - sink),
            cq.Vector(0, 0, 1),
        )
        cutters.append(cone)
    cutter = cutters[0].fuse(*cutters[1:]) if len(cutters) > 1 else cutters[0]
    return _removing(part, _workplane(cutter), "hole", f"hole at ({x:g}, {y:g})")


# -- slot and polygon -------------------------------------------------------------------------
def _check_slot(a: dict[str, Any]) -> str | None:
    if a["length"] <= a["width"]:
        return f"length {a['length']:g} mm (end to end) must exceed width {a['width']:g} mm"
    return None


@registry.tool(
    needs_part=True, check=_check_slot, failure="could not cut the slot at ({x:g}, {y:g})"
)
def cut_slot(
    part: Any,
    length: Length,
    width: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    angle: Angle = 0.0,
    depth: Depth = 0.0,
) -> Any:
    """Cut a round-ended slot down (-Z) from the part's top (its highest z).

    Args:
        length: end-to-end length, > width.
        width: slot width (the ends' diameter).
        x: slot centre X.
        y: slot centre Y.
        angle: the long axis' angle from +X, counter-clockwise seen from +Z.
        depth: depth from the top; 0 cuts through the part.
    """
    box = _top(part)
    bottom, height = _span(box, box.zmax, depth)
    slot = _slot_z(length, width, angle, x, y, bottom, height)
    return _removing(part, _workplane(slot), "cut_slot", f"slot at ({x:g}, {y:g})")


@registry.tool(
    needs_part=True,
    check=_check_polygon,
    failure="the polygon does not make a cutter (its sides must not cross)",
)
def cut_polygon(part: Any, points: Points, depth: Depth = 0.0) -> Any:
    """Cut a closed polygon pocket or cut-out down (-Z) from the part's top (its highest z).

    Args:
        points: polygon corners [x, y], at least 3, in order.
        depth: depth from the top; 0 cuts through the part.
    """
    import cadquery as cq

    box = _top(part)
    bottom, height = _span(box, box.zmax, depth)
    sketch = cq.Workplane("XY", origin=(0, 0, bottom)).polyline([tuple(p) for p in points])
    return _removing(part, sketch.close().extrude(height), "cut_polygon", "polygon")


# -- patterns ---------------------------------------------------------------------------------
def _check_feature(a: dict[str, Any]) -> str | None:
    feature, size, depth, length = a["feature"], a["size"], a["depth"], a["length"]
    if size <= 0:
        return f"a {feature} needs size > 0"
    if feature == "boss" and depth <= 0:
        return "a boss needs depth > 0: its height above the part's top"
    if feature in ("hole", "boss") and length != 0:
        return f"length is for a pocket or slot; leave it 0 for a {feature}"
    if feature in ("pocket", "slot") and length <= 0:
        return f"a {feature} needs length > 0"
    if feature == "slot" and length <= size:
        return f"a slot's length {length:g} mm (end to end) must exceed its width (size {size:g})"
    return None


def _check_linear(a: dict[str, Any]) -> str | None:
    for axis in ("x", "y"):
        count, pitch = a[f"count_{axis}"], a[f"pitch_{axis}"]
        if count < 1:
            return f"count_{axis} must be at least 1"
        if count > 1 and pitch <= 0:
            return f"count_{axis} {count} needs pitch_{axis} > 0"
    return _check_feature(a)


def _check_polar(a: dict[str, Any]) -> str | None:
    if a["count"] < 1:
        return "count must be at least 1"
    return _check_feature(a)


def _pattern(
    part: Any,
    tool: str,
    feature: str,
    size: float,
    depth: float,
    length: float,
    places: list[tuple[float, float, float]],
) -> Any:
    """``feature`` at each (x, y, angle) of ``places``: cut down from the top, or (a boss) fused
    standing on it."""
    box = _top(part)
    top = box.zmax
    if feature == "boss":
        bosses = [_cylinder_z(size, top, depth, x, y) for x, y, _ in places]
        result = part.union(_workplane(*bosses))
        return _one_solid(result, tool, "a boss standing on the part's top")
    bottom, height = _span(box, top, depth)
    cutters = []
    for x, y, angle in places:
        if feature == "hole":
            cutters.append(_cylinder_z(size, bottom, height, x, y))
        elif feature == "pocket":
            cutters.append(_rect_z(size, length, angle, x, y, bottom, height))
        else:
            cutters.append(_slot_z(length, size, angle, x, y, bottom, height))
    for k, (cutter, (x, y, _)) in enumerate(zip(cutters, places, strict=True)):
        c = cutter.BoundingBox()
        if c.xmax < box.xmin or box.xmax < c.xmin or c.ymax < box.ymin or box.ymax < c.ymin:
            raise ToolCallError(
                f"{tool}: {feature} {k + 1} of {len(places)} at ({x:g}, {y:g}) misses the part, "
                f"which spans x {box.xmin:g}..{box.xmax:g}, y {box.ymin:g}..{box.ymax:g} mm"
            )
    return _removing(part, _workplane(*cutters), tool, f"pattern of {len(places)} {feature}s")


@registry.tool(
    needs_part=True, check=_check_linear, failure="could not make the pattern of {feature}s"
)
def pattern_linear(
    part: Any,
    feature: Feature,
    size: Size,
    count_x: Count = 1,
    count_y: Count = 1,
    pitch_x: Depth = 0.0,
    pitch_y: Depth = 0.0,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    depth: Depth = 0.0,
    length: Depth = 0.0,
) -> Any:
    """A grid of count_x by count_y features centred on (x, y), at the part's top (highest z).

    Args:
        feature: hole (diameter size, cut down), boss (cylinder diameter size, depth tall, on the
            top), pocket (rectangle size along X by length along Y, cut down) or slot (round-ended,
            length end to end along X, size wide, cut down).
        size: hole or boss diameter, pocket size along X, slot width.
        count_x: features along X.
        count_y: features along Y.
        pitch_x: centre-to-centre spacing along X.
        pitch_y: centre-to-centre spacing along Y.
        x: grid centre X.
        y: grid centre Y.
        depth: cut depth from the top (0 through), or a boss's height.
        length: pocket size along Y, or slot length; 0 for holes and bosses.
    """
    places = [
        (x + (i - (count_x - 1) / 2) * pitch_x, y + (j - (count_y - 1) / 2) * pitch_y, 0.0)
        for j in range(count_y)
        for i in range(count_x)
    ]
    return _pattern(part, "pattern_linear", feature, size, depth, length, places)


@registry.tool(
    needs_part=True, check=_check_polar, failure="could not make the pattern of {feature}s"
)
def pattern_polar(
    part: Any,
    feature: Feature,
    size: Size,
    count: Count,
    pitch_diameter: Length,
    start_angle: Angle = 0.0,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    depth: Depth = 0.0,
    length: Depth = 0.0,
) -> Any:
    """Count features equally spaced on a circle centred on (x, y), at the part's top (highest z).

    Args:
        feature: hole (diameter size, cut down), boss (cylinder diameter size, depth tall, on the
            top), pocket (rectangle size radially by length tangentially, cut down) or slot
            (round-ended, length end to end radially, size wide, cut down).
        size: hole or boss diameter, pocket size radially, slot width.
        count: how many features, 360/count degrees apart.
        pitch_diameter: diameter of the circle through the features' centres.
        start_angle: the first feature's angle from +X, counter-clockwise seen from +Z.
        x: circle centre X.
        y: circle centre Y.
        depth: cut depth from the top (0 through), or a boss's height.
        length: pocket size tangentially, or slot length; 0 for holes and bosses.
    """
    places = []
    for k in range(count):
        angle = start_angle + 360.0 * k / count
        a = math.radians(angle)
        r = pitch_diameter / 2
        places.append((x + r * math.cos(a), y + r * math.sin(a), angle))
    return _pattern(part, "pattern_polar", feature, size, depth, length, places)


# -- sweep ------------------------------------------------------------------------------------
_PLANES = {  # (a, b) -> 3D, and the plane's normal
    "XY": (lambda a, b: (a, b, 0.0), (0.0, 0.0, 1.0)),
    "XZ": (lambda a, b: (a, 0.0, b), (0.0, -1.0, 0.0)),
    "YZ": (lambda a, b: (0.0, a, b), (1.0, 0.0, 0.0)),
}


def path_pieces(points: Sequence[Sequence[float]], radius: float) -> list[tuple]:
    """The path as 2D pieces: ``("line", p, q)`` and ``("arc", p, mid, q)``, its corners rounded
    to ``radius``. Raises ``ValueError`` with a one-line message where that cannot be done."""
    pts = [tuple(map(float, p)) for p in points]
    for k in range(len(pts) - 1):
        if math.dist(pts[k], pts[k + 1]) < 1e-6:
            raise ValueError(f"path points {k} and {k + 1} coincide")
    corners = []  # per inner point: (tangent length, u, v), or None where the path runs straight
    for k in range(1, len(pts) - 1):
        (ax, ay), (bx, by), (cx, cy) = pts[k - 1], pts[k], pts[k + 1]
        u = ((bx - ax) / math.dist(pts[k - 1], pts[k]), (by - ay) / math.dist(pts[k - 1], pts[k]))
        v = ((cx - bx) / math.dist(pts[k], pts[k + 1]), (cy - by) / math.dist(pts[k], pts[k + 1]))
        turn = math.atan2(u[0] * v[1] - u[1] * v[0], u[0] * v[0] + u[1] * v[1])
        if abs(turn) < 1e-9:
            corners.append(None)
            continue
        if abs(turn) > math.radians(179):
            raise ValueError(f"the path turns back on itself at point {k}")
        if radius <= 0:
            raise ValueError(
                f"the path has a corner at point {k}; give bend_radius > 0 to round it "
                "(a swept solid cannot turn a sharp corner)"
            )
        corners.append((radius * math.tan(abs(turn) / 2), u, v))
    for k in range(len(pts) - 1):  # each segment must hold the tangents at both its ends
        used = sum(
            c[0]
            for c in (corners[k - 1] if k else None, corners[k] if k < len(corners) else None)
            if c
        )
        if used > math.dist(pts[k], pts[k + 1]) + 1e-9:
            raise ValueError(
                f"bend_radius {radius:g} mm is too large: the path's segment {k} "
                f"({math.dist(pts[k], pts[k + 1]):g} mm) cannot hold its bends"
            )
    pieces: list[tuple] = []
    start = pts[0]
    for k, corner in enumerate(corners, start=1):
        if corner is None:
            continue
        t, u, v = corner
        p = pts[k]
        enter = (p[0] - u[0] * t, p[1] - u[1] * t)
        leave = (p[0] + v[0] * t, p[1] + v[1] * t)
        wx, wy = v[0] - u[0], v[1] - u[1]
        norm = math.hypot(wx, wy)
        half = math.atan2(t, radius)  # half the turn
        centre = (
            p[0] + wx / norm * radius / math.cos(half),
            p[1] + wy / norm * radius / math.cos(half),
        )
        to_p = math.dist(centre, p)
        mid = (
            centre[0] + (p[0] - centre[0]) * radius / to_p,
            centre[1] + (p[1] - centre[1]) * radius / to_p,
        )
        if math.dist(start, enter) > 1e-9:
            pieces.append(("line", start, enter))
        pieces.append(("arc", enter, mid, leave))
        start = leave
    if math.dist(start, pts[-1]) > 1e-9:
        pieces.append(("line", start, pts[-1]))
    return pieces


def _check_sweep(a: dict[str, Any]) -> str | None:
    profile, size, size2, radius = a["profile"], a["size"], a["size2"], a["bend_radius"]
    if size <= 0:
        return "the section needs size > 0"
    if profile == "tube" and not 0 < size2 < size:
        return f"a tube needs 0 < size2 (inside diameter) < size ({size:g} mm), got {size2:g}"
    if profile == "rect" and size2 <= 0:
        return "a rect section needs size2 > 0: its width across the path's plane"
    if profile == "circle" and size2 != 0:
        return "size2 is for tube and rect sections; leave it 0 for a circle"
    try:
        pieces = path_pieces(a["path"], radius)
    except ValueError as exc:
        return str(exc)
    if any(p[0] == "arc" for p in pieces) and radius <= size / 2:
        return f"bend_radius {radius:g} mm must exceed half the section's size ({size / 2:g} mm)"
    return None


@registry.tool(check=_check_sweep, failure="could not sweep the {profile} section along the path")
def sweep(
    part: Any,
    profile: Annotated[str, Param(choices=("circle", "tube", "rect"))],
    size: Size,
    path: Points,
    size2: Size = 0.0,
    plane: Plane = "XZ",
    bend_radius: Depth = 0.0,
) -> Any:
    """Sweep a section along a polyline path with rounded corners, fused with the part (pipes,
    rods, bent sheet metal). The section is centred on the path's first point, normal to its
    first segment.

    Args:
        profile: circle (diameter size), tube (outside diameter size, inside size2) or rect (size
            in the path's plane across the path, by size2 across the plane: a sheet's thickness
            and width).
        size: circle or tube outside diameter, or rect size in the path's plane.
        path: the centreline's points [a, b], at least 3 (a straight run may pass a middle
            point), in the plane: XY [x, y], XZ [x, z], YZ [y, z].
        size2: tube inside diameter, or rect size across the plane; 0 for a circle.
        plane: the path's plane.
        bend_radius: centreline radius of every corner; > 0 when the path has a corner.
    """
    import cadquery as cq

    to3d, normal = _PLANES[plane]
    n = cq.Vector(*normal)
    edges = []
    for piece in path_pieces(path, bend_radius):
        corners = [cq.Vector(*to3d(*p)) for p in piece[1:]]
        if piece[0] == "line":
            edges.append(cq.Edge.makeLine(*corners))
        else:
            edges.append(cq.Edge.makeThreePointArc(*corners))
    wire = cq.Wire.assembleEdges(edges)
    origin = cq.Vector(*to3d(*path[0]))
    tangent = (cq.Vector(*to3d(*path[1])) - origin).normalized()
    across = n.cross(tangent)  # in the path's plane, perpendicular to the path
    inner = []
    if profile == "rect":
        h, w = across * (size / 2), n * (size2 / 2)
        outer = cq.Wire.makePolygon(
            [origin + h + w, origin - h + w, origin - h - w, origin + h - w], close=True
        )
    else:
        outer = cq.Wire.makeCircle(size / 2, origin, tangent)
        if profile == "tube":
            inner = [cq.Wire.makeCircle(size2 / 2, origin, tangent)]
    swept = cq.Solid.sweep(outer, inner, wire, makeSolid=True, isFrenet=False)
    solids = swept.Solids()
    solid = solids[0] if len(solids) == 1 else swept
    if len(solids) != 1 or not solid.isValid() or solid.Volume() <= 0:
        raise ToolCallError(f"sweep: the {profile} section does not sweep to a valid solid")
    return _fuse(part, _workplane(solid))


# -- loft -------------------------------------------------------------------------------------
def _check_loft(a: dict[str, Any]) -> str | None:
    for end in ("bottom", "top"):
        profile, size, size2 = a[end], a[f"{end}_size"], a[f"{end}_size2"]
        if size <= 0:
            return f"the {end} profile needs {end}_size > 0"
        if profile == "rect" and size2 <= 0:
            return f"a rect {end} needs {end}_size2 > 0: its size along Y"
        if profile != "rect" and size2 != 0:
            return f"{end}_size2 is for a rect {end}; leave it 0 for a {profile}"
    return None


def _loft_wire(profile: str, size: float, size2: float, x: float, y: float, z: float) -> Any:
    import cadquery as cq

    if profile == "circle":
        return cq.Wire.makeCircle(size / 2, cq.Vector(x, y, z), cq.Vector(0, 0, 1))
    hx, hy = size / 2, (size2 if profile == "rect" else size) / 2
    corners = [(hx, -hy), (hx, hy), (-hx, hy), (-hx, -hy)]
    return cq.Wire.makePolygon([cq.Vector(x + a, y + b, z) for a, b in corners], close=True)


@registry.tool(check=_check_loft, failure="could not loft the {bottom} into the {top}")
def loft(
    part: Any,
    bottom: Profile,
    bottom_size: Size,
    top: Profile,
    top_size: Size,
    height: Length,
    bottom_size2: Size = 0.0,
    top_size2: Size = 0.0,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
) -> Any:
    """Loft a solid from a bottom profile at height z to a top profile at z + height, both
    centred on (x, y), fused with the part (transitions, tapers, hoppers).

    Args:
        bottom: circle (diameter size), rect (size along X by size2 along Y) or square.
        bottom_size: bottom diameter, or size along X.
        top: circle (diameter size), rect (size along X by size2 along Y) or square.
        top_size: top diameter, or size along X.
        height: distance from the bottom profile up to the top one.
        bottom_size2: a rect bottom's size along Y; 0 otherwise.
        top_size2: a rect top's size along Y; 0 otherwise.
        x: centre X of both profiles.
        y: centre Y of both profiles.
        z: height of the bottom profile.
    """
    import cadquery as cq

    wires = [
        _loft_wire(bottom, bottom_size, bottom_size2, x, y, z),
        _loft_wire(top, top_size, top_size2, x, y, z + height),
    ]
    solid = cq.Solid.makeLoft(wires, ruled=True)
    return _fuse(part, _workplane(solid))


# -- mirror and revolved cut ------------------------------------------------------------------
_MIRROR_POINTS = {"YZ": (1, 0, 0), "XZ": (0, 1, 0), "XY": (0, 0, 1)}


@registry.tool(needs_part=True, failure="could not fuse the part with its mirror image")
def mirror(part: Any, plane: Plane, offset: Coordinate = 0.0) -> Any:
    """Fuse the part with its mirror image in a plane: YZ at x = offset, XZ at y = offset, or XY
    at z = offset. The image must touch the part, so the result is one solid.

    Args:
        plane: the mirror plane.
        offset: the plane's position along its normal (x, y or z).
    """
    point = tuple(offset * c for c in _MIRROR_POINTS[plane])
    result = part.mirror(plane, point, union=True).clean()
    if not result.val().isValid():
        raise ToolCallError("mirror: the part fused with its mirror image is not a valid solid")
    return _one_solid(result, "mirror", f"the mirror image in {plane} at {offset:g} mm")


@registry.tool(
    needs_part=True,
    check=_check_profile,
    failure="the profile does not make a solid (its sides must not cross)",
)
def cut_revolve(
    part: Any, points: Points, angle: Annotated[float, Param("deg", 1, 360, 15)] = 360.0
) -> Any:
    """Revolve a closed profile drawn as [radius, z] points about the Z axis and cut it from the
    part (grooves, V-grooves, shaft chamfers, undercuts).

    Args:
        points: profile corners [radius, z], at least 3, radius >= 0, in order.
        angle: sweep angle, from +X counter-clockwise seen from +Z.
    """
    import cadquery as cq

    profile = cq.Workplane("XZ").polyline([tuple(p) for p in points]).close()
    cutter = profile.revolve(angle, (0, 0, 0), (0, 1, 0))
    return _removing(part, cutter, "cut_revolve", "revolved profile")
