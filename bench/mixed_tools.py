"""Cross-tool training: one policy over CAD, Blender and game scenes (`toolgym train --mix`).

Greedy test-split scores per tool before training (the untrained policy) and after behaviour
cloning plus PPO on the mix, and per PPO iteration each tool's training score, its share of the
steps and its share of the sampler's weight. Figures go to ``bench/mixed_tools.json``; the
summary is printed as Markdown for ``bench/RESULTS.md``.

    nice -n 10 .venv/bin/python bench/mixed_tools.py   # a few minutes on 2 quiet cores
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from toolgym.agents.evaluate import evaluate_policy
from toolgym.agents.policy import PolicyConfig
from toolgym.agents.ppo import PPOConfig
from toolgym.agents.train import TrainConfig, Trainer

MIX = "cadquery:primitives,blender:blender-placement,scene:scene-layout"
TOOLS = ("cadquery", "blender", "scene")
# The test tasks take turns between the tools: 20 episodes play 13 CAD tasks, Blender's one
# test task and the scene suite's six (each split in full where it is that small).
EVAL_EPISODES = 20
# Small enough for a few minutes on two busy cores.
POLICY = PolicyConfig(image_size=32, hidden=64, embed=16, prompt_bytes=128, feedback_bytes=32)


def main(out: Path) -> dict:
    config = TrainConfig(
        mix=MIX, steps=int(sys.argv[1]) if len(sys.argv) > 1 else 64, bc_steps=100,
        # max_steps: CAD's two calls; Blender and scenes get their suites' longest references (6).
        bc_episodes=24, num_envs=2, num_steps=8, max_steps=2, view_size=32, out=str(out),
        progress=False, policy=POLICY, ppo=PPOConfig(num_minibatches=2, update_epochs=4),
    )  # fmt: skip
    started, load = time.perf_counter(), os.getloadavg()[0]
    trainer = Trainer(config)
    before = evaluate_policy(trainer.policy, trainer.grammar, config, "test", EVAL_EPISODES)
    trainer.train(resume=False)
    after = evaluate_policy(trainer.policy, trainer.grammar, config, "test", EVAL_EPISODES)
    with (out / "progress.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    keep = ("iteration", "env_steps", "score", "sps", "learner_waits_env", "env_waits_learner")
    result = {
        "mix": MIX, "seconds": time.perf_counter() - started,
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
        "test_episodes": {suite.split("-")[0]: sum(r["task"].startswith(suite + "/")
                                                   for r in after["results"])
                          for suite in ("primitives", "blender-placement", "scene-layout")},
        "test_before": before["tools"], "test_after": after["tools"],
        "iterations": [
            {k: float(v) for k, v in row.items()
             if k in keep or k.split("_")[0] in ("score", "share", "weight")}
            for row in rows
        ],
    }  # fmt: skip
    return result


def markdown(result: dict) -> str:
    lines = [
        f"Mix `{result['mix']}`, {result['seconds'] / 60:.1f} min in all, load average "
        f"{result['load'][0]:g} at the start and {result['load'][1]:g} at the end; test episodes "
        f"per tool: {result['test_episodes']}.",
        "",
        "| tool | test score, untrained | test score, trained |",
        "|---|---|---|",
    ]
    for tool in TOOLS:
        before, after = result["test_before"].get(tool), result["test_after"].get(tool)
        lines.append(f"| {tool} | {before:.3f} | {after:.3f} |")
    lines += ["", "| iteration | " + " | ".join(
        f"{tool} score / share / weight" for tool in TOOLS) + " |",
        "|---|" + "---|" * len(TOOLS)]  # fmt: skip
    for row in result["iterations"]:
        cells = [
            f"{row[f'score_{t}']:.3f} / {row[f'share_{t}']:.2f} / {row[f'weight_{t}']:.2f}"
            for t in TOOLS
        ]
        lines.append(f"| {int(row['iteration'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        result = main(Path(folder))
    path = Path(__file__).with_name("mixed_tools.json")
    path.write_text(json.dumps(result, indent=2))
    print(markdown(result))
