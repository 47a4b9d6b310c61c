"""Furniture modelled from nothing, said in any style of the phrase bank, with edit tasks that
start from one model and ask for a change.

Lengths in metres. Every model stands on the floor (z = 0), centred on the origin, its width
along X and its depth along Y.
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, rebuilt, snap
from toolgym.envs.blender.families.phrases import Phrases


def _box(name: str, size: tuple[float, float, float], at: tuple[float, float, float]) -> list[Call]:
    """A box of ``size`` (m) centred at ``at``: a unit cube, scaled."""
    x, y, z = (snap(v, 0.001) for v in at)
    sx, sy, sz = (snap(v, 0.001) for v in size)
    return [
        ("add_primitive", {"kind": "cube", "name": name, "size": 1.0, "x": x, "y": y, "z": z}),
        ("set_scale", {"name": name, "x": sx, "y": sy, "z": sz}),
    ]


# -- bookshelf -----------------------------------------------------------------------------------


def _bookshelf_draw(rng: np.random.Generator) -> dict[str, float]:
    return {
        "width": snap(rng.uniform(0.6, 1.2)),
        "depth": snap(rng.uniform(0.25, 0.4)),
        "height": snap(rng.uniform(1.0, 2.0), 0.1),
        "board": snap(rng.uniform(0.02, 0.04), 0.01),
        "shelves": int(rng.integers(3, 7)),
    }


def _bookshelf_calls(p: dict[str, float]) -> list[Call]:
    w, d, h, t, n = p["width"], p["depth"], p["height"], p["board"], int(p["shelves"])
    calls = _box("SideLeft", (t, d, h), (-(w - t) / 2, 0, h / 2))
    calls += _box("SideRight", (t, d, h), ((w - t) / 2, 0, h / 2))
    for k in range(n):  # the lowest on the floor, the highest at the top, evenly spaced
        calls += _box(f"Board{k + 1}", (w - 2 * t, d, t), (0, 0, t / 2 + k * (h - t) / (n - 1)))
    return calls


def _bookshelf_text(p: dict[str, float]):
    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('model')} a {s.w('bookshelf')} {s.w('standing on the floor')} (z = 0), "
            f"{s.w('centred')} {s.w('on the origin')}, "
            f"{s.dims(p['width'], p['depth'], p['height'])} {s.w('overall')} (X, Y, Z)",
            f"two {s.w('side panels')} {s.len(p['board'])} {s.w('thick')} {s.w('run')} its full "
            f"height at its left and right ends",
            f"between them, {s.count(int(p['shelves']))} {s.w('boards')} {s.len(p['board'])} "
            f"{s.w('thick')}, the lowest {s.w('on the floor')} and the highest at the top, "
            f"{s.w('evenly spaced')}, {s.w('each')} the full depth",
        ]

    return text


def _bookshelf(rng: np.random.Generator) -> Drawn:
    p = _bookshelf_draw(rng)
    tier = 2 if p["shelves"] <= 4 else 3
    return Drawn(_bookshelf_text(p), [], _bookshelf_calls(p), p, tier)


def _bookshelf_edit(rng: np.random.Generator) -> Drawn:
    before = _bookshelf_draw(rng)
    after = dict(before)
    change = int(rng.integers(3))
    if change == 0:  # one shelf more or fewer
        after["shelves"] += 1 if before["shelves"] < 6 else -1
        more = after["shelves"] > before["shelves"]

        def text(s: Phrases) -> list[str]:
            verb = s.w("add") if more else s.w("remove")
            return [
                f"{verb} one {s.w('board')}, so that it has {s.count(int(after['shelves']))} "
                f"{s.w('boards')}, still {s.w('evenly spaced')} from the floor to the top"
            ]

    elif change == 1:  # taller
        after["height"] = snap(before["height"] + rng.choice([0.2, 0.3, 0.4]), 0.1)

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('bookshelf')} {s.len(after['height'] - before['height'])} "
                f"{s.w('taller')} ({s.len(after['height'])} {s.w('tall')}), its {s.w('boards')} "
                f"still {s.w('evenly spaced')} from the floor to the top"
            ]

    else:  # wider
        after["width"] = snap(before["width"] + rng.choice([0.1, 0.2, 0.3]))

        def text(s: Phrases) -> list[str]:
            return [
                f"make the {s.w('bookshelf')} {s.len(after['width'])} {s.w('wide')}, "
                f"{s.w('centred')} {s.w('on the origin')} as before"
            ]

    start = _bookshelf_calls(before)
    return Drawn(text, start, rebuilt(start, _bookshelf_calls(after)), after, 2)


WORDS = {
    "bookshelf": ("bookshelf", "bookcase", "shelving unit for books"),
    "standing on the floor": ("standing on the floor", "resting on the floor", "set on the ground"),
    "overall": ("overall", "in all", "outside to outside"),
    "side panels": ("side panels", "side boards", "uprights"),
    "run": ("run", "span", "rise over"),
    "evenly spaced": ("evenly spaced", "at equal spacing", "at a constant pitch"),
    "on the floor": ("on the floor", "at floor level", "sitting on the ground"),
    "add": ("add", "put in", "insert"),
    "remove": ("remove", "take out", "drop"),
    "taller": ("taller", "higher", "greater in height"),
}

FAMILY_GROUP = (
    Family(
        "bookshelf",
        "modelling",
        _bookshelf,
        "a bookshelf: two side panels and evenly spaced boards",
        words=WORDS,
        edit=_bookshelf_edit,
    ),
)
