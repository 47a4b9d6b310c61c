"""Software offscreen rendering with Panda3D's ``p3tinydisplay``: no GPU and no display needed.

Pixels are deterministic for a given scene, camera and size. Images are ``uint8`` arrays of shape
``(height, width, 3)``, row 0 at the top. Panda3D's world is Z-up, right-handed; units are whatever
the scene uses (mm for CAD parts).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numpy as np
from panda3d.core import (
    AmbientLight,
    Camera,
    DirectionalLight,
    FrameBufferProperties,
    GraphicsEngine,
    GraphicsOutput,
    GraphicsPipe,
    GraphicsPipeSelection,
    NodePath,
    PerspectiveLens,
    RenderState,
    Texture,
    TransformState,
    TypeRegistry,
    Vec3,
    Vec4,
    WindowProperties,
    load_prc_file_data,
)

load_prc_file_data(
    "toolgym-offscreen",
    "audio-library-name null\nnotify-level-x11display fatal\nnotify-level-display error\n",
)


def offscreen_pipe() -> GraphicsPipe:
    """The software offscreen pipe (``TinyOffscreenGraphicsPipe``)."""
    selection = GraphicsPipeSelection.get_global_ptr()
    selection.make_module_pipe("p3tinydisplay")  # loads the module and registers its pipe types
    pipe = selection.make_pipe(TypeRegistry.ptr().find_type("TinyOffscreenGraphicsPipe"))
    if pipe is None:
        raise RuntimeError("Panda3D's p3tinydisplay offscreen pipe is unavailable")
    return pipe


def offscreen_target(
    width: int, height: int, background: tuple[float, float, float]
) -> tuple[GraphicsEngine, GraphicsOutput, Texture]:
    """A software engine, an offscreen RGBA buffer with depth, and the texture it copies into."""
    pipe = offscreen_pipe()
    engine = GraphicsEngine(pipe)
    fb = FrameBufferProperties()
    fb.set_rgba_bits(8, 8, 8, 8)
    fb.set_depth_bits(24)
    size = WindowProperties.size(width, height)
    buffer = engine.make_output(pipe, "toolgym", -100, fb, size, GraphicsPipe.BF_refuse_window)
    if buffer is None:
        raise RuntimeError("could not create an offscreen buffer")
    buffer.set_clear_color(Vec4(*background, 1.0))
    texture = Texture()
    buffer.add_render_texture(texture, GraphicsOutput.RTM_copy_ram)
    return engine, buffer, texture


def read_rgb(texture: Texture, width: int, height: int) -> np.ndarray:
    """The last frame as ``(height, width, 3)`` uint8, row 0 at the top."""
    image = np.frombuffer(texture.get_ram_image_as("RGB"), dtype=np.uint8)
    return image.reshape(height, width, 3)[::-1].copy()


class OffscreenRenderer:
    """Renders a ``NodePath`` into an RGB array from a camera that looks at its bounds.

    Args:
        width, height: image size in pixels.
        fov_deg: vertical field of view in degrees.
        background: RGB in [0, 1].
    """

    def __init__(
        self,
        width: int = 128,
        height: int = 128,
        fov_deg: float = 40.0,
        background: tuple[float, float, float] = (1.0, 1.0, 1.0),
    ) -> None:
        self.width, self.height = int(width), int(height)
        self.engine, self.buffer, self.texture = offscreen_target(
            self.width, self.height, background
        )
        self.root = NodePath("root")
        lens = PerspectiveLens()
        lens.set_fov(fov_deg * self.width / self.height, fov_deg)
        self.camera = self.root.attach_new_node(Camera("camera", lens))
        self.buffer.make_display_region().set_camera(self.camera)
        ambient = self.root.attach_new_node(AmbientLight("ambient"))
        ambient.node().set_color(Vec4(0.35, 0.35, 0.35, 1))
        sun = self.root.attach_new_node(DirectionalLight("sun"))
        sun.node().set_color(Vec4(0.75, 0.75, 0.75, 1))
        sun.set_hpr(30, -50, 0)
        self.root.set_light(ambient)
        self.root.set_light(sun)

    def render(
        self, scene: NodePath, direction: tuple[float, float, float] = (1.0, -1.5, 1.0)
    ) -> np.ndarray:
        """Render ``scene`` seen from ``direction`` (from the bounds' centre towards the camera)."""
        instance = scene.instance_to(self.root)
        try:
            bounds = scene.get_tight_bounds()
            if bounds is None:
                center, radius = Vec3(0, 0, 0), 1.0
            else:
                low, high = bounds
                center, radius = (low + high) / 2, max((high - low).length() / 2, 1e-6)
            offset = Vec3(*direction).normalized() * radius * 3.2
            self.camera.set_pos(center + offset)
            self.camera.look_at(center)
            self.camera.node().get_lens().set_near_far(radius * 0.05, radius * 10)
            render_frame(self.engine)
            return read_rgb(self.texture, self.width, self.height)
        finally:
            instance.remove_node()

    def close(self) -> None:
        self.engine.remove_all_windows()


# Frames being drawn in this process. Panda3D lets go of the GIL while it draws, and the state
# caches must not be collected under a frame another thread is drawing (a segfault: the
# benchmark runner and Ray actors render in threads).
_frames_lock = threading.Lock()
_frames_in_flight = 0


@contextlib.contextmanager
def drawing() -> Iterator[None]:
    """Counts a frame in flight while the block runs (see :func:`forget_unused_states`)."""
    global _frames_in_flight
    with _frames_lock:
        _frames_in_flight += 1
    try:
        yield
    finally:
        with _frames_lock:
            _frames_in_flight -= 1


def render_frame(engine: GraphicsEngine) -> None:
    """``engine.render_frame()``, counted as a frame in flight. Every renderer draws with it."""
    with drawing():
        engine.render_frame()


def forget_unused_states() -> bool:
    """Free the transform and render states no node holds any more; whether it did. Panda3D
    keeps every state it made in a cache that only a frame loop (ShowBase's, which no renderer
    here runs) empties: without this, each new framing (a look at another point) would grow it
    for good. Skipped while another thread draws a frame (the next render collects them); no
    frame starts while it runs."""
    with _frames_lock:
        if _frames_in_flight:
            return False
        TransformState.garbage_collect()
        RenderState.garbage_collect()
        return True
