"""Fixed rules for the primitives' image-only tasks: what a person writes in an afternoon to read
a box, a cylinder or a sphere off the target's views, with nothing learnt.

A learned image-only figure counts only beside these (``bench/learn_cadquery.py``), on the same
inputs the policy gets:

- :class:`MeasureRule` reads the target's depth tile (``CadQuery-v0(depth=True)``,
  ``target_depth``): each orthographic view's largest reach towards and away from its camera is
  the part's exact extent along that view's axis, and half their difference its centre.
- :class:`SilhouetteRule` reads the target's RGB tile alone: the part's pixels (its blue tint;
  the background is white, the grid grey), each view's spanned columns and rows times the
  frame's pixel pitch. A pixel is ``2 * half_width / view_size`` mm (3.6 mm for the primitives
  at 64 px), so its sizes are that coarse.
- :class:`LookingRule` reads the same RGB tile, then asks for closer views with the env's
  ``look`` call (``toolgym.envs.episode.look``), a pixel 16 times finer at each face of the
  part's box, and only then calls the tool: at most eight steps instead of one. What it keeps
  and how it reads an edge in a closer view (:class:`BoxLooker`) serve
  ``toolgym.envs.cadquery.hole_rules.PlateHoleRule`` too, for plates with holes.

All tell the tools apart by how full each silhouette's box is: a box seen square on fills it,
a disc (a cylinder from above, a sphere from anywhere) fills pi / 4 of it; all snap sizes and
places to the 0.5 mm grid every training part is drawn on. Views are the env's four (iso,
front, right, top), tiled two by two; lengths are in mm.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from toolgym.envs.episode.look import LOOK_CALL, MAX_ZOOM
from toolgym.envs.episode.loop import STOP_CALL
from toolgym.renderers.mesh_views import Framing

# A silhouette filling its box (to pixel counting) is an axis-aligned rectangle; a disc in
# pixels leaves its box's corners empty (pi / 4 when large, under 0.95 from 3 pixels across).
FULL = 0.99
TINT = 8  # a part pixel's blue exceeds its red by more than this (the grid's greys: 0)
Look = tuple[str, tuple[float, float, float], float]  # (what it is for, centre mm, zoom)


def _views(tile: np.ndarray) -> list[np.ndarray]:
    """The four views of a two-by-two tile, in the env's order: iso, front, right, top."""
    rows, columns = tile.shape[0] // 2, tile.shape[1] // 2
    return [
        tile[r * rows : (r + 1) * rows, c * columns : (c + 1) * columns]
        for r in (0, 1)
        for c in (0, 1)
    ]


def part_masks(tile: np.ndarray) -> list[np.ndarray]:
    """Per view of a target's RGB tile (iso, front, right, top), the part's pixels: its tint."""
    rgb = np.asarray(tile, dtype=np.int32)
    return [v[..., 2] - v[..., 0] > TINT for v in _views(rgb)]


def _fill(mask: np.ndarray) -> float:
    """The share of its rows-by-columns box a silhouette covers (0 without one)."""
    rows, columns = mask.any(axis=1).sum(), mask.any(axis=0).sum()
    return float(mask.sum() / max(rows * columns, 1))


def snap(value: float) -> float:
    """To the 0.5 mm grid every training part is drawn on."""
    return round(value * 2) / 2


def _primitive_call(kind: str, size: dict[str, float], at: tuple[float, float, float]) -> str:
    """The tool call of a box, an upright cylinder or a sphere of ``size`` centred ``at``, each
    length snapped to the grid first (:func:`snap`; a round part's diameter is the mean of its
    snapped extents)."""
    size = {k: snap(v) for k, v in size.items()}
    at = tuple(snap(c) for c in at)
    place = {axis: round(value, 2) for axis, value in zip("xyz", at, strict=True)}
    if kind == "box":
        arguments = {k: round(size[k], 2) for k in ("length", "width", "height")}
        return json.dumps({"name": "add_box", "arguments": arguments | place})
    if kind == "cylinder":
        diameter = round((size["length"] + size["width"]) / 2, 2)
        arguments = {"diameter": diameter, "height": round(size["height"], 2)}
        return json.dumps({"name": "add_cylinder", "arguments": arguments | place})
    diameter = round((size["length"] + size["width"] + size["height"]) / 3, 2)
    return json.dumps({"name": "add_sphere", "arguments": {"diameter": diameter} | place})


def _kind(top_fill: float, front_fill: float) -> str:
    if top_fill > FULL:
        return "box"
    return "cylinder" if front_fill > FULL else "sphere"


class MeasureRule:
    """The depth measure rule: from ``target_depth`` ``(2S, 2S, 2)`` (mm; per pixel the reach
    towards and away from the view's camera, ``-inf`` off the part), the front, right and top
    views' extents give the width, length and height, their centres ``y``, ``x`` and ``z``.

    A pixel's ray passes beside a round part's apex, so its deepest chord is a little short of
    the diameter; the chord and the pixel centre's distance from the (exactly measured) axis or
    centre give the radius by Pythagoras. Sizes and places are then snapped to the 0.5 mm grid
    every training part is drawn on. ``framing``: the family's fixed frame (the pixels' places).
    """

    def __init__(self, framing: Framing) -> None:
        self.framing = framing

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        views = _views(np.asarray(observation["target_depth"], dtype=np.float64))
        _, front, right, top = views
        if not all(np.isfinite(v).any() for v in (front, right, top)):
            return json.dumps({"name": "add_box", "arguments": {}})  # no target to read
        reach = [(float(v[..., 0].max()), float(v[..., 1].max())) for v in (front, right, top)]
        (front_near, front_far), (right_near, right_far), (top_near, top_far) = reach
        size = {
            "width": front_near + front_far,  # the front view looks along +y: -y towards it
            "length": right_near + right_far,
            "height": top_near + top_far,
        }
        at = ((right_near - right_far) / 2, (front_far - front_near) / 2, (top_near - top_far) / 2)
        fills = [_fill(np.isfinite(v[..., 0])) for v in views]
        kind = _kind(fills[3], fills[1])
        if kind != "box":  # the front view's deepest chord, at its pixel's distance from the axis
            chord = front[..., 0] + front[..., 1]
            deepest = np.argmax(np.where(np.isfinite(chord), chord, -1.0))
            row, column = np.unravel_index(deepest, chord.shape)
            pitch = 2 * self.framing.half_width / chord.shape[0]
            across = self.framing.center[0] + (column + 0.5) * pitch - self.framing.half_width
            up = self.framing.center[2] + self.framing.half_width - (row + 0.5) * pitch
            off = (across - at[0]) ** 2 + (up - at[2]) ** 2 * (kind == "sphere")
            diameter = 2 * np.sqrt((chord[row, column] / 2) ** 2 + off)
            size["length"] = size["width"] = diameter
            size["height"] = diameter if kind == "sphere" else size["height"]
        return _primitive_call(kind, size, at)


class SilhouetteRule:
    """The RGB silhouette rule: the part's pixels in the target's views, each view's spanned
    columns and rows times the pixel pitch of ``framing`` (the family's fixed frame), read in
    world coordinates: the front view's columns are x and rows z, the right view's columns y,
    the top view's columns x and rows y (up)."""

    def __init__(self, framing: Framing) -> None:
        self.framing = framing

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        masks = part_masks(observation["target"])
        _, front, right, top = masks
        if not all(m.any() for m in (front, right, top)):
            return json.dumps({"name": "add_box", "arguments": {}})  # no target to read
        pitch = 2 * self.framing.half_width / front.shape[0]
        cx, cy, cz = self.framing.center

        def span(mask: np.ndarray, axis: int, centre: float, flip: bool) -> tuple[float, float]:
            """A silhouette's extent and middle (mm) along image columns (axis 0 collapsed)
            or rows; ``flip``: the world axis runs up the image (rows top-down)."""
            hit = np.flatnonzero(mask.any(axis=axis))
            # The rasteriser colours one more row or column than the pixel centres the part
            # covers (measured against the depth views): a span is one pixel short of its count.
            low, high = hit[0] + 0.5, hit[-1] + 0.5
            middle = ((low + high) / 2 - mask.shape[1 - axis] / 2) * pitch
            return (high - low) * pitch, centre + (-middle if flip else middle)

        x_front, x_mid = span(front, 0, cx, False)
        z_front, z_mid = span(front, 1, cz, True)
        y_right, y_mid = span(right, 0, cy, False)
        z_right, _ = span(right, 1, cz, True)
        x_top, _ = span(top, 0, cx, False)
        y_top, _ = span(top, 1, cy, True)
        size = {
            "length": (x_front + x_top) / 2,
            "width": (y_right + y_top) / 2,
            "height": (z_front + z_right) / 2,
        }
        kind = _kind(_fill(top), _fill(front))
        return _primitive_call(kind, size, (x_mid, y_mid, z_mid))


class BoxLooker:
    """What a rule that looks keeps and reads: the part's box (``_box``: per axis its low and
    high edge, mm), the look it asked for last (``_looked``: what for, centre, zoom), and how a
    silhouette's edges in a view centred and zoomed so are read. ``framing``: the family's
    fixed frame. :class:`LookingRule` and ``hole_rules.PlateHoleRule`` build on it."""

    ZOOM = MAX_ZOOM  # the env's largest
    MARGIN = 2.0  # pixels of the frame's pitch left free around the part in the overview

    def __init__(self, framing: Framing) -> None:
        self.framing = framing
        self._box: dict[str, list[float]] = {}
        self._looked: Look | None = None

    def _look(self, what: str, center: tuple[float, float, float], zoom: float) -> str:
        self._looked = (what, center, zoom)
        low = [c - self.framing.half_width for c in self.framing.center]
        high = [c + self.framing.half_width for c in self.framing.center]
        inside = [min(max(c, lo), hi) for c, lo, hi in zip(center, low, high, strict=True)]
        return json.dumps({"name": LOOK_CALL, "arguments": {"center": inside, "zoom": zoom}})

    def _middle(self) -> tuple[float, float, float]:
        x, y, z = ((self._box[a][0] + self._box[a][1]) / 2 for a in "xyz")
        return (x, y, z)

    def _overview_zoom(self, view: np.ndarray) -> float:
        """The largest zoom whose views hold the part's box, centred on it, with a margin."""
        reach = max(self._box[a][1] - self._box[a][0] for a in "xyz") / 2
        pitch = self._pitch(view, 1.0)
        return float(
            min(self.ZOOM, max(1.0, self.framing.half_width / (reach + self.MARGIN * pitch)))
        )

    def _pitch(self, mask: np.ndarray, zoom: float) -> float:
        return 2 * self.framing.half_width / zoom / mask.shape[0]

    def _edges(
        self, mask: np.ndarray, axis: int, centre: float, zoom: float, flip: bool
    ) -> list[float]:
        """A silhouette's low and high edges (mm, world) along image columns (``axis`` 0
        collapsed) or rows, in a view centred on ``centre`` at ``zoom``; ``flip``: the world
        axis runs up the image. The rasteriser colours one more column than the pixel centres
        the part covers (see :class:`SilhouetteRule`): each edge is half a pixel in."""
        hit = np.flatnonzero(mask.any(axis=axis))
        pitch, half = self._pitch(mask, zoom), mask.shape[1 - axis] / 2
        low, high = ((p - half) * pitch for p in (hit[0] + 0.5, hit[-1] + 0.5))
        if flip:
            return [centre - high, centre - low]
        return [centre + low, centre + high]

    def _read_box(self, masks: list[np.ndarray], center: Any, zoom: float) -> None:
        _, front, right, _ = masks
        if not (front.any() and right.any()):
            return  # nothing in view: the box stands as read before
        cx, cy, cz = center
        self._box = {
            "x": self._edges(front, 0, cx, zoom, False),
            "y": self._edges(right, 0, cy, zoom, False),
            "z": self._edges(front, 1, cz, zoom, True),
        }

    def _read_edge(
        self, axis: str, side: int, masks: list[np.ndarray], center: Any, zoom: float
    ) -> None:
        """One edge of the box (``side`` 0: low, 1: high) from a look at it: the front view's
        columns for x and rows for z, the right view's columns for y."""
        _, front, right, _ = masks
        view, collapse, flip = {
            "x": (front, 0, False),
            "y": (right, 0, False),
            "z": (front, 1, True),
        }[axis]
        if view.any():
            self._box[axis][side] = self._edges(
                view, collapse, center["xyz".index(axis)], zoom, flip
            )[side]

    def _faces(self) -> list[tuple[str, int, tuple[float, float, float]]]:
        """Each face of the box: its axis, its side and the point a look at it centres on."""
        faces = []
        middle = self._middle()
        for axis, name in enumerate("xyz"):
            for side in (0, 1):
                at = list(middle)
                at[axis] = self._box[name][side]
                faces.append((name, side, (at[0], at[1], at[2])))
        return faces


class LookingRule(BoxLooker):
    """The RGB silhouette rule with the env's ``look`` call: first the part's box read off the
    task's frame, as :class:`SilhouetteRule` reads it; then a look centred on it at the largest
    zoom (up to 16) that still holds it in every view, where the tools are told apart and the
    box read again, finer; then, if that zoom was under 16, one look at zoom 16 on each face of
    the box (the front view's columns for x, the right view's for y, its rows for z), each
    reading one edge at ``2 * half_width / (16 * view_size)`` mm a pixel; then the call. At most
    eight steps, the env's default ``max_steps``. ``framing``: the family's fixed frame."""

    def __init__(self, framing: Framing) -> None:
        super().__init__(framing)
        self._plan: list[Look] = []
        self._kind = "box"
        self._built = False

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        masks = part_masks(observation["target"])
        if int(observation["step"]) == 0:
            self._plan, self._looked, self._built = [], None, False
            if not all(m.any() for m in masks[1:]):
                return json.dumps({"name": "add_box", "arguments": {}})  # no target to read
            self._read_box(masks, self.framing.center, 1.0)
            return self._look("overview", self._middle(), self._overview_zoom(masks[1]))
        if self._built:
            return json.dumps({"name": STOP_CALL})
        what, center, zoom = self._looked or ("", self.framing.center, 1.0)
        if what == "overview":
            self._read_box(masks, center, zoom)
            self._kind = _kind(_fill(masks[3]), _fill(masks[1]))
            if zoom < self.ZOOM:
                for name, side, at in self._faces():
                    self._plan.append((f"{name}{side}", at, self.ZOOM))
        elif what:
            self._read_edge(what[0], int(what[1]), masks, center, zoom)
        if self._plan:
            return self._look(*self._plan.pop(0))
        size = {
            "length": self._box["x"][1] - self._box["x"][0],
            "width": self._box["y"][1] - self._box["y"][0],
            "height": self._box["z"][1] - self._box["z"][0],
        }
        self._looked, self._built = None, True
        return _primitive_call(self._kind, size, self._middle())
