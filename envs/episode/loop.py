"""The environment loop every tool domain shares.

An episode: pick a task; start a sandbox session (the first episode) or return the last one to
its fresh state (``Session.clear``: the same processes, a clean workspace); each step, run the
agent's code or tool call in the session, score what it built with the per-step verifier, and
show the agent renders of its part beside the target with the tool's own feedback. A failed step
(exception, crash, limit, invalid call) costs a penalty and changes nothing: the session goes
back to the state after the last good step. When the episode ends, the exact verifier scores the
final part, and the last reward settles the difference, so an episode's return is its exact final
score minus penalties.
A step whose artifact is the last good step's, unchanged (the domain hands back that very object),
is neither verified nor rendered again, and the snapshot of a good step's state is taken while its
artifact is verified and rendered.
In tool mode the call ``{"name": "stop"}`` (:data:`STOP_CALL`) ends the episode where it is: no
sandbox call, no penalty, the exact verifier scores the part as it stands (``terminated``).
In either mode the call ``{"name": "look", ...}`` reframes the views on a region
(``toolgym.envs.episode.look``): no sandbox call, a step, no reward.

Domains subclass :class:`ToolEnv` and fill in what is specific to their tool: the backend, the tool
registry, the reference part, the candidate part and how both are verified and rendered.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from toolgym.envs.episode.calls import named_call
from toolgym.envs.episode.look import (
    LookError,
    View,
    ViewBox,
    look_arguments,
    look_schema,
    read_view,
)
from toolgym.envs.episode.options import RENDER_MODES, EnvOptions
from toolgym.envs.episode.spaces import UnicodeText
from toolgym.envs.sandbox import CallResult, Limits, SandboxError, Session, SnapshotLost
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_suite, get_task
from toolgym.envs.tools import ToolCallError, ToolRegistry
from toolgym.verifiers.report import VerifierReport, describe_invalid

PROMPT_CHARS = 4096
FEEDBACK_CHARS = 8192
StepResult = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]  # what ``step`` returns
STOP_CALL = "stop"  # tool mode: the call that ends the episode (the agent says it is done)
RUN_CODE = "run_code"  # code mode: the one tool an agent calling tools is offered


class ToolEnv(gym.Env[dict[str, Any], str]):
    """Base class; see :class:`toolgym.envs.cadquery.env.CadQueryEnv` for the documented API.

    A tool's environment sets ``Options`` to its extension of
    :class:`~toolgym.envs.episode.options.EnvOptions`: the constructor takes exactly those
    arguments (its signature is theirs, defaults included), checks them and keeps them as
    ``options``. A subclass's ``__init__`` takes ``*args, **kwargs``, passes them on to this one
    and reads what it needs from ``self.options``.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}  # noqa: RUF012 - gymnasium API
    backend: str = ""
    registry: ToolRegistry
    Options: ClassVar[type[EnvOptions]] = EnvOptions
    options: EnvOptions
    # A look's centre: how many numbers, in which unit (``None``: the views cannot be reframed).
    look_center: ClassVar[tuple[int, str] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Options" in cls.__dict__:
            _take_options(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        options = self.Options.parse(f"{type(self).__name__}.__init__", *args, **kwargs)
        self.options = options
        if options.task:
            self.tasks = (get_task(options.task),)
        else:
            self.tasks = get_suite(options.suite).split(options.split)
        if not self.tasks:
            raise ValueError(f"suite {options.suite!r} has no {options.split!r} tasks")
        self._check_domain(self.tasks[0])
        self.action_mode, self.max_steps = options.action_mode, options.max_steps
        self.view_size, self.prompt_form = options.view_size, options.prompt_form
        self.show_target, self.error_penalty = options.show_target, options.error_penalty
        self.limits, self.render_mode = options.limits or Limits(), options.render_mode
        self.max_action_chars = options.max_action_chars
        self.timings_in_info, self.final_tier = options.timings_in_info, options.final_tier
        image = spaces.Box(0, 255, self._image_shape(options.view_size), np.uint8)
        self.observation_space = spaces.Dict(
            {
                "image": image,
                "target": image,
                "prompt": UnicodeText(PROMPT_CHARS),
                "feedback": UnicodeText(FEEDBACK_CHARS),
                "step": spaces.Discrete(options.max_steps + 1),
            }
        )
        self.action_space = UnicodeText(options.max_action_chars)
        self.session: Session | None = None
        self.task: Task | None = None
        self._snapshotter: ThreadPoolExecutor | None = None  # see _snapshot_ahead

    # -- domain hooks ---------------------------------------------------------------------------
    def _image_shape(self, view_size: int) -> tuple[int, int, int]:
        raise NotImplementedError

    def _prepare(self, task: Task) -> np.ndarray:
        """Build the reference for ``task``; return the target image."""
        raise NotImplementedError

    def _candidate(self) -> tuple[Any, str | None]:
        """The session's current artifact (``None`` if none) and why not, if not."""
        raise NotImplementedError

    def _exact(self, candidate: Any) -> tuple[Any, str | None]:
        """``candidate`` with what the final tier needs besides (a B-Rep, say), or why not."""
        raise NotImplementedError

    def _verify(self, candidate: Any, tier: str) -> VerifierReport:
        raise NotImplementedError

    def _render(self, candidate: Any) -> np.ndarray:
        raise NotImplementedError

    def _image_prompt(self) -> str:
        """The prompt of ``prompt_form="image"``: the kind of task, no numbers."""
        raise NotImplementedError

    def _chosen(self, task: Task) -> Task:
        """The task an episode runs, once drawn (a tool may reword it); as drawn by default."""
        return task

    def _succeeded(self, report: VerifierReport) -> bool:
        raise NotImplementedError

    def _view_box(self) -> ViewBox | None:
        """Where a look may centre (the task's frame, in the tool's unit); ``None``: this
        task's views cannot be reframed, and a look is refused (:meth:`_no_look` says why)."""
        return None

    def _no_look(self) -> str:
        """Why a look is refused where :meth:`_view_box` is ``None``: one line."""
        return "this environment's views have one fixed frame"

    def _reframe(self, view: View | None) -> tuple[np.ndarray, np.ndarray]:
        """Frame every view on ``view`` from now on (``None``: the task's own frame); return
        the current artifact's views and the target's, so framed. :class:`LookError` says why
        not."""
        raise LookError(f"look: {self._no_look()}")

    # -- gymnasium API --------------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style function-calling schemas of this environment's tools."""
        return self.registry.json_schemas()

    def agent_tools(self) -> list[dict[str, Any]]:
        """The tools an agent calling functions is offered, OpenAI-style: the registry's schemas
        in tool mode; in code mode ``run_code(code)``, a script per step; in both, ``look``
        where the views can be reframed (``look_center``; ``toolgym.envs.episode.look``)."""
        look = [look_schema(*self.look_center)] if self.look_center else []
        if self.action_mode == "tool":
            return [*self.tool_schemas(), *look]
        from toolgym.envs.domains import get_domain  # domains import the envs: at call time
        from toolgym.envs.registration import domain_names

        # what a script finds in scope in this tool's session (``Domain.code_scope``)
        scope = get_domain(self.backend).code_scope if self.backend in domain_names() else ""
        code = {"type": "string", "description": "the script"}
        return [
            {
                "type": "function",
                "function": {
                    "name": RUN_CODE,
                    "description": f"Run a Python script in the {self.backend} session; "
                    f"variables persist between calls. {scope}.",
                    "parameters": {
                        "type": "object",
                        "properties": {"code": code},
                        "required": ["code"],
                        "additionalProperties": False,
                    },
                },
            },
            *look,
        ]

    def tool_grammar(self) -> dict[str, Any]:
        """Tool metadata for discrete action grammars (ranges, units, steps, valid parameters)."""
        return self.registry.grammar()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        if "task" in options:  # one of this env's tasks (a suite file's too), or any known task
            mine = {task.id: task for task in self.tasks}
            self.task = self._check_domain(mine.get(options["task"]) or get_task(options["task"]))
        else:
            self.task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self.task = self._chosen(self.task)
        target = self._prepare(self.task)
        self._target_image = target if self.show_target else np.zeros_like(target)
        if self.session is None:
            self.session = Session(self.backend, self.limits)
        else:  # the processes stay: the session goes back to its fresh state (milliseconds)
            self.session.clear()
        # The snapshot of the last good step's state (``None``: none could be taken).
        self._good_snapshot: int | None = min(self.session.info["snapshots"], default=None)
        self._notes: list[str] = []  # what the sandbox had to recover from, for the feedback
        self._steps, self._score, self._done = 0, 0.0, False
        self._confirmed: tuple[int, Any, VerifierReport, str | None] | None = None  # _confirm
        self._view: View | None = None  # the last look's (None: the task's frame)
        self._image = self._render(None)
        self._part: Any = None  # the artifact after the last good step
        self._report: VerifierReport | None = None
        primed = self._prime()
        if self.task.start:  # an edit: the episode starts from the task's part or scene
            ran = self.session.run(self.task.start, filename=f"<start {self.task.id}>")
            if not ran.ok:
                raise RuntimeError(f"{self.task.id}: the start program failed: {ran.feedback()}")
        if primed or self.task.start:
            self._good_snapshot = self.session.snapshot()
        return self._observation(""), {"task": self.task.id, "isolation": self.session.layers}

    def _prime(self) -> bool:
        """Set the fresh session up for the task before its start program runs (a game scene
        loads its level); whether anything changed. Nothing by default."""
        return False

    def step(self, action: Any) -> StepResult:
        if self.session is None or self.task is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        self._steps += 1
        if self.action_mode == "tool" and _is_stop(action, self.max_action_chars):
            return self._stop()
        looks, arguments = look_arguments(action, self.max_action_chars)
        if looks:
            return self._take_look(arguments)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        outcome, error = self._act(action)
        timings["exec"] = time.perf_counter() - started
        candidate = None
        if error is None:
            started = time.perf_counter()
            candidate, error = self._candidate()
            timings["tessellate"] = time.perf_counter() - started
        info: dict[str, Any] = {"task": self.task.id, "isolation": self.session.layers}
        info["sandbox"] = sandbox_info(outcome, self.timings_in_info)
        snapshot, last = None, None
        if error is None:
            snapshot = self._snapshot_ahead()
            # A domain that finds the last good step's artifact unchanged returns that very
            # object: its report and views stand (both are functions of the artifact alone).
            last = self._report if candidate is not None and candidate is self._part else None
            started = time.perf_counter()
            report = last if last is not None else self._verify(candidate, self._step_tier())
            timings["verify"] = time.perf_counter() - started
            if report.validity.get("valid") is False:  # a broken solid is a failed step
                error = f"invalid solid: {describe_invalid(report.validity)}"
            elif report.errors:  # nor is a part the verifier cannot score (over its budget)
                error = f"verifier: {report.errors[0]}"
        if error is not None:
            started = time.perf_counter()
            self._drop_ahead(snapshot)
            reward = -self.error_penalty + self._undo(outcome)
            timings["rollback"] = time.perf_counter() - started
            info["error"] = error
            feedback = self._feedback(outcome, f"error: {error}")
        else:
            started = time.perf_counter()
            if last is None:  # a new artifact
                self._image = self._render(candidate)
            timings["render"] = time.perf_counter() - started
            reward, self._score, self._report = report.score - self._score, report.score, report
            started = time.perf_counter()
            self._checkpoint(candidate, snapshot)
            timings["snapshot"] = time.perf_counter() - started  # what is left of it to wait for
            info["report"] = report.to_dict()
            feedback = self._feedback(outcome, f"verifier: {report.summary()}")
        terminated = self._report is not None and self._succeeded(self._report)
        if terminated and error is None and self._final_tier() == "exact":
            # The per-step tier samples less: an episode ends only when the final tier passes
            # the part too; else it goes on, and the feedback says what the final tier found.
            final, _ = self._confirm()
            if not final.passed:
                terminated = False
                feedback = f"{feedback}\nfinal check: {final.summary()}"
        truncated = not terminated and self._steps >= self.max_steps
        if terminated or truncated:
            reward += self._finish(info)
        if self.timings_in_info:  # wall-clock figures: the only part of info that is not seeded
            info["timings"] = timings
            info["sandbox_wall_s"] = outcome.wall_s if outcome is not None else 0.0
        return self._observation(feedback), float(reward), terminated, truncated, info

    def finish(self) -> tuple[float, dict[str, Any]]:
        """End the episode now, as an agent that says it is done does (a language model that
        stops calling tools): the final tier scores the last good part, as at any episode end.

        Returns ``(reward, info)``: the reward that settles the score, so the return is the final
        score minus penalties, and ``info`` with ``final_report``. ``step`` then raises until
        ``reset``."""
        if self.session is None or self.task is None:
            raise RuntimeError("call reset() before finish()")
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        info: dict[str, Any] = {"task": self.task.id, "isolation": self.session.layers}
        return float(self._finish(info)), info

    def _stop(self) -> StepResult:
        """The agent's stop call: the episode ends with the part as it stands."""
        assert self.task is not None and self.session is not None
        info: dict[str, Any] = {"task": self.task.id, "isolation": self.session.layers}
        info["sandbox"] = sandbox_info(None, self.timings_in_info)
        reward = self._finish(info)
        if self.timings_in_info:
            info["timings"], info["sandbox_wall_s"] = {}, 0.0
        return self._observation("stopped: the episode ends here"), float(reward), True, False, info

    def _take_look(self, arguments: Any) -> StepResult:
        """The agent's look: every view reframed, nothing else changed (a step, no reward)."""
        assert self.task is not None and self.session is not None
        info: dict[str, Any] = {"task": self.task.id, "isolation": self.session.layers}
        info["sandbox"] = sandbox_info(None, self.timings_in_info)
        box = self._view_box()
        reward = 0.0
        try:
            if box is None:
                raise LookError(f"look: {self._no_look()}")
            view = read_view(arguments, box)
            self._image, target = self._reframe(view)
        except LookError as exc:
            reward, info["error"] = -self.error_penalty, str(exc)
            feedback = self._feedback(None, f"error: {exc}")
        else:
            self._view = view
            self._target_image = target if self.show_target else np.zeros_like(target)
            # _feedback says the view while it lasts
            summary = "look: the views are reframed" if view else "look: the task's own frame"
            feedback = self._feedback(None, summary)
        if self._report is not None:
            info["report"] = self._report.to_dict()
        truncated = self._steps >= self.max_steps
        if truncated:
            reward += self._finish(info)
        if self.timings_in_info:
            info["timings"], info["sandbox_wall_s"] = {}, 0.0
        return self._observation(feedback), float(reward), False, truncated, info

    def render(self) -> np.ndarray | None:
        """The agent's part beside the target (rgb_array)."""
        if self.render_mode != "rgb_array" or self.task is None:
            return None
        return np.concatenate([self._image, self._target_image], axis=1)

    def close(self) -> None:
        if self._snapshotter is not None:
            self._snapshotter.shutdown()
            self._snapshotter = None
        if self.session is not None:
            self.session.close()
            self.session = None

    # -- internals ------------------------------------------------------------------------------
    def _check_domain(self, task: Task) -> Task:
        """``task``, or ``ValueError`` when it is another tool's task."""
        if task.domain != self.backend:
            from toolgym.envs.domains import get_domain
            from toolgym.envs.registration import domain_names

            known = task.domain in domain_names()
            use = f" (use {get_domain(task.domain).env_id})" if known else ""
            runs = f"this environment runs {self.backend} tasks"
            raise ValueError(f"{task.id} is a {task.domain} task; {runs}{use}")
        return task

    def _act(self, action: Any) -> tuple[CallResult | None, str | None]:
        """Run the action in the session: ``(result, error message or None)``."""
        assert self.session is not None
        if isinstance(action, str) and (unencodable := _not_utf8(action)):
            return None, unencodable  # the session's channel carries UTF-8 text only
        if self.action_mode == "code":
            if not isinstance(action, str):
                return None, f"the action must be a string of code, got {type(action).__name__}"
            if len(action) > self.max_action_chars:
                return None, self._too_long("script", action)
            result = self.session.run(action, filename=f"<step {self._steps}>")
        else:
            if isinstance(action, str) and len(action) > self.max_action_chars:
                return None, self._too_long("tool call", action)
            try:
                tool, arguments = self.registry.parse_call(action)
            except ToolCallError as exc:
                return None, str(exc)
            call = {"name": tool.name, "arguments": arguments}
            result = self.session.request("tool", {"call": call})
        if not result.ok:
            message = result.error.message if result.error else "the call failed"
            # A tool's own error is already one line in the tool's terms.
            return result, message.removeprefix(f"{ToolCallError.__name__}: ")
        return result, None

    def _too_long(self, what: str, action: str) -> str:
        return f"the {what} has {len(action)} characters; the limit is {self.max_action_chars}"

    def _undo(self, outcome: CallResult | None) -> float:
        """Back to the state after the last good step (a crash already restored a snapshot).

        When a process died and took that state with it, the session holds an older state (or
        none): the part shown and scored becomes the part that exists, and the feedback says so.
        Returns the change of score this makes (0.0 when the last good state came back).
        """
        assert self.session is not None
        if outcome is not None and (outcome.state_lost or outcome.restored_to is not None):
            restored, lost = outcome.restored_to, outcome.state_lost
            why = "the crash also took the snapshot of the last good step"
        else:
            restored, lost, why = self._rollback()
        if restored is not None and restored == self._good_snapshot and not lost:
            return 0.0
        return self._resync(why)

    def _rollback(self) -> tuple[int | None, bool, str]:
        """Roll back to the last good snapshot, or the latest one alive; never raises.

        Returns ``(snapshot restored, state lost, why not the last good one)``."""
        assert self.session is not None
        target = self._good_snapshot
        live = self.session.info["snapshots"]
        try:
            if target is not None:
                self.session.rollback(target)
                return target, False, ""
            if live:
                self.session.rollback(live[-1])
                return live[-1], False, "the last good step had no snapshot"
            self.session.restart()
            return None, True, "no snapshot was left"
        except SnapshotLost as exc:
            return exc.restored_to, exc.state_lost, str(exc)
        except SandboxError as exc:
            return None, True, f"the sandbox failed: {exc}"

    def _resync(self, why: str) -> float:
        """The session no longer holds the last good step's state: show, score and remember the
        part it does hold. Returns the change of score."""
        assert self.task is not None
        candidate, error = self._candidate()
        if error is not None:
            candidate = None  # nothing (valid) was built in the state that survived
        report = None
        if candidate is not None:
            report = self._verify(candidate, self._step_tier())
        score = report.score if report is not None and report.score is not None else 0.0
        self._image = self._render(candidate)
        change, self._score, self._report = score - self._score, score, report
        self._checkpoint(candidate)
        shown = "the part shown is the one that exists now" if candidate else "no part exists now"
        self._notes.insert(0, f"note: the sandbox lost the last good state ({why}); {shown}")
        return change

    def _snapshot_ahead(self) -> Future[int]:
        """Snapshot the session's state in the background, while this process verifies and
        renders the step's artifact (neither touches the agent's session): the worker's fork
        overlaps them. :meth:`_checkpoint` keeps the snapshot; a step that fails after all drops
        it (:meth:`_drop_ahead`)."""
        assert self.session is not None
        if self._snapshotter is None:
            self._snapshotter = ThreadPoolExecutor(1, thread_name_prefix="toolgym-snapshot")
        return self._snapshotter.submit(self.session.snapshot)

    def _drop_ahead(self, snapshot: Future[int] | None) -> None:
        """Wait for a snapshot taken ahead of a step that failed, and drop it."""
        if snapshot is None:
            return
        assert self.session is not None
        with contextlib.suppress(SandboxError):  # none was taken: nothing to drop
            self.session.drop_snapshot(snapshot.result())

    def _checkpoint(self, candidate: Any, snapshot: Future[int] | None = None) -> None:
        """Remember the session's state as the last good one: its part and a snapshot of it
        (``snapshot``: one already under way, of this very state)."""
        assert self.session is not None
        self._part = candidate
        try:
            self._good_snapshot = (
                snapshot.result() if snapshot is not None else self.session.snapshot()
            )
        except SandboxError as exc:
            self._good_snapshot = None
            self._notes.append(
                f"note: the sandbox could not save this state ({exc}); a failed step will go "
                "back to an earlier one"
            )

    def _step_tier(self) -> str:
        assert self.task is not None
        return self.task.verification.step_tier

    def _final_tier(self) -> str:
        assert self.task is not None
        return self.final_tier or self.task.verification.final_tier

    def _confirm(self) -> tuple[VerifierReport, str | None]:
        """The final tier's report on the last good step's artifact, and why it could not be
        completed, if not; computed once per step (the episode's end reuses it), and once per
        artifact that was completed (a step that left it unchanged reuses it)."""
        if self._confirmed is not None:
            steps, part, report, error = self._confirmed
            if steps == self._steps or (part is not None and part is self._part and not error):
                return report, error
        tier = self._final_tier()
        # The last good step's artifact, completed for the exact tier (not fetched again).
        candidate, error = self._part, None
        if candidate is not None and tier == "exact":
            candidate, error = self._exact(candidate)
        report = self._verify(candidate, tier)
        self._confirmed = (self._steps, self._part, report, error)
        return report, error

    def _finish(self, info: dict[str, Any]) -> float:
        """Final verification of the last good part; returns the reward that settles the score."""
        assert self.task is not None
        self._done = True
        report, error = self._confirm()
        info["final_report"] = report.to_dict()
        if error:
            info.setdefault("error", error)
        if report.score is None:
            return 0.0
        settle, self._score = report.score - self._score, report.score
        return settle

    def _feedback(self, outcome: CallResult | None, summary: str) -> str:
        parts = [f"note: {outcome.recovery}"] if outcome is not None and outcome.recovery else []
        parts += self._notes
        self._notes = []
        if outcome is not None:
            if outcome.stdout.strip():
                parts.append("stdout:\n" + outcome.stdout.strip()[-2000:])
            if outcome.traceback and self.action_mode == "code":  # a tool call has no frames
                parts.append(outcome.traceback.strip()[-3000:])
            elif outcome.stderr.strip():
                parts.append("stderr:\n" + outcome.stderr.strip()[-2000:])
        parts.append(summary)
        if self._view is not None and self.look_center:  # what the views show, every step
            parts.append(self._view.describe(self.look_center[1]))
        return "\n".join(parts)[-FEEDBACK_CHARS:]

    def _observation(self, feedback: str) -> dict[str, Any]:
        assert self.task is not None
        return {
            "image": self._image.copy(),  # callers may keep and modify observations
            "target": self._target_image.copy(),
            "prompt": (
                self._image_prompt()
                if self.prompt_form == "image"
                else self.task.prompt[:PROMPT_CHARS]
            ),
            "feedback": feedback[:FEEDBACK_CHARS],
            "step": self._steps,
        }


def _take_options(cls: type[ToolEnv]) -> None:
    """Give ``cls``'s constructor the signature of ``cls.Options`` (``help()``, IDEs, and code that
    reads the arguments an environment takes)."""
    if "__init__" not in cls.__dict__:  # one of its own, so that the signature is not shared

        def __init__(self: ToolEnv, *args: Any, **kwargs: Any) -> None:
            super(cls, self).__init__(*args, **kwargs)

        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = __init__  # type: ignore[method-assign]
    signature = cls.Options.signature()
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    cls.__init__.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[me, *signature.parameters.values()]
    )


_take_options(ToolEnv)


def _is_stop(action: Any, max_chars: int) -> bool:
    """Whether a tool-mode action is the stop call (a dict or JSON text named ``stop``)."""
    call = named_call(action, STOP_CALL, max_chars)
    return call is not None and not call.get("arguments")


def sandbox_info(outcome: CallResult | None, timings: bool = False) -> dict[str, Any]:
    """What the step's sandbox call returned, as flat plain data for ``info["sandbox"]``.

    Keys and types are the same for every step (vector envs merge infos key by key): ``ran``
    (False when the action never reached the sandbox: too long, not text, an invalid tool
    call); ``ok``; ``error_kind`` and ``error_message`` (``""`` when none; kinds as in
    :class:`~toolgym.envs.sandbox.CallError`); ``limit``, the :class:`Limits` field breached
    (``""`` when none); ``stdout`` and ``stderr`` as kept (at most ``Limits.output_bytes``
    each) and ``stdout_dropped``/``stderr_dropped``, the bytes cut; ``traceback`` (agent frames,
    ``""`` when none); ``recovery`` (``""`` unless a dead process was brought back first). With
    ``timings``, also ``duration_s`` (in the worker) and ``wall_s`` (seen by the parent),
    seconds: wall-clock figures are the one part a seed does not fix, so they are opt-in.
    """
    data: dict[str, Any] = {
        "ran": outcome is not None,
        "ok": bool(outcome and outcome.ok),
        "error_kind": outcome.error.kind if outcome and outcome.error else "",
        "error_message": outcome.error.message if outcome and outcome.error else "",
        "limit": (outcome.error.limit or "") if outcome and outcome.error else "",
        "stdout": outcome.stdout if outcome else "",
        "stderr": outcome.stderr if outcome else "",
        "stdout_dropped": outcome.stdout_dropped if outcome else 0,
        "stderr_dropped": outcome.stderr_dropped if outcome else 0,
        "traceback": (outcome.traceback or "") if outcome else "",
        "recovery": (outcome.recovery or "") if outcome else "",
    }
    if timings:
        data["duration_s"] = outcome.duration_s if outcome else 0.0
        data["wall_s"] = outcome.wall_s if outcome else 0.0
    return data


def _not_utf8(text: str) -> str | None:
    """Why ``text`` cannot be sent as UTF-8 (a lone surrogate, say), or ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end].encode("unicode_escape").decode("ascii")
        return (
            f"the action is not valid Unicode text: character {exc.start} is {bad} ({exc.reason})"
        )
    return None
