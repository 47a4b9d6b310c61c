"""toolgym/GameScene-v0 end to end, on the real sandbox, Panda3D and Bullet."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gltf import load_model
from gymnasium.utils.env_checker import check_env
from panda3d.core import NodePath

import toolgym  # noqa: F401 - registers the environment
from toolgym.agents.baselines import RandomAgent
from toolgym.agents.runner import run_episodes
from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.scene.families import FAMILIES
from toolgym.envs.scene.verification import (
    PERTURB,
    DescriptionError,
    TrustedSimulator,
    sanitize,
    verify_script,
)
from toolgym.envs.scene.verifier import verify_scene
from toolgym.envs.tasks.suites import get_suite, get_task

ROLL = "scene-curated/roll-east"
DOOR = "scene-curated/door-zone-centre"
STACK = "scene-curated/stack-four"


def _first_of_each_template() -> list[str]:
    """A curated task of each template the curated suite has (the classic families')."""
    first: dict[str, str] = {}
    for task in get_suite("scene-curated").tasks:
        first.setdefault(task.parameters["template"], task.id)
    return list(first.values())


ONE_PER_TEMPLATE = _first_of_each_template()

STATE_SCRIPT = """
import json
from toolgym.envs.scene.runtime import World
w = World(seed=3)
w.make_room(6, 6)
for k in range(4):
    w.spawn("crate", (0.02 * k, 0, 0.25 + 0.5 * k))
w.spawn("ball", (-2, 0.1, 0.15), velocity=(4, 0, 0))
for k in range(6):
    w.spawn("domino", (1.5, -1 + 0.25 * k, 0.2))
w.spawn("ball", (1.5, -2, 0.15), velocity=(0, 3, 0))
w.trigger("zone_1", (0, -1.5, 0.9), (1, 1, 1.8))
w.bind("zone_1", "enter", "count", "score")
w.player_path([(-2, -1.5, 0.9), (2, -1.5, 0.9)], speed=2)
w.run(4)
print(json.dumps({"state": {k: [v.hex() for v in row] for k, row in w.state().items()},
                  "events": w.events}))
"""


def test_physics_is_bit_identical_across_processes():
    runs = [
        subprocess.run(
            [sys.executable, "-c", STATE_SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2)
    ]
    assert runs[0] == runs[1]
    state = json.loads(runs[0])
    assert len(state["state"]) == 13 and state["events"]  # it really simulated something
    with Session("scene") as one, Session("scene") as two:  # and inside sandbox sessions
        outputs = [s.run(STATE_SCRIPT).stdout for s in (one, two)]
    assert outputs[0] == outputs[1] == runs[0]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_oracle_scores_at_least_099_on_every_curated_task_in_code_mode():
    low = []
    for split in ("train", "test"):
        for episode in run_episodes(
            "toolgym/GameScene-v0", "oracle", suite="scene-curated", split=split
        ):
            if episode.score is None or episode.score < 0.99:
                low.append((episode.task, episode.score))
    assert not low


@pytest.mark.timeout(600)
def test_oracle_scores_at_least_099_on_every_family_at_the_exact_tier():
    low = []
    for family in FAMILIES.values():
        task = family.task(7, "test")
        outcome = verify_script(task, task.reference)
        if outcome.report is None or outcome.report.score < 0.99:
            low.append((task.id, outcome.error, outcome.report and outcome.report.checks))
    assert not low


@pytest.mark.timeout(600)
def test_tool_calls_reproduce_the_reference_in_tool_mode():
    env = gym.make("toolgym/GameScene-v0", action_mode="tool", max_steps=40)
    try:
        for task_id in ONE_PER_TEMPLATE:
            env.reset(seed=0, options={"task": task_id})
            for call in env.unwrapped.task.tool_calls:
                _, _, terminated, _truncated, info = env.step(call)
                assert "error" not in info, (task_id, info["error"])
            assert terminated, task_id
            assert info["final_report"]["score"] >= 0.99, task_id
    finally:
        env.close()


@pytest.mark.slow
def test_random_agent_scores_low():
    env = gym.make("toolgym/GameScene-v0", action_mode="tool", max_steps=3)
    scores = []
    try:
        for k, task_id in enumerate(ONE_PER_TEMPLATE):
            agent = RandomAgent(env.unwrapped.registry, "tool", seed=k)
            obs, _ = env.reset(seed=k, options={"task": task_id})
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs))
                done = terminated or truncated
            scores.append(info["final_report"]["score"])
    finally:
        env.close()
    assert np.mean(scores) <= 0.2, scores


def test_check_env_passes_with_default_arguments():
    environment = gym.make("toolgym/GameScene-v0")
    try:
        check_env(environment.unwrapped)
    finally:
        environment.close()


def make_roll_env() -> gym.Env:
    return gym.make("toolgym/GameScene-v0", task=ROLL, max_steps=2)


@pytest.mark.parametrize("vector", ["sync", "async"])
def test_vector_envs(vector):
    if vector == "sync":
        envs = gym.vector.SyncVectorEnv([make_roll_env, make_roll_env])
    else:  # forkserver, as the trainer's workers: a fork of this (by now threaded) process may hang
        envs = gym.vector.AsyncVectorEnv([make_roll_env, make_roll_env], context="forkserver")
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["image"].shape == (2, 64, 128, 3)
        actions = ("world.get('ball_1').set_velocity((1.5, 0, 0))", "1/0")
        obs, rewards, terminated, _, _infos = envs.step(actions)
        assert terminated[0] and rewards[0] > 0.9
        assert "ZeroDivisionError" in obs["feedback"][1] and rewards[1] == pytest.approx(-0.1)
    finally:
        envs.close()


@pytest.fixture
def roll_env():
    environment = gym.make("toolgym/GameScene-v0", task=ROLL, max_steps=8)
    environment.reset(seed=0)
    yield environment
    environment.close()


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("world.spawn('crate', (float('nan'), 0, 0))", "pos must be finite"),
        ("world.spawn('sofa')", "unknown asset 'sofa'"),
        ("world.get('ball_1').set_velocity((1e9, 0, 0))", "out of range"),
        ("world.spawn('crate', name='ball_1')", "the name 'ball_1' is taken"),
        ("world = 3", "`world` must stay a World"),
        ("tools.move(world, name='crate_1', x=0, y=0)", "no object is called 'crate_1'"),
        ("tools.spawn(world, asset='crate', x=float('inf'))", "must be a finite number"),
    ],
)
def test_bad_code_gets_one_clear_line(roll_env, action, expected):
    _, reward, _, _, info = roll_env.step(action)
    assert expected in info["error"] and reward == pytest.approx(-0.1)
    assert "Traceback" not in info["error"]
    *_, terminated, _, info = roll_env.step("world.get('ball_1').set_velocity((1.5, 0, 0))")
    assert terminated and "error" not in info  # the env is still usable


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (42, "a tool call must be an object"),
        ("{not json", "not valid JSON"),
        ('{"name": "explode"}', "unknown tool 'explode'"),
        ('{"name": "spawn", "arguments": {"asset": "crate", "x": 99}}', "out of range"),
        ('{"name": "spawn", "arguments": {"asset": "crate", "x": NaN}}', "finite number"),
        ('{"name": "move", "arguments": {"name": "crate_1", "x": 0, "y": 0}}', "crate_1"),
        (
            '{"name": "on_trigger", "arguments": {"trigger": "zone_1", "action": "open",'
            ' "target": "door_1"}}',
            "no trigger is called 'zone_1'",
        ),
    ],
)
def test_bad_tool_calls_get_clear_feedback(action, expected):
    env = gym.make("toolgym/GameScene-v0", task=ROLL, action_mode="tool")
    try:
        env.reset(seed=0)
        obs, reward, _, _, info = env.step(action)
        assert expected in info["error"] and reward == pytest.approx(-0.1)
        assert expected in obs["feedback"]
    finally:
        env.close()


# -- cheating ----------------------------------------------------------------------------------


def test_teleporting_the_ball_in_a_callback_gains_nothing(roll_env):
    cheat = (
        "goal = world.get('goal_zone_1').pos\n"
        "world.on_update(lambda w, dt: w.get('ball_1').set_pos(goal))\n"
        "world.run(1.0)\n"
        "assert abs(world.get('ball_1').pos[0] - goal[0]) < 0.1\n"  # in its own world, it did
    )
    obs, _reward, terminated, _truncated, info = roll_env.step(cheat)
    assert "error" not in info, info.get("error")
    assert not terminated and info["report"]["score"] < 0.5
    assert "ball_1 came no closer than" in obs["feedback"]


def test_an_always_open_door_fails_on_the_held_out_paths():
    env = gym.make("toolgym/GameScene-v0", task=DOOR, max_steps=1)
    try:
        env.reset(seed=0)
        *_, info = env.step("world.open('door_1')")
        final = info["final_report"]
        assert final["score"] < 0.5 and not final["passed"]
        messages = " ".join(c["message"] for c in final["checks"].values())
        assert "opened at 0.00 s, before the player entered" in messages
        assert "walked past the zone and the door opened" in messages
    finally:
        env.close()


def test_a_door_that_ignores_the_zone_earns_nothing_for_staying_shut():
    outcome = verify_script(get_task(DOOR), "x = 1")
    assert outcome.report.score == 0.0
    assert any("not credited" in c["message"] for c in outcome.report.checks.values())


def test_a_callback_that_never_returns_is_a_failed_game_not_a_hang():
    script = "def spin(world, dt):\n    while True:\n        pass\nworld.on_update(spin)\n"
    limits = Limits(wall_s=3.0, cpu_s=3.0)
    outcome = verify_script(get_task(DOOR), script, limits=limits)
    assert outcome.report is not None and outcome.report.score == 0.0
    assert "did not run to the end" in outcome.report.checks["game"]["message"]


def test_spawning_a_million_objects_is_refused(roll_env):
    *_, info = roll_env.step("for k in range(10**6):\n    world.spawn('coin', (0, 0, 1))")
    assert "the world holds at most 500 objects" in info["error"]
    obs, *_ = roll_env.step("print(len(world.objects))")
    assert obs["feedback"].startswith("stdout:\n2")  # the failed step was undone


def test_nan_transforms_are_refused_on_every_path(roll_env):
    *_, info = roll_env.step("world.spawn('crate', (1, 1, 0.25)).node.set_x(float('nan'))")
    assert "is_nan" in info["error"] and "\n" not in info["error"]  # Panda3D's own check
    nan = {
        "name": "crate_1",
        "asset": "crate",
        "pos": [float("nan"), 0, 0],
        "hpr": [0, 0, 0],
        "body": "dynamic",
        "mass": 1,
        "friction": 1,
        "restitution": 0,
        "velocity": [0, 0, 0],
    }
    with pytest.raises(DescriptionError, match="crate_1: pos must be finite numbers"):
        sanitize({"objects": [nan]})  # what a forged description from a session would meet


def _two_crates(overhang: float) -> dict:
    crate = {"asset": "crate", "hpr": [0, 0, 0], "body": "dynamic", "mass": 10.0,
             "friction": 0.8, "restitution": 0.05, "velocity": [0, 0, 0], "open": False,
             "level": False}  # fmt: skip
    return {
        "version": 1,
        "seed": 0,
        "dt": 1 / 60,
        "substeps": 2,
        "room": None,
        "objects": [
            crate | {"name": "crate_1", "pos": [0, 0, 0.25]},
            crate | {"name": "crate_2", "pos": [overhang, 0, 0.75]},
        ],
    }


def test_a_stack_that_stands_only_when_placed_exactly_fails_the_exact_tier():
    sim = TrustedSimulator()
    try:
        results = {}
        for overhang in (0.2, 0.241):  # Bullet's balance edge for two crates is at 0.2415 m
            scene = _two_crates(overhang)
            constraint = [
                {"kind": "stands", "asset": "crate", "n": 2, "x": 0, "y": 0, "overhang": overhang}
            ]
            traces = [sim.simulate(scene, 4.0)]
            traces += [sim.simulate(scene, 4.0, dict(PERTURB, seed=s)) for s in (1, 2, 3)]
            results[overhang] = (
                verify_scene(scene, constraint, "cheap", traces=traces[:1]),
                verify_scene(scene, constraint, "exact", traces=traces),
            )
    finally:
        sim.close()
    assert results[0.2][0].passed and results[0.2][1].passed
    cheap, exact = results[0.241]
    assert cheap.passed and not exact.passed
    assert exact.checks["stands:crate"]["message"].startswith("in perturbed run")


# -- export and observations ---------------------------------------------------------------------


def test_exports_and_views(roll_env, tmp_path):
    roll_env.step("world.spawn('crate', (2, 2, 0.25))")
    scene = json.loads(roll_env.unwrapped.export("json"))
    assert {o["name"] for o in scene["objects"]} == {"ball_1", "goal_zone_1", "crate_1"}
    glb = roll_env.unwrapped.export("glb")
    assert glb[:4] == b"glTF"
    (tmp_path / "scene.glb").write_bytes(glb)
    # glTF is Y-up; loaded back into Panda3D it stands Z-up where the scene has it.
    low, high = NodePath(load_model(str(tmp_path / "scene.glb"))).get_tight_bounds()
    assert (low.z, high.z) == (pytest.approx(0.0), pytest.approx(0.5))  # crate and zone: 0.5 m
    assert (high.x, high.y) == (pytest.approx(3.5), pytest.approx(2.25))  # the zone, the crate
    obs = roll_env.unwrapped._observation("")
    assert obs["image"].shape == (64, 128, 3) and obs["target"].shape == (64, 128, 3)
    assert not np.array_equal(obs["image"][:, 64:], obs["target"][:, 64:])  # the crate shows


def test_layout_feedback_names_the_relation_that_fails():
    env = gym.make("toolgym/GameScene-v0", task="scene-curated/dining-four", max_steps=4)
    try:
        env.reset(seed=0)
        obs, *_ = env.step(
            "world.spawn('table', (0, 0.5, 0.375))\n"
            "world.spawn('chair', (0.6, 0.5, 0.45), (180, 0, 0))\n"
        )
        assert "chair_1 faces 90° away from table_1" in obs["feedback"]
        assert "table_1 intersects chair_1 by 0.20 m" in obs["feedback"]
        assert "chair_1 moved" in obs["feedback"] and "(unsupported)" in obs["feedback"]
        assert "1 chair where the task asks for 4" in obs["feedback"]
    finally:
        env.close()


@pytest.mark.parametrize(
    "module",
    [
        "toolgym.envs.scene.families",  # levels, constraints and the held-out player paths
        "toolgym.envs.scene.verification",
        "toolgym.envs.scene.verifier",
        "toolgym.envs.tasks.suites",
    ],
)
def test_scene_sessions_cannot_import_the_answers(module):
    with Session("scene") as session:
        ran = session.run(f"import {module}")
    assert not ran.ok and ran.error is not None
    assert "ModuleNotFoundError" in ran.error.message or "ImportError" in ran.error.message
