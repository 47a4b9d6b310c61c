"""Mechanical parts modelled from nothing: a spoked wheel and a flanged pipe, said in any style
of the phrase bank, with edit tasks that start from one part and ask for a change.

Lengths in metres, angles in degrees. A spoked wheel stands upright on the floor (z = 0), its
axle along Y through x = 0, y = 0: a torus rim, a cylindrical hub on the axle and round spokes
from the axle to the middle of the rim's tube, the first made and the others copied and turned
about the axle (``duplicate_object``, ``set_rotation``). A flanged pipe stands upright on the
floor, on the Z axis: one object, the pipe and its two end flanges joined by booleans, the bolt
holes of each flange and then the bore cut through by cutters that overshoot the faces they cut
(``boolean``, the holes of a flange joined into one cutter with ``join_objects``).
"""

from __future__ import annotations

import math

import numpy as np

from toolgym.envs.blender.families.furniture_more import (
    COMMON_WORDS,
    copy,
    cylinder,
    mm,
    rebuilt,
)
from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

OVERSHOOT = 0.02  # m: how far a cutter reaches past the faces it cuts through

# -- spoked wheel --------------------------------------------------------------------------------

RIM_THICKER = 0.02  # m: what an edit thickens the rim's tube by
RIM_SEGMENTS = 64  # around the rim (its tube: half as many)


def _wheel_draw(rng: np.random.Generator) -> dict[str, float]:
    """A wheel 0.4-0.8 m across; its rim's tube 0.025-0.045 m thick (an edit adds 0.02 m),
    its hub 0.06-0.12 m across and long, 4-8 spokes 0.012-0.02 m across."""
    return {
        "diameter": snap(rng.uniform(0.4, 0.8)),
        "rim": snap(rng.uniform(0.025, 0.045), 0.005),
        "hub": snap(rng.uniform(0.06, 0.12), 0.01),
        "hub_length": snap(rng.uniform(0.06, 0.12), 0.01),
        "spoke": snap(rng.uniform(0.012, 0.02), 0.002),
        "spokes": int(rng.integers(4, 9)),
    }


def _wheel_centre(p: dict[str, float]) -> float:
    """The axle's height: the wheel stands on the floor."""
    return p["diameter"] / 2


def _wheel_rim(p: dict[str, float]) -> list[Call]:
    z = mm(_wheel_centre(p))
    args = {"kind": "torus", "name": "Rim", "size": mm(p["diameter"]), "depth": mm(p["rim"])}
    return [
        ("add_primitive", {**args, "segments": RIM_SEGMENTS, "x": 0.0, "y": 0.0, "z": z}),
        ("set_rotation", {"name": "Rim", "x": 90.0, "y": 0.0, "z": 0.0}),
    ]


def _wheel_hub(p: dict[str, float]) -> list[Call]:
    return [
        *cylinder("Hub", p["hub"], p["hub_length"], (0, 0, _wheel_centre(p))),
        ("set_rotation", {"name": "Hub", "x": 90.0, "y": 0.0, "z": 0.0}),
    ]


def _wheel_spoke_length(p: dict[str, float]) -> float:
    """From the axle to the middle of the rim's tube (of the rim the wheel was drawn with)."""
    return p["diameter"] / 2 - p["rim"] / 2


def _wheel_spokes(p: dict[str, float], first: int = 1) -> list[Call]:
    """The spokes from the ``first``-th on (from 1): the first made pointing straight up, the
    others copies of it, turned about the axle (Y) by equal steps."""
    n, length, centre = int(p["spokes"]), _wheel_spoke_length(p), _wheel_centre(p)
    calls: list[Call] = []
    if first == 1:
        calls += cylinder("Spoke1", p["spoke"], length, (0, 0, centre + length / 2))
    for k in range(max(first, 2), n + 1):
        turn = 360.0 * (k - 1) / n
        a = math.radians(turn)
        at = (length / 2 * math.sin(a), 0.0, centre + length / 2 * math.cos(a))
        calls += copy("Spoke1", f"Spoke{k}", at)
        calls.append(
            ("set_rotation", {"name": f"Spoke{k}", "x": 0.0, "y": round(turn, 3), "z": 0.0})
        )
    return calls


def _wheel_calls(p: dict[str, float]) -> list[Call]:
    return _wheel_rim(p) + _wheel_hub(p) + _wheel_spokes(p)


def _wheel_rim_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"its {s.w('rim')} is a {s.w('ring')} {s.w('round in section')}, its tube "
        f"{s.len(p['rim'])} {s.w('thick')}, {s.len(p['diameter'])} {s.w('across')} at its "
        f"outside, in the XZ plane about the {s.w('axle')}"
    )


def _wheel_hub_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"a {s.w('hub')} {s.len(p['hub'])} {s.w('across')} and {s.len(p['hub_length'])} "
        f"{s.w('long')} sits on the {s.w('axle')}, centred on the wheel's centre"
    )


def _wheel_spokes_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"{s.count(int(p['spokes']))} {s.w('spokes')} {s.len(p['spoke'])} {s.w('across')} run "
        f"from the {s.w('axle')} to the middle of the {s.w('rim')}'s tube, "
        f"{s.w('evenly spaced')} round the {s.w('axle')}, the first pointing {s.w('straight up')}"
    )


def _wheel_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('model')} a {s.w('spoked wheel')} standing upright {s.w('on the floor')} "
            f"(z = 0), its {s.w('axle')} along Y through x = 0 and y = 0 and its centre at "
            f"{s.at(0, 0, _wheel_centre(p))}",
            _wheel_rim_text(s, p),
            _wheel_hub_text(s, p),
            _wheel_spokes_text(s, p),
        ]

    return text


def _wheel_tier(p: dict[str, float]) -> int:
    return 2 if p["spokes"] <= 5 else 3


def _wheel(rng: np.random.Generator) -> Drawn:
    p = _wheel_draw(rng)
    return Drawn(_wheel_text(p), [], _wheel_calls(p), p, _wheel_tier(p))


def _wheel_edit(rng: np.random.Generator) -> Drawn:
    before = _wheel_draw(rng)
    after = dict(before)
    start = _wheel_calls(before)
    n = int(before["spokes"])
    change = int(rng.integers(3))
    if change == 0:  # one spoke more or fewer: the first kept, the others made again
        after["spokes"] = n + 1 if n < 8 else n - 1
        calls = [("delete_object", {"name": f"Spoke{k}"}) for k in range(2, n + 1)]
        calls += _wheel_spokes(after, first=2)

        def text(s: Phrases) -> list[str]:
            return [
                f"give the wheel {s.count(int(after['spokes']))} {s.w('spokes')} "
                f"{s.w('instead of')} {s.count(n)}, still {s.w('evenly spaced')} round the "
                f"{s.w('axle')} with the first pointing {s.w('straight up')}; the "
                f"{s.w('rim')} and {s.w('hub')} stay as they are"
            ]

    elif change == 1:  # a thicker rim, as wide outside: the spokes still end inside its tube
        after["rim"] = snap(before["rim"] + RIM_THICKER, 0.005)
        calls = [("delete_object", {"name": "Rim"}), *_wheel_rim(after)]

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('rim')} {s.len(RIM_THICKER)} {s.w('thicker')}, its tube "
                f"{s.len(after['rim'])} {s.w('thick')}, still {s.len(after['diameter'])} "
                f"{s.w('across')} at its outside; the {s.w('spokes')} stay as they are"
            ]

    else:  # a bigger hub
        after["hub"] = snap(before["hub"] + rng.choice([0.03, 0.04, 0.05]), 0.01)
        after["hub_length"] = snap(before["hub_length"] + rng.choice([0.03, 0.04]), 0.01)
        calls = [("delete_object", {"name": "Hub"}), *_wheel_hub(after)]

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('hub')} {s.len(after['hub'])} {s.w('across')} and "
                f"{s.len(after['hub_length'])} {s.w('long')}, still centred on the wheel's "
                f"centre; the {s.w('spokes')} stay as they are"
            ]

    return Drawn(text, start, calls, after, _wheel_tier(after))


# -- flanged pipe --------------------------------------------------------------------------------

BOLT_COUNTS = (4, 6, 8)


def _pipe_draw(rng: np.random.Generator) -> dict[str, float]:
    """A short pipe 0.2-0.4 m long, 0.06-0.12 m across outside with a wall 0.005-0.008 m thick;
    flanges 0.12-0.16 m wider than it and 0.025-0.04 m thick; 4, 6 or 8 bolt holes
    0.02-0.028 m across on a bolt circle midway between the pipe and a flange's edge."""
    pipe = snap(rng.uniform(0.06, 0.12), 0.01)
    flange = snap(pipe + rng.uniform(0.12, 0.16), 0.01)
    return {
        "length": snap(rng.uniform(0.2, 0.4)),
        "pipe": pipe,
        "wall": snap(rng.uniform(0.005, 0.008), 0.001),
        "flange": flange,
        "flange_thickness": snap(rng.uniform(0.025, 0.04), 0.005),
        "bolt_circle": snap((pipe + flange) / 2, 0.005),
        "hole": snap(rng.uniform(0.02, 0.028), 0.002),
        "bolts": int(rng.choice(BOLT_COUNTS)),
    }


def _pipe_holes(p: dict[str, float], name: str, z: float) -> list[Call]:
    """One flange's bolt holes as one cutter, ``name``, centred at height ``z``: the first hole
    on +X, the others copied round the Z axis, all joined into the first."""
    n, r, t = int(p["bolts"]), p["bolt_circle"] / 2, p["flange_thickness"]
    calls = cylinder(name, p["hole"], t + 2 * OVERSHOOT, (r, 0, z))
    for k in range(1, n):
        a = 2 * math.pi * k / n
        calls += copy(name, f"{name}_{k + 1}", (r * math.cos(a), r * math.sin(a), z))
    calls += [("join_objects", {"name": name, "other": f"{name}_{k + 1}"}) for k in range(1, n)]
    return calls


def _pipe_calls(p: dict[str, float]) -> list[Call]:
    """The pipe, both flanges joined to it, each flange's holes cut, then the bore."""
    length, t = p["length"], p["flange_thickness"]
    calls = cylinder("Pipe", p["pipe"], length, (0, 0, length / 2))
    calls += cylinder("FlangeBottom", p["flange"], t, (0, 0, t / 2))
    calls += cylinder("FlangeTop", p["flange"], t, (0, 0, length - t / 2))
    calls += [
        ("boolean", {"name": "Pipe", "other": "FlangeBottom", "operation": "UNION"}),
        ("boolean", {"name": "Pipe", "other": "FlangeTop", "operation": "UNION"}),
    ]
    calls += _pipe_holes(p, "HolesBottom", t / 2)
    calls += _pipe_holes(p, "HolesTop", length - t / 2)
    calls += [
        ("boolean", {"name": "Pipe", "other": "HolesBottom"}),
        ("boolean", {"name": "Pipe", "other": "HolesTop"}),
    ]
    bore = p["pipe"] - 2 * p["wall"]
    calls += cylinder("Bore", bore, length + 2 * OVERSHOOT, (0, 0, length / 2))
    return [*calls, ("boolean", {"name": "Pipe", "other": "Bore"})]


def _pipe_flange_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"a {s.w('flange')} {s.len(p['flange'])} {s.w('across')} and "
        f"{s.len(p['flange_thickness'])} {s.w('thick')} is at each end, its outer face "
        f"{s.w('flush with')} the {s.w('pipe')}'s end"
    )


def _pipe_holes_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"each {s.w('flange')} has {s.count(int(p['bolts']))} {s.w('bolt holes')} "
        f"{s.len(p['hole'])} {s.w('across')} right through it, their centres on a "
        f"{s.w('bolt circle')} {s.len(p['bolt_circle'])} {s.w('across')}, "
        f"{s.w('evenly spaced')} round the Z axis, the first on the +X axis"
    )


def _pipe_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('model')} a {s.w('flanged pipe')} standing upright {s.w('on the floor')} "
            f"(z = 0), {s.w('on the Z axis')}, {s.len(p['length'])} {s.w('tall')} {s.w('overall')}",
            f"the {s.w('pipe')} is {s.len(p['pipe'])} {s.w('across')} "
            f"{s.w('outside')}, its {s.w('pipe wall')} {s.len(p['wall'])} {s.w('thick')}",
            _pipe_flange_text(s, p),
            _pipe_holes_text(s, p),
            f"the {s.w('bore')} of the {s.w('pipe')} runs right through both {s.w('flanges')}, "
            f"so that the part is open from end to end",
        ]

    return text


def _pipe(rng: np.random.Generator) -> Drawn:
    p = _pipe_draw(rng)
    return Drawn(_pipe_text(p), [], _pipe_calls(p), p, 3)


def _pipe_edit(rng: np.random.Generator) -> Drawn:
    before = _pipe_draw(rng)
    after = dict(before)
    start = _pipe_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # other bolt holes: 4 -> 6, 6 -> 8, 8 -> 6
        n = int(before["bolts"])
        after["bolts"] = {4: 6, 6: 8, 8: 6}[n]

        def text(s: Phrases) -> list[str]:
            return [
                f"give each {s.w('flange')} {s.count(int(after['bolts']))} {s.w('bolt holes')} "
                f"{s.w('instead of')} {s.count(n)}, the same size and on the same "
                f"{s.w('bolt circle')}, still {s.w('evenly spaced')} with the first on the "
                f"+X axis"
            ]

    elif change == 1:  # thicker flanges, the outer faces where they are
        after["flange_thickness"] = snap(
            before["flange_thickness"] + rng.choice([0.01, 0.015, 0.02]), 0.005
        )

        def text(s: Phrases) -> list[str]:
            return [
                f"make both {s.w('flanges')} {s.len(after['flange_thickness'])} {s.w('thick')}, "
                f"their outer faces still {s.w('flush with')} the {s.w('pipe')}'s ends and "
                f"their {s.w('bolt holes')} still right through them"
            ]

    else:  # a longer pipe
        after["length"] = snap(before["length"] + rng.choice([0.1, 0.15, 0.2]))

        def text(s: Phrases) -> list[str]:
            return [
                f"{s.w('lengthen')} the {s.w('flanged pipe')} by "
                f"{s.len(after['length'] - before['length'])}, to {s.len(after['length'])} "
                f"{s.w('tall')} {s.w('overall')}, still {s.w('on the floor')}; "
                f"the {s.w('flanges')} stay at its ends"
            ]

    return Drawn(text, start, rebuilt(start, _pipe_calls(after)), after, 3)


# -- the words and families ----------------------------------------------------------------------

WORDS = {
    **COMMON_WORDS,
    "spoked wheel": ("spoked wheel", "wheel with spokes", "spoke-wheel assembly"),
    "axle": ("axle", "axle line", "rotation axis"),
    "rim": ("rim", "wheel rim", "outer hoop"),
    "ring": ("ring", "closed ring", "torus-shaped loop"),
    "round in section": ("round in section", "of circular section", "with a circular profile"),
    "hub": ("hub", "wheel hub", "central boss"),
    "spokes": ("spokes", "wheel spokes", "radial rods"),
    "long": ("long", "in length", "from face to face"),
    "evenly spaced": ("evenly spaced", "at equal angles", "at a constant angular pitch"),
    "straight up": ("straight up", "vertically upward", "towards +Z"),
    "on the floor": ("on the floor", "on the ground plane", "upon the ground"),
    "instead of": ("instead of", "in place of", "rather than"),
    "thicker": ("thicker", "fatter", "heavier in section"),
    "lengthen": ("lengthen", "extend", "stretch"),
    "flanged pipe": ("flanged pipe", "pipe spool", "flanged pipe section"),
    "pipe": ("pipe", "tube", "pipe barrel"),
    "pipe wall": ("wall", "pipe wall", "shell"),
    "outside": ("outside", "on the outside", "externally"),
    "flange": ("flange", "end flange", "collar plate"),
    "flanges": ("flanges", "end flanges", "collar plates"),
    "bolt holes": ("bolt holes", "through holes", "fastener holes"),
    "bolt circle": ("bolt circle", "pitch circle", "fastener circle"),
    "bore": ("bore", "inner bore", "internal passage"),
    "on the Z axis": ("centred on the Z axis", "on the Z axis", "coaxial with the vertical"),
}

FAMILY_GROUP = (
    Family(
        "spoked_wheel",
        "modelling",
        _wheel,
        "a spoked wheel: a torus rim, a hub and evenly spaced spokes turned about the axle",
        words=WORDS,
        edit=_wheel_edit,
    ),
    Family(
        "flanged_pipe",
        "modelling",
        _pipe,
        "a flanged pipe: a tube with an end flange each end, bolt holes and bore cut by booleans",
        words=WORDS,
        edit=_pipe_edit,
    ),
)
