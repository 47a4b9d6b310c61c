"""The Blender tool set: each scene operation defined once, as a typed function.

Every tool takes ``bpy`` (the session's Blender) and edits the current scene; objects are named
by their Blender names. Lengths are in metres (Blender units), tool angles in degrees (Blender
stores radians), colours linear RGB in [0, 1]; the world is Z-up. Scripts in the sandbox call
them as ``tools.set_location("Cube", 1, 0, 0)``; tool calls name them as JSON. Each returns a short
text saying what it did. Importing this module does not import ``bpy``.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from toolgym.envs.tools import Param, ToolCallError, ToolRegistry


def _check_bpy(part: Any) -> str | None:
    if getattr(part, "__name__", None) != "bpy":
        return f"the first argument must be the bpy module, got {type(part).__name__}"
    return None


registry = ToolRegistry("blender", check_part=_check_bpy)

Name = Annotated[str, Param()]
Coordinate = Annotated[float, Param("m", -100.0, 100.0, 0.05)]
Size = Annotated[float, Param("m", 0.001, 100.0, 0.05)]
Angle = Annotated[float, Param("deg", -360.0, 360.0, 5.0)]
Factor = Annotated[float, Param(None, 0.001, 100.0, 0.05)]
Unit = Annotated[float, Param(None, 0.0, 1.0, 0.05)]
Energy = Annotated[float, Param("W", 0.0, 100_000.0, 10.0)]
PRIMITIVES = ("cube", "uv_sphere", "ico_sphere", "cylinder", "cone", "torus", "plane")
MODIFIERS = ("ARRAY", "BEVEL", "SUBSURF", "SOLIDIFY", "SCREW", "MIRROR", "DECIMATE", "WIREFRAME")
LIGHTS = ("POINT", "SUN", "SPOT", "AREA")
# The modifier settings set_modifier may change, with their ranges (Blender's own units).
MODIFIER_SETTINGS = {
    "count": (1, 200),
    "width": (0.0, 10.0),
    "segments": (1, 64),
    "levels": (0, 4),
    "render_levels": (0, 4),
    "thickness": (-10.0, 10.0),
    "steps": (2, 512),
    "render_steps": (2, 512),
    "screw_offset": (-100.0, 100.0),
    "angle": (-12.57, 12.57),
    "iterations": (1, 64),
    "ratio": (0.0, 1.0),
    "offset": (-10.0, 10.0),
    "use_relative_offset": (0, 1),
    "use_constant_offset": (0, 1),
}


def obj(bpy: Any, name: str) -> Any:
    """The object called ``name``, or a :class:`ToolCallError` listing the scene's objects."""
    found = bpy.data.objects.get(name)
    if found is None:
        names = ", ".join(sorted(o.name for o in bpy.context.scene.objects)) or "none"
        raise ToolCallError(f"unknown object {name!r}; the scene has: {names}")
    return found


def _mesh_object(bpy: Any, name: str, tool: str) -> Any:
    found = obj(bpy, name)
    if found.type != "MESH":
        raise ToolCallError(f"{tool}: {name!r} is a {found.type.lower()}, not a mesh")
    return found


def _free_name(bpy: Any, name: str) -> None:
    if bpy.data.objects.get(name) is not None:
        raise ToolCallError(f"an object called {name!r} exists already; choose another name")


def _link(bpy: Any, new: Any, x: float, y: float, z: float) -> None:
    bpy.context.scene.collection.objects.link(new)
    new.location = (x, y, z)


@registry.tool
def add_primitive(
    bpy: Any,
    kind: Annotated[str, Param(choices=PRIMITIVES)],
    name: Name,
    size: Size = 2.0,
    depth: Annotated[float, Param("m", 0.0, 100.0, 0.05)] = 0.0,
    segments: Annotated[int, Param(None, 3, 256, 1)] = 32,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 0.0,
) -> str:
    """Add a mesh primitive centred at (x, y, z).

    Args:
        kind: cube, uv_sphere, ico_sphere, cylinder, cone, torus or plane.
        name: the new object's name.
        size: edge length (cube, plane) or diameter (sphere, cylinder, cone base, torus).
        depth: height of a cylinder or cone, tube diameter of a torus (0: same as size, a
            quarter of it for a torus).
        segments: segments around (spheres, cylinders, cones, tori).
    """
    import bmesh

    _free_name(bpy, name)
    mesh = bpy.data.meshes.new(name)
    built = bmesh.new()
    try:
        radius = size / 2
        height = depth or size
        if kind == "cube":
            bmesh.ops.create_cube(built, size=size)
        elif kind == "plane":
            bmesh.ops.create_grid(built, x_segments=1, y_segments=1, size=radius)
        elif kind == "uv_sphere":
            rings = max(segments // 2, 2)
            bmesh.ops.create_uvsphere(built, u_segments=segments, v_segments=rings, radius=radius)
            _canonical_order(built)
        elif kind == "ico_sphere":
            bmesh.ops.create_icosphere(built, subdivisions=2, radius=radius)
        elif kind in ("cylinder", "cone"):
            top = radius if kind == "cylinder" else 0.0
            bmesh.ops.create_cone(
                built, cap_ends=True, segments=segments, radius1=radius, radius2=top, depth=height
            )
        else:  # torus: a circle swept around Z
            tube = (depth or size / 4) / 2
            _torus(built, radius - tube, tube, segments)
        built.to_mesh(mesh)
    finally:
        built.free()
    new = bpy.data.objects.new(name, mesh)
    _link(bpy, new, x, y, z)
    return f"added {kind} {name!r}"


def _canonical_order(built: Any) -> None:
    """Rebuild a bmesh with its faces in the order of their vertices, and its edges as those
    faces make them. ``create_uvsphere`` welds its rings in an order that follows memory
    addresses: the same call gave the same vertices but another face and edge order in each
    process, and a modifier on it (a Solidify's normals) then moved the evaluated surface by
    ~1e-8 m, so rewards differed between processes."""
    built.verts.index_update()
    corners = sorted(tuple(v.index for v in f.verts) for f in built.faces)
    points = [v.co.copy() for v in built.verts]
    built.clear()
    verts = [built.verts.new(p) for p in points]
    for face in corners:
        built.faces.new([verts[i] for i in face])


def _torus(built: Any, major: float, minor: float, segments: int) -> None:
    ring = max(segments // 2, 3)
    rows = []
    for i in range(segments):
        a = 2 * math.pi * i / segments
        row = []
        for j in range(ring):
            b = 2 * math.pi * j / ring
            r = major + minor * math.cos(b)
            row.append(built.verts.new((r * math.cos(a), r * math.sin(a), minor * math.sin(b))))
        rows.append(row)
    for i in range(segments):
        for j in range(ring):
            a, b = rows[i], rows[(i + 1) % segments]
            built.faces.new((a[j], b[j], b[(j + 1) % ring], a[(j + 1) % ring]))


@registry.tool(needs_part=True)
def delete_object(bpy: Any, name: Name) -> str:
    """Delete an object (its data stays for other users).

    Args:
        name: the object.
    """
    bpy.data.objects.remove(obj(bpy, name), do_unlink=True)
    return f"deleted {name!r}"


@registry.tool(needs_part=True)
def set_location(bpy: Any, name: Name, x: Coordinate, y: Coordinate, z: Coordinate) -> str:
    """Move an object: its origin to (x, y, z), relative to its parent if it has one.

    Args:
        name: the object.
    """
    obj(bpy, name).location = (x, y, z)
    return f"{name!r} at ({x:g}, {y:g}, {z:g})"


@registry.tool(needs_part=True)
def set_rotation(bpy: Any, name: Name, x: Angle, y: Angle, z: Angle) -> str:
    """Rotate an object: XYZ Euler angles about its origin.

    Args:
        name: the object.
    """
    target = obj(bpy, name)
    target.rotation_mode = "XYZ"
    target.rotation_euler = tuple(math.radians(a) for a in (x, y, z))
    return f"{name!r} rotated ({x:g}, {y:g}, {z:g}) deg"


@registry.tool(needs_part=True)
def set_scale(bpy: Any, name: Name, x: Factor, y: Factor, z: Factor) -> str:
    """Scale an object along its local axes.

    Args:
        name: the object.
    """
    obj(bpy, name).scale = (x, y, z)
    return f"{name!r} scaled ({x:g}, {y:g}, {z:g})"


@registry.tool(needs_part=True)
def add_modifier(
    bpy: Any,
    name: Name,
    kind: Annotated[str, Param(choices=MODIFIERS)],
    modifier: Name = "",
) -> str:
    """Add a modifier at the end of an object's stack.

    Args:
        name: the mesh object.
        kind: ARRAY, BEVEL, SUBSURF, SOLIDIFY, SCREW, MIRROR, DECIMATE or WIREFRAME.
        modifier: the modifier's name (default: the kind, title-cased).
    """
    target = _mesh_object(bpy, name, "add_modifier")
    label = modifier or kind.title()
    if target.modifiers.get(label) is not None:
        raise ToolCallError(f"add_modifier: {name!r} has a modifier {label!r} already")
    target.modifiers.new(label, kind)
    return f"{name!r} has modifier {label!r} ({kind})"


def _modifier(bpy: Any, name: str, modifier: str, tool: str) -> Any:
    target = obj(bpy, name)
    found = target.modifiers.get(modifier)
    if found is None:
        names = ", ".join(m.name for m in target.modifiers) or "none"
        raise ToolCallError(f"{tool}: {name!r} has no modifier {modifier!r}; it has: {names}")
    return found


def _check_setting(arguments: dict[str, Any]) -> str | None:
    low, high = MODIFIER_SETTINGS[arguments["setting"]]
    value = arguments["value"]
    if not low <= value <= high:
        return f"{arguments['setting']} = {value:g} is out of range [{low}, {high}]"
    if isinstance(low, int) and value != int(value):
        return f"{arguments['setting']} must be a whole number, got {value:g}"
    return None


@registry.tool(needs_part=True, check=_check_setting)
def set_modifier(
    bpy: Any,
    name: Name,
    modifier: Name,
    setting: Annotated[str, Param(choices=tuple(MODIFIER_SETTINGS))],
    value: Annotated[float, Param(None, -512.0, 512.0, 1.0)],
) -> str:
    """Set one setting of a modifier (angles in radians, lengths in m, as Blender stores them).

    Args:
        name: the object.
        modifier: the modifier's name.
        setting: count, width, segments, levels, render_levels, thickness, steps, render_steps,
            screw_offset, angle, iterations, ratio, offset, use_relative_offset or
            use_constant_offset.
        value: the new value.
    """
    found = _modifier(bpy, name, modifier, "set_modifier")
    if not hasattr(found, setting):
        raise ToolCallError(f"set_modifier: a {found.type} modifier has no setting {setting!r}")
    current = getattr(found, setting)
    kind = type(current)
    setattr(found, setting, kind(value) if kind in (int, bool) else float(value))
    return f"{name!r} {modifier!r} {setting} = {value:g}"


def _bake(bpy: Any, target: Any) -> None:
    """Replace ``target``'s mesh by its evaluated mesh (modifiers and shape keys applied)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    baked = bpy.data.meshes.new_from_object(target.evaluated_get(depsgraph))
    target.modifiers.clear()
    if target.data.shape_keys is not None:
        target.shape_key_clear()
    target.data = baked


@registry.tool(needs_part=True)
def apply_modifier(bpy: Any, name: Name, modifier: Name) -> str:
    """Apply a modifier: bake it into the mesh (the modifiers before it are applied too, the
    ones after it stay in the stack).

    Args:
        name: the object.
        modifier: the modifier's name.
    """
    target = obj(bpy, name)
    _modifier(bpy, name, modifier, "apply_modifier")
    kept = []
    for m in list(target.modifiers)[[m.name for m in target.modifiers].index(modifier) + 1 :]:
        kept.append((m.name, m.type, _settings(m)))
        target.modifiers.remove(m)
    _bake(bpy, target)
    for label, kind, settings in kept:
        restored = target.modifiers.new(label, kind)
        for key, value in settings.items():
            setattr(restored, key, value)
    return f"applied {modifier!r} to {name!r}"


def _settings(modifier: Any) -> dict[str, Any]:
    return {
        p.identifier: getattr(modifier, p.identifier)
        for p in modifier.bl_rna.properties
        if not p.is_readonly
        and p.type in ("INT", "FLOAT", "BOOLEAN", "ENUM")
        and not getattr(p, "is_array", False)
        and p.identifier != "name"
    }


@registry.tool(needs_part=True)
def boolean(
    bpy: Any,
    name: Name,
    other: Name,
    operation: Annotated[str, Param(choices=("DIFFERENCE", "UNION", "INTERSECT"))] = "DIFFERENCE",
) -> str:
    """Combine ``other`` into ``name`` with an exact boolean, then delete ``other``.

    Args:
        name: the mesh object kept.
        other: the mesh object used as the cutter (or added, or intersected); deleted after.
        operation: DIFFERENCE, UNION or INTERSECT.
    """
    target = _mesh_object(bpy, name, "boolean")
    cutter = _mesh_object(bpy, other, "boolean")
    if target == cutter:
        raise ToolCallError("boolean: an object cannot be combined with itself")
    _bake(bpy, target)
    modifier = target.modifiers.new("toolgym_boolean", "BOOLEAN")
    modifier.object, modifier.operation, modifier.solver = cutter, operation, "EXACT"
    _bake(bpy, target)
    bpy.data.objects.remove(cutter, do_unlink=True)
    return f"{name!r} {operation.lower()} {other!r}"


@registry.tool(needs_part=True)
def set_material(
    bpy: Any,
    name: Name,
    r: Unit,
    g: Unit,
    b: Unit,
    roughness: Unit = 0.5,
    metallic: Unit = 0.0,
    emission_strength: Annotated[float, Param(None, 0.0, 100.0, 0.5)] = 0.0,
    material: Name = "",
) -> str:
    """Give an object a Principled BSDF material (its first slot), emitting its base colour
    when ``emission_strength`` > 0.

    Args:
        name: the mesh object.
        r: base colour, red (linear).
        g: base colour, green (linear).
        b: base colour, blue (linear).
        roughness: 0 mirror-like to 1 matte.
        metallic: 0 dielectric to 1 metal.
        emission_strength: emitted light, 0 for none.
        material: the material's name (default: the object's material, or a new one).
    """
    target = _mesh_object(bpy, name, "set_material")
    found = bpy.data.materials.get(material) if material else target.active_material
    if found is None:
        found = bpy.data.materials.new(material or f"{name}_material")
    found.use_nodes = True
    node = next((n for n in found.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if node is None:
        node = found.node_tree.nodes.new("ShaderNodeBsdfPrincipled")
    node.inputs["Base Color"].default_value = (r, g, b, 1.0)
    node.inputs["Roughness"].default_value = roughness
    node.inputs["Metallic"].default_value = metallic
    node.inputs["Emission Color"].default_value = (r, g, b, 1.0)
    node.inputs["Emission Strength"].default_value = emission_strength
    if target.material_slots:
        target.material_slots[0].material = found
    else:
        target.data.materials.append(found)
    return f"{name!r} has material {found.name!r}"


@registry.tool(needs_part=True)
def set_shape_key(
    bpy: Any, name: Name, key: Name, value: Annotated[float, Param(None, -10.0, 10.0, 0.05)]
) -> str:
    """Set a shape key's value (its blend weight; 0 is the basis, 1 the key's full shape).

    Args:
        name: the mesh object.
        key: the shape key's name.
        value: the weight, within the key's slider range.
    """
    target = _mesh_object(bpy, name, "set_shape_key")
    keys = target.data.shape_keys
    block = keys.key_blocks.get(key) if keys else None
    if block is None or block == keys.reference_key:
        names = ", ".join(k.name for k in keys.key_blocks[1:]) if keys else ""
        raise ToolCallError(
            f"set_shape_key: {name!r} has no shape key {key!r}; it has: {names or 'none'}"
        )
    if not block.slider_min <= value <= block.slider_max:
        raise ToolCallError(
            f"set_shape_key: value {value:g} is outside {key!r}'s range "
            f"[{block.slider_min:g}, {block.slider_max:g}]"
        )
    block.value = value
    return f"{name!r} {key!r} = {value:g}"


@registry.tool
def add_light(
    bpy: Any,
    name: Name,
    kind: Annotated[str, Param(choices=LIGHTS)] = "POINT",
    energy: Energy = 1000.0,
    r: Unit = 1.0,
    g: Unit = 1.0,
    b: Unit = 1.0,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Coordinate = 5.0,
) -> str:
    """Add a light at (x, y, z), pointing down (-Z) until rotated.

    Args:
        name: the new light's name.
        kind: POINT, SUN, SPOT or AREA.
        energy: power in W (irradiance in W/m² for a sun).
        r: colour, red.
        g: colour, green.
        b: colour, blue.
    """
    _free_name(bpy, name)
    data = bpy.data.lights.new(name, kind)
    data.energy, data.color = energy, (r, g, b)
    _link(bpy, bpy.data.objects.new(name, data), x, y, z)
    return f"added {kind.lower()} light {name!r}"


@registry.tool(needs_part=True)
def set_light(
    bpy: Any,
    name: Name,
    kind: Annotated[str, Param(choices=LIGHTS)],
    energy: Energy,
    r: Unit = 1.0,
    g: Unit = 1.0,
    b: Unit = 1.0,
) -> str:
    """Set a light's type, energy and colour.

    Args:
        name: the light object.
        kind: POINT, SUN, SPOT or AREA.
        energy: power in W (irradiance in W/m² for a sun).
        r: colour, red.
        g: colour, green.
        b: colour, blue.
    """
    target = obj(bpy, name)
    if target.type != "LIGHT":
        raise ToolCallError(f"set_light: {name!r} is a {target.type.lower()}, not a light")
    target.data.type = kind
    target.data.energy, target.data.color = energy, (r, g, b)
    return f"{name!r}: {kind.lower()} light, {energy:g} W"


@registry.tool(needs_part=True)
def duplicate_object(
    bpy: Any, name: Name, new_name: Name, x: Coordinate, y: Coordinate, z: Coordinate
) -> str:
    """Copy an object (with its own copy of the mesh) and place the copy at (x, y, z).

    Args:
        name: the object copied.
        new_name: the copy's name.
    """
    source = obj(bpy, name)
    _free_name(bpy, new_name)
    copy = source.copy()
    if source.data is not None:
        copy.data = source.data.copy()
    copy.name = new_name
    _link(bpy, copy, x, y, z)
    return f"copied {name!r} to {new_name!r}"


@registry.tool(needs_part=True)
def rename_object(bpy: Any, name: Name, new_name: Name) -> str:
    """Rename an object.

    Args:
        name: the object.
        new_name: its new name.
    """
    target = obj(bpy, name)
    _free_name(bpy, new_name)
    target.name = new_name
    return f"renamed {name!r} to {new_name!r}"


@registry.tool(needs_part=True)
def set_parent(bpy: Any, name: Name, parent: Name) -> str:
    """Parent an object to another, keeping where it is in the world.

    Args:
        name: the child.
        parent: the new parent.
    """
    child, found = obj(bpy, name), obj(bpy, parent)
    if child == found:
        raise ToolCallError("set_parent: an object cannot be its own parent")
    world = child.matrix_world.copy()
    child.parent = found
    child.matrix_world = world
    return f"{name!r} is a child of {parent!r}"


@registry.tool(needs_part=True)
def join_objects(bpy: Any, name: Name, other: Name) -> str:
    """Merge ``other``'s mesh into ``name`` (no boolean: overlapping parts stay separate
    shells), then delete ``other``.

    Args:
        name: the mesh object kept.
        other: the mesh object merged in and deleted.
    """
    import bmesh

    target, source = (
        _mesh_object(bpy, name, "join_objects"),
        _mesh_object(bpy, other, "join_objects"),
    )
    if target == source:
        raise ToolCallError("join_objects: an object cannot be joined with itself")
    _bake(bpy, target)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    extra = bpy.data.meshes.new_from_object(source.evaluated_get(depsgraph))
    extra.transform(target.matrix_world.inverted() @ source.matrix_world)
    built = bmesh.new()
    try:
        built.from_mesh(target.data)
        built.from_mesh(extra)
        built.to_mesh(target.data)
    finally:
        built.free()
    bpy.data.meshes.remove(extra)
    bpy.data.objects.remove(source, do_unlink=True)
    return f"joined {other!r} into {name!r}"


class Tools:
    """The registry's tools as methods bound to ``bpy``, for scripts:
    ``tools.set_location("Cube", 0, 0, 1)``."""

    def __init__(self) -> None:
        import bpy

        for name, tool in registry.tools.items():
            setattr(self, name, _bound(tool.function, bpy))

    def __repr__(self) -> str:
        return f"<Blender tools: {', '.join(registry.tools)}>"


def _bound(function: Any, bpy: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return function(bpy, *args, **kwargs)

    call.__name__, call.__doc__ = function.__name__, function.__doc__
    return call
