"""Captions on saved renders: each view's name, and which panel is the agent's and the target's.

Observations stay unlabelled (an agent sees pixels of the part only); these are for people reading
the PNGs that ``toolgym run --out`` and ``toolgym show --image`` write. Text is drawn with
Pillow's built-in bitmap font, so the output does not depend on the fonts installed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from toolgym.renderers.mesh_views import DEFAULT_VIEWS

VIEW_NAMES = tuple(view.name for view in DEFAULT_VIEWS)
CAPTION_HEIGHT = 16
TEXT = (40, 40, 40)
DIVIDER = (160, 160, 160)


def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default_imagefont()  # the bitmap font: same pixels everywhere


def label_views(
    tiles: np.ndarray, names: Sequence[str] = VIEW_NAMES, columns: int = 2
) -> np.ndarray:
    """``tiles`` (a grid of views, ``columns`` wide, as ``mesh_views.tile`` lays them out) with
    each view's name in its top-left corner and a thin line between views. RGB uint8."""
    rows = -(-len(names) // columns)
    height, width = tiles.shape[0] // rows, tiles.shape[1] // columns
    image = Image.fromarray(np.ascontiguousarray(tiles[..., :3]))
    draw = ImageDraw.Draw(image)
    for k, name in enumerate(names):
        top, left = (k // columns) * height, (k % columns) * width
        draw.text((left + 2, top + 1), name, fill=TEXT, font=_font())
    for c in range(1, columns):
        draw.line([(c * width, 0), (c * width, image.height)], fill=DIVIDER)
    for r in range(1, rows):
        draw.line([(0, r * height), (image.width, r * height)], fill=DIVIDER)
    return np.asarray(image)


def captioned(panels: dict[str, np.ndarray]) -> np.ndarray:
    """Panels side by side, left to right, each under a caption strip with its name
    (``{"agent": ..., "target": ...}`` reads "agent | target"). RGB uint8."""
    height = max(panel.shape[0] for panel in panels.values())
    width = sum(panel.shape[1] for panel in panels.values()) + len(panels) - 1
    image = Image.new("RGB", (width, height + CAPTION_HEIGHT), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    left = 0
    for k, (name, panel) in enumerate(panels.items()):
        if k:
            draw.line([(left - 1, 0), (left - 1, image.height)], fill=DIVIDER)
        image.paste(Image.fromarray(np.ascontiguousarray(panel[..., :3])), (left, CAPTION_HEIGHT))
        draw.text((left + 3, 2), name, fill=TEXT, font=_font())
        left += panel.shape[1] + 1
    return np.asarray(image)


SCENE_VIEW_NAMES = ("perspective", "top")  # a game scene's two views, side by side


def view_names(tiles: np.ndarray) -> tuple[str, ...]:
    """The views a tile holds, from its shape: a row of two (game scenes: twice as wide as
    high), else the 2 × 2 grid of iso, front, right and top (parts, Blender scenes)."""
    return SCENE_VIEW_NAMES if tiles.shape[1] == 2 * tiles.shape[0] else VIEW_NAMES


def readable(tiles: np.ndarray, min_view: int = 64) -> np.ndarray:
    """``tiles`` enlarged (nearest neighbour, by a whole factor) until each view is at least
    ``min_view`` pixels wide, with each view's name on it (see :func:`label_views`)."""
    names = view_names(tiles)
    width = tiles.shape[1] // 2
    factor = max(1, -(-min_view // max(width, 1)))
    big = np.repeat(np.repeat(tiles[..., :3], factor, axis=0), factor, axis=1)
    return label_views(big, names, columns=2)


def agent_and_target(agent: np.ndarray | None, target: np.ndarray | None) -> np.ndarray:
    """The agent's views beside the target's, each readable and captioned "agent" / "target"
    (the layout of ``toolgym run --out``, the replay GIF and the replay page)."""
    panels = {
        name: readable(views)
        for name, views in (("agent", agent), ("target", target))
        if views is not None
    }
    return captioned(panels)
