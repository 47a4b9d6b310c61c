"""Named task suites: the hand-written ones in ``assets/`` and the procedural ones.

- ``curated``: hand-written CadQuery parts with real dimensions (``assets/cadquery/curated.toml``).
- ``primitives``: the easiest tier, one box, cylinder or sphere of varied size and placement.
- ``procedural``: every procedural family, a few seeds each.

Task ids are ``"<suite>/<name>"``; procedural ids are ``"<suite>/<family>/<split>-<seed>"`` and
any seed may be asked for, not only those listed in the suite.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from toolgym.envs.cadquery.families import FAMILIES, family
from toolgym.envs.tasks import Suite, Task, load_task_file

ASSETS = Path(__file__).resolve().parents[1] / "assets"
PRIMITIVE_SEEDS = {"train": 200, "test": 50}
PROCEDURAL_SEEDS = {"train": 10, "test": 3}
_PROCEDURAL_ID = re.compile(
    r"^(?P<suite>primitives|procedural)/(?P<family>\w+)/(?P<split>train|test)-(?P<seed>\d+)$"
)


def _generated(name: str, description: str, families: list[str], seeds: dict[str, int]) -> Suite:
    tasks = tuple(
        family(f).task(seed, split, suite=name)
        for f in families
        for split, count in seeds.items()
        for seed in range(count)
    )
    return Suite(name, "cadquery", description, tasks)


@functools.cache
def suites() -> dict[str, Suite]:
    """Every suite by name (files are read once per process)."""
    found: dict[str, Suite] = {}
    for path in sorted(ASSETS.glob("*/*.toml")):
        suite = load_task_file(path)
        if suite.name in found:
            raise ValueError(f"{path}: suite {suite.name!r} is defined twice")
        found[suite.name] = suite
    found["primitives"] = _generated(
        "primitives", "One box, cylinder or sphere of varied size and placement.", ["primitive"],
        PRIMITIVE_SEEDS,
    )  # fmt: skip
    from toolgym.envs.blender.suites import generated_suites  # until domains plug in

    found.update(generated_suites())
    found["procedural"] = _generated(
        "procedural",
        "Every procedural family, a few seeds each.",
        sorted(FAMILIES),
        PROCEDURAL_SEEDS,
    )
    return found


def get_suite(name: str) -> Suite:
    """A suite by name, or from a task file when ``name`` is a path ending in ``.toml``."""
    if name.endswith(".toml"):
        return load_task_file(name)
    try:
        return suites()[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(sorted(suites()))}") from None


def get_task(task_id: str) -> Task:
    """A task by id; procedural ids are generated for any seed."""
    from toolgym.envs.blender.suites import generated_task  # until domains plug in

    if (blender := generated_task(task_id)) is not None:
        return blender
    match = _PROCEDURAL_ID.match(task_id)
    if match:
        return family(match["family"]).task(
            int(match["seed"]), match["split"], suite=match["suite"]
        )
    for suite in suites().values():
        for task in suite.tasks:
            if task.id == task_id:
                return task
    raise KeyError(f"unknown task {task_id!r}; see `toolgym tasks` for the suites and their tasks")
