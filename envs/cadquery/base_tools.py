"""The CadQuery tool registry and its first tools: primitives, cuts, edges, polygons, revolves,
shells. ``toolgym.envs.cadquery.feature_tools`` adds the feature tools; ``tools`` gathers both.

Every tool takes the current part (a ``cq.Workplane``, or ``None`` before the first one) and
returns the new part. Lengths are in mm, angles in degrees; the world is Z-up. Scripts in the
sandbox reach them as ``tools.add_box(part, ...)``; tool calls apply them to ``result``.
"""

from __future__ import annotations

from typing import Annotated, Any

from toolgym.envs.tools import Param, ToolCallError, ToolRegistry


def _check_part(part: Any) -> str | None:
    import cadquery as cq

    if not isinstance(part, cq.Workplane):
        return f"the part must be a cq.Workplane (or None), got {type(part).__name__}"
    return None


registry = ToolRegistry("cadquery", check_part=_check_part)

Length = Annotated[float, Param("mm", 0.1, 500.0, 0.5)]
Coordinate = Annotated[float, Param("mm", -500.0, 500.0, 0.5)]
Radius = Annotated[float, Param("mm", 0.05, 100.0, 0.25)]
Axis = Annotated[str, Param(choices=("X", "Y", "Z"))]
Edges = Annotated[str, Param(choices=("all", "|X", "|Y", "|Z", ">Z", "<Z", ">X", "<X", ">Y", "<Y"))]
Points = Annotated[list[list[float]], Param("mm", -500.0, 500.0, 0.5)]

_AXIS_DIRECTIONS = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}


def _fuse(part: Any, new: Any) -> Any:
    return new if part is None else part.union(new)


def _polygon_area(points: list[list[float]]) -> float:
    """Area of a closed polygon (shoelace formula), in the square of the points' unit."""
    doubled = sum(
        a[0] * b[1] - b[0] * a[1] for a, b in zip(points, points[1:] + points[:1], strict=True)
    )
    return abs(doubled) / 2


def _has_area(points: list[list[float]]) -> str | None:
    if _polygon_area(points) < 1e-6:
        return "the points enclose no area (they lie on one line or repeat); a solid needs a face"
    return None


def _check_polygon(arguments: dict[str, Any]) -> str | None:
    return _has_area(arguments["points"])


def _check_profile(arguments: dict[str, Any]) -> str | None:
    for k, (radius, _z) in enumerate(arguments["points"]):
        if radius < 0:
            return f"point {k} has radius {radius:g} mm; every profile point needs radius >= 0"
    return _has_area(arguments["points"])


def _selected_edges(part: Any, edges: str, tool: str) -> Any:
    selected = part.edges() if edges == "all" else part.edges(edges)
    if not selected.vals():
        raise ToolCallError(f"{tool}: no edge of the part matches {edges!r}")
    return selected


def _cut(part: Any, cutter: Any, tool: str, what: str) -> Any:
    """``part`` less ``cutter``; a cutter wholly beside the part is an error that says where
    the part is (a cut that removes nothing is a mistake, not a step)."""
    have, cut = part.val().BoundingBox(), cutter.val().BoundingBox()
    apart = (
        have.xmax < cut.xmin
        or cut.xmax < have.xmin
        or have.ymax < cut.ymin
        or cut.ymax < have.ymin
        or have.zmax < cut.zmin
        or cut.zmax < have.zmin
    )
    if apart:
        raise ToolCallError(
            f"{tool}: the {what} misses the part, which spans x {have.xmin:g}..{have.xmax:g}, "
            f"y {have.ymin:g}..{have.ymax:g}, z {have.zmin:g}..{have.zmax:g} mm; nothing was cut"
        )
    return part.cut(cutter)


def _box(length: float, width: float, height: float, x: float, y: float, z: float) -> Any:
    import cadquery as cq

    return cq.Workplane("XY").box(length, width, height).translate((x, y, z))


def _cylinder(diameter: float, height: float, x: float, y: float, z: float, axis: str) -> Any:
    import cadquery as cq

    solid = cq.Solid.makeCylinder(
        diameter / 2, height, cq.Vector(0, 0, -height / 2), cq.Vector(0, 0, 1)
    )
    if axis != "Z":
        solid = solid.rotate(
            cq.Vector(), cq.Vector(0, 1, 0) if axis == "X" else cq.Vector(1, 0, 0), 90
        )
    return cq.Workplane("XY").add(solid.translate(cq.Vector(x, y, z)))


@registry.tool(failure="could not fuse the box with the part")
def add_box(
    part: Any,
    length: Length,
    width: Length,
    height: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
) -> Any:
    """Add a box centred at (x, y, z), fused with the part.

    Args:
        length: size along X.
        width: size along Y.
        height: size along Z.
        x: centre X.
        y: centre Y.
        z: centre Z.
    """
    return _fuse(part, _box(length, width, height, x, y, z))


@registry.tool(failure="could not fuse the cylinder with the part")
def add_cylinder(
    part: Any,
    diameter: Length,
    height: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
    axis: Axis = "Z",
) -> Any:
    """Add a cylinder centred at (x, y, z) along an axis, fused with the part.

    Args:
        diameter: cylinder diameter.
        height: length along the axis.
        x: centre X.
        y: centre Y.
        z: centre Z.
        axis: the cylinder's axis.
    """
    return _fuse(part, _cylinder(diameter, height, x, y, z, axis))


@registry.tool(failure="could not fuse the sphere with the part")
def add_sphere(
    part: Any, diameter: Length, x: Coordinate = 0.0, y: Coordinate = 0.0, z: Coordinate = 0.0
) -> Any:
    """Add a sphere centred at (x, y, z), fused with the part.

    Args:
        diameter: sphere diameter.
        x: centre X.
        y: centre Y.
        z: centre Z.
    """
    import cadquery as cq

    return _fuse(part, cq.Workplane("XY").sphere(diameter / 2).translate((x, y, z)))


@registry.tool(needs_part=True, failure="could not cut the box out of the part")
def cut_box(
    part: Any,
    length: Length,
    width: Length,
    height: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
) -> Any:
    """Cut a box centred at (x, y, z) out of the part (a pocket, notch or slot).

    Args:
        length: size along X.
        width: size along Y.
        height: size along Z.
        x: centre X.
        y: centre Y.
        z: centre Z.
    """
    return _cut(part, _box(length, width, height, x, y, z), "cut_box", "box")


@registry.tool(needs_part=True, failure="could not cut the cylinder out of the part")
def cut_cylinder(
    part: Any,
    diameter: Length,
    height: Length,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
    axis: Axis = "Z",
) -> Any:
    """Cut a cylinder centred at (x, y, z) along an axis out of the part (a bore or counterbore).

    Args:
        diameter: cylinder diameter.
        height: length along the axis.
        x: centre X.
        y: centre Y.
        z: centre Z.
        axis: the cylinder's axis.
    """
    return _cut(part, _cylinder(diameter, height, x, y, z, axis), "cut_cylinder", "cylinder")


@registry.tool(needs_part=True, failure="could not drill the hole through the part")
def cut_hole(part: Any, diameter: Length, x: Coordinate = 0.0, y: Coordinate = 0.0) -> Any:
    """Drill a hole along Z through the whole part at (x, y).

    Args:
        diameter: hole diameter.
        x: hole centre X.
        y: hole centre Y.
    """
    box = part.val().BoundingBox()
    height = box.zlen + 2.0
    hole = _cylinder(diameter, height, x, y, (box.zmin + box.zmax) / 2, "Z")
    return _cut(part, hole, "cut_hole", f"hole at ({x:g}, {y:g})")


@registry.tool(needs_part=True, failure="radius {radius:g} mm is too large for this part's edges")
def fillet_edges(part: Any, radius: Radius, edges: Edges = "all") -> Any:
    """Round the selected edges of the part.

    Args:
        radius: fillet radius.
        edges: which edges: all, parallel to an axis (|X, |Y, |Z), or on the extreme face (>Z ...).
    """
    return _selected_edges(part, edges, "fillet_edges").fillet(radius)


@registry.tool(needs_part=True, failure="length {length:g} mm is too large for this part's edges")
def chamfer_edges(part: Any, length: Radius, edges: Edges = "all") -> Any:
    """Bevel the selected edges of the part with a 45° chamfer.

    Args:
        length: chamfer leg length.
        edges: which edges: all, parallel to an axis (|X, |Y, |Z), or on the extreme face (>Z ...).
    """
    return _selected_edges(part, edges, "chamfer_edges").chamfer(length)


@registry.tool(
    check=_check_polygon,
    failure="the polygon does not make a solid (its sides must not cross)",
)
def extrude_polygon(part: Any, points: Points, height: Length, z: Coordinate = 0.0) -> Any:
    """Extrude a closed polygon drawn in the XY plane at height z upwards, fused with the part.

    Args:
        points: polygon corners [x, y], at least 3, in order.
        height: extrusion distance along +Z.
        z: height of the sketch plane.
    """
    import cadquery as cq

    sketch = cq.Workplane("XY", origin=(0, 0, z)).polyline([tuple(p) for p in points]).close()
    return _fuse(part, sketch.extrude(height))


@registry.tool(
    check=_check_profile,
    failure="the profile does not make a solid (its sides must not cross)",
)
def revolve_profile(
    part: Any, points: Points, angle: Annotated[float, Param("deg", 1, 360, 15)] = 360.0
) -> Any:
    """Revolve a closed profile drawn as [radius, z] points about the Z axis, fused with the part.

    Args:
        points: profile corners [radius, z], at least 3, radius >= 0, in order.
        angle: sweep angle.
    """
    import cadquery as cq

    profile = cq.Workplane("XZ").polyline([tuple(p) for p in points]).close()
    return _fuse(part, profile.revolve(angle, (0, 0, 0), (0, 1, 0)))


@registry.tool(
    needs_part=True,
    failure="thickness {thickness:g} mm is too thick for this part, or its {open_face} face "
    "cannot be removed",
)
def shell(
    part: Any,
    thickness: Radius,
    open_face: Annotated[str, Param(choices=(">Z", "<Z", ">X", "<X", ">Y", "<Y"))] = ">Z",
) -> Any:
    """Hollow the part out to a wall thickness, removing one face (an open box or cup).

    Args:
        thickness: wall thickness, inwards.
        open_face: the face to remove.
    """
    shelled = part.faces(open_face).shell(-thickness)
    # OpenCASCADE may hand back the part unchanged when the walls would fill it.
    if shelled.val().Volume() >= part.val().Volume() * (1 - 1e-9):
        raise ToolCallError(
            f"shell: thickness {thickness:g} mm is too thick for this part: no room inside"
        )
    return shelled
