"""``toolgym/Blender-v0``: model, place, texture, light and deform scenes in headless Blender."""

from __future__ import annotations

import io
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
from PIL import Image

from toolgym.envs.blender.families.phrases import get_style
from toolgym.envs.blender.tools import registry
from toolgym.envs.blender.verification import (
    DEFAULT_SAMPLES,
    RENDER_KINDS,
    Scene,
    SceneReader,
    Target,
    kind_of,
    scene_glb,
)
from toolgym.envs.blender.verifier import verify_scene
from toolgym.envs.episode.look import View, ViewBox
from toolgym.envs.episode.loop import ToolEnv
from toolgym.envs.episode.options import EnvOptions, check_int
from toolgym.envs.tasks.families import restyled
from toolgym.envs.tasks.model import Task
from toolgym.renderers.mesh_views import DEFAULT_VIEWS
from toolgym.verifiers.report import VerifierReport

EXPORT_FORMATS = ("blend", "glb", "png")
SAMPLES_RANGE = (1, 1024)


@dataclass(frozen=True)
class BlenderOptions(EnvOptions):
    """Blender's arguments: every tool's (:class:`EnvOptions`) and its own (see
    :class:`BlenderEnv`)."""

    suite: str = "blender-procedural"
    _: KW_ONLY
    render_samples: int = DEFAULT_SAMPLES
    style: str | None = None

    def check_own(self) -> None:
        check_int("render_samples", self.render_samples, *SAMPLES_RANGE, "samples per pixel")
        if self.style is not None:
            get_style(self.style)  # an unknown style: ValueError naming the known ones


class BlenderEnv(ToolEnv):
    """Build, arrange, texture, light and deform scenes in a sandboxed headless Blender.

    ## Description

    Each episode draws a task of one of six kinds: **modelling** (build an object from a
    description: a table, stairs, a shelf), **placement** (move, rotate and scale a start scene's
    objects), **material** (Principled BSDF inputs), **shape keys** (blend-shape values),
    **lighting** (light type, power, colour, position) and **procedural geometry** (modifier
    settings: array count, bevel width, screw steps). The episode starts from the task's start
    scene; the goal is the scene its hidden reference program builds. The agent edits the scene
    with ``bpy`` scripts or one tool call per step, in a sandboxed Blender session that keeps its
    state between steps.

    Rewards cannot be faked from inside the session: after each step the session saves its scene
    as a ``.blend`` in its workspace, and a separate process that runs no agent code loads it with
    Python auto-execution off (no driver expression, text block or registered script runs),
    extracts the scene's state as plain data and renders it. Whatever a script does to ``bpy`` in
    its own process, only the saved scene is scored, as a final render evaluates and draws it
    (render visibility, render-side modifier settings, faces wound as rendered; see
    ``toolgym.envs.blender.evaluation``): what the views show is what is scored.

    ## Action space

    ``action_mode="code"``: a ``bpy`` script (a string); ``bpy`` and ``tools`` are in scope
    (``tools.set_location("Crate", 1, 0, 0.5)``), and variables persist between steps.
    ``action_mode="tool"``: one tool call per step, a dict or JSON text
    ``{"name": "set_location", "arguments": {"name": "Crate", "x": 1, ...}}``. See
    :meth:`tool_schemas` and :meth:`tool_grammar` (29 tools, on objects, modifiers, materials
    and node graphs, shape keys and lights: the README lists them). The space is
    :class:`~toolgym.envs.episode.spaces.UnicodeText`.

    In either mode, ``{"name": "look", "arguments": {"center": [x, y, z], "zoom": 4}}`` (m;
    zoom 1 to 16) frames the four views, the scene's and the target's, on that point at 4× the
    task's magnification until the next look; ``{"name": "look"}`` goes back to the task's
    frame. A look changes nothing and earns no reward, but costs a step
    (``toolgym.envs.episode.look``). On the mesh kinds only: a material or lighting task's
    views are Cycles renders from fixed cameras, and a look there is refused.

    ## Observation space

    A ``Dict``: ``image`` and ``target``, uint8 ``(2·view_size, 2·view_size, 3)`` tiles of four
    fixed orthographic views (iso, front, right, top) in one framing per task shared by both
    (centred on a 0.5 m grid, the smallest width of a fixed ladder that shows the start and
    goal scenes: see ``verification.task_framing``), over a ground grid of 1 m squares (0.25 m
    in frames under 2 m wide) that gives the scale; ``prompt``
    (``prompt_form="described"``: the task with its numbers; ``"image"``: no numbers, as in
    BlenderGym, so only the target images say what to do); ``feedback`` (the script's output
    and errors and a verifier summary that names what is off); ``step``.

    Which renderer draws which kind, and why:

    - modelling, placement, shape keys, procedural: the Panda3D mesh renderer
      (``renderers/mesh_views.py``) on the evaluated meshes the trusted process extracted, one
      colour per object (by name, so an object has the same colour in both images). Geometry is
      what these kinds are about, and this renderer is fast (milliseconds) and deterministic.
    - material, lighting: Blender's own Cycles renders (CPU, ``render_samples`` samples, seed 0,
      no denoising, one thread: deterministic), made by the trusted process in one throwaway fork
      for all four views, with fixed cameras and a fixed dark world. Only a path tracer shows
      roughness, metalness, emission and light; EEVEE needs a GPU.

    ## Rewards

    The change in the verifier's score (in [0, 1], see ``toolgym.envs.blender.verifier``) since the
    last step: mesh IoU and surface F-score (modelling, procedural), per-object world-geometry
    error and extra meshes (placement), the node graph's surface (Lab ΔE, parameters) plus the
    renders (material), vertex error (shape keys), light parameters plus renders (lighting).
    A failed step (exception, crash, timeout, invalid tool call, a scene the trusted process
    cannot read) gives ``-error_penalty`` and is undone. The return is the final score minus
    penalties.

    ## Episode end

    Terminated when the verifier passes the scene (every kind's thresholds met, see
    ``DEFAULT_THRESHOLDS``); truncated after ``max_steps``. Use ``max_steps``, not a
    ``TimeLimit`` wrapper (see ``CadQueryEnv``).

    ## Arguments

    Every tool's (:class:`~toolgym.envs.episode.options.EnvOptions` lists them, with defaults and
    ranges; ``suite`` here ``"blender-procedural"``), and Blender's own (:class:`BlenderOptions`):

    - ``render_samples`` (16; 1 to 1,024): Cycles samples per pixel for material and lighting.
    - ``style`` (None: as the suite words it): say every styled family's task in this style of
      the phrase bank (``toolgym.envs.blender.families.phrases.STYLES``: m, cm or feet, points
      as tuples, named or relative to an object, synonyms, order); the scene is the same.

    ## Info

    ``task``, ``kind``, ``report``, ``final_report`` at the end, ``error``, ``isolation``; with
    ``timings_in_info``, ``timings`` (seconds: exec; tessellate, the whole trusted read; verify;
    render; and its parts: ``read_save`` in the agent's session, ``read_load``,
    ``read_extract`` and ``read_cycles`` in the trusted one, ``read_trusted_read`` their round
    trip, ``read_rollback`` what was left to wait for of the trusted session's return to its
    clean snapshot after the last read, which runs in the background; ``snapshot``, the wait for
    the snapshot of a good step's state, taken while it was verified; ``rollback``, a failed
    step's) and ``sandbox_wall_s``.

    ## Example

        >>> import gymnasium as gym, toolgym
        >>> env = gym.make("toolgym/Blender-v0", task="blender-placement/two-crates")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(
        ...     "tools.set_location('Crate', 1, 0, 0.5)")
    """

    backend = "blender"
    registry = registry
    look_center = (3, "m")  # on the mesh kinds (see _no_look)

    Options = BlenderOptions
    options: BlenderOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # checks the arguments
        self.render_samples = self.options.render_samples
        self._targets: dict[str, Target] = {}
        self._starts: dict[str, tuple[Scene | None, np.ndarray]] = {}  # the start, read, shown
        for t in self.tasks:
            if t.domain != "blender":
                raise ValueError(f"task {t.id!r} is a {t.domain} task, not a Blender one")
        self.reader = SceneReader(self.view_size, self.render_samples)  # the trusted process

    @property
    def kind(self) -> str:
        assert self.task is not None
        return kind_of(self.task)

    # -- domain hooks -----------------------------------------------------------------------------
    def _image_shape(self, view_size: int) -> tuple[int, int, int]:
        rows = -(-len(DEFAULT_VIEWS) // 2)
        return (rows * view_size, 2 * view_size, 3)

    def _chosen(self, task: Task) -> Task:
        from toolgym.envs.blender.domain import FAMILIES_BY_SUITE

        return restyled(task, FAMILIES_BY_SUITE, self.options.style)

    def _prepare(self, task: Task) -> np.ndarray:
        if task.id not in self._targets:
            self._targets[task.id] = self.reader.target(task, self.limits)
        self._target = self._targets[task.id]
        self._framing = self._target.framing  # a look reframes the views (``_reframe``)
        return self._target.image

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        _obs, info = super().reset(seed=seed, options=options)
        assert self.session is not None and self.task is not None
        if not self.task.start:
            self._good_snapshot = self.session.snapshot()
        if self.task.id not in self._starts:  # the start scene is the task's: render it once
            candidate, _ = self._candidate()
            self._starts[self.task.id] = (candidate, self._render(candidate))
        self._image = self._starts[self.task.id][1]
        info["kind"] = self.kind
        return self._observation(""), info

    def _candidate(self) -> tuple[Scene | None, str | None]:
        assert self.session is not None
        framing = self._target.framing if self.kind in RENDER_KINDS else None
        scene, why = self.reader.save_and_read(self.session, framing)
        return scene, (why or None) if scene is None else None

    def _exact(self, candidate: Scene) -> tuple[Scene | None, str | None]:
        return candidate, None  # already read by the trusted process

    def _verify(self, candidate: Scene | None, tier: str) -> VerifierReport:
        state = candidate.state if candidate is not None else None
        images = candidate.images if candidate is not None else None
        return verify_scene(state, self._target.goal, tier, images)

    def _render(self, candidate: Scene | None) -> np.ndarray:
        shape = self._image_shape(self.view_size)
        if candidate is None:
            return np.full(shape, 255, dtype=np.uint8)
        return self.reader.views(candidate, self._framing)

    def _succeeded(self, report: VerifierReport) -> bool:
        return report.passed

    def _view_box(self) -> ViewBox | None:
        if self.kind in RENDER_KINDS:
            return None  # Cycles renders from fixed cameras: see _no_look
        return ViewBox(*self._target.framing.box(), "m")

    def _no_look(self) -> str:
        if self.task is not None and self.kind in RENDER_KINDS:
            return (
                f"a {self.kind} task's views are Cycles renders from fixed cameras; look works "
                "on modelling, placement, shape-key and procedural tasks"
            )
        return super()._no_look()

    def _reframe(self, view: View | None) -> tuple[np.ndarray, np.ndarray]:
        """A look: the mesh renderer's cameras on ``view.center``, the field ``zoom`` times
        narrower (the grid finer: ``grid_step``); the scene shown is the last good step's, or
        the task's start. Only on the mesh kinds: ``_view_box`` refuses the Cycles ones first."""
        assert self.task is not None
        task = self._target.framing
        self._framing = task if view is None else task.zoomed(view.center, view.zoom)
        shown = self._part if self._part is not None else self._starts[self.task.id][0]
        return self._render(shown), self.reader.mesh_views(self._target.goal.state, self._framing)

    def _image_prompt(self) -> str:
        return self._target.prompt

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self.reader.timings = {}
        obs, reward, terminated, truncated, info = super().step(action)
        info["kind"] = self.kind
        if self.timings_in_info:  # the trusted read's parts (see SceneReader.timings)
            info["timings"] |= {f"read_{k}": v for k, v in self.reader.timings.items()}
        return obs, reward, terminated, truncated, info

    # -- exports ----------------------------------------------------------------------------------
    def export(self, fmt: str = "blend") -> bytes:
        """The current scene as ``.blend`` bytes, its evaluated meshes as GLB (one node per
        object, Blender's Z-up world coordinates in m, as read by the trusted process), or the
        current views as PNG."""
        if self.session is None:
            raise RuntimeError("call reset() before export()")
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown format {fmt!r}; use one of {EXPORT_FORMATS}")
        if fmt == "png":
            buffer = io.BytesIO()
            Image.fromarray(self._image).save(buffer, format="PNG")
            return buffer.getvalue()
        saved = self.session.request("save")
        if not saved.ok or not isinstance(saved.value, bytes):
            raise ValueError(f"no scene to export: {saved.feedback()}")
        if fmt == "blend":
            return saved.value
        scene, why = self.reader.read(saved.value)
        if scene is None:
            raise ValueError(why)
        return scene_glb(scene.state)

    def close(self) -> None:
        super().close()
        if hasattr(self, "reader"):
            self.reader.close()


__all__ = ["BlenderEnv"]
