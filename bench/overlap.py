"""Who waits for whom: the trainer in turns, the trainer overlapped (``--overlap``), and SB3's PPO,
side by side in one run on the same envs (CadQuery ``primitives`` in tool mode, the cheap final
tier, two ``forkserver`` workers, 2 x 8 steps an iteration, 4 epochs of 2 minibatches).

Per run: steps per second and the share of each iteration the envs sit idle and the learner
waits for them, over the iterations after the first (which starts the sandboxes). Each run is a
process of its own with a new, empty reference cache (``toolgym.envs.episode.cache``): every run
starts cold, and none plays tasks another built. Figures go to
``bench/overlap.json`` and are printed as Markdown for ``bench/RESULTS.md``.

    nice -n 10 .venv/bin/python bench/overlap.py [iterations]   # about 3 min per run, 2 cores
    nice -n 10 .venv/bin/python bench/overlap.py 3 --warm       # a warm cache: runs played twice
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.train import TrainConfig, Trainer

ITERATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
NUM_ENVS, NUM_STEPS, MAX_STEPS, VIEW = 2, 8, 2, 32


def ours(overlap: bool) -> dict:
    with tempfile.TemporaryDirectory() as out:
        return _ours(overlap, Path(out))


def _ours(overlap: bool, folder: Path) -> dict:
    config = TrainConfig(
        suite="primitives",
        steps=ITERATIONS * NUM_ENVS * NUM_STEPS,
        num_envs=NUM_ENVS,
        num_steps=NUM_STEPS,
        max_steps=MAX_STEPS,
        view_size=VIEW,
        out=str(folder),
        progress=False,
        overlap=overlap,
        ppo=PPOConfig(num_minibatches=2, update_epochs=4),
    )
    Trainer(config).train(resume=False)
    with (folder / "progress.csv").open() as handle:
        rows = list(csv.DictReader(handle))[1:]
    seconds = sum(float(r["seconds"]) for r in rows)
    return {
        "sps": len(rows) * NUM_ENVS * NUM_STEPS / seconds,
        "envs_idle": float(np.mean([float(r["env_waits_learner"]) for r in rows])),
        "learner_waits": float(np.mean([float(r["learner_waits_env"]) for r in rows])),
    }


def sb3() -> dict:
    import gymnasium as gym
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnvWrapper

    import toolgym  # noqa: F401 - registers the environments

    class Timed(VecEnvWrapper):
        """The time the workers are busy: from ``step_async`` to ``step_wait``'s return."""

        busy = 0.0

        def reset(self):
            return self.venv.reset()

        def step_async(self, actions):
            self.sent = time.perf_counter()
            self.venv.step_async(actions)

        def step_wait(self):
            result = self.venv.step_wait()
            Timed.busy += time.perf_counter() - self.sent
            return result

    class Iterations(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.starts: list[tuple[float, float]] = []

        def _on_rollout_start(self) -> None:
            self.starts.append((time.perf_counter(), Timed.busy))

        def _on_step(self) -> bool:
            return True

    def make():
        # Like for like: the trainer's env settings, its cheap final tier included.
        return gym.make(
            "toolgym/CadQuery-Std-v0",
            suite="primitives",
            max_steps=MAX_STEPS,
            view_size=VIEW,
            final_tier="cheap",
        )

    env = Timed(SubprocVecEnv([make] * NUM_ENVS, start_method="forkserver"))
    model = PPO(
        "MultiInputPolicy",
        env,
        n_steps=NUM_STEPS,
        batch_size=NUM_STEPS,
        n_epochs=4,
        seed=0,
        device="cpu",
    )
    timing = Iterations()
    model.learn(total_timesteps=(ITERATIONS + 1) * NUM_ENVS * NUM_STEPS, callback=timing)
    env.close()
    # Iterations after the first: from one rollout's start to the next's.
    (t0, b0), (t1, b1) = timing.starts[1], timing.starts[-1]
    count = len(timing.starts) - 2
    return {
        "sps": count * NUM_ENVS * NUM_STEPS / (t1 - t0),
        "envs_idle": 1 - (b1 - b0) / (t1 - t0),
        "learner_waits": (b1 - b0) / (t1 - t0),
    }


RUNS = {
    "trainer, in turns": lambda: ours(False),
    "trainer, overlapped": lambda: ours(True),
    "SB3 PPO (StandardSpaces)": lambda: sb3(),
}


def main(warm: bool = False) -> dict:
    """Each run in its own process with its own new, empty reference cache (so no run finds
    references another built), with the 1-minute load average before and after. ``warm``:
    each run is played twice in its cache and the second is measured (the same seeds play the
    same tasks: every reference is on disk, as in a long run)."""
    result = {}
    for name in RUNS:
        with tempfile.TemporaryDirectory() as cache:
            for _ in range(2 if warm else 1):
                before = os.getloadavg()[0]
                done = subprocess.run(
                    [sys.executable, __file__, str(ITERATIONS), "--run", name],
                    check=True,
                    env={**os.environ, "TOOLGYM_CACHE_DIR": cache},
                    capture_output=True,
                    text=True,
                )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
        result[name] = {**figures, "load": [round(before, 1), round(os.getloadavg()[0], 1)]}
    return result


if __name__ == "__main__":
    if "--run" in sys.argv:
        print(json.dumps(RUNS[sys.argv[sys.argv.index("--run") + 1]]()))
        sys.exit()
    started, warm = time.perf_counter(), "--warm" in sys.argv
    result = main(warm)
    name = "overlap_warm.json" if warm else "overlap.json"
    Path(__file__).with_name(name).write_text(json.dumps(result, indent=2))
    print(f"{ITERATIONS} iterations per run, {time.perf_counter() - started:.0f} s in all\n")
    print("| run | steps/s | envs idle | learner waits for envs | load (1 min) |")
    print("|---|---|---|---|---|")
    for name, r in result.items():
        load = "-".join(f"{x:g}" for x in r["load"])
        print(
            f"| {name} | {r['sps']:.2f} | {r['envs_idle']:.0%} | {r['learner_waits']:.0%} "
            f"| {load} |"
        )
