"""``toolgym/CadQuery-v0``: build a part in CadQuery, scored against a target part."""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np
import trimesh
from gymnasium import spaces

from toolgym.envs.cadquery.artifacts import Measurer, brep_note, export_brep, session_part
from toolgym.envs.cadquery.families import family
from toolgym.envs.cadquery.families.phrases import get_style
from toolgym.envs.cadquery.framing import grid_spacing, task_framing
from toolgym.envs.cadquery.tools import registry
from toolgym.envs.cadquery.verification import (
    exact_tolerance,
    reference_part,
    step_reference,
    verify_for_task,
)
from toolgym.envs.episode.look import View, ViewBox
from toolgym.envs.episode.loop import ToolEnv
from toolgym.envs.episode.options import EnvOptions, check_number
from toolgym.envs.sandbox import CallResult
from toolgym.envs.tasks.model import Task
from toolgym.renderers.mesh_views import DEFAULT_VIEWS, Framing, MeshRenderer, tile
from toolgym.verifiers.parts import Part
from toolgym.verifiers.report import VerifierReport

EXPORT_FORMATS = ("step", "stl", "glb")


def image_prompt(task: Task) -> str:
    """The prompt of ``prompt_form="image"``: the kind of task, no numbers (the target views
    say the rest)."""
    kind = f" It is a {task.family.replace('_', ' ')}." if task.family else ""
    if task.start:  # an edit: the views say the change, the program says where it starts
        return (
            "Change the part this program built (it has run: `result` is bound to the part) into "
            f"the one shown in the target views.{kind}\n\n```python\n{task.start}```"
        )
    return f"Build the part shown in the target views: match its shape, size and placement.{kind}"


@dataclass(frozen=True)
class CadQueryOptions(EnvOptions):
    """CadQuery's arguments: every tool's (:class:`EnvOptions`) and its own (see
    :class:`CadQueryEnv`)."""

    suite: str = "curated"
    _: KW_ONLY
    success_iou: float | None = None
    depth: bool = False
    style: str | None = None

    def check_own(self) -> None:
        if self.success_iou is not None:
            check_number("success_iou", self.success_iou, 0.01, 1.0)
        if self.style is not None:
            get_style(self.style)  # an unknown style: ValueError naming the known ones


class CadQueryEnv(ToolEnv):
    """Build a mechanical part in CadQuery, step by step or in one script.

    ## Description

    Each episode draws a task: a designer's request ("a 60 × 40 × 6 mm plate with four 5 mm holes
    8 mm in from each corner") and a hidden reference part. The agent writes CadQuery code, or calls
    CAD tools one at a time, in a sandboxed CadQuery session that keeps its state between steps.
    It sees its part and the target from four fixed views, and the tool's errors and logs.

    ## Action space

    ``action_mode="code"``: a CadQuery script (a string). ``cq`` and ``tools`` are in scope; the
    part is whatever the script binds to ``result`` (or passes to ``show_object``). Variables
    persist between steps, as in a REPL.

    ``action_mode="tool"``: one tool call per step, a dict or JSON text
    ``{"name": "add_box", "arguments": {"length": 60, ...}}`` applied to ``result``. See
    :meth:`tool_schemas` (function-calling JSON schemas) and :meth:`tool_grammar`. The call
    ``{"name": "stop"}`` ends the episode with the part as it stands (``terminated``, no penalty).

    In either mode, ``{"name": "look", "arguments": {"center": [x, y, z], "zoom": 4}}`` (mm;
    zoom 1 to 16) frames every view, the part's and the target's (and the depth tiles), on that
    point at 4× the task's magnification, until the next look; ``{"name": "look"}`` goes back
    to the task's frame. A look changes nothing and earns no reward, but costs a step; the
    feedback says the view while it lasts (``toolgym.envs.episode.look``). At zoom 4 a 64-px
    view of the primitives' frame is 0.86 mm a pixel instead of 3.45.

    The space is :class:`~toolgym.envs.episode.spaces.UnicodeText` of ``max_action_chars``
    characters.

    ## Observation space

    A ``Dict``: ``image`` and ``target``, uint8 ``(2·view_size, 2·view_size, 3)`` tiles of the
    iso, front, right and top views (orthographic; ``target`` is black when
    ``show_target=False``); ``prompt``, the task text (``prompt_form="described"``: the request
    with its numbers; ``"image"``: only the kind of part, no numbers, so only the target views
    say what to build); ``feedback``,
    the script's output and errors plus a one-line verifier summary; ``step``, steps taken.
    With ``depth=True``, also ``depth`` and ``target_depth``: float32 ``(2·view_size,
    2·view_size, 2)`` tiles laid out as the images, in mm, of where each pixel's ray meets the
    part: with ``b`` the unit vector from the part towards that view's camera and ``p`` the
    points where the ray through the pixel centre crosses the part's surface, channel 0 is
    ``max(p · b)`` (the surface facing the camera) and channel 1 ``max(-p · b)`` (the surface
    facing away); ``-inf`` where the ray misses (and everywhere in ``target_depth`` when
    ``show_target=False``). A view's largest value in each channel is the part's exact extent
    along its axis, whatever the pixel size: the front, right and top views give ``-y`` and
    ``y``, ``x`` and ``-x``, ``z`` and ``-z``. (An RGB view shows an edge to a pixel, 3.45 mm
    in the primitives' frame at 64 px; the exact tier pays for 0.5 mm. For image-only prompts
    read from RGB alone, size the views for the tier: a calibrated pixel-exact reader of the
    silhouettes scores at most 0.44-0.47 at 64 px a view, 0.60-0.63 at 128, 0.76-0.81 at 256
    and 0.96-0.98 at 512; ``bench/rgb_ceiling.py``. Or look closer: see ``look`` above.)

    Framing: both images of a task share one fixed frame that does not depend on the part's
    size (``toolgym.envs.cadquery.framing``): a procedural family's envelope (the box that holds
    every part the family draws), or for a hand-written task the smallest of a fixed ladder of
    frames (10, 15, 25, 40, 60, 100, ... mm half-width) about the origin that holds the target.
    So a bigger part covers more pixels and a moved part moves. A light-grey ground grid lies
    under the part, lines every 1, 2, 5, 10, 20, 50 ... mm (about eight cells across the frame,
    the same for every task of a family), a darker line along each world axis: a scale to read.

    ## Rewards

    The change in the verifier's composite score (in [0, 1]; IoU, surface and feature checks,
    see ``toolgym.verifiers.cad``) since the last step, computed by the cheap per-step verifier. A
    step that fails (exception, crash, timeout, limit, invalid tool call, no solid, an invalid
    solid: not watertight, self-intersecting, inside-out; a part over the verifier's budget) gives
    ``-error_penalty`` and is undone. At the
    episode's end the exact verifier scores the final part and the last reward settles the
    difference, so the return is the exact final score minus penalties (see ``final_tier``).

    ## Episode end

    Terminated when the per-step verifier passes the part: IoU at least ``success_iou`` (default:
    the task's threshold, 0.95) and every feature check met (through-holes, cavities, bodies, face
    inventory, surface deviation; see ``toolgym.verifiers.cad``). Truncated after ``max_steps``
    steps. Cap an episode's length with ``max_steps``, not with a ``TimeLimit`` wrapper
    (``gym.make(..., max_episode_steps=N)``): the environment cannot see a wrapper's cut, so the
    exact verifier would not settle the score and ``info`` would have no ``final_report``. The
    environment is registered without a ``max_episode_steps``.

    ## Arguments

    Every tool's (:class:`~toolgym.envs.episode.options.EnvOptions` lists them, with defaults and
    ranges): ``suite`` (here ``"curated"``), ``split``, ``task``, ``action_mode``, ``max_steps``,
    ``view_size``, ``show_target``, ``error_penalty``, ``max_action_chars``, ``limits``,
    ``render_mode``, ``timings_in_info``, ``final_tier``, ``prompt_form``; and CadQuery's own
    (:class:`CadQueryOptions`):

    - ``success_iou`` (None: the task's threshold; else 0.01 to 1).
    - ``depth`` (False): add the ``depth`` and ``target_depth`` observations (one more ray cast
      per view and step).
    - ``style`` (None: as the suite words it): say every procedural task's described prompt in
      this style of the phrase bank (``toolgym.envs.cadquery.families.phrases.STYLES``: mm, cm
      or inches, diameters or radii, synonyms, the order of the sentences); the part is the same.

    Edit tasks (``cad-edits``): the episode starts from the task's part, its program already run
    (``result`` is bound to it, and the first image shows it); the prompt gives the program and
    asks for a change, and the target is the changed part; with ``prompt_form="image"`` the
    prompt gives the program and says only that the target views show the change.

    ``final_tier``: both tiers score the same solid (the BREP the last good step exported,
    measured by a session that runs no agent code), the exact tier more finely and with a B-Rep
    cross-check. An argument out of range raises ``ValueError`` saying which and why.

    ## Info

    ``task``; ``report`` (the per-step verifier report); ``final_report`` at the end; ``error``
    when a step failed; ``isolation`` (the sandbox's active layers); ``sandbox``, what the step's
    sandbox call returned, flat and with the same keys every step: ``ran`` (False when the
    action never reached the sandbox), ``ok``, ``error_kind``, ``error_message``, ``limit`` (the
    :class:`Limits` field breached), ``stdout``, ``stderr``, ``traceback``, bytes dropped,
    ``recovery`` (see ``toolgym.envs.episode.loop.sandbox_info``); with ``timings_in_info``,
    ``timings`` (seconds: exec, tessellate, verify, render, and
    snapshot, the wait for the snapshot of a good step's state taken while it was verified; or
    rollback, for a failed step), ``sandbox_wall_s``, and the call's
    ``duration_s`` and ``wall_s`` in ``sandbox``. ``toolgym.envs.RecordEpisodes`` records it all.

    ## Example

        >>> import gymnasium as gym, toolgym
        >>> env = gym.make("toolgym/CadQuery-v0", suite="primitives")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(
        ...     "result = cq.Workplane().box(10, 10, 10)")
    """

    backend = "cadquery"
    registry = registry
    look_center = (3, "mm")
    export_formats = EXPORT_FORMATS  # what :meth:`export` writes; the first is its default

    Options = CadQueryOptions
    options: CadQueryOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # checks the arguments
        self.success_iou, self.depth = self.options.success_iou, bool(self.options.depth)
        # Per task: the reference, the reference meshed as a step's part, the frame, the target
        # image, and (``depth``) the target's reach tile.
        self._targets: dict[str, tuple[Part, Part, Framing, np.ndarray, np.ndarray | None]] = {}
        self._note: str | None = None  # which object the session scored, when not obvious
        self._brep_iou: float | str | None = None  # the exact tier's B-Rep cross-check
        # Measures every step's part, and the final one, from the BREP the agent's session
        # exported, in a session that runs no agent code (started on the first measurement).
        self._measurer = Measurer()
        # The last part measured, by the BREP bytes and tolerance it was measured from: the same
        # bytes again (a step that did not change the part) measure the same, so they are not
        # sent again, and the loop neither verifies nor renders the very same part twice.
        self._measured: tuple[bytes, float, Part] | None = None
        self.renderer = MeshRenderer(self.view_size)
        self._reach: np.ndarray | None = None  # the current part's reach tile (``depth``)
        if self.depth:
            shape = (*self._image_shape(self.view_size)[:2], 2)
            reach = spaces.Box(-np.inf, np.inf, shape, np.float32)
            self.observation_space = spaces.Dict(
                {**self.observation_space.spaces, "depth": reach, "target_depth": reach}
            )

    def _image_shape(self, view_size: int) -> tuple[int, int, int]:
        rows = -(-len(DEFAULT_VIEWS) // 2)
        return (rows * view_size, 2 * view_size, 3)

    def _chosen(self, task: Task) -> Task:
        style = self.options.style
        if style is None or task.style is None or task.family is None or task.seed is None:
            return task
        if task.start or style == task.style:
            return task  # an edit says its change in the suite's words; the part is the same
        prompt = family(task.family).describe(dict(task.parameters), style, task.seed)
        return dataclasses.replace(task, prompt=prompt, style=style)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        assert self.task is not None
        if self.task.start:  # an edit: show and keep the part it starts from
            candidate, _ = self._candidate()
            self._image, self._part = self._render(candidate), candidate
            obs = self._observation("")
        return obs, info

    def _prepare(self, task: Task) -> np.ndarray:
        if task.id not in self._targets:
            reference = reference_part(task)
            # The target meshed as each step's part is: the per-step verifier compares like with
            # like, and a right part renders pixel for pixel as the target (the reference itself
            # is meshed finer, for the exact tier).
            coarse = step_reference(task, reference)
            framing = task_framing(task.family, reference.mesh.bounds)
            image = tile(self.renderer.render(coarse.mesh, framing, depth=False).rgb)
            reach = tile(self.renderer.reach(coarse.mesh, framing)) if self.depth else None
            self._targets[task.id] = (reference, coarse, framing, image, reach)
        targets = self._targets[task.id]
        self._reference, self._step_reference, self._framing, image, reach = targets
        self._task_framing = self._framing  # what a look without arguments goes back to
        if reach is not None:
            self._target_reach = reach if self.show_target else np.full_like(reach, -np.inf)
        return image

    def _image_prompt(self) -> str:
        assert self.task is not None
        return image_prompt(self.task)

    def _observation(self, feedback: str) -> dict[str, Any]:
        obs = super()._observation(feedback)
        if self.depth:
            assert self._reach is not None
            obs["depth"], obs["target_depth"] = self._reach.copy(), self._target_reach.copy()
        return obs

    def _candidate(self) -> tuple[Part | None, str | None]:
        """The session's solid as BREP bytes, measured by the env's :class:`Measurer` (a
        session that runs no agent code) at the per-step tolerance: the one mesh the per-step
        verifier scores and the views show, of the very solid the exact tier scores."""
        assert self.session is not None
        brep, result = export_brep(self.session)
        self._note = brep_note(result)
        if brep is None:
            return _part_or_error(None, result)
        tolerance = self._step_reference.tolerance
        if self._measured is not None and self._measured[:2] == (brep, tolerance):
            return self._measured[2], None
        measured = self._measurer.measure(brep, tolerance=tolerance)
        if measured.part is not None and measured.error is None:
            self._measured = (brep, tolerance, measured.part)
        return measured.part, measured.error

    def _exact(self, candidate: Part) -> tuple[Part | None, str | None]:
        """The last good step's solid (the BREP bytes that step exported, not asked for again)
        measured finely, with a B-Rep boolean against the reference as a cross-check."""
        assert self.task is not None and candidate.brep is not None
        self._brep_iou = None
        measured = self._measurer.measure(
            candidate.brep,
            tolerance=exact_tolerance(self.task, self._reference),
            reference_brep=self._reference.brep,
        )
        self._brep_iou = measured.brep_iou
        return measured.part, measured.error

    def _verify(self, candidate: Part | None, tier: str) -> VerifierReport:
        assert self.task is not None
        return verify_for_task(
            self.task,
            candidate,
            self._step_reference if tier == "cheap" else self._reference,
            tier,
            brep_iou=self._brep_iou if tier == "exact" else None,
            success_iou=self.success_iou,
        )

    def _feedback(self, outcome: Any, summary: str) -> str:
        return super()._feedback(outcome, f"{self._note}; {summary}" if self._note else summary)

    def _render(self, candidate: Part | None) -> np.ndarray:
        mesh = candidate.mesh if candidate is not None else None
        if self.depth:
            self._reach = tile(self.renderer.reach(mesh, self._framing))
        return tile(self.renderer.render(mesh, self._framing, depth=False).rgb)

    def _succeeded(self, report: VerifierReport) -> bool:
        return report.passed

    def _view_box(self) -> ViewBox:
        return ViewBox(*self._task_framing.box(), "mm")

    def _reframe(self, view: View | None) -> tuple[np.ndarray, np.ndarray]:
        """A look: the same cameras on ``view.center``, the field ``zoom`` times narrower, the
        grid as fine as it then needs (``grid_spacing``), on the same floor."""
        task = self._task_framing
        if view is None:
            self._framing = task
        else:
            spacing = grid_spacing(task.half_width / view.zoom)
            self._framing = task.zoomed(view.center, view.zoom, grid=spacing)
        image = self._render(self._part)
        target = self._step_reference.mesh
        target_image = tile(self.renderer.render(target, self._framing, depth=False).rgb)
        if self.depth:
            reach = tile(self.renderer.reach(target, self._framing))
            self._target_reach = reach if self.show_target else np.full_like(reach, -np.inf)
        return image, target_image

    def export(self, fmt: str = "step") -> bytes:
        """The current part as STEP, STL or GLB bytes."""
        if self.session is None:
            raise RuntimeError("call reset() before export()")
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown format {fmt!r}; use one of {EXPORT_FORMATS}")
        if fmt == "glb":
            part, result = session_part(self.session)
            if part is None:
                raise ValueError(f"no part to export: {result.feedback()}")
            return trimesh.Trimesh(part.mesh.vertices, part.mesh.faces).export(file_type="glb")
        result = self.session.request("export", {"format": fmt})
        if not result.ok or not isinstance(result.value, bytes):
            raise ValueError(f"no part to export: {result.feedback()}")
        return result.value

    def close(self) -> None:
        super().close()
        self._measurer.close()
        self.renderer.close()


def _part_or_error(part: Part | None, result: CallResult) -> tuple[Part | None, str | None]:
    if part is None:
        return None, result.error.message if result.error else "the session returned no part"
    return part, None
