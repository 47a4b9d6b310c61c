"""Architecture pieces modelled from nothing: a colonnade, a wall with a doorway (and maybe a
window) and a window frame with mullions, said in any style of the phrase bank, with edit tasks
that start from one piece and ask for a change.

Lengths in metres. A colonnade and a wall stand on the floor (z = 0), centred on the origin,
their length along X and their depth along Y; a window frame stands upright in the XZ plane,
centred on x = 0 and y = 0, its bottom edge at a stated height. Openings are cut with the
``boolean`` tool, by boxes that overshoot the faces they cut through (and the floor).
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.furniture_more import (
    COMMON_WORDS,
    box,
    copy,
    cylinder,
    mm,
    rebuilt,
)
from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

OVERSHOOT = 0.1  # m: how far a cutter reaches past the faces it cuts through

# -- colonnade -----------------------------------------------------------------------------------


def _colonnade_draw(rng: np.random.Generator) -> dict[str, float]:
    column = snap(rng.uniform(0.3, 0.5))
    plinth = snap(column + rng.uniform(0.1, 0.2))
    return {
        "columns": int(rng.integers(3, 8)),
        "column": column,
        "column_height": snap(rng.uniform(2.4, 3.6), 0.1),
        "plinth": plinth,
        "plinth_height": snap(rng.uniform(0.15, 0.3)),
        "spacing": snap(rng.uniform(max(1.2, plinth + 0.6), 2.2), 0.1),
        "lintel": snap(rng.uniform(0.3, 0.5)),
    }


def _colonnade_xs(p: dict[str, float], count: int | None = None) -> list[float]:
    """The columns' x, the row centred on the origin (``count``: of a row that many long,
    starting where this one does)."""
    n, a = int(p["columns"]), p["spacing"]
    return [(k - (n - 1) / 2) * a for k in range(count or n)]


def _colonnade_columns(p: dict[str, float]) -> list[Call]:
    xs, ph, h = _colonnade_xs(p), p["plinth_height"], p["column_height"]
    calls = cylinder("Column1", p["column"], h, (xs[0], 0, ph + h / 2))
    for k, x in enumerate(xs[1:], 2):
        calls += copy("Column1", f"Column{k}", (x, 0, ph + h / 2))
    return calls


def _colonnade_lintel(p: dict[str, float], count: int | None = None) -> tuple[list, list]:
    """The lintel's size and centre, over a row of ``count`` columns."""
    xs = _colonnade_xs(p, count)
    length = xs[-1] - xs[0] + p["plinth"]
    z = p["plinth_height"] + p["column_height"] + p["lintel"] / 2
    return [length, p["plinth"], p["lintel"]], [(xs[0] + xs[-1]) / 2, 0.0, z]


def _colonnade_calls(p: dict[str, float]) -> list[Call]:
    xs, s, ph = _colonnade_xs(p), p["plinth"], p["plinth_height"]
    calls = box("Plinth1", (s, s, ph), (xs[0], 0, ph / 2))
    for k, x in enumerate(xs[1:], 2):
        calls += copy("Plinth1", f"Plinth{k}", (x, 0, ph / 2))
    size, at = _colonnade_lintel(p)
    return calls + _colonnade_columns(p) + box("Lintel", size, at)


def _colonnade_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        size, _ = _colonnade_lintel(p)
        return [
            f"{s.w('model')} a {s.w('colonnade')} {s.w('standing on the floor')} (z = 0): "
            f"{s.count(int(p['columns']))} {s.w('columns')} in a line along X, {s.w('centred')} "
            f"{s.w('on the origin')}, {s.len(p['spacing'])} {s.w('apart on centres')}",
            f"the {s.w('columns')} are round, {s.len(p['column'])} {s.w('across')} and "
            f"{s.len(p['column_height'])} {s.w('tall')}, and stand on square {s.w('plinths')} "
            f"{s.len(p['plinth'])} {s.w('a side')} and {s.len(p['plinth_height'])} "
            f"{s.w('tall')}, one centred under each {s.w('column')}",
            f"a {s.w('lintel')} {s.dims(*size)} (X, Y, Z) rests on the tops of the "
            f"{s.w('columns')}, centred over the row, its ends {s.w('flush with')} the outer "
            f"sides of the end {s.w('plinths')}",
        ]

    return text


def _colonnade(rng: np.random.Generator) -> Drawn:
    p = _colonnade_draw(rng)
    return Drawn(_colonnade_text(p), [], _colonnade_calls(p), p, 2 if p["columns"] <= 4 else 3)


def _colonnade_edit(rng: np.random.Generator) -> Drawn:
    before = _colonnade_draw(rng)
    after = dict(before)
    start = _colonnade_calls(before)
    n = int(before["columns"])
    change = int(rng.integers(3))
    if change == 0:  # one more column at the +X end; the lintel lengthened over it
        after["columns"] = n + 1
        x = _colonnade_xs(before, n + 1)[-1]
        ph, h = before["plinth_height"], before["column_height"]
        calls = copy("Plinth1", f"Plinth{n + 1}", (x, 0, ph / 2))
        calls += copy("Column1", f"Column{n + 1}", (x, 0, ph + h / 2))
        (sx, sy, sz), (cx, cy, cz) = _colonnade_lintel(before, n + 1)
        calls += [
            ("set_scale", {"name": "Lintel", "x": mm(sx), "y": mm(sy), "z": mm(sz)}),
            ("set_location", {"name": "Lintel", "x": mm(cx), "y": mm(cy), "z": mm(cz)}),
        ]

        def text(s: Phrases) -> list[str]:
            return [
                f"{s.w('add')} one more {s.w('column')}, on its {s.w('plinth')}, at the right "
                f"(+X) end of the row, {s.len(before['spacing'])} beyond the last, and lengthen "
                f"the {s.w('lintel')} over it; the other {s.w('columns')} stay where they are"
            ]

    elif change == 1:  # taller columns: new columns, the lintel raised
        after["column_height"] = snap(before["column_height"] + rng.choice([0.3, 0.4, 0.5]), 0.1)
        calls = [("delete_object", {"name": f"Column{k + 1}"}) for k in range(n)]
        calls += _colonnade_columns(after)
        _, (cx, cy, cz) = _colonnade_lintel(after)
        calls.append(("set_location", {"name": "Lintel", "x": mm(cx), "y": mm(cy), "z": mm(cz)}))

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('columns')} {s.len(after['column_height'])} {s.w('tall')}, "
                f"{s.len(after['column_height'] - before['column_height'])} {s.w('taller')} than "
                f"now, the {s.w('lintel')} still resting on their tops"
            ]

    else:  # wider spacing: every column moves, the lintel grows
        after["spacing"] = snap(before["spacing"] + rng.choice([0.2, 0.3, 0.4]), 0.1)
        calls = rebuilt(start, _colonnade_calls(after))

        def text(s: Phrases) -> list[str]:
            return [
                f"space the {s.w('columns')} {s.len(after['spacing'])} "
                f"{s.w('apart on centres')}, the row still {s.w('centred')} "
                f"{s.w('on the origin')} and the {s.w('lintel')} still reaching from end to end"
            ]

    return Drawn(text, start, calls, after, 2 if after["columns"] <= 4 else 3)


# -- wall with a doorway -------------------------------------------------------------------------


DOOR_WIDER = 0.4  # m: the most an edit widens a doorway (about its middle)
WINDOW_WIDER = 0.4  # m: what an edit widens a window by (about its middle)
CLEAR = 0.4  # m: the least wall between openings, and between an opening and an end


def _wall_draw(rng: np.random.Generator) -> dict[str, float]:
    """A wall with its doorway in one half and, half the time, a window in the other: the
    openings at least :data:`CLEAR` from the ends and from each other, however an edit widens
    them."""
    window = bool(rng.random() < 0.5)
    length = snap(rng.uniform(4.0 if window else 3.0, 5.0), 0.1)
    door = snap(rng.uniform(0.8, 1.1))
    side = float(rng.choice([-1.0, 1.0]))  # the door's half
    widest = door + DOOR_WIDER
    outer = length / 2 - CLEAR - widest / 2  # the door's middle at most this far out
    if window:  # the door nearer its end, leaving room for the window
        room = length - 3 * CLEAR - widest - 0.9 - WINDOW_WIDER
        along = outer - rng.uniform(0.0, max(room, 0.0))
    else:
        along = rng.uniform(0.0, outer)
    p = {
        "length": length,
        "thickness": snap(rng.uniform(0.15, 0.3)),
        "height": snap(rng.uniform(2.6, 3.0), 0.1),
        "door": door,
        "door_height": snap(rng.uniform(2.0, 2.2)),
        "door_x": snap(side * np.floor(along / 0.05) * 0.05),
        "window": 0.0,
        "window_height": 0.0,
        "sill": 0.0,
        "window_x": 0.0,
    }
    if window:
        p.update(_wall_window_draw(rng, p))
    return p


def _wall_window_draw(rng: np.random.Generator, p: dict[str, float]) -> dict[str, float]:
    """A window in the half of the wall away from the door, clear of it; empty where there
    is no room."""
    window = snap(rng.uniform(0.6, 0.9))
    widest = window + WINDOW_WIDER
    side = 1.0 if p["door_x"] >= 0 else -1.0
    edge = side * p["door_x"] - (p["door"] + DOOR_WIDER) / 2  # the door's inner edge, along side
    near = edge - CLEAR - widest / 2  # the window's middle, along side, at most here
    far = -(p["length"] / 2 - CLEAR - widest / 2)  # and at least here
    if near < far:
        return {}
    along = rng.uniform(far, near)
    return {
        "window": window,
        "window_height": snap(rng.uniform(0.6, 1.0)),
        "sill": snap(rng.uniform(0.8, 1.0)),
        "window_x": snap(side * along, 0.05),
    }


def _opening(name: str, width: float, bottom: float, top: float, x: float, t: float) -> list:
    """A cutter for an opening ``width`` wide from ``bottom`` to ``top`` (a door's from the
    floor: the cutter goes below it) at ``x``, through a wall ``t`` thick."""
    low = bottom - OVERSHOOT if bottom == 0 else bottom
    return box(name, (width, t + 2 * OVERSHOOT, top - low), (x, 0, (low + top) / 2))


def _wall_door(p: dict[str, float]) -> list[Call]:
    door = _opening("Doorway", p["door"], 0.0, p["door_height"], p["door_x"], p["thickness"])
    return [*door, ("boolean", {"name": "Wall", "other": "Doorway"})]


def _wall_window(p: dict[str, float]) -> list[Call]:
    top = p["sill"] + p["window_height"]
    cut = _opening("Window", p["window"], p["sill"], top, p["window_x"], p["thickness"])
    return [*cut, ("boolean", {"name": "Wall", "other": "Window"})]


def _wall_calls(p: dict[str, float]) -> list[Call]:
    h = p["height"]
    calls = box("Wall", (p["length"], p["thickness"], h), (0, 0, h / 2)) + _wall_door(p)
    return calls + (_wall_window(p) if p["window"] else [])


def _wall_door_text(s: Phrases, p: dict[str, float]) -> str:
    return (
        f"a {s.w('doorway')} {s.len(p['door'])} {s.w('wide')} and {s.len(p['door_height'])} "
        f"{s.w('tall')} goes through the {s.w('wall')} from the floor up, its middle at x = "
        f"{s.len(p['door_x'])}"
    )


def _wall_window_text(s: Phrases, p: dict[str, float], first: bool = False) -> str:
    return (
        f"{'' if first else 'a '}{s.w('window opening')} {s.len(p['window'])} {s.w('wide')} "
        f"and {s.len(p['window_height'])} {s.w('tall')} "
        f"{'' if first else 'goes '}through the {s.w('wall')}, its {s.w('sill')} "
        f"{s.len(p['sill'])} {s.w('above the floor')} and its middle at x = "
        f"{s.len(p['window_x'])}"
    )


def _wall_taller_door(before: dict[str, float], after: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"make the {s.w('doorway')} {s.len(after['door_height'])} {s.w('tall')}, "
            f"{s.len(after['door_height'] - before['door_height'])} {s.w('taller')} than now, "
            f"its width as before"
        ]

    return text


def _wall_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('model')} a solid {s.w('wall')} {s.w('standing on the floor')} (z = 0), "
            f"{s.w('centred')} {s.w('on the origin')}, "
            f"{s.dims(p['length'], p['thickness'], p['height'])} (X, Y, Z)",
            _wall_door_text(s, p),
        ]
        return said + ([_wall_window_text(s, p)] if p["window"] else [])

    return text


def _wall(rng: np.random.Generator) -> Drawn:
    p = _wall_draw(rng)
    return Drawn(_wall_text(p), [], _wall_calls(p), p, 3 if p["window"] else 2)


def _wall_edit(rng: np.random.Generator) -> Drawn:
    before = _wall_draw(rng)
    after = dict(before)
    start = _wall_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # a wider doorway, about the same middle: one more cut
        after["door"] = snap(before["door"] + rng.choice([0.3, DOOR_WIDER]))
        calls = _wall_door(after)

        def text(s: Phrases) -> list[str]:
            return [
                f"widen the {s.w('doorway')} to {s.len(after['door'])}, its middle still at "
                f"x = {s.len(after['door_x'])} and its height as before"
            ]

    elif change == 1:  # a taller doorway: one more cut
        after["door_height"] = snap(before["door_height"] + rng.choice([0.15, 0.2]))
        calls = _wall_door(after)
        text = _wall_taller_door(before, after)

    elif before["window"]:  # a wider window, about the same middle: one more cut
        after["window"] = snap(before["window"] + WINDOW_WIDER)
        calls = _wall_window(after)

        def text(s: Phrases) -> list[str]:
            return [
                f"widen the {s.w('window opening')} to {s.len(after['window'])}, its middle "
                f"and its {s.w('sill')} where they are"
            ]

    else:  # a window cut, where there is room (else a taller doorway)
        after.update(_wall_window_draw(rng, before))
        if after["window"]:
            calls = _wall_window(after)

            def text(s: Phrases) -> list[str]:
                return [f"cut a {_wall_window_text(s, after, first=True)}"]

        else:
            after["door_height"] = snap(before["door_height"] + 0.15)
            calls = _wall_door(after)
            text = _wall_taller_door(before, after)

    return Drawn(text, start, calls, after, 3 if after["window"] else 2)


# -- window frame --------------------------------------------------------------------------------


def _frame_draw(rng: np.random.Generator) -> dict[str, float]:
    return {
        "width": snap(rng.uniform(0.8, 1.6)),
        "height": snap(rng.uniform(1.0, 1.6)),
        "depth": snap(rng.uniform(0.06, 0.12), 0.01),
        "member": snap(rng.uniform(0.05, 0.08), 0.01),
        "mullion": snap(rng.uniform(0.03, 0.05), 0.01),
        "mullions": int(rng.integers(1, 4)),
        "transom": bool(rng.random() < 0.5),
        "bottom": snap(rng.uniform(0.8, 1.0)),
    }


def _frame_centre_z(p: dict[str, float]) -> float:
    return p["bottom"] + p["height"] / 2


def _frame_mullions(p: dict[str, float]) -> list[Call]:
    """The mullions, dividing the opening into equal panes: the first made, the others
    copied."""
    f, m, n = p["member"], p["mullion"], int(p["mullions"])
    inner = p["width"] - 2 * f
    pane = (inner - n * m) / (n + 1)
    xs = [-inner / 2 + (k + 1) * pane + k * m + m / 2 for k in range(n)]
    z = _frame_centre_z(p)
    calls = box("Mullion1", (m, p["depth"], p["height"] - 2 * f), (xs[0], 0, z))
    for k, x in enumerate(xs[1:], 2):
        calls += copy("Mullion1", f"Mullion{k}", (x, 0, z))
    return calls


def _frame_transom(p: dict[str, float]) -> list[Call]:
    size = (p["width"] - 2 * p["member"], p["depth"], p["mullion"])
    return box("Transom", size, (0, 0, _frame_centre_z(p)))


def _frame_calls(p: dict[str, float]) -> list[Call]:
    w, h, d, f, z = p["width"], p["height"], p["depth"], p["member"], _frame_centre_z(p)
    calls = box("Frame", (w, d, h), (0, 0, z))
    calls += box("Opening", (w - 2 * f, d + 2 * OVERSHOOT, h - 2 * f), (0, 0, z))
    calls.append(("boolean", {"name": "Frame", "other": "Opening"}))
    calls += _frame_mullions(p)
    return calls + (_frame_transom(p) if p["transom"] else [])


def _frame_mullion_text(s: Phrases, p: dict[str, float], now: str = "") -> str:
    n = int(p["mullions"])
    return (
        f"the opening is {now}divided into {s.count(n + 1)} {s.w('panes')} of equal width by "
        f"{s.count(n)} {s.w('mullion' if n == 1 else 'mullions')} {s.len(p['mullion'])} "
        f"{s.w('wide')} and the full depth, running its full height"
    )


def _frame_transom_text(s: Phrases, p: dict[str, float]) -> str:
    which = "mullion" if p["mullions"] == 1 else "mullions"
    return (
        f"a {s.w('transom')} {s.len(p['mullion'])} {s.w('tall')} and the full depth runs across "
        f"the opening at half its height, through the {s.w(which)}"
    )


def _frame_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('model')} a {s.w('window frame')} standing upright, its depth along Y, "
            f"{s.w('centred')} about x = 0 and y = 0 with its bottom edge "
            f"{s.len(p['bottom'])} {s.w('above the floor')}, "
            f"{s.dims(p['width'], p['depth'], p['height'])} {s.w('overall')} (X, Y, Z)",
            f"its four {s.w('frame members')} are {s.len(p['member'])} {s.w('wide')} and the "
            f"full depth, around one rectangular opening",
            _frame_mullion_text(s, p),
        ]
        return said + ([_frame_transom_text(s, p)] if p["transom"] else [])

    return text


def _frame(rng: np.random.Generator) -> Drawn:
    p = _frame_draw(rng)
    return Drawn(_frame_text(p), [], _frame_calls(p), p, 3 if p["transom"] else 2)


def _frame_edit(rng: np.random.Generator) -> Drawn:
    before = _frame_draw(rng)
    after = dict(before)
    start = _frame_calls(before)
    change = int(rng.integers(3))
    if change == 0:  # one more mullion: they all move
        after["mullions"] = before["mullions"] + 1
        calls = [
            ("delete_object", {"name": f"Mullion{k + 1}"}) for k in range(int(before["mullions"]))
        ]
        calls += _frame_mullions(after)

        def text(s: Phrases) -> list[str]:
            return [
                f"{s.w('add')} one more {s.w('mullion')}, so that "
                + _frame_mullion_text(s, after, "now ")
            ]

    elif change == 1:  # the transom added or taken away
        after["transom"] = not before["transom"]
        if after["transom"]:
            calls = _frame_transom(after)

            def text(s: Phrases) -> list[str]:
                return [f"{s.w('add')} a {s.w('transom')}: " + _frame_transom_text(s, after)]

        else:
            calls = [("delete_object", {"name": "Transom"})]

            def text(s: Phrases) -> list[str]:
                which = "mullion" if after["mullions"] == 1 else "mullions"
                return [f"{s.w('remove')} the {s.w('transom')}, leaving the {s.w(which)}"]

    else:  # the whole window raised
        after["bottom"] = snap(before["bottom"] + rng.choice([0.15, 0.2, 0.25]))
        rise = after["bottom"] - before["bottom"]
        calls = []
        for tool, args in start:
            if tool in ("add_primitive", "duplicate_object") and args.get("name") != "Opening":
                name = args["name"] if tool == "add_primitive" else args["new_name"]
                at = {"x": args["x"], "y": args["y"], "z": mm(args["z"] + rise)}
                calls.append(("set_location", {"name": name, **at}))

        def text(s: Phrases) -> list[str]:
            return [
                f"raise the whole {s.w('window frame')} {s.len(rise)}, so that its bottom edge "
                f"is {s.len(after['bottom'])} {s.w('above the floor')}"
            ]

    return Drawn(text, start, calls, after, 3 if after["transom"] else 2)


# -- the words and families ----------------------------------------------------------------------

WORDS = {
    **COMMON_WORDS,
    "colonnade": ("colonnade", "column row", "portico of pillars"),
    "apart on centres": ("apart centre to centre", "apart on centres", "from axis to axis"),
    "plinth": ("plinth", "base block", "footing"),
    "plinths": ("plinths", "base blocks", "footings"),
    "a side": ("a side", "square", "on each edge"),
    "lintel": ("lintel", "beam", "entablature"),
    "doorway": ("doorway", "door opening", "passage"),
    "window opening": ("window opening", "window hole", "glazing aperture"),
    "sill": ("sill", "lower edge", "bottom sill"),
    "window frame": ("window frame", "window casing", "glazing frame"),
    "frame members": ("frame members", "sides", "rails and stiles"),
    "mullion": ("mullion", "upright bar", "vertical glazing bar"),
    "mullions": ("mullions", "upright bars", "vertical glazing bars"),
    "panes": ("panes", "lights", "glazing panels"),
    "transom": ("transom", "crossbar", "horizontal glazing bar"),
}

FAMILY_GROUP = (
    Family(
        "colonnade",
        "modelling",
        _colonnade,
        "a colonnade: a row of round columns on square plinths under a lintel",
        words=WORDS,
        edit=_colonnade_edit,
    ),
    Family(
        "doorway_wall",
        "modelling",
        _wall,
        "a wall with a doorway (and maybe a window) cut by booleans",
        words=WORDS,
        edit=_wall_edit,
    ),
    Family(
        "window_frame",
        "modelling",
        _frame,
        "a window frame with evenly spaced mullions, maybe a transom",
        words=WORDS,
        edit=_frame_edit,
    ),
)
