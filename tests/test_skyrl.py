"""SkyRL-Gym's door (`agents/llm/skyrl_env.py`): toolgym episodes made by ``skyrl_gym.make`` and
driven as SkyRL's generator drives a text env (``init``, ``step`` per model turn until done,
``get_metrics``), with the exact final score as the last turn's reward."""

from __future__ import annotations

import json

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from toolgym.agents.llm.skyrl_env import ToolgymTextEnv, skyrl_dataset  # noqa: E402
from toolgym.envs.tasks.suites import get_task  # noqa: E402

TOOL = {"suite": "primitives", "action_mode": "tool", "max_steps": 2}
MODE = {"action_mode": "tool", "max_steps": 2}  # the dataset's env arguments (its suite apart)


def made(row: dict, **env_kwargs) -> ToolgymTextEnv:
    env = skyrl_gym.make("toolgym", env_config={"env_kwargs": env_kwargs or TOOL}, extras=row)
    prompt, metadata = env.init(row["prompt"])
    assert prompt == row["prompt"] and metadata == {"task": row["extra_info"]["task"]}
    return env


def test_rows_name_the_task_and_carry_no_answer():
    rows = skyrl_dataset("primitives", **MODE)
    assert rows[0]["env_class"] == "toolgym" and rows[0]["prompt"][0]["role"] == "system"
    assert "add_box" in rows[0]["prompt"][0]["content"]  # the tools, named
    task = get_task(rows[0]["extra_info"]["task"])
    assert rows[0]["prompt"][1]["content"] == task.prompt
    text = json.dumps(rows)
    assert task.tool_calls[0] not in text and "reference" not in text


def test_the_oracles_turn_ends_the_episode_with_its_exact_score():
    row = skyrl_dataset("primitives", **MODE)[0]
    call = get_task(row["extra_info"]["task"]).tool_calls[0]
    env = made(row)
    try:
        out = env.step(f"I'll build it.\n{call}\n")
        assert out["done"] and out["reward"] == pytest.approx(1.0) and out["observations"] == []
        assert env.get_metrics() == {"score": out["reward"], "passed": 1.0, "turns": 1}
    finally:
        env.close()


def test_feedback_between_turns_then_a_reply_without_a_call_ends_it():
    row = skyrl_dataset("primitives", **MODE)[0]
    env = made(row)
    try:
        wrong = '{"name": "add_box", "arguments": {"length": 5, "width": 5, "height": 5}}'
        first = env.step(wrong)
        assert not first["done"] and first["reward"] == 0.0
        (message,) = first["observations"]
        assert message["role"] == "user" and "verifier: score" in message["content"]
        last = env.step("That is my part.")
        assert last["done"] and 0.0 <= last["reward"] < 0.5  # a 5 mm cube: the exact tier's
        assert last["metadata"]["turns"] == 2 and last["metadata"]["passed"] == 0.0
    finally:
        env.close()


def test_a_broken_script_ends_its_feedback_with_one_error_line_in_code_mode():
    code = {"action_mode": "code", "max_steps": 2}
    env = made(skyrl_dataset("primitives", **code)[0], suite="primitives", **code)
    try:
        out = env.step("```python\nraise ValueError('no part today')\n```")
        (message,) = out["observations"]
        error = message["content"].splitlines()[-1]
        assert not out["done"] and error.startswith("error:") and "no part today" in error
        assert "toolgym" not in message["content"]  # the script's own lines, none of ours
    finally:
        env.close()


def test_a_row_without_a_task_is_refused_naming_what_is_missing():
    with pytest.raises(ValueError, match="extra_info"):
        skyrl_gym.make("toolgym", env_config={"env_kwargs": TOOL}, extras={})
