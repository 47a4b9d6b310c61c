"""``toolgym/GameScene-v0``: game levels, physics set-ups and game logic on Panda3D + Bullet."""

from __future__ import annotations

import json
from concurrent.futures import Future
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

from toolgym.envs.episode.look import View, ViewBox
from toolgym.envs.episode.loop import ToolEnv
from toolgym.envs.episode.options import EnvOptions
from toolgym.envs.scene.families import task_spec
from toolgym.envs.scene.families.phrases import get_style
from toolgym.envs.scene.replay import LogicReplay
from toolgym.envs.scene.tools import registry
from toolgym.envs.scene.verification import (
    Action,
    Candidate,
    TrustedSimulator,
    candidate_of,
    merged,
    reference_scene,
    scene_glb,
    verify_candidate,
)
from toolgym.envs.tasks.families import restyled
from toolgym.envs.tasks.model import Task
from toolgym.envs.tools import ToolCallError
from toolgym.verifiers.report import VerifierReport

EXPORT_FORMATS = ("json", "glb")
IMAGE_PROMPTS = {  # prompt_form="image": the kind of task, no numbers, no names of places
    "layout": "Furnish the room as the target views show.",
    "physics": "Arrange the objects as the target views show, so that the set-up works.",
    "logic": "Script the game logic this level needs; the target views show the level.",
}


def image_prompt(kind: str, template: str) -> str:
    """The prompt of ``prompt_form="image"``: the kind of task and its template, no numbers."""
    what = IMAGE_PROMPTS.get(kind, "Build the scene the target views show.")
    return f"{what} It is a {template.replace('_', ' ')} task."


@dataclass(frozen=True)
class GameSceneOptions(EnvOptions):
    """The game scene's arguments: every tool's (:class:`EnvOptions`) and its own (see
    :class:`GameSceneEnv`)."""

    suite: str = "scene-curated"
    _: KW_ONLY
    style: str | None = None

    def check_own(self) -> None:
        if self.style is not None:
            get_style(self.style)  # an unknown style: ValueError naming the known ones


class GameSceneEnv(ToolEnv):
    """Build a game scene: furnish a level, arrange a physics set-up, or script game logic.

    ## Description

    Each episode draws a task of one of three kinds. **Layout**: furnish a room so that relations
    hold (counts, on, next to, facing, against a wall, inside the room, no interpenetration, a
    walkway from the door). **Physics outcome**: arrange things so that, after simulating, a
    condition holds (a stack stands, a ball reaches the goal, a ramp carries a ball over a wall,
    every domino falls). **Game logic**: write behaviour that must happen when the game runs (a
    door opens when the player enters a zone and only then, coins vanish and are counted, a
    platform moves between waypoints, a spawner emits objects). The agent works in a sandboxed
    Panda3D + Bullet session holding the task's level as ``world``
    (``toolgym.envs.scene.runtime``), whose state persists between steps.

    ## Action space

    ``action_mode="code"``: a Python script. In scope: ``world`` (the scene API: ``spawn``,
    ``trigger``, ``on_update``, ``after``, ``every``, ``mover``, ``spawner``, ``player_path``,
    ``run``, ``events`` ...), ``tools`` (the tool registry's functions), ``core`` and ``bullet``
    (Panda3D, usable directly), ``scene`` (the root ``NodePath``).

    ``action_mode="tool"``: one tool call per step, a dict or JSON text
    ``{"name": "spawn", "arguments": {"asset": "crate", "x": 1}}``: ``spawn``, ``spawn_row``,
    ``spawn_stack``, ``move``, ``rotate``, ``delete``, ``set_body``, ``set_velocity``,
    ``add_trigger``, ``on_trigger``, ``add_waypoint_mover``, ``add_spawner``, ``simulate``,
    ``clear``. See :meth:`tool_schemas` and :meth:`tool_grammar`.

    In either mode, ``{"name": "look", "arguments": {"center": [x, y], "zoom": 4}}`` (m on
    the floor; zoom 1 to 16) frames both views, the scene's and the target's, on that point at
    4× the task's magnification until the next look; ``{"name": "look"}`` goes back to the
    task's area. A look changes nothing and earns no reward, but costs a step
    (``toolgym.envs.episode.look``).

    The space is :class:`~toolgym.envs.episode.spaces.UnicodeText` of ``max_action_chars``
    characters.

    ## Observation space

    A ``Dict``: ``image`` and ``target``, uint8 ``(view_size, 2·view_size, 3)``: the scene from a
    fixed perspective camera (left) and from above, orthographic (right), framed on the task's
    area so both line up; the target is the reference scene (goal zones and triggers drawn as
    patches on the floor; black with ``show_target=False``). The frame is the task's area
    (its room or play field, fixed per task), never the objects' own extent, so sizes and
    places show. ``prompt``, the task text (``prompt_form="described"``), or only the kind of
    task and its template's name, no numbers (``"image"``: the target views say the rest);
    ``feedback``, the script's output and errors, what a tool did, and the verifier's verdict
    with the failing constraints in words ("chair_2 faces 74° away from table_1") and every
    change the verifier refused or ignored ("crate_1 was given a static body (the catalogue's
    dynamic is kept)", "ball_1's velocity was set (the task does not let it change)"); ``step``.

    ## Rewards

    The change of the verifier's score since the last step (cheap tier). The score is the
    weighted fraction of constraints met, where a failed constraint earns half its shaping term
    (how close the ball came, how many dominoes fell). A step that fails (exception, crash,
    timeout, limit, invalid tool call, a world that cannot be described) gives ``-error_penalty``
    and is undone. At the end the exact tier settles the score: for physics and layout, the full
    simulation repeated under seeded perturbations of every placed object (±1 mm, ±0.5°); for
    logic, every held-out player path. The return is the exact final score minus penalties.

    ## Verification

    Layout and physics scenes are exported as plain data, merged with the task's own level and
    rebuilt and simulated by a trusted session that never runs agent code: callbacks do not carry
    over (teleporting the ball gains nothing). Placed objects keep their catalogue body, mass,
    friction and restitution and start at rest; a physics set-up must start upright, supported
    and apart before its outcome counts. Logic is replayed from the agent's successful steps
    on a fresh copy of the level (in a logic session kept per level, from the state its steps
    left before any play: ``replay.py``), but only decides: a trusted session owns the
    world, walks the verifier's own held-out player paths (some enter the zone, some pass beside
    it) and asks the agent's session for actions when a callback is due; the checks read only
    the trusted session's state.

    ## Episode end

    Terminated when the per-step verifier passes (every constraint met); truncated after
    ``max_steps``. Cap episodes with ``max_steps``, not a ``TimeLimit`` wrapper (the exact tier
    would not run).

    ## Arguments

    Every tool's (:class:`~toolgym.envs.episode.options.EnvOptions` lists them, with defaults and
    ranges; ``suite`` here ``"scene-curated"``), and the game scene's own
    (:class:`GameSceneOptions`):

    - ``style`` (None: as the suite words it): say every styled family's task in this style of
      the phrase bank (``toolgym.envs.scene.families.phrases.STYLES``: m, cm or feet, points as
      tuples, named or relative to an object, synonyms, order); the level and its rules are the
      same.

    ## Info

    ``task``; ``report`` (per-step verifier report, ``checks`` one per constraint with
    ``ok``/``message``); ``final_report`` at the end; ``error`` when a step failed;
    ``isolation``; with ``timings_in_info``, ``timings`` (seconds: exec, tessellate (the scene's
    description read from the session), verify, render, and snapshot, the wait for the snapshot
    of a good step's state taken while it was verified; or rollback, for a failed step).

    ## Example

        >>> import gymnasium as gym, toolgym
        >>> env = gym.make("toolgym/GameScene-v0", task="scene-curated/roll-east")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(
        ...     "world.get('ball_1').set_velocity((2, 0, 0))")
    """

    backend = "scene"
    registry = registry
    look_center = (2, "m")  # on the floor

    Options = GameSceneOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # checks the arguments
        self._targets: dict[str, np.ndarray] = {}
        self._actions: list[Action] = []  # the successful steps so far (logic is replayed)
        self._pending: Action | None = None
        self._ignored = ""  # the last report's changes the verifier ignored, in words
        from toolgym.envs.scene.views import SceneRenderer

        self.renderer = SceneRenderer(self.view_size)
        self.simulator = TrustedSimulator()
        self.replay = LogicReplay(self.limits)  # where a logic task's steps are replayed
        self._scene: dict[str, Any] | None = None

    def _image_shape(self, view_size: int) -> tuple[int, int, int]:
        return (view_size, 2 * view_size, 3)

    def _chosen(self, task: Task) -> Task:
        from toolgym.envs.scene.domain import FAMILIES_BY_SUITE

        return restyled(task, FAMILIES_BY_SUITE, self.options.style)

    def _prepare(self, task: Task) -> np.ndarray:
        self._spec = task_spec(task)  # refuses a prompt that states a relation nothing checks
        if self._spec.kind != "logic":
            self.replay.close()
        self._actions, self._pending, self._scene = [], None, None
        self._aim: tuple[float, float, float] | None = None  # x, y, zoom (None: the area's)
        self._start: Candidate | None = None  # an edit's start, as replayed at reset
        if task.id not in self._targets:
            self._targets[task.id] = self.renderer.render(reference_scene(task), self._spec.bounds)
        return self._targets[task.id]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        assert self.task is not None
        if self.task.start:  # an edit: the start is replayed with the steps, and shown
            self._actions = [("code", self.task.start)]
            candidate, _ = self._candidate()
            self._start = candidate
            if candidate is not None:
                self._image = self._render(candidate)
                observation = self._observation("")
        return observation, info

    def _prime(self) -> bool:
        assert self.session is not None
        self.session.request("load", {"description": self._spec.level})
        return True  # the level, before any step

    def _act(self, action: Any) -> tuple[Any, str | None]:
        self._pending = None
        if self.action_mode == "code" and isinstance(action, str):
            self._pending = ("code", action)
        elif self.action_mode == "tool":
            try:
                tool, arguments = self.registry.parse_call(action)
                self._pending = ("tool", {"name": tool.name, "arguments": arguments})
            except ToolCallError:  # the shared loop reports it, in the tool's terms
                self._pending = None
        return super()._act(action)

    def _candidate(self) -> tuple[Candidate | None, str | None]:
        assert self.session is not None
        actions = self._actions + ([self._pending] if self._pending else [])
        return candidate_of(self.session, actions)

    def _exact(self, candidate: Candidate) -> tuple[Candidate, None]:
        return candidate, None

    def _verify(self, candidate: Candidate | None, tier: str) -> VerifierReport:
        assert self.task is not None
        report, self._scene = verify_candidate(
            self.task, candidate, tier, self.simulator, self.limits, self.replay
        )
        self._ignored = str(report.checks.get("ignored", {}).get("message", ""))
        return report

    def _checkpoint(self, candidate: Any, snapshot: Future[int] | None = None) -> None:
        if isinstance(candidate, Candidate):
            self._actions = list(candidate.actions)
        super()._checkpoint(candidate, snapshot)

    def _feedback(self, outcome: Any, summary: str) -> str:
        note = outcome.value if outcome is not None and isinstance(outcome.value, str) else ""
        if self._ignored and summary.startswith("verifier:"):  # what the verifier did not take
            summary, self._ignored = f"{summary}\n{self._ignored}", ""
        return super()._feedback(outcome, f"tool: {note}\n{summary}" if note else summary)

    def _image_prompt(self) -> str:
        return image_prompt(self._spec.kind, self._spec.template)

    def _render(self, candidate: Candidate | None) -> np.ndarray:
        scene = merged(self._spec, candidate.objects) if candidate is not None else self._spec.level
        if candidate is not None and candidate.triggers:  # drawn as the target's are
            scene = {**scene, "triggers": candidate.triggers}
        return self.renderer.render(scene, self._spec.bounds, self._aim)

    def _succeeded(self, report: VerifierReport) -> bool:
        return report.passed

    def _view_box(self) -> ViewBox:
        xmin, ymin, xmax, ymax = (float(b) for b in self._spec.bounds)
        return ViewBox((xmin, ymin), (xmax, ymax), "m")

    def _reframe(self, view: View | None) -> tuple[np.ndarray, np.ndarray]:
        """A look: both cameras turned on ``view.center``, their fields ``zoom`` times
        narrower (``SceneRenderer.render``)."""
        assert self.task is not None
        self._aim = None if view is None else (*view.center, view.zoom)
        shown = self._part if self._part is not None else self._start
        target = self.renderer.render(reference_scene(self.task), self._spec.bounds, self._aim)
        return self._render(shown), target

    def export(self, fmt: str = "json") -> bytes:
        """The current scene (the task's level with the agent's objects) as JSON or GLB bytes."""
        if self.session is None:
            raise RuntimeError("call reset() before export()")
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"unknown format {fmt!r}; use one of {EXPORT_FORMATS}")
        candidate, why = candidate_of(self.session, self._actions)
        if candidate is None:
            raise ValueError(f"no scene to export: {why}")
        scene = merged(self._spec, candidate.objects)
        if fmt == "json":
            return (json.dumps(scene, indent=1) + "\n").encode()
        return scene_glb(scene)

    def close(self) -> None:
        super().close()
        self.simulator.close()
        self.replay.close()
        self.renderer.close()
