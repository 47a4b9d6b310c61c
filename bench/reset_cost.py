"""What an env reset costs: a task's first reset in a process (its reference built, or loaded
from the on-disk cache) and a reset of a task already seen, in tool mode as the trainer runs it
(cheap final tier, 32 px views): CadQuery ``primitives``, or (``--env``) Blender's
``blender-moves`` or the game scenes' ``scene-layout``.

Two processes in turn share one new, empty cache folder: the first builds the references (a
cold cache), the second loads them (a warm one). Each resets ``TASKS`` tasks once (after a first
reset that starts the sandbox and is not counted) and then the same tasks again. Figures are
medians in seconds, printed as JSON with the load average.

    nice -n 10 .venv/bin/python bench/reset_cost.py
    nice -n 10 .venv/bin/python bench/reset_cost.py --env blender
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TASKS = 6
ENVS = {  # --env: the env id and the suite
    "cadquery": ("toolgym/CadQuery-v0", "primitives"),
    "blender": ("toolgym/Blender-v0", "blender-moves"),
    "scene": ("toolgym/GameScene-v0", "scene-layout"),
}


def measure(name: str) -> dict:
    import gymnasium as gym

    import toolgym  # noqa: F401 - registers the environments

    env_id, suite = ENVS[name]
    env = gym.make(
        env_id, suite=suite, action_mode="tool", max_steps=2, view_size=32, final_tier="cheap"
    )
    env.reset(seed=0)  # starts the zygote and the session
    first, again = [], []
    for times in (first, again):
        for seed in range(1, TASKS + 1):
            started = time.perf_counter()
            env.reset(seed=seed)
            times.append(time.perf_counter() - started)
    env.close()
    return {
        "first_reset_of_a_task": statistics.median(first),
        "reset_of_a_seen_task": statistics.median(again),
    }


def main(name: str) -> dict:
    result: dict = {"env": name}
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TOOLGYM_CACHE_DIR": folder}
        for run in ("cold cache", "warm cache"):
            load = os.getloadavg()[0]
            done = subprocess.run(
                [sys.executable, __file__, "--one", "--env", name],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            result[run] = {**json.loads(done.stdout), "load": round(load, 1)}
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", choices=list(ENVS), default="cadquery")
    parser.add_argument("--one", action="store_true", help="one process's measurement")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.env)))
    else:
        print(json.dumps(main(args.env), indent=2))
