"""OpenEnv 0.10's routes beyond reset, step and state: ``/metadata``, ``/schema`` and ``/mcp``.

``/schema`` gives the JSON schemas of what travels (an action, an observation with its reward
and ``done``, a session's state), as OpenEnv's runtime checks read them. ``/mcp`` is OpenEnv's
JSON-RPC 2.0 (plain POST, an answer always with status 200; no ``initialize`` handshake)::

    openenv/session/create  {"env"?, "env_kwargs"?}         -> {"session_id"}
    tools/list              {"session_id"}                  -> {"tools": [{"name", ...}]}
    tools/call              {"session_id", "name", "arguments"} -> one env step (below)
    openenv/session/close   {"session_id"}                  -> {"session_id", "closed"}

A session is reset over the WebSocket (``/ws?session_id=...`` attaches to it) before its tools
are called. The tools are the ones the session's agent is offered: the registry's in tool mode,
``run_code`` in code mode. A call is one env step, scored like any other: its answer holds the
feedback and the part's views as MCP content (text, a PNG image), ``isError`` where the step
failed (the agent's error: a penalty, the part unchanged), and ``data`` (what OpenEnv's
``MCPToolClient.call_tool`` returns): ``feedback``, ``reward``, ``done``, ``terminated``,
``truncated`` and ``info``. A request the server refuses (no such session, a call before a
reset, an unknown tool) is a JSON-RPC error with the server's one-line message.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from toolgym._version import __version__
from toolgym.envs.episode.look import LOOK_CALL
from toolgym.envs.registration import cards
from toolgym.envs.serving.sessions import DEFAULT_ENV, Protocol, ServerError, StepData

DESCRIPTION = (
    "Agents operate professional tools (CadQuery CAD, Blender, a Panda3D game-scene runtime) "
    "by writing scripts or calling tools in a sandbox; verifiers score what they build."
)


# -- what travels, as /schema describes it -------------------------------------------------------
class Picture(BaseModel):
    """Views as a PNG: ``shape`` is ``[height, width, 3]`` in pixels."""

    png: str = Field(description="the PNG file, base64")
    shape: list[int] = Field(min_length=3, max_length=3)


class ToolCall(BaseModel):
    """A tool call (tool mode): one of the registry's tools and its arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Observation(BaseModel):
    """An observation with its step's ``reward`` (``null`` at a reset) and ``done``."""

    model_config = ConfigDict(extra="allow")
    image: Picture = Field(description="the part's four views, tiled")
    target: Picture = Field(description="the target's four views (black when hidden)")
    prompt: str
    feedback: str = Field(description="the tool's output and the verifier's summary")
    step: int = Field(ge=0)
    reward: float | None = Field(
        default=None,
        description="the change of score less penalties; the return settles to "
        "the exact final score",
    )
    done: bool = False


class State(BaseModel):
    session_id: str
    episode_id: str | None
    step_count: int = Field(ge=0)
    env: str
    task: str | None
    done: bool


def metadata() -> dict[str, Any]:
    """``GET /metadata``: what OpenEnv shows of this server."""
    return {
        "name": "toolgym",
        "description": DESCRIPTION,
        "version": __version__,
        "envs": [card.env_id for card in cards()],
        "readme_content": None,
        "author": None,
        "documentation_url": None,
    }


def schemas() -> dict[str, Any]:
    """``GET /schema``: the action, observation and state as JSON schemas."""
    return {
        "action": TypeAdapter(ToolCall | StepData).json_schema(),
        "observation": Observation.model_json_schema(),
        "state": State.model_json_schema(),
    }


# -- /mcp ---------------------------------------------------------------------------------------
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, REFUSED = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32000,
)
METHODS = ("tools/list", "tools/call", "openenv/session/create", "openenv/session/close")


class _Invalid(Exception):
    """A JSON-RPC error: its code and one line."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Mcp:
    """OpenEnv's JSON-RPC over the sessions of :class:`Protocol`; :meth:`answer` never raises."""

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol

    def answer(self, request: Any, session_id: str | None = None) -> dict[str, Any]:
        """The JSON-RPC response to ``request`` (a parsed body); ``session_id``: the session of
        the WebSocket it came over, used where its ``params`` name none."""
        request_id = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
                raise _Invalid(
                    INVALID_REQUEST, 'a JSON-RPC 2.0 request: {"jsonrpc": "2.0", "method", "id"}'
                )
            method, params = request.get("method"), request.get("params") or {}
            if not isinstance(params, dict):
                raise _Invalid(INVALID_PARAMS, "params must be an object")
            if method not in METHODS:
                known = ", ".join(METHODS)
                raise _Invalid(NO_METHOD, f"unknown method {method!r}; known: {known}")
            result = self._run(method, params, session_of(request) or session_id)
            return {"jsonrpc": "2.0", "id": request_id, "result": result}
        except _Invalid as exc:
            error = {"code": exc.code, "message": exc.message}
        except ServerError as exc:
            error = {
                "code": REFUSED,
                "message": exc.message,
                "data": {"code": exc.code, "status": exc.status},
            }
        return {"jsonrpc": "2.0", "id": request_id, "error": error}

    def _run(self, method: str, params: dict[str, Any], session_id: Any) -> dict[str, Any]:
        sessions = self.protocol.sessions
        if method == "openenv/session/create":
            env, env_kwargs = params.get("env", DEFAULT_ENV), params.get("env_kwargs") or {}
            if not isinstance(env_kwargs, dict):
                raise _Invalid(INVALID_PARAMS, "env_kwargs must be an object")
            return {"session_id": sessions.open(env, env_kwargs).id}
        if not isinstance(session_id, str):
            raise _Invalid(
                INVALID_PARAMS, f"{method} needs params.session_id (openenv/session/create)"
            )
        if method == "openenv/session/close":
            return {"session_id": session_id, "closed": sessions.close(session_id, "closed")}
        if method == "tools/list":
            with sessions.use(session_id) as session:
                tools = session.env.unwrapped.agent_tools()
            return {"tools": [_mcp_tool(tool["function"]) for tool in tools]}
        return self._call(session_id, params)

    def _call(self, session_id: str, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str):
            raise _Invalid(INVALID_PARAMS, "tools/call needs params.name, a tool's name")
        if not isinstance(arguments, dict):
            raise _Invalid(INVALID_PARAMS, f"{name}: arguments must be an object")
        step = self.protocol.call_tool(session_id, name, arguments)
        observation = step["observation"]
        data = {"feedback": observation["feedback"]} | {
            key: step[key] for key in ("reward", "done", "terminated", "truncated", "info")
        }
        content = [
            {"type": "text", "text": observation["feedback"]},
            {"type": "image", "data": observation["image"]["png"], "mimeType": "image/png"},
        ]
        if name == LOOK_CALL:  # the target reframed too: it no longer lines up with the first
            content.append(
                {"type": "image", "data": observation["target"]["png"], "mimeType": "image/png"}
            )
        failed = "error" in step["info"]
        return {"content": content, "structuredContent": data, "isError": failed, "data": data}


def session_of(request: Any) -> str | None:
    """The session a JSON-RPC request names (``params.session_id``), if it names one."""
    params = request.get("params") if isinstance(request, dict) else None
    found = params.get("session_id") if isinstance(params, dict) else None
    return found if isinstance(found, str) else None


def _mcp_tool(function: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style function schema as an MCP tool."""
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "inputSchema": function.get("parameters", {"type": "object"}),
    }
