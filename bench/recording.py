"""Recording benchmark: what ``RecordEpisodes`` adds to a step of the CadQuery environment, at its
default settings (views as PNG, the final part exported as STEP, every line written).

Run::

    python bench/recording.py                    # 12 episode pairs of 4 steps, procedural suite
    python bench/recording.py --episodes 6 --suite curated

Each episode plays three random tool calls (written as code, as the random agent does) and then
the task's reference script, which usually ends the episode at step 4 with the exact verifier;
otherwise it is cut at ``max_steps=4``. Every episode is played twice, once recorded and once
not, interleaved, with the same task, seed and actions.

1. The recorder's own time (``RecordEpisodes.recording_s``: writing lines, encoding PNGs, the
   final export, ``meta.json``), per step, over the recorded episodes' mean step time. This is
   the figure the target applies to: ≤ 10 %.
2. Its split: the final part's export (one sandbox request per episode) and the rest.
3. Side by side: the median over pairs of (recorded episode's step time / plain episode's) - 1.
   On a shared, noisy machine this scatters by more than the effect; read it as a cross-check.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import toolgym  # noqa: F401 - registers toolgym/CadQuery-v0
from toolgym.agents.baselines import RandomAgent
from toolgym.envs.recording.recorder import RecordEpisodes

STEPS = 4
TARGET = 0.10


def play(env: gym.Env, actions: list[str], seed: int, task: str) -> tuple[float, int]:
    """Seconds spent in ``step`` over the episode, and steps taken."""
    env.reset(seed=seed, options={"task": task})
    spent, taken = 0.0, 0
    for action in actions:
        started = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        spent += time.perf_counter() - started
        taken += 1
        if terminated or truncated:
            break
    return spent, taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=12)
    parser.add_argument("--suite", default="procedural")
    args = parser.parse_args()
    plain = gym.make("toolgym/CadQuery-v0", suite=args.suite, max_steps=STEPS)
    inner = gym.make("toolgym/CadQuery-v0", suite=args.suite, max_steps=STEPS)
    folder = Path(tempfile.mkdtemp(prefix="toolgym-bench-recording-"))
    recorded = RecordEpisodes(inner, folder)
    tasks = plain.unwrapped.tasks
    agent = RandomAgent(plain.unwrapped.registry, "code", seed=0)
    export_s = 0.0
    export = inner.unwrapped.export

    def timed_export(*a, **k):  # the recorder's call of the env's export, timed
        nonlocal export_s
        started = time.perf_counter()
        try:
            return export(*a, **k)
        finally:
            export_s += time.perf_counter() - started

    inner.unwrapped.export = timed_export
    try:
        play(plain, [agent.act({})], 0, tasks[0].id)  # warm both (zygotes, first renders)
        play(recorded, [agent.act({})], 0, tasks[0].id)
        recorded.recording_s, export_s = 0.0, 0.0
        ratios, recorded_s, recorded_steps = [], 0.0, 0
        for k in range(args.episodes):
            task = tasks[(k * 7) % len(tasks)]
            actions = [agent.act({}) for _ in range(STEPS - 1)] + [task.reference]
            pair = {}
            for name, env in (("plain", plain), ("recorded", recorded))[:: 1 if k % 2 else -1]:
                pair[name] = play(env, actions, seed=k, task=task.id)
            (plain_s, plain_n), (rec_s, rec_n) = pair["plain"], pair["recorded"]
            ratios.append((rec_s / rec_n) / (plain_s / plain_n) - 1)
            recorded_s, recorded_steps = recorded_s + rec_s, recorded_steps + rec_n
    finally:
        plain.close()
        recorded.close()
    step_s = recorded_s / recorded_steps
    per_step = recorded.recording_s / recorded_steps
    print(
        f"Command: python bench/recording.py --episodes {args.episodes} --suite {args.suite}; "
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the end\n"
    )
    print("| metric | value | target |")
    print("|---|---|---|")
    print(
        f"| episodes (recorded + plain), steps recorded | {args.episodes} + {args.episodes}, "
        f"{recorded_steps} | |"
    )
    print(f"| mean step, recorded (the wrapper's time included) | {step_s * 1000:.1f} ms | |")
    share = per_step / step_s
    verdict = "PASS" if share <= TARGET else "FAIL"
    print(
        f"| recorder's own time per step | {per_step * 1000:.2f} ms ({share:.1%} of a step) "
        f"| ≤ {TARGET:.0%}: {verdict} |"
    )
    print(
        f"| of which the final part's export | {export_s / recorded_steps * 1000:.2f} ms per "
        f"step ({export_s / args.episodes * 1000:.1f} ms per episode) | |"
    )
    print(
        f"| side by side: median (recorded / plain step time) - 1 | "
        f"{statistics.median(ratios):+.1%} (quartiles "
        f"{statistics.quantiles(ratios, n=4)[0]:+.1%}, "
        f"{statistics.quantiles(ratios, n=4)[2]:+.1%}) | |"
    )
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    print(f"| disk per recorded episode | {size / (args.episodes + 1) / 1024:.0f} kB | |")


if __name__ == "__main__":
    main()
