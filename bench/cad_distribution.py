"""The CAD task distribution's figures: its breadth, what each split holds out, what a task costs
to generate, and the real verifier's verdicts on every family.

Run::

    python bench/cad_distribution.py                 # everything, one seed per split (minutes)
    python bench/cad_distribution.py --no-verify     # the cheap figures only (seconds)

Prints one block of figures for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

from toolgym.envs.cadquery.domain import FAMILIES_BY_SUITE
from toolgym.envs.cadquery.families import FAMILIES, HELD_OUT_FAMILIES
from toolgym.envs.cadquery.families.phrases import HELD_OUT_STYLES, TRAIN_STYLES, skeleton
from toolgym.envs.tasks.suites import get_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from cad_families import check_family, shared_wording


def breadth() -> None:
    tiers = collections.Counter(f.tier for f in FAMILIES.values())
    features = {x for f in FAMILIES.values() for x in f.features}
    tools = {t for f in FAMILIES.values() for t in f.operations()}
    print(
        f"families: {len(FAMILIES)} (tiers {dict(sorted(tiers.items()))}), "
        f"{len(features)} features, {len(tools)} tools used, "
        f"held out: {len(HELD_OUT_FAMILIES)}"
    )
    for suite in FAMILIES_BY_SUITE:
        found = get_suite(suite)
        print(f"  {suite}: {len(found.split('train'))} train / {len(found.split('test'))} test")
    curated = get_suite("curated")
    print(
        f"curated: {len(curated.tasks)} parts ({len(curated.split('test'))} test), "
        f"{sum(bool(t.tool_calls) for t in curated.tasks)} with tool calls"
    )


def wording() -> None:
    """Distinct sentence forms (numbers and units masked) of the training prompts, and the
    held-out styles' overlap with them."""
    train, held, prompts = set(), set(), 0
    for family in FAMILIES.values():
        for seed in range(10):
            for style in TRAIN_STYLES:
                train.update(skeleton(family.task(seed, "train", style=style).prompt))
                prompts += 1
            for style in HELD_OUT_STYLES:
                held.update(skeleton(family.task(seed, "test", style=style).prompt))
    shared = sum(len(shared_wording(name)) for name in FAMILIES)
    print(
        f"wording: {prompts} training prompts use {len(train)} sentence forms; "
        f"held-out styles {len(held)} forms, {len(train & held)} shared "
        f"(per-family check: {shared})"
    )
    primitive = {
        s for seed in range(200) for s in skeleton(FAMILIES["primitive"].task(seed).prompt)
    }
    print(f"  (the primitives' 200 spec prompts alone: {len(primitive)} sentence forms)")


def cost() -> None:
    times = []
    for family in FAMILIES.values():
        for seed in range(20):
            start = time.process_time()
            family.task(seed, "test", style="metric")
            family.edit_task(seed, "test")
            times.append((time.process_time() - start) / 2)
    print(
        f"generation: median {statistics.median(times) * 1e3:.3f} ms, "
        f"max {max(times) * 1e3:.3f} ms per task (bound: 50 ms)"
    )


def verdicts() -> None:
    counts: dict[str, list[bool]] = collections.defaultdict(list)
    scores: dict[str, list[float]] = collections.defaultdict(list)
    started = time.perf_counter()
    for name in FAMILIES:
        for verdict in check_family(name, seeds=1):
            counts[verdict.what].append(verdict.passed)
            scores[verdict.what].append(verdict.score or 0.0)
    for what, passed in counts.items():
        print(
            f"  {what:10} passed {sum(passed)}/{len(passed)}, mean score "
            f"{statistics.mean(scores[what]):.3f}, min {min(scores[what]):.3f}"
        )
    print(f"verifier sweep: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-verify", action="store_true")
    args = parser.parse_args()
    breadth()
    wording()
    cost()
    if not args.no_verify:
        verdicts()
