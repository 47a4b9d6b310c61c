"""Blender (``bpy``, headless) in the sandbox: the script namespace, meshes and Workbench renders.

Blender aborts in a forked child once its parent has rendered (its GPU context does not survive
``fork``), and the sandbox forks workers for snapshots. So the worker never renders itself: each
render runs in a throwaway fork of the worker, which writes a PNG into the workspace and exits.
The zygote's one trusted render happens in a throwaway child too, and only fills Mesa's shader
cache, which each session copies into its workspace (Mesa ignores a read-only cache).
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any

import numpy as np

from toolgym.envs.sandbox.backend import Backend, Namespace, Request

SHADER_CACHE = os.path.join(".cache", "mesa_shader_cache")
RENDER_TIMEOUT_S = 60.0


class BlenderBackend(Backend):
    name = "blender"
    distributions = ("bpy",)

    def warm_up(self) -> None:
        import bpy
        import PIL.Image  # noqa: F401 - decodes renders in the worker

        bpy.ops.wm.read_factory_settings(use_empty=True)
        # Blender makes a session folder (<tmp>/blender_XXXXXX) on import and removes it only on a
        # clean exit, which a zygote never has: it is killed. Nothing uses it (renders go to the
        # workspace, and sessions cannot see /tmp), so remove it now rather than leave one a run.
        if os.path.basename(os.path.normpath(bpy.app.tempdir)).startswith("blender_"):
            shutil.rmtree(bpy.app.tempdir, ignore_errors=True)

    def prime(self) -> None:
        import bpy

        bpy.ops.mesh.primitive_cube_add()
        render_workbench(bpy, os.path.join(os.environ["HOME"], "prime.png"), 16, 16)

    def prepare_workspace(self, workspace: str) -> None:
        primed = os.path.join(os.environ["HOME"], SHADER_CACHE)
        if os.path.isdir(primed):
            shutil.copytree(primed, os.path.join(workspace, SHADER_CACHE), dirs_exist_ok=True)

    def session_globals(self) -> Namespace:
        import bpy

        namespace = super().session_globals()
        namespace["bpy"] = bpy
        return namespace

    def requests(self) -> dict[str, Request]:
        return {"mesh": mesh, "render": render}


def _default_camera(bpy: Any) -> None:
    """Add a camera and a light framing every mesh object, if the scene has no camera."""
    scene = bpy.context.scene
    if scene.camera is not None:
        return
    from mathutils import Vector

    corners = [
        obj.matrix_world @ Vector(corner)
        for obj in scene.objects
        if obj.type == "MESH"
        for corner in obj.bound_box
    ] or [Vector((0, 0, 0))]
    low = Vector([min(c[i] for c in corners) for i in range(3)])
    high = Vector([max(c[i] for c in corners) for i in range(3)])
    center, radius = (low + high) / 2, max((high - low).length / 2, 1e-3)
    camera = bpy.data.objects.new("toolgym_camera", bpy.data.cameras.new("toolgym_camera"))
    scene.collection.objects.link(camera)
    camera.location = center + Vector((1.0, -1.5, 1.0)).normalized() * radius * 3.5
    camera.rotation_euler = (center - camera.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = camera


def render_workbench(bpy: Any, path: str, width: int, height: int) -> None:
    """Render the current scene with Workbench to a PNG at ``path``."""
    _default_camera(bpy)
    scene = bpy.context.scene
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = width, height
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)


def render(namespace: Namespace, args: dict[str, Any]) -> np.ndarray:
    """Workbench render of the scene, made in a throwaway fork. Args: ``width``, ``height``.

    Returns an RGBA ``uint8`` array of shape (height, width, 4), row 0 at the top.
    """
    from PIL import Image

    width, height = int(args.get("width", 128)), int(args.get("height", 128))
    path = os.path.join(os.getcwd(), f".render-{os.getpid()}.png")
    child = os.fork()
    if child == 0:
        code = 1
        try:
            render_workbench(namespace["bpy"], path, width, height)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + RENDER_TIMEOUT_S
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.kill(child, 9)
            os.waitpid(child, 0)
            raise TimeoutError("the Workbench render did not finish")
        time.sleep(0.001)
    if os.waitstatus_to_exitcode(status) != 0 or not os.path.exists(path):
        raise RuntimeError(
            f"the Workbench render failed (status {os.waitstatus_to_exitcode(status)})"
        )
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGBA"))
    finally:
        os.unlink(path)


def mesh(namespace: Namespace, args: dict[str, Any]) -> dict[str, np.ndarray]:
    """Evaluated, triangulated mesh of one object. Args: ``object`` (name; default: active).

    Returns ``vertices`` (float64, (n, 3), world coordinates) and ``faces`` (int32, (m, 3)).
    """
    bpy = namespace["bpy"]
    name = args.get("object")
    obj = bpy.data.objects.get(name) if name else bpy.context.view_layer.objects.active
    if obj is None or obj.type != "MESH":
        raise ValueError(f"no mesh object {name!r}")
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    data = evaluated.to_mesh()
    try:
        data.calc_loop_triangles()
        vertices = np.empty(len(data.vertices) * 3, dtype=np.float64)
        data.vertices.foreach_get("co", vertices)
        faces = np.empty(len(data.loop_triangles) * 3, dtype=np.int32)
        data.loop_triangles.foreach_get("vertices", faces)
        matrix = np.array(obj.matrix_world, dtype=np.float64)
        vertices = vertices.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
        return {"vertices": vertices, "faces": faces.reshape(-1, 3)}
    finally:
        evaluated.to_mesh_clear()
