"""Cross-tool training: one policy over CAD, Blender and game scenes (`toolgym train --mix`).

Greedy test-split scores per tool before training (the untrained policy) and after behaviour
cloning plus PPO on the mix, and per PPO iteration each tool's training score, its share of the
steps and its share of the sampler's weight. Figures go to ``bench/mixed_tools.json``; the
summary is printed as Markdown for ``bench/RESULTS.md``.

    nice -n 10 .venv/bin/python bench/mixed_tools.py   # 10-20 minutes on 2 busy cores
    nice -n 10 .venv/bin/python bench/mixed_tools.py --steps 64 --bc-steps 100 --bc-episodes 24

The defaults clone more demonstrations, longer (a sampled call must be right often enough for
PPO to learn from), and let PPO move the cloned policy only a little (learning rate 1e-4, no
entropy bonus, the approximate-KL stop), as the CAD families' runs do.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time
from pathlib import Path

from toolgym.agents.trainer.evaluate import evaluate_policy
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.train import TrainConfig, Trainer

MIX = "cadquery:primitives,blender:blender-moves,scene:scene-layout"
TOOLS = ("cadquery", "blender", "scene")
# The test tasks take turns between the tools: 20 episodes play 7 CAD tasks, 7 Blender moves
# and the scene suite's six (its whole test split).
EVAL_EPISODES = 20
# Small enough for a few minutes on two busy cores.
POLICY = PolicyConfig(image_size=32, hidden=64, embed=16, prompt_bytes=128, feedback_bytes=32)


def main(out: Path, args: argparse.Namespace) -> dict:
    ppo = PPOConfig(
        num_minibatches=2,
        update_epochs=4,
        learning_rate=args.lr,
        ent_coef=args.ent_coef,
        target_kl=args.target_kl,
    )
    config = TrainConfig(
        mix=MIX,
        steps=args.steps,
        bc_steps=args.bc_steps,
        bc_episodes=args.bc_episodes,
        # max_steps: CAD's two calls; Blender and scenes get their longest references (3, 6).
        num_envs=2,
        num_steps=args.num_steps,
        max_steps=2,
        view_size=32,
        out=str(out),
        progress=False,
        policy=POLICY,
        ppo=ppo,
    )
    started, load = time.perf_counter(), os.getloadavg()[0]
    trainer = Trainer(config)
    before = evaluate_policy(trainer.policy, trainer.grammar, config, "test", EVAL_EPISODES)
    trainer.train(resume=False)
    after = evaluate_policy(trainer.policy, trainer.grammar, config, "test", EVAL_EPISODES)
    rules = fixed_rules(after["results"])
    with (out / "progress.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    keep = ("iteration", "env_steps", "score", "sps", "learner_waits_env", "env_waits_learner")
    result = {
        "mix": MIX,
        "options": vars(args),
        "seconds": time.perf_counter() - started,
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
        "test_episodes": {
            suite.split("-")[0]: sum(r["task"].startswith(suite + "/") for r in after["results"])
            for suite in ("primitives", "blender-moves", "scene-layout")
        },
        "test_before": before["tools"],
        "test_after": after["tools"],
        "fixed_rules": rules,
        "iterations": [
            {
                k: float(v)
                for k, v in row.items()
                if k in keep or k.split("_")[0] in ("score", "share", "weight")
            }
            for row in rows
        ],
    }
    return result


def fixed_rules(played: list[dict]) -> dict[str, dict[str, float]]:
    """Each tool's fixed rules (``learn_cadquery.TEXT_RULES``: the copy, keyword and template
    rules, nothing learnt) on the test tasks the policy played for that tool, in order."""
    from learn_cadquery import RULES, TEXT_RULES

    from toolgym.envs.domains import get_domain
    from toolgym.envs.tasks.suites import get_suite

    scores: dict[str, dict[str, float]] = {}
    for part in MIX.split(","):
        tool, suite = part.split(":")
        tasks = [r["task"] for r in played if r["task"].startswith(suite + "/")]
        split = [t.id for t in get_suite(suite).split("test")]
        if tasks != split[: len(tasks)]:
            raise SystemExit(f"{tool}: the policy's test tasks are not its suite's first ones")
        longest = max(len(t.tool_calls or ()) for t in get_suite(suite).tasks)
        config = TrainConfig(
            env_id=get_domain(tool).env_id,
            suite=suite,
            num_envs=2,
            max_steps=longest + 1,
            view_size=32,
            progress=False,
        )
        scores[tool] = {
            rule: RULES[rule](config, len(tasks))["test"]["score"] for rule in TEXT_RULES
        }
    return scores


def markdown(result: dict) -> str:
    lines = [
        f"Mix `{result['mix']}`, {result['seconds'] / 60:.1f} min in all, load average "
        f"{result['load'][0]:g} at the start and {result['load'][1]:g} at the end; test episodes "
        f"per tool: {result['test_episodes']}.",
        "",
        "| tool | test score, untrained | test score, trained | copy / keyword / template "
        "rule | trained over the best rule |",
        "|---|---|---|---|---|",
    ]
    for tool in TOOLS:
        before, after = result["test_before"].get(tool), result["test_after"].get(tool)
        rules = result["fixed_rules"][tool]
        cells = " / ".join(f"{rules[r]:.3f}" for r in ("copy", "keyword", "template"))
        lines.append(
            f"| {tool} | {before:.3f} | {after:.3f} | {cells} | "
            f"{after - max(rules.values()):+.3f} |"
        )
    lines += [
        "",
        "| iteration | " + " | ".join(f"{tool} score / share / weight" for tool in TOOLS) + " |",
        "|---|" + "---|" * len(TOOLS),
    ]
    for row in result["iterations"]:
        cells = [
            f"{row[f'score_{t}']:.3f} / {row[f'share_{t}']:.2f} / {row[f'weight_{t}']:.2f}"
            for t in TOOLS
        ]
        lines.append(f"| {int(row['iteration'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=192, help="PPO's env steps")
    parser.add_argument("--num-steps", type=int, default=16, help="calls per env an iteration")
    parser.add_argument("--bc-steps", type=int, default=300)
    parser.add_argument("--bc-episodes", type=int, default=60)
    parser.add_argument("--lr", type=float, default=1e-4, help="PPO's learning rate")
    parser.add_argument("--ent-coef", type=float, default=0.0)
    parser.add_argument("--target-kl", type=float, default=0.02)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = main(Path(folder), options)
    path = Path(__file__).with_name("mixed_tools.json")
    path.write_text(json.dumps(result, indent=2))
    print(markdown(result))
