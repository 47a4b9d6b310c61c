"""Named task suites of every domain: hand-written ones in ``assets/`` and generated ones.

- Hand-written suites are TOML files, ``assets/<domain>/*.toml`` (see ``toolgym.envs.tasks.model``).
- Generated suites come from each domain's procedural families (``Domain.suites``), e.g. CAD's
  ``primitives`` and ``procedural``.

Suite names are unique across domains. Task ids are ``"<suite>/<name>"``; generated ids are
``"<suite>/<family>/<split>-<seed>"``, and any seed may be asked for, not only those listed.
"""

from __future__ import annotations

import difflib
import functools
import importlib.resources
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from toolgym.envs.domains import domains, get_domain
from toolgym.envs.registration import DomainCard, cards
from toolgym.envs.tasks.model import Suite, Task, load_task_file


def assets_folder() -> Path:
    """The task files: ``toolgym/assets`` of an installed package (package data, found through
    ``importlib.resources``), else the checkout's ``assets/`` (an editable install)."""
    installed = Path(str(importlib.resources.files("toolgym"))) / "assets"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "assets"


ASSETS = assets_folder()
GENERATED_ID = re.compile(
    r"^(?P<suite>[\w-]+)/(?P<family>\w+)/(?P<split>train|test)-(?P<seed>\d+)$"
)


#: The split rule of a generated suite whose splits differ by seed only.
UNSEEN_SEEDS = "unseen seeds: test tasks draw from seeds no training task uses"


class TaskFamily(Protocol):
    """A seeded generator of tasks (see ``toolgym.envs.cadquery.families.Family``)."""

    name: str

    def task(self, seed: int, split: str = "train", suite: str = ...) -> Task: ...


def generated_suite(
    name: str,
    domain: str,
    description: str,
    families: Iterable[TaskFamily],
    seeds: Mapping[str, int],
    split_rule: str = UNSEEN_SEEDS,
) -> Suite:
    """A suite of ``seeds[split]`` tasks per family and split, seeds ``0, 1, ...`` (a family
    may have tasks in one split only: ``family.splits``, when it says)."""
    tasks = tuple(
        family.task(seed, split, suite=name)
        for family in families
        for split, count in seeds.items()
        if split in getattr(family, "splits", (split,))
        for seed in range(count)
    )
    return Suite(name, domain, description, tasks, split_rule)


class LazySuites(Mapping[str, Suite]):
    """Suites by name, each made on first use: a process that asks for one suite pays for
    that one (generating every family's tasks of every suite takes seconds)."""

    def __init__(self, makers: Mapping[str, Callable[[], Suite] | Suite]) -> None:
        self._makers = {n: m for n, m in makers.items() if not isinstance(m, Suite)}
        self._made = {n: m for n, m in makers.items() if isinstance(m, Suite)}
        self._names = tuple(makers)

    def __getitem__(self, name: str) -> Suite:
        if name not in self._made:
            self._made[name] = self._makers[name]()
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def generated_task(
    task_id: str, families_by_suite: Mapping[str, Mapping[str, TaskFamily]]
) -> Task | None:
    """The generated task with id ``"<suite>/<family>/<split>-<seed>"`` for any seed, when the
    suite is one of ``families_by_suite`` and has that family; else ``None``."""
    match = GENERATED_ID.match(task_id)
    if not match or match["suite"] not in families_by_suite:
        return None
    family = families_by_suite[match["suite"]].get(match["family"])
    if family is None or match["split"] not in getattr(family, "splits", (match["split"],)):
        return None
    return family.task(int(match["seed"]), match["split"], suite=match["suite"])


def suites() -> Mapping[str, Suite]:
    """Every suite of every registered domain by name (files are read once per process, a
    generated suite is made when first asked for; the suites are gathered again only when the
    registered tools change)."""
    return _suites(tuple(cards()))


@functools.cache
def _suites(registered: tuple[DomainCard, ...]) -> LazySuites:
    found: dict[str, Callable[[], Suite] | Suite] = {}
    where: dict[str, str] = {}

    def add(name: str, make: Callable[[], Suite] | Suite, source: str) -> None:
        if name in found:
            raise ValueError(f"{source}: suite {name!r} is already defined by {where[name]}")
        found[name], where[name] = make, source

    for path in sorted(ASSETS.glob("*/*.toml")):
        written = load_task_file(path)
        add(written.name, written, str(path))
    for card in registered:
        domain = get_domain(card.name)
        generated = domain.suites()
        for name in generated:
            make = functools.partial(generated.__getitem__, name)
            add(name, make, f"the {domain.name} domain's generated suites")
    return LazySuites(found)


def get_suite(name: str) -> Suite:
    """A suite by name, or from a task file when ``name`` is a path ending in ``.toml``."""
    if name.endswith(".toml"):
        return load_task_file(name)
    try:
        return suites()[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(suites()), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise KeyError(
            f"unknown suite {name!r}; {hint}known: {', '.join(sorted(suites()))}"
        ) from None


def get_task(task_id: str) -> Task:
    """A task by id; generated ids are made for any seed."""
    for domain in domains():
        task = domain.task(task_id)
        if task is not None:
            return task
    for suite in suites().values():
        for task in suite.tasks:
            if task.id == task_id:
                return task
    known = [task.id for suite in suites().values() for task in suite.tasks]
    close = difflib.get_close_matches(task_id, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise KeyError(
        f"unknown task {task_id!r}; {hint}see `toolgym tasks` for the suites and their tasks"
    )
