"""What every domain's procedural families share: gathering them from a package's modules,
finding one by name, and how a generated suite draws one (:class:`SuiteFamily`)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from toolgym.envs.tasks.model import Task


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
