"""CadQuery environment benchmark: steps/s with 1 and 2 parallel envs, where a step's time goes,
and the sandbox's cost over running the same script in-process.

Run::

    python bench/cadquery_env.py                 # 40 steps per figure, procedural suite
    python bench/cadquery_env.py --steps 10 --suite curated

Every step sends the current task's reference script (a typical step: real CAD work) to
``toolgym/CadQuery-v0`` in code mode, on a handful of tasks spread over the suite, in blocks of
steps per task; every other step moves the part 0.5 mm up, so that each step changes the part
(the env neither measures, verifies nor renders a part a step left unchanged: that step is timed
on its own). With success switched off and ``max_steps`` above the steps run, no episode ends,
so there are no autoreset steps and every timed step is a real one. Resets are not timed.

1. Steps/s of ``AsyncVectorEnv`` with 1 env and with 2 envs (``shared_memory=False``: the
   observations hold text), blocks of the two interleaved. Target: 2 envs ≥ 1.7× 1 env.
2. One env's step split into exec, tessellate, verify, render and snapshot (medians of
   ``info["timings"]``; snapshot: what is left to wait for of the snapshot taken while the part
   is verified), and the step over its exec (median of pairs). Target: ≤ 1.5×.
3. The sandbox part of a step (exec + tessellate) over the same script exec'd and tessellated
   in-process (same tolerances, same serial booleans as the sandbox), interleaved step by step;
   the median of the paired ratios (the ratio of the sums for reference). Target: ≤ 1.3×. And
   the whole step over the in-process exec alone (the tool's own work) and exec + tessellate.
4. A step that leaves the part unchanged (the same script again), over its exec.

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

import toolgym  # noqa: F401 - registers toolgym/CadQuery-v0
from toolgym.envs.cadquery.backend import CadQueryBackend, to_shape
from toolgym.envs.cadquery.measure import tessellation
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_suite
from toolgym.verifiers.parts import ANGULAR_TOLERANCE

TASKS = 6  # tasks spread over the suite, cycled through
SCALING_MIN = 1.7  # steps/s of 2 envs over 1 env
SANDBOX_OVER_INPROC_MAX = 1.3  # env exec + tessellate over in-process exec + tessellate
STEP_OVER_EXEC_MAX = 1.5  # a step's wall time over its exec phase
PHASES = ("exec", "tessellate", "verify", "render", "snapshot")
MOVED = "\nresult = result.translate((0, 0, 0.5))"  # every other step: the part changes


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
    started = time.perf_counter()
    for index in range(steps):
        actions = (scripts(task)[index % 2],) * envs.num_envs
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


def inprocess(script: str, tolerance: float) -> tuple[float, float]:
    """Seconds to exec ``script`` here, and to exec it and mesh ``result`` as the env's measurer
    does (the same function, at the step's chordal ``tolerance`` in mm)."""
    started = time.perf_counter()
    namespace: dict[str, Any] = {"cq": cadquery}
    exec(compile(script, "<s>", "exec"), namespace)
    executed = time.perf_counter() - started
    tessellation(to_shape(namespace["result"]), tolerance, ANGULAR_TOLERANCE)
    return executed, time.perf_counter() - started


def scripts(task: Task) -> tuple[str, str]:
    """The task's reference script, and the same moved: alternated, every step changes the part."""
    return task.reference, task.reference + MOVED


def bench_single(suite: str, tasks: list[Task], steps: int) -> dict[str, float]:
    """Median phase times of one env's steps, and its sandbox part against in-process."""
    CadQueryBackend().warm_up()  # serial booleans here too, as in the sandbox
    env = make_env(suite, steps)
    names = (*PHASES, "step", "sandbox", "inproc", "inproc_exec", "ratio", "step_ratio")
    samples: dict[str, list[float]] = {
        name: [] for name in (*names, "over_inproc", "over_inproc_exec", "same", "same_ratio")
    }
    try:
        for task in tasks:  # warm-up
            env.reset(seed=0, options={"task": task.id})
            for script in scripts(task):
                checked(env.step(script)[-1])
                inprocess(script, env.unwrapped._step_reference.tolerance)
        for task, size in blocks(tasks, steps):
            env.reset(seed=0, options={"task": task.id})
            for index in range(size):
                script = scripts(task)[index % 2]
                started = time.perf_counter()
                *_, info = env.step(script)
                step = time.perf_counter() - started
                checked(info)
                timings = info["timings"]
                for name in PHASES:
                    samples[name].append(timings.get(name, 0.0))  # snapshot: new in this version
                local_exec, local = inprocess(script, env.unwrapped._step_reference.tolerance)
                sandbox = timings["exec"] + timings["tessellate"]
                for name, value in (
                    ("step", step),
                    ("step_ratio", step / timings["exec"]),
                    ("inproc", local),
                    ("inproc_exec", local_exec),
                    ("sandbox", sandbox),
                    ("ratio", sandbox / local),
                    ("over_inproc", step / local),
                    ("over_inproc_exec", step / local_exec),
                ):
                    samples[name].append(value)
            started = time.perf_counter()  # the same script again: the part is unchanged
            *_, info = env.step(script)
            samples["same"].append(time.perf_counter() - started)
            checked(info)
            samples["same_ratio"].append(samples["same"][-1] / info["timings"]["exec"])
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
    step_ok = single["step_ratio"] <= STEP_OVER_EXEC_MAX
    share = {name: single[name] / single["step"] for name in PHASES}
    return [
        ("steps/s, 1 env (AsyncVectorEnv)", f"{scale['sps1']:.2f}", ""),
        ("steps/s, 2 envs (AsyncVectorEnv)", f"{scale['sps2']:.2f}", ""),
        ("2 envs / 1 env", f"{scale['scaling']:.2f}×", f"≥ 1.7×: {verdict(scaling_ok)}"),
        ("step, single env (wall)", ms(single["step"]), ""),
        *((f"step: {name}", f"{ms(single[name])} ({share[name]:.0%})", "") for name in PHASES),
        (
            "step / its exec (median of pairs)",
            f"{single['step_ratio']:.2f}×",
            f"≤ 1.5×: {verdict(step_ok)}",
        ),
        ("step / in-process exec (median of pairs)", f"{single['over_inproc_exec']:.2f}×", ""),
        ("step / in-process exec + tessellate", f"{single['over_inproc']:.2f}×", ""),
        ("step, part unchanged (the same script again)", ms(single["same"]), ""),
        ("step, part unchanged / its exec", f"{single['same_ratio']:.2f}×", ""),
        ("sandbox part (exec + tessellate)", ms(single["sandbox"]), ""),
        ("in-process exec", ms(single["inproc_exec"]), ""),
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
