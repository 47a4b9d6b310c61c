"""More furniture and props modelled from nothing: a chair, a floor lamp and a slatted wooden
crate, said in any style of the phrase bank, with edit tasks that start from one model and ask
for a change. Also the part-building helpers the architecture and mechanical families share.

Lengths in metres. Every model stands on the floor (z = 0), centred on the origin, its width
along X and its depth along Y; a chair faces -Y (its back is at +Y).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

# -- helpers -------------------------------------------------------------------------------------


def mm(value: float) -> float:
    """``value`` (m) on a millimetre grid, as every call writes it."""
    return snap(value, 0.001)


def box(name: str, size: Sequence[float], at: Sequence[float]) -> list[Call]:
    """A box of ``size`` (m, X Y Z) centred at ``at``: a unit cube, scaled."""
    x, y, z = (mm(v) for v in at)
    sx, sy, sz = (mm(v) for v in size)
    return [
        ("add_primitive", {"kind": "cube", "name": name, "size": 1.0, "x": x, "y": y, "z": z}),
        ("set_scale", {"name": name, "x": sx, "y": sy, "z": sz}),
    ]


def cylinder(
    name: str,
    diameter: float,
    height: float,
    at: Sequence[float],
    kind: str = "cylinder",
    segments: int = 32,
) -> list[Call]:
    """An upright cylinder (or cone, base down) of ``diameter`` and ``height`` (m) centred at
    ``at``; ``segments`` around (32: the tool's default, left out)."""
    x, y, z = (mm(v) for v in at)
    args = {"kind": kind, "name": name, "size": mm(diameter), "depth": mm(height)}
    if segments != 32:
        args["segments"] = segments
    return [("add_primitive", {**args, "x": x, "y": y, "z": z})]


def copy(name: str, new_name: str, at: Sequence[float]) -> list[Call]:
    """A copy of ``name`` (its size and turn) centred at ``at``."""
    x, y, z = (mm(v) for v in at)
    return [("duplicate_object", {"name": name, "new_name": new_name, "x": x, "y": y, "z": z})]


def alive(calls: Sequence[Call]) -> list[str]:
    """The objects ``calls`` leave in the scene, in the order they were made (cutters used by a
    boolean and parts joined into another are gone)."""
    names: list[str] = []
    for tool, args in calls:
        if tool in ("add_primitive", "add_light"):
            names.append(args["name"])
        elif tool == "duplicate_object":
            names.append(args["new_name"])
        elif tool in ("boolean", "join_objects"):
            names.remove(args["other"])
        elif tool == "delete_object":
            names.remove(args["name"])
        elif tool == "rename_object":
            names[names.index(args["name"])] = args["new_name"]
    return names


def rebuilt(start: Sequence[Call], calls: Sequence[Call]) -> list[Call]:
    """An edit's reference the plain way: delete every object ``start`` left (copies included,
    cutters already gone), then run ``calls`` (the model after the edit)."""
    return [("delete_object", {"name": name}) for name in alive(start)] + list(calls)


# -- chair ---------------------------------------------------------------------------------------

STRETCHER = 0.02  # m: a chair's side stretchers are this square


def _chair_draw(rng: np.random.Generator) -> dict[str, float]:
    stretchers = bool(rng.random() < 0.5)
    return {
        "width": snap(rng.uniform(0.4, 0.55), 0.01),
        "depth": snap(rng.uniform(0.4, 0.5), 0.01),
        "seat_height": snap(rng.uniform(0.42, 0.5), 0.01),
        "seat": snap(rng.uniform(0.03, 0.05), 0.01),
        "leg": snap(rng.uniform(0.03, 0.05), 0.01),
        "back_height": snap(rng.uniform(0.35, 0.55)),
        "back": snap(rng.uniform(0.02, 0.04), 0.01),
        "stretchers": stretchers,
        "stretcher_height": snap(rng.uniform(0.12, 0.2), 0.01) if stretchers else 0.0,
    }


def _chair_back(p: dict[str, float]) -> tuple[tuple[float, float, float], tuple[float, ...]]:
    w, d, h, b, rise = p["width"], p["depth"], p["seat_height"], p["back"], p["back_height"]
    return (w, b, rise), (0.0, d / 2 - b / 2, h + rise / 2)


def _chair_stretchers(p: dict[str, float]) -> list[Call]:
    w, d, leg, z = p["width"], p["depth"], p["leg"], p["stretcher_height"]
    x = w / 2 - leg / 2
    calls = box("StretcherLeft", (STRETCHER, d - 2 * leg, STRETCHER), (-x, 0, z))
    return calls + copy("StretcherLeft", "StretcherRight", (x, 0, z))


def _chair_calls(p: dict[str, float]) -> list[Call]:
    w, d, h, t, leg = p["width"], p["depth"], p["seat_height"], p["seat"], p["leg"]
    calls = box("Seat", (w, d, t), (0, 0, h - t / 2))
    x, y, z = w / 2 - leg / 2, d / 2 - leg / 2, (h - t) / 2
    calls += box("Leg1", (leg, leg, h - t), (x, y, z))
    for k, (sx, sy) in enumerate(((-1, 1), (-1, -1), (1, -1))):
        calls += copy("Leg1", f"Leg{k + 2}", (sx * x, sy * y, z))
    size, at = _chair_back(p)
    calls += box("Back", size, at)
    return calls + (_chair_stretchers(p) if p["stretchers"] else [])


def _chair_stretcher_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"{s.w('on either side')} a {s.w('stretcher')} {s.len(STRETCHER)} "
        f"{s.w('square in section')} joins the front and rear {s.w('legs')}, centred on their "
        f"width, its centre {s.len(p['stretcher_height'])} {s.w('above the floor')}"
    )


def _chair_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('model')} a {s.w('chair')} {s.w('standing on the floor')} (z = 0), "
            f"{s.w('centred')} {s.w('on the origin')} and {s.w('facing')} -Y; its {s.w('seat')} "
            f"is {s.dims(p['width'], p['depth'], p['seat'])} (X, Y, Z), its top face "
            f"{s.len(p['seat_height'])} {s.w('above the floor')}",
            f"four {s.w('legs')} {s.len(p['leg'])} {s.w('square in section')} run from the "
            f"floor up to the {s.w('seat')}, their outer faces {s.w('flush with')} its edges at "
            f"its corners",
            f"a {s.w('back')} {s.len(p['back'])} {s.w('thick')} and as wide as the "
            f"{s.w('seat')} rises {s.len(p['back_height'])} from the {s.w('seat')}'s top face, "
            f"its rear face {s.w('flush with')} the {s.w('seat')}'s rear edge",
        ]
        return said + ([_chair_stretcher_text(s, p)] if p["stretchers"] else [])

    return text


def _chair(rng: np.random.Generator) -> Drawn:
    p = _chair_draw(rng)
    return Drawn(_chair_text(p), [], _chair_calls(p), p, 3 if p["stretchers"] else 2)


def _chair_edit(rng: np.random.Generator) -> Drawn:
    before = _chair_draw(rng)
    after = dict(before)
    start = _chair_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # a taller back: the back moved and stretched, nothing else
        after["back_height"] = snap(before["back_height"] + rng.choice([0.1, 0.15, 0.2]))
        (sx, sy, sz), (x, y, z) = _chair_back(after)
        calls: list[Call] = [
            ("set_location", {"name": "Back", "x": mm(x), "y": mm(y), "z": mm(z)}),
            ("set_scale", {"name": "Back", "x": mm(sx), "y": mm(sy), "z": mm(sz)}),
        ]

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('back')} {s.len(after['back_height'] - before['back_height'])} "
                f"{s.w('taller')}, so that it rises {s.len(after['back_height'])} from the "
                f"{s.w('seat')}'s top face; the rest stays as it is"
            ]

    elif change == 1:  # a higher seat: longer legs, the seat and back raised
        after["seat_height"] = snap(before["seat_height"] + rng.choice([0.03, 0.04, 0.06]), 0.01)
        calls = rebuilt(start, _chair_calls(after))

        def text(s: Phrases) -> list[str]:
            return [
                f"raise the {s.w('seat')} so that its top face is {s.len(after['seat_height'])} "
                f"{s.w('above the floor')}, lengthening the {s.w('legs')} to match; the "
                f"{s.w('back')} goes up with the {s.w('seat')}"
            ]

    elif before["stretchers"]:  # no stretchers
        after["stretchers"], after["stretcher_height"] = False, 0.0
        calls = [("delete_object", {"name": n}) for n in ("StretcherLeft", "StretcherRight")]

        def text(s: Phrases) -> list[str]:
            return [f"{s.w('remove')} both {s.w('stretchers')} from the {s.w('chair')}"]

    else:  # stretchers added
        after["stretchers"] = True
        after["stretcher_height"] = snap(rng.uniform(0.12, 0.2), 0.01)
        calls = _chair_stretchers(after)

        def text(s: Phrases) -> list[str]:
            return [
                f"{s.w('add')} {s.w('stretchers')} to the {s.w('chair')}: "
                + _chair_stretcher_text(s, after)
            ]

    return Drawn(text, start, calls, after, 3 if change == 1 else 2)


# -- floor lamp ----------------------------------------------------------------------------------


def _lamp_draw(rng: np.random.Generator) -> dict[str, float]:
    # No finial: a ball a few centimetres across on a lamp is under what the geometry verifier
    # sees (its IoU and surface terms move by a percent or two), so it could not be asked for.
    return {
        "base": snap(rng.uniform(0.25, 0.4), 0.01),
        "base_thickness": snap(rng.uniform(0.02, 0.04), 0.01),
        "pole": snap(rng.uniform(0.02, 0.04), 0.005),
        "pole_top": snap(rng.uniform(1.2, 1.6)),
        "shade": snap(rng.uniform(0.3, 0.5), 0.01),
        "shade_height": snap(rng.uniform(0.2, 0.35), 0.01),
    }


def _lamp_pole(p: dict[str, float]) -> list[Call]:
    t, top = p["base_thickness"], p["pole_top"]
    return cylinder("Pole", p["pole"], top - t, (0, 0, (t + top) / 2))


def _lamp_shade(p: dict[str, float]) -> list[Call]:
    h = p["shade_height"]
    return cylinder("Shade", p["shade"], h, (0, 0, p["pole_top"] + h / 2), kind="cone")


def _lamp_calls(p: dict[str, float]) -> list[Call]:
    t = p["base_thickness"]
    return cylinder("Base", p["base"], t, (0, 0, t / 2)) + _lamp_pole(p) + _lamp_shade(p)


def _lamp_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('model')} a {s.w('lamp')} {s.w('standing on the floor')} (z = 0), every part "
            f"of it round and {s.w('on the Z axis')}",
            f"its {s.w('base')} is a disc {s.len(p['base'])} {s.w('across')} and "
            f"{s.len(p['base_thickness'])} {s.w('thick')} lying on the floor",
            f"a {s.w('pole')} {s.len(p['pole'])} {s.w('across')} rises from the top of the "
            f"{s.w('base')} to {s.len(p['pole_top'])} {s.w('above the floor')}",
            f"a {s.w('shade')} sits on the {s.w('pole')}'s top: a solid cone, point up, "
            f"{s.len(p['shade'])} {s.w('across')} at its base and {s.len(p['shade_height'])} "
            f"{s.w('tall')}",
        ]

    return text


def _lamp(rng: np.random.Generator) -> Drawn:
    p = _lamp_draw(rng)
    return Drawn(_lamp_text(p), [], _lamp_calls(p), p, 2)


def _lamp_edit(rng: np.random.Generator) -> Drawn:
    before = _lamp_draw(rng)
    after = dict(before)
    start = _lamp_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # a taller pole: a new pole, the shade moved up
        after["pole_top"] = snap(before["pole_top"] + rng.choice([0.1, 0.15, 0.2, 0.3]))
        calls: list[Call] = [("delete_object", {"name": "Pole"}), *_lamp_pole(after)]
        z = mm(after["pole_top"] + after["shade_height"] / 2)
        calls.append(("set_location", {"name": "Shade", "x": 0.0, "y": 0.0, "z": z}))

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('pole')} reach {s.len(after['pole_top'])} "
                f"{s.w('above the floor')}, {s.len(after['pole_top'] - before['pole_top'])} "
                f"{s.w('higher')} than now; the {s.w('shade')} still sits on its top"
            ]

    elif change == 1:  # a wider shade
        after["shade"] = snap(before["shade"] + rng.choice([0.06, 0.08, 0.1, 0.12]), 0.01)
        calls = [("delete_object", {"name": "Shade"}), *_lamp_shade(after)]

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('shade')} {s.len(after['shade'])} {s.w('across')} at its base, "
                f"its height and place as before"
            ]

    else:  # a wider, thicker base
        after["base"] = snap(before["base"] + rng.choice([0.08, 0.1, 0.12]), 0.01)
        after["base_thickness"] = snap(before["base_thickness"] + 0.01, 0.01)
        t = after["base_thickness"]
        calls = [
            ("delete_object", {"name": "Base"}),
            *cylinder("Base", after["base"], t, (0, 0, t / 2)),
        ]
        calls += [("delete_object", {"name": "Pole"}), *_lamp_pole(after)]

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('base')} {s.len(after['base'])} {s.w('across')} and "
                f"{s.len(after['base_thickness'])} {s.w('thick')}, still lying on the floor; the "
                f"{s.w('pole')} starts on its top and ends where it did"
            ]

    return Drawn(text, start, calls, after, 2)


# -- wooden crate --------------------------------------------------------------------------------


def _crate_draw(rng: np.random.Generator) -> dict[str, float]:
    return {
        "width": snap(rng.uniform(0.4, 0.8)),
        "depth": snap(rng.uniform(0.3, 0.5)),
        "board": snap(rng.uniform(0.015, 0.025), 0.005),
        "boards": int(rng.integers(3, 6)),
        "board_height": snap(rng.uniform(0.07, 0.12), 0.01),
        "gap": snap(rng.uniform(0.02, 0.04), 0.005),
    }


def _crate_level(p: dict[str, float], k: int) -> float:
    """The centre height of the ``k``-th board (from 0) of each wall."""
    return p["board"] + p["board_height"] / 2 + k * (p["board_height"] + p["gap"])


def _crate_row(p: dict[str, float], k: int) -> list[Call]:
    """The ``k``-th board (from 0) of every wall: the front and left ones made, the back and
    right ones copied from them."""
    w, d, t, z = p["width"], p["depth"], p["board"], _crate_level(p, k)
    n = k + 1
    calls = box(f"Front{n}", (w, t, p["board_height"]), (0, -(d - t) / 2, z))
    calls += copy(f"Front{n}", f"Back{n}", (0, (d - t) / 2, z))
    calls += box(f"Left{n}", (t, d - 2 * t, p["board_height"]), (-(w - t) / 2, 0, z))
    return calls + copy(f"Left{n}", f"Right{n}", ((w - t) / 2, 0, z))


def _crate_walls(p: dict[str, float]) -> list[Call]:
    """The four walls joined into one object, ``Walls``: the front wall's boards made and joined,
    the left wall's too, each wall copied to the opposite side, then all four joined."""
    w, d, t, h, n = p["width"], p["depth"], p["board"], p["board_height"], int(p["boards"])
    z = _crate_level(p, 0)
    calls: list[Call] = []
    for wall, opposite, size, (x, y) in (
        ("Front", "Back", (w, t, h), (0, -(d - t) / 2)),
        ("Left", "Right", (t, d - 2 * t, h), (-(w - t) / 2, 0)),
    ):
        calls += box(f"{wall}1", size, (x, y, z))
        calls += [
            c
            for k in range(1, n)
            for c in copy(f"{wall}1", f"{wall}{k + 1}", (x, y, _crate_level(p, k)))
        ]
        calls += [
            ("join_objects", {"name": f"{wall}1", "other": f"{wall}{k + 1}"}) for k in range(1, n)
        ]
        calls += copy(f"{wall}1", f"{opposite}1", (-x, -y, z))
    calls += [
        ("join_objects", {"name": "Front1", "other": o}) for o in ("Back1", "Left1", "Right1")
    ]
    return [*calls, ("rename_object", {"name": "Front1", "new_name": "Walls"})]


def _crate_height(p: dict[str, float]) -> float:
    n = int(p["boards"])
    return p["board"] + n * p["board_height"] + (n - 1) * p["gap"]


def _crate_calls(p: dict[str, float]) -> list[Call]:
    """The bottom, and the four walls as one object."""
    w, d, t = p["width"], p["depth"], p["board"]
    return box("Bottom", (w, d, t), (0, 0, t / 2)) + _crate_walls(p)


def _crate_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('model')} a {s.w('crate')} {s.w('standing on the floor')} (z = 0), "
            f"{s.w('centred')} {s.w('on the origin')} and open at the top, "
            f"{s.dims(p['width'], p['depth'], _crate_height(p))} {s.w('overall')} (X, Y, Z)",
            f"its {s.w('bottom')} is one {s.w('board')} {s.len(p['board'])} {s.w('thick')} "
            f"lying on the floor, covering the {s.w('crate')}'s whole footprint",
            f"{s.w('each wall')} is {s.count(int(p['boards']))} horizontal {s.w('boards')}, "
            f"{s.len(p['board'])} {s.w('thick')} and {s.len(p['board_height'])} {s.w('tall')}, "
            f"the lowest resting on the {s.w('bottom')}, with gaps of {s.len(p['gap'])} between "
            f"them",
            f"the front and back {s.w('boards')} run the full width, the left and right ones fit "
            f"between them, and all are {s.w('flush with')} the {s.w('bottom')}'s edges",
        ]

    return text


def _crate(rng: np.random.Generator) -> Drawn:
    p = _crate_draw(rng)
    return Drawn(_crate_text(p), [], _crate_calls(p), p, 2 if p["boards"] <= 3 else 3)


def _crate_edit(rng: np.random.Generator) -> Drawn:
    before = _crate_draw(rng)
    after = dict(before)
    start = _crate_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # a board more on every wall
        after["boards"] = before["boards"] + 1
        k = int(before["boards"])
        calls = _crate_row(after, k)
        calls += [
            ("join_objects", {"name": "Walls", "other": f"{wall}{k + 1}"})
            for wall in ("Front", "Back", "Left", "Right")
        ]

        def text(s: Phrases) -> list[str]:
            return [
                f"{s.w('add')} one more {s.w('board')} on top of {s.w('each wall')}, with the "
                f"same gap, so that the {s.w('crate')} is {s.len(_crate_height(after))} "
                f"{s.w('tall')}"
            ]

    elif change == 1:  # wider gaps
        after["gap"] = snap(before["gap"] + rng.choice([0.015, 0.02, 0.025]), 0.005)
        calls = rebuilt(start, _crate_calls(after))

        def text(s: Phrases) -> list[str]:
            return [
                f"widen the gaps between the {s.w('boards')} to {s.len(after['gap'])}, the lowest "
                f"{s.w('boards')} still resting on the {s.w('bottom')}, so that the "
                f"{s.w('crate')} is {s.len(_crate_height(after))} {s.w('tall')}"
            ]

    else:  # wider
        after["width"] = snap(before["width"] + rng.choice([0.1, 0.15, 0.2]))
        calls = rebuilt(start, _crate_calls(after))

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('crate')} {s.len(after['width'])} {s.w('wide')}, "
                f"{s.w('centred')} {s.w('on the origin')} as before, its front, back and "
                f"{s.w('bottom')} {s.w('boards')} longer to match"
            ]

    tier = 2 if after["boards"] <= 3 else 3
    return Drawn(text, start, calls, after, tier)


# -- the words and families ----------------------------------------------------------------------

#: Words the architecture and mechanical families use too.
COMMON_WORDS = {
    "standing on the floor": ("standing on the floor", "resting on the floor", "set on the ground"),
    "flush with": ("flush with", "level with", "aligned to"),
    "across": ("across", "in diameter", "from edge to edge"),
    "overall": ("overall", "in all", "outside to outside"),
    "higher": ("higher", "taller", "further up"),
    "taller": ("taller", "higher", "greater in height"),
    "add": ("add", "put in", "fit"),
    "remove": ("remove", "delete", "take away"),
}

WORDS = {
    **COMMON_WORDS,
    "facing": ("facing", "turned to face", "looking towards"),
    "square in section": ("square in section", "square", "of square cross-section"),
    "on either side": ("on either side", "on each side", "at left and at right"),
    "stretcher": ("stretcher", "side rail", "tie bar"),
    "stretchers": ("stretchers", "side rails", "tie bars"),
    "on the Z axis": ("centred on the Z axis", "on the Z axis", "coaxial with the vertical"),
    "base": ("base", "foot", "weighted plinth"),
    "pole": ("pole", "stem", "upright rod"),
    "shade": ("shade", "lampshade", "diffuser cone"),
    "crate": ("crate", "wooden crate", "slatted box"),
    "bottom": ("bottom", "floor panel", "base board"),
    "each wall": ("each wall", "every wall", "each of the four sides"),
}

FAMILY_GROUP = (
    Family(
        "chair",
        "modelling",
        _chair,
        "a chair: a seat on four square legs, a back, maybe side stretchers",
        words=WORDS,
        edit=_chair_edit,
    ),
    Family(
        "floor_lamp",
        "modelling",
        _lamp,
        "a floor lamp: a base disc, a pole and a cone shade, maybe a ball on top",
        words=WORDS,
        edit=_lamp_edit,
    ),
    Family(
        "wooden_crate",
        "modelling",
        _crate,
        "a slatted wooden crate: a bottom and four walls of boards with gaps",
        words=WORDS,
        edit=_crate_edit,
    ),
)
