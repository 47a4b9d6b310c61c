"""Rollouts on Ray: bytes per step, steps/s with 1 and 2 env-runner actors, memory per env.

    .venv/bin/python bench/ray_rollouts.py [--rounds 4] [--block 2] [--view-size 32]

Not under ``nice``: niced, the Ray actors ran at half the local workers' speed on a quiet machine
(4.0 against 8.1 steps/s), unniced the two agree (8.17 and 8.16).

Starts a local Ray (127.0.0.1, no dashboard) with 3 logical CPUs, so that a 1-actor and a
2-actor vector env (one env and one CPU per actor) both stand ready on this 2-core machine, next
to local ``AsyncVectorEnv`` workers with 1 and 2 envs. The CadQuery env in tool mode on the
primitives suite, every call the task's reference (one-call episodes: each step also ends an
episode, restarts the session and renders the next target, as in training). The four
configurations are timed side by side: ``--rounds`` rounds, each giving every configuration in
turn ``--block`` steps per env, so a shared machine's changing load falls on all four alike and
their ratios hold (the absolute figures are the machine's state). Bytes per step: an actor's
step result as Ray ships it (pickle protocol 5 with the arrays out of band), for a step ending an
episode and (the same result without its final observation) one inside an episode. Memory per
env: the proportional set size of an actor's process tree (the actor, its zygote, the live
session and its snapshots). Figures go to bench/RESULTS.md by hand.

CPU: the machine's busy CPU seconds (``/proc/stat``) during each configuration's blocks, as cores
kept busy and CPU milliseconds per step. One env that keeps ``c`` cores busy leaves two envs at
most ``cores / c`` times its throughput (``ceiling_*_2_over_1``): what the 2-over-1 ratio is
read against. Machine-wide, so run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from toolgym.agents.distributed import runners as ray_runners
from toolgym.agents.trainer.vector import finished_episodes, make_vector_env
from toolgym.envs.tasks.suites import get_suite, get_task

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


def busy_cpu_seconds() -> float:
    """CPU seconds this machine has spent busy since boot, all cores together (/proc/stat: every
    state but idle and iowait). Run on a quiet machine: whatever else runs counts too."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(f) for f in fields[:8]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def calls(current: list[str]) -> list[str]:
    return [get_task(task).tool_calls[0] for task in current]


class Timed:
    """A vector env timed in blocks of steps: steps/s over all blocks, mean final score."""

    def __init__(self, vec) -> None:
        self.vec, self.seconds, self.steps, self.scores = vec, 0.0, 0, []
        self.busy = 0.0  # the machine's busy CPU seconds during this configuration's blocks
        _, info = vec.reset(seed=0)
        _, _, _, _, self.info = vec.step(calls(list(info["task"])))  # warm-up

    def block(self, steps: int) -> None:
        started, busy = time.perf_counter(), busy_cpu_seconds()
        for _ in range(steps):
            _, _, _, _, self.info = self.vec.step(calls(list(self.info["task"])))
            self.scores += [score for _, _, score, _ in finished_episodes(self.info)]
        self.seconds += time.perf_counter() - started
        self.busy += busy_cpu_seconds() - busy
        self.steps += steps * self.vec.num_envs

    @property
    def sps(self) -> float:
        return self.steps / self.seconds

    @property
    def cores_busy(self) -> float:
        """Cores kept busy on average while this configuration stepped."""
        return self.busy / self.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--block", type=int, default=2)
    parser.add_argument("--view-size", type=int, default=32)
    args = parser.parse_args()
    tasks = [t.id for t in get_suite("primitives").split("train")]
    kwargs = {
        "suite": "primitives",
        "max_steps": 1,
        "view_size": args.view_size,
        "final_tier": "cheap",
    }
    load = [round(x, 1) for x in os.getloadavg()]
    started = time.perf_counter()
    ray_runners.start(None, num_cpus=3)
    figures: dict[str, object] = {"ray_start_s": round(time.perf_counter() - started, 1)}
    import ray

    configurations: dict[str, Timed] = {}
    for actors in (1, 2):
        made = time.perf_counter()
        vec = ray_runners.RayVectorEnv(ENV, tasks, actors, **kwargs)
        figures[f"actors_ready_s_{actors}"] = round(time.perf_counter() - made, 1)
        configurations[f"ray_{actors}"] = Timed(vec)
    for envs in (1, 2):
        configurations[f"local_{envs}"] = Timed(
            make_vector_env(ENV, tasks, envs, asynchronous=True, **kwargs)
        )
    for _ in range(args.rounds):
        for timed in configurations.values():
            timed.block(args.block)
    for name, timed in configurations.items():
        figures[f"sps_{name}"] = round(timed.sps, 3)
        figures[f"score_{name}"] = float(np.mean(timed.scores))
        figures[f"cores_busy_{name}"] = round(timed.cores_busy, 2)
        figures[f"cpu_ms_per_step_{name}"] = round(1000 * timed.busy / timed.steps, 1)
    sps = {name: timed.sps for name, timed in configurations.items()}
    # One env that keeps c cores busy leaves two envs at most (cores / c)× its throughput: the
    # ceiling the 2-over-1 ratio is read against.
    for kind in ("ray", "local"):
        ceiling = min(2.0, (os.cpu_count() or 1) / configurations[f"{kind}_1"].cores_busy)
        figures[f"ceiling_{kind}_2_over_1"] = round(ceiling, 2)
    figures["ratio_ray_2_over_1"] = round(sps["ray_2"] / sps["ray_1"], 2)
    figures["ratio_local_2_over_1"] = round(sps["local_2"] / sps["local_1"], 2)
    figures["ratio_ray_over_local_1"] = round(sps["ray_1"] / sps["local_1"], 2)
    figures["ratio_ray_over_local_2"] = round(sps["ray_2"] / sps["local_2"], 2)
    actor = configurations["ray_1"].vec._actors[0]
    (reset,), _ = ray.get(actor.reset.remote([1], None))
    obs, info = reset
    step = ray.get(actor.step.remote(calls([info["task"]])))
    figures["bytes_per_step_ending_episode"] = shipped_bytes(step)[0]
    (inside,), recordings = step
    figures["bytes_per_step_inside_episode"] = shipped_bytes(([(*inside[:5], None)], recordings))[0]
    figures["image_bytes_per_obs"] = int(obs["image"].nbytes + obs["target"].nbytes)
    figures["image_shape"] = list(obs["image"].shape)
    figures["pss_per_env_mib"] = round(
        tree_pss(configurations["ray_1"].vec.actor_pids()[0]) / 1024**2
    )
    for timed in configurations.values():
        timed.vec.close()
    ray.shutdown()
    figures["load_before"], figures["load_after"] = load, [round(x, 1) for x in os.getloadavg()]
    figures["command"] = " ".join(sys.argv)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
