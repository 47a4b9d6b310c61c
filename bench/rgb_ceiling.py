"""What the RGB views can carry at each size: the fixed rules on image-only primitives, per view
size, at the exact tier.

The silhouette rule (``toolgym.envs.cadquery.image_rules.SilhouetteRule``) reads sizes and
places off the pictures alone, to a pixel: the ceiling of a policy that reads the RGB views the
same way. The looking rule (``LookingRule``) reads the same RGB views with the env's ``look``
call (an overview, then a zoom-16 look at each face of the part's box, then the call: at most
eight steps), scored on its whole episode. The depth measure rule beside them reads the env's
depth views (exact extents). All on the same unseen primitives (the primitives' family, fixed
frame, ``prompt_form="image"``), the same seeds as ``make bench-learn``'s image section.

    .venv/bin/python bench/rgb_ceiling.py                       # 32 to 512 px; 50 tasks
    .venv/bin/python bench/rgb_ceiling.py --sizes 64 128 --tasks 20
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from learn_cadquery import family_suite

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery.framing import family_framing
from toolgym.envs.cadquery.image_rules import LookingRule, MeasureRule, SilhouetteRule


def image_only_env(suite: str, view_size: int) -> gym.Env:
    """CadQuery-v0 on ``suite``'s test split in tool mode, asking by the views alone, with the
    depth views (what the measure rule reads) beside the RGB ones."""
    return gym.make(
        "toolgym/CadQuery-v0",
        suite=suite,
        split="test",
        action_mode="tool",
        prompt_form="image",
        depth=True,
        view_size=view_size,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128, 256, 512])
    parser.add_argument("--tasks", type=int, default=50)
    args = parser.parse_args()
    suite = family_suite("primitive", 0, args.tasks, Path(tempfile.mkdtemp()), framed=True)
    framing = family_framing("primitive")
    rules = {
        "RGB silhouette rule": SilhouetteRule(framing),
        "RGB silhouette rule with looks": LookingRule(framing),
        "depth measure rule": MeasureRule(framing),
    }
    print("| view size (px) | mm per pixel | rule | mean score | success rate | s |")
    print("|---|---|---|---|---|---|")
    for size in args.sizes:
        env = image_only_env(suite, size)
        for name, rule in rules.items():
            started, scores, passed = time.perf_counter(), [], []
            for k in range(args.tasks):
                obs, _ = env.reset(seed=0, options={"task": f"bench-primitive-0/test-{k}"})
                if isinstance(rule, LookingRule):  # its episode, to the exact final score
                    score, done = 0.0, False
                    while not done:
                        obs, reward, terminated, truncated, info = env.step(rule.act(obs))
                        score, done = score + reward, terminated or truncated
                    scores.append(score)
                    passed.append(bool(info["final_report"]["passed"]))
                    continue
                _, reward, _, _, info = env.step(rule.act(obs))
                scores.append(reward)
                passed.append(bool(info.get("report", {}).get("passed")))  # a failed call: none
            pitch = 2 * framing.half_width / size
            print(
                f"| {size} | {pitch:.2f} | {name} | {np.mean(scores):.3f} | "
                f"{np.mean(passed):.2f} | {time.perf_counter() - started:.0f} |",
                flush=True,
            )
        env.close()


if __name__ == "__main__":
    main()
