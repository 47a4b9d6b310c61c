"""What every domain's procedural families share: gathering them from a package's modules,
finding one by name, and how a generated suite draws one (:class:`SuiteFamily`)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from toolgym.envs.tasks.model import Suite, Task


def gather(package: str, path: Iterable[str]) -> dict[str, Any]:
    """The ``FAMILY_GROUP`` of every module of ``package`` (at ``path``), by family name, in
    module-name order; a module named ``_...`` is private (a draft), never gathered."""
    found: dict[str, Any] = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(path) if m.name[0] != "_"):
        group = getattr(importlib.import_module(f"{package}.{module}"), "FAMILY_GROUP", ())
        for member in group:
            if member.name in found:
                raise ValueError(f"family {member.name!r} is defined twice (in {module})")
            found[member.name] = member
    return found


def lookup[F](families: Mapping[str, F], name: str, what: str = "family") -> F:
    """A family by name; an unknown name is a one-line error naming the known ones."""
    try:
        return families[name]
    except KeyError:
        raise KeyError(f"unknown {what} {name!r}; known: {', '.join(sorted(families))}") from None


class StyledFamily(Protocol):
    """A family whose tasks can be said in a style (and, maybe, asked as edits)."""

    name: str

    def task(self, seed: int, split: str, suite: str, style: str) -> Task: ...


@dataclasses.dataclass(frozen=True)
class SuiteFamily:
    """A family as one generated suite draws it: the styles of each split (seed ``s`` takes
    ``styles[s % len(styles)]``), the splits it has tasks in, and whether its tasks are edits
    (the family's ``edit_task``)."""

    family: StyledFamily
    styles: Mapping[str, tuple[str, ...]]
    splits: tuple[str, ...] = ("train", "test")
    edit: bool = False

    @property
    def name(self) -> str:
        return self.family.name

    def task(self, seed: int, split: str = "train", suite: str = "procedural") -> Task:
        styles = self.styles[split]
        style = styles[seed % len(styles)]
        if self.edit:
            return self.family.edit_task(seed, split, suite, style)  # type: ignore[attr-defined]
        return self.family.task(seed, split, suite, style)


def restyled(
    task: Task, families_by_suite: Mapping[str, Mapping[str, SuiteFamily]], style: str | None
) -> Task:
    """``task`` said in ``style``, where it is a styled family's task of a generated suite (the
    same draw: the scene it starts from, its reference and its checks stay; only words change);
    any other task, or ``style=None``, as it is."""
    if style is None or task.style in (None, style) or task.family is None or task.seed is None:
        return task
    suite = task.id.split("/", 1)[0]
    drawn = families_by_suite.get(suite, {}).get(task.family)
    if drawn is None or not getattr(drawn.family, "styled", False):
        return task
    make = drawn.family.edit_task if drawn.edit else drawn.family.task  # type: ignore[attr-defined]
    said = make(task.seed, task.split, suite, style)
    return said if (said.start, said.reference) == (task.start, task.reference) else task


def drawn_columns(name: str, family: Any, seeds: int = 6) -> dict[str, object]:
    """The columns of a family that says itself through its drawn tasks (Blender, scenes): kind,
    tier range and tools over its first ``seeds`` training seeds, and whether it is said in
    styles and has edit tasks."""
    drawn = [family.task(seed, "train") for seed in range(seeds)]
    tools = sorted({json.loads(c)["name"] for t in drawn for c in t.tool_calls or ()})
    tiers = sorted({t.difficulty for t in drawn})
    return {
        "kind": family.kind,
        "tier": str(tiers[0]) if len(tiers) == 1 else f"{tiers[0]}-{tiers[-1]}",
        "summary": family.summary,
        "tools": tools,
        "styled": bool(family.styled),
        "edits": bool(family.edits),
    }


def family_rows(
    families: Mapping[str, Any],
    families_by_suite: Mapping[str, Mapping[str, SuiteFamily]],
    suites: Mapping[str, Suite],
    held_out: Iterable[str],
    columns: Callable[[str, Any], dict[str, object]],
) -> list[dict[str, object]]:
    """One row per family for ``toolgym tasks --families``: the tool's own ``columns`` (tier,
    tools...), whether it is held out, and per generated suite its ``train/test`` task counts
    and the styles its tasks are said in."""
    held = set(held_out)
    rows = []
    for name, family in families.items():
        row: dict[str, object] = {"family": name, **columns(name, family), "held out": name in held}
        styles: dict[str, dict[str, list[str]]] = {}
        for suite in families_by_suite:
            tasks = [t for t in suites[suite].tasks if t.family == name]
            counts = [sum(t.split == split for t in tasks) for split in ("train", "test")]
            row[suite] = f"{counts[0]}/{counts[1]}"
            styles[suite] = {
                split: sorted({str(t.style) for t in tasks if t.split == split})
                for split in ("train", "test")
            }
        row["styles"] = styles
        rows.append(row)
    return rows
