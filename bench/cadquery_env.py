"""CadQuery environment benchmark: steps/s with 1 and 2 parallel envs, where a step's time goes,
and the sandbox's cost over running the same script in-process.

Run::

    python bench/cadquery_env.py                 # 40 steps per figure, procedural suite
    python bench/cadquery_env.py --steps 10 --suite curated

Every step sends the current task's reference script (a typical step: real CAD work) to
``toolgym/CadQuery-v0`` in code mode, on a handful of tasks spread over the suite, in blocks of
steps per task. With success switched off and ``max_steps`` above the steps run, no episode ends,
so there are no autoreset steps and every timed step is a real one. Resets are not timed.

1. Steps/s of ``AsyncVectorEnv`` with 1 env and with 2 envs (``shared_memory=False``: the
   observations hold text), blocks of the two interleaved. Target: 2 envs ≥ 1.7× 1 env.
2. One env's step split into exec, tessellate, verify and render (medians of ``info["timings"]``).
3. The sandbox part of a step (exec + tessellate) over the same script exec'd and tessellated
   in-process (same tolerances, same serial booleans as the sandbox), interleaved step by step;
   the median of the paired ratios (the ratio of the sums for reference). Target: ≤ 1.3×.

The machines this runs on are shared and noisy (2 cores): the ratios, measured side by side in
one run, are the evidence; absolute times are only a rough guide.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from typing import Any

import cadquery
import gymnasium as gym
import numpy as np

import toolgym  # noqa: F401 - registers toolgym/CadQuery-v0
from toolgym.envs.cadquery.backend import CadQueryBackend, to_shape
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_suite
from toolgym.verifiers.parts import TESSELLATION_TOLERANCE

TASKS = 6  # tasks spread over the suite, cycled through
SCALING_MIN = 1.7  # steps/s of 2 envs over 1 env
SANDBOX_OVER_INPROC_MAX = 1.3  # env exec + tessellate over in-process exec + tessellate
PHASES = ("exec", "tessellate", "verify", "render")


def make_env(suite: str, steps: int) -> gym.Env:
    env = gym.make(
        "toolgym/CadQuery-v0",
        suite=suite,
        action_mode="code",
        max_steps=steps + 1,
        view_size=64,
        timings_in_info=True,
    )
    env.unwrapped._succeeded = lambda report: False  # no episode ends: every step is a real one
    return env


def blocks(tasks: list[Task], steps: int) -> list[tuple[Task, int]]:
    """``steps`` split into consecutive blocks, one task each, cycling through ``tasks``."""
    size = max(1, steps // len(tasks))
    out, left = [], steps
    while left > 0:
        out.append((tasks[len(out) % len(tasks)], min(size, left)))
        left -= out[-1][1]
    return out


def checked(info: dict[str, Any]) -> None:
    if "error" in info:
        raise RuntimeError(f"a benchmark step failed: {info['error']}")


def vector_block(envs: gym.vector.VectorEnv, task: Task, steps: int) -> float:
    """Seconds ``envs`` take for ``steps`` steps of ``task``'s script (the reset is not timed)."""
    envs.reset(seed=0, options={"task": task.id})
    actions = tuple(task.reference for _ in range(envs.num_envs))
    started = time.perf_counter()
    for _ in range(steps):
        *_, terminated, truncated, infos = envs.step(actions)
        if "error" in infos or terminated.any() or truncated.any():
            raise RuntimeError(f"a benchmark step failed or ended: {infos.get('error')}")
    return time.perf_counter() - started


def bench_scaling(suite: str, tasks: list[Task], steps: int) -> dict[str, float]:
    """Steps/s (all envs together) of 1 and 2 envs, their blocks interleaved."""
    vecs = {
        n: gym.vector.AsyncVectorEnv([lambda: make_env(suite, steps)] * n, shared_memory=False)
        for n in (1, 2)
    }
    try:
        for envs in vecs.values():  # warm-up: zygotes, first forks, target renders
            for task in tasks:
                vector_block(envs, task, 1)
        seconds = dict.fromkeys(vecs, 0.0)
        for task, size in blocks(tasks, steps):
            for n, envs in vecs.items():
                seconds[n] += vector_block(envs, task, size)
    finally:
        for envs in vecs.values():
            envs.close()
    fig = {f"sps{n}": n * steps / seconds[n] for n in vecs}
    fig["scaling"] = fig["sps2"] / fig["sps1"]
    return fig


def inprocess(script: str) -> float:
    """Seconds to exec ``script`` here and tessellate ``result`` as the sandbox does."""
    started = time.perf_counter()
    namespace: dict[str, Any] = {"cq": cadquery}
    exec(compile(script, "<s>", "exec"), namespace)
    shape = to_shape(namespace["result"])
    tolerance = max(TESSELLATION_TOLERANCE * shape.BoundingBox().DiagonalLength, 1e-6)
    vertices, triangles = shape.tessellate(tolerance, 0.1)
    np.array([v.toTuple() for v in vertices], dtype=np.float64).reshape(-1, 3)
    np.array(triangles, dtype=np.int32).reshape(-1, 3)
    return time.perf_counter() - started


def bench_single(suite: str, tasks: list[Task], steps: int) -> dict[str, float]:
    """Median phase times of one env's steps, and its sandbox part against in-process."""
    CadQueryBackend().warm_up()  # serial booleans here too, as in the sandbox
    env = make_env(suite, steps)
    samples: dict[str, list[float]] = {
        name: [] for name in (*PHASES, "step", "sandbox", "inproc", "ratio")
    }
    try:
        for task in tasks:  # warm-up
            env.reset(seed=0, options={"task": task.id})
            checked(env.step(task.reference)[-1])
            inprocess(task.reference)
        for task, size in blocks(tasks, steps):
            env.reset(seed=0, options={"task": task.id})
            for _ in range(size):
                started = time.perf_counter()
                *_, info = env.step(task.reference)
                samples["step"].append(time.perf_counter() - started)
                checked(info)
                for name in PHASES:
                    samples[name].append(info["timings"][name])
                local = inprocess(task.reference)
                samples["inproc"].append(local)
                sandbox = info["timings"]["exec"] + info["timings"]["tessellate"]
                samples["sandbox"].append(sandbox)
                samples["ratio"].append(sandbox / local)
    finally:
        env.close()
    fig = {name: statistics.median(values) for name, values in samples.items()}
    fig["total_ratio"] = sum(samples["sandbox"]) / sum(samples["inproc"])
    return fig


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def report(scale: dict[str, float], single: dict[str, float]) -> list[tuple[str, str, str]]:
    """``(measure, figure, target)`` rows; the target column carries the verdict."""
    scaling_ok = scale["scaling"] >= SCALING_MIN
    ratio_ok = single["ratio"] <= SANDBOX_OVER_INPROC_MAX
    share = {name: single[name] / single["step"] for name in PHASES}
    return [
        ("steps/s, 1 env (AsyncVectorEnv)", f"{scale['sps1']:.2f}", ""),
        ("steps/s, 2 envs (AsyncVectorEnv)", f"{scale['sps2']:.2f}", ""),
        ("2 envs / 1 env", f"{scale['scaling']:.2f}×", f"≥ 1.7×: {verdict(scaling_ok)}"),
        ("step, single env (wall)", ms(single["step"]), ""),
        *((f"step: {name}", f"{ms(single[name])} ({share[name]:.0%})", "") for name in PHASES),
        ("sandbox part (exec + tessellate)", ms(single["sandbox"]), ""),
        ("in-process exec + tessellate", ms(single["inproc"]), ""),
        ("sandbox / in-process (sums over all steps)", f"{single['total_ratio']:.2f}×", ""),
        (
            "sandbox / in-process (median of pairs)",
            f"{single['ratio']:.2f}×",
            f"≤ 1.3×: {verdict(ratio_ok)}",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="timed steps per env and figure")
    parser.add_argument("--suite", default="procedural", help="suite whose tasks are stepped")
    args = parser.parse_args()
    steps = max(1, args.steps)
    suite = get_suite(args.suite).tasks
    tasks = list(suite[:: max(1, len(suite) // TASKS)][:TASKS])

    load, python = os.getloadavg()[0], platform.python_version()
    print(
        f"# cadquery env bench: suite={args.suite}, steps={steps}, {len(tasks)} tasks, "
        f"{os.cpu_count()} CPUs, load {load:.2f}, Python {python}"
    )
    print("tasks: " + ", ".join(task.id for task in tasks))
    scale = bench_scaling(args.suite, tasks, steps)
    single = bench_single(args.suite, tasks, steps)

    table = ["| measure | figure | target |", "|---|---|---|"]
    print()
    for measure, figure, target in report(scale, single):
        print(f"  {measure:<42} {figure:>18}   {target}")
        table.append(f"| {measure} | {figure} | {target} |")
    print("\n" + "\n".join(table))


if __name__ == "__main__":
    main()
