"""The env server (`envs/serving/server.py`) and its client (`envs/serving/remote.py`), on
127.0.0.1 only.

Real envs in real sandboxes behind a real uvicorn: 8 sessions at once, malformed and oversized
requests, a wrong token, idle expiry, the WebSocket, and the language-model runner on a remote
env.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from gymnasium.utils.env_checker import check_env
from scripted_models import OracleModel
from typer.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from conftest import wait_for_server, wait_until
from toolgym.agents.llm.chat import ChatClient
from toolgym.agents.llm.endpoint import ScriptedEndpoint
from toolgym.agents.llm.openai_runner import play_episode
from toolgym.cli import app
from toolgym.envs.serving.remote import RemoteEnv, RemoteError
from toolgym.envs.serving.server import KEEP_ALIVE_S, EnvServer
from toolgym.envs.tasks.suites import get_suite

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LIMIT = 64 * 1024
PRIMITIVES = {"suite": "primitives", "action_mode": "tool", "max_steps": 2, "final_tier": "cheap"}


@pytest.fixture(scope="module")
def server():
    with EnvServer(token=TOKEN, max_sessions=8, idle_s=600, max_request_bytes=LIMIT) as server:
        yield server


def post(server, path, body=None, headers=AUTH, **kwargs):
    return httpx.post(server.url + path, json=body, headers=headers, timeout=120, **kwargs)


def test_eight_sessions_at_once_each_its_own_sandboxed_env(server):
    calls = {t.id: t.tool_calls[0] for t in get_suite("primitives").split("train")}

    def episode(seed):
        env = RemoteEnv(server.url, token=TOKEN, **PRIMITIVES)
        try:
            observation, info = env.reset(seed=seed)
            assert observation["image"].shape == env.observation_space["image"].shape
            assert observation["image"].dtype.name == "uint8" and "netns" in info["isolation"]
            observation, reward, terminated, _, info = env.step(calls[info["task"]])
            return info["task"], reward, terminated, env.state(), env.session_id
        finally:
            env.close()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(episode, range(8)))
    assert len({task for task, *_ in results}) == 8 and len({r[-1] for r in results}) == 8
    for task, reward, terminated, state, _ in results:
        assert terminated and reward == pytest.approx(1.0, abs=1e-6)
        assert (state["task"], state["step_count"], state["done"]) == (task, 1, True)
    assert httpx.get(server.url + "/health").json()["sessions"] == 0  # all closed


def test_the_cap_refuses_a_ninth_session_until_one_closes(server):
    opened = [post(server, "/sessions", {"env_kwargs": PRIMITIVES}) for _ in range(8)]
    try:
        assert all(r.status_code == 200 for r in opened)
        ninth = post(server, "/sessions", {})
        assert ninth.status_code == 503 and ninth.json()["code"] == "at_capacity"
        assert "cap of 8 sessions" in ninth.json()["error"]
        closing = opened.pop().json()["session_id"]
        assert httpx.delete(f"{server.url}/sessions/{closing}", headers=AUTH).status_code == 200
        opened.append(post(server, "/sessions", {}))
        assert opened[-1].status_code == 200
    finally:
        for reply in opened:
            httpx.delete(f"{server.url}/sessions/{reply.json()['session_id']}", headers=AUTH)


@pytest.mark.parametrize(
    ("path", "body", "status", "code", "message"),
    [
        ("/step", {"session_id": "nope", "action": "x"}, 404, "unknown_session", "nope"),
        ("/step", {"action": "x"}, 422, "malformed_request", "session_id: Field required"),
        ("/step", {"session_id": "a", "action": 3}, 422, "malformed_request", "action"),
        ("/reset", {"sead": 1}, 422, "malformed_request", "sead: Extra inputs are not permitted"),
        ("/reset", {"seed": -1}, 422, "malformed_request", "seed: Input should be greater"),
        ("/reset", {"env": "toolgym/Nope-v0"}, 400, "unknown_env", "known: toolgym/CadQuery-v0"),
        ("/reset", {"env_kwargs": {"limits": {"wall_s": 1e9}}}, 400, "bad_env_kwargs", "limits"),
        ("/reset", {"env_kwargs": {"max_steps": 0}}, 400, "bad_env_kwargs", "max_steps must"),
        ("/reset", {"env_kwargs": {"task": "no/such"}}, 400, "bad_env_kwargs", "no/such"),
        ("/sessions", {"env_kwargs": "x"}, 422, "malformed_request", "env_kwargs"),
    ],
)
def test_malformed_requests_are_one_line_4xx(server, path, body, status, code, message):
    reply = post(server, path, body)
    assert reply.status_code == status, reply.text
    assert reply.json()["code"] == code and message in reply.json()["error"]
    assert "\n" not in reply.json()["error"]


def test_bad_json_oversized_bodies_and_order_errors(server):
    as_json = {**AUTH, "content-type": "application/json"}
    reply = post(server, "/step", content=b'{"session_id": ', headers=as_json)
    assert reply.status_code == 422 and reply.json()["code"] == "malformed_request"
    assert reply.json()["error"].startswith("the body is not valid JSON: ")
    reply = post(server, "/step", content=b"[" * 50_000, headers=as_json)  # too deep to parse
    assert reply.json() == {"error": "the body could not be parsed as JSON", "code": "bad_request"}
    reply = post(server, "/teleport", {})
    assert reply.status_code == 404 and reply.json()["code"] == "no_route"
    big = {"session_id": "a", "action": "x" * LIMIT}
    reply = post(server, "/step", big)
    assert reply.status_code == 413 and reply.json()["error"] == f"the body is over {LIMIT} bytes"
    chunks = (b"x" * 4096 for _ in range(2 * LIMIT // 4096))  # no content-length: streamed
    reply = httpx.post(server.url + "/step", content=chunks, headers=AUTH, timeout=60)
    assert reply.status_code == 413
    opened = post(server, "/sessions", {"env_kwargs": PRIMITIVES}).json()["session_id"]
    try:
        reply = post(server, "/step", {"session_id": opened, "action": "{}"})
        assert reply.status_code == 409 and reply.json()["error"] == "call /reset before /step"
    finally:
        httpx.delete(f"{server.url}/sessions/{opened}", headers=AUTH)
    assert httpx.get(server.url + "/health").status_code == 200  # still serving


def test_a_connection_idle_past_a_clients_keep_alive_is_still_served(server):
    """uvicorn's default keep-alive (5 s) equals httpx's pool expiry: a client reusing a
    connection idle that long raced the server's close ("connection reset by peer", 1 to 7
    steps in a thousand at 256 sessions). The server keeps an idle connection ``KEEP_ALIVE_S``."""
    import http.client
    from urllib.parse import urlparse

    address = urlparse(server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        for pause in (0, 6):  # 6 s: past uvicorn's default, within KEEP_ALIVE_S
            time.sleep(pause)
            connection.request("GET", "/health")  # the same socket both times
            answer = connection.getresponse()
            assert answer.status == 200 and json.loads(answer.read())["status"] == "healthy"
    finally:
        connection.close()
    assert httpx.Limits().keepalive_expiry < KEEP_ALIVE_S


def test_a_wrong_or_missing_token_is_401_except_for_health(server):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        reply = post(server, "/reset", {}, headers=headers)
        assert reply.status_code == 401 and reply.json()["code"] == "unauthorised"
    assert httpx.get(server.url + "/health").json()["status"] == "healthy"
    with pytest.raises(RemoteError, match="HTTP 401: missing or wrong bearer token"):
        RemoteEnv(server.url, token="wrong")
    with pytest.raises(InvalidStatus):
        connect(server.url.replace("http", "ws") + "/ws", open_timeout=30)


def test_idle_sessions_expire_and_say_so():
    with EnvServer(idle_s=0.5) as server:
        opened = httpx.post(server.url + "/sessions", json={}).json()["session_id"]
        wait_until(lambda: httpx.get(server.url + "/health").json()["sessions"] == 0, 60, "expiry")
        reply = httpx.get(f"{server.url}/state", params={"session_id": opened})
        assert reply.status_code == 404
        assert reply.json()["error"] == f"unknown session '{opened}' (expired after 0.5 s idle)"


def test_a_session_whose_request_waits_for_a_thread_is_not_idle():
    """Behind hundreds of sessions' steps a request can wait for a server thread longer than the
    idle limit (bench/serve_load.py: 45 of 256 sessions expired so); it counts as use."""
    with EnvServer(idle_s=0.5) as server:
        opened = httpx.post(server.url + "/sessions", json={}).json()["session_id"]
        with server.app.state.sessions.queued(opened):  # a request that waits, as queued
            time.sleep(1.5)  # three idle limits: an idle session would be gone
            assert httpx.get(server.url + "/health").json()["sessions"] == 1
        wait_until(lambda: httpx.get(server.url + "/health").json()["sessions"] == 0, 60, "expiry")


def test_the_websocket_plays_an_episode_and_survives_bad_messages(server):
    task = get_suite("primitives").split("train")[0]
    with connect(server.url.replace("http", "ws") + "/ws", additional_headers=AUTH) as ws:

        def send(message):
            ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
            return json.loads(ws.recv(timeout=120))

        assert send("{not json")["data"]["code"] == "malformed_request"
        assert send(b"\xff\x00binary")["data"]["code"] == "malformed_request"
        assert send({"type": "step", "data": {"action": "x"}})["data"]["code"] == "not_reset"
        assert "unknown message type 'jump'" in send({"type": "jump"})["data"]["message"]
        assert send("x" * (LIMIT + 100))["data"]["status"] == 413
        options = {"task": task.id}
        reset = send({"type": "reset", "data": {"env_kwargs": PRIMITIVES, "options": options}})
        assert reset["type"] == "observation" and reset["data"]["info"]["task"] == task.id
        assert reset["data"]["tools"][0]["type"] == "function"
        step = send({"type": "step", "data": json.loads(task.tool_calls[0])})  # OpenEnv's shape
        assert step["data"]["terminated"] and step["data"]["reward"] == pytest.approx(1, abs=1e-6)
        state = send({"type": "state"})
        assert state["data"]["step_count"] == 1 and state["data"]["done"]
        assert httpx.get(server.url + "/health").json()["sessions"] == 1
        assert send({"type": "close"})["type"] == "closed"
    wait_until(lambda: httpx.get(server.url + "/health").json()["sessions"] == 0, 30, "close")


def test_a_remote_env_passes_gymnasiums_env_checker(server):
    env = RemoteEnv(server.url, token=TOKEN, suite="primitives", max_steps=2)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_the_model_runner_plays_a_remote_env(server):
    env = RemoteEnv(server.url, token=TOKEN, **{**PRIMITIVES, "final_tier": None})
    with ScriptedEndpoint(OracleModel()) as endpoint, ChatClient(endpoint.url, "m") as client:
        episode = play_episode(env, client, seed=3, image_size=32)
    env.close()
    assert episode.passed and episode.score == pytest.approx(1.0, abs=1e-9)
    assert (episode.stop, episode.steps, episode.turns) == ("passed", 1, 1)


def test_toolgym_serve_refuses_the_open_network_without_a_token_and_serves_loopback(tmp_path):
    done = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert done.exit_code == 2 and "needs a bearer token: --token-env VAR" in done.output
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, TOOLGYM_SERVE_TOKEN="secret")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgym",
            "serve",
            "--port",
            str(port),
            "--token-env",
            "TOOLGYM_SERVE_TOKEN",
            "--nemo-gym",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"

        wait_for_server(url, server)
        wrong = httpx.post(url + "/reset", json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        listed = httpx.get(url + "/envs", headers={"Authorization": "Bearer secret"}).json()
        assert "toolgym/Blender-v0" in listed["envs"]
        nemo = httpx.post(url + "/close_session", headers={"Authorization": "Bearer secret"})
        assert nemo.json() == {"closed": False}  # --nemo-gym: NeMo Gym's routes are there
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) is not None  # Ctrl-C stops it, as a person would
