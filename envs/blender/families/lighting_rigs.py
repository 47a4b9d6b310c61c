"""Lighting rigs as edits of a given scene, said in any style of the phrase bank: a portrait's
three-point set-up around a bust (key, fill and rim lights), daylight (a sun with a colour
temperature, and a sky's soft fill) and a product shot under softboxes (area lights with a shape,
a size and a spread).

Lengths in metres, angles in degrees, colours linear RGB, a light's power in W (a sun's strength
in W/m²), colour temperatures in kelvin as Blender's own light temperature (which tints a white
light: the verifier compares it as one of the light's settings). Every scene stands on a 6 m
floor (z = 0) with its subject centred on the origin; the camera looks from the front (-Y), so a
light "to the left of the camera" lies towards -X (as the prompt says). A light placed
"``d`` out and ``h`` up" from a point stands ``d`` from it in plan and ``h`` above it, at the
angle the prompt gives from the line towards the camera (or, behind, from the line away from
it). Spot, area and sun lights are aimed with ``point_at`` (their -Z axis at the point; the
verifier reads where they point, ``light_aim_error_deg``); a sun stands on the line its light
comes along, at a distance the prompt gives, as the verifier reads a light's position too.
"""

from __future__ import annotations

import math

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

Colour = tuple[float, float, float]
Point = tuple[float, float, float]


def _rgb(colour: Colour) -> dict[str, float]:
    return dict(zip("rgb", colour, strict=True))


def _colour(rng: np.random.Generator, low: Colour, high: Colour) -> Colour:
    r, g, b = (snap(rng.uniform(a, b)) for a, b in zip(low, high, strict=True))
    return r, g, b


def _around(target: Point, angle: float, out: float, up: float, side: int, behind: bool) -> Point:
    """Where a light stands: ``out`` m from ``target`` in plan and ``up`` m above it, ``angle``
    degrees to the camera's left (``side`` -1) or right (+1) of the line towards the camera
    (-Y), or with ``behind`` of the line away from it (+Y)."""
    a = math.radians(angle)
    x = target[0] + side * out * math.sin(a)
    y = target[1] + (1 if behind else -1) * out * math.cos(a)
    return snap(x, 0.001), snap(y, 0.001), snap(target[2] + up, 0.001)


def _stage() -> list[Call]:
    return [("add_primitive", {"kind": "plane", "name": "Floor", "size": 6.0})]


def _bust(plinth: float) -> list[Call]:
    """A bust on a plinth, from primitives: a ``plinth`` m tall 0.5 m square block, shoulders,
    a neck and a 0.3 m head whose centre is ``plinth + 0.5`` m up."""
    return [
        ("add_primitive", {"kind": "cube", "name": "Plinth", "size": 1.0, "z": plinth / 2}),
        ("set_scale", {"name": "Plinth", "x": 0.5, "y": 0.5, "z": plinth}),
        ("add_primitive", {"kind": "cube", "name": "Shoulders", "size": 1.0, "z": plinth + 0.1}),
        ("set_scale", {"name": "Shoulders", "x": 0.45, "y": 0.25, "z": 0.2}),
        (
            "add_primitive",
            {"kind": "cylinder", "name": "Neck", "size": 0.12, "depth": 0.15, "z": plinth + 0.275},
        ),
        ("add_primitive", {"kind": "uv_sphere", "name": "Head", "size": 0.3, "z": plinth + 0.5}),
    ]


def _light_calls(name: str, p: dict, at: Point, aim: Point, new: bool) -> list[Call]:
    """A light ``p`` (``type``, ``energy``, ``colour``; ``cone`` for a spot, ``shape``, ``size``
    and ``spread`` for an area light) named ``name``, standing at ``at`` and aimed at ``aim``:
    added, or (``new`` false) set on the light the scene has."""
    kind, energy = p["type"], p["energy"]
    x, y, z = at
    if new:
        args = {"name": name, "kind": kind, "energy": energy, **_rgb(p["colour"])}
        calls: list[Call] = [("add_light", args | {"x": x, "y": y, "z": z})]
    else:
        calls = [
            ("set_light", {"name": name, "kind": kind, "energy": energy, **_rgb(p["colour"])}),
            ("set_location", {"name": name, "x": x, "y": y, "z": z}),
        ]
    calls.append(("point_at", {"name": name, "x": aim[0], "y": aim[1], "z": aim[2]}))
    if kind == "SPOT":
        calls.append(("set_spot", {"name": name, "size": p["cone"]}))
    if kind == "AREA":
        area = {"name": name, "shape": p["shape"], "size": p["size"]}
        calls.append(("set_area_light", area | {"spread": p.get("spread", 180.0)}))
    if "kelvin" in p:
        calls.append(("set_light_temperature", {"name": name, "kelvin": p["kelvin"]}))
    return calls


def _what(s: Phrases, p: dict, power: str) -> str:
    """A light's type and its own settings, with its ``power`` (already said)."""
    if p["type"] == "SPOT":
        return f"a {s.w('spot light')} with a {s.deg(p['cone'])} {s.w('cone')}, at {power}"
    if p["type"] == "POINT":
        return f"a {s.w('point light')} at {power}"
    shape = "square" if p["shape"] == "SQUARE" else "disk"
    across = "on a side" if p["shape"] == "SQUARE" else "across"
    said = f"a {s.w(shape)} {s.w('area light')} {s.len(p['size'])} {s.w(across)}"
    if p.get("spread", 180.0) < 180.0:
        said += f" that {s.w('spreads')} its light over {s.deg(p['spread'])}"
    return f"{said}, at {power}"


def _where(s: Phrases, q: dict, of: str) -> str:
    """Where a light stands from ``of`` (see :func:`_around`)."""
    side = "left" if q["side"] < 0 else "right"
    line = f"{side} behind" if q["behind"] else f"{side} of the camera"
    return (
        f"{s.deg(q['angle'])} {s.w(line)}, {s.len(q['out'])} {s.w('out')} and "
        f"{s.len(q['up'])} {s.w('up')} from {of}"
    )


# -- three_point ---------------------------------------------------------------------------------

FILL_RATIOS = {2: "half", 3: "a third of", 4: "a quarter of"}  # key-to-fill ratios, their words


def _aimed_type(rng: np.random.Generator, types: list[str], p: dict) -> dict:
    """``p`` with a type drawn from ``types`` and that type's own settings."""
    kind = str(rng.choice(types))
    p = {**p, "type": kind}
    if kind == "SPOT":
        p["cone"] = float(rng.choice([30.0, 35.0, 40.0, 45.0, 50.0, 60.0]))
    if kind == "AREA":
        p["shape"] = str(rng.choice(["SQUARE", "DISK"]))
        p["size"] = snap(rng.uniform(0.3, 1.2), 0.1)
    return p


def _three_point(rng: np.random.Generator) -> Drawn:
    """A bust on a plinth lit by one wrong overhead point light Key (and, on half the seeds, a
    work light to remove); the edit: Key, Fill and Rim of a three-point set-up, each its type,
    power (the fill's as a ratio of the key's), colour and place around the head."""
    plinth = snap(rng.uniform(0.9, 1.2))
    head = (0.0, 0.0, snap(plinth + 0.5, 0.001))
    work = bool(rng.random() < 0.5)
    start = [*_stage(), *_bust(plinth)]
    start.append(
        ("add_light", {"name": "Key", "kind": "POINT", "energy": 1000.0, "x": 0.0, "z": 4.0})
    )
    if work:
        start.append(
            (
                "add_light",
                {"name": "Work", "kind": "POINT", "energy": 300.0, "x": -2.0, "y": 2.0, "z": 2.5},
            )
        )
    side = int(rng.choice([-1, 1]))  # the key's side; the fill's is the other
    ratio = int(rng.choice(list(FILL_RATIOS)))
    key_energy = float(rng.choice([300.0, 600.0, 900.0, 1200.0]))
    lights = {
        "Key": _aimed_type(
            rng,
            ["SPOT", "AREA"],
            {"energy": key_energy, "colour": _colour(rng, (0.9, 0.75, 0.6), (1.0, 0.95, 0.85))},
        ),
        "Fill": _aimed_type(
            rng,
            ["AREA", "POINT"],
            {
                "energy": round(key_energy / ratio, 3),
                "colour": _colour(rng, (0.6, 0.7, 0.85), (0.9, 0.95, 1.0)),
            },
        ),
        "Rim": _aimed_type(
            rng,
            ["SPOT", "AREA", "POINT"],
            {
                "energy": float(rng.choice([200.0, 400.0, 500.0, 800.0])),
                "colour": _colour(rng, (0.8, 0.8, 0.8), (1.0, 1.0, 1.0)),
            },
        ),
    }
    places = {
        "Key": {"angle": float(rng.choice([30, 35, 40, 45, 50, 60])), "side": side},
        "Fill": {"angle": float(rng.choice([30, 40, 45, 50, 60, 70])), "side": -side},
        "Rim": {"angle": float(rng.choice([15, 20, 25, 30, 40])), "side": int(rng.choice([-1, 1]))},
    }
    for name, q in places.items():
        q["behind"] = name == "Rim"
        q["out"] = snap(rng.uniform(1.5, 2.5) if name != "Rim" else rng.uniform(1.2, 2.0), 0.1)
        q["up"] = snap(rng.uniform(0.3, 1.5) if name != "Fill" else rng.uniform(0.2, 0.8), 0.1)
    calls: list[Call] = []
    for name, p in lights.items():
        calls += _light_calls(name, p, _around(head, **places[name]), head, new=name != "Key")
    if work:
        calls.append(("delete_object", {"name": "Work"}))

    def text(s: Phrases) -> list[str]:
        def power(name: str) -> str:
            if name == "Fill":
                return f"{s.w(FILL_RATIOS[ratio])} Key's {s.w('power')}"
            return f"{lights[name]['energy']:g} W"

        sentences = [
            f"{s.w('light up')} the bust on its {s.w('plinth')} {s.w('for a portrait')} with a "
            f"{s.w('three-point set-up')}: Key, Fill and Rim, {s.w('each')} {s.w('aimed at')} "
            f"the centre of Head, {s.len(head[2])} {s.w('above the floor')}; the camera "
            f"{s.w('looks from')} the front (-Y), {s.w('left is -X')}",
        ]
        for name, role in (("Key", "key light"), ("Fill", "fill light"), ("Rim", "rim light")):
            p = lights[name]
            sentences.append(
                f"the {s.w(role)} {name} is {_what(s, p, power(name))}, {s.w('coloured')} "
                f"{s.rgb(*p['colour'])}, {_where(s, places[name], 'the centre of Head')}"
            )
        if work:
            sentences.append(f"{s.w('remove')} the {s.w('work light')} Work")
        return sentences

    parameters = {
        "plinth": plinth,
        "work_light": work,
        "ratio": ratio,
        **{f"{n.lower()}_type": p["type"] for n, p in lights.items()},
        **{f"{n.lower()}_energy": p["energy"] for n, p in lights.items()},
    }
    return Drawn(text, start, calls, parameters, 3)


# -- sun_daylight --------------------------------------------------------------------------------


def _sun_daylight(rng: np.random.Generator) -> Drawn:
    """A bust on a plinth outdoors, lit by a point light Sun; the edit: Sun becomes a sun of a
    strength (W/m²), colour temperature (K) and angular diameter, standing on the line its light
    comes along (a bearing and an elevation) and aimed at the origin; on half the seeds also a
    Sky, a large disk area light overhead with a cool temperature, aimed straight down."""
    plinth = snap(rng.uniform(0.9, 1.2))
    start = [
        *_stage(),
        *_bust(plinth),
        ("add_light", {"name": "Sun", "kind": "POINT", "energy": 500.0, "x": 1.0, "z": 5.0}),
    ]
    sun = {
        "type": "SUN",
        "energy": snap(rng.uniform(2.0, 8.0), 0.5),
        "colour": (1.0, 1.0, 1.0),
        "kelvin": float(rng.choice(np.arange(3500.0, 6600.0, 250.0))),
        "angle": float(rng.choice([0.5, 2.0, 3.0, 4.0, 5.0])),
    }
    bearing = float(rng.choice(np.arange(0.0, 360.0, 15.0)))
    elevation = float(rng.choice(np.arange(20.0, 75.0, 5.0)))
    distance = snap(rng.uniform(5.0, 8.0), 0.5)
    b, e = math.radians(bearing), math.radians(elevation)
    at = tuple(
        snap(v, 0.001)
        for v in (
            distance * math.cos(e) * math.sin(b),
            distance * math.cos(e) * math.cos(b),
            distance * math.sin(e),
        )
    )
    calls = _light_calls("Sun", sun, at, (0.0, 0.0, 0.0), new=False)  # type: ignore[arg-type]
    calls.append(("set_sun_angle", {"name": "Sun", "angle": sun["angle"]}))
    sky = None
    if rng.random() < 0.5:
        sky = {
            "type": "AREA",
            "shape": "DISK",
            "energy": float(rng.choice([100.0, 150.0, 200.0, 300.0])),
            "colour": (1.0, 1.0, 1.0),
            "size": snap(rng.uniform(3.0, 5.0), 0.5),
            "kelvin": float(rng.choice(np.arange(8000.0, 12500.0, 500.0))),
            "height": snap(rng.uniform(4.0, 6.0), 0.5),
        }
        calls += _light_calls("Sky", sky, (0.0, 0.0, sky["height"]), (0.0, 0.0, 0.0), new=True)

    def text(s: Phrases) -> list[str]:
        sentences = [
            f"{s.w('light up')} the bust on its {s.w('plinth')} with {s.w('daylight')}: "
            f"{s.w('make')} Sun into a {s.w('sun light')} of {s.w('strength')} {sun['energy']:g} "
            f"W/m², white (colour {s.rgb(1.0, 1.0, 1.0)}) {s.w('tinted by')} a "
            f"{s.w('colour temperature')} of {sun['kelvin']:g} K, with a "
            f"{s.w('angular diameter')} of {s.deg(sun['angle'])}",
            f"its light {s.w('comes from')} a {s.w('bearing')} of {s.deg(bearing)} "
            f"{s.w('clockwise from north')} at an {s.w('elevation')} of {s.deg(elevation)}: "
            f"{s.w('stand')} Sun on that line {s.len(distance)} from the origin (z = 0), "
            f"{s.w('aimed at')} the origin",
        ]
        if sky is not None:
            sentences.append(
                f"{s.w('add')} Sky, a {s.w('disk')} {s.w('area light')} {s.len(sky['size'])} "
                f"{s.w('across')}, at {sky['energy']:g} W, white {s.w('tinted by')} a "
                f"{s.w('colour temperature')} of {sky['kelvin']:g} K, {s.len(sky['height'])} "
                f"{s.w('above the origin')} and {s.w('aimed at')} the origin"
            )
        return sentences

    parameters = {
        "strength": sun["energy"],
        "kelvin": sun["kelvin"],
        "sun_angle": sun["angle"],
        "bearing": bearing,
        "elevation": elevation,
        "sky": sky is not None,
    }
    return Drawn(text, start, calls, parameters, 3 if sky is not None else 2)


# -- area_softbox --------------------------------------------------------------------------------


def _area_softbox(rng: np.random.Generator) -> Drawn:
    """A bottle on a table lit by one bare point light Lamp; the edit: Lamp goes, and a
    softbox (a square or disk area light with a size, a spread, a power and a colour
    temperature) lights the bottle from the front-left or front-right; on half the seeds also a
    Top light, a square area light straight above the bottle, aimed down."""
    table = snap(rng.uniform(0.7, 0.9))
    body = snap(rng.uniform(0.2, 0.35), 0.01)
    centre = (0.0, 0.0, snap(table + 0.15, 0.001))
    start = [
        *_stage(),
        ("add_primitive", {"kind": "cube", "name": "Table", "size": 1.0, "z": table / 2}),
        ("set_scale", {"name": "Table", "x": 1.2, "y": 0.8, "z": table}),
        (
            "add_primitive",
            {"kind": "cylinder", "name": "Bottle", "size": body / 2, "depth": 0.3, "z": centre[2]},
        ),
        (
            "add_primitive",
            {"kind": "cone", "name": "Neck", "size": body / 2, "depth": 0.12, "z": table + 0.36},
        ),
        ("add_light", {"name": "Lamp", "kind": "POINT", "energy": 600.0, "x": 0.0, "z": 3.0}),
    ]
    box = {
        "type": "AREA",
        "shape": str(rng.choice(["SQUARE", "DISK"])),
        "size": snap(rng.uniform(0.6, 1.5), 0.1),
        "spread": float(rng.choice([45.0, 60.0, 75.0, 90.0, 120.0])),
        "energy": float(rng.choice([150.0, 200.0, 250.0, 300.0, 400.0, 500.0])),
        "colour": (1.0, 1.0, 1.0),
        "kelvin": float(rng.choice(np.arange(3000.0, 7000.0, 500.0))),
    }
    place = {
        "angle": float(rng.choice([20, 30, 40, 45, 50, 60])),
        "side": int(rng.choice([-1, 1])),
        "behind": False,
        "out": snap(rng.uniform(0.8, 1.6), 0.1),
        "up": snap(rng.uniform(0.2, 0.8), 0.1),
    }
    calls = [
        ("delete_object", {"name": "Lamp"}),
        *_light_calls("Softbox", box, _around(centre, **place), centre, new=True),
    ]
    top = None
    if rng.random() < 0.5:
        top = {
            "type": "AREA",
            "shape": "SQUARE",
            "size": snap(rng.uniform(0.8, 1.5), 0.1),
            "spread": 180.0,
            "energy": float(rng.choice([50.0, 80.0, 100.0, 150.0])),
            "colour": _colour(rng, (0.85, 0.85, 0.85), (1.0, 1.0, 1.0)),
            "height": snap(rng.uniform(1.0, 1.6), 0.1),
        }
        at = (0.0, 0.0, snap(centre[2] + top["height"], 0.001))
        calls += _light_calls("Top", top, at, centre, new=True)

    def text(s: Phrases) -> list[str]:
        power = f"{box['energy']:g} W"
        sentences = [
            f"{s.w('light up')} Bottle {s.w('for a product shot')}: {s.w('remove')} the "
            f"{s.w('bare')} {s.w('point light')} Lamp and {s.w('add')} a {s.w('softbox')} "
            f"Softbox, {_what(s, box, power)}, white {s.w('tinted by')} a "
            f"{s.w('colour temperature')} of {box['kelvin']:g} K",
            f"Softbox {s.w('stands')} {_where(s, place, 'the centre of Bottle')}, which is "
            f"{s.len(centre[2])} {s.w('above the floor')} on the origin, {s.w('aimed at')} "
            f"that centre; the camera {s.w('looks from')} the front (-Y), {s.w('left is -X')}",
        ]
        if top is not None:
            sentences.append(
                f"{s.w('add')} Top, {_what(s, top, f'{top["energy"]:g} W')}, {s.w('coloured')} "
                f"{s.rgb(*top['colour'])}, {s.len(top['height'])} {s.w('straight above')} the "
                f"centre of Bottle and {s.w('aimed at')} it"
            )
        return sentences

    parameters = {
        "shape": box["shape"],
        "size": box["size"],
        "spread": box["spread"],
        "energy": box["energy"],
        "kelvin": box["kelvin"],
        "top": top is not None,
    }
    return Drawn(text, start, calls, parameters, 3 if top is not None else 2)


WORDS = {
    # roles and kinds
    "three-point set-up": ("three-point set-up", "three-point rig", "key-fill-rim arrangement"),
    "key light": ("key light", "main light", "principal source"),
    "fill light": ("fill light", "fill", "shadow-filling source"),
    "rim light": ("rim light", "back light", "edge-separating source"),
    "work light": ("work light", "working lamp", "leftover utility lamp"),
    "softbox": ("softbox", "soft box", "diffused studio panel"),
    "spot light": ("spot light", "spotlight", "cone-shaped emitter"),
    "point light": ("point light", "point lamp", "omnidirectional bulb"),
    "area light": ("area light", "area lamp", "flat emitting panel"),
    "sun light": ("sun light", "sun lamp", "distant directional source"),
    "square": ("square", "square-shaped", "equal-sided"),
    "disk": ("disk", "round", "circular"),
    "on a side": ("on a side", "per side", "along each edge"),
    "across": ("across", "in diameter", "from rim to rim"),
    "cone": ("cone", "beam", "spread of beam"),
    "spreads": ("spreads", "casts", "fans out"),
    "bare": ("bare", "plain", "undiffused"),
    # settings
    "coloured": ("coloured", "with colour", "tinted at"),
    "tinted by": ("tinted by", "given", "warmed or cooled by"),
    "colour temperature": ("colour temperature", "light temperature", "black-body temperature"),
    "strength": ("strength", "irradiance", "intensity"),
    "angular diameter": ("angular diameter", "angular size", "apparent disc width"),
    "half": ("half", "one half of", "fifty per cent of"),
    "a third of": ("a third of", "one third of", "one-third of"),
    "a quarter of": ("a quarter of", "one quarter of", "one-fourth of"),
    # what to do, for what
    "light up": ("light", "set up the lights on", "illuminate"),
    "make": ("make", "turn", "convert"),
    "for a portrait": ("for a portrait", "as a portrait", "in portrait fashion"),
    "for a product shot": ("for a product shot", "as a product shot", "in packshot fashion"),
    "daylight": ("daylight", "sunlight", "outdoor daytime light"),
    "plinth": ("plinth", "pedestal", "stand block"),
    "aimed at": ("aimed at", "pointing at", "directed towards"),
    "looks from": ("looks from", "views it from", "is positioned at"),
    "stands": ("stands", "sits", "is located"),
    "stand": ("stand", "put", "locate"),
    "comes from": ("comes from", "arrives from", "falls from"),
    "bearing": ("bearing", "compass bearing", "azimuth"),
    "clockwise from north": (
        "clockwise from north (+Y, with east +X)",
        "measured clockwise from north, +Y (east is +X)",
        "turning from north, +Y, towards east, +X,",
    ),
    "elevation": ("elevation", "altitude", "angle above the horizon"),
    "above the origin": ("above the origin", "over the origin", "up from the world centre"),
    "straight above": ("straight above", "directly above", "vertically over"),
    # where
    "left of the camera": (
        "to the left of the camera",
        "camera-left",
        "round to the camera's left",
    ),
    "right of the camera": (
        "to the right of the camera",
        "camera-right",
        "round to the camera's right",
    ),
    "left behind": (
        "to the left of straight behind",
        "left of directly behind",
        "round to the left of the rear line",
    ),
    "right behind": (
        "to the right of straight behind",
        "right of directly behind",
        "round to the right of the rear line",
    ),
    "left is -X": ("its left towards -X", "with -X on its left", "leaving -X to its left"),
    "out": ("out", "away in plan", "off horizontally"),
    "up": ("up", "higher", "raised"),
    "remove": ("remove", "delete", "take away"),
    "add": ("add", "create", "introduce"),
}

FAMILY_GROUP = (
    Family(
        "three_point",
        "lighting",
        _three_point,
        "a bust's key, fill (a ratio of the key's power) and rim lights, placed and aimed",
        words=WORDS,
    ),
    Family(
        "sun_daylight",
        "lighting",
        _sun_daylight,
        "a sun's strength, colour temperature, angular size and direction; a sky's fill",
        words=WORDS,
    ),
    Family(
        "area_softbox",
        "lighting",
        _area_softbox,
        "softbox area lights' shape, size, spread, power and colour temperature",
        words=WORDS,
    ),
)
