"""The env server's sessions and protocol, without the web framework (``envs/serving/server.py``
serves them; ``envs/serving/remote.py`` reads what they send).

:class:`Sessions` holds one env per session id under a cap, closes idle ones and remembers why an
id is gone; :class:`Protocol` is the reset/step/finish/state operations on them, shared by HTTP and
WebSocket, each returning plain JSON data or raising :class:`ServerError` (a status, one line, a
code). Pictures travel as ``{"png": "<base64>", "shape": [H, W, 3]}``.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import dataclasses
import inspect
import io
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from toolgym.envs.episode.loop import RUN_CODE
from toolgym.envs.recording.log import to_json
from toolgym.envs.registration import DEFAULT_ENV, cards

# Constructor arguments a client may not set: the sandbox's limits are the server's to choose.
SERVER_ONLY = {"limits", "render_mode"}


class ServerError(Exception):
    """A request the server refuses: an HTTP status, a one-line message and a short code."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OpenRequest(_Body):
    env: str = DEFAULT_ENV
    env_kwargs: dict[str, Any] = Field(default_factory=dict)


class ResetRequest(_Body):
    session_id: str | None = Field(default=None, max_length=64)
    env: str | None = None
    env_kwargs: dict[str, Any] | None = None
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    options: dict[str, Any] | None = None
    episode_id: str | None = Field(default=None, max_length=255)


class StepData(_Body):
    """A step's ``data`` over ``/ws``; a bare tool call ``{"name", "arguments"}`` there is taken
    as the action too, as OpenEnv's clients send it (``POST /step`` adds ``session_id``)."""

    action: str | dict[str, Any] = Field(
        description='a script (code mode) or a tool call {"name", "arguments"} (tool mode)'
    )
    request_id: str | None = Field(default=None, max_length=255)
    # OpenEnv's clients send it; the sandbox's limits are the server's, so it changes nothing.
    timeout_s: float | None = Field(default=None, gt=0)


class StepRequest(StepData):
    session_id: str = Field(max_length=64)


class SessionRequest(_Body):
    session_id: str = Field(max_length=64)


@dataclasses.dataclass
class _Session:
    id: str
    env_id: str
    env_kwargs: dict[str, Any]
    env: gym.Env | None  # None while it is being made
    lock: threading.Lock
    last_used: float
    episode_id: str | None = None
    steps: int = 0
    done: bool = False
    reset: bool = False
    final: dict[str, Any] | None = None  # the final tier's report, once the episode ended


class Sessions:
    """The server's sessions: at most ``max_sessions``, each closed after ``idle_s`` unused."""

    def __init__(self, *, max_sessions: int, idle_s: float, limits: Any = None) -> None:
        self.max_sessions, self.idle_s, self.limits = max_sessions, idle_s, limits
        self._sessions: dict[str, _Session] = {}
        self._expired: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._queued: collections.Counter[str] = collections.Counter()  # requests waiting
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="toolgym-reaper", daemon=True)
        self._reaper.start()

    def open(self, env_id: str, env_kwargs: dict[str, Any]) -> _Session:
        kwargs = _check_env(env_id, env_kwargs)
        with self._lock:  # reserve the slot before the (slow) make
            if len(self._sessions) >= self.max_sessions:
                raise ServerError(
                    503,
                    f"the server holds its cap of {self.max_sessions} sessions; close one "
                    f"(DELETE /sessions/<id>) or wait for one to idle out ({self.idle_s:g} s)",
                    "at_capacity",
                )
            session_id = uuid.uuid4().hex
            placeholder = _Session(session_id, env_id, kwargs, None, threading.Lock(), time.time())
            self._sessions[session_id] = placeholder
        try:
            extra = {"limits": self.limits} if self.limits is not None else {}
            env = gym.make(env_id, **kwargs, **extra)
        except (ValueError, TypeError, KeyError) as exc:
            with self._lock:
                self._sessions.pop(session_id, None)
            raise ServerError(400, f"{env_id}: {_message(exc)}", "bad_env_kwargs") from None
        except BaseException:
            with self._lock:
                self._sessions.pop(session_id, None)
            raise
        with self._lock:
            placeholder.env, placeholder.last_used = env, time.time()
            kept = self._sessions.get(session_id) is placeholder
        if not kept:  # closed while it opened (the server stopping)
            env.close()
            raise ServerError(409, f"session {session_id!r} was closed as it opened", "closed")
        return placeholder

    @contextlib.contextmanager
    def use(self, session_id: str) -> Iterator[_Session]:
        """The session, held for one call (calls to one session run one at a time)."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.env is None:
                why = self._expired.get(session_id)
                message = f"unknown session {session_id!r}" + (f" ({why})" if why else "")
                raise ServerError(404, message, "unknown_session")
            session.last_used = time.time()
        with session.lock:
            if session_id not in self._sessions:  # closed while this call waited
                raise ServerError(404, f"session {session_id!r} was closed", "unknown_session")
            try:
                yield session
            finally:
                session.last_used = time.time()

    @contextlib.contextmanager
    def queued(self, session_id: str | None) -> Iterator[None]:
        """A request for ``session_id`` has arrived: the session is in use while the request
        waits for one of the server's threads (behind hundreds of others' steps, that can take
        longer than ``idle_s``), not idle."""
        if session_id is None:
            yield
            return
        with self._lock:
            self._queued[session_id] += 1
        try:
            yield
        finally:
            with self._lock:  # the call itself marked the session used (see use)
                self._queued[session_id] -= 1
                if self._queued[session_id] <= 0:
                    del self._queued[session_id]

    def close(self, session_id: str, why: str = "closed") -> bool:
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is None:
                return False
            self._expired[session_id] = why
            while len(self._expired) > 10_000:
                self._expired.popitem(last=False)
        with session.lock:  # after the call in flight, if any
            if session.env is not None:
                session.env.close()
        return True

    def count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def shutdown(self) -> None:
        self._stop.set()
        for session_id in list(self._sessions):
            self.close(session_id, "the server stopped")

    def _reap(self) -> None:
        while not self._stop.wait(reap_interval(self.idle_s)):
            now = time.time()
            with self._lock:
                idle = [
                    s.id
                    for s in self._sessions.values()
                    if s.env is not None
                    and now - s.last_used > self.idle_s
                    and not s.lock.locked()
                    and not self._queued[s.id]
                ]
            for session_id in idle:
                self.close(session_id, f"expired after {self.idle_s:g} s idle")


def reap_interval(idle_s: float) -> float:
    """How often, in seconds, idle sessions are looked for: a session idle for ``idle_s`` closes
    within ``idle_s`` plus this."""
    return min(max(idle_s / 4, 0.05), 5.0)


def _check_env(env_id: Any, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    if env_id not in (served := [card.env_id for card in cards()]):
        known = ", ".join(served)
        raise ServerError(400, f"unknown env {env_id!r}; known: {known}", "unknown_env")
    entry = gym.spec(env_id).entry_point
    module, _, name = str(entry).partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    takes = set(inspect.signature(cls.__init__).parameters) - {"self"} - SERVER_ONLY
    unknown = sorted(set(env_kwargs) - takes)
    if unknown:
        raise ServerError(
            400,
            f"{env_id}: env_kwargs {unknown} are not arguments a client may set; "
            f"allowed: {sorted(takes)}",
            "bad_env_kwargs",
        )
    return dict(env_kwargs)


# -- plain data ---------------------------------------------------------------------------------
def encode_observation(observation: dict[str, Any]) -> dict[str, Any]:
    """Pictures as ``{"png": base64, "shape": [...]}``, the rest as is (text, step)."""
    from PIL import Image

    out: dict[str, Any] = {}
    for key, value in observation.items():
        if isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim == 3:
            buffer = io.BytesIO()
            Image.fromarray(value).save(buffer, format="PNG", compress_level=1)
            out[key] = {"png": base64.b64encode(buffer.getvalue()).decode(), "shape": value.shape}
        elif isinstance(value, np.generic):
            out[key] = value.item()
        else:
            out[key] = value
    return out


def decode_observation(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`encode_observation`: pictures back as ``uint8`` arrays."""
    from PIL import Image

    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and "png" in value:
            picture = Image.open(io.BytesIO(base64.b64decode(value["png"])))
            out[key] = np.asarray(picture, dtype=np.uint8).reshape(value["shape"])
        else:
            out[key] = value
    return out


def _plain(value: Any) -> Any:
    return json.loads(to_json(value))


def spaces_of(env: gym.Env) -> dict[str, Any]:
    """What a client needs to rebuild the env's spaces (``envs/serving/remote.py``)."""
    observation = env.observation_space
    return {
        "image": list(observation["image"].shape),
        "target": list(observation["target"].shape),
        "prompt": observation["prompt"].max_length,
        "feedback": observation["feedback"].max_length,
        "step": int(observation["step"].n),
        "action": env.action_space.max_length,
    }


# -- the protocol, for HTTP and WebSocket alike ------------------------------------------------
class Protocol:
    """The operations, on :class:`Sessions`; each returns plain data or raises ServerError."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    def open(self, body: OpenRequest) -> dict[str, Any]:
        session = self.sessions.open(body.env, body.env_kwargs)
        return self._described(session)

    def _described(self, session: _Session) -> dict[str, Any]:
        unwrapped = session.env.unwrapped
        return {
            "session_id": session.id,
            "env": session.env_id,
            "env_kwargs": _plain(session.env_kwargs),
            "action_mode": unwrapped.action_mode,
            "max_steps": unwrapped.max_steps,
            "backend": unwrapped.backend,
            "spaces": spaces_of(session.env),
            "tools": unwrapped.tool_schemas(),
            "agent_tools": unwrapped.agent_tools(),
        }

    def reset(self, body: ResetRequest) -> dict[str, Any]:
        opened = None
        if body.session_id is None:
            opened = self.sessions.open(body.env or DEFAULT_ENV, body.env_kwargs or {})
            session_id = opened.id
        else:
            session_id = body.session_id
            if body.env is not None or body.env_kwargs is not None:
                raise ServerError(
                    400,
                    "env and env_kwargs are chosen when a session opens; open a new one",
                    "bad_request",
                )
        try:
            with self.sessions.use(session_id) as session:
                try:
                    observation, info = session.env.reset(seed=body.seed, options=body.options)
                except (ValueError, KeyError, TypeError) as exc:  # an unknown task, say
                    raise ServerError(400, f"reset: {_message(exc)}", "bad_reset") from None
                session.episode_id = body.episode_id or uuid.uuid4().hex
                session.steps, session.done, session.reset = 0, False, True
                session.final = None
                result = {
                    "session_id": session.id,
                    "episode_id": session.episode_id,
                    "observation": encode_observation(observation),
                    "reward": None,
                    "done": False,
                    "info": _plain(info),
                }
                if opened is not None:
                    result |= {
                        k: v for k, v in self._described(session).items() if k != "session_id"
                    }
                return result
        except BaseException:
            if opened is not None:
                self.sessions.close(opened.id, "its first reset failed")
            raise

    def step(self, body: StepRequest) -> dict[str, Any]:
        with self.sessions.use(body.session_id) as session:
            self._playing(session)
            observation, reward, terminated, truncated, info = session.env.step(body.action)
            session.steps += 1
            session.done = bool(terminated or truncated)
            session.final = info.get("final_report") if session.done else None
            return {
                "observation": encode_observation(observation),
                "reward": float(reward),
                "done": session.done,
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": _plain(info),
            }

    def call_tool(self, session_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One step by function call (MCP's ``tools/call``, NeMo Gym's tool routes): ``name``
        must be one of the tools the session's agent is offered (``ToolEnv.agent_tools``)."""
        with self.sessions.use(session_id) as session:
            offered = {tool["function"]["name"] for tool in session.env.unwrapped.agent_tools()}
        if name not in offered:
            known = ", ".join(sorted(offered))
            message = f"unknown tool {name!r}; this session's: {known}"
            raise ServerError(400, message, "unknown_tool")
        action: Any = {"name": name, "arguments": arguments}
        if name == RUN_CODE:
            if set(arguments) != {"code"} or not isinstance(arguments["code"], str):
                message = f'{RUN_CODE}: arguments are {{"code": "..."}}'
                raise ServerError(400, message, "bad_request")
            action = arguments["code"]
        return self.step(StepRequest(session_id=session_id, action=action))

    def finish(self, body: SessionRequest) -> dict[str, Any]:
        with self.sessions.use(body.session_id) as session:
            self._playing(session)
            reward, info = session.env.unwrapped.finish()
            session.done, session.final = True, info.get("final_report")
            return {"reward": reward, "done": True, "info": _plain(info)}

    def outcome(self, session_id: str) -> tuple[dict[str, Any], int]:
        """The episode's final report (plain JSON) and its steps; an episode still going is
        finished first (the part scored as it stands)."""
        with self.sessions.use(session_id) as session:
            if not session.reset:
                raise ServerError(409, "the session has no episode yet", "not_reset")
            if not session.done:
                _, info = session.env.unwrapped.finish()
                session.done, session.final = True, info.get("final_report")
            return _plain(session.final or {}), session.steps

    def state(self, session_id: str) -> dict[str, Any]:
        with self.sessions.use(session_id) as session:
            task = getattr(session.env.unwrapped, "task", None)
            return {
                "session_id": session.id,
                "episode_id": session.episode_id,
                "step_count": session.steps,
                "env": session.env_id,
                "task": getattr(task, "id", None),
                "done": session.done,
            }

    @staticmethod
    def _playing(session: _Session) -> None:
        if not session.reset:
            raise ServerError(409, "call /reset before /step", "not_reset")
        if session.done:
            raise ServerError(409, "the episode is over; call /reset", "episode_over")


def _message(exc: Exception) -> str:
    """An exception's message (a ``KeyError``'s without the quotes its ``str`` adds)."""
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def validation_message(errors: Any) -> str:
    parts = []
    for error in list(errors)[:3]:
        if error.get("type") == "json_invalid":
            why = (error.get("ctx") or {}).get("error", "invalid")
            return f"the body is not valid JSON: {why} at character {error['loc'][-1]}"
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "malformed request"
