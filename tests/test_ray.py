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
from toolgym.agents.distributed import runners as ray_runners
from toolgym.agents.distributed.runners import ActorPool, RayAddressError, RayVectorEnv
from toolgym.agents.trainer.vector import make_vector_env, play_queued
from toolgym.envs.recording.log import read_run
from toolgym.envs.recording.replay import verify_episode
from toolgym.envs.tasks.suites import get_suite, get_task

ENV = "toolgym/CadQuery-v0"
ENV_KWARGS = {"suite": "primitives", "max_steps": 2, "view_size": 16, "final_tier": "cheap"}
TRAIN = [t.id for t in get_suite("primitives").split("train")]
TASKS = TRAIN[:4]  # one-call parts
WRONG = '{"name": "no_such_tool", "arguments": {}}'  # a failed step: the part stays as it was


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


def two_calls(observations, current):
    """A failed call, then the task's reference: episodes of two steps that pass."""
    return [
        WRONG if step == 0 else get_task(task).tool_calls[0]
        for step, task in zip(observations["step"], current, strict=True)
    ]


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), what=f"{pid} to die")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def played(folder: Path) -> list[tuple[str, list[float]]]:
    """(task, rewards) of each recorded episode in ``folder`` that took a step, in name order."""
    return [
        (e.reset["task"], [line["reward"] for line in e.steps if "reward" in line])
        for e in read_run(folder)
        if e.steps
    ]


@pytest.fixture(scope="module")
def local_results(tmp_path_factory):
    """The queued tasks played by local (in-process) workers, recorded."""
    folder = tmp_path_factory.mktemp("local-recording")
    vec = make_vector_env(ENV, TRAIN, 2, asynchronous=False, record=str(folder), **ENV_KWARGS)
    try:
        return play_queued(vec, TASKS, two_calls, seed=3), played(folder)
    finally:
        vec.close()


@pytest.fixture(scope="class")
def vec(cluster, tmp_path_factory):
    """Two envs in two actors (one per node: the cluster's two CPUs), recording."""
    envs = RayVectorEnv(ENV, TRAIN, 2, record=tmp_path_factory.mktemp("recording"), **ENV_KWARGS)
    yield envs
    envs.close()


@pytest.mark.slow  # a two-node Ray cluster: tens of seconds to start
class TestVectorEnv:
    def test_actors_match_local_workers_send_arrays_and_record_here(self, vec, local_results):
        assert len(set(vec.actor_pids())) == 2  # one actor per node: a CPU each
        observations, _ = vec.reset(seed=11)
        assert observations["image"].dtype == np.uint8 and observations["image"].shape[0] == 2
        remote = play_queued(vec, TASKS, two_calls, seed=3)
        local, local_recorded = local_results
        assert remote == local  # task, exact final score, passed, steps: in the same order
        assert all(score > 0.9 and steps == 2 for _, score, _, steps in remote)
        # Each finished episode's recording was sent here as it ended: the same episodes and
        # rewards as the local recorders wrote, and it replays step for step.
        assert sorted(played(vec._record)) == sorted(local_recorded)
        episodes = [e for e in read_run(vec._record) if e.steps]
        assert len(episodes) == len(TASKS) and verify_episode(episodes[0]) is None

    def test_actor_killed_mid_rollout_loses_no_episode(self, vec, local_results):
        calls = []
        before = {p.name for p in vec._record.iterdir()}

        def choose(observations, current):
            calls.append(list(current))
            if len(calls) == 2:  # mid-episode: each env took its first call of two
                kill(vec.actor_pids()[0])
            return two_calls(observations, current)

        restarts, replayed = vec.restarts, vec.replayed_steps
        results = play_queued(vec, TASKS, choose, seed=3)
        assert vec.restarts == restarts + 1 and vec.replayed_steps == replayed + 1
        # The new actor replayed env 0's episode (its reset, its first call), then took the call
        # in flight: the caller saw the same episodes, scores and step counts as without the loss.
        assert results == local_results[0]
        new = vec._record / "new"
        new.mkdir()
        for path in vec._record.iterdir():
            if path.name not in before and path != new:
                path.rename(new / path.name)
        assert sorted(played(new)) == sorted(local_results[1])  # each recorded once, whole

    def test_trainer_iteration_completes_with_whole_episodes_through_a_lost_actor(
        self, cluster, vec, tmp_path, monkeypatch
    ):
        """The trainer on these actors (the last test of the class: it closes them)."""
        from toolgym.agents.trainer import train
        from toolgym.agents.trainer.policy import PolicyConfig
        from toolgym.agents.trainer.ppo import PPOConfig

        def config(out, ray):
            return train.TrainConfig(
                suite="primitives",
                steps=8,
                num_envs=2,
                num_steps=4,
                max_steps=2,
                view_size=16,
                out=str(out),
                progress=False,
                ray=ray,
                asynchronous=False,
                policy=PolicyConfig(
                    image_size=16, hidden=32, embed=8, prompt_bytes=32, feedback_bytes=16
                ),
                ppo=PPOConfig(num_minibatches=2, update_epochs=1),
            )

        quiet = {"log": lambda _: None}
        local = train.Trainer(config(tmp_path / "local", None), **quiet).train(resume=False)

        def these_actors(env_id, task_ids, num_envs, asynchronous, ray=None, **kwargs):
            assert (ray, list(task_ids), kwargs) == (cluster.address, TRAIN, ENV_KWARGS)
            return vec

        steps = []
        step = RayVectorEnv.step

        def step_losing_an_actor(self, actions):
            steps.append(1)
            if len(steps) == 2:  # episodes of two calls are in flight
                kill(self.actor_pids()[1])
            return step(self, actions)

        monkeypatch.setattr(train, "make_vector_env", these_actors)
        monkeypatch.setattr(RayVectorEnv, "step", step_losing_an_actor)
        restarts = vec.restarts
        row = train.Trainer(config(tmp_path / "ray", cluster.address), **quiet).train(resume=False)
        assert vec.restarts == restarts + 1
        assert row["iteration"] == 1 and row["env_steps"] == 8
        # Whole episodes, none cut: the iteration local workers give for the same seed.
        for key in ("episodes", "return", "score", "success_rate", "policy_loss", "value_loss"):
            assert row[key] == pytest.approx(local[key], rel=1e-5, abs=1e-7), key
        assert (tmp_path / "ray" / "checkpoints" / "latest.pt").exists()


@pytest.mark.slow
def test_run_episodes_on_actors_match_local_and_record_here(cluster, tmp_path):
    from toolgym.agents.runner import run_episodes

    kwargs = dict(episodes=2, seed=4, suite="primitives", max_steps=2, action_mode="tool")
    local = [e.to_dict() for e in run_episodes(ENV, "random", record=tmp_path / "local", **kwargs)]
    remote = [
        e.to_dict()
        for e in ray_runners.run_episodes(
            ENV, "random", out=tmp_path / "renders", record=tmp_path / "ray", **kwargs
        )
    ]
    keys = ("task", "steps", "score", "passed", "errors")
    assert [[e[k] for k in keys] for e in remote] == [[e[k] for k in keys] for e in local]
    renders = sorted(p.name for p in (tmp_path / "renders").iterdir())
    assert renders == [Path(e["render"]).name for e in remote]
    # Episode k's recording is the folder numbered k, as a local run's: same tasks, same rewards.
    assert sorted(played(tmp_path / "ray")) == sorted(played(tmp_path / "local"))

    def names(folder):  # the folders' names without the recording process's id
        return [p.name.rsplit("-p", 1)[0] for p in sorted(folder.iterdir())]

    assert names(tmp_path / "ray") == names(tmp_path / "local")


@pytest.mark.slow
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


@pytest.mark.slow
def test_mixed_tools_on_actors_match_local_workers_and_record_here(cluster, tmp_path):
    mix = "cadquery:primitives,scene:scene-layout"
    tasks = ["primitives/primitive/train-0", "scene-layout/dining/train-0"]
    kwargs = {"mix": mix, "max_steps": 1, "view_size": 16, "final_tier": "cheap"}
    tool = {"primitives": "cadquery", "scene-layout": "scene"}

    def first_calls(observations, current):
        calls = []
        for task in current:
            call = get_task(task).tool_calls[0]
            call = json.loads(call) if isinstance(call, str) else dict(call)
            call["name"] = f"{tool[task.split('/')[0]]}.{call['name']}"  # the mixed grammar's
            calls.append(json.dumps(call))
        return calls

    results = {}
    for where in ("local", "ray"):
        vec = make_vector_env(
            "",
            tasks,
            1,
            asynchronous=False,
            record=str(tmp_path / where),
            ray=cluster.address if where == "ray" else None,
            **kwargs,
        )
        try:
            results[where] = play_queued(vec, tasks, first_calls, seed=5)
        finally:
            vec.close()
    assert results["ray"] == results["local"]
    assert sorted(t for t, *_ in results["ray"]) == sorted(tasks)
    assert sorted(played(tmp_path / "ray")) == sorted(played(tmp_path / "local"))


def test_unreachable_address_fails_in_seconds_naming_it(tmp_path):
    with pytest.raises(RayAddressError, match=r"127\.0\.0\.1:9"):
        ray_runners.start("127.0.0.1:9")
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgym",
            "verify",
            "--suite",
            "primitives",
            "--scripts",
            ".",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--ray",
            "127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "127.0.0.1:9" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 60  # the interpreter's start-up included


@pytest.mark.parametrize(
    "command",
    [
        ["train", "--out", "{tmp}/run"],
        ["eval", "--checkpoint", "{tmp}/model.pt"],
        ["run", "--episodes", "1"],
        ["verify", "--suite", "primitives", "--scripts", "{tmp}", "--out", "{tmp}/r.jsonl"],
    ],
)
def test_ray_without_an_address_starts_a_local_ray_in_every_command(command, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from toolgym.cli import app

    (tmp_path / "model.pt").write_bytes(b"")
    asked = []

    def start(address=None, num_cpus=None):
        asked.append(address)
        raise RayAddressError(f"stopped before starting Ray at {address}")

    monkeypatch.setattr(ray_runners, "start", start)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    for line in ([*args, "--ray"], [args[0], "--ray", *args[1:]]):  # last, or before an option
        done = CliRunner().invoke(app, line)
        assert done.exit_code == 2 and "stopped before starting Ray at local" in done.output
    assert asked == ["local", "local"]


def test_ray_is_refused_where_nothing_runs_on_it(tmp_path):
    from typer.testing import CliRunner

    from toolgym.cli import app

    line = ["verify", "--candidate", "a.step", "--reference", "b.step", "--ray"]
    done = CliRunner().invoke(app, line)
    assert done.exit_code == 2
    assert "--ray is for batch mode (--suite NAME --scripts DIR)" in done.output


@pytest.mark.slow
def test_a_benchmark_run_on_actors_equals_a_local_one(cluster, tmp_path):
    from toolgym.agents.benchmark.players import AgentSpec
    from toolgym.agents.benchmark.runner import Plan, run_plan
    from toolgym.agents.benchmark.sets import get_set

    plan = Plan(get_set("all-lite-v1"), AgentSpec("random", "tool"), samples=2, limit=3)
    local = run_plan(plan, tmp_path / "local", jobs=2)
    remote = run_plan(plan, tmp_path / "ray", jobs=2, ray=cluster.address)

    def fixed(rows):  # all but the wall time, which no seed fixes
        return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]

    assert fixed(remote) == fixed(local)
    assert {r["entry"].split("/")[0] for r in remote} == {"cadquery", "blender", "scene"}
