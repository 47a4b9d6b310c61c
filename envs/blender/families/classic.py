"""The first Blender families, one or more per task kind, with their prompts as first written
(fixed texts: the learning figures measured on ``blender-moves`` stay as they were).

Lengths in metres, angles in degrees, colours linear RGB.
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family
from toolgym.envs.blender.families.model import snap as _round


def _table(rng: np.random.Generator) -> Drawn:
    width, depth = _round(rng.uniform(1.0, 2.0)), _round(rng.uniform(0.6, 1.0))
    height, top = _round(rng.uniform(0.6, 1.0)), _round(rng.uniform(0.04, 0.1), 0.01)
    leg = _round(rng.uniform(0.05, 0.1), 0.01)
    calls: list[Call] = [
        ("add_primitive", {"kind": "cube", "name": "Top", "size": 1.0, "z": height - top / 2}),
        ("set_scale", {"name": "Top", "x": width, "y": depth, "z": top}),
    ]
    for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        x, y = sx * (width / 2 - leg), sy * (depth / 2 - leg)
        calls.append(
            (
                "add_primitive",
                {
                    "kind": "cylinder",
                    "name": f"Leg{k + 1}",
                    "size": leg,
                    "depth": height - top,
                    "x": x,
                    "y": y,
                    "z": (height - top) / 2,
                },
            )
        )
    prompt = (
        f"Model a table: a {width:g} × {depth:g} m top {top:g} m thick whose upper face is "
        f"{height:g} m above the floor (z = 0), centred on the origin, on four round legs "
        f"{leg:g} m across, each centred {leg:g} m in from the top's edges."
    )
    parameters = {"width": width, "depth": depth, "height": height, "top": top, "leg": leg}
    return Drawn(prompt, [], calls, parameters, 3)


def _stairs(rng: np.random.Generator) -> Drawn:
    steps = int(rng.integers(3, 7))
    rise = _round(rng.uniform(0.15, 0.25), 0.01)
    run = _round(rng.uniform(0.25, 0.35), 0.01)
    width = _round(rng.uniform(0.8, 1.5))
    calls: list[Call] = []
    for k in range(steps):
        name = f"Step{k + 1}"
        calls.append(
            (
                "add_primitive",
                {
                    "kind": "cube",
                    "name": name,
                    "size": 1.0,
                    "x": 0.0,
                    "y": (k + 0.5) * run,
                    "z": (k + 1) * rise / 2,
                },
            )
        )
        calls.append(("set_scale", {"name": name, "x": width, "y": run, "z": (k + 1) * rise}))
    prompt = (
        f"Model a flight of {steps} solid stairs rising along +Y from the floor (z = 0): each step "
        f"{rise:g} m high and {run:g} m deep, {width:g} m wide and centred on x = 0; the first "
        f"step starts at y = 0; each step is a block from the floor up to its tread."
    )
    return Drawn(prompt, [], calls, {"steps": steps, "rise": rise, "run": run, "width": width})


def _placement(rng: np.random.Generator) -> Drawn:
    kinds = ["cube", "uv_sphere", "cone", "cylinder"]
    names = ["Crate", "Ball", "Cone", "Drum"]
    count = int(rng.integers(2, 5))
    start: list[Call] = []
    calls: list[Call] = []
    lines = []
    for k in range(count):
        start.append(
            (
                "add_primitive",
                {
                    "kind": kinds[k],
                    "name": names[k],
                    "size": 1.0,
                    "x": 2.0 * k - 3.0,
                    "y": 0.0,
                    "z": 0.5,
                },
            )
        )
        x, y = _round(rng.uniform(-3, 3), 0.1), _round(rng.uniform(-3, 3), 0.1)
        z = _round(rng.uniform(0.5, 1.5), 0.1)
        angle = float(rng.choice([0, 15, 30, 45, 60, 90]))
        scale = _round(rng.uniform(0.6, 1.6), 0.1)
        calls += [
            ("set_location", {"name": names[k], "x": x, "y": y, "z": z}),
            ("set_rotation", {"name": names[k], "x": 0.0, "y": 0.0, "z": angle}),
            ("set_scale", {"name": names[k], "x": scale, "y": scale, "z": scale}),
        ]
        lines.append(
            f"{names[k]} to ({x:g}, {y:g}, {z:g}), turned {angle:g}° about Z, scaled {scale:g}×"
        )
    prompt = "Move the objects: " + "; ".join(lines) + "."
    return Drawn(prompt, start, calls, {"objects": count})


MOVABLE = (("Crate", "cube"), ("Ball", "uv_sphere"), ("Cone", "cone"), ("Drum", "cylinder"))
MOVE_AREA = 2.5  # m: goals lie in [-2.5, 2.5]² on the floor's plan, 0.5-1.5 m up
MOVE_ROW_Y = 4.0  # m: where the objects wait, behind the goals' area, 1.5 m apart


def _move(rng: np.random.Generator) -> Drawn:
    """One to three objects, each moved by one call to a point the prompt gives: a short
    reference whose every call earns its object's share of the score (and a near miss most of
    it: the placement verifier's position term is smooth)."""
    count = int(rng.integers(1, 4))
    picked = [MOVABLE[k] for k in rng.choice(len(MOVABLE), count, replace=False)]
    goals: list[tuple[float, float, float]] = []
    while len(goals) < count:  # at least 1 m apart, so the views tell them apart
        x, y = (_round(v, 0.1) for v in rng.uniform(-MOVE_AREA, MOVE_AREA, 2))
        z = _round(rng.uniform(0.5, 1.5), 0.1)
        if all(np.hypot(x - gx, y - gy) >= 1.0 for gx, gy, _ in goals):
            goals.append((x, y, z))
    slots = rng.permutation(4)[:count]
    start: list[Call] = [
        (
            "add_primitive",
            {
                "kind": kind,
                "name": name,
                "size": 1.0,
                "x": 1.5 * float(slot) - 2.25,
                "y": MOVE_ROW_Y,
                "z": 0.5,
            },
        )
        for (name, kind), slot in zip(picked, slots, strict=True)
    ]
    calls: list[Call] = [
        ("set_location", {"name": name, "x": x, "y": y, "z": z})
        for (name, _), (x, y, z) in zip(picked, goals, strict=True)
    ]
    moves = [
        f"{name} to ({x:g}, {y:g}, {z:g})"
        for (name, _), (x, y, z) in zip(picked, goals, strict=True)
    ]
    listed = moves[0] if count == 1 else ", ".join(moves[:-1]) + " and " + moves[-1]
    prompt = f"Move {listed}; points are (x, y, z) in m."
    return Drawn(prompt, start, calls, {"objects": count}, count)


def _material(rng: np.random.Generator) -> Drawn:
    start = [
        *_lit_stage(),
        ("add_primitive", {"kind": "uv_sphere", "name": "Ball", "size": 1.0, "z": 0.5}),
        ("set_material", {"name": "Ball", "r": 0.5, "g": 0.5, "b": 0.5, "roughness": 0.5}),
    ]
    r, g, b = (_round(v, 0.05) for v in rng.uniform(0.05, 0.95, 3))
    roughness, metallic = _round(rng.uniform(0.05, 0.95)), float(rng.choice([0.0, 1.0]))
    emission = float(rng.choice([0.0, 0.0, 2.0]))
    calls: list[Call] = [
        (
            "set_material",
            {
                "name": "Ball",
                "r": r,
                "g": g,
                "b": b,
                "roughness": roughness,
                "metallic": metallic,
                "emission_strength": emission,
            },
        )
    ]
    prompt = (
        f"Give Ball a material with base colour ({r:g}, {g:g}, {b:g}) (linear RGB), roughness "
        f"{roughness:g}, metallic {metallic:g} and emission strength {emission:g}."
    )
    parameters = {"r": r, "g": g, "b": b, "roughness": roughness, "metallic": metallic}
    return Drawn(prompt, start, calls, parameters)


def _lit_stage() -> list[Call]:
    """A floor and a key light: what material and lighting scenes stand on."""
    return [
        ("add_primitive", {"kind": "plane", "name": "Floor", "size": 6.0}),
        (
            "add_light",
            {"name": "Key", "kind": "POINT", "energy": 400.0, "x": 2.0, "y": -2.0, "z": 3.0},
        ),
    ]


SHAPE_KEY_START = """import bmesh
tools.add_primitive("uv_sphere", "Blob", size=2.0, segments=24, z=1.0)
blob = bpy.data.objects["Blob"]
blob.shape_key_add(name="Basis")
for key_name, move in (
    ("Stretch", lambda v: (v.x, v.y, v.z * 1.8)),
    ("Flatten", lambda v: (v.x * 1.4, v.y * 1.4, v.z * 0.4)),
    ("Lean", lambda v: (v.x + 0.5 * (v.z + 1), v.y, v.z)),
):
    key = blob.shape_key_add(name=key_name, from_mix=False)
    key.value = 0.0  # a new key starts at full weight
    for point, vertex in zip(key.data, blob.data.vertices):
        point.co = move(vertex.co)
"""


def _shape_keys(rng: np.random.Generator) -> Drawn:
    values = {k: _round(rng.uniform(0.1, 1.0)) for k in ("Stretch", "Flatten", "Lean")}
    used = [k for k in values if rng.random() < 0.7] or ["Lean"]
    calls: list[Call] = [
        ("set_shape_key", {"name": "Blob", "key": k, "value": values[k]}) for k in used
    ]
    prompt = "Set Blob's shape keys: " + ", ".join(f"{k} to {values[k]:g}" for k in used) + "."
    return Drawn(prompt, SHAPE_KEY_START, calls, {k: values[k] for k in used})


def _lighting(rng: np.random.Generator) -> Drawn:
    start = [
        *_lit_stage(),
        ("add_primitive", {"kind": "cube", "name": "Crate", "size": 1.0, "z": 0.5}),
    ]
    kind = str(rng.choice(["POINT", "SPOT", "AREA"]))
    energy = float(rng.choice([150.0, 250.0, 600.0, 900.0, 1200.0]))
    r, g, b = (_round(v, 0.05) for v in rng.uniform(0.3, 1.0, 3))
    x, y = _round(rng.uniform(-3, 3), 0.1), _round(rng.uniform(-3, 3), 0.1)
    z = _round(rng.uniform(1.5, 4), 0.1)
    calls: list[Call] = [
        ("set_light", {"name": "Key", "kind": kind, "energy": energy, "r": r, "g": g, "b": b}),
        ("set_location", {"name": "Key", "x": x, "y": y, "z": z}),
    ]
    prompt = (
        f"Make Key a {kind.lower()} light of {energy:g} W with colour ({r:g}, {g:g}, {b:g}), "
        f"placed at ({x:g}, {y:g}, {z:g})."
    )
    parameters = {"type": kind, "energy": energy, "x": x, "y": y, "z": z}
    return Drawn(prompt, start, calls, parameters)


def _array_bevel(rng: np.random.Generator) -> Drawn:
    start: list[Call] = [
        ("add_primitive", {"kind": "cube", "name": "Brick", "size": 1.0, "z": 0.5}),
        ("add_modifier", {"name": "Brick", "kind": "ARRAY", "modifier": "Array"}),
        (
            "set_modifier",
            {"name": "Brick", "modifier": "Array", "setting": "count", "value": 2.0},
        ),
        ("add_modifier", {"name": "Brick", "kind": "BEVEL", "modifier": "Bevel"}),
        (
            "set_modifier",
            {"name": "Brick", "modifier": "Bevel", "setting": "width", "value": 0.05},
        ),
    ]
    count = int(rng.integers(3, 8))
    width = _round(rng.uniform(0.15, 0.35), 0.05)
    segments = int(rng.integers(1, 4))
    calls: list[Call] = [
        (
            "set_modifier",
            {"name": "Brick", "modifier": "Array", "setting": "count", "value": float(count)},
        ),
        (
            "set_modifier",
            {"name": "Brick", "modifier": "Bevel", "setting": "width", "value": width},
        ),
        (
            "set_modifier",
            {"name": "Brick", "modifier": "Bevel", "setting": "segments", "value": float(segments)},
        ),
    ]
    prompt = (
        f"Set Brick's modifiers: the Array to {count} copies, the Bevel to a width of "
        f"{width:g} m in {segments} segment{'s' if segments > 1 else ''}."
    )
    return Drawn(prompt, start, calls, {"count": count, "width": width, "segments": segments})


def _screw(rng: np.random.Generator) -> Drawn:
    start: list[Call] = [
        ("add_primitive", {"kind": "cube", "name": "Coil", "size": 0.3, "x": 1.0}),
        ("add_modifier", {"name": "Coil", "kind": "SCREW", "modifier": "Screw"}),
        (
            "set_modifier",
            {"name": "Coil", "modifier": "Screw", "setting": "screw_offset", "value": 0.5},
        ),
        (
            "set_modifier",
            {"name": "Coil", "modifier": "Screw", "setting": "iterations", "value": 1.0},
        ),
    ]
    offset = _round(rng.uniform(0.8, 2.0), 0.1)
    iterations = int(rng.integers(2, 5))
    steps = int(rng.choice([8, 12, 16, 24]))
    calls: list[Call] = [
        (
            "set_modifier",
            {"name": "Coil", "modifier": "Screw", "setting": name, "value": float(value)},
        )
        for name, value in (
            ("screw_offset", offset),
            ("iterations", iterations),
            ("steps", steps),
            ("render_steps", steps),
        )
    ]
    prompt = (
        f"Set Coil's Screw modifier: {offset:g} m rise per turn, {iterations} turns, "
        f"{steps} steps per turn."
    )
    return Drawn(prompt, start, calls, {"offset": offset, "iterations": iterations, "steps": steps})


FAMILY_GROUP = (
    Family("table", "modelling", _table, "a table: a top on four round legs"),
    Family("stairs", "modelling", _stairs, "a flight of solid stairs"),
    Family("placement", "placement", _placement, "move, turn and scale two to four objects"),
    Family("move", "placement", _move, "move one to three objects", disjoint=True),
    Family("material", "material", _material, "a sphere's Principled BSDF"),
    Family("shape_keys", "shape_keys", _shape_keys, "a blob's three shape keys"),
    Family("lighting", "lighting", _lighting, "one light's type, power, colour and place"),
    Family("array_bevel", "procedural", _array_bevel, "a brick's array and bevel modifiers"),
    Family("screw", "procedural", _screw, "a screw modifier's rise, turns and steps"),
)
