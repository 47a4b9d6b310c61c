"""NeMo Gym's resources-server routes on the env server (``toolgym serve --nemo-gym``).

NeMo Gym's agents (its ``simple_agent``, say) play a rollout against a resources server in three
kinds of call, each a POST with JSON, the rollout's session carried by a cookie that the first
call sets and the agent sends back with the others::

    /seed_session   the dataset row: ``toolgym_task`` (a task id), ``env`` and ``env_kwargs``
                    (optional: CadQuery's defaults), ``seed`` (0), and NeMo's own fields
                    (``responses_create_params``, ignored here) -> {} and the cookie
    /<tool name>    the model's function-call arguments -> one env step: ``feedback`` (what the
                    model reads), ``reward``, ``done`` (the tool's name must be one the session's
                    agent is offered: ``run_code`` in code mode, the registry's in tool mode,
                    and ``look``); ``?views=1`` adds ``views``, the part's views after the step
                    as a PNG (``{"png": base64, "shape"}``: toolgym's verifiers toolset shows
                    them), and after a look ``target_views``, the target's, reframed alike
    /verify         the row and NeMo's ``response`` -> the row, ``response`` and ``reward``: the
                    episode's exact final score (the part is scored as it stands if the episode
                    had not ended); the session closes
    /close_session  closes the cookie's session, if open

A verifier that could not score answers ``reward`` 0 with ``mask_sample`` true and
``failure_kind``/``failure_reason`` saying why (NeMo's mark of a sample to leave out), never a
plain 0. A refused call (no session, an unknown tool, a step after the end) is a 4xx whose body,
``{"error": "<one line>"}``, the agent shows the model, as NeMo does with any tool's answer.
``toolgym_score``, ``toolgym_passed`` and ``toolgym_steps`` ride along for NeMo's metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Cookie, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from toolgym.envs.episode.look import LOOK_CALL
from toolgym.envs.episode.loop import RUN_CODE
from toolgym.envs.serving.sessions import (
    DEFAULT_ENV,
    Protocol,
    ResetRequest,
    ServerError,
)

COOKIE = "toolgym_session"
InThread = Callable[..., Awaitable[Any]]


class SeedRequest(BaseModel):
    """A NeMo Gym dataset row, as its agent sends it to ``/seed_session``."""

    model_config = ConfigDict(extra="allow")
    toolgym_task: str = Field(max_length=255)
    env: str = DEFAULT_ENV
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0, lt=2**63)


def add_routes(app: FastAPI, protocol: Protocol, in_thread: InThread, tools: list[str]) -> None:
    """Add NeMo Gym's routes to ``app``; ``tools``: every tool name a session may offer (each
    gets its route; a session answers only its own)."""
    sessions = protocol.sessions

    @app.post("/seed_session")
    async def seed_session(
        body: SeedRequest, toolgym_session: str | None = Cookie(default=None)
    ) -> JSONResponse:
        if toolgym_session is not None:  # the agent's last rollout: it is over
            await in_thread(None, sessions.close, toolgym_session, "its rollout was seeded again")
        reset = ResetRequest(
            env=body.env,
            env_kwargs=body.env_kwargs,
            seed=body.seed,
            options={"task": body.toolgym_task},
        )
        result = await in_thread(None, protocol.reset, reset)
        answer = JSONResponse({})
        answer.set_cookie(COOKIE, result["session_id"], httponly=True, samesite="lax")
        return answer

    async def call_tool(name: str, request: Request, session_id: str | None) -> dict[str, Any]:
        arguments = await _object(request, f"{name}: the arguments")
        views = request.query_params.get("views") in ("1", "true")
        call = (protocol, _known(session_id), name, arguments, views)
        return await in_thread(session_id, _step, *call)

    for name in dict.fromkeys([RUN_CODE, *tools]):
        route = _tool_route(name, call_tool)
        app.post(f"/{name}", name=f"nemo_gym_{name}")(route)

    @app.post("/verify")
    async def verify(
        request: Request, toolgym_session: str | None = Cookie(default=None)
    ) -> dict[str, Any]:
        body = await _object(request, "the body")
        session_id = _known(toolgym_session)
        report, steps = await in_thread(session_id, protocol.outcome, session_id)
        await in_thread(None, sessions.close, session_id, "verified")
        return dict(body) | verified(report, steps)

    @app.post("/close_session")
    async def close_session(toolgym_session: str | None = Cookie(default=None)) -> dict[str, Any]:
        if toolgym_session is None:
            return {"closed": False}
        return {"closed": await in_thread(None, sessions.close, toolgym_session, "closed")}


def _tool_route(name: str, call_tool: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    async def route(
        request: Request, toolgym_session: str | None = Cookie(default=None)
    ) -> dict[str, Any]:
        return await call_tool(name, request, toolgym_session)

    route.__name__ = f"nemo_gym_{name}"
    return route


async def _object(request: Request, what: str) -> dict[str, Any]:
    """The request's body, a JSON object, or a 400 saying what it is not."""
    try:
        body = await request.json()
    except ValueError as exc:
        raise ServerError(400, f"{what}: not JSON: {exc}", "malformed_request") from None
    if not isinstance(body, dict):
        raise ServerError(400, f"{what}: not a JSON object", "malformed_request")
    return body


def _known(session_id: str | None) -> str:
    if session_id is None:
        raise ServerError(
            400, f"no {COOKIE} cookie: POST /seed_session first, and send its cookie", "no_session"
        )
    return session_id


def _step(
    protocol: Protocol, session_id: str, name: str, arguments: dict[str, Any], views: bool
) -> Any:
    step = protocol.call_tool(session_id, name, arguments)
    answer = {"feedback": step["observation"]["feedback"], "reward": step["reward"]}
    answer |= {"done": step["done"], "error": step["info"].get("error")}
    if views and name == LOOK_CALL:  # the target reframed too
        answer["target_views"] = step["observation"]["target"]
    return answer | ({"views": step["observation"]["image"]} if views else {})


def verified(report: dict[str, Any], steps: int) -> dict[str, Any]:
    """What ``/verify`` adds to the row, from the final tier's report (plain JSON): ``reward``
    (the exact score), or, where the verifier gave none, 0 with the sample masked and why."""
    score = report.get("score")
    why = None
    if score is None:
        errors = report.get("errors") or ["the verifier gave no score"]
        why = str(errors[0]).splitlines()[0][:300]
    return {
        "reward": 0.0 if score is None else float(score),
        "mask_sample": score is None,
        "failure_kind": None if score is not None else "verifier",
        "failure_reason": why,
        "toolgym_score": score,
        "toolgym_passed": bool(report.get("passed")),
        "toolgym_steps": steps,
    }
