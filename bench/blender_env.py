"""Blender environment benchmark: what a step costs, where its time goes, and against what.

Run::

    python bench/blender_env.py              # 15 timed steps per task
    python bench/blender_env.py --steps 5
    python bench/blender_env.py --kinds modelling,procedural

Each step sends the task's reference script (real scene work) to ``toolgym/Blender-v0`` in code
mode; modelling scripts first delete what the last one built, so every step does the same work,
and modelling and procedural steps then move one object by an amount no other step uses, so each
step changes the scene (the verifier keeps the shells of objects a step left unchanged, as an
agent's step mostly leaves them).
Success is switched off and ``max_steps`` is above the steps run, so no episode ends.

1. Step time (median) per task kind, with the trusted extraction, verification and observation:
   placement, shape keys, modelling and procedural (mesh renderer; target ≤ 0.5 s) and material
   and lighting (Cycles renders of four views; target ≤ 2 s). Split: exec (the script in the
   agent's session), save (the ``.blend``, in the agent's session), load and extract (in the
   trusted session, which ran no agent code), its rollback to a clean snapshot, Cycles, verify,
   render (the mesh renderer; Cycles images come with the read).
2. Warm reset with the target cached (target ≤ 0.2 s).
3. The same script in-process: exec'd against the same start scene in this process's own ``bpy``,
   then the same extraction (and for Cycles kinds the same renders), without a sandbox, a save or
   a second process; ratio of the env step over it.
4. BlenderGym's way: a new ``python -c "import bpy; ..."`` process per script that builds the start
   scene, runs the script and extracts (and renders) the state; side by side in the same run.

The machines this runs on are shared and noisy (2 cores): compare the figures of one run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import gymnasium as gym

import toolgym  # noqa: F401 - registers toolgym/Blender-v0
from toolgym.envs.blender import scene as scene_data
from toolgym.envs.tasks.suites import get_task
from toolgym.renderers.mesh_views import DEFAULT_VIEWS

TASKS = {
    "placement": "blender-placement/stack",
    "shape_keys": "blender-shape-keys/all-three",
    "modelling": "blender-modelling/table",
    "procedural": "blender-procedural-curated/rounded-bricks",
    "material": "blender-material/copper-and-jade",
    "lighting": "blender-lighting/key-and-fill",
}
CLEAR = "for _o in list(bpy.data.objects): bpy.data.objects.remove(_o)\n"
PARTS = ("exec", "read_save", "read_load", "read_extract", "read_rollback", "read_cycles",
         "verify", "render")  # fmt: skip
RENDER_KINDS = ("material", "lighting")


# Geometry kinds: each step also moves one object by an amount no other step uses, so every step
# changes the scene as an agent's step does, and the verifier turns that object into shells anew
# (it keeps the shells of objects a step left unchanged).
MOVE = """
_meshes = sorted((o for o in bpy.data.objects if o.type == "MESH"), key=lambda o: o.name)
if _meshes:
    _meshes[0].location.x += {offset}
"""
GEOMETRY_KINDS = ("modelling", "procedural")


def step_script(kind: str, task_id: str, index: int = 0) -> str:
    """Step ``index``'s script: the task's reference (modelling: after deleting what the last
    step built), and for geometry kinds one object moved by an amount of its own."""
    reference = get_task(task_id).reference
    script = CLEAR + reference if kind == "modelling" else reference
    if kind in GEOMETRY_KINDS:
        script += MOVE.format(offset=0.001 * (index + 1))
    return script


def bench_env(kind: str, task_id: str, steps: int) -> dict[str, float]:
    env = gym.make("toolgym/Blender-v0", task=task_id, max_steps=steps + 2, timings_in_info=True)
    env.unwrapped._succeeded = lambda report: False  # every step is a real one
    try:
        env.reset(seed=0)  # builds and caches the target
        resets = []
        for _ in range(5):
            started = time.perf_counter()
            env.reset(seed=0)
            resets.append(time.perf_counter() - started)
        env.reset(seed=0)
        walls, parts = [], {p: [] for p in PARTS}
        for index in range(steps):
            script = step_script(kind, task_id, index)
            started = time.perf_counter()
            _, _, _, _, info = env.step(script)
            walls.append(time.perf_counter() - started)
            assert "error" not in info, info["error"]
            for p in PARTS:
                parts[p].append(info["timings"].get(p, 0.0))
        out = {"step": statistics.median(walls), "reset": statistics.median(resets)}
        out |= {p: statistics.median(v) for p, v in parts.items()}
        return out
    finally:
        env.close()


def bench_in_process(kind: str, task_id: str, steps: int, view_size: int = 64) -> float:
    """Median seconds of exec + extraction (+ Cycles renders) in this process's own bpy."""
    import bpy

    from toolgym.envs.blender.tools import Tools
    from toolgym.envs.blender.verification import SceneReader, framed_bounds

    task = get_task(task_id)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    namespace = {"bpy": bpy, "tools": Tools()}
    exec(compile(task.start, "<start>", "exec"), namespace)
    cameras = None
    if kind in RENDER_KINDS:
        reader = SceneReader(view_size)
        try:
            framing = reader.target(task).framing
        finally:
            reader.close()
        directions = [list(v.direction) for v in DEFAULT_VIEWS]
        cameras = scene_data.fixed_cameras(list(framing.center), framing.half_width, directions)
    assert framed_bounds is not None
    times = []
    with tempfile.TemporaryDirectory() as workspace:
        for index in range(steps):
            script = step_script(kind, task_id, index)
            started = time.perf_counter()
            exec(compile(script, "<step>", "exec"), namespace)
            scene_data.scene_state(bpy)
            if cameras is not None:
                # Renders in a throwaway fork, as the env makes them (Blender cannot fork after
                # rendering in-process).
                child = os.fork()
                if child == 0:
                    try:
                        scene_data.render_views(bpy, workspace, cameras, view_size, 16)
                    finally:
                        os._exit(0)
                os.waitpid(child, 0)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


FRESH_PROCESS = """
import sys, time, bpy, tempfile
from toolgym.envs.blender import scene as scene_data
from toolgym.envs.blender.tools import Tools
namespace = {"bpy": bpy, "tools": Tools()}
exec(sys.argv[1], namespace)
exec(sys.argv[2], namespace)
scene_data.scene_state(bpy)
if sys.argv[3]:
    import json
    with tempfile.TemporaryDirectory() as workspace:
        scene_data.render_views(bpy, workspace, json.loads(sys.argv[3]), 64, 16)
"""


def bench_fresh_process(kind: str, task_id: str, steps: int) -> float:
    """Median seconds of BlenderGym's way: a new Python process importing bpy per script."""
    import json

    from toolgym.envs.blender.verification import SceneReader

    task = get_task(task_id)
    cameras = ""
    if kind in RENDER_KINDS:
        reader = SceneReader(64)
        try:
            framing = reader.target(task).framing
        finally:
            reader.close()
        directions = [list(v.direction) for v in DEFAULT_VIEWS]
        cameras = json.dumps(
            scene_data.fixed_cameras(list(framing.center), framing.half_width, directions)
        )
    times = []
    for index in range(steps):
        started = time.perf_counter()
        script = step_script(kind, task_id, index)
        subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS, task.start, script, cameras],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument(
        "--kinds", default=",".join(TASKS), help="comma-separated task kinds to run (default: all)"
    )
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(TASKS))
    if unknown:
        parser.error(f"unknown kinds {', '.join(unknown)}; known: {', '.join(TASKS)}")
    print(
        f"# toolgym/Blender-v0, {platform.machine()}, {os.cpu_count()} cores, "
        f"{args.steps} steps per figure (medians, seconds)\n"
    )
    rows = []
    for kind in kinds:
        task_id = TASKS[kind]
        env = bench_env(kind, task_id, args.steps)
        inproc = bench_in_process(kind, task_id, args.steps)
        fresh = bench_fresh_process(kind, task_id, max(3, args.steps // 3))
        rows.append((kind, task_id, env, inproc, fresh))
    head = (
        "| kind | step | "
        + " | ".join(PARTS)
        + " | warm reset | in-process | ratio | fresh process |"
    )
    print(head)
    print("|" + "---|" * (len(PARTS) + 6))
    for kind, _, env, inproc, fresh in rows:
        cells = " | ".join(f"{env[p]:.3f}" for p in PARTS)
        print(
            f"| {kind} | {env['step']:.3f} | {cells} | {env['reset']:.3f} | {inproc:.3f} | "
            f"{env['step'] / inproc:.1f}× | {fresh:.2f} |"
        )
    print("\ntasks: " + ", ".join(f"{k}: {t}" for k, t, *_ in rows))


if __name__ == "__main__":
    main()
