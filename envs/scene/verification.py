"""Verifying game scenes so that agent code cannot talk its way into a pass.

- **Layout and physics tasks**: the agent's session exports a scene description (plain data). It
  is validated here, merged with the task's own level (the level's objects come from the task, not
  from the agent: only what the task lets the agent adjust, such as a ball's initial velocity, is
  taken over), and rebuilt and simulated by a *trusted* session: a sandbox session that never ran
  agent code and only builds worlds from data. Python callbacks and tool-style logic of the agent
  are not carried over, so a callback that teleports the ball into the goal gains nothing.
- **Logic tasks**: the agent's code is the logic, so it runs, in a fresh sandbox session (the
  *logic* session), against a fresh copy of the level, replayed action by action (the world's own
  ``run`` does nothing there). But it only decides: a trusted *host* session builds the level
  fresh with the agent's declarative logic (plain data, validated here), walks the verifier's
  held-out player paths and owns the physics, counters and event log; at each stop the logic
  session answers with actions that the host validates and applies (``toolgym.envs.scene.logic``).
  The checks read only the host's samples, against what the verifier's own paths imply.

Everything runs under the sandbox's limits (wall clock, CPU, memory); the scene runtime bounds
objects, triggers and simulated time. Traces from sessions are validated before use.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from toolgym.envs.episode import cache
from toolgym.envs.sandbox import Limits, SandboxError, Session, protocol
from toolgym.envs.sandbox.rewind import Rewind
from toolgym.envs.scene.catalogue import ASSETS, BODIES
from toolgym.envs.scene.families import Spec, spec_for, task_spec
from toolgym.envs.scene.logic import PLAYER
from toolgym.envs.scene.replay import LogicReplay
from toolgym.envs.scene.runtime import MAX_COORD_M, MAX_OBJECTS, MAX_SPEED, MAX_TRIGGERS, NAME
from toolgym.envs.scene.verifier import STATIC_CHECKS, Scene, verify_scene
from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.batch import Outcome, ReferenceBuildError
from toolgym.verifiers.report import VerifierReport

PERTURB = {"pos_m": 0.001, "hpr_deg": 0.5}  # the exact tier's placement noise
EXACT_RUNS = 3  # perturbed runs besides the unperturbed one
CHEAP_PATHS = 2  # logic: held-out paths played per step (all of them at the exact tier)
VERIFY_LIMITS = Limits(wall_s=20.0, cpu_s=20.0)
REACT_S = 5.0  # wall-clock seconds the agent's logic may take to answer one stop


class DescriptionError(ValueError):
    """A scene description or trace from a session that cannot be used; says why."""


def _numbers(value: Any, where: str, n: int, bound: float) -> list[float]:
    if not isinstance(value, list | tuple) or len(value) != n:
        raise DescriptionError(f"{where} must be {n} numbers")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise DescriptionError(f"{where} must be finite numbers, got {value!r}")
        if abs(v) > bound:
            raise DescriptionError(f"{where} is out of range (±{bound:g})")
        out.append(float(v))
    return out


def sanitize(description: Any) -> dict[str, Any]:
    """A clean copy of the objects of a description that came out of a session, or
    :class:`DescriptionError`. Everything but the objects is dropped (the task owns the rest)."""
    if not isinstance(description, dict) or not isinstance(description.get("objects"), list):
        raise DescriptionError("the scene description has no list of objects")
    raw = description["objects"]
    if len(raw) > MAX_OBJECTS:
        raise DescriptionError(f"the scene has {len(raw)} objects; at most {MAX_OBJECTS}")
    objects, names = [], set()
    for k, o in enumerate(raw):
        where = f"object {k + 1}"
        if not isinstance(o, dict):
            raise DescriptionError(f"{where} is not a table")
        name, kind = o.get("name"), o.get("asset")
        if not isinstance(name, str) or not NAME.match(name) or name in names:
            raise DescriptionError(f"{where} has a bad or repeated name {name!r}")
        if kind not in ASSETS or o.get("body") not in BODIES:
            raise DescriptionError(f"{name}: unknown asset {kind!r} or body {o.get('body')!r}")
        names.add(name)
        objects.append(
            {
                "name": name,
                "asset": kind,
                "body": o["body"],
                "pos": _numbers(o.get("pos"), f"{name}: pos", 3, MAX_COORD_M),
                "hpr": _numbers(o.get("hpr"), f"{name}: hpr", 3, 3600),
                "mass": _numbers([o.get("mass")], f"{name}: mass", 1, 10_000)[0],
                "friction": _numbers([o.get("friction")], f"{name}: friction", 1, 10)[0],
                "restitution": _numbers([o.get("restitution")], f"{name}: restitution", 1, 1)[0],
                "velocity": _numbers(o.get("velocity"), f"{name}: velocity", 3, MAX_SPEED),
                "open": bool(o.get("open", False)),
                "level": bool(o.get("level", False)),
            }
        )
        if objects[-1]["body"] == "dynamic" and objects[-1]["mass"] <= 0:
            raise DescriptionError(f"{name}: a dynamic body needs a mass above 0")
    return {"objects": objects}


def merged(spec: Spec, agent: dict[str, Any]) -> dict[str, Any]:
    """The task's level with the agent's own objects added, and the level objects' adjustable
    properties taken from the agent's description. In layout and physics tasks each placed
    object keeps its catalogue body, mass, friction and restitution and starts at rest, closed
    (unless the task's ``bodies`` lets the agent choose the body): what the agent set otherwise
    is refused, and :func:`changes` says so."""
    scene = copy.deepcopy(spec.level)
    level = {o["name"]: o for o in scene["objects"]}
    for o in agent["objects"]:
        if o["name"] in level:
            if "velocity" in spec.adjustable.get(o["name"], ()):
                level[o["name"]]["velocity"] = list(o["velocity"])
        elif spec.kind == "logic":
            scene["objects"].append(dict(o, level=False))
        else:
            scene["objects"].append(dict(o, **_catalogue(spec, o), level=False))
    return scene


def _catalogue(spec: Spec, o: dict[str, Any]) -> dict[str, Any]:
    """The properties a placed object keeps from the catalogue in a layout or physics task."""
    entry = ASSETS[o["asset"]]
    body = o["body"] if o["body"] in spec.bodies.get(o["asset"], ()) else entry.body
    return {
        "body": body,
        "mass": entry.mass,
        "friction": entry.friction,
        "restitution": entry.restitution,
        "velocity": [0.0, 0.0, 0.0],
        "open": False,
    }


def changes(spec: Spec, agent: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What :func:`merged` did not take over from the agent's description, in words:
    ``(refused, ignored)``. Refused: properties of placed objects that a layout or physics task
    fixes (a static, kinematic or ghost body for a dynamic asset, another mass, friction or
    restitution, an initial velocity, an open door); a check fails for them. Ignored: changes
    to the level's own objects (removed, moved, turned, another body, a velocity the task does
    not let the agent set); the level is checked as the task built it."""
    refused: list[str] = []
    ignored: list[str] = []
    level = {o["name"]: o for o in spec.level["objects"]}
    mine = {o["name"]: o for o in agent["objects"]}
    for name, o in level.items():
        a = mine.get(name)
        if a is None:
            if spec.kind != "logic":  # logic may remove level objects at t = 0
                ignored.append(f"{name} was removed (the level keeps it)")
            continue
        if not a["open"] and (_far(a["pos"], o["pos"]) or _far(a["hpr"], o["hpr"])):
            ignored.append(f"{name} is not where the level has it (it starts at the level's place)")
        if a["asset"] != o["asset"] or a["body"] != o["body"]:
            ignored.append(f"{name}'s body or asset was changed (the level keeps its own)")
        if _far(a["velocity"], o["velocity"]) and "velocity" not in spec.adjustable.get(name, ()):
            ignored.append(f"{name}'s velocity was set (the task does not let it change)")
    if spec.kind == "logic":
        return refused, ignored
    for o in agent["objects"]:
        if o["name"] in level:
            continue
        kept = _catalogue(spec, o)
        what = [
            f"a {o['body']} body (the catalogue's {kept['body']} is kept)"
            if o["body"] != kept["body"]
            else "",
            *(
                f"{k} {o[k]:g} (the catalogue's {kept[k]:g} is kept)"
                for k in ("mass", "friction", "restitution")
                if abs(o[k] - kept[k]) > 1e-9
            ),
            "an initial velocity (placed objects start at rest)" if any(o["velocity"]) else "",
            "opened (placed objects start closed)" if o["open"] else "",
        ]
        if any(what):
            refused.append(f"{o['name']} was given " + ", ".join(w for w in what if w))
    return refused, ignored


def _far(a: Sequence[float], b: Sequence[float], tol: float = 1e-4) -> bool:
    return any(abs(x - y) > tol for x, y in zip(a, b, strict=True))


def _sample(row: Any, name: str) -> list[float]:
    """One trace row (x, y, z, qw, qx, qy, qz), checked: seven finite floats within bounds."""
    bound = 10 * MAX_COORD_M
    # The common case in one pass (a step's trace has thousands of rows); NaN fails `<=`.
    if (
        type(row) is list
        and len(row) == 7
        and all(type(v) is float and abs(v) <= bound for v in row)
    ):
        return row
    return _numbers(row, f"{name} sample", 7, bound)


def sanitize_trace(value: Any) -> dict[str, Any]:
    """A trace (``simulate``/``play`` output) checked for shape and finiteness."""
    try:
        times = [float(t) for t in value["times"]]
        samples = {}
        for name, rows in value["samples"].items():
            if not isinstance(name, str) or len(rows) != len(times):
                raise DescriptionError("a trace's samples do not match its times")
            samples[name] = [None if r is None else _sample(r, name) for r in rows]
        assets = {str(k): str(v) for k, v in value["assets"].items()}
        counters = {str(k): int(v) for k, v in value["counters"].items()}
        refused = sorted(
            {
                f"{e.get('action')} {e.get('object')}"
                for e in value.get("events", ())
                if isinstance(e, dict) and e.get("kind") == "refused"
            }
        )[:20]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DescriptionError(f"the session's trace is malformed: {exc}") from None
    return {
        "times": times,
        "samples": samples,
        "assets": assets,
        "counters": counters,
        "refused": refused,
    }


class TrustedSimulator:
    """A sandbox session that never runs agent code: it only builds worlds from descriptions
    (plain data) and simulates them. One per environment, started when first needed.

    Each play starts from the session's clean snapshot (taken at its start), as Blender's
    reader does: what one world left behind never reaches the next, and the worker's memory stays
    flat over many episodes. The return to it starts as soon as a play is done and runs in the
    background (:class:`~toolgym.envs.sandbox.rewind.Rewind`) while the caller checks the trace;
    the next play waits for what is left of it. ``fresh_each_play=False`` keeps one world after
    another in the same worker (a bench's comparison, never a verifier's)."""

    def __init__(self, limits: Limits = VERIFY_LIMITS, fresh_each_play: bool = True) -> None:
        self.limits, self.fresh_each_play = limits, fresh_each_play
        self._session: Session | None = None
        self.lock = threading.Lock()
        self.used = False  # the session ran a play since its clean snapshot
        self._rewind = Rewind()  # the return to the clean state after a play

    def background(self, job: Callable[..., Any], *args: Any) -> Future[Any]:
        """``job(*args)`` (one that asks this simulator) in a thread of its own, so that the
        caller can check what needs no simulation meanwhile (no thread is kept: a server holds
        hundreds of envs)."""
        future: Future[Any] = Future()

        def run() -> None:
            try:
                future.set_result(job(*args))
            except BaseException as exc:  # handed to the caller, who reads the result
                future.set_exception(exc)

        threading.Thread(target=run, name="toolgym-simulate", daemon=True).start()
        return future

    @property
    def session(self) -> Session | None:
        """The session once started, back in its clean state if a return to it was pending."""
        self._settle()
        return self._session

    def _settle(self) -> None:
        if self._rewind.pending:
            if self._rewind.wait() is None:
                self.used = False
            else:  # it could not go back: the next play starts afresh
                self._close()

    def _request(self, name: str, args: dict[str, Any]) -> Any:
        self._settle()
        unfinished = name in ("simulate", "host") and self.used  # the last play stopped midway
        if self._session is not None and unfinished and self.fresh_each_play:
            try:
                self._session.rollback(0)
            except SandboxError:  # the snapshot was lost: start afresh
                self._close()
        if self._session is None:
            self._session = Session("scene", self.limits)
        self.used = True
        result = self._session.request(name, args)
        ended = isinstance(result.value, dict) and result.value.get("done") is True
        if self.fresh_each_play and (name == "simulate" or (result.ok and ended)):
            # The play is over: the return to the clean state starts now, while the caller
            # reads the trace (and, between a logic task's paths, resets its logic session).
            self._rewind.start(self._session)
        return result

    @contextlib.contextmanager
    def held(self) -> Iterator[Callable[[str, dict[str, Any]], Any]]:
        """The session to oneself, for a run of requests (a logic task's plays): yields
        ``request(name, args)``, which returns the sandbox's ``CallResult``."""
        with self.lock:
            yield self._request

    def simulate(
        self, description: dict[str, Any], seconds: float, perturb: dict | None = None
    ) -> dict[str, Any]:
        with self.lock:
            args = {"description": description, "seconds": seconds, "perturb": perturb}
            result = self._request("simulate", args)
        if not result.ok:
            message = result.error.message if result.error else "failed"
            raise DescriptionError(f"the scene could not be simulated: {message}")
        return sanitize_trace(result.value)

    def close(self) -> None:
        self._rewind.wait()
        self._close()

    def _close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        self.used = False


def simulated_traces(
    spec: Spec, scene: dict[str, Any], tier: str, simulator: TrustedSimulator
) -> list[dict[str, Any]]:
    """The unperturbed run, plus ``EXACT_RUNS`` seeded perturbed runs at the exact tier."""
    seconds = spec.seconds if tier == "exact" else spec.cheap_seconds
    traces = [simulator.simulate(scene, seconds)]
    if tier == "exact":
        for seed in range(1, EXACT_RUNS + 1):
            traces.append(simulator.simulate(scene, seconds, dict(PERTURB, seed=seed)))
    return traces


Action = tuple[str, Any]  # ("code", script) or ("tool", call)


def _rows(description: dict[str, Any], key: str, limit: int) -> list[dict[str, Any]]:
    rows = description.get(key, [])
    if (
        not isinstance(rows, list)
        or len(rows) > limit
        or not all(isinstance(r, dict) for r in rows)
    ):
        raise DescriptionError(f"the scene's {key} must be a list of at most {limit} tables")
    return rows


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) > 40:
        raise DescriptionError(f"{where} must be a name of up to 40 characters")
    return value


def _whole(value: Any, where: str, bound: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > bound:
        raise DescriptionError(f"{where} must be a whole number up to {bound}")
    return value


def sanitize_logic(description: Any) -> dict[str, Any]:
    """A clean copy of the declarative logic of a description that came out of a session:
    triggers, bindings, movers and spawners (plain data, checked for shape and range;
    the trusted session's ``World.build`` checks the rest), or :class:`DescriptionError`."""
    if not isinstance(description, dict):
        raise DescriptionError("the scene description is not a table")
    triggers = [
        {
            "name": _text(t.get("name"), "a trigger's name"),
            "pos": _numbers(t.get("pos"), "a trigger's pos", 3, MAX_COORD_M),
            "size": _numbers(t.get("size"), "a trigger's size", 3, 100),
        }
        for t in _rows(description, "triggers", MAX_TRIGGERS)
    ]
    bindings = [
        {
            **{
                k: _text(b.get(k, ""), f"a binding's {k}")
                for k in ("trigger", "event", "action", "target", "only")
            },
            "amount": _whole(b.get("amount", 1), "a binding's amount", 1000),
        }
        for b in _rows(description, "bindings", 256)
    ]
    for b in bindings:
        if b["target"] == PLAYER and b["action"] not in ("count", "spawn"):
            raise DescriptionError(f"a binding may not {b['action']} the player")
    movers = []
    for m in _rows(description, "movers", 64):
        points = m.get("points")
        if not isinstance(points, list) or not 2 <= len(points) <= 64:
            raise DescriptionError("a mover needs 2 to 64 waypoints")
        if m.get("target") == PLAYER:
            raise DescriptionError("a mover may not move the player; the verifier walks it")
        movers.append(
            {
                "target": _text(m.get("target"), "a mover's target"),
                "points": [_numbers(p, "a mover's waypoint", 3, MAX_COORD_M) for p in points],
                "speed": _numbers([m.get("speed")], "a mover's speed", 1, MAX_SPEED)[0],
                "loop": bool(m.get("loop", True)),
            }
        )
    spawners = [
        {
            "asset": _text(s.get("asset"), "a spawner's asset"),
            "pos": _numbers(s.get("pos"), "a spawner's pos", 3, MAX_COORD_M),
            "interval": _numbers([s.get("interval")], "a spawner's interval", 1, 120)[0],
            "count": _whole(s.get("count"), "a spawner's count", 200),
            "velocity": _numbers(s.get("velocity"), "a spawner's velocity", 3, MAX_SPEED),
        }
        for s in _rows(description, "spawners", 64)
    ]
    return {"triggers": triggers, "bindings": bindings, "movers": movers, "spawners": spawners}


def logic_scene(spec: Spec, description: Any) -> dict[str, Any]:
    """What the trusted host plays for a logic task: the task's level (fresh: level objects at the
    level's places; the agent's script may only have opened or removed them, which is logic at
    t = 0), the level's counters (never the agent's), the agent's own objects (no player: the
    verifier walks its own) and its declarative logic. Raises :class:`DescriptionError`."""
    objects = [o for o in sanitize(description)["objects"] if PLAYER not in (o["name"], o["asset"])]
    scene = merged(spec, {"objects": objects})
    agent = {o["name"]: o for o in objects}
    kept = []
    for o in scene["objects"]:
        if o.get("level") and o["name"] not in agent:
            continue
        if o.get("level") and agent[o["name"]]["open"]:
            o["pos"][2] += ASSETS[o["asset"]].size[2]
            o["open"] = True
        kept.append(o)
    scene["objects"] = kept
    scene.update(sanitize_logic(description))
    return scene


def _listening(value: Any) -> dict[str, Any]:
    """The logic session's ``listen`` answer, checked for shape."""
    if not isinstance(value, dict) or not isinstance(value.get("triggers"), dict):
        raise DescriptionError("the logic session did not say what it listens to")
    triggers = {
        _text(k, "a trigger"): [e for e in v if e in ("enter", "exit")]
        for k, v in value["triggers"].items()
        if isinstance(v, list)
    }
    next_timer = value.get("next_timer")
    if isinstance(next_timer, bool) or not isinstance(next_timer, int | float | None):
        next_timer = None
    return {
        "triggers": triggers,
        "every_frame": bool(value.get("every_frame")),
        "next_timer": next_timer,
    }


def _failure(result: Any) -> str:
    return result.error.message if result.error else "failed"


def play_path(
    logic: Session,
    host: Any,
    scene: dict[str, Any],
    listen: dict[str, Any],
    trajectory: dict[str, Any],
    seconds: float,
    budget_s: float,
) -> tuple[dict[str, Any] | None, str | None]:
    """One held-out play: the trusted ``host`` (``TrustedSimulator.request`` under its lock)
    owns the world and the player; ``logic`` (the agent's session) answers each stop with
    actions within ``REACT_S`` s each and ``budget_s`` s in all. Returns ``(trace, None)`` or
    ``(None, why)``."""
    deadline = time.monotonic() + budget_s
    args = {
        "description": scene,
        "path": trajectory["path"],
        "speed": trajectory["speed"],
        "waits": trajectory.get("waits", []),
        "seconds": seconds,
        "listen": listen,
    }
    stop = host("host", args)
    dt = float(scene.get("dt", 1 / 60))
    while stop.ok and isinstance(stop.value, dict) and not stop.value.get("done"):
        at = f"{stop.value['state']['frame'] * dt:.2f} s"
        left = deadline - time.monotonic()
        if left <= 0:
            return None, f"the game logic took more than {budget_s:g} s in all (at {at})"
        request = {"state": stop.value["state"], "phase": stop.value["phase"]}
        answer = logic.request("react", request, timeout=min(REACT_S, left))
        if not answer.ok:
            return None, f"the game logic failed at {at}: {_failure(answer)}"
        if not isinstance(answer.value, dict):
            return None, f"the game logic answered at {at} with no actions"
        stop = host("resume", {"answer": answer.value})
        if not stop.ok:
            return None, f"the game logic's actions at {at} were refused: {_failure(stop)}"
    if not stop.ok:
        return None, _failure(stop)
    return sanitize_trace(stop.value["trace"]), None


def played(
    spec: Spec,
    actions: Sequence[Action],
    tier: str,
    simulator: TrustedSimulator,
    limits: Limits | None = None,
    replay: LogicReplay | None = None,
) -> tuple[list[tuple[dict, dict]], str | None]:
    """Replay ``actions`` on a fresh copy of the level in a fresh logic session (``replay``,
    when given, an env's kept one: it starts from the longest run of these actions it has
    replayed before any play, and replays the rest), then play the held-out paths (two at the
    cheap tier, all at the exact one) on the trusted ``simulator``, the logic session answering
    its stops from a snapshot of its replayed state each time. Returns ``(plays, why the game
    could not be played or None)``."""
    limits = limits or VERIFY_LIMITS
    kept = replay or LogicReplay(limits, reuse=False)
    try:
        return _played(spec, actions, tier, simulator, limits, kept)
    finally:
        if replay is None:
            kept.close()
        else:  # back to the replayed state while the caller scores the plays
            kept.release()


def _played(
    spec: Spec,
    actions: Sequence[Action],
    tier: str,
    simulator: TrustedSimulator,
    limits: Limits,
    replay: LogicReplay,
) -> tuple[list[tuple[dict, dict]], str | None]:
    trajectories = spec.trajectories if tier == "exact" else spec.trajectories[:CHEAP_PATHS]
    plays: list[tuple[dict, dict]] = []
    session, done, snapshot, why = replay.start(spec.level, actions)
    if session is None:
        return [], why
    for k, (kind, action) in enumerate(actions[done:], done):
        if kind == "code":
            ran = session.run(action, filename=f"<step {k + 1}>")
        else:
            ran = session.request("tool", {"call": action})
        if not ran.ok:
            return [], f"replaying step {k + 1} failed: {_failure(ran)}"
    described, heard = session.request("describe"), session.request("listen")
    if not described.ok or not heard.ok:
        return (
            [],
            f"the game logic cannot be read: {_failure(heard if described.ok else described)}",
        )
    try:
        scene, listen = logic_scene(spec, described.value), _listening(heard.value)
    except DescriptionError as exc:
        return [], f"the game logic cannot be used: {exc}"
    if done < len(actions) or snapshot is None:
        try:
            snapshot = session.snapshot()  # each path starts here: callbacks may keep state
        except SandboxError as exc:
            return [], f"the game logic could not be kept for the paths: {exc}"
        replay.keep(actions, snapshot)  # taken before any play: the next step may start here
    rewind = Rewind()  # the logic session's return to the replayed state, between paths
    try:
        with simulator.held() as host:
            for k, trajectory in enumerate(trajectories):
                if k and (failure := rewind.wait()):
                    return [], f"the game logic could not be reset for path {k + 1}: {failure}"
                trace, why = play_path(
                    session, host, scene, listen, trajectory, spec.seconds, limits.wall_s
                )
                if why:
                    return [], f"the game did not run to the end on path {k + 1}: {why}"
                plays.append((trajectory, trace))
                if k + 1 < len(trajectories):  # while the simulator, too, goes back
                    rewind.start(session, snapshot)
    finally:
        rewind.wait()
    return plays, None


def failed_report(tier: str, why: str) -> VerifierReport:
    """A score of 0 with one failed check saying why (the game could not be played)."""
    checks = {"game": {"ok": False, "message": why, "weight": 1.0, "shaping": 0.0}}
    metrics = {"score": 0.0, "constraints_met": 0.0, "constraints": 1.0}
    return VerifierReport(metrics, 0.0, False, tier, checks=checks)


@dataclasses.dataclass
class Candidate:
    """What the agent built: its scene's objects (validated), the actions that built it, and
    the declarative logic its scene held, counted (``{"triggers": 2, ...}``; a layout or
    physics task ignores it, and says so)."""

    objects: dict[str, Any]
    actions: list[Action]
    logic: dict[str, int] = dataclasses.field(default_factory=dict)
    # Its trigger zones (validated), drawn in its views as the target's are.
    triggers: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def verify_candidate(
    task: Task,
    candidate: Candidate | None,
    tier: str,
    simulator: TrustedSimulator,
    limits: Limits | None = None,
    replay: LogicReplay | None = None,
) -> tuple[VerifierReport, dict[str, Any]]:
    """Score a candidate at ``tier``; returns the report and the scene that was checked.
    ``replay``: the logic session a logic task's steps are replayed in (see :func:`played`)."""
    spec = spec_for(task.parameters)
    if candidate is None:
        scene = copy.deepcopy(spec.level)
        return verify_scene(scene, spec.constraints, tier), scene
    scene = merged(spec, candidate.objects)
    refused, ignored = changes(spec, candidate.objects)
    if spec.kind != "logic" and candidate.logic:
        held = ", ".join(f"{n} {key[:-1] if n == 1 else key}" for key, n in candidate.logic.items())
        ignored.append(f"the scene's {held} (a {spec.kind} task plays objects only)")
    notes = {"refused": refused, "ignored": ignored}
    try:
        if spec.kind == "logic":
            plays, why = played(spec, candidate.actions, tier, simulator, limits, replay)
            if why:
                return failed_report(tier, why), scene
            notes["refused"] += sorted(
                {
                    f"the logic's binding to {r} was skipped (logic may not act on the verifier's "
                    "player)"
                    for _, trace in plays
                    for r in trace.get("refused", ())
                }
            )
            return verify_scene(
                scene, spec.constraints, tier, plays=plays, seconds=spec.seconds, notes=notes
            ), scene
        # A set-up that starts wrong earns nothing from its outcome: it is not simulated.
        checked, traces = Scene(scene), []
        if all(checked.static(c)[0] for c in spec.constraints if c["kind"] == "initial"):
            simulating = simulator.background(simulated_traces, spec, scene, tier, simulator)
            for c in spec.constraints:  # read off the scene while the trusted session simulates
                if c["kind"] in STATIC_CHECKS:
                    checked.static(c)
            traces = simulating.result()
    except DescriptionError as exc:
        return failed_report(tier, str(exc)), scene
    return verify_scene(checked, spec.constraints, tier, traces=traces, notes=notes), scene


def candidate_of(session: Session, actions: list[Action]) -> tuple[Candidate | None, str | None]:
    """The session's scene as a candidate, or why there is none."""
    described = session.request("describe")
    if not described.ok:
        return None, described.error.message if described.error else "describe failed"
    try:
        objects = sanitize(described.value)
        logic = {
            key: len(described.value[key])
            for key in ("triggers", "bindings", "movers", "spawners")
            if isinstance(described.value.get(key), list) and described.value[key]
        }
    except DescriptionError as exc:
        return None, str(exc)
    try:
        triggers = sanitize_logic(described.value)["triggers"]
    except DescriptionError:  # bad logic fails the logic checks; the views show the objects
        triggers = []
    return Candidate(objects, list(actions), logic, triggers), None


_references: dict[str, dict[str, Any]] = {}
_references_lock = threading.Lock()


def reference_scene(task: Task) -> dict[str, Any]:
    """The task's target scene: its reference script run on its level in a session, merged as
    a candidate's would be. Built once per process, and once per machine through the on-disk
    cache (``toolgym.envs.episode.cache``: the scene packed as the sandbox protocol packs it,
    msgpack), keyed by the reference, the task's parameters (its level) and the code that builds
    it."""
    with _references_lock:
        if task.id in _references:
            return _references[task.id]
    key = _reference_key(task)
    scene = _cached_scene(key)
    if scene is None:
        scene, hidden = _build_reference(task)
        packed = protocol.pack({"scene": scene})
        if hidden:
            cache.store(key, {"scene": np.frombuffer(packed, dtype=np.uint8)})
        scene = protocol.decode(packed)["scene"]  # as a cached one reads: lists, not tuples
    with _references_lock:
        _references[task.id] = scene
    return scene


def _build_reference(task: Task) -> tuple[dict[str, Any], bool]:
    """The reference scene, and whether its session could not see the on-disk cache."""
    spec = spec_for(task.parameters)
    with Session("scene", VERIFY_LIMITS) as session:
        session.request("load", {"description": spec.level, "frozen": True})
        ran = session.run(task.start, filename=f"<start {task.id}>")
        if ran.ok:
            ran = session.run(task.reference, filename=f"<reference {task.id}>")
        if not ran.ok:
            raise ReferenceBuildError(f"{task.id}: the reference failed: {ran.feedback()}")
        candidate, why = candidate_of(session, [])
        triggers = session.request("describe").value.get("triggers", [])
        hidden = cache.hidden_from(session.allowed_paths, session.layers)
    if candidate is None:
        raise ReferenceBuildError(f"{task.id}: the reference scene is unusable: {why}")
    scene = merged(spec, candidate.objects)
    scene["triggers"] = [t for t in triggers if isinstance(t, dict)][:64]
    return scene, hidden


# The sources whose code decides a reference scene: a change to one is a new cache key.
_REFERENCE_SOURCES = (
    "toolgym.envs.scene.backend",
    "toolgym.envs.scene.catalogue",
    "toolgym.envs.scene.families",
    "toolgym.envs.scene.logic",
    "toolgym.envs.scene.runtime",
    "toolgym.envs.scene.tools",
    "toolgym.envs.scene.verification",
)


def _reference_key(task: Task) -> str:
    """What decides a reference scene: the reference program, the task's parameters (its
    level), Panda3D's version and the code that builds and reads scenes."""
    inputs = {
        "start": task.start,
        "reference": task.reference,
        "parameters": dict(task.parameters),
        "panda3d": cache.tool_versions("panda3d"),
    }
    return cache.cache_key("scene-reference", inputs, modules=_REFERENCE_SOURCES)


def _cached_scene(key: str) -> dict[str, Any] | None:
    """The scene stored under ``key``, or ``None`` (none, or not a scene)."""
    arrays = cache.load(key)
    packed = None if arrays is None else arrays.get("scene")
    if packed is None or packed.dtype != np.uint8 or packed.ndim != 1:
        return None
    try:
        scene = protocol.decode(packed.tobytes())["scene"]
    except (protocol.ProtocolViolation, KeyError, TypeError, ValueError):  # not a message of ours
        return None
    ok = (
        isinstance(scene, dict)
        and isinstance(scene.get("objects"), list)
        and isinstance(scene.get("triggers"), list)
    )
    return scene if ok else None


def verify_script(
    task: Task, script: str, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    """Run ``script`` on the task's level in a fresh session and score it at the final tier."""
    started = time.perf_counter()
    spec = task_spec(task)
    actions: list[Action] = [("code", task.start)] if task.start else []
    with Session("scene", limits) as session:
        session.request("load", {"description": spec.level, "frozen": False})
        ran = session.run(task.start, filename=f"<start {task.id}>")
        ran = session.run(script, filename=filename) if ran.ok else ran
        if not ran.ok:
            message = ran.error.message if ran.error else "failed"
            return Outcome(task.id, None, "script", message, time.perf_counter() - started)
        candidate, why = candidate_of(session, [*actions, ("code", script)])
    if candidate is None:
        return Outcome(task.id, None, "script", why, time.perf_counter() - started)
    simulator = TrustedSimulator(limits or VERIFY_LIMITS)
    try:
        report, _ = verify_candidate(
            task, candidate, task.verification.final_tier, simulator, limits
        )
    finally:
        simulator.close()
    return Outcome(task.id, report, None, None, time.perf_counter() - started)


def scene_glb(scene: dict[str, Any]) -> bytes:
    """A scene description as GLB (Y-up, as glTF requires): every object, the room's walls."""
    import trimesh

    from toolgym.envs.scene.catalogue import Z_UP_TO_Y_UP, asset_mesh
    from toolgym.envs.scene.verifier import room_walls, rotation_hpr

    out = trimesh.Scene()
    for o in scene["objects"]:
        vertices, faces = asset_mesh(o["asset"])
        mesh = trimesh.Trimesh(np.asarray(vertices), np.asarray(faces), process=False)
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = rotation_hpr(o["hpr"]), o["pos"]
        mesh.apply_transform(transform)
        mesh.visual.face_colors = [int(c * 255) for c in ASSETS[o["asset"]].color] + [255]
        out.add_geometry(mesh, geom_name=o["name"])
    for name, (center, _rot, half) in room_walls(scene.get("room")):
        box = trimesh.creation.box(extents=2 * half)
        box.apply_translation(center)
        out.add_geometry(box, geom_name=name.replace(" ", "_"))
    out.apply_transform(np.asarray(Z_UP_TO_Y_UP, dtype=float))
    return out.export(file_type="glb")


def export_reference(task: Task, fmt: str) -> bytes:
    """The task's target scene as ``json`` (the description) or ``glb``."""
    scene = reference_scene(task)
    if fmt == "json":
        return (json.dumps(scene, indent=1) + "\n").encode()
    if fmt == "glb":
        return scene_glb(scene)
    raise ValueError(f"unknown format {fmt!r}; use json or glb")


@functools.cache
def _renderer(view_size: int) -> Any:
    from toolgym.envs.scene.views import SceneRenderer

    return SceneRenderer(view_size)


def target_image(task: Task, view_size: int = 256) -> np.ndarray:
    """The target scene from the perspective camera and from above, side by side."""
    spec = spec_for(task.parameters)
    return _renderer(view_size).render(reference_scene(task), spec.bounds)
