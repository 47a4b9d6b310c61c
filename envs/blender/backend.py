"""Blender (``bpy``, headless) in the sandbox: the script namespace, meshes and Workbench renders.

Blender aborts in a forked child once its parent has rendered (its GPU context does not survive
``fork``), and the sandbox forks workers for snapshots. So the worker never renders itself: each
render runs in a throwaway fork of the worker, which writes a PNG into the workspace and exits.
The zygote's one trusted render happens in a throwaway child too, and only fills Mesa's shader
cache, which each session copies into its workspace (Mesa ignores a read-only cache).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from typing import Any

import numpy as np

from toolgym.envs.blender import evaluation, scene
from toolgym.envs.blender.tools import Tools, registry
from toolgym.envs.sandbox.backend import Backend, Namespace, Request

SHADER_CACHE = os.path.join(".cache", "mesa_shader_cache")
RENDER_TIMEOUT_S = 60.0


class BlenderBackend(Backend):
    name = "blender"

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
        image = os.path.join(os.environ["HOME"], "prime.png")  # HOME: the run directory
        try:
            render_workbench(bpy, image, 16, 16)  # only the shader cache it fills is kept
        finally:
            with contextlib.suppress(OSError):
                os.remove(image)

    def prepare_workspace(self, workspace: str) -> None:
        primed = os.path.join(os.environ["HOME"], SHADER_CACHE)
        if os.path.isdir(primed):
            shutil.copytree(primed, os.path.join(workspace, SHADER_CACHE), dirs_exist_ok=True)

    def session_globals(self) -> Namespace:
        import bpy

        namespace = super().session_globals()
        # Blender runs a script with ``__file__`` set (its path, or the text's name): scripts
        # written for it read it to find their folder, here the workspace.
        namespace.update(bpy=bpy, tools=Tools(), __file__="script.py")
        return namespace

    def requests(self) -> dict[str, Request]:
        return {
            "mesh": mesh,
            "render": render,
            "save": save_request,
            "extract": extract_request,
            "tool": apply_tool,
        }


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


def in_fork(work: Any, what: str, timeout: float = RENDER_TIMEOUT_S) -> None:
    """Run ``work()`` in a throwaway fork of this process and wait for it (Blender aborts in
    forks of a process that rendered, so the process that snapshots fork must never render).
    The child passes its results back in files; raises if it fails or overruns ``timeout``."""
    child = os.fork()
    if child == 0:
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            os.kill(child, 9)
            os.waitpid(child, 0)
            raise TimeoutError(f"the {what} did not finish")
        time.sleep(0.001)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the {what} failed (status {os.waitstatus_to_exitcode(status)})")


def render(namespace: Namespace, args: dict[str, Any]) -> np.ndarray:
    """Workbench render of the scene, made in a throwaway fork. Args: ``width``, ``height``.

    Returns an RGBA ``uint8`` array of shape (height, width, 4), row 0 at the top.
    """
    from PIL import Image

    width, height = int(args.get("width", 128)), int(args.get("height", 128))
    path = os.path.join(os.getcwd(), f".render-{os.getpid()}.png")
    in_fork(lambda: render_workbench(namespace["bpy"], path, width, height), "Workbench render")
    if not os.path.exists(path):
        raise RuntimeError("the Workbench render wrote no image")
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGBA"))
    finally:
        os.unlink(path)


def save_request(namespace: Namespace, args: dict[str, Any]) -> bytes:
    """The session's scene as ``.blend`` bytes (saved in the workspace, then read back)."""
    return scene.save(namespace["bpy"], os.getcwd())


def extract_request(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """For trusted sessions only: load ``data`` (``.blend`` bytes) with Python auto-execution
    off, make what forms its image the same as every scene's (:func:`evaluation.prepare`) and
    return :func:`scene.scene_state`, the scene as a final render draws it; with ``cameras``
    (see :func:`scene.render_views`), also ``images``, Cycles renders of the same scene made
    in one throwaway fork (``size`` px, ``samples``, sampling ``seed``).
    ``timings`` holds the seconds each part took (``load``, ``extract``, ``cycles``)."""
    bpy = namespace["bpy"]
    workspace = os.getcwd()
    started = time.perf_counter()
    scene.load_trusted(bpy, args["data"], workspace)
    evaluation.prepare(bpy)
    loaded = time.perf_counter()
    state = scene.scene_state(bpy)
    state["timings"] = {"load": loaded - started, "extract": time.perf_counter() - loaded}
    cameras = args.get("cameras")
    if cameras:
        size, samples = int(args.get("size", 64)), int(args.get("samples", 16))
        seed = int(args.get("seed", 0))
        path = os.path.join(workspace, ".views.npy")

        grid = args.get("grid")

        def work() -> None:
            np.save(path, scene.render_views(bpy, workspace, cameras, size, samples, grid, seed))

        started = time.perf_counter()
        in_fork(work, "Cycles render", float(args.get("render_timeout", RENDER_TIMEOUT_S)))
        state["timings"]["cycles"] = time.perf_counter() - started
        try:
            state["images"] = np.load(path, allow_pickle=False)
        finally:
            os.unlink(path)
    return state


def apply_tool(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Apply one tool call (``{"name", "arguments"}``) to the scene; returns what it reports."""
    return registry.apply(namespace["bpy"], args.get("call"))


def mesh(namespace: Namespace, args: dict[str, Any]) -> dict[str, np.ndarray]:
    """Evaluated, triangulated mesh of one object. Args: ``object`` (name; default: active).

    Returns ``vertices`` (float64, (n, 3), world coordinates) and ``faces`` (int32, (m, 3)).
    """
    bpy = namespace["bpy"]
    name = args.get("object")
    obj = bpy.data.objects.get(name) if name else bpy.context.view_layer.objects.active
    if obj is None or obj.type != "MESH":
        raise ValueError(f"no mesh object {name!r}")
    vertices, faces = scene.evaluated_mesh(obj, bpy.context.evaluated_depsgraph_get())
    return {"vertices": vertices, "faces": faces}
