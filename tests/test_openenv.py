"""OpenEnv 0.10's door: ``openenv.yaml`` under ``openenv validate``, and the manifest's app
(``toolgym.envs.serving.asgi:app``, served by uvicorn in a subprocess on 127.0.0.1) driven by
OpenEnv's own clients (``GenericEnvClient``, ``MCPToolClient``), its ``validate --url`` checks
and its runtime graders (reward in range, observations as ``/schema`` says, the state contract).
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from starlette.testclient import TestClient
from websockets.sync.client import connect

from conftest import wait_for_server, wait_until
from toolgym._version import __version__
from toolgym.envs.tasks.suites import get_task

openenv = pytest.importorskip("openenv", reason="the openenv extra: pip install 'toolgym[openenv]'")
from openenv.core import GenericEnvClient, MCPToolClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OPENENV = Path(sys.executable).with_name("openenv")
TASK = get_task("primitives/primitive/train-0")
TOOL_MODE = {"task": TASK.id, "action_mode": "tool"}


@pytest.fixture(scope="module")
def url():
    """The manifest's app, as a host would serve it (uvicorn on a socket bound here)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    served = [manifest["app"], "--fd", str(listener.fileno()), "--log-level", "warning"]
    command = [sys.executable, "-m", "uvicorn", *served]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGYM_")}
    server = subprocess.Popen(
        command, pass_fds=[listener.fileno()], env=env, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    try:
        wait_for_server(url, server)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=60)
        listener.close()


def sessions(url: str) -> int:
    return httpx.get(url + "/health").json()["sessions"]


def test_the_manifest_passes_openenv_validate_and_names_this_version():
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    assert manifest["version"] == __version__ and manifest["name"] == "toolgym"
    done = subprocess.run(
        [OPENENV, "validate", str(ROOT), "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {c["check_id"]: c["status"] for c in report["results"]}
    assert checks["static.manifest"] == "pass" and report["verdict"] != "fail"
    # the runtime checks need Docker (a build of the package's image): test_*_runtime_graders
    # below runs OpenEnv's runtime graders against the served app instead
    assert report["manifest"]["reward"]["range"] == [-2.0, 1.0]


def test_openenv_validate_url_passes_against_the_served_app(url):
    done = subprocess.run(
        [OPENENV, "validate", "--url", url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "Verdict: PASS" in done.stdout, done.stdout + done.stderr
    for check in ("schema_endpoint", "mcp_endpoint", "metadata_endpoint", "health_endpoint"):
        assert f"PASS  {check}" in done.stdout


def test_openenvs_runtime_graders_pass_an_episode_with_a_failed_step(url, tmp_path):
    from openenv.validation.graders import Subject
    from openenv.validation.graders.runtime.basic import (
        ObservationSchemaGrader,
        RewardWellFormedGrader,
        StateContractGrader,
    )
    from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
    from openenv.validation.runtime.collector import collect_runtime_evidence
    from openenv.validation.runtime.contracts import RuntimePlan

    oracle = json.loads(TASK.tool_calls[0])
    plan = RuntimePlan.model_validate(
        {
            "plan_schema_version": "1",
            "reset": {"episode_id": "probe-1", "seed": 0, "options": {"env_kwargs": TOOL_MODE}},
            "actions": [{"name": "add_box", "arguments": {"length": -1}}, oracle],
        }
    )
    manifest = OpenEnvYamlParser().parse(ROOT)
    evidence = collect_runtime_evidence(url, plan, episode_timeout_s=300)
    assert evidence.failure_phase is None, evidence.failure_reason
    replies = [json.loads(x.response_json)["data"] for x in evidence.exchanges]
    steps = [r for x, r in zip(evidence.exchanges, replies, strict=True) if x.operation == "step"]
    assert "error" in steps[0]["info"] and steps[0]["reward"] == pytest.approx(-0.1)
    assert steps[1]["done"] and steps[1]["info"]["final_report"]["score"] == pytest.approx(1.0)
    subject = Subject(
        root=ROOT,
        manifest=manifest,
        image_ref=None,
        running=None,
        outputs_dir=tmp_path,
        runtime_evidence=evidence,
    )
    for grader in (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader()):
        result = grader.run(subject)
        assert result.status.value == "pass", (grader.check_id, result.evidence)
    wait_until(lambda: sessions(url) == 0, 30, "the WebSocket's session to close")


def test_generic_env_client_plays_an_episode_over_the_websocket(url):
    with GenericEnvClient(base_url=url).sync() as env:
        reset = env.reset(seed=3, episode_id="ep-1", env_kwargs=TOOL_MODE)
        assert reset.reward is None and not reset.done
        assert reset.observation["prompt"] == TASK.prompt
        assert reset.observation["image"]["shape"] == [128, 128, 3]
        step = env.step(json.loads(TASK.tool_calls[0]))
        assert step.done and step.reward == pytest.approx(1.0, abs=1e-6)
        state = env.state()
        assert state["episode_id"] == "ep-1" and state["step_count"] == 1 and state["done"]
        with pytest.raises(RuntimeError, match="the episode is over"):
            env.step(json.loads(TASK.tool_calls[0]))
    wait_until(lambda: sessions(url) == 0, 30, "the WebSocket's session to close")


def test_mcp_tool_client_lists_and_calls_the_sessions_tools(url):
    with MCPToolClient(base_url=url).sync() as env:
        env.reset(seed=0, options={"task": TASK.id})  # code mode, CadQuery: the defaults
        tool, look = env.list_tools()
        assert tool.name == "run_code" and tool.input_schema["required"] == ["code"]
        assert look.name == "look" and look.input_schema["properties"]["center"]["minItems"] == 3
        looked = env.call_tool("look", zoom=2)  # no sandbox call, no reward: the views closer
        assert looked["reward"] == 0.0 and "error" not in looked["info"]
        failed = env.call_tool("run_code", code="raise ValueError('no part yet')")
        assert failed["info"]["error"] == "ValueError: no part yet" and failed["reward"] == -0.1
        passed = env.call_tool("run_code", code=TASK.reference)
        assert passed["done"] and passed["info"]["final_report"]["score"] == pytest.approx(1.0)
        assert sum((failed["reward"], passed["reward"])) == pytest.approx(0.9)
        assert env.state().step_count == 3
        with pytest.raises(RuntimeError, match="unknown tool 'add_box'; this session's: look, run"):
            env.call_tool("add_box", length=1)
    wait_until(lambda: sessions(url) == 0, 30, "openenv/session/close")


def test_mcp_json_rpc_errors_are_answers_and_tools_carry_the_parts_views(url):
    def rpc(method=None, raw=None, **params):
        body = raw if raw is not None else {"jsonrpc": "2.0", "id": 7, "method": method}
        if params:
            body["params"] = params
        answer = httpx.post(url + "/mcp", content=json.dumps(body), timeout=120)
        assert answer.status_code == 200
        return answer.json()

    assert httpx.post(url + "/mcp", content=b"{oops").json()["error"]["code"] == -32700
    assert rpc(raw={})["error"]["code"] == -32600
    assert "known: tools/list" in rpc("initialize")["error"]["message"]
    assert rpc("tools/list")["error"]["code"] == -32602
    assert "unknown session 'nope'" in rpc("tools/list", session_id="nope")["error"]["message"]
    refused = rpc("openenv/session/create", env="toolgym/Nope-v0")["error"]
    assert refused["data"]["code"] == "unknown_env"
    session_id = rpc("openenv/session/create", env_kwargs=TOOL_MODE)["result"]["session_id"]
    tools = rpc("tools/list", session_id=session_id)["result"]["tools"]
    assert "add_box" in {t["name"] for t in tools} and all("inputSchema" in t for t in tools)
    early = rpc("tools/call", session_id=session_id, **json.loads(TASK.tool_calls[0]))
    assert early["error"]["data"]["code"] == "not_reset"
    ws_url = url.replace("http", "ws") + f"/ws?session_id={session_id}"
    with connect(ws_url) as ws:  # attached to the session /mcp opened

        def send(message):
            ws.send(json.dumps(message))
            return json.loads(ws.recv(timeout=120))

        assert send({"type": "reset", "data": {"seed": 0}})["data"]["session_id"] == session_id
        other = send({"type": "reset", "data": {"env_kwargs": {"action_mode": "code"}}})
        assert "open a new one" in other["data"]["message"]
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = json.loads(TASK.tool_calls[0])
        answer = send({"type": "mcp", "data": call})["data"]["result"]
    assert not answer["isError"] and answer["data"]["done"]
    text, image = answer["content"]
    assert "score 1.000" in text["text"] and image["mimeType"] == "image/png"
    assert sessions(url) == 1  # a session the connection attached to outlives it
    closed = rpc("openenv/session/close", session_id=session_id)["result"]
    assert closed == {"session_id": session_id, "closed": True} and sessions(url) == 0


def test_the_schema_describes_what_travels(url):
    schema = httpx.get(url + "/schema").json()
    assert set(schema) == {"action", "observation", "state"}
    assert {"image", "feedback", "reward", "done"} <= set(schema["observation"]["properties"])
    meta = httpx.get(url + "/metadata").json()
    assert meta["version"] == __version__ and "toolgym/Blender-v0" in meta["envs"]


def test_the_asgi_app_takes_its_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("TOOLGYM_TOKEN", "secret")
    asgi = importlib.import_module("toolgym.envs.serving.asgi")
    with TestClient(importlib.reload(asgi).app) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/schema").status_code == 401
        assert client.get("/schema", headers={"Authorization": "Bearer secret"}).status_code == 200
