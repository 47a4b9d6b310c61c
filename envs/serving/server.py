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
bodies, without ``session_id``; a step's ``data`` may also be the action itself, as in
OpenEnv), answers ``{"type": "observation" | "state" | "error", "data"}``.

Limits: at most ``max_sessions`` at once (503 beyond), a session idle for ``idle_s`` is closed
(its id then answers 404 saying it expired), bodies and WebSocket messages over
``max_request_bytes`` are refused (413), and with a ``token`` every route but ``/health`` needs
``Authorization: Bearer <token>`` (401). A malformed request is a 4xx with
``{"error": "<one line>", "code": "..."}``; nothing a client sends stops the server. Clients
choose the env's arguments (suite, task, action mode, ...), never its sandbox limits: those are
the server's (``limits``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import socket
import threading
import time
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from toolgym._version import __version__
from toolgym.envs.episode.look import LOOK_CALL
from toolgym.envs.registration import cards, domain_names
from toolgym.envs.serving.nemo_gym import add_routes as add_nemo_gym_routes
from toolgym.envs.serving.openenv_routes import PARSE_ERROR, Mcp, metadata, schemas, session_of
from toolgym.envs.serving.sessions import (
    OpenRequest,
    Protocol,
    ResetRequest,
    ServerError,
    SessionRequest,
    Sessions,
    StepRequest,
    validation_message,
)

# How long uvicorn keeps an idle connection open, in seconds: well past a client's own keep-alive
# expiry (httpx's: 5 s), so a client never sends on a connection the server is closing (at 5 s,
# uvicorn's default, both ends' timers raced: "connection reset" under load).
KEEP_ALIVE_S = 75


# -- the app ------------------------------------------------------------------------------------
def create_app(
    *,
    token: str | None = None,
    max_sessions: int = 8,
    idle_s: float = 600.0,
    max_request_bytes: int = 1024 * 1024,
    limits: Any = None,
    nemo_gym: bool = False,
) -> FastAPI:
    """The ASGI app (serve it with uvicorn; ``toolgym serve`` does). ``limits``: the sandbox
    :class:`~toolgym.envs.sandbox.Limits` of every session (default: the env's); ``nemo_gym``:
    NeMo Gym's resources-server routes too (``envs/serving/nemo_gym.py``)."""
    if max_sessions < 1 or idle_s <= 0 or max_request_bytes < 1024:
        raise ValueError("max_sessions ≥ 1, idle_s > 0 and max_request_bytes ≥ 1024 are needed")
    sessions = Sessions(max_sessions=max_sessions, idle_s=idle_s, limits=limits)
    protocol = Protocol(sessions)
    mcp = Mcp(protocol)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        await run_in_threadpool(sessions.shutdown)

    app = FastAPI(title="toolgym env server", version=__version__, lifespan=lifespan)
    app.state.sessions = sessions

    def authorised(headers: Any) -> bool:
        if token is None:
            return True
        given = headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        if request.url.path != "/health" and not authorised(request.headers):
            return _error(
                401, "missing or wrong bearer token (Authorization: Bearer ...)", "unauthorised"
            )
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
        return _error(422, validation_message(exc.errors()), "malformed_request")

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"{type(exc).__name__}: {exc}".splitlines()[0][:300], "server_error")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "healthy", "sessions": sessions.count(), "max_sessions": max_sessions}

    @app.get("/envs")
    def envs() -> dict[str, Any]:
        return {"envs": [card.env_id for card in cards()]}

    @app.get("/metadata")
    def describe() -> dict[str, Any]:
        return metadata()

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return schemas()

    @app.post("/mcp")
    async def mcp_route(request: Request) -> JSONResponse:
        try:
            body = json.loads(await request.body())
        except ValueError as exc:
            error = {"code": PARSE_ERROR, "message": f"the body is not JSON: {exc}"}
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
        return JSONResponse(await in_thread(session_of(body), mcp.answer, body))

    @app.post("/sessions")
    def open_session(body: OpenRequest) -> dict[str, Any]:
        return protocol.open(body)

    @app.delete("/sessions/{session_id}")
    def close_session(session_id: str) -> dict[str, Any]:
        if not sessions.close(session_id):
            raise ServerError(404, f"unknown session {session_id!r}", "unknown_session")
        return {"closed": session_id}

    async def in_thread(session_id: str | None, call: Any, *args: Any) -> Any:
        """``call(*args)`` in a server thread; the session counts as in use while it waits."""
        with sessions.queued(session_id):
            return await run_in_threadpool(call, *args)

    if nemo_gym:
        add_nemo_gym_routes(app, protocol, in_thread, every_tool_name())

    @app.post("/reset")
    async def reset(body: ResetRequest) -> dict[str, Any]:
        return await in_thread(body.session_id, protocol.reset, body)

    @app.post("/step")
    async def step(body: StepRequest) -> dict[str, Any]:
        return await in_thread(body.session_id, protocol.step, body)

    @app.post("/finish")
    async def finish(body: SessionRequest) -> dict[str, Any]:
        return await in_thread(body.session_id, protocol.finish, body)

    @app.get("/state")
    async def state(session_id: str) -> dict[str, Any]:
        return await in_thread(session_id, protocol.state, session_id)

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        if not authorised(websocket.headers):
            await websocket.close(code=1008, reason="missing or wrong bearer token")
            return
        await websocket.accept()
        # ``/ws?session_id=``: a session opened over HTTP or /mcp (OpenEnv's MCP client does);
        # else the connection opens its own at its first reset and closes it when it ends.
        connection = _Connection(websocket.query_params.get("session_id"))
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text") or message.get("bytes") or b""
                text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
                reply, close = await in_thread(
                    connection.session_id,
                    _ws_message,
                    protocol,
                    mcp,
                    text,
                    connection,
                    max_request_bytes,
                )
                await websocket.send_text(json.dumps(reply))
                if close:
                    await websocket.close()
                    break
        except WebSocketDisconnect:
            pass
        finally:
            if connection.owned and connection.session_id is not None:
                closing = connection.session_id
                await run_in_threadpool(sessions.close, closing, "its WebSocket closed")

    return app


@dataclasses.dataclass
class _Connection:
    """A WebSocket's session: ``owned`` when the connection opened it (and so closes it)."""

    session_id: str | None
    owned: bool = False


def _ws_message(
    protocol: Protocol, mcp: Mcp, text: str, connection: _Connection, limit: int
) -> tuple[dict[str, Any], bool]:
    """One WebSocket message: ``(reply, close?)``; never raises."""
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
        session_id = connection.session_id
        if kind == "close":
            return {"type": "closed", "data": {}}, True
        if kind == "mcp":
            return {"type": "mcp", "data": mcp.answer(data, session_id)}, False
        if kind == "reset":
            body = ResetRequest(**data, session_id=session_id)
            if session_id is not None and (body.env or body.env_kwargs):
                if not connection.owned:
                    raise ServerError(
                        400,
                        "env and env_kwargs were chosen when this session opened; "
                        "open a new one (openenv/session/create or POST /sessions)",
                        "bad_request",
                    )
                protocol.sessions.close(session_id, "reopened with other arguments")
                body = ResetRequest(**data)
            result = protocol.reset(body)
            if result["session_id"] != session_id:
                connection.session_id, connection.owned = result["session_id"], True
            return {"type": "observation", "data": result}, False
        if kind not in ("step", "finish", "state"):
            raise ServerError(
                400,
                f"unknown message type {kind!r}; known: reset, step, state, finish, mcp, close",
                "malformed_request",
            )
        if session_id is None:
            raise ServerError(409, "send a reset first", "not_reset")
        if kind == "step":
            if "action" not in data:  # OpenEnv's shape: the data is the action
                data = {"action": data}
            result = protocol.step(StepRequest(**data, session_id=session_id))
        elif kind == "finish":
            result = protocol.finish(SessionRequest(session_id=session_id))
        else:
            return {"type": "state", "data": protocol.state(session_id)}, False
        return {"type": "observation", "data": result}, False
    except ServerError as exc:
        error = {"message": exc.message, "code": exc.code, "status": exc.status}
    except Exception as exc:  # pydantic's ValidationError, a bug: one line, the socket stays
        errors = getattr(exc, "errors", None)
        message = (
            validation_message(errors()) if callable(errors) else f"{type(exc).__name__}: {exc}"
        )
        error = {
            "message": message.splitlines()[0][:300],
            "code": "malformed_request",
            "status": 422,
        }
    return {"type": "error", "data": error}, False


def every_tool_name() -> list[str]:
    """The names of every domain's tools."""
    from toolgym.envs.domains import get_domain

    schemas = [t for d in domain_names() for t in get_domain(d).registry().json_schemas()]
    return [*(schema["function"]["name"] for schema in schemas), LOOK_CALL]


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
            self.app,
            log_level="warning",
            ws_max_size=limit + 1024,
            lifespan="on",
            timeout_keep_alive=KEEP_ALIVE_S,
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
