"""Material tools beyond one Principled BSDF's colour: its other inputs (transmission, IOR,
coat ...), a second shader mixed in by a factor, and a procedural texture into its base colour.

They register on the Blender tool registry (``base_tools.registry``; ``tools`` gathers this
module with the rest), so scripts call them as ``tools.set_bsdf_input("Vase", "ior", 1.45)``
and tool calls name them as JSON, like every other tool. Each works on the material in an
object's first slot and its Principled BSDF (the first in its node tree, the one
``set_material`` sets), making a grey one when the object has none. Colours are linear RGB in
[0, 1]; values as Blender stores them. Importing this module does not import ``bpy``.
"""

from __future__ import annotations

from typing import Annotated, Any

from toolgym.envs.blender.base_tools import Name, Unit, _mesh_object, registry
from toolgym.envs.tools import Param

#: The Principled BSDF inputs ``set_bsdf_input`` sets: Blender's input name and its range.
BSDF_INPUTS = {
    "metallic": ("Metallic", 0.0, 1.0),
    "roughness": ("Roughness", 0.0, 1.0),
    "ior": ("IOR", 1.0, 4.0),
    "alpha": ("Alpha", 0.0, 1.0),
    "transmission": ("Transmission Weight", 0.0, 1.0),
    "coat": ("Coat Weight", 0.0, 1.0),
    "coat_roughness": ("Coat Roughness", 0.0, 1.0),
    "coat_ior": ("Coat IOR", 1.0, 4.0),
    "sheen": ("Sheen Weight", 0.0, 1.0),
    "sheen_roughness": ("Sheen Roughness", 0.0, 1.0),
    "specular": ("Specular IOR Level", 0.0, 1.0),
    "subsurface": ("Subsurface Weight", 0.0, 1.0),
    "anisotropic": ("Anisotropic", 0.0, 1.0),
}
#: The shaders ``mix_shader`` mixes in, by Blender node type.
MIXED_SHADERS = {
    "GLOSSY": "ShaderNodeBsdfGlossy",
    "DIFFUSE": "ShaderNodeBsdfDiffuse",
    "GLASS": "ShaderNodeBsdfGlass",
    "EMISSION": "ShaderNodeEmission",
    "TRANSPARENT": "ShaderNodeBsdfTransparent",
}
#: The textures ``set_texture`` drives a base colour with (``NONE`` removes the texture).
TEXTURES = {
    "CHECKER": "ShaderNodeTexChecker",
    "NOISE": "ShaderNodeTexNoise",
    "WAVE": "ShaderNodeTexWave",
    "NONE": "",
}
# The names of the nodes these tools add: a second call finds and replaces them.
MIX_NODE, MIXED_NODE = "Shader Mix", "Mixed Shader"
TEXTURE_NODE, TEXTURE_MIX_NODE = "Base Texture", "Base Texture Colours"


def _material(bpy: Any, name: str, tool: str) -> tuple[Any, Any]:
    """The material in ``name``'s first slot (a new one when it has none) and its first
    Principled BSDF (added, and linked to the output, when it has none)."""
    target = _mesh_object(bpy, name, tool)
    found = target.active_material
    if found is None:
        found = bpy.data.materials.new(f"{name}_material")
        if target.material_slots:
            target.material_slots[0].material = found
        else:
            target.data.materials.append(found)
    if found.node_tree is None:
        found.use_nodes = True
    tree = found.node_tree
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        bsdf = tree.nodes.new("ShaderNodeBsdfPrincipled")
        tree.links.new(bsdf.outputs[0], _output(tree).inputs["Surface"])
    return found, bsdf


def _output(tree: Any) -> Any:
    """The tree's active Material Output (a new one when it has none)."""
    found = tree.get_output_node("ALL") or tree.get_output_node("CYCLES")
    return found if found is not None else tree.nodes.new("ShaderNodeOutputMaterial")


def _remove(tree: Any, *names: str) -> None:
    for label in names:
        node = tree.nodes.get(label)
        if node is not None:
            tree.nodes.remove(node)


def _socket(sockets: Any, identifier: str) -> Any:
    """The socket of ``sockets`` with ``identifier`` (a Mix node's names repeat per type)."""
    return next(s for s in sockets if s.identifier == identifier)


def _check_input(arguments: dict[str, Any]) -> str | None:
    _, low, high = BSDF_INPUTS[arguments["setting"]]
    value = arguments["value"]
    if not low <= value <= high:
        return f"{arguments['setting']} = {value:g} is out of range [{low:g}, {high:g}]"
    return None


@registry.tool(needs_part=True, check=_check_input)
def set_bsdf_input(
    bpy: Any,
    name: Name,
    setting: Annotated[str, Param(choices=tuple(BSDF_INPUTS))],
    value: Annotated[float, Param(None, 0.0, 4.0, 0.05)],
) -> str:
    """Set one input of the Principled BSDF of an object's material (its first slot; a grey
    material when it has none): glass is transmission 1, a clear coat is coat > 0.

    Args:
        name: the mesh object.
        setting: metallic, roughness, ior (1 to 4), alpha, transmission, coat, coat_roughness,
            coat_ior (1 to 4), sheen, sheen_roughness, specular (the specular IOR level),
            subsurface or anisotropic (0 to 1 but where said).
        value: the new value.
    """
    material, bsdf = _material(bpy, name, "set_bsdf_input")
    label = BSDF_INPUTS[setting][0]
    bsdf.inputs[label].default_value = value
    return f"{name!r} material {material.name!r}: {label} = {value:g}"


@registry.tool(needs_part=True)
def mix_shader(
    bpy: Any,
    name: Name,
    shader: Annotated[str, Param(choices=tuple(MIXED_SHADERS))],
    factor: Unit,
    r: Unit = 1.0,
    g: Unit = 1.0,
    b: Unit = 1.0,
    roughness: Unit = 0.0,
    strength: Annotated[float, Param(None, 0.0, 100.0, 0.5)] = 1.0,
) -> str:
    """Mix a second shader into an object's material: a Mix Shader between its Principled BSDF
    (shown alone at factor 0) and a new ``shader`` (alone at factor 1) feeds the material
    output. A second call replaces the mixed-in shader and the factor.

    Args:
        name: the mesh object.
        shader: GLOSSY, DIFFUSE, GLASS, EMISSION or TRANSPARENT.
        factor: how much of the new shader shows, 0 to 1.
        r: the new shader's colour, red (linear; a transparent shader's tint).
        g: the new shader's colour, green.
        b: the new shader's colour, blue.
        roughness: the new shader's roughness (glossy, diffuse and glass).
        strength: the emission's strength (emission only).
    """
    material, bsdf = _material(bpy, name, "mix_shader")
    tree = material.node_tree
    _remove(tree, MIX_NODE, MIXED_NODE)
    mixed = tree.nodes.new(MIXED_SHADERS[shader])
    mixed.name = mixed.label = MIXED_NODE
    mixed.inputs["Color"].default_value = (r, g, b, 1.0)
    if "Roughness" in mixed.inputs:
        mixed.inputs["Roughness"].default_value = roughness
    if shader == "EMISSION":
        mixed.inputs["Strength"].default_value = strength
    mix = tree.nodes.new("ShaderNodeMixShader")
    mix.name = mix.label = MIX_NODE
    _socket(mix.inputs, "Fac").default_value = factor
    tree.links.new(bsdf.outputs[0], mix.inputs[1])
    tree.links.new(mixed.outputs[0], mix.inputs[2])
    tree.links.new(mix.outputs[0], _output(tree).inputs["Surface"])
    bsdf.location, mixed.location = (-300.0, 200.0), (-300.0, -200.0)
    return f"{name!r} material {material.name!r}: {shader.lower()} mixed in by {factor:g}"


@registry.tool(needs_part=True)
def set_texture(
    bpy: Any,
    name: Name,
    kind: Annotated[str, Param(choices=tuple(TEXTURES))],
    r: Unit,
    g: Unit,
    b: Unit,
    r2: Unit = 1.0,
    g2: Unit = 1.0,
    b2: Unit = 1.0,
    scale: Annotated[float, Param(None, 0.1, 100.0, 0.5)] = 5.0,
) -> str:
    """Drive the base colour of an object's Principled BSDF by a procedural texture between two
    colours, in the object's generated coordinates (its bounds, 0 to 1 along each axis): a
    checker's two colours, or a noise's or wave's value mixing colour 1 (at 0) into colour 2
    (at 1); NONE removes the texture, leaving base colour 1. A second call replaces it;
    ``set_material`` keeps it.

    Args:
        name: the mesh object.
        kind: CHECKER, NOISE, WAVE (bands along X) or NONE.
        r: colour 1, red (linear).
        g: colour 1, green.
        b: colour 1, blue.
        r2: colour 2, red.
        g2: colour 2, green.
        b2: colour 2, blue.
        scale: the texture's scale (a checker's squares per unit of the coordinates).
    """
    material, bsdf = _material(bpy, name, "set_texture")
    tree = material.node_tree
    _remove(tree, TEXTURE_NODE, TEXTURE_MIX_NODE)
    base = bsdf.inputs["Base Color"]
    for link in list(base.links):
        tree.links.remove(link)
    first, second = (r, g, b, 1.0), (r2, g2, b2, 1.0)
    base.default_value = first
    if kind == "NONE":
        return f"{name!r} material {material.name!r}: no texture"
    texture = tree.nodes.new(TEXTURES[kind])
    texture.name = texture.label = TEXTURE_NODE
    texture.inputs["Scale"].default_value = scale
    texture.location = bsdf.location.x - 500.0, bsdf.location.y
    if kind == "CHECKER":
        texture.inputs["Color1"].default_value = first
        texture.inputs["Color2"].default_value = second
        tree.links.new(texture.outputs["Color"], base)
    else:
        mix = tree.nodes.new("ShaderNodeMix")
        mix.name = mix.label = TEXTURE_MIX_NODE
        mix.data_type = "RGBA"
        _socket(mix.inputs, "A_Color").default_value = first
        _socket(mix.inputs, "B_Color").default_value = second
        mix.location = bsdf.location.x - 250.0, bsdf.location.y
        tree.links.new(_socket(texture.outputs, "Fac"), _socket(mix.inputs, "Factor_Float"))
        tree.links.new(_socket(mix.outputs, "Result_Color"), base)
    return f"{name!r} material {material.name!r}: {kind.lower()} texture at scale {scale:g}"
