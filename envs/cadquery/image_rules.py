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

Both tell the tools apart by how full each silhouette's box is: a box seen square on fills it,
a disc (a cylinder from above, a sphere from anywhere) fills pi / 4 of it; both snap sizes and
places to the 0.5 mm grid every training part is drawn on. Views are the env's four (iso,
front, right, top), tiled two by two; lengths are in mm.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from toolgym.renderers.mesh_views import Framing

# A silhouette filling its box (to pixel counting) is an axis-aligned rectangle; a disc in
# pixels leaves its box's corners empty (pi / 4 when large, under 0.95 from 3 pixels across).
FULL = 0.99
TINT = 8  # a part pixel's blue exceeds its red by more than this (the grid's greys: 0)


def _views(tile: np.ndarray) -> list[np.ndarray]:
    """The four views of a two-by-two tile, in the env's order: iso, front, right, top."""
    rows, columns = tile.shape[0] // 2, tile.shape[1] // 2
    return [
        tile[r * rows : (r + 1) * rows, c * columns : (c + 1) * columns]
        for r in (0, 1)
        for c in (0, 1)
    ]


def _fill(mask: np.ndarray) -> float:
    """The share of its rows-by-columns box a silhouette covers (0 without one)."""
    rows, columns = mask.any(axis=1).sum(), mask.any(axis=0).sum()
    return float(mask.sum() / max(rows * columns, 1))


def _snap(value: float) -> float:
    """To the 0.5 mm grid every training part is drawn on."""
    return round(value * 2) / 2


def _primitive_call(kind: str, size: dict[str, float], at: tuple[float, float, float]) -> str:
    """The tool call of a box, an upright cylinder or a sphere of ``size`` centred ``at``, each
    length snapped to the grid first (:func:`_snap`; a round part's diameter is the mean of its
    snapped extents)."""
    size = {k: _snap(v) for k, v in size.items()}
    at = tuple(_snap(c) for c in at)
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
        rgb = np.asarray(observation["target"], dtype=np.int32)
        masks = [v[..., 2] - v[..., 0] > TINT for v in _views(rgb)]
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
