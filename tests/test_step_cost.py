"""What one step costs, counted: the expensive operations each domain's step asks of its
sandbox sessions (scripts run, tessellations, saves and reads, snapshots, rollbacks,
simulations), not wall time, so the counts hold on any machine. A change that adds one
fails here; a change that saves one updates the count (and ``bench/RESULTS.md``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

PLATE_TASK = "procedural/plate_holes/train-0"
BOX = "result = cq.Workplane().box(20, 20, 5)"


def sessions(env: gym.Env) -> dict[str, Any]:
    """The env's sandbox sessions by role: the agent's and the trusted ones (started only)."""
    env = env.unwrapped
    found = {"agent": env.session}
    if (measurer := getattr(env, "_measurer", None)) is not None:
        found["measurer"] = measurer.session  # waits for its rollback: the counts are settled
    if (reader := getattr(env, "reader", None)) is not None:
        found["reader"] = reader.session
    if (simulator := getattr(env, "simulator", None)) is not None:
        found["simulator"] = simulator.session  # waits for its rollback, as the measurer's
    if (replay := getattr(env, "replay", None)) is not None:
        found["replay"] = replay.session
    return {role: session for role, session in found.items() if session is not None}


def counted(env: gym.Env, action: Any) -> tuple[dict[str, Counter[str]], tuple]:
    """One step of ``env``, and what it asked of each session."""
    before = {role: Counter(s.calls) for role, s in sessions(env).items()}
    outcome = env.step(action)
    after = {role: Counter(s.calls) for role, s in sessions(env).items()}
    cost = {role: after[role] - before.get(role, Counter()) for role in after}
    return {role: calls for role, calls in cost.items() if calls}, outcome


@pytest.fixture
def plate_env():
    """The plate task's env after a first step (a 4 mm box), so its measurer has started."""
    env = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, action_mode="code")
    env.reset(seed=0)
    env.step("result = cq.Workplane().box(20, 20, 4)")
    yield env
    env.close()


def test_a_cadquery_step_tessellates_its_part_once_and_an_unchanged_part_not_again(plate_env):
    env = plate_env
    env.reset(seed=0)
    cost, (obs, reward, *_, info) = counted(env, BOX)
    # The agent's session runs the script and exports the solid's BREP, never meshes it; the
    # measurer meshes it once for the verifier and the views; one snapshot of the state.
    assert cost == {
        "agent": {"exec": 1, "brep": 1, "snapshot": 1},
        "measurer": {"measure": 1, "rollback": 1},
    }
    assert info["report"]["score"] > 0 and reward > 0
    # The same part again (a step that changed only variables): the same BREP bytes, so neither
    # measured, verified nor rendered again; the same report and views.
    again, (obs_again, reward_again, *_, info_again) = counted(env, f"note = 'same'\n{BOX}")
    assert again == {"agent": {"exec": 1, "brep": 1, "snapshot": 1}}
    assert reward_again == 0.0 and info_again["report"] == info["report"]
    assert np.array_equal(obs_again["image"], obs["image"])
    # A failed step: the script runs, the session rolls back; nothing is measured.
    failed, (*_, info_failed) = counted(env, "raise ValueError('no')")
    assert failed == {"agent": {"exec": 1, "rollback": 1}} and "error" in info_failed
    # A changed part is measured again.
    changed, _ = counted(env, "result = cq.Workplane().box(20, 20, 6)")
    assert changed["measurer"] == {"measure": 1, "rollback": 1}


def test_an_invalid_solid_drops_the_snapshot_taken_while_it_was_verified(plate_env):
    env = plate_env
    snapshots = list(env.unwrapped.session.info["snapshots"])
    two = "a = cq.Workplane().box(10, 10, 10)\nb = a.translate((5, 0, 0))\n"
    script = f"{two}result = cq.Workplane().add(a.val()).add(b.val())"  # overlapping bodies
    cost, (*_, info) = counted(env, script)
    assert info["error"].startswith("invalid solid")
    # Taken ahead while the part was verified, then dropped and rolled back: no snapshot of the
    # failed step's state is left, and the last good one is where the session went.
    assert cost["agent"] == {"exec": 1, "brep": 1, "snapshot": 1, "rollback": 1}
    assert env.unwrapped.session.info["snapshots"] == snapshots


def test_a_passing_cadquery_step_measures_finely_once_for_the_exact_tier(plate_env):
    env = plate_env
    cost, (*_, terminated, _truncated, info) = counted(env, env.unwrapped.task.reference)
    assert terminated and info["final_report"]["passed"]
    # The step tier's mesh, then the exact tier's finer one with the B-Rep cross-check.
    assert cost["measurer"] == {"measure": 2, "brep_volumes": 1, "rollback": 2}
    assert cost["agent"] == {"exec": 1, "brep": 1, "snapshot": 1}


@pytest.mark.parametrize(
    ("env_id", "suite", "cost"),
    [
        # The agent's scene is saved, read by a trusted Blender that runs no agent code, and
        # that session rolled back: the three operations issue 40 aims to replace.
        (
            "toolgym/Blender-v0",
            "blender-placement",
            {
                "agent": {"exec": 1, "save": 1, "snapshot": 1},
                "reader": {"extract": 1, "rollback": 1},
            },
        ),
        # A layout step settles the scene in the trusted simulator, one simulation per check,
        # each from the simulator's fresh state (a rollback after each).
        (
            "toolgym/GameScene-v0",
            "scene-layout",
            {
                "agent": {"exec": 1, "describe": 1, "snapshot": 1},
                "simulator": {"simulate": 5, "rollback": 5},
            },
        ),
        # A logic step that passes plays 2 held-out paths (cheap tier) and then all 10 (exact)
        # on the simulator, each from its fresh state. Its steps are replayed in a logic session
        # started once per level, which keeps the state a replay left (before any play): this
        # episode's step is the first episode's, so nothing is replayed or loaded again; the
        # session goes back to that state before each path and after each verification.
        (
            "toolgym/GameScene-v0",
            "scene-logic",
            {
                "agent": {"exec": 1, "describe": 1, "snapshot": 1},
                "simulator": {"host": 12, "resume": 7, "rollback": 12},
                "replay": {"rollback": 12, "describe": 2, "listen": 2, "react": 7},
            },
        ),
    ],
)
def test_a_blender_or_scene_step_reads_the_agents_state_in_a_trusted_session(env_id, suite, cost):
    env = gym.make(env_id, suite=suite, action_mode="code")
    try:
        task = env.unwrapped.tasks[0]
        for _ in range(2):  # the first episode starts the trusted session
            env.reset(seed=0, options={"task": task.id})
            counts, _ = counted(env, task.reference)
        assert counts == cost
    finally:
        env.close()


def test_a_blender_modelling_step_turns_only_the_objects_it_changed_into_shells():
    from toolgym.envs.blender.verifier import verify_scene

    env = gym.make("toolgym/Blender-v0", task="blender-modelling/table", action_mode="code")
    try:
        env.reset(seed=0)
        target = env.unwrapped._target
        shells = target.goal.shells
        leg = "\nbpy.data.objects['Leg1'].location.x += {}\n"
        _, _, _, _, info = env.step(env.unwrapped.task.reference + leg.format(0.2))
        assert not info["report"]["passed"]  # a leg 20 cm out: the episode goes on
        made = shells.made
        assert made == 5  # a top and four legs
        # The leg moves back halfway: only its mesh is turned into shells again.
        _, _, _, _, info = env.step("import bpy" + leg.format(-0.1))
        assert shells.made == made + 1
        # The report is the one a verification that keeps nothing gives, bit for bit.
        captured = env.unwrapped.reader.read(env.unwrapped.session.request("save").value)[0]
        goal = target.goal
        cold = type(goal)(goal.kind, goal.state, dict(goal.thresholds))
        assert info["report"] == verify_scene(captured.state, cold).to_dict()
        assert not info["report"]["passed"]
    finally:
        env.close()
