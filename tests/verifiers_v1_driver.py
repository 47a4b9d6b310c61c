"""verifiers 0.4 (its v1 API) playing toolgym tasks through its own tasksets (NeMo Gym's,
against ``toolgym serve --nemo-gym``; OpenEnv's, against ``toolgym serve``); run in the verifiers
door venv by tests/test_verifiers_v1.py (nothing of toolgym is imported here).

``python verifiers_v1_driver.py CONFIG.json SCRIPT.json``: CONFIG is verifiers' environment
config (the taskset, and the seat, ``agent`` or ``player``, whose harness this driver sets);
SCRIPT maps a task's prompt to the scripted chat model's replies in turn: ``{"run_code": code}``
(a tool call) or ``{"text": ...}``; then it answers "Done.". The agent is verifiers' own chat
program (the ``null`` harness's), run with this venv's Python instead of ``uv`` so that nothing
is downloaded. Prints one JSON line per rollout: ``task``, ``ok``, ``rewards``, ``metrics``,
``errors``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from typing import Any

import verifiers.v1 as vf
from aiohttp import web
from verifiers.v1.harnesses.null import NullHarness

SCRIPT: dict[str, list[dict[str, str]]] = {}
PICTURES: dict[str, int] = {}  # by prompt: the image parts in the tool answers the model read


class LocalPython:
    """A runtime whose ``uv`` scripts run with this venv's Python (their packages are here)."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(self, source: str, *args: Any, **kwargs: Any) -> list[str]:
        path = f".vf-program-{uuid.uuid4().hex}.py"
        await self._runtime.write(path, source.encode())
        return [sys.executable, path]


class LocalChatHarness(NullHarness):
    async def setup(self, runtime: Any) -> None:
        pass  # no uv script to prepare

    async def launch(self, ctx, trace, runtime, *args: Any, **kwargs: Any):
        return await super().launch(ctx, trace, LocalPython(runtime), *args, **kwargs)


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: the prompt's replies in turn, then done."""
    messages = body["messages"]
    first = next(m["content"] for m in messages if m["role"] == "user")
    first = first if isinstance(first, str) else first[0]["text"]
    # OpenEnv's taskset sends {"observation": ..., "action_schema": ...} as the user's turn
    prompt = json.loads(first)["observation"]["prompt"] if first.startswith("{") else first
    turn = sum(m["role"] == "assistant" for m in messages)
    answers = [m["content"] for m in messages if m["role"] == "tool"]
    parts = [p for a in answers if isinstance(a, list) for p in a if p.get("type") == "image_url"]
    PICTURES[prompt] = len(parts)
    replies = SCRIPT[prompt]
    if turn >= len(replies):
        return {"role": "assistant", "content": "Done."}
    if "text" in replies[turn]:
        return {"role": "assistant", "content": replies[turn]["text"]}
    call = {"name": "run_code", "arguments": json.dumps({"code": replies[turn]["run_code"]})}
    calls = [{"index": 0, "id": f"call_{turn}", "type": "function", "function": call}]
    return {"role": "assistant", "content": None, "tool_calls": calls}


async def completions(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    message = reply(body)
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    head = {"id": f"chatcmpl-{uuid.uuid4().hex[:8]}", "created": int(time.time())}
    head["model"] = body.get("model", "scripted")
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return web.json_response(head | {"object": "chat.completion", "choices": [choice]})
    answer = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await answer.prepare(request)
    chunks = [
        [{"index": 0, "delta": message, "finish_reason": None}],
        [{"index": 0, "delta": {}, "finish_reason": finish}],
    ]
    for choices in chunks:
        chunk = head | {"object": "chat.completion.chunk", "choices": choices}
        await answer.write(f"data: {json.dumps(chunk)}\n\n".encode())
    last = head | {"object": "chat.completion.chunk", "choices": [], "usage": usage}
    await answer.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
    await answer.write_eof()
    return answer


async def main(config: dict[str, Any]) -> None:
    model = web.Application()
    model.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(model)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    seat = "player" if "player" in config else "agent"
    harness = {"harness": {"id": "verifiers_v1_driver"}, "runtime": {"type": "subprocess"}}
    config[seat] = config.get(seat, {}) | harness
    env = vf.load_environment(vf.resolve_env_config(config))
    client = vf.EvalClientConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key_var="NO_KEY")
    context = vf.ModelContext(model="scripted", client=client)
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_episode(t, context) for t in env.taskset))
    await runner.cleanup()
    for episode in episodes:
        errors = [e.message for e in episode.errors]
        line: dict[str, Any] = {"ok": episode.ok, "errors": errors}
        for trace in episode.traces:
            data = trace.task.data
            reset = getattr(data, "reset", None)  # OpenEnv's: the reset's arguments
            task = reset["env_kwargs"]["task"] if reset else data.row["toolgym_task"]
            rewards = {name: r.score for name, r in trace.rewards.items() if r is not None}
            line |= {"task": task, "ok": episode.ok and trace.ok, "rewards": rewards}
            line |= {"metrics": dict(trace.metrics), "turns": trace.num_turns}
            row = getattr(data, "row", None)  # NeMo Gym's: the prompt is the row's last input
            prompt = row["responses_create_params"]["input"][-1]["content"] if row else None
            line["pictures"] = PICTURES.get(prompt, 0)
            line["errors"] += [e.message for e in trace.errors]
        print(json.dumps(line, default=str), flush=True)


__all__ = ["LocalChatHarness"]

if __name__ == "__main__":
    config_path, script_path = sys.argv[1:3]
    with open(config_path) as handle:
        config = json.load(handle)
    with open(script_path) as handle:
        SCRIPT.update(json.load(handle))
    # verifiers imports the harness by its id (this module's name): this module, not a copy
    sys.modules.setdefault("verifiers_v1_driver", sys.modules["__main__"])
    asyncio.run(main(config))
