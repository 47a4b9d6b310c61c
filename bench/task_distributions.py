"""The Blender and game-scene task distributions' figures: breadth by kind and tier, the splits,
what wording the styles use and hold out, what a task costs to generate, and the real
verifier's verdicts on every family (CAD's are ``bench/cad_distribution.py``).

Run::

    python bench/task_distributions.py blender scene              # everything (minutes)
    python bench/task_distributions.py blender scene --no-verify  # the cheap figures (seconds)

Prints one block of figures per tool for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

from toolgym.envs.domains import get_domain
from toolgym.envs.tasks.phrases import skeleton
from toolgym.envs.tasks.suites import get_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from family_checks import check_family, families, held_out, shared_wording, styles


def breadth(domain: str) -> None:
    found = families(domain)
    kinds = collections.Counter(f.kind for f in found.values())
    tiers = collections.Counter(f.task(0, "train").difficulty for f in found.values())
    styled = [n for n, f in found.items() if f.styled]
    print(
        f"families: {len(found)} ({dict(sorted(kinds.items()))}; tiers of seed 0 "
        f"{dict(sorted(tiers.items()))}), {len(styled)} styled, "
        f"{sum(bool(f.edits) for f in found.values())} with edits, held out: "
        f"{', '.join(held_out(domain))}"
    )
    distinct = set()
    for name in get_domain(domain).suites():
        suite = get_suite(name)
        distinct.update((t.prompt, t.reference) for t in suite.tasks)
        print(f"  {name}: {len(suite.split('train'))} train / {len(suite.split('test'))} test")
    print(f"  distinct tasks over every suite: {len(distinct)}")


def wording(domain: str) -> None:
    """Distinct sentence forms (numbers and units masked) of the styled families' training
    prompts, and the held-out styles' overlap with them."""
    train_styles, held_styles = styles(domain)
    train, held, prompts = set(), set(), 0
    found = {n: f for n, f in families(domain).items() if f.styled}
    for family in found.values():
        for seed in range(10):
            for style in train_styles:
                train.update(skeleton(family.task(seed, "train", style=style).prompt))
                prompts += 1
            for style in held_styles:
                held.update(skeleton(family.task(seed, "test", style=style).prompt))
    shared = sum(len(shared_wording(domain, name)) for name in found)
    print(
        f"wording: {prompts} training prompts use {len(train)} sentence forms; "
        f"held-out styles {len(held)} forms, {len(train & held)} shared "
        f"(per-family check, edits included: {shared})"
    )


def cost(domain: str) -> None:
    times = []
    for family in families(domain).values():
        for seed in range(10):
            start = time.process_time()
            family.task(seed, "test")
            if family.edits:
                family.edit_task(seed, "test")
            times.append((time.process_time() - start) / (2 if family.edits else 1))
    print(
        f"generation: median {statistics.median(times) * 1e3:.2f} ms, "
        f"max {max(times) * 1e3:.2f} ms per task (bound: 50 ms)"
    )


def verdicts(domain: str) -> None:
    """One seed per split of every family: reference, tool calls, near miss, start left as it
    is, and each edit's start and its edited reference."""
    counts: dict[str, list[bool]] = collections.defaultdict(list)
    scores: dict[str, list[float]] = collections.defaultdict(list)
    started = time.perf_counter()
    for name in families(domain):
        for verdict in check_family(domain, name, seeds=1):
            counts[verdict.what].append(verdict.passed)
            scores[verdict.what].append(verdict.score or 0.0)
    for what, passed in counts.items():
        print(
            f"  {what:10} passed {sum(passed)}/{len(passed)}, mean score "
            f"{statistics.mean(scores[what]):.3f}, min {min(scores[what]):.3f}, "
            f"max {max(scores[what]):.3f}"
        )
    print(f"verifier sweep: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("domains", nargs="+", choices=["blender", "scene"])
    parser.add_argument("--no-verify", action="store_true")
    args = parser.parse_args()
    for domain in args.domains:
        print(f"## {domain}")
        breadth(domain)
        wording(domain)
        cost(domain)
        if not args.no_verify:
            verdicts(domain)
