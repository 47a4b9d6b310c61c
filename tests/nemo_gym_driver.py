"""NeMo Gym's own agent (``simple_agent``) playing dataset rows against ``toolgym serve
--nemo-gym``, with a scripted Responses-API model; run in the nemo-gym door venv by
tests/test_nemo_gym.py (nothing of toolgym is imported here).

``python nemo_gym_driver.py URL ROWS.jsonl SCRIPT.json``: SCRIPT maps each row's user prompt to
the model's outputs in turn (``{"name", "arguments"}``: a function call; ``{"text"}``: the
final answer). Prints one JSON line per row: NeMo's verify response, less the request's echo.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import sys
from urllib.parse import urlparse

import uvicorn
from fastapi import FastAPI, Request
from nemo_gym.config_types import BaseServerConfig, ModelServerRef, ResourcesServerRef
from nemo_gym.server_utils import (
    GlobalAIOHTTPAsyncClientConfig,
    ServerClient,
    get_response_json,
    raise_for_status,
    set_global_aiohttp_client,
)
from omegaconf import OmegaConf
from responses_api_agents.simple_agent.app import SimpleAgent, SimpleAgentConfig

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def scripted_model(script: dict[str, list[dict]]) -> FastAPI:
    app, ids = FastAPI(), itertools.count()

    @app.post("/v1/responses")
    async def responses(request: Request) -> dict:
        body = await request.json()
        prompt = next(m["content"] for m in body["input"] if m.get("role") == "user")
        turn = sum(1 for item in body["input"] if item.get("type") == "function_call_output")
        reply = script[prompt][turn]
        if "name" in reply:
            arguments = json.dumps(reply["arguments"])
            output = {"type": "function_call", "call_id": f"call_{turn}", "name": reply["name"]}
            output |= {"arguments": arguments, "id": f"fc_{next(ids)}", "status": "completed"}
        else:
            text = {"type": "output_text", "text": reply["text"], "annotations": []}
            output = {"type": "message", "id": f"msg_{next(ids)}", "role": "assistant"}
            output |= {"status": "completed", "content": [text]}
        return {
            "id": f"resp_{next(ids)}",
            "object": "response",
            "created_at": 0,
            "model": "scripted",
            "output": [output],
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
        }

    return app


async def serve(app: FastAPI, port: int) -> tuple[uvicorn.Server, asyncio.Task]:
    """In this event loop: NeMo's shared aiohttp session belongs to one loop."""
    server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning"))
    task = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    return server, task


def entry(kind: str, impl: str, host: str, port: int) -> dict:
    return {kind: {impl: {"host": host, "port": port, "entrypoint": "app.py"}}}


async def main(url: str, rows: list[dict], script: dict[str, list[dict]]) -> None:
    set_global_aiohttp_client(GlobalAIOHTTPAsyncClientConfig())
    toolgym = urlparse(url)
    model_port, agent_port = free_port(), free_port()
    config = OmegaConf.create(
        {
            "toolgym": entry("resources_servers", "toolgym", toolgym.hostname, toolgym.port),
            "policy_model": entry("responses_api_models", "scripted", HOST, model_port),
            "toolgym_agent": entry("responses_api_agents", "simple_agent", HOST, agent_port),
        }
    )
    head = BaseServerConfig(host=HOST, port=free_port())  # read, never called
    client = ServerClient(head_server_config=head, global_config_dict=config)
    servers = [await serve(scripted_model(script), model_port)]
    agent = SimpleAgent(
        config=SimpleAgentConfig(
            host=HOST,
            port=agent_port,
            entrypoint="app.py",
            name="toolgym_agent",
            max_steps=8,
            resources_server=ResourcesServerRef(type="resources_servers", name="toolgym"),
            model_server=ModelServerRef(type="responses_api_models", name="policy_model"),
        ),
        server_client=client,
    )
    servers.append(await serve(agent.setup_webserver(), agent_port))
    for row in rows:
        answer = await asyncio.wait_for(client.post("toolgym_agent", "/run", json=row), 600)
        await raise_for_status(answer)
        result = await get_response_json(answer)
        outputs = [
            item["output"]
            for item in result["response"]["output"]
            if item["type"] == "function_call_output"
        ]
        result.pop("responses_create_params")
        result["response"] = {"tool_outputs": outputs}
        print(json.dumps(result), flush=True)
    for server, _ in servers:
        server.should_exit = True
    await asyncio.gather(*(task for _, task in servers))


if __name__ == "__main__":
    url, rows_path, script_path = sys.argv[1:4]
    with open(rows_path) as handle:
        rows = [json.loads(line) for line in handle]
    with open(script_path) as handle:
        script = json.load(handle)
    asyncio.run(main(url, rows, script))
