"""Versioned evaluation sets: the test splits of every tool's task distributions, pinned by hash.

A set is a list of :class:`Entry` s, each one task played one way (its environment, prompt form
and step budget), tagged with the *part* of the distribution it measures:

- ``seen``: seen families, unseen seeds (the ``procedural`` suites' test split);
- ``styles``: held-out wording styles; ``families``: held-out families; ``edits``: edit tasks
  (start from a part or scene and change it);
- ``image``: the ``seen`` tasks asked with ``prompt_form="image"`` (the views say what to build);
- ``curated``: the hand-written test tasks.

Sets per tool and overall: ``<tool>-v1`` (every test task of every part) and ``<tool>-lite-v1``
(at most :data:`LITE_PER_PART` tasks per part, one per family, spread over the families), and
``all-v1`` / ``all-lite-v1`` for the three tools together. ``v1`` is the protocol; the **hash**
pins the content: every entry's task (prompt, reference, parameters, verification, start,
tool calls, tier), its environment, prompt form and step budget, and each tool's
``Domain.verifier_version``. A result names the hash, so it says exactly what it measured, and
two results compare only when their hashes are equal.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from toolgym.envs.domains import get_domain
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_suite

PROTOCOL = "v1"


def _parts(
    seen: str, prefix: str, curated: tuple[str, ...]
) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """A tool's parts: (part, suites whose test split it takes, prompt form)."""
    return (
        ("seen", (seen,), "described"),
        ("styles", (f"{prefix}-styles",), "described"),
        ("families", (f"{prefix}-families",), "described"),
        ("edits", (f"{prefix}-edits",), "described"),
        ("image", (seen,), "image"),
        ("curated", curated, "described"),
    )


BLENDER_CURATED = ("modelling", "placement", "material", "lighting", "shape-keys")
PARTS = {
    "cadquery": _parts("procedural", "cad", ("curated",)),
    "blender": _parts(
        "blender-procedural",
        "blender",
        (*(f"blender-{kind}" for kind in BLENDER_CURATED), "blender-procedural-curated"),
    ),
    "scene": _parts("scene-procedural", "scene", ("scene-curated",)),
}
TOOLS = tuple(PARTS)
PART_NAMES = tuple(part for part, _, _ in PARTS["cadquery"])
LITE_PER_PART = 8
MIN_STEPS = 8  # every entry's step budget: this, or its reference's calls and two more


@dataclasses.dataclass(frozen=True)
class Entry:
    """One task of a set, played one way.

    Attributes:
        id: ``"<tool>/<part>/<task id>"`` (``@image`` appended for the image form): unique in
            its set, and the key of its episodes in a run's results.
        env_id: the Gymnasium id it is played in; ``task``: the task id (``reset(options=
            {"task": ...})``); ``prompt_form``: ``"described"`` or ``"image"``; ``max_steps``:
            the episode's step budget (the same for every agent).
        tool, part, family, tier, style: what the report groups by (``family``: a generated
            task's family, else its suite; ``tier``: the task's difficulty, 1 to 5; ``style``:
            its wording style, ``"as written"`` when it has none).
    """

    id: str
    env_id: str
    task: str
    prompt_form: str
    max_steps: int
    tool: str
    part: str
    family: str
    tier: int
    style: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class EvalSet:
    """A named, hashed list of entries (see the module's docstring)."""

    name: str
    description: str
    entries: tuple[Entry, ...]
    verifier_versions: dict[str, str]
    hash: str

    def head(self, limit: int | None) -> tuple[Entry, ...]:
        """The first ``limit`` entries (all with ``None``): the order interleaves tools and
        parts, so a short run still touches each."""
        return self.entries if limit is None else self.entries[:limit]

    def summary(self) -> dict[str, Any]:
        """Name, hash, description and task counts by tool and part (what ``bench list``
        shows and every result carries)."""
        counts: dict[str, dict[str, int]] = {}
        for entry in self.entries:
            counts.setdefault(entry.tool, {}).setdefault(entry.part, 0)
            counts[entry.tool][entry.part] += 1
        return {
            "name": self.name,
            "hash": self.hash,
            "description": self.description,
            "entries": len(self.entries),
            "counts": counts,
            "verifier_versions": self.verifier_versions,
        }


def set_names() -> list[str]:
    """Every set's name, per tool then overall, full then lite."""
    return [f"{scope}{lite}-{PROTOCOL}" for scope in (*TOOLS, "all") for lite in ("", "-lite")]


def get_set(name: str) -> EvalSet:
    """A set by name. Raises ``KeyError`` naming the known sets."""
    if name not in set_names():
        raise KeyError(f"unknown set {name!r}; known: {', '.join(set_names())}")
    return _build(name)


@functools.cache
def _build(name: str) -> EvalSet:
    scope, lite = name.removesuffix(f"-{PROTOCOL}"), False
    if scope.endswith("-lite"):
        scope, lite = scope.removesuffix("-lite"), True
    tools = TOOLS if scope == "all" else (scope,)
    per_tool = [_tool_entries(tool, lite) for tool in tools]
    entries = tuple(_interleave(per_tool))
    versions = {tool: get_domain(tool).verifier_version for tool in tools}
    kind = f"at most {LITE_PER_PART} tasks per part" if lite else "every test task of every part"
    what = "the three tools" if scope == "all" else scope
    description = (
        f"{what}: seen families with unseen seeds, held-out styles, held-out families, edits, "
        f"image-only and hand-written tasks; {kind}"
    )
    return EvalSet(name, description, entries, versions, set_hash(entries, versions))


def _tool_entries(tool: str, lite: bool) -> list[Entry]:
    """A tool's entries, part after part; in a lite set each part interleaves its families."""
    domain = get_domain(tool)
    parts = []
    for part, suite_names, form in PARTS[tool]:
        tasks = [t for name in suite_names for t in get_suite(name).split("test")]
        if lite:
            tasks = _spread(tasks, LITE_PER_PART)
        parts.append([_entry(domain.env_id, tool, part, form, task) for task in tasks])
    return list(_interleave(parts)) if lite else [e for p in parts for e in p]


def _entry(env_id: str, tool: str, part: str, form: str, task: Task) -> Entry:
    suffix = "@image" if form == "image" else ""
    return Entry(
        id=f"{tool}/{part}/{task.id}{suffix}",
        env_id=env_id,
        task=task.id,
        prompt_form=form,
        max_steps=max(MIN_STEPS, len(task.tool_calls or ()) + 2),
        tool=tool,
        part=part,
        family=task.family or task.suite,
        tier=task.difficulty,
        style=task.style or "as written",
    )


def _spread(tasks: list[Task], count: int) -> list[Task]:
    """At most ``count`` tasks: each family's first, at evenly spaced families (all of them
    when there are no more than ``count``)."""
    first: dict[str, Task] = {}
    for task in tasks:
        first.setdefault(task.family or task.id, task)
    chosen = list(first.values())
    if len(chosen) <= count:
        return chosen
    return [chosen[(k * len(chosen)) // count] for k in range(count)]


def _interleave[T](groups: Iterable[list[T]]) -> Iterable[T]:
    """Round-robin over ``groups`` (a prefix of the result covers every group early)."""
    groups = [list(g) for g in groups]
    for k in range(max((len(g) for g in groups), default=0)):
        for group in groups:
            if k < len(group):
                yield group[k]


def set_hash(entries: Iterable[Entry], verifier_versions: dict[str, str]) -> str:
    """The content hash of ``entries`` (each with its task's content) and the verifier
    versions: 16 hex digits of SHA-256 over canonical JSON."""
    content = {
        "protocol": PROTOCOL,
        "verifiers": dict(sorted(verifier_versions.items())),
        "entries": [entry.to_dict() | {"content": task_content(entry.task)} for entry in entries],
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def task_content(task_id: str) -> dict[str, Any]:
    """What a task asks and how it is judged, as plain data (the part of it a hash pins)."""
    from toolgym.envs.tasks.suites import get_task

    return dataclasses.asdict(get_task(task_id))  # the verification with it
