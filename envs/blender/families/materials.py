"""Material edits beyond one Principled BSDF's colour, said in any style of the phrase bank: metal
and glass (metallic, transmission, IOR, a clear coat), a second shader mixed in by a factor, and a
procedural texture into a base colour.

Every task starts from a lit stage (a 6 m floor, a point light) with two or three objects on it,
each in a plain grey material, and asks for new materials. Colours are linear RGB in [0, 1];
roughness, metallic, transmission, coat weights, mix factors and IORs are Blender's unitless
values; texture scales are Blender's (per unit of the object's generated coordinates, which run
0 to 1 across its bounds). The references use ``set_material`` and the material tools
(``toolgym.envs.blender.material_tools``). What the verifier reads: every graph here but a
texture reduces to a constant surface and its settings (IOR and coat inputs are settings); a
texture is judged by the renders.
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

Colour = tuple[float, float, float]
GREY = {"r": 0.5, "g": 0.5, "b": 0.5, "roughness": 0.5}
# The objects a stage can hold: kind, size (m), depth (m; 0: the size) and the centre's height.
PROPS = {
    "Ball": ("uv_sphere", 0.8, 0.0, 0.4),
    "Crate": ("cube", 0.7, 0.0, 0.35),
    "Drum": ("cylinder", 0.7, 0.8, 0.4),
    "Ring": ("torus", 0.8, 0.2, 0.4),
    "Vase": ("cylinder", 0.5, 0.9, 0.45),
}
SLOTS = (-1.2, 0.0, 1.2)  # m: where the objects stand along X, on y = 0


def _stage(names: list[str]) -> list[Call]:
    """The floor, the key light and ``names`` in a row, each in a plain grey material."""
    calls: list[Call] = [
        ("add_primitive", {"kind": "plane", "name": "Floor", "size": 6.0}),
        (
            "add_light",
            {"name": "Key", "kind": "POINT", "energy": 400.0, "x": 2.0, "y": -2.0, "z": 3.0},
        ),
    ]
    for name, x in zip(names, SLOTS, strict=False):
        kind, size, depth, z = PROPS[name]
        args = {"kind": kind, "name": name, "size": size, "x": x, "y": 0.0, "z": z}
        calls.append(("add_primitive", args | ({"depth": depth} if depth else {})))
        if kind == "torus":  # stood on its edge, facing the front
            calls.append(("set_rotation", {"name": name, "x": 90.0, "y": 0.0, "z": 0.0}))
        calls.append(("set_material", {"name": name, **GREY}))
    return calls


def _colour(rng: np.random.Generator, low: float = 0.05, high: float = 0.95) -> Colour:
    r, g, b = (snap(v) for v in rng.uniform(low, high, 3))
    return r, g, b


def _rgb(colour: Colour) -> dict[str, float]:
    return dict(zip("rgb", colour, strict=True))


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _n(value: float) -> str:
    """A unitless value (a roughness, a factor, an IOR) as a prompt writes it."""
    return f"{value:g}"


# -- metal_glass ---------------------------------------------------------------------------------


def _metal_glass(rng: np.random.Generator) -> Drawn:
    """A metal Ring (metallic 1) and a glass Vase (transmission 1, an IOR); on half the seeds
    also a lacquered Ball (a clear coat over a coloured base)."""
    coated = bool(rng.random() < 0.5)
    names = ["Ball", "Ring", "Vase"] if coated else ["Ring", "Vase"]
    metal = {"colour": _colour(rng, 0.5, 1.0), "roughness": snap(rng.uniform(0.05, 0.5))}
    glass = {
        "colour": _colour(rng, 0.7, 1.0),
        "roughness": snap(rng.uniform(0.0, 0.2)),
        "ior": snap(rng.uniform(1.3, 1.7)),
    }
    calls: list[Call] = [
        ("set_material", {"name": "Ring", **_rgb(metal["colour"]), "roughness": metal["roughness"],
                          "metallic": 1.0}),
        ("set_material",
         {"name": "Vase", **_rgb(glass["colour"]), "roughness": glass["roughness"]}),
        ("set_bsdf_input", {"name": "Vase", "setting": "transmission", "value": 1.0}),
        ("set_bsdf_input", {"name": "Vase", "setting": "ior", "value": glass["ior"]}),
    ]  # fmt: skip
    parameters = {"metal": metal, "glass": glass}
    lacquer = {
        "colour": _colour(rng),
        "roughness": snap(rng.uniform(0.4, 0.8)),
        "coat": snap(rng.uniform(0.5, 1.0)),
        "coat_roughness": snap(rng.uniform(0.0, 0.2)),
    }
    if coated:
        calls += [
            ("set_material", {"name": "Ball", **_rgb(lacquer["colour"]),
                              "roughness": lacquer["roughness"]}),
            ("set_bsdf_input", {"name": "Ball", "setting": "coat", "value": lacquer["coat"]}),
            ("set_bsdf_input", {"name": "Ball", "setting": "coat_roughness",
                                "value": lacquer["coat_roughness"]}),
        ]  # fmt: skip
        parameters["lacquer"] = lacquer

    def text(s: Phrases) -> list[str]:
        said = [
            f"{_listed(names)} {s.w('get new')} {s.w('materials')}, {s.w('each one')} a "
            f"Principled BSDF whose {s.w('other inputs')} {s.w('keep')} their defaults",
            f"Ring {s.w('becomes')} {s.w('a polished metal')}: {s.w('metallic')} 1 and "
            f"{s.w('roughness')} {_n(metal['roughness'])}, {s.w('coloured')} "
            f"{s.rgb(*metal['colour'])}",
            f"Vase {s.w('becomes')} {s.w('clear glass')}: {s.w('transmission')} 1, "
            f"{s.w('IOR')} {_n(glass['ior'])} and {s.w('roughness')} {_n(glass['roughness'])}, "
            f"{s.w('coloured')} {s.rgb(*glass['colour'])}",
        ]
        if coated:
            said.append(
                f"Ball {s.w('becomes')} {s.w('lacquered')}: {s.w('roughness')} "
                f"{_n(lacquer['roughness'])} under {s.w('a clear coat')} of {s.w('weight')} "
                f"{_n(lacquer['coat'])} and {s.w('roughness')} {_n(lacquer['coat_roughness'])}, "
                f"{s.w('coloured')} {s.rgb(*lacquer['colour'])}"
            )
        return said

    return Drawn(text, _stage(names), calls, parameters, 3 if coated else 2)


# -- mixed_shader --------------------------------------------------------------------------------

# The shaders mixed in, with the factors drawn for each (the Principled BSDF keeps at least three
# quarters of a reflecting mix: what it reflects shows).
MIXES = {
    "GLOSSY": (0.1, 0.25),
    "GLASS": (0.1, 0.25),
    "TRANSPARENT": (0.2, 0.6),
}


def _mixed_shader(rng: np.random.Generator) -> Drawn:
    """One or two objects, each a Principled BSDF mixed with a Glossy, Glass or Transparent
    BSDF by a factor (0: the Principled BSDF alone)."""
    count = int(rng.integers(1, 3))
    names = sorted(str(n) for n in rng.choice(["Ball", "Crate", "Drum"], count, replace=False))
    calls: list[Call] = []
    mixes = []
    for name in names:
        shader = str(rng.choice(list(MIXES)))
        low, high = MIXES[shader]
        mix = {
            "name": name,
            "colour": _colour(rng),
            "roughness": snap(rng.uniform(0.3, 0.9)),
            "shader": shader,
            "factor": snap(rng.uniform(low, high)),
            "second": (1.0, 1.0, 1.0) if shader == "TRANSPARENT" else _colour(rng, 0.6, 1.0),
            "second_roughness": 0.0 if shader == "TRANSPARENT" else snap(rng.uniform(0.0, 0.3)),
        }
        mixes.append(mix)
        calls.append(
            ("set_material", {"name": name, **_rgb(mix["colour"]), "roughness": mix["roughness"]})
        )
        args = {"name": name, "shader": shader, "factor": mix["factor"]}
        if shader != "TRANSPARENT":
            args |= _rgb(mix["second"]) | {"roughness": mix["second_roughness"]}
        calls.append(("mix_shader", args))

    def said(s: Phrases, mix: dict) -> str:
        shader = mix["shader"]
        second = f"a {shader.title()} BSDF ({s.w('shader colour')} {s.rgb(*mix['second'])}"
        if shader != "TRANSPARENT":
            second += f", {s.w('roughness')} {_n(mix['second_roughness'])}"
        return (
            f"{mix['name']}'s Mix Shader {s.w('blends')} its Principled BSDF ({s.w('colour')} "
            f"{s.rgb(*mix['colour'])}, {s.w('roughness')} {_n(mix['roughness'])}) with "
            f"{second}) by a {s.w('factor')} of {_n(mix['factor'])}"
        )

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('mix')} a second {s.w('shader')} into the "
            f"{s.w('material') if count == 1 else s.w('materials')} of "
            f"{_listed(names)} with a Mix Shader {s.w('feeding the output')} (a {s.w('factor')} "
            f"of 0 {s.w('shows')} the Principled BSDF alone, 1 the second {s.w('shader')} alone; "
            f"{s.w('other inputs')} {s.w('keep')} their defaults)",
            *(said(s, mix) for mix in mixes),
        ]

    parameters = {"objects": count, "mixes": [{k: m[k] for k in ("name", "shader", "factor")}
                                              for m in mixes]}  # fmt: skip
    return Drawn(text, _stage(names), calls, parameters, 1 + count)


# -- procedural_texture --------------------------------------------------------------------------

# The textures drawn, with the scales each is drawn from.
TEXTURE_SCALES = {"CHECKER": (2.0, 6.0), "NOISE": (2.0, 8.0), "WAVE": (2.0, 6.0)}


def _procedural_texture(rng: np.random.Generator) -> Drawn:
    """A checker, noise or wave texture into Crate's or Drum's base colour, between two
    colours, at a scale, with the Principled BSDF's roughness; and Ball (first by name, where
    the generic near miss errs) a plain material in one of the texture's colours.

    A texture is judged by the renders alone, which do not see a roughness 0.045 off on it (the
    generic near miss scores 0.995 there): so the near miss's error falls on Ball, whose plain
    material the verifier reads."""
    name = str(rng.choice(["Crate", "Drum"]))
    kind = str(rng.choice(list(TEXTURE_SCALES)))
    low, high = TEXTURE_SCALES[kind]
    first, second = _colour(rng), _colour(rng)
    while np.abs(np.subtract(first, second)).max() < 0.4:  # two colours that tell apart
        second = _colour(rng)
    scale, roughness = snap(rng.uniform(low, high), 0.5), snap(rng.uniform(0.3, 0.9))
    pick = int(rng.integers(2))
    plain, plain_roughness = (first, second)[pick], snap(rng.uniform(0.2, 0.9))
    which = ("first", "second")[pick]
    calls: list[Call] = [
        ("set_material", {"name": "Ball", **_rgb(plain), "roughness": plain_roughness}),
        ("set_material", {"name": name, **_rgb(first), "roughness": roughness}),
        ("set_texture", {"name": name, "kind": kind, **_rgb(first),
                         **dict(zip(("r2", "g2", "b2"), second, strict=True)), "scale": scale}),
    ]  # fmt: skip

    def text(s: Phrases) -> list[str]:
        if kind == "CHECKER":
            pattern = (
                f"a {s.w('checker')} {s.w('texture')} at {s.w('texture scale')} {_n(scale)}: "
                f"Color1 {s.rgb(*first)}, Color2 {s.rgb(*second)}"
            )
        else:
            what = s.w("noise") if kind == "NOISE" else s.w("wave")
            bands = "" if kind == "NOISE" else f" {s.w('of bands along X')}"
            pattern = (
                f"a {what} {s.w('texture')}{bands} at {s.w('texture scale')} {_n(scale)}, "
                f"{s.w('mixing')} two colours by its value: {s.rgb(*first)} {s.w('at')} 0, "
                f"{s.rgb(*second)} {s.w('at')} 1"
            )
        return [
            f"{name}'s {s.w('base colour')} {s.w('comes from')} {pattern}",
            f"the {s.w('texture')} {s.w('reads')} the object's generated coordinates (Blender's "
            f"default), and {name}'s Principled BSDF has {s.w('roughness')} {_n(roughness)}, its "
            f"{s.w('other inputs')} at their defaults",
            f"Ball {s.w('gets')} a {s.w('plain')} Principled BSDF in the {s.w('texture')}'s "
            f"{which} colour, {s.rgb(*plain)}, with {s.w('roughness')} {_n(plain_roughness)}, its "
            f"{s.w('other inputs')} at their defaults",
        ]

    parameters = {"object": name, "texture": kind, "scale": scale, "roughness": roughness}
    return Drawn(text, _stage(["Ball", "Crate", "Drum"]), calls, parameters, 3)


WORDS = {
    "get new": ("get new", "receive new", "are to have new"),
    "materials": ("materials", "surface materials", "shaders"),
    "each one": ("each", "each of them", "every one of them"),
    "coloured": ("coloured", "with colour", "tinted"),
    "other inputs": ("other inputs", "remaining inputs", "unlisted sockets"),
    "keep": ("keep", "stay at", "retain"),
    "becomes": ("becomes", "turns into", "is made"),
    "a polished metal": ("a metal", "a metal surface", "a conductor"),
    "clear glass": ("glass", "clear glass", "a transmissive dielectric"),
    "transmission": ("transmission", "transmission weight", "see-through weight"),
    "IOR": ("IOR", "index of refraction", "refractive index"),
    "lacquered": ("a lacquered paint", "a clear-coated paint", "a varnished finish"),
    "a clear coat": ("a clear coat", "a coat layer", "a varnish film"),
    "weight": ("weight", "coat weight", "strength"),
    "shader colour": ("colour", "tint", "filter colour"),
    "mix": ("mix", "blend", "combine"),
    "shader": ("shader", "BSDF", "shading node"),
    "feeding the output": ("feeding the output", "into the material output", "at the surface"),
    "shows": ("shows", "gives", "renders"),
    "blends": ("blends", "mixes", "combines"),
    "factor": ("factor", "mix factor", "fraction"),
    "gets": ("gets", "is given", "receives"),
    "plain": ("plain", "untextured", "single-colour"),
    "checker": ("checker", "checkerboard", "chequered"),
    "noise": ("noise", "Perlin noise", "fractal noise"),
    "wave": ("wave", "wave-band", "sine-band"),
    "texture": ("texture", "texture node", "procedural pattern"),
    "squares": ("squares", "alternating squares", "tiles"),
    "of bands along X": ("of bands along X", "with its bands along X", "striped across X"),
    "base colour": ("base colour", "Base Color input", "albedo"),
    "comes from": ("comes from", "is driven by", "is fed by"),
    "mixing": ("mixing", "blending", "interpolating"),
    "at": ("at", "where it is", "for a value of"),
    "texture scale": ("scale", "texture scale", "pattern scale"),
    "reads": ("reads", "uses", "samples"),
}

FAMILY_GROUP = (
    Family(
        "metal_glass",
        "material",
        _metal_glass,
        "a metal ring, a glass vase (IOR) and a lacquered ball (clear coat)",
        words=WORDS,
    ),
    Family(
        "mixed_shader",
        "material",
        _mixed_shader,
        "a Principled BSDF mixed with a glossy, glass or transparent BSDF by a factor",
        words=WORDS,
    ),
    Family(
        "procedural_texture",
        "material",
        _procedural_texture,
        "a checker, noise or wave texture into a base colour (judged by renders)",
        words=WORDS,
    ),
)
