"""Fault injection: the sandbox's processes killed from outside, between steps and mid-step.

Whatever dies, ``step()`` returns; the observation, the part the env stores and the state the
session holds agree; and when state was lost the feedback says so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environment
from conftest import dead, descendants, in_syscall, outer_pid, wait_until
from toolgym.envs.cadquery.artifacts import session_part
from toolgym.envs.sandbox import Session

TASK = "procedural/plate_holes/train-0"
BOX = "result = cq.Workplane().box(10, 10, 10)"
BIGGER = "result = cq.Workplane().box(20, 20, 20)"
USES_STATE = "result = result.faces('>Z').workplane().hole(2)"
SLEEP = "import time\ntime.sleep(30)"
FAILS = "raise ValueError('no')"


@pytest.fixture
def env():
    environment = gym.make("toolgym/CadQuery-v0", task=TASK, max_steps=50)
    environment.reset(seed=0)
    yield environment
    environment.close()


def volume(part) -> float | None:
    if part is None:
        return None
    v, f = part.mesh.vertices, part.mesh.faces
    return float(np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6)


def assert_consistent(env: gym.Env, obs: dict) -> None:
    """The stored part is the session's part, and the image shows it."""
    unwrapped = env.unwrapped
    held, _ = session_part(unwrapped.session)
    assert volume(unwrapped._part) == pytest.approx(volume(held))
    assert np.array_equal(obs["image"], unwrapped._render(held))


def target_pid(session: Session, target: str, snapshot: int | None) -> int:
    if target == "worker":
        return outer_pid(session, session.worker_pid)
    if target == "init":
        return session.init_pid
    if target == "zygote":
        return session.zygote_pid
    return outer_pid(session, session._snapshots[snapshot].pid)


def kill_and_wait(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), what=f"{pid} dead")


_zombie = dead


TARGETS = ["worker", "init", "snapshot", "zygote"]
LOSES_STATE = {"init", "snapshot"}  # what dies with them: the last good step's state


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("next_step", ["good", "failing"])
def test_killed_between_steps(env, target, next_step):
    unwrapped = env.unwrapped
    env.step(BOX)
    assert volume(unwrapped._part) == pytest.approx(1000.0)
    score = unwrapped._score
    kill_and_wait(target_pid(unwrapped.session, target, unwrapped._good_snapshot))

    if next_step == "good":  # it runs, and nothing the agent did not do is penalised
        obs, reward, *_, info = env.step(BIGGER)
        assert "error" not in info, info["error"]
        assert volume(unwrapped._part) == pytest.approx(8000.0)
        assert reward == pytest.approx(unwrapped._score - score)
        if target in ("worker", "init"):
            assert "had died" in obs["feedback"], obs["feedback"]
    else:
        obs, reward, *_, info = env.step(FAILS)
        assert "ValueError" in info["error"]
        lost = target in LOSES_STATE
        assert volume(unwrapped._part) == (None if lost else pytest.approx(1000.0))
        assert ("lost" in obs["feedback"]) == lost, obs["feedback"]
        assert reward == pytest.approx(-0.1 + (unwrapped._score - score))  # return stays exact
    assert_consistent(env, obs)
    # The env goes on: steps build on the state that exists, failures roll back to it.
    for action in (BIGGER, USES_STATE, FAILS, FAILS):
        obs, reward, *_, info = env.step(action)
        assert ("error" in info) == (action == FAILS), info.get("error")
        assert_consistent(env, obs)
    assert volume(unwrapped._part) < 8000.0


@pytest.mark.parametrize("target", TARGETS)
def test_killed_mid_step(env, target):
    unwrapped = env.unwrapped
    env.step(BOX)
    session = unwrapped.session
    pid = target_pid(session, target, unwrapped._good_snapshot)
    worker = outer_pid(session, session.worker_pid)

    def kill_once_sleeping() -> None:
        wait_until(lambda: in_syscall(worker, "nanosleep"), what="the step to start")
        os.kill(pid, signal.SIGKILL)
        if target in ("snapshot", "zygote"):  # the step would go on sleeping: end it too
            os.kill(worker, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_sleeping)
    killer.start()
    obs, _, *_, info = env.step(SLEEP)
    killer.join()
    assert "SIGKILL" in info["error"] or "died" in info["error"], info["error"]
    assert_consistent(env, obs)
    if target in LOSES_STATE:  # the part is gone with the state, and the agent is told
        assert unwrapped._part is None and "lost" in obs["feedback"], obs["feedback"]
    else:  # the last good part came back
        assert volume(unwrapped._part) == pytest.approx(1000.0)
    obs, *_, info = env.step(FAILS)
    assert_consistent(env, obs)
    obs, *_, info = env.step(BIGGER)
    assert "error" not in info and volume(unwrapped._part) == pytest.approx(8000.0)
    assert_consistent(env, obs)


def test_crash_when_the_latest_snapshot_is_dead_shows_the_older_state(env):
    unwrapped = env.unwrapped
    env.step(BOX)
    score = unwrapped._score
    kill_and_wait(target_pid(unwrapped.session, "snapshot", unwrapped._good_snapshot))
    obs, reward, *_, info = env.step("import os\nos._exit(3)")
    assert "exited with status 3" in info["error"]
    assert unwrapped._part is None  # snapshot 0 (nothing built) is what survived
    assert "lost the last good state" in obs["feedback"], obs["feedback"]
    assert reward == pytest.approx(-0.1 - score)
    assert_consistent(env, obs)


def test_worker_killed_between_steps_runs_the_next_action():
    with Session("cadquery") as session:
        assert session.run("x = 20").ok
        session.snapshot()
        kill_and_wait(outer_pid(session, session.worker_pid))
        result = session.run("y = x + 1", fetch=["y"])
        assert result.ok and result.results == {"y": 21}
        assert "SIGKILL" in result.recovery and result.restored_to is None


def test_surrogate_in_an_exception_does_not_kill_the_worker(cq_session):
    worker = cq_session.worker_pid
    result = cq_session.run("raise ValueError('bad \\udc80 text')", fetch=["x"])
    assert result.error.kind == "exception" and "bad \\udc80 text" in result.error.message
    assert cq_session.worker_pid == worker and result.restored_to is None
    fetched = cq_session.run("s = 'x\\udc80'", fetch=["s"])
    assert fetched.ok and fetched.results == {"s": "x\\udc80"}


class FaultyEnvs:
    """Kills every process of one vector-env worker's sandbox: zygote, init, worker, snapshots."""

    def __init__(self, envs: gym.vector.AsyncVectorEnv) -> None:
        self.worker_process = envs.processes[0].pid

    def sandbox(self) -> list[int]:
        return sorted(descendants(self.worker_process))

    def kill_all(self) -> None:
        pids = self.sandbox()
        for pid in pids:
            # A process can end between the listing and its kill (a snapshot dropped, a
            # rollback's old worker reaped, both in the background): it is dead already.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: all(_zombie(pid) for pid in pids), what="the sandbox to die")


def test_async_vector_env_keeps_stepping_through_faults():
    make = lambda: gym.make("toolgym/CadQuery-v0", task=TASK, max_steps=50)  # noqa: E731
    envs = gym.vector.AsyncVectorEnv([make, make], shared_memory=False)
    faults = FaultyEnvs(envs)
    try:
        envs.reset(seed=0)
        envs.step((BOX, BOX))
        faults.kill_all()  # between steps
        obs, rewards, _, _, infos = envs.step((BIGGER, BIGGER))
        assert "lost" in obs["feedback"][0] and "error" not in infos
        assert rewards[0] == pytest.approx(rewards[1])  # same action, same outcome
        envs.step_async((SLEEP, BOX))  # mid-step
        wait_until(lambda: any(in_syscall(p, "nanosleep") for p in faults.sandbox()))
        faults.kill_all()
        obs, rewards, *_ = envs.step_wait()
        assert "lost" in obs["feedback"][0]
        for _ in range(3):
            obs, rewards, *_, infos = envs.step((BOX, FAILS))
        assert obs["step"].tolist() == [6, 6] and "ValueError" in obs["feedback"][1]
    finally:
        envs.close()


class _UnstackableInfo(gym.Env):
    """An env whose info holds an int in one step and None in another: a vector env cannot
    stack the two, and its step raises after reading the workers' replies."""

    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, 0.0, False, False, {"count": None if action else 1}


def test_a_vector_env_whose_step_raised_closes_instead_of_hanging():
    """The trainer's vector env after a step that raised once the workers had replied: the
    error reaches the caller, and its `finally: vec.close()` stops the workers (Gymnasium's
    own close waits for ever for the replies the failed step already read)."""
    from toolgym.agents.trainer.vector import Workers

    vec = Workers([_UnstackableInfo] * 2, context="fork")
    vec.reset(seed=0)
    with pytest.raises(TypeError):
        vec.step(np.array([0, 1]))
    workers = list(vec.processes)
    closing = threading.Thread(target=vec.close)
    closing.start()
    closing.join(timeout=60)
    assert not closing.is_alive() and not any(p.is_alive() for p in workers)
