"""Blender tools for what ``toolgym.envs.blender.base_tools`` leaves out: lights' own settings (a
spot's cone, an area light's shape and spread, a sun's angular diameter, a colour temperature),
aiming an object at a point, and modifier settings that are not plain numbers (a mirror's axes,
on/off options, enum choices, a Geometry Nodes modifier's inputs).

They register on the same ``registry`` as the core tools (``tools.py`` gathers this module
with them), so scripts call them as ``tools.point_at("Key", 0, 0, 0.5)`` and tool calls name them
as JSON. Units as there: metres, degrees in arguments (radians in Blender's data), linear RGB;
on/off options are 0 or 1. Importing this module does not import ``bpy``.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from toolgym.envs.blender.base_tools import Coordinate, Name, obj, registry
from toolgym.envs.tools import Param, ToolCallError

Switch = Annotated[int, Param(None, 0, 1, 1)]
Length = Annotated[float, Param("m", 0.0, 100.0, 0.05)]
Cone = Annotated[float, Param("deg", 1.0, 180.0, 5.0)]
AREA_SHAPES = ("SQUARE", "RECTANGLE", "DISK", "ELLIPSE")
#: The on/off options ``set_modifier_flag`` may change, by the modifier type that has them.
MODIFIER_FLAGS = {
    "use_rim": "SOLIDIFY",
    "use_rim_only": "SOLIDIFY",
    "use_even_offset": "SOLIDIFY",
    "use_quality_normals": "SOLIDIFY",
    "use_flip_normals": "SOLIDIFY",
    "use_mirror_merge": "MIRROR",
    "use_clip": "MIRROR",
    "use_limit_surface": "SUBSURF",
    "use_creases": "SUBSURF",
    "use_merge_vertices": "ARRAY",
    "use_merge_vertices_cap": "ARRAY",
    "use_clamp_overlap": "BEVEL",
    "harden_normals": "BEVEL",
}
#: The enum settings ``set_modifier_choice`` may change (their values are Blender's own).
MODIFIER_CHOICES = (
    "subdivision_type",
    "boundary_smooth",
    "solidify_mode",
    "nonmanifold_thickness_mode",
    "nonmanifold_boundary_mode",
    "offset_type",
    "limit_method",
    "affect",
    "miter_outer",
    "decimate_type",
    "fit_type",
)


def _light(bpy: Any, name: str, tool: str, kind: str | None = None) -> Any:
    """The light data of the object ``name`` (of type ``kind`` when given)."""
    target = obj(bpy, name)
    if target.type != "LIGHT":
        raise ToolCallError(f"{tool}: {name!r} is a {target.type.lower()}, not a light")
    if kind is not None and target.data.type != kind:
        raise ToolCallError(
            f"{tool}: {name!r} is a {target.data.type.lower()} light, not a {kind.lower()} "
            "light (set_light changes its type)"
        )
    return target.data


def _modifier_of(bpy: Any, name: str, modifier: str, tool: str, kind: str | None = None) -> Any:
    target = obj(bpy, name)
    found = target.modifiers.get(modifier)
    if found is None:
        names = ", ".join(m.name for m in target.modifiers) or "none"
        raise ToolCallError(f"{tool}: {name!r} has no modifier {modifier!r}; it has: {names}")
    if kind is not None and found.type != kind:
        raise ToolCallError(f"{tool}: {modifier!r} is a {found.type} modifier, not {kind}")
    return found


# -- aiming -------------------------------------------------------------------------------------


@registry.tool(needs_part=True)
def point_at(bpy: Any, name: Name, x: Coordinate, y: Coordinate, z: Coordinate) -> str:
    """Turn an object (a light, a camera) so that its -Z axis points at (x, y, z), its local Y
    as near world +Z as it can be (a Track To constraint's "-Z, up Y"), where it stands.

    Args:
        name: the object aimed.
    """
    from mathutils import Matrix, Vector

    target = obj(bpy, name)
    bpy.context.view_layer.update()  # matrix_world follows a location set since
    location, _rotation, scale = target.matrix_world.decompose()
    direction = Vector((x, y, z)) - location
    if direction.length < 1e-6:
        raise ToolCallError(f"point_at: {name!r} stands at ({x:g}, {y:g}, {z:g}) already")
    turned = direction.to_track_quat("-Z", "Y")
    target.rotation_mode = "XYZ"
    if target.parent is None:
        target.rotation_euler = turned.to_euler("XYZ")
    else:
        target.matrix_world = Matrix.LocRotScale(location, turned, scale)
    return f"{name!r} points at ({x:g}, {y:g}, {z:g})"


# -- lights -------------------------------------------------------------------------------------


def _check_area(arguments: dict[str, Any]) -> str | None:
    if arguments["shape"] in ("RECTANGLE", "ELLIPSE") and arguments["size_y"] <= 0:
        return f"a {arguments['shape'].lower()} needs size_y > 0"
    if arguments["size"] <= 0:
        return "size must be > 0"
    return None


@registry.tool(needs_part=True, check=_check_area)
def set_area_light(
    bpy: Any,
    name: Name,
    shape: Annotated[str, Param(choices=AREA_SHAPES)],
    size: Length,
    size_y: Length = 0.0,
    spread: Cone = 180.0,
) -> str:
    """Set an area light's shape, size and spread (how widely it casts: 180° is a bare panel,
    less a softbox's grid).

    Args:
        name: the area light.
        shape: SQUARE, RECTANGLE, DISK or ELLIPSE.
        size: side of a square, diameter of a disk, width (local X) of a rectangle or ellipse.
        size_y: height (local Y) of a rectangle or ellipse (unused for a square or disk).
        spread: the angle it casts light over.
    """
    data = _light(bpy, name, "set_area_light", "AREA")
    data.shape, data.size, data.spread = shape, size, math.radians(spread)
    if shape in ("RECTANGLE", "ELLIPSE"):
        data.size_y = size_y
        return f"{name!r}: {shape.lower()} {size:g} × {size_y:g} m, spread {spread:g} deg"
    return f"{name!r}: {shape.lower()} {size:g} m, spread {spread:g} deg"


@registry.tool(needs_part=True)
def set_spot(
    bpy: Any, name: Name, size: Cone, blend: Annotated[float, Param(None, 0.0, 1.0, 0.05)] = 0.15
) -> str:
    """Set a spot light's cone: its full angle and the softness of its edge.

    Args:
        name: the spot light.
        size: the cone's full angle.
        blend: 0 a hard edge to 1 a fully soft one.
    """
    data = _light(bpy, name, "set_spot", "SPOT")
    data.spot_size, data.spot_blend = math.radians(size), blend
    return f"{name!r}: cone {size:g} deg, blend {blend:g}"


@registry.tool(needs_part=True)
def set_sun_angle(
    bpy: Any, name: Name, angle: Annotated[float, Param("deg", 0.0, 180.0, 0.5)]
) -> str:
    """Set a sun's angular diameter as seen from the ground (0: sharp shadows; the real sun's
    is about 0.5°).

    Args:
        name: the sun light.
        angle: the sun's angular diameter.
    """
    _light(bpy, name, "set_sun_angle", "SUN").angle = math.radians(angle)
    return f"{name!r}: angular diameter {angle:g} deg"


@registry.tool(needs_part=True)
def set_light_temperature(
    bpy: Any,
    name: Name,
    kelvin: Annotated[float, Param("K", 800.0, 20000.0, 100.0)],
    on: Switch = 1,
) -> str:
    """Give a light the colour of a black body at a temperature (Blender's light temperature,
    which multiplies its colour: leave that white for the pure temperature), or turn it off.

    Args:
        name: the light.
        kelvin: the colour temperature (1900 candle, 3000 warm bulb, 5500 daylight, 9000 sky).
        on: 1 to use the temperature, 0 to use the colour alone.
    """
    data = _light(bpy, name, "set_light_temperature")
    data.temperature, data.use_temperature = kelvin, bool(on)
    return f"{name!r}: {kelvin:g} K" + ("" if on else " (off)")


# -- modifiers ----------------------------------------------------------------------------------


def _check_mirror(arguments: dict[str, Any]) -> str | None:
    if not (arguments["x"] or arguments["y"] or arguments["z"]):
        return "mirror across at least one axis"
    return None


@registry.tool(needs_part=True, check=_check_mirror)
def set_mirror(
    bpy: Any,
    name: Name,
    modifier: Name,
    x: Switch = 1,
    y: Switch = 0,
    z: Switch = 0,
    merge: Switch = 1,
    merge_distance: Annotated[float, Param("m", 0.0, 1.0, 0.001)] = 0.001,
    bisect: Switch = 0,
) -> str:
    """Set a Mirror modifier: the object's local axes it mirrors across (through its origin),
    whether vertices on the seam merge, and whether geometry past the mirror plane is cut off.

    Args:
        name: the object.
        modifier: the Mirror modifier's name.
        x: 1 to mirror across local X (left to right).
        y: 1 to mirror across local Y.
        z: 1 to mirror across local Z.
        merge: 1 to merge vertices that meet on the seam.
        merge_distance: how close seam vertices must be to merge.
        bisect: 1 to cut away what lies past each mirror plane first.
    """
    found = _modifier_of(bpy, name, modifier, "set_mirror", "MIRROR")
    axes = (bool(x), bool(y), bool(z))
    found.use_axis = axes
    found.use_bisect_axis = tuple(a and bool(bisect) for a in axes)
    found.use_mirror_merge, found.merge_threshold = bool(merge), merge_distance
    listed = "".join(a for a, on in zip("XYZ", axes, strict=True) if on)
    return f"{name!r} {modifier!r} mirrors across {listed}" + (", merged" if merge else "")


@registry.tool(needs_part=True)
def set_modifier_flag(
    bpy: Any,
    name: Name,
    modifier: Name,
    flag: Annotated[str, Param(choices=tuple(MODIFIER_FLAGS))],
    on: Switch,
) -> str:
    """Turn an on/off option of a modifier on (1) or off (0).

    Args:
        name: the object.
        modifier: the modifier's name.
        flag: Solidify's use_rim (fill the rim), use_rim_only, use_even_offset (even
            thickness), use_quality_normals, use_flip_normals; Mirror's use_mirror_merge,
            use_clip; Subdivision Surface's use_limit_surface, use_creases; Array's
            use_merge_vertices, use_merge_vertices_cap; Bevel's use_clamp_overlap,
            harden_normals.
        on: 1 on, 0 off.
    """
    found = _modifier_of(bpy, name, modifier, "set_modifier_flag")
    if found.type != MODIFIER_FLAGS[flag]:
        raise ToolCallError(
            f"set_modifier_flag: {flag} is a {MODIFIER_FLAGS[flag]} option; "
            f"{modifier!r} is a {found.type} modifier"
        )
    setattr(found, flag, bool(on))
    return f"{name!r} {modifier!r} {flag} {'on' if on else 'off'}"


@registry.tool(needs_part=True)
def set_modifier_choice(
    bpy: Any,
    name: Name,
    modifier: Name,
    setting: Annotated[str, Param(choices=MODIFIER_CHOICES)],
    value: Annotated[str, Param()],
) -> str:
    """Set an option of a modifier that takes one of named values (Blender's identifiers),
    e.g. a Subdivision Surface's subdivision_type CATMULL_CLARK or SIMPLE.

    Args:
        name: the object.
        modifier: the modifier's name.
        setting: subdivision_type, boundary_smooth (Subdivision Surface); solidify_mode,
            nonmanifold_thickness_mode, nonmanifold_boundary_mode (Solidify); offset_type,
            limit_method, affect, miter_outer (Bevel); decimate_type (Decimate); fit_type
            (Array).
        value: one of the setting's values (the error lists them).
    """
    found = _modifier_of(bpy, name, modifier, "set_modifier_choice")
    prop = found.bl_rna.properties.get(setting)
    if prop is None or prop.type != "ENUM":
        raise ToolCallError(f"set_modifier_choice: a {found.type} modifier has no {setting!r}")
    allowed = [item.identifier for item in prop.enum_items]
    if value not in allowed:
        raise ToolCallError(f"set_modifier_choice: {setting} must be one of {allowed}")
    setattr(found, setting, value)
    return f"{name!r} {modifier!r} {setting} = {value}"


@registry.tool(needs_part=True)
def set_node_input(
    bpy: Any,
    name: Name,
    modifier: Name,
    input: Name,
    value: Annotated[float, Param(None, -10_000.0, 10_000.0, 0.05)],
) -> str:
    """Set an input of a Geometry Nodes modifier, by the name its node group gives it (a
    whole number for an integer input, 0 or 1 for an on/off one).

    Args:
        name: the object.
        modifier: the Geometry Nodes modifier's name.
        input: the input's name, as the modifier's panel shows it.
        value: the new value.
    """
    found = _modifier_of(bpy, name, modifier, "set_node_input", "NODES")
    tree = found.node_group
    sockets = (
        [
            item
            for item in tree.interface.items_tree
            if item.item_type == "SOCKET" and item.in_out == "INPUT"
        ]
        if tree is not None
        else []
    )
    socket = next((s for s in sockets if s.name == input), None)
    settable = [s.name for s in sockets if s.socket_type in _NODE_VALUES]
    if socket is None or socket.socket_type not in _NODE_VALUES:
        raise ToolCallError(
            f"set_node_input: {modifier!r} has no number input {input!r}; it has: "
            f"{', '.join(settable) or 'none'}"
        )
    kind = _NODE_VALUES[socket.socket_type]
    if kind is not float and value != int(value):
        raise ToolCallError(f"set_node_input: {input!r} takes a whole number, got {value:g}")
    low, high = getattr(socket, "min_value", None), getattr(socket, "max_value", None)
    if kind is not bool and low is not None and not low <= value <= high:
        raise ToolCallError(f"set_node_input: {input!r} must be in [{low:g}, {high:g}]")
    typed = kind(int(value)) if kind is not float else float(value)
    inputs = getattr(getattr(found, "properties", None), "inputs", None)
    if inputs is not None:  # Blender 5: the modifier's inputs are RNA properties
        getattr(inputs, socket.identifier).value = typed
    else:  # earlier Blender: ID properties keyed by the socket's identifier
        found[socket.identifier] = typed
    found.id_data.update_tag()
    return f"{name!r} {modifier!r} {input} = {value:g}"


_NODE_VALUES = {"NodeSocketFloat": float, "NodeSocketInt": int, "NodeSocketBool": bool}
