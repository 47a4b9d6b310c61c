"""The ``verifiers`` adapter (`agents/llm/verifiers_env.py`): a suite played through verifiers'
own rollout loop and client, against a scripted OpenAI-compatible endpoint on 127.0.0.1 (no
weights). The oracle's tool calls score 1.0 through the rubric; a wrong part scores low."""

from __future__ import annotations

import json

import pytest
from scripted_models import OracleModel, prompt_of

from toolgym.agents.llm import verifiers_env
from toolgym.agents.llm.endpoint import Reply, ScriptedEndpoint, tool_call
from toolgym.envs.tasks.suites import get_suite

# verifiers pulls in several API clients (seconds to import): slow, and imported when it runs.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vf():
    try:
        return verifiers_env.framework()
    except ImportError as exc:  # the `verifiers` extra is not installed
        pytest.skip(str(exc))


TOOL = {"action_mode": "tool", "max_steps": 3}


def test_the_rubric_is_the_episodes_exact_score(vf):
    from openai import AsyncOpenAI

    # verifiers' own loader: it imports `toolgym` and calls its load_environment.
    # max_envs=2: the third rollout waits for a sandbox while verifiers runs three at once.
    env = vf.load_environment("toolgym", suite="primitives", image_size=32, max_envs=2, **TOOL)
    assert isinstance(env, vf.MultiTurnEnv)
    tasks = get_suite("primitives").split("test")[:3]
    assert [row["info"]["toolgym_task"] for row in env.get_eval_dataset(n=3)] == [
        t.id for t in tasks
    ]
    oracle, wrong_task, broken_task = OracleModel("primitives", "tool"), tasks[1], tasks[2]
    wrong = [
        tool_call("add_box", "{not json"),  # the env's own error, one failed step
        tool_call("add_box", {"length": 1, "width": 1, "height": 1}, "call_1"),
        {"content": "Done."},
    ]

    def model(body):  # the oracle, a bad model, an endpoint that refuses
        if prompt_of(body) == broken_task.prompt:
            return Reply(400, {"error": {"message": "this endpoint is broken"}})
        if prompt_of(body) != wrong_task.prompt:
            return oracle(body)
        return wrong[sum(m["role"] == "assistant" for m in body["messages"])]

    with ScriptedEndpoint(model) as endpoint:
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=endpoint.url, api_key="-"))
        results = env.evaluate_sync(client, "scripted", num_examples=3, max_concurrent=3)
    by_task = {o["info"]["toolgym_task"]: o for o in results["outputs"]}
    good, bad, broken = (by_task[t.id] for t in tasks)

    assert good["error"] is None and good["reward"] == pytest.approx(1.0, abs=1e-9)
    assert good["metrics"]["toolgym_passed"] == 1.0
    assert good["metrics"]["toolgym_steps"] == len(tasks[0].tool_calls)
    assert bad["error"] is None and 0.0 <= bad["reward"] < 0.3
    assert bad["reward"] == bad["metrics"]["toolgym_score"]  # weight 1: the reward is the score
    assert bad["metrics"]["toolgym_passed"] == 0.0 and bad["metrics"]["toolgym_steps"] == 2
    assert bad["stop_condition"] == "no_tool_call"
    # A rollout that failed is marked so (not a plain 0) and the others went on.
    assert "this endpoint is broken" in broken["error"]["error_chain_repr"]
    assert broken["metrics"]["toolgym_steps"] == 0

    # What the model saw: the registry's tools, the target's views, the env's feedback.
    first = endpoint.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} >= {"add_box", "add_sphere"}
    urls = [p["image_url"]["url"] for p in first["messages"][1]["content"] if "image_url" in p]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
    last = next(r for r in reversed(endpoint.requests) if prompt_of(r) == wrong_task.prompt)
    feedback = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert len(feedback) == 2 and "JSON" in feedback[0] and "verifier: score" in feedback[1]
    assert last["messages"][-1]["role"] == "user"  # the part's views after the turn
    assert json.dumps(last["messages"][-1]).count("data:image/png") == 1


def test_bad_arguments_are_one_line_errors(vf):
    with pytest.raises(KeyError, match="unknown suite 'no-such-suite'"):
        verifiers_env.load_environment("no-such-suite")
    with pytest.raises(ValueError, match="max_envs"):
        verifiers_env.load_environment("primitives", max_envs=0)
