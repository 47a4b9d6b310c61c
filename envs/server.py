"""Every toolgym environment over HTTP and WebSocket, in OpenEnv's shape (``toolgym serve``).

One sandboxed env per session id. HTTP, JSON bodies (OpenEnv's ``/reset``, ``/step``, ``/state``,
``/health``, plus what a session needs)::

    POST   /sessions  {"env": id, "env_kwargs": {...}}  -> {"session_id", "spaces", "tools", ...}
    POST   /reset     {"session_id"?, "env"?, "env_kwargs"?, "seed"?, "options"?}
                      -> {"session_id", "observation", "reward": null, "done": false, "info"}
    POST   /step      {"session_id", "action": "<script>" | {"name", "arguments"}}
                      -> {"observation", "reward", "done", "terminated", "truncated", "info"}
    POST   /finish    {"session_id"}  the agent is done: the final tier scores the part
    GET    /state?session_id=...      -> {"episode_id", "step_count", "task", "done", ...}
    DELETE /sessions/{session_id}
    GET    /health, GET /envs

``/reset`` without a session id opens one (the env and its arguments default to CadQuery's).
Pictures travel as ``{"png": "<base64>", "shape": [H, W, 3]}``; ``info`` as plain JSON. The
WebSocket ``/ws`` holds one session for the connection: messages
``{"type": "reset" | "step" | "state" | "finish" | "close", "data": {...}}`` (``data`` as the HTTP
bodies, without ``session_id``), answers ``{"type": "observation" | "state" | "error", "data"}``.

Limits: at most ``max_sessions`` at once (503 beyond), a session idle for ``idle_s`` is closed
(its id then answers 404 saying it expired), bodies and WebSocket messages over
``max_request_bytes`` are refused (413), and with a ``token`` every route but ``/health`` needs
``Authorization: Bearer <token>`` (401). A malformed request is a 4xx with
``{"error": "<one line>", "code": "..."}``; nothing a client sends stops the server. Clients
choose the env's arguments (suite, task, action mode, ...), never its sandbox limits: those are
the server's (``limits``).
"""

from __future__ import annotations

import base64
import collections
import contextlib
import dataclasses
import hmac
import inspect
import io
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

import toolgym
from toolgym.envs.recording import _dumps

DEFAULT_ENV = "toolgym/CadQuery-v0"
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


class StepRequest(_Body):
    session_id: str = Field(max_length=64)
    action: str | dict[str, Any]
    request_id: str | None = Field(default=None, max_length=255)


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


class Sessions:
    """The server's sessions: at most ``max_sessions``, each closed after ``idle_s`` unused."""

    def __init__(self, *, max_sessions: int, idle_s: float, limits: Any = None) -> None:
        self.max_sessions, self.idle_s, self.limits = max_sessions, idle_s, limits
        self._sessions: dict[str, _Session] = {}
        self._expired: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="toolgym-reaper", daemon=True)
        self._reaper.start()

    def open(self, env_id: str, env_kwargs: dict[str, Any]) -> _Session:
        kwargs = _check_env(env_id, env_kwargs)
        with self._lock:  # reserve the slot before the (slow) make
            if len(self._sessions) >= self.max_sessions:
                raise ServerError(
                    503, f"the server holds its cap of {self.max_sessions} sessions; close one "
                    f"(DELETE /sessions/<id>) or wait for one to idle out ({self.idle_s:g} s)",
                    "at_capacity",
                )  # fmt: skip
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
        while not self._stop.wait(min(max(self.idle_s / 4, 0.05), 5.0)):
            now = time.time()
            with self._lock:
                idle = [
                    s.id for s in self._sessions.values()
                    if s.env is not None and now - s.last_used > self.idle_s
                    and not s.lock.locked()
                ]  # fmt: skip
            for session_id in idle:
                self.close(session_id, f"expired after {self.idle_s:g} s idle")


def _check_env(env_id: Any, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    if env_id not in toolgym.ENVIRONMENTS:
        known = ", ".join(toolgym.ENVIRONMENTS)
        raise ServerError(400, f"unknown env {env_id!r}; known: {known}", "unknown_env")
    entry = gym.spec(env_id).entry_point
    module, _, name = str(entry).partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    takes = set(inspect.signature(cls.__init__).parameters) - {"self"} - SERVER_ONLY
    unknown = sorted(set(env_kwargs) - takes)
    if unknown:
        raise ServerError(
            400, f"{env_id}: env_kwargs {unknown} are not arguments a client may set; "
            f"allowed: {sorted(takes)}", "bad_env_kwargs",
        )  # fmt: skip
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
    return json.loads(_dumps(value))


def spaces_of(env: gym.Env) -> dict[str, Any]:
    """What a client needs to rebuild the env's spaces (``envs/remote.py``)."""
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
                    400, "env and env_kwargs are chosen when a session opens; open a new one",
                    "bad_request",
                )  # fmt: skip
        try:
            with self.sessions.use(session_id) as session:
                try:
                    observation, info = session.env.reset(seed=body.seed, options=body.options)
                except (ValueError, KeyError, TypeError) as exc:  # an unknown task, say
                    raise ServerError(400, f"reset: {_message(exc)}", "bad_reset") from None
                session.episode_id = body.episode_id or uuid.uuid4().hex
                session.steps, session.done, session.reset = 0, False, True
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
            return {
                "observation": encode_observation(observation),
                "reward": float(reward),
                "done": session.done,
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": _plain(info),
            }

    def finish(self, body: SessionRequest) -> dict[str, Any]:
        with self.sessions.use(body.session_id) as session:
            self._playing(session)
            reward, info = session.env.unwrapped.finish()
            session.done = True
            return {"reward": reward, "done": True, "info": _plain(info)}

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


# -- the app ------------------------------------------------------------------------------------
def create_app(
    *,
    token: str | None = None,
    max_sessions: int = 8,
    idle_s: float = 600.0,
    max_request_bytes: int = 1024 * 1024,
    limits: Any = None,
) -> FastAPI:
    """The ASGI app (serve it with uvicorn; ``toolgym serve`` does). ``limits``: the sandbox
    :class:`~toolgym.envs.sandbox.Limits` of every session (default: the env's)."""
    if max_sessions < 1 or idle_s <= 0 or max_request_bytes < 1024:
        raise ValueError("max_sessions ≥ 1, idle_s > 0 and max_request_bytes ≥ 1024 are needed")
    sessions = Sessions(max_sessions=max_sessions, idle_s=idle_s, limits=limits)
    protocol = Protocol(sessions)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        await run_in_threadpool(sessions.shutdown)

    app = FastAPI(title="toolgym env server", version=toolgym.__version__, lifespan=lifespan)
    app.state.sessions = sessions

    def authorised(headers: Any) -> bool:
        if token is None:
            return True
        given = headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        if request.url.path != "/health" and not authorised(request.headers):
            return _error(401, "missing or wrong bearer token (Authorization: Bearer ...)",
                          "unauthorised")  # fmt: skip
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_request_bytes):
            return _error(413, f"the body is over {max_request_bytes} bytes", "too_large")
        if length is None and request.method in ("POST", "PUT", "PATCH"):
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_request_bytes:
                    return _error(413, f"the body is over {max_request_bytes} bytes", "too_large")
            request._body = body  # read once here: the route reads it back
        return await call_next(request)

    @app.exception_handler(ServerError)
    async def refused(request: Request, exc: ServerError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "no_route", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
        message = str(exc.detail)
        if message == "There was an error parsing the body":  # nested too deep for the parser
            message = "the body could not be parsed as JSON"
        return _error(exc.status_code, message, code)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc.errors()), "malformed_request")

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"{type(exc).__name__}: {exc}".splitlines()[0][:300], "server_error")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "healthy", "sessions": sessions.count(), "max_sessions": max_sessions}

    @app.get("/envs")
    def envs() -> dict[str, Any]:
        return {"envs": list(toolgym.ENVIRONMENTS)}

    @app.post("/sessions")
    def open_session(body: OpenRequest) -> dict[str, Any]:
        return protocol.open(body)

    @app.delete("/sessions/{session_id}")
    def close_session(session_id: str) -> dict[str, Any]:
        if not sessions.close(session_id):
            raise ServerError(404, f"unknown session {session_id!r}", "unknown_session")
        return {"closed": session_id}

    @app.post("/reset")
    def reset(body: ResetRequest) -> dict[str, Any]:
        return protocol.reset(body)

    @app.post("/step")
    def step(body: StepRequest) -> dict[str, Any]:
        return protocol.step(body)

    @app.post("/finish")
    def finish(body: SessionRequest) -> dict[str, Any]:
        return protocol.finish(body)

    @app.get("/state")
    def state(session_id: str) -> dict[str, Any]:
        return protocol.state(session_id)

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        if not authorised(websocket.headers):
            await websocket.close(code=1008, reason="missing or wrong bearer token")
            return
        await websocket.accept()
        session_id: str | None = None
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text") or message.get("bytes") or b""
                text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
                reply, session_id, close = await run_in_threadpool(
                    _ws_message, protocol, text, session_id, max_request_bytes
                )
                await websocket.send_text(json.dumps(reply))
                if close:
                    await websocket.close()
                    break
        except WebSocketDisconnect:
            pass
        finally:
            if session_id is not None:
                await run_in_threadpool(sessions.close, session_id, "its WebSocket closed")

    return app


def _ws_message(
    protocol: Protocol, text: str, session_id: str | None, limit: int
) -> tuple[dict[str, Any], str | None, bool]:
    """One WebSocket message: ``(reply, the connection's session id, close?)``; never raises."""
    try:
        if len(text.encode()) > limit:
            raise ServerError(413, f"the message is over {limit} bytes", "too_large")
        try:
            message = json.loads(text)
        except ValueError as exc:
            raise ServerError(400, f"the message is not JSON: {exc}", "malformed_request") from None
        if not isinstance(message, dict) or not isinstance(message.get("data", {}), dict):
            raise ServerError(400, 'a message is {"type": ..., "data": {...}}', "malformed_request")
        kind, data = message.get("type"), message.get("data", {})
        if kind == "close":
            return {"type": "closed", "data": {}}, session_id, True
        if kind == "reset":
            body = ResetRequest(**data, session_id=session_id)
            if session_id is not None and (body.env or body.env_kwargs):
                protocol.sessions.close(session_id, "reopened with other arguments")
                session_id = None
                body = ResetRequest(**data)
            result = protocol.reset(body)
            return {"type": "observation", "data": result}, result["session_id"], False
        if kind not in ("step", "finish", "state"):
            raise ServerError(
                400, f"unknown message type {kind!r}; known: reset, step, state, finish, close",
                "malformed_request",
            )  # fmt: skip
        if session_id is None:
            raise ServerError(409, "send a reset first", "not_reset")
        if kind == "step":
            result = protocol.step(StepRequest(**data, session_id=session_id))
        elif kind == "finish":
            result = protocol.finish(SessionRequest(session_id=session_id))
        else:
            return {"type": "state", "data": protocol.state(session_id)}, session_id, False
        return {"type": "observation", "data": result}, session_id, False
    except ServerError as exc:
        error = {"message": exc.message, "code": exc.code, "status": exc.status}
    except Exception as exc:  # pydantic's ValidationError, a bug: one line, the socket stays
        errors = getattr(exc, "errors", None)
        message = (
            _validation_message(errors()) if callable(errors) else f"{type(exc).__name__}: {exc}"
        )
        error = {
            "message": message.splitlines()[0][:300],
            "code": "malformed_request",
            "status": 422,
        }
    return {"type": "error", "data": error}, session_id, False


def _message(exc: Exception) -> str:
    """An exception's message (a ``KeyError``'s without the quotes its ``str`` adds)."""
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _validation_message(errors: Any) -> str:
    parts = []
    for error in list(errors)[:3]:
        if error.get("type") == "json_invalid":
            why = (error.get("ctx") or {}).get("error", "invalid")
            return f"the body is not valid JSON: {why} at character {error['loc'][-1]}"
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "malformed request"


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


# -- serving ------------------------------------------------------------------------------------
class EnvServer:
    """Serve :func:`create_app` from a thread on ``host`` (a free port by default): for tests,
    notebooks and a trainer in the same process. ``with EnvServer() as server: server.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **app_kwargs: Any) -> None:
        import uvicorn

        self.app = create_app(**app_kwargs)
        limit = app_kwargs.get("max_request_bytes", 1024 * 1024)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.url = f"http://{host}:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(
            self.app, log_level="warning", ws_max_size=limit + 1024, lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the env server did not start on {self.url}")
            time.sleep(0.01)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._socket.close()

    def __enter__(self) -> EnvServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
