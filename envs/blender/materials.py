"""Node graphs of materials and lights, reduced to what they render: runs in trusted sessions.

A material's graph, read from its active Material Output through links, reduces to the constant
surface the verifier compares (:data:`SURFACE_KEYS`: base colour, roughness, metallic, emitted
light, transmission, alpha) and to ``settings``: every other input and option of the shaders it
reaches (a Principled BSDF's coat, sheen, subsurface, IOR, its distribution ...) that differs
from a new node's, so no input that changes the render goes unread. What carries no effect is
reduced away, whatever it looks like: reroutes, muted nodes (through their internal links, as
Blender passes them), node groups (into their trees), identity Gamma, Hue/Saturation,
Bright/Contrast, Clamp, Map Range, colour ramps and the arithmetic nodes, and a mix whose factor
is 0 or 1 (only the side it shows is read). A graph that still does not reduce (a texture, a
bump map, a volume) is :class:`Irreducible`: said so, and left to the renders, which then decide
with the weight of a full check. A light's node tree reduces to the tint its Emission node
gives it.

Colours are linear RGB; values as Blender stores them.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Callable
from typing import Any

import numpy as np

# What a surface shows, as the verifier compares it: base colour (linear RGB), roughness,
# metallic, emitted radiance (linear RGB, colour × strength), transmission and alpha.
SURFACE_KEYS = ("base_color", "roughness", "metallic", "emission", "transmission", "alpha")
_BLACK = {"base_color": [0.0, 0.0, 0.0], "roughness": 1.0, "metallic": 0.0,
          "emission": [0.0, 0.0, 0.0], "transmission": 0.0, "alpha": 1.0}  # fmt: skip
_LUMINANCE = (0.2126, 0.7152, 0.0722)  # Blender's colour-to-value weights (linear Rec. 709)
MAX_DEPTH = 256  # links followed from one output, at most: a deeper graph is not read
# A shader's inputs that the surface keys model, by node type; every other enabled input (and
# option) is a setting, compared as it is.
_MODELLED = {
    "BSDF_PRINCIPLED": {
        "Base Color",
        "Metallic",
        "Roughness",
        "Alpha",
        "Emission Color",
        "Emission Strength",
        "Transmission Weight",
    },
    "BSDF_DIFFUSE": {"Color"},
    "BSDF_GLOSSY": {"Color", "Roughness"},
    "BSDF_ANISOTROPIC": {"Color", "Roughness"},
    "BSDF_METALLIC": {"Base Color", "Roughness"},
    "BSDF_GLASS": {"Color", "Roughness"},
    "EMISSION": {"Color", "Strength"},
    "BSDF_TRANSPARENT": set(),
}
# A node type's own options (its distribution, say) that can be settings; what every node has
# (its place, its colour in the editor) is not.
_NODE_OPTIONS = ("ENUM", "BOOLEAN", "INT", "FLOAT")


class Irreducible(Exception):
    """A node graph that is not a constant surface (a texture, a bump map, an unknown node):
    said so, and left to the renders."""


# -- following links: reroutes, muted nodes and node groups pass values on -----------------------

Groups = tuple[Any, ...]  # the group nodes a socket lies inside, outermost first


def _resolve(socket: Any, groups: Groups, depth: int) -> tuple[Any, Any, Groups, int]:
    """The node that computes the value reaching input ``socket``: ``(node, output, groups,
    depth)``, through reroutes, muted nodes (their internal links) and node groups (into their
    trees and back out through their inputs); ``node`` is ``None`` when nothing is linked, and
    ``output`` is then the input whose own value counts."""
    while True:
        depth += 1
        if depth > MAX_DEPTH:
            raise Irreducible("the node graph is too deep to read")
        links = [link for link in socket.links if link.is_valid and not link.is_muted]
        if not links:
            return None, socket, groups, depth
        node, output = links[0].from_node, links[0].from_socket
        if node.type == "REROUTE":
            socket = node.inputs[0]
        elif node.mute:
            through = next(
                (k.from_socket for k in node.internal_links if k.to_socket == output), None
            )
            if through is None:
                raise Irreducible(f"node {node.name!r} is muted and passes nothing on")
            socket = through
        elif node.type == "GROUP":
            socket, groups = _group_output(node, output), (*groups, node)
        elif node.type == "GROUP_INPUT":
            if not groups:
                raise Irreducible(f"node {node.name!r} reads a group input outside a group")
            outer = groups[-1]
            socket = next((s for s in outer.inputs if s.identifier == output.identifier), None)
            if socket is None:
                raise Irreducible(f"group {outer.name!r} has no input {output.name!r}")
            groups = groups[:-1]
        else:
            return node, output, groups, depth


def _group_output(node: Any, output: Any) -> Any:
    tree = node.node_tree
    outputs = [n for n in tree.nodes if n.type == "GROUP_OUTPUT"] if tree is not None else []
    found = next((n for n in outputs if n.is_active_output), outputs[0] if outputs else None)
    socket = (
        None
        if found is None
        else next((s for s in found.inputs if s.identifier == output.identifier), None)
    )
    if socket is None:
        raise Irreducible(f"group {node.name!r} gives no {output.name!r}")
    return socket


def _own_value(socket: Any) -> Any:
    value = socket.default_value
    return float(value) if isinstance(value, int | float | bool) else _vector(value)


def _vector(value: Any) -> list[float]:
    return [float(v) for v in value]


def _as_color(value: Any) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    return np.repeat(array, 3) if array.size == 1 else array[:3]


def _as_float(value: Any) -> float:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    return float(array[0]) if array.size == 1 else float(np.dot(array[:3], _LUMINANCE))


# -- values: the constant a value socket carries -------------------------------------------------


class _Reader:
    """Reads one graph; ``settings`` collects the shaders' unmodelled inputs and options."""

    def __init__(self, defaults: Callable[[Any], dict[str, Any]]) -> None:
        self.defaults = defaults

    def value(self, socket: Any, groups: Groups = (), depth: int = 0) -> Any:
        """The constant reaching value input ``socket``, or :class:`Irreducible`."""
        node, output, groups, depth = _resolve(socket, groups, depth)
        if node is None:
            return _own_value(output)
        kind = node.type
        compute = _VALUE_NODES.get(kind)
        if compute is None:
            raise Irreducible(f"node {node.name!r} ({kind.lower()}) feeds {socket.node.name!r}")

        def get(name: str) -> Any:
            for candidate in node.inputs:
                if candidate.enabled and name in (candidate.identifier, candidate.name):
                    return self.value(candidate, groups, depth)
            raise Irreducible(f"node {node.name!r} has no input {name!r}")

        return compute(node, output, get)

    # -- shaders ---------------------------------------------------------------------------------

    def shader(self, socket: Any, groups: Groups = (), depth: int = 0) -> dict[str, Any]:
        """The surface a shader input carries (:data:`SURFACE_KEYS`, ``settings``)."""
        node, _output, groups, depth = _resolve(socket, groups, depth)
        if node is None:
            return surface()  # nothing connected: Cycles renders it black
        kind = node.type

        def value(name: str) -> Any:
            for candidate in node.inputs:
                if candidate.enabled and name in (candidate.identifier, candidate.name):
                    return self.value(candidate, groups, depth)
            raise Irreducible(f"node {node.name!r} has no input {name!r}")

        def number(name: str) -> float:
            return _as_float(value(name))

        if kind in ("MIX_SHADER", "ADD_SHADER"):
            shaders = [s for s in node.inputs if s.type == "SHADER"][:2]
            if kind == "MIX_SHADER":
                factor = float(np.clip(number("Fac"), 0, 1))
                if factor in (0.0, 1.0):  # one side shows alone: the other is never seen
                    return self.shader(shaders[int(factor)], groups, depth)
                weights = (1 - factor, factor)
            else:  # light adds up
                weights = (1.0, 1.0)
            sides = [self.shader(s, groups, depth) for s in shaders]
            return _mixed(kind, weights, sides)
        if kind not in _MODELLED:
            raise Irreducible(f"the surface comes from node {node.name!r} ({kind.lower()})")
        made = _SHADERS[kind](value, number)
        return made | {"settings": self._settings(node, groups, depth)}

    def _settings(self, node: Any, groups: Groups, depth: int) -> dict[str, list[Any]]:
        """``node``'s inputs and options outside :data:`_MODELLED` that differ from a new
        node's, as ``label: [value, default]``; a linked input must reduce like any other."""
        fresh = self.defaults(node)
        out: dict[str, list[Any]] = {}
        modelled = _MODELLED[node.type]
        for socket in node.inputs:
            if not socket.enabled or socket.type == "SHADER" or socket.name in modelled:
                continue
            label = f"{node.bl_label} {socket.name}"
            if socket.type == "VECTOR" and socket.hide_value:  # Normal, Tangent: the geometry's
                if socket.is_linked:
                    source = _resolve(socket, groups, depth)[0]
                    if source is not None:
                        raise Irreducible(
                            f"{label} comes from node {source.name!r}: a bump or normal map"
                        )
                continue
            have = self.value(socket, groups, depth)
            default = fresh.get(socket.identifier)
            if default is None or not _same(have, default):
                out[label] = [have, default]
        for name in self.defaults.options(node):
            have, default = _option(node, name), fresh.get(f"option:{name}")
            if not _same(have, default):
                out[f"{node.bl_label} {name}"] = [have, default]
        return out


def _option(node: Any, name: str) -> Any:
    value = getattr(node, name)
    if isinstance(value, set | frozenset):
        return "+".join(sorted(value))
    return value if isinstance(value, str) else float(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a == b
    return bool(np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=1e-6))


def surface(**values: Any) -> dict[str, Any]:
    """A surface dict: :data:`SURFACE_KEYS` (black where not given) as plain numbers."""
    out = dict(_BLACK) | values
    return {
        k: _vector(_as_color(v)) if k in ("base_color", "emission") else float(v)
        for k, v in out.items()
        if k in SURFACE_KEYS
    } | ({"reflects": float(values["reflects"])} if "reflects" in values else {})


_SHADERS: dict[str, Callable[[Any, Any], dict[str, Any]]] = {
    "BSDF_PRINCIPLED": lambda value, number: surface(
        base_color=value("Base Color"),
        roughness=number("Roughness"),
        metallic=number("Metallic"),
        emission=_as_color(value("Emission Color")) * number("Emission Strength"),
        transmission=number("Transmission Weight"),
        alpha=number("Alpha"),
    ),
    "BSDF_DIFFUSE": lambda value, number: surface(base_color=value("Color"), roughness=1.0),
    "BSDF_GLOSSY": lambda value, number: surface(
        base_color=value("Color"), roughness=number("Roughness"), metallic=1.0
    ),
    "BSDF_ANISOTROPIC": lambda value, number: surface(
        base_color=value("Color"), roughness=number("Roughness"), metallic=1.0
    ),
    "BSDF_METALLIC": lambda value, number: surface(
        base_color=value("Base Color"), roughness=number("Roughness"), metallic=1.0
    ),
    "BSDF_GLASS": lambda value, number: surface(
        base_color=value("Color"), roughness=number("Roughness"), transmission=1.0
    ),
    "EMISSION": lambda value, number: surface(
        base_color=0.0, emission=_as_color(value("Color")) * number("Strength"), reflects=0.0
    ),
    "BSDF_TRANSPARENT": lambda value, number: surface(base_color=0.0, alpha=0.0, reflects=0.0),
}


def _mixed(kind: str, weights: tuple[float, float], sides: list[dict[str, Any]]) -> dict[str, Any]:
    """Two surfaces mixed (Mix Shader) or added (Add Shader): colours and light by the weights;
    what shapes a reflection (roughness, metallic, transmission) by how much each side reflects
    (an Emission shader reflects nothing); settings by the weights."""
    first, second = sides
    reflects = [w * s.get("reflects", 1.0) for w, s in zip(weights, sides, strict=True)]
    total = sum(reflects)
    mixed: dict[str, Any] = {}
    for k in SURFACE_KEYS:
        if k in ("roughness", "metallic", "transmission") and total > 0:
            mixed[k] = (reflects[0] * first[k] + reflects[1] * second[k]) / total
        else:
            mixed[k] = np.multiply(weights[0], first[k]) + np.multiply(weights[1], second[k])
    if kind == "ADD_SHADER":
        mixed["alpha"] = max(first["alpha"], second["alpha"])
    settings: dict[str, list[Any]] = {}
    for key in sorted(set(first.get("settings", {})) | set(second.get("settings", {}))):
        pairs = [s.get("settings", {}).get(key) for s in sides]
        default = next(p[1] for p in pairs if p is not None)
        values = [p[0] if p is not None else default for p in pairs]
        if any(isinstance(v, str) or v is None for v in values):
            value = values[int(weights[1] > weights[0])]
        else:
            value = _vector(
                np.atleast_1d(
                    weights[0] * np.asarray(values[0], np.float64)
                    + weights[1] * np.asarray(values[1], np.float64)
                )
            )
            value = value[0] if len(value) == 1 else value
        settings[key] = [value, default]
    return surface(**mixed, reflects=min(total, 1.0)) | {"settings": settings}


# -- the value nodes that reduce: arithmetic and colour adjustments -------------------------------


def _blend(kind: str, a: np.ndarray, b: np.ndarray, factor: float) -> np.ndarray:
    """Blender's colour blend modes that are plain arithmetic (Mix and MixRGB nodes)."""
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
        raise Irreducible(f"a mix blends by {kind}")
    if kind in ("DARKEN", "LIGHTEN", "MIX"):
        return (1 - factor) * a + factor * blended()
    if kind == "SCREEN":
        return 1 - (1 - factor + factor * (1 - b)) * (1 - a)
    if kind == "MULTIPLY":
        return a * (1 - factor + factor * b)
    return a + factor * (blended() - a)


def _mix_rgb(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    factor = float(np.clip(_as_float(get("Fac")), 0, 1))
    a = _as_color(get("Color1"))
    if factor == 0.0:  # the second colour does not show
        return _vector(np.clip(a, 0, 1) if node.use_clamp else a)
    b = _as_color(get("Color2"))
    mixed = _blend(node.blend_type, a, b, factor)
    return _vector(np.clip(mixed, 0, 1) if node.use_clamp else mixed)


def _mix(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    kind = node.data_type
    if kind not in ("FLOAT", "RGBA", "VECTOR"):
        raise Irreducible(f"node {node.name!r} mixes {kind.lower()} values")
    suffix = {"FLOAT": "Float", "RGBA": "Color", "VECTOR": "Vector"}[kind]
    uniform = kind != "VECTOR" or node.factor_mode == "UNIFORM"
    factor = _as_float(get("Factor_Float" if uniform else "Factor_Vector"))
    if node.clamp_factor:
        factor = float(np.clip(factor, 0, 1))
    a = np.asarray(get(f"A_{suffix}"), dtype=np.float64)
    if factor == 0.0:  # B does not show
        mixed = a[:3] if kind == "RGBA" else a
    else:
        b = np.asarray(get(f"B_{suffix}"), dtype=np.float64)
        if kind == "RGBA":
            mixed = _blend(node.blend_type, a[:3], b[:3], factor)
        else:
            mixed = (1 - factor) * a + factor * b
    if kind == "RGBA":
        return _vector(np.clip(mixed, 0, 1) if node.clamp_result else mixed)
    return float(mixed) if kind == "FLOAT" else _vector(mixed)


_MATH: dict[str, Callable[..., float]] = {
    "ADD": lambda x, y, z: x + y,
    "SUBTRACT": lambda x, y, z: x - y,
    "MULTIPLY": lambda x, y, z: x * y,
    "DIVIDE": lambda x, y, z: x / y if y else 0.0,
    "MULTIPLY_ADD": lambda x, y, z: x * y + z,
    "POWER": lambda x, y, z: x**y if x > 0 or (x == 0 and y > 0) or float(y).is_integer() else 0.0,
    "MINIMUM": lambda x, y, z: min(x, y),
    "MAXIMUM": lambda x, y, z: max(x, y),
    "ABSOLUTE": lambda x, y, z: abs(x),
    "SQRT": lambda x, y, z: math.sqrt(x) if x > 0 else 0.0,
    "LESS_THAN": lambda x, y, z: float(x < y),
    "GREATER_THAN": lambda x, y, z: float(x > y),
    "SIGN": lambda x, y, z: float(np.sign(x)),
    "ROUND": lambda x, y, z: float(math.floor(x + 0.5)),
    "FLOOR": lambda x, y, z: float(math.floor(x)),
    "CEIL": lambda x, y, z: float(math.ceil(x)),
    "FRACT": lambda x, y, z: x - math.floor(x),
    "MODULO": lambda x, y, z: math.fmod(x, y) if y else 0.0,
}


def _math(node: Any, output: Any, get: Callable[[str], Any]) -> float:
    operation = _MATH.get(node.operation)
    if operation is None:
        raise Irreducible(f"node {node.name!r} computes {node.operation}")
    inputs = [s for s in node.inputs if s.enabled]
    x, y, z = ([_as_float(get(s.identifier)) for s in inputs] + [0.0, 0.0, 0.0])[:3]
    value = float(operation(x, y, z))
    if not math.isfinite(value):
        raise Irreducible(f"node {node.name!r} computes a value that is not finite")
    return float(np.clip(value, 0, 1)) if node.use_clamp else value


def _invert(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    factor = _as_float(get("Fac"))
    color = _as_color(get("Color"))
    return _vector((1 - factor) * color + factor * (1 - color))


def _gamma(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    color, gamma = _as_color(get("Color")), _as_float(get("Gamma"))
    return _vector(np.where(color > 0, np.power(np.maximum(color, 0), gamma), color))


def _bright_contrast(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    color = _as_color(get("Color"))
    bright, contrast = _as_float(get("Bright")), _as_float(get("Contrast"))
    a = 1 + contrast  # Cycles' svm_brightness_contrast
    b = bright - contrast * 0.5
    return _vector(np.maximum(a * color + b, 0.0))


def _hue_saturation(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    color = _as_color(get("Color"))
    hue, saturation = _as_float(get("Hue")), _as_float(get("Saturation"))
    value, factor = _as_float(get("Value")), _as_float(get("Fac"))
    h, s, v = colorsys.rgb_to_hsv(*np.maximum(color, 0))
    h = (h + hue + 0.5) % 1.0
    s, v = float(np.clip(s * saturation, 0, 1)), v * value
    adjusted = np.array(colorsys.hsv_to_rgb(h, s, v))
    return _vector(np.maximum(factor * adjusted + (1 - factor) * color, 0.0))


def _clamp(node: Any, output: Any, get: Callable[[str], Any]) -> float:
    value, low, high = _as_float(get("Value")), _as_float(get("Min")), _as_float(get("Max"))
    if node.clamp_type == "RANGE" and low > high:
        low, high = high, low
    return float(np.clip(value, low, high)) if low <= high else high


def _map_range(node: Any, output: Any, get: Callable[[str], Any]) -> float:
    if node.data_type != "FLOAT" or node.interpolation_type != "LINEAR":
        raise Irreducible(f"node {node.name!r} maps by {node.interpolation_type}")
    value = _as_float(get("Value"))
    low, high = _as_float(get("From Min")), _as_float(get("From Max"))
    to_low, to_high = _as_float(get("To Min")), _as_float(get("To Max"))
    t = (value - low) / (high - low) if high != low else 0.0
    result = to_low + t * (to_high - to_low)
    if node.clamp:
        result = float(np.clip(result, min(to_low, to_high), max(to_low, to_high)))
    return float(result)


def _ramp(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    color = list(node.color_ramp.evaluate(float(np.clip(_as_float(get("Fac")), 0, 1))))
    return float(color[3]) if output.identifier == "Alpha" else _vector(color[:3])


def _to_bw(node: Any, output: Any, get: Callable[[str], Any]) -> float:
    return float(np.dot(_as_color(get("Color")), _LUMINANCE))


def _separate(node: Any, output: Any, get: Callable[[str], Any]) -> float:
    if getattr(node, "mode", "RGB") != "RGB":
        raise Irreducible(f"node {node.name!r} separates {node.mode}")
    channels = {"Red": 0, "Green": 1, "Blue": 2, "X": 0, "Y": 1, "Z": 2}
    source = _as_color(get("Color" if node.type == "SEPARATE_COLOR" else "Vector"))
    return float(
        source[channels[output.identifier if output.identifier in channels else output.name]]
    )


def _combine(node: Any, output: Any, get: Callable[[str], Any]) -> list[float]:
    if getattr(node, "mode", "RGB") != "RGB":
        raise Irreducible(f"node {node.name!r} combines {node.mode}")
    names = ("Red", "Green", "Blue") if node.type == "COMBINE_COLOR" else ("X", "Y", "Z")
    return [_as_float(get(name)) for name in names]


def _constant(node: Any, output: Any, get: Callable[[str], Any]) -> Any:
    return _own_value(output)


_VALUE_NODES: dict[str, Callable[[Any, Any, Callable[[str], Any]], Any]] = {
    "RGB": _constant,
    "VALUE": _constant,
    "MIX_RGB": _mix_rgb,
    "MIX": _mix,
    "MATH": _math,
    "INVERT": _invert,
    "GAMMA": _gamma,
    "BRIGHTCONTRAST": _bright_contrast,
    "HUE_SAT": _hue_saturation,
    "CLAMP": _clamp,
    "MAP_RANGE": _map_range,
    "VALTORGB": _ramp,
    "RGBTOBW": _to_bw,
    "SEPARATE_COLOR": _separate,
    "SEPXYZ": _separate,
    "COMBINE_COLOR": _combine,
    "COMBXYZ": _combine,
}


# -- materials and lights -------------------------------------------------------------------------


class Defaults:
    """The inputs and options of a new node of each type (from a scratch tree, made once)."""

    def __init__(self, bpy: Any) -> None:
        self.bpy, self.tree, self.found = bpy, None, {}
        self.common = {p.identifier for p in bpy.types.ShaderNode.bl_rna.properties}

    def options(self, node: Any) -> list[str]:
        """``node``'s type's own scalar options (not what every node has)."""
        return [
            p.identifier
            for p in node.bl_rna.properties
            if p.identifier not in self.common
            and p.type in _NODE_OPTIONS
            and not p.is_readonly
            and not (getattr(p, "is_array", False) and p.array_length)
        ]

    def __call__(self, node: Any) -> dict[str, Any]:
        kind = node.bl_idname
        if kind not in self.found:
            if self.tree is None:
                self.tree = self.bpy.data.node_groups.new("toolgym_defaults", "ShaderNodeTree")
            fresh = self.tree.nodes.new(kind)
            found: dict[str, Any] = {}
            for socket in fresh.inputs:
                if socket.type != "SHADER" and hasattr(socket, "default_value"):
                    found[socket.identifier] = _own_value(socket)
            for name in self.options(fresh):
                found[f"option:{name}"] = _option(fresh, name)
            self.tree.nodes.remove(fresh)
            self.found[kind] = found
        return self.found[kind]

    def close(self) -> None:
        if self.tree is not None:
            self.bpy.data.node_groups.remove(self.tree)
            self.tree = None


def material_surface(material: Any, defaults: Defaults) -> dict[str, Any]:
    """A material as the surface it renders (:data:`SURFACE_KEYS` and ``settings``), read
    from the node graph of its active Material Output; ``irreducible`` (why) when the graph is
    not a constant surface (then only the renders can judge it)."""
    out: dict[str, Any] = {"name": material.name}
    tree = material.node_tree
    if tree is None:  # no nodes: the viewport colour and settings
        return (
            out
            | surface(
                base_color=_vector(material.diffuse_color)[:3],
                roughness=float(material.roughness),
                metallic=float(material.metallic),
            )
            | {"settings": {}}
        )
    output = tree.get_output_node("CYCLES")
    if output is None:
        return out | surface() | {"settings": {}}  # no active output: Cycles renders it black
    try:
        for name in ("Volume", "Displacement", "Thickness"):
            socket = output.inputs.get(name)
            if socket is not None and socket.is_linked and _resolve(socket, (), 0)[0] is not None:
                raise Irreducible(f"the output's {name} input is linked")
        reduced = _Reader(defaults).shader(output.inputs["Surface"])
        return out | {k: reduced[k] for k in SURFACE_KEYS} | {"settings": reduced["settings"]}
    except Irreducible as exc:
        return out | {"irreducible": str(exc)}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return out | {"irreducible": f"the node graph could not be read ({exc})"}


def light_tint(light: Any, defaults: Defaults) -> dict[str, Any]:
    """What a light's node tree does to its colour: ``tint`` (linear RGB, its Emission node's
    colour × strength; white without nodes), or ``irreducible`` (why)."""
    tree = light.node_tree if getattr(light, "use_nodes", False) else None
    if tree is None:
        return {"tint": [1.0, 1.0, 1.0]}
    output = tree.get_output_node("CYCLES")
    if output is None:
        return {"tint": [0.0, 0.0, 0.0]}
    try:
        reduced = _Reader(defaults).shader(output.inputs["Surface"])
    except Irreducible as exc:
        return {"irreducible": f"its node tree: {exc}"}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return {"irreducible": f"its node tree could not be read ({exc})"}
    if reduced["settings"] or reduced.get("reflects", 1.0) > 0:
        return {"irreducible": "its node tree is more than an Emission node"}
    return {"tint": _vector(np.asarray(reduced["emission"], np.float64))}
