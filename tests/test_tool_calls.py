"""Tool-call references: the oracle plays them in tool mode and scores ≥ 0.99 wherever defined."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.baselines import OracleAgent
from toolgym.envs.cadquery.families import FAMILIES
from toolgym.envs.cadquery.tools import registry
from toolgym.envs.tasks.model import TaskFileError, load_task_file
from toolgym.envs.tasks.suites import get_suite

# One task of each family (tests/test_cad_families.py sweeps three seeds of each).
FAMILY_TASKS = [FAMILIES[name].task(1, "test") for name in sorted(FAMILIES)]
CURATED_TASKS = [t for t in get_suite("curated").tasks if t.tool_calls]


def test_every_family_has_tool_calls():
    for name, family in FAMILIES.items():
        task = family.task(3)
        assert task.tool_calls, name
        for call in task.tool_calls:
            registry.parse_call(call)  # valid names, arguments in range
    assert len(CURATED_TASKS) >= 12


def test_toml_tool_calls_load_as_json(tmp_path):
    path = tmp_path / "suite.toml"
    path.write_text(
        '[suite]\nname = "mine"\ndomain = "cadquery"\n[[task]]\nname = "cube"\n'
        'prompt = "A cube."\ndifficulty = 1\nreference = "result = cq.Workplane().box(1, 1, 1)"\n'
        'tool_calls = [{ name = "add_box", arguments = { length = 1, width = 1, height = 1 } }]\n',
        encoding="utf-8",
    )
    (task,) = load_task_file(path).tasks
    assert [json.loads(c) for c in task.tool_calls] == [
        {"name": "add_box", "arguments": {"length": 1, "width": 1, "height": 1}}
    ]
    path.write_text(path.read_text().replace("tool_calls = [{ name", "tool_calls = [{ tool"))
    with pytest.raises(TaskFileError, match="'tool_calls': call 0"):
        load_task_file(path)


@pytest.fixture(scope="module")
def tool_env():
    env = gym.make("toolgym/CadQuery-v0", suite="curated", action_mode="tool", max_steps=200)
    yield env
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("task", FAMILY_TASKS + CURATED_TASKS, ids=lambda t: t.id)
def test_the_oracle_scores_in_tool_mode(tool_env, task):
    oracle = OracleAgent("tool")
    observation, _ = tool_env.reset(seed=0, options={"task": task.id})
    for _ in task.tool_calls:
        observation, _, terminated, truncated, info = tool_env.step(oracle.act(observation, task))
        assert "error" not in info, info["error"]
        if terminated or truncated:
            break
    assert terminated, f"not passed after {observation['step']} of {len(task.tool_calls)} calls"
    assert info["final_report"]["score"] >= 0.99
