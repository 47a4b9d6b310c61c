"""What the RGB views can carry at each size: the fixed rules on image-only primitives, per view
size, at the exact tier.

The silhouette rule (``toolgym.envs.cadquery.image_rules.SilhouetteRule``) reads sizes and
places off the pictures alone, to a pixel: the ceiling of a policy that reads the RGB views the
same way. The looking rule (``LookingRule``) reads the same RGB views with the env's ``look``
call (an overview, then a zoom-16 look at each face of the part's box, then the call: at most
eight steps), scored on its whole episode. The depth measure rule beside them reads the env's
depth views (exact extents). All on the same unseen primitives (the primitives' family, fixed
frame, ``prompt_form="image"``), the same seeds as ``make bench-learn``'s image section.

With ``--family plate_holes``: image-only plates with four through-holes (the image-holes
section's test seeds), read by the plate-and-holes rule
(``toolgym.envs.cadquery.hole_rules.PlateHoleRule``) on the task's own views and with looks (a
search of the top face, then looks at the holes), each scored on its whole episode; with
``--family plate_grid_holes`` the same rule on plates with a grid of 4 to 35 holes (a pattern
in the reference, one ``cut_hole`` each here); with ``--family plate_angled_slots`` on plates
with 1 to 4 round-ended slots tilted 10 to 45 degrees from Y (a look at each end of each slot),
and with ``--family slotted_plate`` on 1 to 4 slots along X, up to 128 mm long (a box and two
holes each in the reference, one ``cut_slot`` here).

    .venv/bin/python bench/rgb_ceiling.py                       # 32 to 512 px; 50 tasks
    .venv/bin/python bench/rgb_ceiling.py --sizes 64 128 --tasks 20
    .venv/bin/python bench/rgb_ceiling.py --family plate_holes
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from learn_cadquery import HOLE_STEPS, family_suite

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery.framing import family_framing
from toolgym.envs.cadquery.hole_rules import PlateHoleRule
from toolgym.envs.cadquery.image_rules import LookingRule, MeasureRule, SilhouetteRule


def image_only_env(suite: str, view_size: int, **options: Any) -> gym.Env:
    """CadQuery-v0 on ``suite``'s test split in tool mode, asking by the views alone, with the
    depth views (what the measure rule reads) beside the RGB ones; ``options``: the env's
    others (``max_steps``)."""
    return gym.make(
        "toolgym/CadQuery-v0",
        suite=suite,
        split="test",
        action_mode="tool",
        prompt_form="image",
        depth=True,
        view_size=view_size,
        **options,
    )


def episode_score(env: gym.Env, rule: Any, obs: dict[str, Any]) -> tuple[float, bool]:
    """A rule's whole episode from ``obs``: the final part's score, and whether it passed."""
    while True:
        obs, _, terminated, truncated, info = env.step(rule.act(obs))
        if terminated or truncated:
            report = info.get("final_report") or info.get("report") or {}
            return float(report.get("score", 0.0)), bool(report.get("passed"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128, 256, 512])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--family", choices=["primitive", *HOLE_STEPS], default="primitive")
    args = parser.parse_args()
    suite = family_suite(args.family, 0, args.tasks, Path(tempfile.mkdtemp()), framed=True)
    framing = family_framing(args.family)
    if args.family in HOLE_STEPS:
        rules = {
            "RGB plate-and-holes rule": PlateHoleRule(framing, looks=False),
            "RGB plate-and-holes rule with looks": PlateHoleRule(framing),
        }
        steps = {"max_steps": HOLE_STEPS[args.family]}
    else:
        rules = {
            "RGB silhouette rule": SilhouetteRule(framing),
            "RGB silhouette rule with looks": LookingRule(framing),
            "depth measure rule": MeasureRule(framing),
        }
        steps = {}
    print("| view size (px) | mm per pixel | rule | mean score | success rate | s |")
    print("|---|---|---|---|---|---|")
    for size in args.sizes:
        env = image_only_env(suite, size, **steps)
        for name, rule in rules.items():
            started, scores, passed = time.perf_counter(), [], []
            for k in range(args.tasks):
                task = f"bench-{args.family}-0/test-{k}"
                obs, _ = env.reset(seed=0, options={"task": task})
                if isinstance(rule, LookingRule | PlateHoleRule):  # a whole episode
                    score, success = episode_score(env, rule, obs)
                    scores.append(score)
                    passed.append(success)
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
