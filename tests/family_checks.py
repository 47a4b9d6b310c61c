"""Checks of one Blender or game-scene family against the real verifier: what
``tests/test_blender_families.py`` and ``tests/test_scene_families.py`` sweep, and what a
family's author runs while writing it::

    .venv/bin/python tests/family_checks.py blender chair [more families] [--seeds 3]
    .venv/bin/python tests/family_checks.py scene office_desks --seeds 2
    .venv/bin/python tests/family_checks.py blender --readme     # the README's family table

For each seed of each split: the reference program passes at the exact tier; the same scene
built from its tool calls passes (where the family has calls); the domain's near miss (one
honest error just past one threshold) fails; a task that starts from a scene fails when left as
it is; an edit task fails unedited and passes edited. Held-out styles share no sentence with
the training styles once numbers and units are masked. (CAD's families have their own:
``tests/cad_families.py``.)
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolgym.envs.domains import get_domain
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.phrases import skeleton

#: Each domain's families, styles and held-out list, by the module that holds them.
PACKAGES = {"blender": "toolgym.envs.blender.families", "scene": "toolgym.envs.scene.families"}


@dataclass
class Verdict:
    task: str
    what: str
    score: float | None
    passed: bool
    error: str | None = None

    def __str__(self) -> str:
        score = "  n/a" if self.score is None else f"{self.score:.3f}"
        return f"{self.task:44} {self.what:10} {score} {'pass' if self.passed else 'FAIL'} " + (
            self.error or ""
        )


def families(domain: str) -> dict[str, Any]:
    return importlib.import_module(PACKAGES[domain]).FAMILIES


def held_out(domain: str) -> tuple[str, ...]:
    return importlib.import_module(PACKAGES[domain]).HELD_OUT_FAMILIES


def styles(domain: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    phrases = importlib.import_module(f"{PACKAGES[domain]}.phrases")
    return phrases.TRAIN_STYLES, phrases.HELD_OUT_STYLES


def calls_script(domain: str, task: Task) -> str:
    """The task's tool calls as a script, each checked by the registry first."""
    registry = get_domain(domain).registry()
    lines = []
    for text in task.tool_calls or ():
        tool, arguments = registry.parse_call(text)
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        lines.append(f"tools.{tool.name}({'world, ' if domain == 'scene' else ''}{args})")
    return "\n".join(lines) + "\n"


def score(domain: str, task: Task, script: str, what: str) -> Verdict:
    outcome = get_domain(domain).verify_script(task, script, f"<{what} {task.id}>", None)
    report = outcome.report
    if report is None:
        return Verdict(task.id, what, None, False, f"{outcome.kind}: {outcome.error}")
    failed = (
        [k for k, c in report.checks.items() if c.get("ok") is False] if not report.passed else []
    )
    return Verdict(task.id, what, report.score, report.passed, ", ".join(failed) or outcome.error)


def task_verdicts(domain: str, task: Task, calls: bool = True) -> list[Verdict]:
    """The reference passes, its calls pass (where the reference is not the calls' own
    script), the near miss fails, and a task that starts from a scene fails untouched."""
    found = [score(domain, task, task.reference, "reference")]
    if calls and task.tool_calls and calls_script(domain, task) != task.reference:
        found.append(score(domain, task, calls_script(domain, task), "calls"))
    near = get_domain(domain).near_miss(task)
    if near is not None:
        found.append(score(domain, task, near, "near-miss"))
    if task.start:
        found.append(score(domain, task, "", "unedited"))
    if domain == "blender" and len(built_objects(task)) > 1 and not task.start:
        found.append(score(domain, task, task.reference + SMALLEST_PART_GONE, "part-gone"))
    return found


def built_objects(task: Task) -> set[str]:
    """The objects a Blender model's tool calls leave (cutters and joined parts go)."""
    left: set[str] = set()
    for text in task.tool_calls or ():
        call = json.loads(text)
        name, arguments = call["name"], call["arguments"]
        if name == "add_primitive":
            left.add(arguments["name"])
        elif name in ("duplicate_object", "rename_object"):
            left.add(arguments["new_name"])
        if name in ("delete_object", "rename_object"):
            left.discard(arguments["name"])
        elif name in ("boolean", "join_objects"):
            left.discard(arguments["other"])
    return left


# A model without its smallest visible part (by bounding box) must fail: a family may ask only
# for parts the verifier sees (a finial a few centimetres across on a lamp it does not).
SMALLEST_PART_GONE = """
parts = [o for o in bpy.context.scene.objects if o.type == 'MESH' and o.visible_get()]
if len(parts) > 1:
    bpy.data.objects.remove(min(parts, key=lambda o: o.dimensions.x * o.dimensions.y
                                * o.dimensions.z))
"""


def check_family(
    domain: str,
    name: str,
    seeds: int = 3,
    splits: tuple[str, ...] = ("train", "test"),
    edit_seeds: int | None = None,
) -> list[Verdict]:
    """Every verdict for ``seeds`` seeds per split, in the family's own words (its styles
    change words, not scenes), and its edit tasks on the first ``edit_seeds`` (all: ``None``)."""
    family = families(domain)[name]
    verdicts = []
    for split in splits:
        for seed in range(seeds):
            verdicts += task_verdicts(domain, family.task(seed, split))
            has_edits = getattr(family, "edits", False)
            if has_edits and (edit_seeds is None or seed < edit_seeds):
                edit = family.edit_task(seed, split)
                if edit.start and edit.reference != family.task(seed, split).reference:
                    verdicts += [
                        score(domain, edit, "", "unedited"),
                        score(domain, edit, edit.reference, "edited"),
                    ]
    return verdicts


def wrong(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts that are not as they must be (references pass; misses and starts fail)."""
    must_pass = {"reference", "calls", "edited"}
    return [v for v in verdicts if v.passed != (v.what in must_pass) or v.score is None]


def shared_wording(domain: str, name: str, seeds: int = 6) -> set[str]:
    """Sentences of held-out-style prompts that a training-style prompt also has, once numbers
    and units are masked (must be none); edits' requests included."""
    family = families(domain)[name]
    train_styles, held_styles = styles(domain)
    makers: list[Callable[..., Task]] = [family.task]
    if getattr(family, "edits", False):
        makers.append(family.edit_task)
    said: dict[str, set[str]] = {"train": set(), "held-out": set()}
    for make in makers:
        for seed in range(seeds):
            for split in ("train", "test"):
                for kind, chosen in (("train", train_styles), ("held-out", held_styles)):
                    for style in chosen:
                        prompt = make(seed, split, style=style).prompt.split("\n\n```", 1)[0]
                        said[kind].update(skeleton(prompt))
    return said["train"] & said["held-out"]


def readme_begin(domain: str) -> str:
    return f"<!-- {domain} families: begin (python tests/family_checks.py {domain} --readme) -->"


def readme_end(domain: str) -> str:
    return f"<!-- {domain} families: end -->"


def readme_table(domain: str) -> str:
    """The README's family table of ``domain``, made from the families themselves (the rows
    of ``toolgym tasks --families``)."""
    rows = [
        "| family | kind | tiers | what | styled | edits | tools | held out |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in get_domain(domain).family_table():
        tools = ", ".join(f"`{t}`" for t in row["tools"]) or "(a program)"
        marks = ["yes" if row[k] else "" for k in ("styled", "edits", "held out")]
        rows.append(
            f"| `{row['family']}` | {row['kind']} | {row['tier']} | {row['summary']} | "
            f"{marks[0]} | {marks[1]} | {tools} | {marks[2]} |"
        )
    return "\n".join(rows)


def main(args: list[str]) -> int:
    if not args or args[0] not in PACKAGES:
        print(__doc__)
        return 2
    domain, args = args[0], args[1:]
    if args == ["--readme"]:
        print(f"{readme_begin(domain)}\n{readme_table(domain)}\n{readme_end(domain)}")
        return 0
    seeds = 3
    if "--seeds" in args:
        at = args.index("--seeds")
        seeds = int(args[at + 1])
        del args[at : at + 2]
    bad = 0
    for name in args or list(families(domain)):
        for sentence in sorted(shared_wording(domain, name)):
            print(f"{name}: a held-out style says what training says: {sentence!r}")
            bad += 1
        found = check_family(domain, name, seeds)
        for verdict in found:
            print(verdict, flush=True)
        bad += len(wrong(found))
        print(f"{name}: {len(wrong(found))} wrong of {len(found)}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
