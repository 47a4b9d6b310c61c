"""A Blender scene as plain data, saved by an agent's session and read back by a trusted one.

Runs inside sandbox sessions only. The agent's session saves its scene as a ``.blend`` in its
workspace (:func:`save`); a session that runs no agent code loads those bytes with Python
auto-execution off, so no driver expression, text block or registered script of the file runs
(:func:`extract`), and returns the scene's state as numbers, strings and arrays (msgpack, never
pickle): objects with their world transforms and evaluated meshes, modifiers, materials, shape
keys and lights; and, when asked, Cycles renders from fixed cameras.

Units are Blender's: metres, radians in the data (degrees only in tool arguments), linear RGB.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

BLEND_NAME = "scene.blend"
MAX_TRIANGLES = 400_000  # over this the scene is refused, not measured: a verifier's budget
MAX_OBJECTS = 256
# Scalar modifier settings worth reporting (the rest of a modifier's RNA is UI state).
_MODIFIER_KINDS = ("INT", "FLOAT", "BOOLEAN", "ENUM")


def save(bpy: Any, workspace: str) -> bytes:
    """Save the session's scene as an uncompressed copy in ``workspace``; return its bytes.

    Raises the budget's ``ValueError`` for a scene far over it (see :func:`check_bound`). The
    session's ``bpy.app.handlers`` are set aside while it saves: a script's handler (one
    that never returns, say) runs in the script's own steps, never in the environment's save."""
    # Saving can build a Geometry Nodes tree's output: a scene far over the triangle budget
    # is refused first, with the budget's message.
    view_layer = bpy.context.view_layer
    objects = list(bpy.context.scene.objects)
    check_bound(objects, {o.name: shown(o, view_layer) for o in objects})
    path = os.path.join(workspace, BLEND_NAME)
    handlers = bpy.app.handlers
    kept = {
        name: list(value)
        for name in dir(handlers)
        if not name.startswith("_") and isinstance(value := getattr(handlers, name), list)
    }
    for name in kept:
        getattr(handlers, name).clear()
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False, check_existing=False)
    finally:
        for name, functions in kept.items():
            getattr(handlers, name).extend(functions)
    try:
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def load_trusted(bpy: Any, data: bytes, workspace: str) -> None:
    """Open ``.blend`` bytes with Python auto-execution off (no drivers, text blocks, scripts)."""
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    path = os.path.join(workspace, BLEND_NAME)
    with open(path, "wb") as f:
        f.write(data)
    try:
        bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=False)
    finally:
        os.unlink(path)


def _vector(value: Any) -> list[float]:
    return [float(v) for v in value]


def _setting(value: Any) -> Any:
    """A modifier setting as plain data: enum flags as a sorted list, numbers as floats."""
    if isinstance(value, str):
        return value
    if isinstance(value, set | frozenset):
        return sorted(str(v) for v in value)
    return float(value)


def _modifier(modifier: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for prop in modifier.bl_rna.properties:
        if prop.identifier in ("name", "rna_type", "type") or prop.type not in _MODIFIER_KINDS:
            continue
        if getattr(prop, "is_array", False) and prop.array_length:
            continue
        settings[prop.identifier] = _setting(getattr(modifier, prop.identifier))
    return {"name": modifier.name, "type": modifier.type, "settings": settings}


# -- materials: the node graph from the active Material Output, reduced to surface parameters ----

# What a surface shows, as the verifier compares it: base colour (linear RGB), roughness,
# metallic, emitted radiance (linear RGB, colour × strength), transmission and alpha.
SURFACE_KEYS = ("base_color", "roughness", "metallic", "emission", "transmission", "alpha")
_BLACK = {"base_color": [0.0, 0.0, 0.0], "roughness": 1.0, "metallic": 0.0,
          "emission": [0.0, 0.0, 0.0], "transmission": 0.0, "alpha": 1.0}  # fmt: skip
_LUMINANCE = (0.2126, 0.7152, 0.0722)  # Blender's colour-to-value weights (linear Rec. 709)


class Irreducible(Exception):
    """A node graph that is not a constant surface (a texture, an unknown node): said so, and
    left to the renders."""


def _as_color(value: Any) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    return np.repeat(array, 3) if array.size == 1 else array[:3]


def _as_float(value: Any) -> float:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    return float(array[0]) if array.size == 1 else float(np.dot(array[:3], _LUMINANCE))


def _blend(kind: str, a: np.ndarray, b: np.ndarray, factor: float, node: Any) -> np.ndarray:
    """Blender's colour blend modes that are plain arithmetic (MixRGB and Mix nodes)."""
    blended = {
        "MIX": lambda: b,
        "ADD": lambda: a + b,
        "MULTIPLY": lambda: a * b,
        "SUBTRACT": lambda: a - b,
        "SCREEN": lambda: 1 - (1 - a) * (1 - b),
        "DIFFERENCE": lambda: np.abs(a - b),
        "DARKEN": lambda: np.minimum(a, b),
        "LIGHTEN": lambda: np.maximum(a, b),
    }.get(kind)
    if blended is None:
        raise Irreducible(f"node {node.name!r} blends by {kind}")
    if kind in ("DARKEN", "LIGHTEN", "MIX"):
        return (1 - factor) * a + factor * blended()
    if kind == "SCREEN":
        return 1 - (1 - factor + factor * (1 - b)) * (1 - a)
    if kind == "MULTIPLY":
        return a * (1 - factor + factor * b)
    return a + factor * (blended() - a)


_MATH = {
    "ADD": lambda x, y: x + y,
    "SUBTRACT": lambda x, y: x - y,
    "MULTIPLY": lambda x, y: x * y,
    "DIVIDE": lambda x, y: x / y if y else 0.0,
    "POWER": lambda x, y: x**y if x >= 0 or float(y).is_integer() else 0.0,
    "MINIMUM": min,
    "MAXIMUM": max,
}


def _input(node: Any, name: str, depth: int) -> Any:
    """The value reaching ``node``'s enabled input ``name`` (its identifier or name)."""
    for socket in node.inputs:
        if socket.enabled and name in (socket.identifier, socket.name):
            return _socket_value(socket, depth)
    raise Irreducible(f"node {node.name!r} has no input {name!r}")


def _socket_value(socket: Any, depth: int = 0) -> Any:
    """A value socket's constant value: its own default, or what links bring from RGB, Value,
    Mix, MixRGB, Math, Invert and reroute nodes; :class:`Irreducible` for anything else."""
    if depth > 64:
        raise Irreducible("the node graph is too deep")
    links = [link for link in socket.links if link.is_valid and not link.is_muted]
    if not links:
        value = socket.default_value
        return float(value) if isinstance(value, int | float) else _vector(value)
    node, output = links[0].from_node, links[0].from_socket
    if node.mute:
        raise Irreducible(f"node {node.name!r} is muted")
    kind = node.type
    if kind in ("RGB", "VALUE"):
        value = output.default_value
        return float(value) if isinstance(value, int | float) else _vector(value)
    if kind == "REROUTE":
        return _socket_value(node.inputs[0], depth + 1)
    if kind == "MIX_RGB":
        factor = float(np.clip(_as_float(_input(node, "Fac", depth + 1)), 0, 1))
        a = _as_color(_input(node, "Color1", depth + 1))
        b = _as_color(_input(node, "Color2", depth + 1))
        mixed = _blend(node.blend_type, a, b, factor, node)
        return _vector(np.clip(mixed, 0, 1) if node.use_clamp else mixed)
    if kind == "MIX":
        return _mix(node, depth)
    if kind == "MATH":
        operation = _MATH.get(node.operation)
        if operation is None:
            raise Irreducible(f"node {node.name!r} computes {node.operation}")
        x, y = (_as_float(_socket_value(s, depth + 1)) for s in list(node.inputs)[:2])
        value = float(operation(x, y))
        return float(np.clip(value, 0, 1)) if node.use_clamp else value
    if kind == "INVERT":
        factor = _as_float(_input(node, "Fac", depth + 1))
        color = _as_color(_input(node, "Color", depth + 1))
        return _vector((1 - factor) * color + factor * (1 - color))
    raise Irreducible(f"node {node.name!r} ({kind.lower()}) feeds {socket.node.name!r}")


def _mix(node: Any, depth: int) -> Any:
    kind = node.data_type
    if kind not in ("FLOAT", "RGBA", "VECTOR"):
        raise Irreducible(f"node {node.name!r} mixes {kind.lower()} values")
    suffix = {"FLOAT": "Float", "RGBA": "Color", "VECTOR": "Vector"}[kind]
    uniform = kind != "VECTOR" or node.factor_mode == "UNIFORM"
    factor = _as_float(_input(node, "Factor_Float" if uniform else "Factor_Vector", depth + 1))
    if node.clamp_factor:
        factor = float(np.clip(factor, 0, 1))
    a = np.asarray(_input(node, f"A_{suffix}", depth + 1), dtype=np.float64)
    b = np.asarray(_input(node, f"B_{suffix}", depth + 1), dtype=np.float64)
    if kind == "RGBA":
        mixed = _blend(node.blend_type, a[:3], b[:3], factor, node)
        return _vector(np.clip(mixed, 0, 1) if node.clamp_result else mixed)
    mixed = (1 - factor) * a + factor * b
    return float(mixed) if kind == "FLOAT" else _vector(mixed)


def _surface(**values: Any) -> dict[str, Any]:
    out = dict(_BLACK) | values
    return {k: _vector(_as_color(v)) if k in ("base_color", "emission") else float(v)
            for k, v in out.items()}  # fmt: skip


def _shader(socket: Any, depth: int = 0) -> dict[str, Any]:
    """The surface a shader socket carries: Principled, Diffuse, Glossy, Metallic, Glass,
    Emission and Transparent BSDFs, and Mix and Add shaders of them, as :data:`SURFACE_KEYS`."""
    if depth > 64:
        raise Irreducible("the node graph is too deep")
    links = [link for link in socket.links if link.is_valid and not link.is_muted]
    if not links:
        return _surface()  # nothing connected: Cycles renders it black
    node = links[0].from_node
    if node.mute:
        raise Irreducible(f"node {node.name!r} is muted")
    kind, deeper = node.type, depth + 1

    def value(name: str) -> Any:
        return _input(node, name, deeper)

    def number(name: str) -> float:
        return _as_float(value(name))

    if kind == "REROUTE":
        return _shader(node.inputs[0], deeper)
    if kind == "BSDF_PRINCIPLED":
        emission = _as_color(value("Emission Color")) * number("Emission Strength")
        return _surface(
            base_color=value("Base Color"), roughness=number("Roughness"),
            metallic=number("Metallic"), emission=emission,
            transmission=number("Transmission Weight"), alpha=number("Alpha"),
        )  # fmt: skip
    if kind == "BSDF_DIFFUSE":
        return _surface(base_color=value("Color"), roughness=1.0)
    if kind in ("BSDF_GLOSSY", "BSDF_ANISOTROPIC"):
        return _surface(base_color=value("Color"), roughness=number("Roughness"), metallic=1.0)
    if kind == "BSDF_METALLIC":
        return _surface(base_color=value("Base Color"), roughness=number("Roughness"),
                        metallic=1.0)  # fmt: skip
    if kind == "BSDF_GLASS":
        return _surface(base_color=value("Color"), roughness=number("Roughness"),
                        transmission=1.0)  # fmt: skip
    if kind == "EMISSION":
        emission = _as_color(value("Color")) * number("Strength")
        return _surface(base_color=0.0, emission=emission) | {"reflects": 0.0}
    if kind == "BSDF_TRANSPARENT":
        return _surface(base_color=0.0, alpha=0.0) | {"reflects": 0.0}
    if kind in ("MIX_SHADER", "ADD_SHADER"):
        shaders = [s for s in node.inputs if s.type == "SHADER"]
        first, second = (_shader(s, deeper) for s in shaders[:2])
        if kind == "MIX_SHADER":
            factor = float(np.clip(number("Fac"), 0, 1))
            weights = (1 - factor, factor)
        else:  # light adds up
            weights = (1.0, 1.0)
        # Colours and light mix by the factor; what shapes a reflection (roughness, metallic,
        # transmission) by how much each side reflects (an Emission shader reflects nothing).
        reflects = [
            w * s.get("reflects", 1.0) for w, s in zip(weights, (first, second), strict=True)
        ]
        total = sum(reflects)
        mixed = {}
        for k in SURFACE_KEYS:
            if k in ("roughness", "metallic", "transmission") and total > 0:
                mixed[k] = (reflects[0] * first[k] + reflects[1] * second[k]) / total
            else:
                mixed[k] = np.multiply(weights[0], first[k]) + np.multiply(weights[1], second[k])
        if kind == "ADD_SHADER":
            mixed["alpha"] = max(first["alpha"], second["alpha"])
        return _surface(**mixed) | {"reflects": min(total, 1.0)}
    raise Irreducible(f"the surface comes from node {node.name!r} ({kind.lower()})")


def _material(material: Any) -> dict[str, Any]:
    """A material as the surface it renders (:data:`SURFACE_KEYS`), read from the node graph of
    its active Material Output; ``irreducible`` (why) when the graph is not a constant surface
    (then only the renders can judge it)."""
    out: dict[str, Any] = {"name": material.name}
    tree = material.node_tree
    if tree is None:  # no nodes: the viewport colour and settings
        return out | _surface(
            base_color=_vector(material.diffuse_color)[:3],
            roughness=float(material.roughness), metallic=float(material.metallic),
        )  # fmt: skip
    output = tree.get_output_node("CYCLES")
    if output is None:
        return out | _surface()  # no active output: Cycles renders it black
    try:
        surface = _shader(output.inputs["Surface"])
        return out | {k: surface[k] for k in SURFACE_KEYS}
    except Irreducible as exc:
        return out | {"irreducible": str(exc)}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return out | {"irreducible": f"the node graph could not be read ({exc})"}


def _materials(obj: Any) -> list[dict[str, Any]]:
    """``obj``'s materials in slot order (empty slots left out), each with ``share``: the
    fraction of its mesh's faces that use it (1 for objects without faces)."""
    slots = list(obj.material_slots)
    shares = np.ones(len(slots))
    if obj.type == "MESH" and len(obj.data.polygons) and slots:
        indices = np.empty(len(obj.data.polygons), dtype=np.int64)
        obj.data.polygons.foreach_get("material_index", indices)
        counts = np.bincount(np.clip(indices, 0, len(slots) - 1), minlength=len(slots))
        shares = counts / counts.sum()
    return [
        _material(slot.material) | {"share": float(share)}
        for slot, share in zip(slots, shares, strict=True)
        if slot.material
    ]


def _light(light: Any) -> dict[str, Any]:
    out = {
        "type": light.type,
        "energy": float(light.energy),
        "color": _vector(light.color),
    }
    if light.type == "SPOT":
        out["spot_size"] = float(light.spot_size)
    if light.type in ("POINT", "SPOT"):
        out["radius"] = float(light.shadow_soft_size)
    return out


def canonical_faces(faces: np.ndarray) -> np.ndarray:
    """Triangles in one order whatever order Blender made them in: each starts at its smallest
    vertex index (winding kept), rows sorted. Equal meshes then give equal arrays and pixels."""
    faces = np.asarray(faces, dtype=np.int32).reshape(-1, 3)
    if not len(faces):
        return faces
    first = np.argmin(faces, axis=1)
    rows = np.arange(len(faces))[:, None]
    rolled = faces[rows, (first[:, None] + np.arange(3)) % 3]
    return np.ascontiguousarray(rolled[np.lexsort(rolled.T[::-1])])


def _triangles(evaluated: Any) -> tuple[np.ndarray, np.ndarray]:
    """An evaluated object's mesh as flat arrays: local vertex coordinates (float64, 3 per
    vertex) and triangle corners (int32, 3 per triangle); the temporary mesh is freed."""
    data = evaluated.to_mesh()
    try:
        data.calc_loop_triangles()
        vertices = np.empty(len(data.vertices) * 3, dtype=np.float64)
        data.vertices.foreach_get("co", vertices)
        faces = np.empty(len(data.loop_triangles) * 3, dtype=np.int32)
        data.loop_triangles.foreach_get("vertices", faces)
    finally:
        evaluated.to_mesh_clear()
    return vertices, faces


def evaluated_mesh(obj: Any, depsgraph: Any) -> tuple[np.ndarray, np.ndarray]:
    """``obj``'s evaluated, triangulated mesh: vertices (float64 (n, 3), m, world coordinates)
    and faces (int32 (m, 3), in :func:`canonical_faces` order)."""
    evaluated = obj.evaluated_get(depsgraph)
    vertices, faces = _triangles(evaluated)
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    vertices = vertices.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    return vertices, canonical_faces(faces)


def shown(obj: Any, view_layer: Any) -> bool:
    """Whether a designer sees ``obj``: in the view layer (its collections not excluded), and
    hidden neither in the viewport nor from renders (object or collection). Hidden objects are
    helpers (a boolean cutter, a reference): they are neither scored nor drawn."""
    if not obj.visible_get(view_layer=view_layer) or obj.hide_render or obj.hide_viewport:
        return False
    return not any(c.hide_render or c.hide_viewport for c in obj.users_collection)


# Triangles a modifier makes of its input's, at most (a bound, read before anything is
# evaluated): a stack whose bound is far over the budget is refused without being built.
def _modifier_growth(modifier: Any, triangles: float, edges: float) -> tuple[float, float]:
    kind = modifier.type
    if kind in ("SUBSURF", "MULTIRES"):
        levels = getattr(modifier, "levels", 0) or getattr(modifier, "total_levels", 0)
        factor = 4.0 ** min(int(levels), 12)
        return triangles * factor * 2, edges * factor * 2
    if kind == "ARRAY":
        count = modifier.count if modifier.fit_type == "FIXED_COUNT" else 1
        return triangles * max(count, 1), edges * max(count, 1)
    if kind == "SCREW":
        steps = max(modifier.steps, 1) * max(modifier.iterations, 1)
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


def triangle_bound(obj: Any) -> float:
    """An upper estimate of ``obj``'s evaluated triangles, from its mesh data and modifier
    settings, without evaluating anything."""
    mesh = obj.data
    sides = np.empty(len(mesh.polygons), dtype=np.int64)
    mesh.polygons.foreach_get("loop_total", sides)
    triangles, edges = float(np.sum(sides - 2)), float(len(mesh.edges))
    for modifier in obj.modifiers:
        if modifier.show_viewport:
            triangles, edges = _modifier_growth(modifier, triangles, edges)
    return triangles


def check_bound(objects: Any, visible: dict[str, bool] | None = None) -> None:
    """Raise the budget's ``ValueError`` when the shown meshes' :func:`triangle_bound` is far
    over :data:`MAX_TRIANGLES`: such a stack is refused before anything builds it."""
    bound = sum(
        triangle_bound(o)
        for o in objects
        if o.type == "MESH" and (visible is None or visible.get(o.name, False))
    )
    if bound > 4 * MAX_TRIANGLES:
        raise _over_budget()


def _over_budget() -> ValueError:
    return ValueError(f"the scene's meshes have over {MAX_TRIANGLES:,} triangles; simplify it")


def scene_state(bpy: Any) -> dict[str, Any]:
    """The scene as plain data: ``objects`` by name, each with ``type``, ``parent``, ``shown``
    (see :func:`shown`), world ``location`` (m), ``rotation`` (unit quaternion w, x, y, z),
    ``scale``, ``modifiers``, ``materials`` (one dict per slot, see :func:`_material`),
    ``shape_keys`` (name to value), ``light`` (lights only), ``vertices`` (float64 (n, 3), m,
    world) and ``faces`` (int32 (m, 3)) of the evaluated mesh (empty for hidden objects).

    Raises ``ValueError`` with the budget's message for a scene over :data:`MAX_TRIANGLES`
    triangles, before evaluating it when its modifier settings already say so."""
    scene = bpy.context.scene
    view_layer = bpy.context.view_layer
    objects = sorted(scene.objects, key=lambda o: o.name)
    if len(objects) > MAX_OBJECTS:
        raise ValueError(f"the scene has {len(objects)} objects; the limit is {MAX_OBJECTS}")
    visible = {o.name: shown(o, view_layer) for o in objects}
    check_bound(objects, visible)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    triangles = 0
    out: dict[str, Any] = {}
    for obj in objects:
        location, rotation, scale = obj.matrix_world.decompose()
        entry: dict[str, Any] = {
            "type": obj.type,
            "parent": obj.parent.name if obj.parent else None,
            "shown": visible[obj.name],
            "location": _vector(location),
            "rotation": _vector(rotation),
            "scale": _vector(scale),
            "modifiers": [_modifier(m) for m in obj.modifiers],
            "materials": _materials(obj),
        }
        if obj.type == "MESH":
            keys = obj.data.shape_keys
            entry["shape_keys"] = (
                {k.name: float(k.value) for k in keys.key_blocks[1:]} if keys else {}
            )
            if visible[obj.name]:
                vertices, faces = evaluated_mesh(obj, depsgraph)
            else:
                vertices, faces = np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
            triangles += len(faces)
            if triangles > MAX_TRIANGLES:
                raise _over_budget()
            entry["vertices"], entry["faces"] = vertices, faces
        elif obj.type == "LIGHT":
            entry["light"] = _light(obj.data)
        out[obj.name] = entry
    for name, entry in _instances(depsgraph, visible):
        triangles += len(entry["faces"])
        if triangles > MAX_TRIANGLES:
            raise _over_budget()
        out[name] = entry
    return {"objects": out}


def _instances(depsgraph: Any, visible: dict[str, bool]) -> list[tuple[str, dict[str, Any]]]:
    """Meshes that shown objects instance (a collection instance, geometry-node or particle
    instances), as objects of their own named ``instancer/object#k`` in world coordinates:
    geometry the scene shows though no object of it holds."""
    found: list[tuple[str, dict[str, Any]]] = []
    counts: dict[str, int] = {}
    for instance in depsgraph.object_instances:
        if not instance.is_instance or instance.object.type != "MESH":
            continue
        parent = instance.parent
        if parent is None or not visible.get(parent.original.name, False):
            continue
        vertices, faces = _triangles(instance.object)
        matrix = np.array(instance.matrix_world, dtype=np.float64)
        location, rotation, scale = instance.matrix_world.decompose()
        label = f"{parent.original.name}/{instance.object.name}"
        counts[label] = counts.get(label, 0) + 1
        found.append((
            f"{label}#{counts[label]}",
            {
                "type": "MESH", "parent": parent.original.name, "shown": True,
                "location": _vector(location), "rotation": _vector(rotation),
                "scale": _vector(scale), "modifiers": [], "materials": [], "shape_keys": {},
                "vertices": vertices.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3],
                "faces": canonical_faces(faces), "instanced": True,
            },
        ))  # fmt: skip
        if len(found) > MAX_OBJECTS:
            raise ValueError(f"the scene instances over {MAX_OBJECTS} meshes; the limit is "
                             f"{MAX_OBJECTS}")  # fmt: skip
    return found


# -- Cycles renders from fixed cameras ------------------------------------------------------------


def _look_at(location: list[float], target: list[float]) -> tuple[float, float, float]:
    from mathutils import Vector

    direction = Vector(target) - Vector(location)
    return tuple(direction.to_track_quat("-Z", "Y").to_euler())


def _add_grid(bpy: Any, scene: Any, grid: dict[str, Any]) -> None:
    """The ground grid (``vertices``, ``faces``), drawn as dark lines that cast no shadow."""
    mesh = bpy.data.meshes.new("toolgym_grid")
    faces = np.asarray(grid["faces"]).tolist()
    mesh.from_pydata(np.asarray(grid["vertices"], dtype=np.float64).tolist(), [], faces)
    material = bpy.data.materials.new("toolgym_grid")
    tree = material.node_tree
    if tree is None:
        material.use_nodes = True
        tree = material.node_tree
    bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
    bsdf.inputs["Base Color"].default_value = (0.02, 0.02, 0.02, 1.0)
    bsdf.inputs["Roughness"].default_value = 1.0
    mesh.materials.append(material)
    lines = bpy.data.objects.new("toolgym_grid", mesh)
    lines.visible_shadow = False
    scene.collection.objects.link(lines)


def render_views(
    bpy: Any,
    workspace: str,
    cameras: list[dict[str, Any]],
    size: int,
    samples: int,
    grid: dict[str, Any] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Cycles (CPU, ``samples`` per pixel, ``seed``, no denoising) renders of the scene from
    ``cameras`` (each ``location``, ``target``, ``ortho_scale`` in m), with the ground ``grid``
    (``vertices``, ``faces``) when given. Returns uint8 RGB
    (V, size, size, 3). The scene's own cameras and world are replaced by fixed ones, so only
    the objects, materials and lights differ between two scenes' renders."""
    from PIL import Image

    scene = bpy.context.scene
    world = bpy.data.worlds.new("toolgym_world")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.05, 0.05, 0.05, 1)
    scene.world = world
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.seed = seed
    scene.cycles.use_denoising = False
    scene.cycles.use_adaptive_sampling = False
    scene.cycles.max_bounces = 4
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 1  # one thread: the same pixels whatever the machine
    scene.render.resolution_x = scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.view_settings.view_transform = "Standard"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    view_layer = bpy.context.view_layer
    for obj in scene.objects:  # what the state leaves out, the renders leave out too
        if not shown(obj, view_layer):
            obj.hide_render = True
    if grid is not None:
        _add_grid(bpy, scene, grid)
    images = []
    for k, view in enumerate(cameras):
        data = bpy.data.cameras.new(f"toolgym_view_{k}")
        data.type = "ORTHO"
        data.ortho_scale = float(view["ortho_scale"])
        data.clip_start, data.clip_end = 0.001, 10 * float(view["ortho_scale"]) + 100
        camera = bpy.data.objects.new(f"toolgym_view_{k}", data)
        scene.collection.objects.link(camera)
        camera.location = view["location"]
        camera.rotation_euler = _look_at(view["location"], view["target"])
        scene.camera = camera
        path = os.path.join(workspace, f".view-{k}.png")
        scene.render.filepath = path
        bpy.ops.render.render(write_still=True)
        with Image.open(path) as image:
            images.append(np.asarray(image.convert("RGB")))
        os.unlink(path)
    return np.stack(images)


def fixed_cameras(
    center: list[float], half_width: float, directions: list[list[float]]
) -> list[dict[str, Any]]:
    """Orthographic views looking at ``center`` from ``directions`` (towards the camera), each
    showing a square ``2 · half_width`` m wide (the framing of the mesh renderer's views)."""
    out = []
    for direction in directions:
        norm = math.sqrt(sum(d * d for d in direction))
        location = [c + d / norm * half_width * 4 for c, d in zip(center, direction, strict=True)]
        out.append({"location": location, "target": list(center), "ortho_scale": 2 * half_width})
    return out
