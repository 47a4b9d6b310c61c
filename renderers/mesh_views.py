"""Fixed-view renders of triangle meshes: RGB (Panda3D, software), depth and silhouette.

Views are orthographic, as in engineering drawings, from fixed directions; lights are fixed to the
camera (a key light from the upper left and some ambient), so a part looks the same in every
episode. A :class:`Framing` (centre and half-width in mesh units, mm for CAD) is chosen once per
target and shared by candidate and target renders, so size and placement differences show. A
framing may carry a ground grid (lines every ``grid`` units on the plane ``z = ground``, a darker
line through the world's axes): a scale a policy can read, the same in both images. The grid is in
the RGB images only; depth and silhouette are the mesh's alone.

RGB comes from Panda3D's ``p3tinydisplay`` software rasteriser: no GPU or display is needed and
pixels are deterministic. Depth and silhouette are computed exactly by casting one ray per pixel
centre (the ray caster of ``toolgym.verifiers.occupancy``), since the software pipe has no depth
read-back; they agree with the RGB image to within a pixel at edges. Depth is the distance from the
camera plane in mesh units, ``inf`` where the ray misses; :meth:`MeshRenderer.reach` gives, per
pixel, where the part's surfaces facing towards and away from the camera lie along the view's
axis. Images have row 0 at the top.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import trimesh
from panda3d.core import (
    AmbientLight,
    Camera,
    DirectionalLight,
    Geom,
    GeomNode,
    GeomTriangles,
    GeomVertexData,
    GeomVertexFormat,
    NodePath,
    OrthographicLens,
    Vec3,
    Vec4,
)

from toolgym.renderers.panda_offscreen import (
    forget_unused_states,
    offscreen_target,
    read_rgb,
    render_frame,
)
from toolgym.verifiers.occupancy import Columns, crossings


@dataclasses.dataclass(frozen=True)
class View:
    """A camera direction: ``direction`` points from the part towards the camera; ``up`` is the
    image's up direction (world coordinates, Z up)."""

    name: str
    direction: tuple[float, float, float]
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)


DEFAULT_VIEWS = (
    View("iso", (1.0, -1.0, 0.8)),
    View("front", (0.0, -1.0, 0.0)),
    View("right", (1.0, 0.0, 0.0)),
    View("top", (0.0, 0.0, 1.0), up=(0.0, 1.0, 0.0)),
)
PART_COLOR = (0.62, 0.70, 0.85)
BACKGROUND = (1.0, 1.0, 1.0)
GRID_COLOR = (0.80, 0.80, 0.80)
AXIS_COLOR = (0.55, 0.55, 0.55)  # the grid lines through x = 0 and y = 0


@dataclasses.dataclass(frozen=True)
class Framing:
    """What the cameras look at: a centre and the half-width of the square field of view; and
    optionally a ground grid, lines every ``grid`` units (0: none) on the plane ``z = ground``.
    ``standoff``: how far the scene may reach from the centre along a view's axis (0: the
    half-width); a narrower field (a look) keeps its frame's, so the cameras stay outside the
    part and clip nothing."""

    center: tuple[float, float, float]
    half_width: float
    grid: float = 0.0
    ground: float = 0.0
    standoff: float = 0.0

    @property
    def depth_range(self) -> float:
        """The length the cameras' depth covers on each side: twice the standoff."""
        return 2 * (self.standoff or self.half_width)

    def zoomed(self, center: Sequence[float], zoom: float, grid: float | None = None) -> Framing:
        """The same cameras turned on ``center`` with a field ``zoom`` times narrower, standing
        where this framing's stand (its standoff), so they clip nothing this one shows;
        ``grid``: the spacing the narrower field needs (default: this one's)."""
        return dataclasses.replace(
            self,
            center=(float(center[0]), float(center[1]), float(center[2])),
            half_width=self.half_width / zoom,
            grid=self.grid if grid is None else grid,
            standoff=self.standoff or self.half_width,
        )

    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The cube the field spans about the centre: its low and high corners."""
        half = self.half_width
        low = (self.center[0] - half, self.center[1] - half, self.center[2] - half)
        high = (self.center[0] + half, self.center[1] + half, self.center[2] + half)
        return low, high

    @classmethod
    def around(cls, bounds: np.ndarray | None, margin: float = 1.15) -> Framing:
        """A framing that shows a box of ``bounds`` (2×3) from every direction, with a margin."""
        if bounds is None or not np.isfinite(bounds).all():
            return cls((0.0, 0.0, 0.0), 1.0)
        low, high = np.asarray(bounds, dtype=np.float64)
        radius = float(np.linalg.norm(high - low) / 2)
        return cls(tuple(float(c) for c in (low + high) / 2), max(radius * margin, 1e-6))


@dataclasses.dataclass
class Renders:
    """Per view: ``rgb`` (V, H, W, 3) uint8; ``depth`` (V, H, W) float32; ``mask`` (V, H, W)."""

    rgb: np.ndarray
    depth: np.ndarray
    mask: np.ndarray


def camera_basis(view: View) -> np.ndarray:
    """Rows: the camera's right, up and backward (towards the camera) axes in world coordinates."""
    back = np.asarray(view.direction, dtype=np.float64)
    back /= np.linalg.norm(back)
    right = np.cross(np.asarray(view.up, dtype=np.float64), back)
    right /= np.linalg.norm(right)
    return np.stack([right, np.cross(back, right), back])


def mesh_node(
    vertices: np.ndarray, faces: np.ndarray, color: tuple[float, float, float]
) -> NodePath:
    """A flat-shaded Panda3D node for a triangle mesh (vertices (n, 3), faces (m, 3))."""
    triangles = np.asarray(vertices, dtype=np.float32)[np.asarray(faces)]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.repeat(normals / np.where(lengths == 0, 1, lengths), 3, axis=0)
    rows = np.hstack([triangles.reshape(-1, 3), normals]).astype(np.float32)
    data = GeomVertexData("mesh", GeomVertexFormat.get_v3n3(), Geom.UH_static)
    data.unclean_set_num_rows(len(rows))
    memoryview(data.modify_array(0)).cast("B")[:] = rows.tobytes()
    primitive = GeomTriangles(Geom.UH_static)
    primitive.add_consecutive_vertices(0, len(rows))
    geom = Geom(data)
    geom.add_primitive(primitive)
    node = GeomNode("mesh")
    node.add_geom(geom)
    path = NodePath(node)
    path.set_color(*color, 1.0)
    path.set_two_sided(True)
    return path


def grid_node(framing: Framing, pixels: int) -> NodePath | None:
    """Unlit lines every ``framing.grid`` units on the plane ``z = framing.ground``, covering the
    field of view, each about one pixel wide (flat boxes, so they also show edge-on)."""
    if framing.grid <= 0:
        return None
    cx, cy, _ = framing.center
    reach = framing.half_width * 1.75  # the iso view sees the plane's corners too
    width = 2 * framing.half_width / pixels
    root = NodePath("grid")
    for axis in (0, 1):
        centre = (cx, cy)[axis]
        first = np.ceil((centre - reach) / framing.grid)
        last = np.floor((centre + reach) / framing.grid)
        for k in np.arange(first, last + 1):
            at = float(k * framing.grid)
            size = [2 * reach, 2 * reach, width]
            size[axis] = width * (1.5 if k == 0 else 1.0)
            box = trimesh.creation.box(size)
            offset = [cx, cy, framing.ground - 0.5 * width]
            offset[axis] = at
            box.apply_translation(offset)
            line = mesh_node(box.vertices, box.faces, AXIS_COLOR if k == 0 else GRID_COLOR)
            line.reparent_to(root)
    root.set_light_off(1)
    root.flatten_strong()
    return root


class MeshRenderer:
    """Renders meshes from fixed views into square images of ``size`` pixels.

    Args:
        size: width and height of each view in pixels.
        views: camera directions (default: iso, front, right, top).
    """

    def __init__(self, size: int = 96, views: tuple[View, ...] = DEFAULT_VIEWS) -> None:
        self.size, self.views = int(size), tuple(views)
        self.engine, self.buffer, self.texture = offscreen_target(self.size, self.size, BACKGROUND)
        self.root = NodePath("root")
        self.lens = OrthographicLens()
        self.camera = self.root.attach_new_node(Camera("camera", self.lens))
        self.buffer.make_display_region().set_camera(self.camera)
        ambient = self.root.attach_new_node(AmbientLight("ambient"))
        ambient.node().set_color(Vec4(0.45, 0.45, 0.45, 1))
        key = self.camera.attach_new_node(DirectionalLight("key"))  # moves with the camera
        key.node().set_color(Vec4(0.7, 0.7, 0.7, 1))
        key.set_hpr(25, -35, 0)
        self.root.set_light(ambient)
        self.root.set_light(key)
        self._grids: dict[Framing, NodePath | None] = {}

    def _grid(self, framing: Framing) -> NodePath | None:
        if framing not in self._grids:
            if len(self._grids) > 64:  # one per framing seen; a long run sees many tasks
                self._grids.clear()
            self._grids[framing] = grid_node(framing, self.size)
        return self._grids[framing]

    def render(self, mesh: trimesh.Trimesh | None, framing: Framing, depth: bool = True) -> Renders:
        """RGB, depth and silhouette of ``mesh`` (``None`` or empty: background only);
        ``depth=False`` skips the ray casting (depth all ``inf``, mask all ``False``)."""
        count, size = len(self.views), self.size
        rgb = np.empty((count, size, size, 3), dtype=np.uint8)
        distance = np.full((count, size, size), np.inf, dtype=np.float32)
        empty = mesh is None or not len(mesh.faces) or not np.isfinite(mesh.vertices).all()
        node = None if empty else mesh_node(mesh.vertices, mesh.faces, PART_COLOR)
        if node is not None:
            node.reparent_to(self.root)
        grid = self._grid(framing)
        if grid is not None:
            grid.reparent_to(self.root)
        try:
            for k, view in enumerate(self.views):
                rgb[k] = self._rgb(view, framing)
                if depth and not empty:
                    distance[k] = self._depth(mesh, view, framing)
        finally:
            if node is not None:
                node.remove_node()
            if grid is not None:
                grid.detach_node()
            forget_unused_states()
        return Renders(rgb, distance, np.isfinite(distance))

    def render_parts(
        self,
        parts: list[tuple[np.ndarray, np.ndarray, tuple[float, float, float]]],
        framing: Framing,
    ) -> np.ndarray:
        """RGB (V, H, W, 3) of several meshes, each ``(vertices, faces, colour)`` in its own
        colour (RGB in [0, 1]); no depth. Empty meshes are skipped."""
        nodes = [
            mesh_node(vertices, faces, color)
            for vertices, faces, color in parts
            if len(faces) and np.isfinite(vertices).all()
        ]
        for node in nodes:
            node.reparent_to(self.root)
        try:
            return np.stack([self._rgb(view, framing) for view in self.views])
        finally:
            for node in nodes:
                node.remove_node()
            forget_unused_states()

    def _rgb(self, view: View, framing: Framing) -> np.ndarray:
        width, deep = 2 * framing.half_width, framing.depth_range
        self.lens.set_film_size(width, width)
        self.lens.set_near_far(0.01 * deep, 4 * deep)
        basis = camera_basis(view)
        center = Vec3(*framing.center)
        self.camera.set_pos(center + Vec3(*basis[2]) * 2 * deep)
        self.camera.look_at(center, Vec3(*basis[1]))
        render_frame(self.engine)
        return read_rgb(self.texture, self.size, self.size)

    def _depth(self, mesh: trimesh.Trimesh, view: View, framing: Framing) -> np.ndarray:
        """Exact orthographic depth: one ray per pixel centre, nearest crossing wins."""
        nearest, _ = self._crossing_span(mesh, view, framing)
        camera_plane = 2 * framing.depth_range  # the camera sits this far back from the centre
        return (camera_plane - nearest).astype(np.float32)

    def _crossing_span(
        self, mesh: trimesh.Trimesh, view: View, framing: Framing
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per pixel (rows top-down, columns left-right), the nearest and the farthest crossing
        of the ray through its centre, as coordinates along the camera's backward axis measured
        from the frame's centre (mesh units); ``-inf`` and ``inf`` where the ray misses."""
        basis = camera_basis(view)
        local = (np.asarray(mesh.vertices) - framing.center) @ basis.T  # x right, y up, z back
        pitch = 2 * framing.half_width / self.size
        columns = Columns.grid(
            origin=(-framing.half_width + pitch / 2, -framing.half_width + pitch / 2),
            pitch=pitch,
            shape=(self.size, self.size),
        )
        column, z, _ = crossings(trimesh.Trimesh(local, mesh.faces, process=False), columns)
        nearest = np.full(self.size * self.size, -np.inf)
        farthest = np.full(self.size * self.size, np.inf)
        np.maximum.at(nearest, column, z)
        np.minimum.at(farthest, column, z)

        def image(values: np.ndarray) -> np.ndarray:  # [column x, row y] -> rows top-down
            return values.reshape(self.size, self.size).T[::-1]

        return image(nearest), image(farthest)

    def reach(self, mesh: trimesh.Trimesh | None, framing: Framing) -> np.ndarray:
        """How far the part reaches towards and away from each camera: ``(V, H, W, 2)``
        float32, mesh units (mm for CAD). Per pixel, with ``b`` the unit vector from the part
        towards the view's camera and ``p`` the points where the ray through the pixel centre
        crosses the mesh: channel 0 is ``max(p · b)`` (the surface facing the camera), channel
        1 is ``max(-p · b)`` (the surface facing away); ``-inf`` where the ray misses. World
        coordinates, so the maximum of a view's channel is the part's exact extent along that
        axis, whatever the pixel size: the front, right and top views give ``-y``/``y``,
        ``x``/``-x`` and ``z``/``-z``. Unlike the RGB images, no grid."""
        reach = np.full((len(self.views), self.size, self.size, 2), -np.inf, dtype=np.float32)
        if mesh is None or not len(mesh.faces) or not np.isfinite(mesh.vertices).all():
            return reach
        for k, view in enumerate(self.views):
            nearest, farthest = self._crossing_span(mesh, view, framing)
            centre = float(np.dot(framing.center, camera_basis(view)[2]))
            reach[k, ..., 0] = centre + nearest  # -inf stays -inf
            reach[k, ..., 1] = -(centre + farthest)
        return reach

    def close(self) -> None:
        self.engine.remove_all_windows()


def tile(images: np.ndarray, columns: int = 2) -> np.ndarray:
    """Lay ``(V, H, W, ...)`` views out in a grid, ``columns`` wide, row by row."""
    count = len(images)
    rows = -(-count // columns)
    padded = np.concatenate(
        [images, np.zeros((rows * columns - count, *images.shape[1:]), images.dtype)]
    )
    grid = padded.reshape(rows, columns, *images.shape[1:])
    return np.concatenate([np.concatenate(list(row), axis=1) for row in grid], axis=0)
