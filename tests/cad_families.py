"""Checks of one CAD family against the real verifier: what ``tests/test_cad_families.py``
sweeps, and what a family's author runs while writing it::

    .venv/bin/python tests/cad_families.py spur_gear [more families] [--seeds 3] [--module M]
    .venv/bin/python tests/cad_families.py --readme     # the README's family table

(``--module _draft`` adds the families of ``toolgym.envs.cadquery.families._draft``, a draft
module the package does not gather yet.)

For each seed of each split: the reference passes at the exact tier; the same part built from
its tool calls (each call checked by the registry first) passes; the near miss (one feature
removed or moved) fails; an edit task's unchanged start fails and its edited reference passes.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from dataclasses import dataclass

from toolgym.envs.cadquery.families import FAMILIES, HELD_OUT_FAMILIES
from toolgym.envs.cadquery.families.phrases import (
    HELD_OUT_STYLES,
    RECOMBINED_STYLES,
    TRAIN_STYLES,
    skeleton,
)
from toolgym.envs.cadquery.tools import registry
from toolgym.envs.cadquery.verification import verify_script
from toolgym.envs.tasks.model import Task


@dataclass
class Verdict:
    task: str
    what: str
    score: float | None
    passed: bool
    error: str | None = None

    def __str__(self) -> str:
        score = "  n/a" if self.score is None else f"{self.score:.3f}"
        return f"{self.task:40} {self.what:10} {score} {'pass' if self.passed else 'FAIL'} " + (
            self.error or ""
        )


def calls_script(task: Task) -> str:
    """The task's tool calls as a script: each call checked by the registry, then applied."""
    lines = ["result = None"]
    for text in task.tool_calls or ():
        tool, arguments = registry.parse_call(text)
        lines.append(f"result = tools.{tool.name}(result, **{json.dumps(arguments)})")
    return "\n".join(lines) + "\n"


def score(task: Task, script: str, what: str) -> Verdict:
    outcome = verify_script(task, script, f"<{what} {task.id}>")
    report = outcome.report
    if report is None:
        return Verdict(task.id, what, None, False, f"{outcome.kind}: {outcome.error}")
    failed = (
        [k for k, c in report.checks.items() if c.get("ok") is False] if not report.passed else []
    )
    return Verdict(task.id, what, report.score, report.passed, ", ".join(failed) or outcome.error)


def check_family(
    name: str,
    seeds: int = 3,
    splits: tuple[str, ...] = ("train", "test"),
    edit_seeds: int | None = None,
) -> list[Verdict]:
    """Every verdict for ``seeds`` seeds per split, edits on the first ``edit_seeds`` of them
    (all: ``None``); ``wrong(verdicts)`` lists those that are not as they must be."""
    family = FAMILIES[name]
    verdicts = []
    for split in splits:
        for seed in range(seeds):
            task = family.task(seed, split)
            verdicts.append(score(task, task.reference, "reference"))
            verdicts.append(score(task, calls_script(task), "calls"))
            verdicts.append(score(task, family.near_miss(seed, split), "near-miss"))
            if edit_seeds is not None and seed >= edit_seeds:
                continue
            edit = family.edit_task(seed, split)
            verdicts.append(score(edit, edit.start, "unedited"))
            verdicts.append(score(edit, edit.reference, "edited"))
    return verdicts


def wrong(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts that are not as they must be (references pass, misses and starts fail)."""
    must_pass = {"reference", "calls", "edited"}
    return [v for v in verdicts if v.passed != (v.what in must_pass) or v.score is None]


def masked_prompts(name: str, styles: tuple[str, ...], seeds: int = 8) -> list[list[str]]:
    """Each prompt of ``seeds`` seeds of a family in ``styles`` (both splits) as its sentences
    with numbers and units masked."""
    family = FAMILIES[name]
    return [
        skeleton(family.task(seed, split, style=style).prompt)
        for seed in range(seeds)
        for split in ("train", "test")
        for style in styles
    ]


def shared_wording(name: str, seeds: int = 8) -> set[str]:
    """Sentences of held-out-style prompts that a training-style prompt also has, once numbers
    and units are masked (must be none)."""
    train = {s for prompt in masked_prompts(name, TRAIN_STYLES, seeds) for s in prompt}
    held_out = {s for prompt in masked_prompts(name, HELD_OUT_STYLES, seeds) for s in prompt}
    return train & held_out


def recombined_wording(name: str, seeds: int = 8) -> tuple[set[str], set[str]]:
    """For the recombined styles: their whole prompts, numbers and units masked, that a
    training-style prompt also is (must be none), and their words no training-style prompt
    uses (must be none: they recombine what training says)."""
    said = {
        kind: {" ".join(prompt) for prompt in masked_prompts(name, styles, seeds)}
        for kind, styles in (("train", TRAIN_STYLES), ("recombined", RECOMBINED_STYLES))
    }
    words = {kind: set(re.findall(r"[A-Za-z]+", " ".join(said[kind]))) for kind in said}
    return said["train"] & said["recombined"], words["recombined"] - words["train"]


README_BEGIN = "<!-- families: begin (python tests/cad_families.py --readme) -->"
README_END = "<!-- families: end -->"


def readme_table() -> str:
    """The README's family table, made from the families themselves."""
    rows = [
        "| family | tier | part | features | tools | held out |",
        "|---|---|---|---|---|---|",
    ]
    for name, family in FAMILIES.items():
        held = "yes" if name in HELD_OUT_FAMILIES else ""
        features = ", ".join(family.features)
        tools = ", ".join(f"`{t}`" for t in family.operations())
        rows.append(
            f"| `{name}` | {family.tier} | {family.summary} | {features} | {tools} | {held} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--readme"]:
        print(f"{README_BEGIN}\n{readme_table()}\n{README_END}")
        sys.exit(0)
    seeds = 3
    if "--module" in args:
        at = args.index("--module")
        module = importlib.import_module(f"toolgym.envs.cadquery.families.{args[at + 1]}")
        FAMILIES.update({f.name: f for f in module.FAMILY_GROUP})
        del args[at : at + 2]
    if "--seeds" in args:
        at = args.index("--seeds")
        seeds = int(args[at + 1])
        del args[at : at + 2]
    bad = 0
    for family_name in args or list(FAMILIES):
        found = check_family(family_name, seeds)
        for sentence in sorted(shared_wording(family_name)):
            print(f"{family_name}: a held-out style says what training says: {sentence!r}")
            bad += 1
        for verdict in found:
            print(verdict, flush=True)
        bad += len(wrong(found))
        print(f"{family_name}: {len(wrong(found))} wrong of {len(found)}", flush=True)
    sys.exit(1 if bad else 0)
