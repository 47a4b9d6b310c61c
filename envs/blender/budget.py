"""The triangle budget, bounded from a scene's settings before anything is evaluated.

A scene over :data:`MAX_TRIANGLES` triangles is refused, not measured: a verifier's budget.
Building a huge modifier stack or Geometry Nodes tree (a Subdivision at level 8, an array of a
thousand, a hundred thousand instanced spheres) could exhaust the trusted process before any
count is known, so :func:`check_bound` reads an upper estimate from the settings first, with the
settings of both evaluations (the viewport's and a final render's: a modifier shown in either,
the larger of its viewport and render levels or steps), and refuses a scene far over it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_TRIANGLES = 400_000  # over this the scene is refused, not measured


# Triangles a modifier makes of its input's, at most (a bound, read before anything is
# evaluated): a stack whose bound is far over the budget is refused without being built.
def _modifier_growth(modifier: Any, triangles: float, edges: float) -> tuple[float, float]:
    kind = modifier.type
    if kind in ("SUBSURF", "MULTIRES"):
        levels = max(
            getattr(modifier, name, 0) for name in ("levels", "render_levels", "total_levels")
        )
        factor = 4.0 ** min(int(levels), 12)
        return triangles * factor * 2, edges * factor * 2
    if kind == "ARRAY":
        count = modifier.count if modifier.fit_type == "FIXED_COUNT" else 1
        return triangles * max(count, 1), edges * max(count, 1)
    if kind == "SCREW":
        steps = max(modifier.steps, modifier.render_steps, 1) * max(modifier.iterations, 1)
        return triangles + 2 * edges * steps, edges * (steps + 1) * 3
    if kind == "MIRROR":
        copies = 2 ** sum(bool(a) for a in modifier.use_axis)
        return triangles * copies, edges * copies
    if kind == "SOLIDIFY":
        return triangles * 2 + 2 * edges, edges * 3
    if kind == "BEVEL":
        segments = max(modifier.segments, 1)
        return triangles + 2 * edges * segments * 2, edges * (segments + 2) * 2
    if kind == "WIREFRAME":
        return triangles + 8 * edges * 2, edges * 12
    if kind == "REMESH":
        cells = 4.0 ** min(modifier.octree_depth, 14) * 12
        return cells, cells * 1.5
    if kind == "SKIN":
        return triangles + 12 * edges, edges * 18
    if kind == "NODES" and modifier.node_group is not None:
        return _NodeBound(modifier, triangles, edges).output()
    return triangles, edges


# Geometry a node makes, at most, as (triangles, edges, points); points: what Instance on Points
# places instances on (a mesh's vertices, bounded by its edges, or a point cloud's points).
_Bound = tuple[float, float, float]


def _modifier_input(modifier: Any, identifier: str, default: Any) -> Any:
    """The value a Geometry Nodes modifier gives its group's input ``identifier``."""
    properties = getattr(modifier, "properties", None)  # Blender 5: typed inputs
    socket = getattr(getattr(properties, "inputs", None), identifier, None)
    if socket is not None:
        return getattr(socket, "value", default)
    try:  # earlier Blenders: ID properties
        return modifier[identifier]
    except (KeyError, TypeError):
        return default


class _NodeBound:
    """A Geometry Nodes modifier's output, bounded from its node tree's settings without
    evaluating it: mesh primitives, Points, Mesh Line, Subdivide, Subdivision Surface,
    Instance on Points, Duplicate Elements, Distribute Points on Faces, Join; any other node
    passes on the sum of its geometry inputs. Counts come from sockets' values, Integer and
    Value nodes and the modifier's inputs; a count computed by other nodes reads as its
    socket's own value."""

    def __init__(self, modifier: Any, triangles: float, edges: float) -> None:
        self.modifier, self.tree = modifier, modifier.node_group
        self.start: _Bound = (triangles, edges, edges)
        self.seen: dict[str, _Bound] = {}

    def output(self) -> tuple[float, float]:
        outputs = [n for n in self.tree.nodes if n.type == "GROUP_OUTPUT"]
        node = next((n for n in outputs if n.is_active_output), outputs[0] if outputs else None)
        if node is None:
            return 0.0, 0.0
        triangles, edges, _points = self._sum(node, 0)
        return triangles, edges

    def _sum(self, node: Any, depth: int) -> _Bound:
        total = [0.0, 0.0, 0.0]
        for socket in node.inputs:
            if socket.type == "GEOMETRY" and socket.enabled:
                for part in self._inputs(socket, depth):
                    total = [t + p for t, p in zip(total, part, strict=True)]
        return total[0], total[1], total[2]

    def _inputs(self, socket: Any, depth: int) -> list[_Bound]:
        links = [k for k in socket.links if k.is_valid and not k.is_muted]
        return [self._node(k.from_node, depth + 1) for k in links]

    def _geometry(self, node: Any, name: str, depth: int) -> _Bound:
        socket = node.inputs.get(name)
        parts = self._inputs(socket, depth) if socket is not None else []
        return tuple(sum(p[k] for p in parts) for k in range(3)) if parts else (0.0, 0.0, 0.0)

    def _count(self, node: Any, name: str) -> float:
        socket = node.inputs.get(name)
        if socket is None:
            return 1.0
        value = socket.default_value
        links = [k for k in socket.links if k.is_valid and not k.is_muted]
        if links:
            source, output = links[0].from_node, links[0].from_socket
            if source.type == "INPUT_INT":
                value = source.integer
            elif source.type == "VALUE":
                value = output.default_value
            elif source.type == "GROUP_INPUT":
                value = _modifier_input(self.modifier, output.identifier, value)
        try:
            return max(float(value), 0.0)
        except (TypeError, ValueError):
            return 1.0

    def _node(self, node: Any, depth: int) -> _Bound:
        if node.name in self.seen:
            return self.seen[node.name]
        if depth > 256:
            raise ValueError("the geometry node tree is too deep to read")
        self.seen[node.name] = bound = (0.0, 0.0, 0.0) if node.mute else self._made(node, depth)
        return bound

    def _made(self, node: Any, depth: int) -> _Bound:
        kind, count = node.type, lambda name: self._count(node, name)
        if kind == "GROUP_INPUT":
            return self.start
        if kind == "MESH_PRIMITIVE_GRID":
            faces = count("Vertices X") * count("Vertices Y")
            return 2 * faces, 2 * faces, faces
        if kind == "MESH_PRIMITIVE_CUBE":
            x, y, z = count("Vertices X"), count("Vertices Y"), count("Vertices Z")
            faces = 2 * (x * y + y * z + x * z)
            return 2 * faces, 2 * faces, faces
        if kind == "MESH_PRIMITIVE_UV_SPHERE":
            faces = count("Segments") * count("Rings")
            return 2 * faces, 2 * faces, faces
        if kind in ("MESH_PRIMITIVE_CYLINDER", "MESH_PRIMITIVE_CONE"):
            rings = count("Side Segments") + 2 * count("Fill Segments") + 2
            faces = count("Vertices") * rings
            return 2 * faces, 2 * faces, faces
        if kind == "MESH_PRIMITIVE_ICO_SPHERE":
            faces = 20 * 4.0 ** min(count("Subdivisions"), 20)
            return faces, 1.5 * faces, faces
        if kind == "MESH_PRIMITIVE_CIRCLE":
            return count("Vertices"), count("Vertices"), count("Vertices")
        if kind in ("MESH_PRIMITIVE_LINE", "POINTS"):
            return 0.0, count("Count"), count("Count")
        if kind in ("SUBDIVIDE_MESH", "SUBDIVISION_SURFACE"):
            factor = 4.0 ** min(count("Level"), 20)
            triangles, edges, points = self._geometry(node, "Mesh", depth)
            return 2 * triangles * factor, 2 * edges * factor, 2 * (points + edges) * factor
        if kind == "INSTANCE_ON_POINTS":
            points = self._geometry(node, "Points", depth)[2]
            instance = self._geometry(node, "Instance", depth)
            return tuple(points * v for v in instance)
        if kind == "DUPLICATE_ELEMENTS":
            return tuple(count("Amount") * v for v in self._geometry(node, "Geometry", depth))
        if kind == "DISTRIBUTE_POINTS_ON_FACES":
            triangles = self._geometry(node, "Mesh", depth)[0]
            density = max(count("Density"), count("Density Max"))
            return 0.0, 0.0, max(triangles, density)  # per m² of the faces: area unknown
        return self._sum(node, depth)


def _curve_bound(curve: Any) -> tuple[float, float]:
    """A curve's (or a text's) surface, at most: each segment, at the larger of its viewport
    and render resolutions, swept by a bevel ring (or filled) on both sides."""
    resolution = max(curve.resolution_u, getattr(curve, "render_resolution_u", 0) or 0, 1)
    ring = 4 * (curve.bevel_resolution + 2) + (2 if curve.extrude else 0) + 2
    points = sum(len(s.points) + len(s.bezier_points) for s in curve.splines)
    if hasattr(curve, "body"):  # text: each character a few outlines
        points += 64 * len(curve.body)
    edges = float(points * resolution)
    return 2 * edges * ring, edges * ring


GEOMETRY_TYPES = ("MESH", "CURVE", "SURFACE", "FONT", "META")  # objects a render meshes


def triangle_bound(obj: Any) -> float:
    """An upper estimate of ``obj``'s evaluated triangles, from its data and modifier
    settings, without evaluating anything."""
    if obj.type == "MESH":
        mesh = obj.data
        sides = np.empty(len(mesh.polygons), dtype=np.int64)
        mesh.polygons.foreach_get("loop_total", sides)
        triangles, edges = float(np.sum(sides - 2)), float(len(mesh.edges))
    elif obj.type in ("CURVE", "SURFACE", "FONT"):
        triangles, edges = _curve_bound(obj.data)
    elif obj.type == "META":  # a grid at the larger of the two resolutions
        step = max(min(obj.data.resolution, obj.data.render_resolution), 1e-3)
        triangles = edges = float(
            min(sum((2 * max(e.radius, 1e-3) / step) ** 2 * 12 for e in obj.data.elements), 1e12)
        )
    else:
        triangles, edges = 0.0, 0.0
    for modifier in obj.modifiers:
        if modifier.show_viewport or modifier.show_render:  # either evaluation builds it
            triangles, edges = _modifier_growth(modifier, triangles, edges)
    return triangles


def check_bound(objects: Any, visible: dict[str, bool] | None = None) -> None:
    """Raise the budget's ``ValueError`` when the meshes' :func:`triangle_bound` (those
    ``visible`` names, or all) is far over :data:`MAX_TRIANGLES`: such a stack is refused
    before anything builds it."""
    bound = sum(
        triangle_bound(o)
        for o in objects
        if o.type in GEOMETRY_TYPES and (visible is None or visible.get(o.name, False))
    )
    if bound > 4 * MAX_TRIANGLES:
        raise over_budget()


def over_budget() -> ValueError:
    return ValueError(f"the scene's meshes have over {MAX_TRIANGLES:,} triangles; simplify it")
