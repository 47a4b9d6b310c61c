"""A language model behind an OpenAI-compatible endpoint plays episodes
(`agents/llm/openai_runner.py`).

The model is scripted (`toolgym.agents.llm.endpoint.ScriptedEndpoint` on 127.0.0.1, no weights):
the oracle's calls through the whole runner, a replayed transcript, malformed output, and an
endpoint that fails. The envs, sandboxes and verifiers are the real ones (CadQuery primitives).
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image
from scripted_models import OracleModel, prompt_of
from typer.testing import CliRunner

from toolgym.agents.llm.chat import ChatClient
from toolgym.agents.llm.endpoint import Reply, ScriptedEndpoint, tool_call
from toolgym.agents.llm.messages import PICTURE, RUN_CODE, VIEWS
from toolgym.agents.llm.openai_runner import run_chat_episodes
from toolgym.cli import app
from toolgym.envs.recording.html import episode_page
from toolgym.envs.recording.log import read_run
from toolgym.envs.recording.replay import verify_episode

ENV = "toolgym/CadQuery-v0"
PRIMITIVES = {"suite": "primitives", "max_steps": 4}


def play(script, *, episodes=1, jobs=1, record=None, retries=0, mode="tool", **kwargs):
    """Run episodes against a scripted endpoint; (results in episode order, the endpoint)."""
    with ScriptedEndpoint(script) as endpoint:
        client = ChatClient(endpoint.url, "scripted", retries=retries, backoff_s=0.01)
        results = list(
            run_chat_episodes(
                ENV,
                client,
                episodes=episodes,
                jobs=jobs,
                record=record,
                action_mode=mode,
                **{**PRIMITIVES, **kwargs},
            )
        )
        client.close()
    return sorted(results, key=lambda e: e.index), endpoint


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    record = tmp_path_factory.mktemp("oracle-run")
    results, endpoint = play(OracleModel(), episodes=2, jobs=2, record=record, image_size=48)
    return results, endpoint, record


def test_the_oracles_calls_score_one_through_the_runner(oracle_run):
    results, endpoint, _ = oracle_run
    assert [e.seed for e in results] == [0, 1] and len({e.task for e in results}) == 2
    for episode in results:
        assert episode.passed and episode.score == pytest.approx(1.0, abs=1e-9), episode
        assert (episode.stop, episode.steps, episode.turns, episode.error) == ("passed", 1, 1, None)
        assert episode.completion_tokens > 0
    request = endpoint.requests[0]
    names = {t["function"]["name"] for t in request["tools"]}
    assert {"add_box", "add_cylinder", "add_sphere", "fillet_edges"} <= names
    system, user = request["messages"]
    assert system["role"] == "system" and "at most 4 calls" in system["content"]
    url = user["content"][-1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    picture = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert max(picture.size) == 48  # the size the caller picked


def test_each_turn_is_recorded_with_messages_tokens_and_latency(oracle_run):
    _, _, record = oracle_run
    episodes = read_run(record)
    assert sorted(e.outcome for e in episodes) == ["passed", "passed"]
    for episode in episodes:
        (step,) = episode.steps
        (turn,) = step["agent"]["turns"]
        assert turn["turn"] == 1 and turn["attempts"] == 1 and turn["latency_s"] >= 0
        assert turn["completion_tokens"] > 0 and turn["finish_reason"] == "tool_calls"
        roles = [m["role"] for m in turn["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert turn["messages"][1]["content"][-1]["image_url"]["url"] == PICTURE
        call = turn["messages"][2]["tool_calls"][0]["function"]
        assert json.loads(step["action"]["arguments"]) == json.loads(call["arguments"])


def test_a_recorded_transcript_replays_to_the_same_episode(oracle_run, tmp_path):
    _, _, record = oracle_run
    episode = min(read_run(record), key=lambda e: e.meta["seed"])
    transcript = [
        message
        for line in episode.steps
        for turn in line["agent"]["turns"]
        for message in turn["messages"]
        if message["role"] == "assistant"
    ]
    results, _ = play(transcript, record=tmp_path, image_size=48)
    (again,) = results
    assert (again.task, again.passed, again.steps) == (episode.task, True, 1)
    assert again.score == pytest.approx(episode.score, abs=1e-12)
    (replayed,) = read_run(tmp_path)
    assert replayed.steps[0]["action"] == episode.steps[0]["action"]


def test_the_cli_plays_a_model_and_prints_a_table(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLGYM_TEST_KEY", "sk-test")
    with ScriptedEndpoint(OracleModel(action_mode="code")) as endpoint:
        done = CliRunner().invoke(
            app,
            [
                "run",
                "--agent",
                "openai",
                "--base-url",
                endpoint.url,
                "--model",
                "m",
                "--api-key-env",
                "TOOLGYM_TEST_KEY",
                "--suite",
                "primitives",
                "--episodes",
                "1",
                "--max-steps",
                "2",
                "--image-size",
                "0",
                "--record",
                str(tmp_path),
            ],
        )
    assert done.exit_code == 0, done.output
    assert "primitives/primitive/train-" in done.output and "mean score 1.000" in done.output
    assert endpoint.headers[0]["authorization"] == "Bearer sk-test"
    request = endpoint.requests[0]
    assert [t["function"]["name"] for t in request["tools"]] == [RUN_CODE, "look"]
    assert all(isinstance(m["content"][0]["text"], str) for m in request["messages"][1:])
    assert "image_url" not in json.dumps(request)  # --image-size 0: no pictures
    (episode,) = read_run(tmp_path)
    assert episode.outcome == "passed"


def test_the_cli_says_what_an_openai_run_lacks():
    done = CliRunner().invoke(app, ["run", "--agent", "openai", "--model", "m"])
    assert done.exit_code == 2 and "needs --base-url and --model" in done.output
    done = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--api-key-env",
            "TOOLGYM_NO_SUCH_VARIABLE",
        ],
    )
    assert done.exit_code == 2
    assert "TOOLGYM_NO_SUCH_VARIABLE: the variable is not set" in done.output


def test_malformed_tool_calls_are_failed_steps_and_no_call_ends_the_episode(tmp_path):
    huge = "word " * 50_000  # a 50k-token reply
    script = [
        tool_call("add_box", '{"length": 10, "width":'),
        tool_call("make_teapot", {"size": 3}),
        {"content": huge, **tool_call("add_box", {"length": 10, "width": 10, "height": 10})},
        {"content": huge},  # no tool call: the model is done
    ]
    (episode,), endpoint = play(script, record=tmp_path, image_size=0)
    assert (episode.stop, episode.turns, episode.steps, episode.errors) == ("no tool call", 4, 3, 2)
    assert episode.error is None and not episode.passed and 0 <= episode.score < 0.75
    feedback = [m["content"] for m in endpoint.requests[-1]["messages"] if m["role"] == "tool"]
    assert "arguments are not valid JSON" in feedback[0]
    assert "unknown tool 'make_teapot'" in feedback[1]
    assert feedback[2].startswith("verifier: score")
    (recorded,) = read_run(tmp_path)
    assert recorded.outcome == "failed" and recorded.steps[-1]["finish"] is True
    assert recorded.steps[-1]["final_report"]["score"] == pytest.approx(episode.score)
    last_turn = recorded.steps[-1]["agent"]["turns"][-1]
    assert last_turn["messages"][-1]["content"].endswith("cut by the recorder]")
    assert verify_episode(recorded) is None  # `toolgym replay --verify`: the finish too
    page = episode_page(recorded)  # `toolgym replay`: each step says what the model did
    assert page.count("<h2>Model</h2>") == 4 and "ended: no tool call" in page
    assert "tokens in," in page and "word word" in page


def test_code_mode_rejects_what_is_not_a_script_and_stops_at_the_turn_limit(tmp_path):
    script = [
        tool_call(RUN_CODE, "result = cq.Workplane().box(1, 1, 1)"),  # not JSON
        tool_call("add_box", {"length": 1}),  # not run_code
        tool_call(RUN_CODE, {"code": "x = 1\n" * 40_000}),  # over max_action_chars
        {"role": "assistant", "tool_calls": "garbage"},  # no readable call
    ]
    (episode,), endpoint = play(script, mode="code", max_steps=2, max_turns=3, image_size=0)
    assert (episode.stop, episode.turns, episode.steps, episode.errors) == ("turn limit", 3, 1, 3)
    feedback = [m["content"] for m in endpoint.requests[-1]["messages"] if m["role"] == "tool"]
    assert "run_code: arguments are not valid JSON" in feedback[0]
    assert "unknown tool 'add_box'; the tools are run_code and look" in feedback[1]
    (episode,), _ = play(script[3:], mode="code", image_size=0)
    assert (episode.stop, episode.turns, episode.steps) == ("no tool call", 1, 0)


def test_an_endpoint_that_fails_ends_one_episode_and_the_others_go_on(tmp_path):
    oracle, failing = OracleModel(), []

    def script(body):
        prompt = prompt_of(body)
        failing.append(failing[0] if failing else prompt)
        return Reply(500, {"error": "boom"}) if prompt == failing[0] else oracle(body)

    results, _ = play(script, episodes=2, record=tmp_path, retries=2)
    broken, fine = results
    assert broken.stop == "endpoint error" and broken.score is None and not broken.passed
    assert "HTTP 500" in broken.error and "gave up after 3 attempts" in broken.error
    assert "\n" not in broken.error
    assert fine.passed and fine.error is None
    outcomes = {e.meta["seed"]: e.outcome for e in read_run(tmp_path)}
    assert outcomes == {0: "failed", 1: "passed"}


# -- the client alone ---------------------------------------------------------------------------
HELLO = {"content": "hello"}


def client_for(endpoint, **kwargs):
    return ChatClient(endpoint.url, "m", **{"backoff_s": 0.01, **kwargs})


def test_429_and_5xx_are_retried_with_backoff():
    limited = Reply(429, {"error": "slow down"}, {"Retry-After": "0"})
    with ScriptedEndpoint([limited, Reply(503, b"overloaded"), HELLO]) as endpoint:
        reply = client_for(endpoint, retries=2).complete([{"role": "user", "content": "hi"}], [])
    assert reply.attempts == 3 and reply.message["content"] == "hello"
    assert len(endpoint.requests) == 3 and "tools" not in endpoint.requests[0]


@pytest.mark.parametrize(
    ("answer", "retries", "requests", "message"),
    [
        (Reply(502, b"bad gateway"), 2, 3, "HTTP 502: bad gateway (gave up after 3 attempts)"),
        (Reply(400, {"error": "bad"}), 5, 1, 'HTTP 400: {"error": "bad"}'),
        (Reply(200, b"<html>hello</html>"), 5, 1, "the reply is not a chat completion"),
        (Reply(200, {"choices": []}), 5, 1, "the reply is not a chat completion"),
        (Reply(200, b"x" * 5000), 0, 1, "the reply is over max_reply_bytes=4096"),
        (Reply(200, HELLO, delay_s=5), 1, 2, "no reply within 0.5 s (gave up after 2 attempts)"),
    ],
)
def test_endpoint_failures_are_one_line(answer, retries, requests, message):
    from toolgym.agents.llm.chat import ChatError

    with ScriptedEndpoint([answer]) as endpoint:
        client = client_for(endpoint, retries=retries, timeout_s=0.5, max_reply_bytes=4096)
        with pytest.raises(ChatError) as caught:
            client.complete([{"role": "user", "content": "hi"}], [])
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert len(endpoint.requests) == requests


def test_a_closed_port_is_a_connection_error():
    from toolgym.agents.llm.chat import ChatError

    with ScriptedEndpoint([HELLO]) as endpoint:
        url = endpoint.url
    with pytest.raises(ChatError, match=r"connection failed.*gave up after 2 attempts"):
        ChatClient(url, "m", retries=1, backoff_s=0.01).complete([], [])
    with pytest.raises(ValueError, match="base_url must start with http"):
        ChatClient("127.0.0.1:8000", "m")


def test_a_model_that_looks_closer_is_shown_the_target_again_so_framed():
    script = [
        tool_call("look", {"zoom": 4}),  # code mode too: look beside run_code
        tool_call(RUN_CODE, {"code": "result = cq.Workplane().box(10, 10, 10)"}),
        {"content": "Done."},
    ]
    (episode,), endpoint = play(script, mode="code", image_size=32)
    assert (episode.steps, episode.errors) == (2, 0)
    after_look, after_script = (
        [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
        for request in endpoint.requests[1:3]
    )
    texts = [part["text"] for part in after_look if part["type"] == "text"]
    assert texts == [f"Your part now, {VIEWS}:", f"The target now, {VIEWS}:"]
    assert [part["type"] for part in after_look].count("image_url") == 2
    assert len(after_script) == 2  # the part's views alone: the target has not moved since
    feedback = [m["content"] for m in endpoint.requests[1]["messages"] if m["role"] == "tool"]
    assert feedback[-1].endswith("zoom 4")
