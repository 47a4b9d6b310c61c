"""Reading Blender scenes in a trusted process, building goals, and verifying scripts.

The agent's session saves its scene as a ``.blend`` in its workspace; :class:`SceneReader` loads
those bytes in a separate sandbox session that runs no agent code, with Python auto-execution
off, and gets the scene's state back as plain data (msgpack; nothing is unpickled), with Cycles
renders from fixed views when asked. After each read that session goes back to its clean
snapshot, so a crafted file cannot leave anything behind for the next one. A goal is built the
same way from the task's start and reference programs, so a right scene reads exactly as the goal.
A goal is built once per process and once per machine: the on-disk cache
(``toolgym.envs.episode.cache``) keeps its state (as the trusted process sent it: msgpack, never a
pickle), views, framing, renders and ``.blend``.
"""

from __future__ import annotations

import dataclasses
import io
import math
import time
import zlib
from typing import Any

import numpy as np
import trimesh

from toolgym.envs.blender import scene as scene_data
from toolgym.envs.blender.verifier import Goal, shown_objects, verify_scene
from toolgym.envs.episode import cache
from toolgym.envs.sandbox import Limits, Session, protocol
from toolgym.envs.sandbox.rewind import Rewind
from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.batch import Outcome, ReferenceBuildError
from toolgym.renderers.mesh_views import DEFAULT_VIEWS, Framing, MeshRenderer, tile

RENDER_KINDS = ("material", "lighting")  # shown and scored by Blender's own (Cycles) renders
# The trusted process loads files an agent wrote: generous for a real scene, finite for a
# crafted one.
TRUSTED_LIMITS = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=4096)
DEFAULT_SAMPLES = 16
PALETTE = (
    (0.85, 0.37, 0.33), (0.36, 0.62, 0.85), (0.45, 0.75, 0.42), (0.93, 0.74, 0.30),
    (0.65, 0.47, 0.80), (0.35, 0.78, 0.76), (0.88, 0.55, 0.72), (0.62, 0.62, 0.62),
)  # fmt: skip
IMAGE_PROMPTS = {
    "modelling": "Model the object shown in the target images (views: iso, front, right, top; "
    "Z up; metres).",
    "placement": "Move, rotate and scale the objects {names} so that the scene matches the "
    "target images.",
    "material": "Change the materials of {names} so that the renders match the target images.",
    "shape_keys": "Set the shape keys of {names} so that the object matches the target images.",
    "lighting": "Change the lights {names} (type, power, colour, position) so that the renders "
    "match the target images.",
    "procedural": "Change the modifier settings of {names} so that the geometry matches the "
    "target images.",
}


@dataclasses.dataclass
class Scene:
    """A scene as the trusted process read it: its state, and its Cycles renders when asked."""

    state: dict[str, Any]
    images: np.ndarray | None = None


@dataclasses.dataclass
class Target:
    """A task's goal, the framing of every view of it, its image and its image-only prompt."""

    goal: Goal
    framing: Framing
    image: np.ndarray
    prompt: str
    blend: bytes


def kind_of(task: Task) -> str:
    return str(task.parameters.get("kind"))


class SceneReader:
    """The trusted session that reads saved scenes, started on first use.

    Args:
        view_size: pixels per rendered view.
        samples: Cycles samples per pixel.
    """

    def __init__(self, view_size: int = 64, samples: int = DEFAULT_SAMPLES) -> None:
        self.view_size, self.samples = view_size, samples
        self._session: Session | None = None
        # After each read the session goes back to its clean snapshot in the background, while
        # the caller verifies and draws; the next read waits for it.
        self._rewind = Rewind()
        self.renderer: MeshRenderer | None = None
        # Seconds the last read took, by part: save (in the agent's session), load, extract and
        # cycles (in the trusted one), rollback (what was left to wait for of the last read's
        # return to the clean snapshot), and round trips.
        self.timings: dict[str, float] = {}

    @property
    def session(self) -> Session | None:
        """The trusted session once started, back in its clean state."""
        if self._rewind.wait() is not None and self._session is not None:
            self._session.close()  # it could not go back: start afresh next time
            self._session = None
        return self._session

    def read(
        self, blend: bytes, framing: Framing | None = None, seed: int = 0
    ) -> tuple[Scene | None, str]:
        """Load ``.blend`` bytes with Python auto-execution off and return the scene's state,
        with Cycles renders (sampling ``seed``) from the fixed views when ``framing`` is given;
        or ``None`` and why."""
        args: dict[str, Any] = {"data": blend}
        if framing is not None:
            directions = [list(v.direction) for v in DEFAULT_VIEWS]
            cameras = scene_data.fixed_cameras(list(framing.center), framing.half_width, directions)
            args |= {
                "cameras": cameras,
                "size": self.view_size,
                "samples": self.samples,
                "seed": seed,
            }
            vertices, faces = ground_grid(framing, self.view_size)
            args["grid"] = {"vertices": vertices, "faces": faces}
        started = time.perf_counter()
        session = self.session  # waits for the last read's rollback
        if session is None:
            session = self._session = Session("blender", TRUSTED_LIMITS)
        waited = time.perf_counter()
        result = session.request("extract", args)
        self.timings["trusted_read"] = time.perf_counter() - waited
        self.timings["rollback"] = waited - started
        self._rewind.start(session)
        inner = (
            result.value.get("timings") if result.ok and isinstance(result.value, dict) else None
        )
        if isinstance(inner, dict):
            self.timings |= {k: float(v) for k, v in inner.items() if isinstance(v, int | float)}
        if not result.ok or not isinstance(result.value, dict):
            message = result.error.message if result.error else "no state came back"
            return None, f"the saved scene could not be read: {message}"
        images = result.value.get("images")
        return Scene(result.value, None if images is None else np.asarray(images, np.uint8)), ""

    def save_and_read(
        self, session: Session, framing: Framing | None = None
    ) -> tuple[Scene | None, str]:
        """Save ``session``'s scene (a ``.blend`` in its workspace) and :meth:`read` it."""
        self.timings = {}
        started = time.perf_counter()
        saved = session.request("save")
        self.timings["save"] = time.perf_counter() - started
        if not saved.ok or not isinstance(saved.value, bytes):
            message = saved.error.message if saved.error else "no file came back"
            return None, f"the scene could not be saved: {message}"
        return self.read(saved.value, framing)

    def views(self, scene: Scene, framing: Framing) -> np.ndarray:
        """The scene's four views as one tile: its renders if it has them, else its meshes drawn
        by the mesh renderer, one colour per object."""
        if scene.images is not None:
            return tile(scene.images)
        return self.mesh_views(scene.state, framing)

    def mesh_views(self, state: dict[str, Any], framing: Framing) -> np.ndarray:
        """A read scene's meshes (``Scene.state``, or a goal's) drawn by the mesh renderer in
        ``framing``'s four views, one colour per object, over the ground grid: one tile."""
        if self.renderer is None:
            self.renderer = MeshRenderer(self.view_size)
        grid = (*ground_grid(framing, self.view_size), GRID_COLOR)
        return tile(self.renderer.render_parts([grid, *mesh_parts(state)], framing))

    def target(self, task: Task, limits: Limits | None = None) -> Target:
        """Build ``task``'s goal: run its start and reference programs, save, read; frame the
        views on the start and goal scenes together (:func:`task_framing`). Loaded from the
        on-disk cache when another process built it (:func:`target_key`)."""
        key = target_key(task, self.view_size, self.samples)
        found = cached_target(key, task)
        if found is not None:
            return found
        start, blend, hidden = _scene_blends(task, limits)
        scene, why = self.read(blend)
        first, why_start = self.read(start)
        if scene is None or first is None:
            raise ReferenceBuildError(f"{task.id}: {why or why_start}")
        # The goal is the scene, not how long reading it took (which a cached goal would keep).
        state = {k: v for k, v in scene.state.items() if k != "timings"}
        goal = Goal(kind_of(task), state, dict(task.verification.thresholds))
        framing = task_framing(framed_bounds(goal.state), framed_bounds(first.state))
        if goal.kind in RENDER_KINDS:
            rendered, why = self.read(blend, framing)
            if rendered is None:
                raise ReferenceBuildError(f"{task.id}: {why}")
            # The same goal sampled with another seed: how much path-tracing noise alone
            # moves its pixels, which a candidate's renders are not blamed for.
            resampled, why = self.read(blend, framing, seed=1)
            if resampled is None:
                raise ReferenceBuildError(f"{task.id}: {why}")
            goal.images = scene.images = rendered.images
            goal.resampled = resampled.images
        target = Target(goal, framing, self.views(scene, framing), image_prompt(goal), blend)
        trusted = self.session
        if (
            hidden
            and trusted is not None
            and cache.hidden_from(trusted.allowed_paths, trusted.layers)
        ):
            cache.store(key, _target_arrays(target))
        return target

    def close(self) -> None:
        self._rewind.wait()
        if self._session is not None:
            self._session.close()
            self._session = None
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None


def image_prompt(goal: Goal) -> str:
    """The image-only prompt: what to change, naming the goal's objects (or lights)."""
    wanted = "LIGHT" if goal.kind == "lighting" else "MESH"
    names = sorted(n for n, o in goal.state["objects"].items() if o["type"] == wanted)
    return IMAGE_PROMPTS[goal.kind].format(names=", ".join(names))


def scene_blends(task: Task, limits: Limits | None = None) -> tuple[bytes, bytes]:
    """The start and the goal scenes as ``.blend`` bytes: the task's start, saved, then its
    reference, saved, in one session."""
    return _scene_blends(task, limits)[:2]


def _scene_blends(task: Task, limits: Limits | None = None) -> tuple[bytes, bytes, bool]:
    """:func:`scene_blends`, and whether that session could not see the on-disk cache."""
    saved = []
    with Session("blender", limits) as session:
        for what, code in (("start", task.start), ("reference", task.reference)):
            ran = session.run(code, filename=f"<{what} {task.id}>")
            if not ran.ok:
                raise ReferenceBuildError(f"{task.id}: the {what} program failed: {ran.feedback()}")
            saved.append(session.request("save"))
        hidden = cache.hidden_from(session.allowed_paths, session.layers)
    for what, result in zip(("start", "goal"), saved, strict=True):
        if not result.ok or not isinstance(result.value, bytes):
            message = result.feedback()
            raise ReferenceBuildError(f"{task.id}: the {what} could not be saved: {message}")
    return saved[0].value, saved[1].value, hidden


# The sources whose code decides a goal's state, views and renders: a change to one is a new
# cache key.
_TARGET_SOURCES = (
    "toolgym.envs.blender.backend",
    "toolgym.envs.blender.budget",
    "toolgym.envs.blender.evaluation",
    "toolgym.envs.blender.materials",
    "toolgym.envs.blender.scene",
    "toolgym.envs.blender.base_tools",
    "toolgym.envs.blender.material_tools",
    "toolgym.envs.blender.scene_tools",
    "toolgym.envs.blender.tools",
    "toolgym.envs.blender.verification",
    "toolgym.renderers.mesh_views",
)


def target_key(task: Task, view_size: int, samples: int) -> str:
    """What decides a task's goal: its start and reference programs, its kind, the views' size,
    Cycles' samples, Blender's version and the code that builds, reads and draws scenes."""
    inputs = {
        "start": task.start,
        "reference": task.reference,
        "kind": kind_of(task),
        "view_size": view_size,
        "samples": samples,
        "tools": cache.tool_versions("bpy"),
    }
    return cache.cache_key("blender-target", inputs, modules=_TARGET_SOURCES)


def _target_arrays(target: Target) -> dict[str, np.ndarray]:
    """A goal as plain arrays: its state packed as the sandbox protocol packs it (msgpack)."""
    arrays = {
        "state": np.frombuffer(protocol.pack({"state": target.goal.state}), dtype=np.uint8),
        "framing": np.array([*target.framing.center, target.framing.half_width], np.float64),
        "image": np.asarray(target.image, np.uint8),
        "blend": np.frombuffer(zlib.compress(target.blend), dtype=np.uint8),  # a fifth
    }
    for name in ("images", "resampled"):
        if getattr(target.goal, name) is not None:
            arrays[name] = np.asarray(getattr(target.goal, name), np.uint8)
    return arrays


def cached_target(key: str, task: Task) -> Target | None:
    """The goal stored under ``key``, or ``None`` (none, or arrays that are not a goal)."""
    arrays = cache.load(key)
    if arrays is None:
        return None
    state, framing, image = arrays.get("state"), arrays.get("framing"), arrays.get("image")
    blend, images, resampled = arrays.get("blend"), arrays.get("images"), arrays.get("resampled")
    shapes_ok = (
        state is not None
        and state.dtype == np.uint8
        and state.ndim == 1
        and framing is not None
        and framing.dtype == np.float64
        and framing.shape == (4,)
        and np.isfinite(framing).all()
        and framing[3] > 0
        and image is not None
        and image.dtype == np.uint8
        and image.ndim == 3
        and image.shape[2] == 3
        and blend is not None
        and blend.dtype == np.uint8
        and blend.ndim == 1
        and all(a is None or a.dtype == np.uint8 for a in (images, resampled))
        and (images is None) == (resampled is None) == (kind_of(task) not in RENDER_KINDS)
    )
    if not shapes_ok:
        return None
    try:
        unpacked = protocol.decode(state.tobytes())["state"]
        goal = Goal(kind_of(task), unpacked, dict(task.verification.thresholds), images, resampled)
        saved = zlib.decompress(blend.tobytes())
    except (
        protocol.ProtocolViolation,
        AttributeError,
        IndexError,
        KeyError,
        TypeError,
        ValueError,
        zlib.error,
    ):
        return None
    x, y, z, half_width = (float(v) for v in framing)
    return Target(goal, Framing((x, y, z), half_width), image, image_prompt(goal), saved)


def reference_blend(task: Task, limits: Limits | None = None) -> bytes:
    """The goal scene as ``.blend`` bytes: the task's start, then its reference, in a session."""
    return scene_blends(task, limits)[1]


# Views: one framing per task, from a fixed ladder of widths, on a grid of known size.
FRAME_HALF_WIDTHS = (0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0)  # m; views: 2×
FRAME_CENTER_STEP = 0.5  # m: the views' centre lies on this grid
GRID_COLOR = (0.80, 0.80, 0.80)
GRID_HEIGHT = 0.001  # m above the floor (z = 0): over a floor plane, under what stands on it


def task_framing(*bounds: np.ndarray | None) -> Framing:
    """One framing for every view of a task, current and target alike: centred on a
    :data:`FRAME_CENTER_STEP` grid, the smallest width of :data:`FRAME_HALF_WIDTHS` that shows
    all ``bounds`` (the start and the goal scenes). A part's own size only picks a rung of
    the ladder, so within a rung a bigger part draws bigger, and the ground grid (1 m, or
    0.25 m in frames under 2 m wide) tells the scale."""
    boxes = [np.asarray(b, dtype=np.float64) for b in bounds if b is not None]
    if not boxes:
        return Framing((0.0, 0.0, 0.0), FRAME_HALF_WIDTHS[1])
    low = np.min([b[0] for b in boxes], axis=0)
    high = np.max([b[1] for b in boxes], axis=0)
    center = np.round((low + high) / 2 / FRAME_CENTER_STEP) * FRAME_CENTER_STEP
    reach = float(np.linalg.norm(np.maximum(np.abs(high - center), np.abs(low - center))))
    half_width = next((w for w in FRAME_HALF_WIDTHS if w >= reach * 1.1), FRAME_HALF_WIDTHS[-1])
    return Framing(tuple(float(c) for c in center), half_width)


def grid_step(framing: Framing) -> float:
    """The ground grid's spacing (m) in ``framing``'s views: 1 m, 0.25 m in frames under 2 m
    wide (the narrowest a task has is 1.5 m), finer in the narrower frames of a look."""
    half = framing.half_width
    return 1.0 if half >= 1.0 else 0.25 if half >= 0.5 else 0.05 if half >= 0.1 else 0.01


def ground_grid(framing: Framing, view_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Lines on the floor (z = :data:`GRID_HEIGHT`) every :func:`grid_step` m, a pixel wide,
    covering the views: vertices (float64 (n, 3), m) and faces (int32 (m, 3))."""
    step, reach = grid_step(framing), 2.5 * framing.half_width
    width = 2 * framing.half_width / view_size
    cx, cy = framing.center[0], framing.center[1]
    lines = np.arange(math.floor((cx - reach) / step), math.ceil((cx + reach) / step) + 1) * step
    rows = np.arange(math.floor((cy - reach) / step), math.ceil((cy + reach) / step) + 1) * step
    quads = [((x - width / 2, cy - reach), (x + width / 2, cy + reach)) for x in lines]
    quads += [((cx - reach, y - width / 2), (cx + reach, y + width / 2)) for y in rows]
    vertices, faces = [], []
    for (x0, y0), (x1, y1) in quads:
        k = len(vertices)
        vertices += [
            (x0, y0, GRID_HEIGHT),
            (x1, y0, GRID_HEIGHT),
            (x1, y1, GRID_HEIGHT),
            (x0, y1, GRID_HEIGHT),
        ]
        faces += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    return np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32)


def framed_bounds(state: dict[str, Any]) -> np.ndarray | None:
    """Bounds (2×3, m) the views frame: the scene's meshes, leaving out flat ones (a floor)
    when any other exists, so the objects fill the views; ``None`` for no mesh."""
    boxes = [
        np.array([np.min(o["vertices"], axis=0), np.max(o["vertices"], axis=0)])
        for o in shown_objects(state).values()
        if len(o["vertices"])
    ]
    solid = [b for b in boxes if np.min(b[1] - b[0]) > 1e-6] or boxes
    if not solid:
        return None
    return np.array([np.min([b[0] for b in solid], axis=0), np.max([b[1] for b in solid], axis=0)])


def mesh_parts(state: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray, tuple[float, ...]]]:
    """The scene's meshes, each ``(vertices, faces, colour)``; the colour follows the name."""
    return [
        (np.asarray(o["vertices"]), np.asarray(o["faces"]), _color(name))
        for name, o in sorted(shown_objects(state).items())
    ]


def _color(name: str) -> tuple[float, float, float]:
    return PALETTE[zlib.crc32(name.encode()) % len(PALETTE)]


def scene_glb(state: dict[str, Any]) -> bytes:
    """The scene's evaluated meshes as GLB, one node per object (m)."""
    meshes = trimesh.Scene()
    for name, o in sorted(shown_objects(state).items()):
        if len(o["faces"]):
            meshes.add_geometry(trimesh.Trimesh(o["vertices"], o["faces"]), node_name=name)
    return meshes.export(file_type="glb")


def verify_script(
    task: Task, script: str, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    """Run the task's start program, then ``script``, in a fresh session (with ``limits``); save
    the scene and score it, as a fresh trusted session reads it, at the task's final tier."""
    started = time.perf_counter()
    reader = SceneReader()
    try:
        try:
            target = reader.target(task)
        except ReferenceBuildError as exc:
            return Outcome(task.id, None, "reference", str(exc), time.perf_counter() - started)
        with Session("blender", limits) as session:
            ran = session.run(task.start, filename=f"<start {task.id}>")
            ran = session.run(script, filename=filename) if ran.ok else ran
            if not ran.ok:
                message = ran.error.message if ran.error else "failed"
                return Outcome(task.id, None, "script", message, time.perf_counter() - started)
            framing = target.framing if target.goal.kind in RENDER_KINDS else None
            scene, why = reader.save_and_read(session, framing)
    finally:
        reader.close()
    if scene is None:
        return Outcome(task.id, None, "verifier", why, time.perf_counter() - started)
    tier = task.verification.final_tier
    report = verify_scene(scene.state, target.goal, tier, scene.images)
    kind = "verifier" if report.errors else None
    error = report.errors[0] if report.errors else None
    return Outcome(task.id, report, kind, error, time.perf_counter() - started)


def export_reference(task: Task, fmt: str) -> bytes:
    """The task's goal scene as ``blend`` or ``glb`` bytes, or its views as ``png``."""
    if fmt == "blend":
        return reference_blend(task)
    reader = SceneReader()
    try:
        if fmt == "glb":
            scene, why = reader.read(reference_blend(task))
            if scene is None:
                raise ReferenceBuildError(f"{task.id}: {why}")
            return scene_glb(scene.state)
        if fmt == "png":
            from PIL import Image

            buffer = io.BytesIO()
            Image.fromarray(reader.target(task).image).save(buffer, format="PNG")
            return buffer.getvalue()
    finally:
        reader.close()
    raise ValueError(f"unknown format {fmt!r}; known: blend, glb, png")


def target_image(task: Task, view_size: int = 256) -> np.ndarray:
    """The goal's iso, front, right and top views, labelled, as one RGB ``uint8`` tile."""
    from toolgym.renderers.labels import label_views

    reader = SceneReader(view_size)
    try:
        return label_views(reader.target(task).image)
    finally:
        reader.close()
