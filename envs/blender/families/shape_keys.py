"""Shape-key edits, said in any style of the phrase bank: a mesh with four or five named keys,
each with its own slider range, some set to drawn values, some negative or beyond 1.

The start program makes Jelly, a UV sphere 2 m across (centred 1 m above the floor), with a
Basis and four or five of the keys of :data:`SHAPES` (each a deformation of the sphere, in its
own coordinates, m), each with a slider range and a start value; the task sets three to five of
them and leaves the rest as they are. Key values are Blender's blend weights (unitless: 0 the
basis, 1 the key's full shape, linear beyond and below). The verifier compares the evaluated
mesh's vertices.
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

#: Each key's shape: where a basis vertex ``v`` (the unit sphere) goes, as Python the start
#: program runs (``math`` in scope).
SHAPES = {
    "Stretch": "(v.x, v.y, v.z * 1.6)",
    "Squash": "(v.x * 1.3, v.y * 1.3, v.z * 0.6)",
    "Lean": "(v.x + 0.5 * (v.z + 1), v.y, v.z)",
    "Twist": "(v.x * math.cos(v.z) - v.y * math.sin(v.z), "
    "v.x * math.sin(v.z) + v.y * math.cos(v.z), v.z)",
    "Bulge": "(v.x * (1.4 - 0.4 * v.z * v.z), v.y * (1.4 - 0.4 * v.z * v.z), v.z)",
    "Taper": "(v.x * (1 - 0.35 * (v.z + 1)), v.y * (1 - 0.35 * (v.z + 1)), v.z)",
}

START = """import math
tools.add_primitive("uv_sphere", "Jelly", size=2.0, segments=24, z=1.0)
jelly = bpy.data.objects["Jelly"]
jelly.shape_key_add(name="Basis")
SHAPES = {{
{shapes}}}
for key_name, low, high, value in {keys!r}:
    key = jelly.shape_key_add(name=key_name, from_mix=False)
    key.slider_min, key.slider_max = low, high
    for point, vertex in zip(key.data, jelly.data.vertices):
        point.co = SHAPES[key_name](vertex.co)
    key.value = value
"""


def _start(keys: list[tuple[str, float, float, float]]) -> str:
    shapes = "".join(f"    {name!r}: lambda v: {SHAPES[name]},\n" for name, *_ in keys)
    return START.format(shapes=shapes, keys=tuple(keys))


def _value(rng: np.random.Generator, low: float, high: float, start: float) -> float:
    """A value in ``[low, high]`` on a 0.05 grid, at least 0.3 from ``start``."""
    while True:
        value = snap(rng.uniform(low, high))
        if abs(value - start) >= 0.3:
            return value


def _shape_key_sliders(rng: np.random.Generator) -> Drawn:
    """Four or five keys, each with a slider range (from -1 or -0.5 to 1.5 or 2) and a start
    value (0, or 0.1 to 0.6); three to five of them set, the first set negative and the second
    beyond 1, the others anywhere in their range."""
    count = int(rng.integers(4, 6))
    chosen = {str(n) for n in rng.choice(list(SHAPES), count, replace=False)}
    names = [n for n in SHAPES if n in chosen]  # in SHAPES' order
    keys = []
    for name in names:
        low, high = float(rng.choice([-1.0, -0.5])), float(rng.choice([1.5, 2.0]))
        start = 0.0 if rng.random() < 0.4 else snap(rng.uniform(0.1, 0.6))
        keys.append((name, low, high, start))
    changed = int(rng.integers(3, count + 1))
    order = [int(k) for k in rng.permutation(count)[:changed]]
    goals: dict[str, float] = {}
    for rank, k in enumerate(order):
        name, low, high, start = keys[k]
        if rank == 0:  # negative
            goals[name] = _value(rng, low, -0.1, start)
        elif rank == 1:  # beyond 1
            goals[name] = _value(rng, 1.1, high, start)
        else:
            goals[name] = _value(rng, low, high, start)
    said_keys = [k for k in keys if k[0] in goals]  # in the mesh's order
    kept = [k[0] for k in keys if k[0] not in goals]
    calls: list[Call] = [
        ("set_shape_key", {"name": "Jelly", "key": name, "value": goals[name]})
        for name, *_ in said_keys
    ]

    def text(s: Phrases) -> list[str]:
        first = f"{s.w('set')} {s.w('shape keys')} of Jelly {s.w('as listed')}"
        if kept:
            listed = kept[0] if len(kept) == 1 else ", ".join(kept[:-1]) + " and " + kept[-1]
            left = s.w("as it is" if len(kept) == 1 else "as they are")
            first += f", {s.w('leaving')} {listed} {left}"
        return [
            first,
            *(
                f"the {name} {s.w('key')} {s.w('goes to')} {goals[name]:g} (its {s.w('slider')} "
                f"{s.w('runs')} from {low:g} to {high:g})"
                for name, low, high, _ in said_keys
            ),
        ]

    parameters = {"keys": len(keys), "set": dict(goals)}
    return Drawn(text, _start(keys), calls, parameters, 2 if changed == 3 else 3)


WORDS = {
    "shape keys": ("the shape keys", "the shape-key values", "the morph weights"),
    "as listed": ("as listed", "as given below", "per the list that follows"),
    "leaving": ("leaving", "keeping", "with"),
    "as it is": ("as it is", "at its value", "unchanged"),
    "as they are": ("as they are", "at their values", "unchanged"),
    "key": ("key", "shape key", "morph target"),
    "goes to": ("goes to", "is set to", "takes the weight"),
    "slider": ("slider", "slider range", "allowed weight"),
    "runs": ("runs", "spans", "goes"),
}

FAMILY_GROUP = (
    Family(
        "shape_key_sliders",
        "shape_keys",
        _shape_key_sliders,
        "four or five shape keys with their own ranges, some set negative or beyond 1",
        words=WORDS,
    ),
)
