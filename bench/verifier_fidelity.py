"""Verifier fidelity: near misses rejected, remodellings accepted, and score sweeps without cliffs.

Run::

    python bench/verifier_fidelity.py                 # every curated task, 2 seeds per family
    python bench/verifier_fidelity.py --seeds 1 --plot bench/score_sweeps.png

1. Near misses (``toolgym.envs.cadquery.verifier_suites``): for every curated task, its reference
   stretched by max(1 mm, 10 %) and each kind of curved face defeatured away; for every procedural
   family, each parameter moved by max(1 mm, 10 %) or a count by one. Each goes through the exact
   tier's path (BREP, measured in a fresh session, B-Rep cross-check). Target: 100 % rejected.
2. Equivalent remodellings: the same part built two ways. Target: 100 % accepted.
3. Score sweeps: a sphere's radius, a box's offset and a hole's diameter, 1.00 to 1.30 of the
   reference in 1 % steps, at both tiers. Target: monotone, no drop over 0.15 between neighbours.
   ``--plot`` draws them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cadquery as cq
import numpy as np
from PIL import Image, ImageDraw

from toolgym.envs.cadquery import verifier_suites
from toolgym.envs.cadquery.artifacts import part_from_shape
from toolgym.envs.cadquery.families import FAMILIES
from toolgym.envs.tasks.suites import get_suite
from toolgym.verifiers.cad import verify_part

SWEEPS = {
    "sphere radius": lambda r: cq.Workplane().sphere(r),
    "box offset": lambda x: cq.Workplane().box(10, 10, 10).translate((x - 10, 0, 0)),
    "hole diameter": lambda d: cq.Workplane().box(30, 30, 10).faces(">Z").workplane().hole(d),
}
SWEEP_STARTS = {"sphere radius": 1.0, "box offset": 10.0, "hole diameter": 10.0}


def near_miss_rate(seeds: int) -> tuple[int, int, list[str]]:
    """(rejected, total, the ones that passed) over the curated and procedural near misses."""
    rejected, total, passed = 0, 0, []
    cases = [
        (task.id, verifier_suites.near_miss_reports(task)) for task in get_suite("curated").tasks
    ]
    for family in FAMILIES.values():
        for seed in range(seeds):
            task = family.task(seed, "train")
            cases.append((task.id, verifier_suites.parameter_near_miss_reports(family, task)))
    for task_id, reports in cases:
        for description, report in reports:
            total += 1
            if report.passed or report.score is None:
                passed.append(f"{task_id}: {description}")
            else:
                rejected += 1
    return rejected, total, passed


def sweep(name: str, tier: str) -> list[float]:
    make, start = SWEEPS[name], SWEEP_STARTS[name]
    reference = part_from_shape(make(start).val())
    values = [start * (1 + 0.01 * i) for i in range(31)]
    return [verify_part(part_from_shape(make(v).val()), reference, tier=tier).score for v in values]


def plot(curves: dict[str, list[float]], path: Path) -> None:
    """Score against the step (0 to 30 %), one line per sweep and tier."""
    width, height, margin = 640, 400, 40
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([margin, margin, width - margin, height - margin], outline="black")
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for index, (label, scores) in enumerate(curves.items()):
        xs = np.linspace(margin, width - margin, len(scores))
        ys = height - margin - np.asarray(scores) * (height - 2 * margin)
        draw.line(list(zip(xs, ys, strict=True)), fill=colours[index % 6], width=2)
        legend_top = height - margin - 14 * len(curves) - 8  # below the curves, which fall slowly
        draw.text((width // 2, legend_top + 14 * index), label, fill=colours[index % 6])
    draw.text((margin, height - margin + 8), "0 %", fill="black")
    draw.text((width - margin - 24, height - margin + 8), "30 %", fill="black")
    draw.text((4, margin - 6), "1.0", fill="black")
    draw.text((4, height - margin - 6), "0.0", fill="black")
    draw.text((width // 2 - 60, 12), "score against the step, 1 % each", fill="black")
    image.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2, help="procedural seeds per family")
    parser.add_argument("--plot", type=Path, default=None, help="write the sweeps as a PNG")
    args = parser.parse_args()

    started = time.perf_counter()
    rejected, total, passed = near_miss_rate(args.seeds)
    near_miss_s = time.perf_counter() - started
    accepted = [verifier_suites.remodelling_report(r).passed for r in verifier_suites.REMODELLINGS]
    curves = {
        f"{name}, {tier}": sweep(name, tier) for name in SWEEPS for tier in ("cheap", "exact")
    }
    if args.plot:
        plot(curves, args.plot)

    print("| measure | figure | target |\n|---|---|---|")
    print(
        f"| near misses rejected | {rejected} / {total} ({rejected / total:.0%}, "
        f"{near_miss_s:.0f} s) | 100 %: {verdict(rejected == total)} |"
    )
    print(
        f"| equivalent remodellings accepted | {sum(accepted)} / {len(accepted)} "
        f"| 100 %: {verdict(all(accepted))} |"
    )
    for label, scores in curves.items():
        steps = np.diff(scores)
        smooth = steps.max() <= 1e-3 and -steps.min() <= 0.15
        print(
            f"| sweep {label}: score at 0 / 10 / 30 %, largest drop per 1 % "
            f"| {scores[0]:.3f} / {scores[10]:.3f} / {scores[30]:.3f}, {-steps.min():.3f} "
            f"| monotone, ≤ 0.15: {verdict(smooth)} |"
        )
    for line in passed:
        print(f"passed, but should not have: {line}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


if __name__ == "__main__":
    main()
