"""Game-scene environment benchmark: each kind of step beside the tool's own work, and Bullet
steps/s with and without the sandbox, side by side.

Run::

    python bench/scene_env.py                  # 30 steps per figure
    python bench/scene_env.py --steps 10

1. A step of ``toolgym/GameScene-v0`` (code mode, the task's reference, step after step in one
   episode, success switched off so that every step is a real one at the cheap tier) beside the
   tool's own work for that step in this process, alternating one and the other: the script run
   on the level, then what the verifier must simulate, nothing else (no sandbox, no checks, no
   views). A layout or physics step: the scene the script built, rebuilt and simulated for the
   cheap tier's seconds. A logic step: the cheap tier's held-out paths, each on a fresh copy of
   the level with the script run on it and the player walked through it. Medians, the 90th
   percentile of the step, and the ratio. Targets (issue 40): a layout step ≤ 2× its settling
   simulation, a logic step ≤ 3× its plays. Tasks: ``scene-curated/dining-four`` (layout, 1 s
   settling), ``scene-curated/dominoes-twelve`` (physics, 5 s), ``scene-curated/door-zone-centre``
   (logic, 2 paths × 6 s).
2. Bullet steps/s on one scene (12 dominoes, a ball, a stack of 4 crates, a room), 5 s
   simulated (300 frames × 2 substeps): raw ``panda3d.bullet`` in this process (the runtime's
   ``World`` and a bare ``BulletWorld`` loop) against the same scene simulated by the trusted
   sandbox session's ``simulate`` request (with its sampling and the message back), interleaved
   run by run; medians.
3. A logic task's verification at the cheap tier (``played``: replay in a fresh logic session,
   two held-out paths on the trusted host) on ``scene-curated/door-zone-centre``, for the same
   door written three ways: declarative (``bind``: no stops), a trigger callback (a stop when the
   player enters or leaves), an ``on_update`` callback (a stop every frame: 360 per path). The
   per-stop figure is the difference to the declarative run over the number of stops.

The machines this runs on are shared and noisy (2 cores): the ratios, measured side by side in
one run, are the evidence; absolute times are only a rough guide.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import gymnasium as gym
import numpy as np

import toolgym  # noqa: F401 - registers toolgym/GameScene-v0
from toolgym.envs.scene.families import Spec, spec_for
from toolgym.envs.scene.runtime import World
from toolgym.envs.scene.tools import Tools
from toolgym.envs.scene.verification import CHEAP_PATHS, TrustedSimulator, merged, played, sanitize
from toolgym.envs.tasks.suites import get_task

SIM_SECONDS = 5.0
LOGIC_TASK = "scene-curated/door-zone-centre"
ZONE = "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8)"
DOORS = {  # the same door, three ways; stops per path on the cheap tier's two paths
    "declarative bind (0 stops)": f"{ZONE})\nworld.bind('zone_1', 'enter', 'open', 'door_1')\n",
    "trigger callback (2 stops a path)": (
        f"{ZONE}, on_enter=lambda w, t, other: w.open('door_1') if other == 'player' else None)\n"
    ),
    "on_update callback (360 stops a path)": (
        "def update(world, dt):\n"
        "    x, y, _ = world.get('player').pos\n"
        "    if abs(x) < 1.0 and abs(y) < 1.0:\n"
        "        world.open('door_1')\n"
        "world.on_update(update)\n"
    ),
}


STEP_TASKS = (  # (label, task, target ratio of a step to the tool's own work or None)
    ("layout", "scene-curated/dining-four", 2.0),
    ("physics (5 s)", "scene-curated/dominoes-twelve", None),
    ("logic (2 paths)", "scene-curated/door-zone-centre", 3.0),
)


def _level_world(spec: Spec) -> World:
    world = World.build(spec.level)
    for obj in world.objects.values():
        obj.level = True
    return world


def _run_script(world: World, script: str) -> None:
    namespace = {"world": world, "scene": world.root, "result": world, "tools": Tools()}
    exec(compile(script, "<step>", "exec"), namespace)


def tool_work_seconds(spec: Spec, script: str) -> float:
    """The tool's own work for one cheap-tier step of ``spec``'s task, in this process (see 1.)."""
    started = time.perf_counter()
    if spec.kind == "logic":
        for path in spec.trajectories[:CHEAP_PATHS]:
            world = _level_world(spec)
            _run_script(world, script)
            world.player_path(path["path"], path["speed"], waits=path.get("waits", ()))
            world.run(spec.seconds)
    else:
        world = _level_world(spec)
        _run_script(world, script)
        World.build(merged(spec, sanitize(world.describe()))).run(spec.cheap_seconds)
    return time.perf_counter() - started


def step_and_work_times(task_id: str, steps: int) -> tuple[list[float], list[float]]:
    """Seconds of each env step and of the tool's own work for it, alternating."""
    env = gym.make("toolgym/GameScene-v0", task=task_id, max_steps=steps + 1)
    env.unwrapped._succeeded = lambda report: False  # every step is a real one
    task = get_task(task_id)
    spec, script = spec_for(task.parameters), "tools.clear(world)\n" + task.reference
    try:
        env.reset(seed=0)
        env.step(script)  # warm: the trusted sessions start
        tool_work_seconds(spec, script)
        step, work = [], []
        for _ in range(steps):
            started = time.perf_counter()
            *_, info = env.step(script)
            step.append(time.perf_counter() - started)
            assert "error" not in info, info.get("error")
            assert info["report"]["score"] >= 0.99, info["report"]
            # The simulator's return to its clean state runs on after the step (it overlaps what
            # the caller does next); it is let finish before the tool's work is timed.
            env.unwrapped.simulator.session  # noqa: B018 - waits for that return
            work.append(tool_work_seconds(spec, script))
        return step, work
    finally:
        env.close()


def bench_scene() -> World:
    world = World(seed=0)
    world.make_room(8, 8)
    world.spawn("ball", (0, -3.0, 0.15), velocity=(0, 2, 0))
    for k in range(12):
        world.spawn("domino", (0, -2 + 0.27 * k, 0.2))
    for k in range(4):
        world.spawn("crate", (2.5, 0, 0.25 + 0.5 * k))
    return world


def raw_bullet_seconds(world: World) -> float:
    """A bare ``do_physics`` loop on the world's Bullet world: no frame logic, no sampling."""
    frames = round(SIM_SECONDS / world.dt)
    started = time.perf_counter()
    for _ in range(frames):
        world.bullet.do_physics(world.dt, world.substeps, world.dt / world.substeps)
    return time.perf_counter() - started


def runtime_seconds(world: World) -> float:
    started = time.perf_counter()
    world.run(SIM_SECONDS)
    return time.perf_counter() - started


def logic_times(runs: int) -> dict[str, float]:
    """Median seconds of a cheap-tier logic verification (two paths), per way of writing it."""
    spec = spec_for(get_task(LOGIC_TASK).parameters)
    simulator = TrustedSimulator()
    times: dict[str, list[float]] = {label: [] for label in DOORS}
    try:
        simulator.simulate(spec.level, 0.1)  # warm
        for _ in range(runs):
            for label, script in DOORS.items():
                started = time.perf_counter()
                plays, why = played(spec, [("code", script)], "cheap", simulator)
                times[label].append(time.perf_counter() - started)
                assert why is None and len(plays) == 2, why
    finally:
        simulator.close()
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--logic-only", action="store_true", help="only the logic figures (3.)")
    args = parser.parse_args()
    print(f"# {platform.node()}: {os.cpu_count()} CPUs, {platform.python_version()}")
    if not args.logic_only:
        step_and_bullet_figures(args)
    logic_figures(args.runs)


def step_and_bullet_figures(args: argparse.Namespace) -> None:
    print(f"A step beside the tool's own work, medians of {args.steps} alternating runs:")
    for label, task_id, target in STEP_TASKS:
        step, work = step_and_work_times(task_id, args.steps)
        ratio = statistics.median(step) / statistics.median(work)
        verdict = (
            ""
            if target is None
            else f" (target ≤ {target:g}×: {'PASS' if ratio <= target else 'MISS'})"
        )
        print(
            f"  {label}, {task_id}: step {statistics.median(step) * 1e3:.1f} ms "
            f"(p90 {np.percentile(step, 90) * 1e3:.1f}), tool's own work "
            f"{statistics.median(work) * 1e3:.1f} ms: {ratio:.2f}×{verdict}"
        )

    description = bench_scene().describe()
    simulator = TrustedSimulator()
    raw, runtime, sandboxed = [], [], []
    try:
        simulator.simulate(description, 0.1)  # warm
        for _ in range(args.runs):
            raw.append(raw_bullet_seconds(World.build(description)))
            runtime.append(runtime_seconds(World.build(description)))
            started = time.perf_counter()
            simulator.simulate(description, SIM_SECONDS)
            sandboxed.append(time.perf_counter() - started)
    finally:
        simulator.close()
    world = World.build(description)
    bullet_steps = round(SIM_SECONDS / world.dt) * world.substeps
    print(
        f"Bullet, {len(description['objects'])} bodies and a room, {SIM_SECONDS:g} s simulated "
        f"({bullet_steps} Bullet steps), medians of {args.runs} interleaved runs:"
    )
    for label, runs in (
        ("raw panda3d.bullet do_physics loop, in-process", raw),
        ("scene runtime World.run, in-process", runtime),
        ("trusted sandbox session simulate (sampled, sent back)", sandboxed),
    ):
        median = statistics.median(runs)
        print(
            f"  {label}: {median * 1e3:.1f} ms, {bullet_steps / median:,.0f} Bullet steps/s, "
            f"{median / statistics.median(raw):.2f}× raw"
        )


def logic_figures(runs: int) -> None:
    logic = logic_times(runs)
    base = logic["declarative bind (0 stops)"]
    print(f"Logic verification, {LOGIC_TASK}, cheap tier (2 paths), medians of {runs}:")
    for label, median in logic.items():
        stops = 2 * int(label.split("(")[1].split()[0])
        per_stop = f", {(median - base) / stops * 1e3:.2f} ms a stop" if stops else ""
        print(f"  {label}: {median * 1e3:.0f} ms{per_stop}")


if __name__ == "__main__":
    main()
