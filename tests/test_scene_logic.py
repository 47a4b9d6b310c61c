"""Logic tasks of toolgym/GameScene-v0: the verifier's trusted host owns the world, the agent's
logic only answers with actions. Real sandbox, Panda3D and Bullet."""

from __future__ import annotations

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.sandbox import Limits
from toolgym.envs.scene.families import spec_for
from toolgym.envs.scene.verification import sanitize_trace, verify_script
from toolgym.envs.scene.verifier import verify_scene
from toolgym.envs.tasks.suites import get_task

DOOR = "scene-curated/door-zone-centre"
COINS = "scene-curated/coins-three"
PLATFORM = "scene-curated/platform-short"
SPAWNER = "scene-curated/spawner-balls"

# Forges everything the logic session could once report (the runtime's stepping, state, event log
# and counters, the samplers) with a door that opens exactly when the player enters the zone of
# DOOR, computed from the player's path: a trace the door check would pass (see below).
FORGERY = """
import math
import toolgym.envs.scene.backend as backend
import toolgym.envs.scene.runtime as runtime
import toolgym.envs.scene.sampling as sampling

def forged(world, seconds=6.0, every=2):
    plan = world._player or {"points": [(0, -9, 0.9)], "speed": 1.0}
    points, speed = [tuple(p) for p in plan["points"]], plan["speed"]
    times, rows, opened = [], [], False
    for frame in range(0, round(seconds * 60) + 1, every):
        here = runtime.path_point(points, speed, plan.get("waits", ()), frame / 60)
        opened = opened or (abs(here[0]) < 1.0 and abs(here[1]) < 1.0)
        times.append(frame / 60)
        rows.append([0.0, 3.0, 3.0 if opened else 1.0, 1.0, 0.0, 0.0, 0.0])
    return {"times": times, "samples": {"door_1": rows}, "assets": {"door_1": "door"},
            "final": {}, "events": [{"kind": "open"}], "counters": {"coins": 3},
            "counters_t": [{"coins": 3}] * len(times)}

backend._sampled = lambda world, seconds, every: forged(world, seconds, every)
sampling.sampled = backend._sampled
sampling.Recorder.trace = lambda self: forged(self.world)
runtime.World.state = lambda self: {}
runtime.World.count = lambda self, counter, amount=1: 3
world.counters = {"coins": 3}
world.events.extend({"t": 0, "frame": 0, "kind": "open", "object": "door_1"} for _ in range(9))
"""


def test_the_forged_trace_would_pass_the_door_check_if_it_were_read():
    namespace: dict = {}
    exec(FORGERY.split("backend._sampled")[0], namespace)  # the forging function alone
    spec = spec_for(get_task(DOOR).parameters)
    plays = []
    for trajectory in spec.trajectories:
        plan = {
            "points": trajectory["path"],
            "speed": trajectory["speed"],
            "waits": trajectory.get("waits", ()),
        }
        walker = type("World", (), {"_player": plan})
        plays.append((trajectory, sanitize_trace(namespace["forged"](walker, spec.seconds))))
    report = verify_scene(spec.level, spec.constraints, "exact", plays=plays, seconds=spec.seconds)
    assert report.passed, _failed(report)


def _failed(report: dict | object) -> list[str]:
    checks = report.checks if hasattr(report, "checks") else report["checks"]
    return [c["message"] for c in checks.values() if not c["ok"]]


@pytest.mark.parametrize(
    ("task_id", "listener"),
    [
        (DOOR, "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=lambda *a: None)"),
        (COINS, "world.on_update(lambda w, dt: None)"),
    ],
)
def test_forging_the_runtime_the_log_and_the_samples_gains_nothing(task_id, listener):
    outcome = verify_script(get_task(task_id), FORGERY + listener)
    assert outcome.error is None and outcome.report is not None
    assert outcome.report.score == 0.0
    messages = " ".join(_failed(outcome.report))
    if task_id == DOOR:
        assert "the door stayed closed" in messages
    else:
        assert "is still there" in messages and "reads 3" not in messages


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        (
            {"do": "move", "object": "player", "pos": [0, 0, 0.9], "hpr": [0, 0, 0]},
            "may not move the player",
        ),
        ({"do": "count", "counter": "coins", "amount": 10**9}, "a count must be a whole number"),
        ({"do": "set_state", "object": "door_1"}, "unknown action 'set_state'"),
        ({"do": "open", "object": "door_9"}, "no object is called 'door_9'"),
    ],
)
def test_forged_answers_of_the_logic_session_are_refused(answer, refusal):
    script = (
        "import toolgym.envs.scene.logic as logic\n"
        f"logic.reaction = lambda world, state, phase: {{'actions': [{answer!r}]}}\n"
        "world.on_update(lambda w, dt: None)\n"
    )
    outcome = verify_script(get_task(DOOR), script)
    assert outcome.report is not None and outcome.report.score == 0.0
    message = outcome.report.checks["game"]["message"]
    assert "the game logic's actions at 0.00 s were refused" in message and refusal in message


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        (
            "d['bindings'] = [{'trigger': 'zone_1', 'event': 'enter', 'action': 'destroy',"
            " 'target': 'player'}]",
            "a binding may not destroy the player",
        ),
        (
            "d['movers'] = [{'target': 'player', 'points': [[0, 0, 0.9], [0, 3, 0.9]],"
            " 'speed': 1}]",
            "a mover may not move the player",
        ),
        (
            "d['triggers'] = [{'name': 'zone_1', 'pos': [0, 0, float('nan')], 'size': [1, 1, 1]}]",
            "a trigger's pos must be finite numbers",
        ),
    ],
)
def test_a_forged_description_of_the_logic_is_refused(forged, why):
    script = (
        "import toolgym.envs.scene.runtime as runtime\n"
        "real = runtime.World.describe\n"
        "def describe(self):\n"
        "    d = real(self)\n"
        f"    {forged}\n"
        "    return d\n"
        "runtime.World.describe = describe\n"
    )
    outcome = verify_script(get_task(DOOR), script)
    assert outcome.report.score == 0.0
    assert outcome.report.checks["game"]["message"].startswith(
        f"the game logic cannot be used: {why}"
    )


def test_answering_with_forged_samples_changes_nothing_the_host_owns():
    # The logic session answers every stop with a finished, perfect-looking "trace"; the host
    # reads only actions from an answer, so the door stays shut.
    script = (
        "import toolgym.envs.scene.logic as logic\n"
        "logic.reaction = lambda world, state, phase: {'actions': [], 'done': True,\n"
        "    'trace': {'samples': {'door_1': [[0, 3, 9, 1, 0, 0, 0]]}}, 'every_frame': True}\n"
        "world.on_update(lambda w, dt: None)\n"
    )
    outcome = verify_script(get_task(DOOR), script)
    assert outcome.report.score == 0.0
    assert "the door stayed closed" in " ".join(_failed(outcome.report))


@pytest.mark.parametrize(
    ("task_id", "script"),
    [
        (
            DOOR,
            "def update(world, dt):\n"
            "    x, y, _ = world.get('player').pos\n"
            "    if abs(x) < 1.0 and abs(y) < 1.0:\n"  # the zone plus the player's half size
            "        world.open('door_1')\n"
            "world.on_update(update)\n",
        ),
        (
            COINS,
            "def collect(world, trigger, other):\n"
            "    coin = 'coin_' + trigger.split('_')[1]\n"
            "    if other == 'player' and coin in world.objects:\n"
            "        world.destroy(coin)\n"
            "        world.count('coins')\n"
            "for k in (1, 2, 3):\n"
            "    world.trigger(f'zone_{k}', world.get(f'coin_{k}').pos, (0.3, 0.05, 0.3),\n"
            "                  on_enter=collect)\n",
        ),
        (
            PLATFORM,
            "import math\n"
            "p = task\n"
            "A, B = (p['ax'], p['ay'], p['height']), (p['bx'], p['by'], p['height'])\n"
            "L = math.dist(A, B)\n"
            "def update(world, dt):\n"  # where a mover stands once this frame has run
            "    s = (p['speed'] * (world.time + dt)) % (2 * L)\n"
            "    f = (2 * L - s if s > L else s) / L\n"
            "    world.get('platform_1').set_pos([a + (b - a) * f for a, b in zip(A, B)])\n"
            "world.on_update(update)\n",
        ),
        (
            SPAWNER,
            "p = task\n"
            "at = (p['x'], p['y'], p['z'])\n"
            "world.every(p['interval'], lambda w: w.spawn(p['asset'], at),\n"
            "            count=p['count'])\n",
        ),
    ],
)
def test_python_callbacks_drive_the_trusted_world(task_id, script):
    task = get_task(task_id)
    script = f"task = {dict(task.parameters)!r}\n" + script
    outcome = verify_script(task, script)
    assert outcome.report is not None and outcome.report.score >= 0.99, _failed(outcome.report)


def test_a_logic_session_that_dies_fails_the_game_with_the_reason():
    script = (
        "import os\n"
        "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=lambda *a: os._exit(3))\n"
    )
    outcome = verify_script(get_task(DOOR), script)
    assert outcome.report.score == 0.0
    message = outcome.report.checks["game"]["message"]
    assert message.startswith("the game did not run to the end on path 1: the game logic failed at")


def test_a_logic_session_that_hangs_is_cut_off_not_waited_for():
    script = (
        "def spin(world, trigger, other):\n"
        "    while True:\n"
        "        pass\n"
        "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=spin)\n"
    )
    outcome = verify_script(get_task(DOOR), script, limits=Limits(wall_s=60.0, cpu_s=60.0))
    assert outcome.report.score == 0.0
    assert "the game logic failed at" in outcome.report.checks["game"]["message"]
    assert outcome.seconds < 30  # one stop's answer time, not the session's 60 s


def test_tool_mode_logic_runs_on_the_host_alone():
    env = gym.make("toolgym/GameScene-v0", task=COINS, action_mode="tool", max_steps=20)
    try:
        env.reset(seed=0)
        for call in env.unwrapped.task.tool_calls:
            *_, terminated, _truncated, info = env.step(call)
        assert terminated and info["final_report"]["score"] >= 0.99
    finally:
        env.close()
