"""The grammar's quantisation ceiling: the oracle's tool calls snapped to the grammar's bins.

For each task of a suite's split, the reference tool calls are encoded and decoded by the grammar
(bins from the suite's training split, as the trainer builds it) and played in tool mode; the
ceiling is the mean final score. Target: ≥ 0.95 on the primitives suite.

    .venv/bin/python bench/grammar_ceiling.py --suite primitives --split test --max-bins 256 64
    .venv/bin/python bench/grammar_ceiling.py --env toolgym/Blender-v0 --suite blender-placement \
        --max-bins 256
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.train import calls_grammar
from toolgym.envs.suites import get_suite


def ceiling(suite: str, split: str, max_bins: int, env_id: str = "toolgym/CadQuery-v0") -> dict:
    env = gym.make(env_id, suite=suite, split=split, action_mode="tool", max_steps=16)
    registry = env.unwrapped.registry
    train = [c for t in get_suite(suite).split("train") for c in t.tool_calls or ()]
    grammar = calls_grammar(registry, train, max_bins)
    scores = []
    try:
        for task in get_suite(suite).split(split):
            if not task.tool_calls:
                continue
            env.reset(seed=0, options={"task": task.id})
            info: dict = {}
            for call in task.tool_calls:
                _, _, terminated, truncated, info = env.step(
                    grammar.decode_json(grammar.encode(call))
                )
                if terminated or truncated:
                    break
            else:  # all calls played, the part not passed: end the episode to score it exactly
                while "final_report" not in info:
                    _, _, _, _, info = env.step(task.tool_calls[-1])
            scores.append(info["final_report"]["score"])
    finally:
        env.close()
    return {"tasks": len(scores), "mean": float(np.mean(scores)), "min": float(np.min(scores)),
            "vocab": grammar.vocab_size}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="primitives")
    parser.add_argument("--env", default="toolgym/CadQuery-v0", help="the suite's env id")
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-bins", type=int, nargs="+", default=[256, 64])
    args = parser.parse_args()
    print("| max bins | vocabulary | tasks | mean score | min score | target |")
    print("|---|---|---|---|---|---|")
    for bins in args.max_bins:
        r = ceiling(args.suite, args.split, bins, args.env)
        verdict = "PASS" if r["mean"] >= 0.95 else "MISS"
        print(f"| {bins} | {r['vocab']} | {r['tasks']} | {r['mean']:.4f} | {r['min']:.4f} "
              f"| ≥ 0.95: {verdict} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
