"""A fourth tool is its folder and one registration line: ``tests/toy_tool/`` (an abacus) copied
into a temporary package outside toolgym, registered with ``register_domain``, and nothing else
changed, plays through ``gym.make`` (and its numeric face), ``check_env``, ``toolgym tasks``,
``toolgym doctor``, ``toolgym run`` with the random agent and the oracle, and a real sandbox that
keeps the tool's answers out of sessions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from typer.testing import CliRunner

from toolgym.cli import app
from toolgym.envs.domains import get_domain
from toolgym.envs.registration import domain_names, register_domain, unregister_domain
from toolgym.envs.sandbox import Session
from toolgym.envs.tasks.suites import get_suite, get_task

TOY = Path(__file__).resolve().parent / "toy_tool"
PACKAGE = "abacus_tool"  # not toolgym's: a folder anyone could write
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def abacus(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(TOY, site / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(site))  # sandbox zygotes inherit the parent's path
        card = register_domain(PACKAGE)  # the one line
        try:
            yield card
        finally:
            unregister_domain(card.name)


def test_registering_names_the_tool_everywhere(abacus):
    assert domain_names() == ("cadquery", "blender", "scene", "abacus")
    assert (abacus.env_id, abacus.standard_env_id) == (
        "toyspace/Abacus-v0",
        "toyspace/Abacus-Std-v0",
    )
    assert gym.spec("toyspace/Abacus-v0").entry_point == f"{PACKAGE}.env:AbacusEnv"
    domain = get_domain("abacus")
    assert domain.env_id == "toyspace/Abacus-v0" and domain.card.package == PACKAGE
    assert [t.id for t in get_suite("abacus-numbers").split("test")] == [
        "abacus-numbers/number/test-0",
        "abacus-numbers/number/test-1",
    ]
    assert get_task("abacus-numbers/number/train-77").seed == 77  # any seed, as the others


def test_the_env_plays_in_code_and_tool_mode_and_passes_check_env(abacus):
    task = get_task("abacus-numbers/number/train-0")
    rods = [int(task.parameters[f"rod_{rod}"]) for rod in range(4)]
    env = gym.make("toyspace/Abacus-v0", task=task.id)
    obs, info = env.reset(seed=0)
    assert obs["image"].shape == (64, 64, 3) and not obs["image"].any()  # no beads up yet
    assert np.array_equal(obs["target"], get_domain("abacus").target_image(task, 64))
    obs, reward, terminated, truncated, info = env.step(task.reference)
    assert terminated and not truncated and info["report"]["passed"]
    assert reward == pytest.approx(1.0) and np.array_equal(obs["image"], obs["target"])
    env.close()

    env = gym.make("toyspace/Abacus-v0", task=task.id, action_mode="tool")
    env.reset(seed=0)
    first = json.dumps({"name": "slide", "arguments": {"rod": 0, "beads": rods[0]}})
    _, reward, terminated, _, info = env.step(first)
    assert not terminated and "error" not in info
    _, reward, _, _, info = env.step('{"name": "slide", "arguments": {"rod": 9, "beads": 1}}')
    assert reward == pytest.approx(-0.1) and "rod" in info["error"]  # out of range: named
    # a tool that does not say how its views reframe neither offers nor takes a look
    assert "look" not in {t["function"]["name"] for t in env.unwrapped.agent_tools()}
    _, reward, _, _, info = env.step('{"name": "look", "arguments": {"zoom": 2}}')
    assert info["error"] == "look: this environment's views have one fixed frame"
    assert reward == pytest.approx(-0.1)
    env.close()

    check_env(gym.make("toyspace/Abacus-v0").unwrapped)
    standard = gym.make("toyspace/Abacus-Std-v0")
    standard.reset(seed=0)
    assert standard.action_space.nvec.tolist()[0] >= 1  # the slide tool, as numbers
    standard.close()


def test_toolgym_tasks_lists_its_suite_and_tasks(abacus):
    runner = CliRunner()
    listed = runner.invoke(app, ["tasks"])
    assert listed.exit_code == 0 and "abacus-numbers" in listed.output
    shown = runner.invoke(app, ["tasks", "abacus-numbers", "--json"])
    assert shown.exit_code == 0
    assert [t["id"] for t in json.loads(shown.output)][:2] == [
        "abacus-numbers/number/train-0",
        "abacus-numbers/number/train-1",
    ]


def test_toolgym_doctor_imports_it_in_a_zygote(abacus):
    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    line = next(line for line in done.output.splitlines() if "tool abacus" in line)
    assert f"numpy {np.__version__}" in line


def test_the_random_agent_and_the_oracle_run_it(abacus):
    runner = CliRunner()
    env = ["--env", "toyspace/Abacus-v0", "--json"]
    random = runner.invoke(app, ["run", *env, "--agent", "random", "--episodes", "2"])
    assert random.exit_code == 0, random.output
    played = [json.loads(line) for line in random.output.splitlines() if line.startswith("{")]
    assert len(played) == 2 and all(0 <= e["score"] <= 1 for e in played)
    oracle = runner.invoke(app, ["run", *env, "--agent", "oracle", "--split", "test"])
    assert oracle.exit_code == 0, oracle.output
    played = [json.loads(line) for line in oracle.output.splitlines() if line.startswith("{")]
    assert len(played) == 2 and all(e["passed"] for e in played)


def test_its_sessions_see_its_backend_and_tools_but_not_its_answers(abacus):
    with Session("abacus") as session:
        assert session.run("rods[1] = 4").ok
        assert session.request("rods", {}).value == [0, 4, 0, 0]
        for answers in ("families", "verification", "env", "domain"):
            seen = session.run(f"import {PACKAGE}.{answers}")
            assert not seen.ok and "ModuleNotFoundError" in seen.feedback(), answers


def test_nothing_outside_its_folder_names_it():
    """The toy needs no line anywhere in the package: its name is only in its folder and here."""
    named = [
        path.relative_to(ROOT).as_posix()
        for folder in ("toolgym", "envs", "agents", "renderers", "verifiers", "assets")
        for path in (ROOT / folder).rglob("*")
        if path.is_file()
        and path.suffix in {".py", ".toml", ".json"}
        and "abacus" in path.read_text(encoding="utf-8", errors="replace").lower()
    ]
    assert named == []
