"""Rollouts on Ray: bytes per step, steps/s with 1 and 2 env-runner actors, memory per env.

    .venv/bin/python bench/ray_rollouts.py [--rounds 12] [--view-size 32]

Starts a local Ray (127.0.0.1, no dashboard) sized to the machine, then for 1 and 2 actors (one
env each, one CPU each) times ``--rounds`` steps per env of the CadQuery env in tool mode on the
primitives suite, every call the task's reference (one-call episodes: each step also ends an
episode, restarts the session and renders the next target, as in training). The same loop runs
on local ``AsyncVectorEnv`` workers for comparison. Bytes per step: an actor's step result as Ray
ships it (pickle protocol 5 with the arrays out of band). Memory per env: the proportional set
size of an actor's process tree (the actor, its zygote, the live session and its snapshots).
Figures go to bench/RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path

import numpy as np

from toolgym.agents import ray_runners
from toolgym.agents.vector import finished_episodes, make_vector_env
from toolgym.envs.suites import get_suite, get_task

ENV = "toolgym/CadQuery-v0"


def shipped_bytes(value: object) -> tuple[int, int]:
    """(total bytes, of which out-of-band array buffers) of ``value`` pickled as Ray does."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    arrays = sum(memoryview(b).nbytes for b in buffers)
    return len(head) + arrays, arrays


def tree_pss(pid: int) -> int:
    """Proportional resident bytes of ``pid`` and all its descendants (from /proc): pages that
    forks share (sessions and snapshots share the zygote's) are counted once in all."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def calls(current: list[str]) -> list[str]:
    return [get_task(task).tool_calls[0] for task in current]


def timed(vec, rounds: int) -> tuple[float, float]:
    """(steps/s, mean final score) over ``rounds`` steps per env, after one warm-up step."""
    _, info = vec.reset(seed=0)
    _, _, _, _, info = vec.step(calls(list(info["task"])))
    started, scores = time.perf_counter(), []
    for _ in range(rounds):
        _, _, _, _, info = vec.step(calls(list(info["task"])))
        scores += [score for _, _, score, _ in finished_episodes(info)]
    return vec.num_envs * rounds / (time.perf_counter() - started), float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--view-size", type=int, default=32)
    args = parser.parse_args()
    tasks = [t.id for t in get_suite("primitives").split("train")]
    kwargs = {"suite": "primitives", "max_steps": 1, "view_size": args.view_size,
              "final_tier": "cheap"}  # fmt: skip
    started = time.perf_counter()
    ray_runners.start(None)
    figures: dict[str, object] = {"ray_start_s": round(time.perf_counter() - started, 1)}
    import ray

    for actors in (1, 2):
        made = time.perf_counter()
        vec = ray_runners.RayVectorEnv(ENV, tasks, actors, **kwargs)
        figures[f"actors_ready_s_{actors}"] = round(time.perf_counter() - made, 1)
        sps, score = timed(vec, args.rounds)
        figures[f"ray_sps_{actors}"], figures[f"ray_score_{actors}"] = round(sps, 2), score
        if actors == 1:
            actor = vec._actors[0]
            obs, info = ray.get(actor.reset.remote([1], None))[0]
            step = ray.get(actor.step.remote(calls([info["task"]])))
            total, arrays = shipped_bytes(step)
            figures["bytes_per_step"], figures["array_bytes_per_step"] = total, arrays
            figures["image_bytes_per_obs"] = int(obs["image"].nbytes + obs["target"].nbytes)
            figures["image_shape"] = list(obs["image"].shape)
            figures["pss_per_env_mib"] = round(tree_pss(vec.actor_pids()[0]) / 1024**2)
        vec.close()
    ray.shutdown()
    for envs in (1, 2):
        vec = make_vector_env(ENV, tasks, envs, asynchronous=True, **kwargs)
        sps, score = timed(vec, args.rounds)
        figures[f"local_sps_{envs}"], figures[f"local_score_{envs}"] = round(sps, 2), score
        vec.close()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
