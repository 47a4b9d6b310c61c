"""Game scenes from two fixed cameras: a perspective view from the south-west, above, and a
top-down orthographic view, side by side, rendered offscreen with Panda3D's software pipe.

Scenes come as descriptions (``World.describe``'s plain data), so the pixels depend on the data
only: the agent's scene and the target are rendered by the same code, in the trusted process.
Framing is fixed per task by its bounds ``(xmin, ymin, xmax, ymax)`` in m, so the current scene
and the target line up pixel for pixel. Ghost assets (goal zones) and triggers are drawn as flat
patches on the floor, so they mark places without hiding what stands in them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from panda3d.core import (
    AmbientLight,
    Camera,
    DirectionalLight,
    NodePath,
    OrthographicLens,
    PerspectiveLens,
    Vec3,
    Vec4,
)

from toolgym.envs.scene.catalogue import ASSETS, asset_mesh, part_mesh
from toolgym.envs.scene.catalogue import Part as AssetPart
from toolgym.renderers.mesh_views import mesh_node
from toolgym.renderers.panda_offscreen import (
    forget_unused_states,
    offscreen_target,
    read_rgb,
    render_frame,
)

BACKGROUND = (0.93, 0.95, 0.98)
FLOOR = (0.78, 0.78, 0.74)
TRIGGER = (1.0, 0.6, 0.1)
WALL = (0.85, 0.85, 0.85)


def _node(vertices: Any, faces: Any, color: tuple[float, float, float]) -> NodePath:
    """One-sided (every catalogue mesh winds outwards): the hidden faces of stacked or resting
    objects then never compete for a pixel with the visible ones."""
    node = mesh_node(np.asarray(vertices), np.asarray(faces), color)
    node.set_two_sided(False)
    return node


def _box_node(size: Sequence[float], color: tuple[float, float, float]) -> NodePath:
    return _node(*part_mesh(AssetPart("box", tuple(float(s) for s in size))), color)


class SceneRenderer:
    """Renders scene descriptions into ``(size, 2·size, 3)`` uint8 images: perspective | top."""

    def __init__(self, size: int = 64) -> None:
        self.size = int(size)
        self.engine, self.buffer, self.texture = offscreen_target(self.size, self.size, BACKGROUND)
        self.root = NodePath("root")
        self.camera = self.root.attach_new_node(Camera("camera", PerspectiveLens()))
        self.buffer.make_display_region().set_camera(self.camera)
        ambient = self.root.attach_new_node(AmbientLight("ambient"))
        ambient.node().set_color(Vec4(0.45, 0.45, 0.45, 1))
        sun = self.root.attach_new_node(DirectionalLight("sun"))
        sun.node().set_color(Vec4(0.65, 0.65, 0.65, 1))
        sun.set_hpr(30, -60, 0)
        self.root.set_light(ambient)
        self.root.set_light(sun)
        self._assets: dict[str, NodePath] = {}

    def _asset(self, name: str) -> NodePath:
        if name not in self._assets:
            entry = ASSETS[name]
            if entry.body == "ghost" and name != "coin":  # a zone: a flat patch on the floor
                node = _box_node((entry.size[0], entry.size[1], 0.02), entry.color)
            else:
                node = _node(*asset_mesh(name), entry.color)
            self._assets[name] = node
        return self._assets[name]

    def _build(self, scene: Mapping[str, Any], bounds: Sequence[float]) -> NodePath:
        from toolgym.envs.scene.verifier import room_walls

        top = NodePath("scene")
        # Drawn in scene-graph order, not sorted by state (whose order depends on the process's
        # history): pixels depend on the scene alone.
        top.set_bin("unsorted", 0)
        xmin, ymin, xmax, ymax = bounds
        floor = _box_node((xmax - xmin, ymax - ymin, 0.05), FLOOR)
        floor.reparent_to(top)
        floor.set_pos((xmin + xmax) / 2, (ymin + ymax) / 2, -0.03)  # its top below z = 0
        for o in scene.get("objects", ()):
            if o["asset"] not in ASSETS or not np.isfinite(o["pos"] + o["hpr"]).all():
                continue
            node = self._asset(o["asset"]).copy_to(top)
            x, y, z = o["pos"]
            flat = ASSETS[o["asset"]].body == "ghost" and o["asset"] != "coin"
            node.set_pos(x, y, 0.01 if flat else z)
            node.set_hpr(*o["hpr"])
        for t in scene.get("triggers", ()):
            patch = _box_node((t["size"][0], t["size"][1], 0.02), TRIGGER)
            patch.reparent_to(top)
            patch.set_pos(t["pos"][0], t["pos"][1], 0.012)
        for _, (center, _rot, half) in room_walls(scene.get("room")):
            wall = _box_node(2 * half, WALL)
            wall.reparent_to(top)
            wall.set_pos(*center)
        return top

    def render(
        self,
        scene: Mapping[str, Any] | None,
        bounds: Sequence[float],
        look: tuple[float, float, float] | None = None,
    ) -> np.ndarray:
        """The scene (``None``: the empty floor) framed on ``bounds`` (``(xmin, ymin, xmax,
        ymax)``, m): perspective | top. ``look``: ``(x, y, zoom)``, both cameras turned on that
        point of the floor with a field ``zoom`` times narrower; the perspective camera keeps
        its height and distance (it moves parallel to its place; aimed ``0.3 / zoom`` m above
        the point, as the task's view is 0.3 m above the area's centre), so it never dips into
        the scene."""
        xmin, ymin, xmax, ymax = (float(b) for b in bounds)
        center = Vec3((xmin + xmax) / 2, (ymin + ymax) / 2, 0.0)
        span = max(xmax - xmin, ymax - ymin)
        fov, film, aim = 50.0, span * 1.05, 0.3  # aim: m above the centre, for the view
        if look is not None:
            center, zoom = Vec3(look[0], look[1], 0.0), look[2]
            aim = aim / zoom  # closer to the point itself as the field narrows round it
            if zoom != 1:
                fov = math.degrees(2 * math.atan(math.tan(math.radians(fov / 2)) / zoom))
                film = film / zoom
        top = self._build(scene or {}, bounds)
        top.reparent_to(self.root)
        try:
            perspective = PerspectiveLens()  # new lenses: a reused one carries derived state
            perspective.set_fov(fov, fov)
            perspective.set_near_far(0.05 * span, 6 * span)
            self.camera.node().set_lens(perspective)
            # From identity each time: set_pos on the previous transform would carry its
            # decomposition's rounding (a scale of 0.99999994) into this frame.
            self.camera.clear_transform()
            self.camera.set_pos(center + Vec3(-0.35, -1.0, 0.95) * 1.05 * span)
            self.camera.look_at(center + Vec3(0, 0, aim))
            views = [self._frame()]
            orthographic = OrthographicLens()
            orthographic.set_film_size(film, film)
            orthographic.set_near_far(1.0, 200.0)
            self.camera.node().set_lens(orthographic)
            self.camera.clear_transform()
            self.camera.set_pos(center + Vec3(0, 0, 50))
            self.camera.look_at(center, Vec3(0, 1, 0))
            views.append(self._frame())
        finally:
            top.remove_node()
            forget_unused_states()
        return np.concatenate(views, axis=1)

    def _frame(self) -> np.ndarray:
        render_frame(self.engine)
        return read_rgb(self.texture, self.size, self.size)

    def close(self) -> None:
        self.engine.remove_all_windows()
