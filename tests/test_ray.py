"""Rollouts and verification on Ray: a real two-node cluster on loopback (one CPU per node).

The same seeds give the same scores as local workers; an actor whose process is killed costs only
its in-flight episodes, which rerun on a new actor; an interrupted verify batch keeps its results
and resumes; the trainer's iteration completes through a lost actor.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import wait_until
from toolgym.agents import ray_runners
from toolgym.agents.ray_runners import ActorPool, RayAddressError, RayVectorEnv
from toolgym.agents.vector import make_vector_env, play_queued
from toolgym.envs.suites import get_suite, get_task

ENV = "toolgym/CadQuery-v0"
ENV_KWARGS = {"suite": "primitives", "max_steps": 1, "view_size": 16, "final_tier": "cheap"}
TASKS = [t.id for t in get_suite("primitives").split("train")[:4]]  # one-call parts


@pytest.fixture(scope="module")
def cluster():
    """A head and a worker node, one CPU each, on 127.0.0.1; the driver connects by address."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep every address on loopback
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "memory": 4 * 1024**3, "node_ip_address": "127.0.0.1"}
    for attempt in range(3):  # Ray gives a node 30 s to come up: a busy machine can miss it
        nodes = Cluster()
        try:
            nodes.add_node(include_dashboard=False, **node)
            nodes.add_node(**node)
            break
        except Exception as exc:
            nodes.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
    ray_runners.start(nodes.address)
    assert ray.cluster_resources()["CPU"] == 2
    yield nodes
    ray.shutdown()
    nodes.shutdown()


def oracle(observations, current):
    """Each task's reference call (one-call tasks)."""
    return [get_task(task).tool_calls[0] for task in current]


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), what=f"{pid} to die")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def test_actors_match_local_workers_and_send_compact_arrays(cluster):
    vec = RayVectorEnv(ENV, TASKS, 2, **ENV_KWARGS)
    try:
        assert len(set(vec.actor_pids())) == 2  # one actor per node: a CPU each
        observations, _ = vec.reset(seed=11)
        assert observations["image"].dtype == np.uint8 and observations["image"].shape[0] == 2
        remote = play_queued(vec, TASKS, oracle, seed=3)
    finally:
        vec.close()
    local_vec = make_vector_env(ENV, TASKS, 2, asynchronous=False, **ENV_KWARGS)
    try:
        local = play_queued(local_vec, TASKS, oracle, seed=3)
    finally:
        local_vec.close()
    assert remote == local  # task, exact final score, passed, steps: in the same order
    assert all(score > 0.9 for _, score, _, _ in remote)


def test_actor_killed_mid_rollout_reruns_only_its_episode(cluster):
    vec = RayVectorEnv(ENV, TASKS, 2, **ENV_KWARGS)
    calls = []

    def choose(observations, current):
        calls.append(list(current))
        if len(calls) == 2:  # the second round of episodes is in flight: lose actor 0
            kill(vec.actor_pids()[0])
        return oracle(observations, current)

    try:
        results = play_queued(vec, TASKS, choose, seed=3)
        assert vec.restarts == 1
    finally:
        vec.close()
    lost_task = calls[1][0]
    assert sorted(t for t, *_ in results) == sorted(TASKS)  # every task played to its end once
    assert [t for t, *_ in results].count(lost_task) == 1
    # The rerun episode is the one a fault-free run plays: same score, one step.
    assert all(score > 0.9 and passed and steps == 1 for _, score, passed, steps in results)


def test_run_episodes_on_actors_match_local(cluster, tmp_path):
    from toolgym.agents.runner import run_episodes

    kwargs = dict(episodes=2, seed=4, suite="primitives", max_steps=2, action_mode="tool")
    local = [e.to_dict() for e in run_episodes(ENV, "random", **kwargs)]
    remote = [e.to_dict() for e in ray_runners.run_episodes(ENV, "random", out=tmp_path, **kwargs)]
    keys = ("task", "steps", "score", "passed", "errors")
    assert [[e[k] for k in keys] for e in remote] == [[e[k] for k in keys] for e in local]
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(e["render"]).name for e in remote]


def test_verify_batch_across_actors_resumes_after_interruption_and_a_lost_actor(
    cluster, tmp_path, monkeypatch
):
    tasks = [get_task(t) for t in TASKS]
    scripts = tmp_path / "scripts"
    for task in tasks:
        path = scripts / (task.id.split("/", 1)[1] + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task.reference)
    out = tmp_path / "results.jsonl"

    def interrupt(result):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ray_runners.verify_batch(tasks, scripts, out, jobs=2, on_done=interrupt)
    first = out.read_text().splitlines()
    assert len(first) == 1

    pools = []
    original = ActorPool.__init__

    def remember(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pools.append(self)

    monkeypatch.setattr(ActorPool, "__init__", remember)

    def lose_actors(result):  # after the resumed run's first result, every actor dies
        if len(out.read_text().splitlines()) == 2:
            for pid in pools[0].actor_pids():
                kill(pid)

    resumed = ray_runners.verify_batch(tasks, scripts, out, jobs=2, on_done=lose_actors)
    lines = out.read_text().splitlines()
    assert lines[0] == first[0]  # the finished result is kept, not redone
    assert len(resumed) == 3 and pools[0].restarts >= 1
    results = [json.loads(line) for line in lines]
    assert sorted(r["task"] for r in results) == sorted(TASKS)
    assert all(r["passed"] and r["score"] > 0.99 for r in results)


def test_trainer_iteration_completes_through_a_lost_actor(cluster, tmp_path, monkeypatch):
    from toolgym.agents.policy import PolicyConfig
    from toolgym.agents.ppo import PPOConfig
    from toolgym.agents.train import TrainConfig, Trainer

    config = TrainConfig(
        suite="primitives", steps=8, num_envs=2, num_steps=4, max_steps=2, view_size=16,
        out=str(tmp_path), progress=False, ray=cluster.address,
        policy=PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=32, feedback_bytes=16),
        ppo=PPOConfig(num_minibatches=2, update_epochs=1),
    )  # fmt: skip
    steps, restarts = [], []
    step = RayVectorEnv.step

    def step_losing_an_actor(self, actions):
        steps.append(1)
        if len(steps) == 2:
            kill(self.actor_pids()[1])
        result = step(self, actions)
        restarts.append(self.restarts)
        return result

    monkeypatch.setattr(RayVectorEnv, "step", step_losing_an_actor)
    row = Trainer(config, log=lambda _: None).train(resume=False)
    assert row["iteration"] == 1 and row["env_steps"] == 8 and restarts[-1] == 1
    assert np.isfinite(row["policy_loss"]) and (tmp_path / "checkpoints" / "latest.pt").exists()


def test_unreachable_address_fails_in_seconds_naming_it(tmp_path):
    with pytest.raises(RayAddressError, match=r"127\.0\.0\.1:9"):
        ray_runners.start("127.0.0.1:9")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "toolgym", "verify", "--suite", "primitives", "--scripts", ".",
         "--out", str(tmp_path / "r.jsonl"), "--ray", "127.0.0.1:9"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "127.0.0.1:9" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 60  # the interpreter's start-up included
