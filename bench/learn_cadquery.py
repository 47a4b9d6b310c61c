"""Learning on toolgym/CadQuery-v0 in tool mode: random, PPO from scratch, BC + PPO, SB3 PPO.

At equal environment-step budgets (tool calls; behaviour cloning's oracle episodes are counted
apart), each method trains on the primitives suite's training split and is scored on its test
split (every test task once, greedy calls for the learners). Then BC + PPO on one multi-step
family. Writes the learning curves (training score against steps) to ``--plot`` and every figure
to ``--json``; prints Markdown tables for bench/RESULTS.md.

Targets (full budget, 2-core machine, ≤ 30 min): PPO from scratch ≥ 0.7 mean test score; BC + PPO
≥ 0.9; both clearly above random and at least SB3; trainer SPS ≥ SB3's; on the multi-step family
BC + PPO ≥ 0.6.

    .venv/bin/python bench/learn_cadquery.py                      # the full budget, ~20 min
    .venv/bin/python bench/learn_cadquery.py --steps 256 --bc-steps 100 --family-steps 64

A primitive is one call, so the primitives' episodes are one call long (``max_steps=1``): every
step is a fresh task. The multi-step family (``finished_block`` by default: a block, then its
fillet or chamfer, two calls) gets up to four calls per episode.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.agents.evaluate import evaluate_policy, summarize
from toolgym.agents.policy import PolicyConfig
from toolgym.agents.ppo import PPOConfig
from toolgym.agents.train import TrainConfig, Trainer
from toolgym.envs.cadquery.families import family as get_family

HERE = Path(__file__).resolve().parent


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def family_suite(name: str, train: int, test: int, folder: Path) -> str:
    """A suite file holding ``train`` and ``test`` seeds of one procedural family."""
    fam = get_family(name)
    lines = [f'[suite]\nname = "bench-{name}"\ndomain = "cadquery"\n']
    for split, count in (("train", train), ("test", test)):
        for seed in range(count):
            task = fam.task(seed, split)
            calls = [json.loads(c) for c in task.tool_calls or ()]
            lines.append(
                f'[[task]]\nname = "{split}-{seed}"\nprompt = {json.dumps(task.prompt)}\n'
                f'difficulty = {task.difficulty}\nsplit = "{split}"\n'
                f"parameters = {_toml_value(dict(task.parameters))}\n"
                f"reference = '''\n{task.reference}'''\ntool_calls = {_toml_value(calls)}\n"
            )
    path = folder / f"bench-{name}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return str(path)


def run_trainer(label: str, config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    started = time.perf_counter()
    trainer = Trainer(config, log=lambda line: print(f"  [{label}] {line}", flush=True))
    trainer.train(resume=False)
    seconds = time.perf_counter() - started
    curve = _curve(Path(config.out) / "progress.csv")
    report = evaluate_policy(trainer.policy, trainer.grammar, config, "test", eval_episodes)
    sps = float(np.mean([row["sps"] for row in curve])) if curve else math.nan
    return {
        "method": label,
        "env_steps": trainer.env_steps,
        "bc_env_steps": trainer.bc_env_steps,
        "train_seconds": seconds,
        "sps": sps,
        "curve": curve,
        "test": _short(report),
    }


def _curve(path: Path) -> list[dict[str, float]]:
    import csv

    with path.open() as handle:
        return [
            {
                "env_steps": float(r["env_steps"]),
                "score": float(r["score"] or "nan"),
                "success_rate": float(r["success_rate"] or "nan"),
                "sps": float(r["sps"]),
            }
            for r in csv.DictReader(handle)
        ]


def _short(report: dict[str, Any]) -> dict[str, Any]:
    return {k: report[k] for k in ("episodes", "score", "success_rate", "steps")}


def run_random(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """Uniformly random grammar calls (every token drawn among the allowed ones)."""
    from toolgym.agents.train import build_grammar
    from toolgym.agents.vector import make_vector_env, play_queued
    from toolgym.envs.suites import get_suite

    grammar = build_grammar(config.env_id, config.suite, config.max_bins, config.all_tools)
    rng = np.random.default_rng(config.seed)
    tasks = [t.id for t in get_suite(config.suite).split("test")]
    queue = (
        tasks if eval_episodes is None else [tasks[k % len(tasks)] for k in range(eval_episodes)]
    )
    vec = make_vector_env(
        config.env_id,
        tasks,
        config.num_envs,
        True,
        **dict(config.env_kwargs(evaluation=True), split="test"),
    )
    started, calls = time.perf_counter(), 0

    def choose(obs: dict[str, Any], current: list[str]) -> list[str]:
        nonlocal calls
        calls += len(current)
        return [grammar.decode_json(grammar.sample(rng)) for _ in current]

    try:
        results = play_queued(vec, queue, choose, seed=config.seed)
    finally:
        vec.close()
    sps = calls / (time.perf_counter() - started)
    return {
        "method": "random",
        "env_steps": 0,
        "bc_env_steps": 0,
        "train_seconds": 0.0,
        "sps": sps,
        "curve": [],
        "test": _short(summarize(results, "test")),
    }


def run_sb3(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """SB3's PPO (``MultiInputPolicy``) through ``toolgym.envs.wrappers`` on the same grammar,
    ``num_envs`` subprocess envs, the same step budget."""
    import gymnasium as gym
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv

    import toolgym  # noqa: F401
    from toolgym.agents.train import build_grammar
    from toolgym.envs.suites import get_suite
    from toolgym.envs.wrappers import StandardSpaces

    grammar = build_grammar(config.env_id, config.suite, config.max_bins, config.all_tools)

    def make(split: str):
        def thunk():
            inner = gym.make(
                config.env_id,
                action_mode="tool",
                **dict(config.env_kwargs(evaluation=split == "test"), split=split),
            )
            return StandardSpaces(inner, grammar)

        return thunk

    class Curve(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, float]] = []
            self.scores: list[float] = []
            self.passes: list[bool] = []
            self.started = time.perf_counter()

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                if done and "final_report" in info:
                    self.scores.append(float(info["final_report"].get("score") or 0.0))
                    self.passes.append(bool(info["final_report"].get("passed")))
            return True

        def _on_rollout_end(self) -> None:
            seconds = time.perf_counter() - self.started
            self.rows.append(
                {
                    "env_steps": float(self.num_timesteps),
                    "score": float(np.mean(self.scores)) if self.scores else math.nan,
                    "success_rate": float(np.mean(self.passes)) if self.passes else math.nan,
                    "sps": self.num_timesteps / seconds,
                }
            )
            self.scores, self.passes = [], []

    vec = SubprocVecEnv([make("train")] * config.num_envs, start_method="forkserver")
    started = time.perf_counter()
    model = PPO(
        "MultiInputPolicy",
        vec,
        n_steps=config.num_steps,
        batch_size=32,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    curve = Curve()
    model.learn(total_timesteps=config.steps, callback=curve)
    seconds = time.perf_counter() - started
    vec.close()
    env = make("test")()
    tasks = [t.id for t in get_suite(config.suite).split("test")]
    queue = (
        tasks if eval_episodes is None else [tasks[k % len(tasks)] for k in range(eval_episodes)]
    )
    results = []
    for task in queue:
        obs, _ = env.reset(seed=config.seed, options={"task": task})
        steps = 0
        while True:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                final = info["final_report"]
                results.append(
                    (task, float(final.get("score") or 0.0), bool(final["passed"]), steps)
                )
                break
    env.close()
    return {
        "method": "SB3 PPO",
        "env_steps": model.num_timesteps,
        "bc_env_steps": 0,
        "train_seconds": seconds,
        "sps": model.num_timesteps / seconds,
        "curve": curve.rows,
        "test": _short(summarize(results, "test")),
    }


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, result in enumerate(results):
        colour = f"C{k}"
        curve = result["curve"]
        if curve:
            ax.plot(
                [r["env_steps"] for r in curve],
                [r["score"] for r in curve],
                color=colour,
                label=f"{result['method']} (train)",
            )
        end = curve[-1]["env_steps"] if curve else 0
        ax.scatter(
            [end],
            [result["test"]["score"]],
            color=colour,
            marker="*",
            s=120,
            label=f"{result['method']} (test: {result['test']['score']:.2f})",
        )
    ax.set_xlabel("environment steps (tool calls) of PPO")
    ax.set_ylabel("mean final score")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("toolgym/CadQuery-v0, tool mode: training score per iteration, test score (*)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| method | PPO env steps | BC oracle steps | train time | SPS (train) | test mean "
        "score | test success rate |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        cells = (
            r["method"], str(r["env_steps"]), str(r["bc_env_steps"]),
            f"{r['train_seconds']:.0f} s", f"{r['sps']:.2f}", f"{r['test']['score']:.3f}",
            f"{r['test']['success_rate']:.2f}",
        )  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1024, help="PPO env steps per method")
    parser.add_argument("--bc-steps", type=int, default=200)
    parser.add_argument(
        "--bc-episodes", type=int, default=None, help="oracle episodes; default: every train task"
    )
    parser.add_argument("--family", default="finished_block", help="the multi-step family")
    parser.add_argument("--family-steps", type=int, default=256)
    parser.add_argument("--num-envs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=PPOConfig.learning_rate, help="PPO's")
    parser.add_argument("--ent-coef", type=float, default=PPOConfig.ent_coef, help="PPO's")
    parser.add_argument(
        "--copy-next-bias", type=float, default=PolicyConfig.copy_next_bias,
        help="the pointer's prior for copying in order (0: none)",
    )  # fmt: skip
    parser.add_argument("--eval-episodes", type=int, default=None, help="default: every test task")
    parser.add_argument("--methods", nargs="+", default=["random", "scratch", "bc", "sb3"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", type=Path, default=HERE / "learn_cadquery.png")
    parser.add_argument("--json", type=Path, default=HERE / "learn_cadquery.json")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # the trainer's own setting, for SB3 too (see TrainConfig.threads)
    runs = Path(tempfile.mkdtemp(prefix="toolgym-learn-"))
    base = dict(
        suite="primitives",
        steps=args.steps,
        num_envs=args.num_envs,
        num_steps=32,
        max_steps=1,
        seed=args.seed,
        progress=False,
        ppo=PPOConfig(learning_rate=args.lr, ent_coef=args.ent_coef),
        policy=PolicyConfig(copy_next_bias=args.copy_next_bias),
    )
    load = os.getloadavg()[0]
    print(f"load average at start {load:.1f}, {os.cpu_count()} CPUs; runs in {runs}", flush=True)
    results = []
    for method in args.methods:
        started = time.perf_counter()
        config = TrainConfig(**base, out=str(runs / method))
        if method == "random":
            results.append(run_random(config, args.eval_episodes))
        elif method == "scratch":
            results.append(run_trainer("PPO from scratch", config, args.eval_episodes))
        elif method == "bc":
            config.bc_steps, config.bc_episodes = args.bc_steps, args.bc_episodes
            results.append(run_trainer("BC + PPO", config, args.eval_episodes))
        elif method == "sb3":
            results.append(run_sb3(config, args.eval_episodes))
        r = results[-1]
        print(
            f"{r['method']}: test score {r['test']['score']:.3f}, success "
            f"{r['test']['success_rate']:.2f}, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    family = None
    if args.family_steps:
        suite = family_suite(args.family, train=100, test=20, folder=runs)
        config = TrainConfig(
            **dict(base, suite=suite, steps=args.family_steps, max_steps=4),
            out=str(runs / "family"),
            bc_steps=args.bc_steps,
            bc_episodes=args.bc_episodes,
        )
        family = run_trainer(f"BC + PPO, {args.family}", config, args.eval_episodes)
        print(f"{family['method']}: test score {family['test']['score']:.3f}", flush=True)
    args.json.write_text(
        json.dumps(
            {
                "load_average_at_start": load,
                "args": vars(args) | {"plot": args.plot.name, "json": args.json.name},
                "primitives": results,
                "family": family,
            },
            indent=2,
        )
    )
    plot(results, args.plot)
    print()
    print(table(results))
    if family:
        print()
        print(table([family]))
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
