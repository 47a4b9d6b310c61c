"""The CadQuery domain: what ``toolgym/CadQuery-v0`` plugs into the shared suites, CLI and agents.

Generated suites, each naming its split rule (``Suite.split_rule``):

- ``primitives``: the easiest tier, one box, cylinder or sphere of varied size and placement;
- ``procedural``: every procedural family, a few seeds each, in the ``spec`` style;
- ``cad-styles``: the training families said in the training styles; its test split says unseen
  seeds in the held-out styles (``phrases.HELD_OUT_STYLES``);
- ``cad-families``: the training families; its test split holds only the held-out families
  (``families.HELD_OUT_FAMILIES``);
- ``cad-edits``: edit tasks of every family: start from a part, change it.

Every generated suite's test split draws from seeds no training task uses. The hand-written
``curated`` suite is ``assets/cadquery/curated.toml``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping

from toolgym.envs.cadquery import CARD
from toolgym.envs.cadquery.families import FAMILIES, HELD_OUT_FAMILIES, Family
from toolgym.envs.cadquery.families.phrases import HELD_OUT_STYLES, TRAIN_STYLES
from toolgym.envs.domains import Domain, lazy
from toolgym.envs.tasks.families import SuiteFamily, family_rows
from toolgym.envs.tasks.model import Suite, Task
from toolgym.envs.tasks.suites import UNSEEN_SEEDS, LazySuites, generated_suite, generated_task
from toolgym.envs.tools import ToolRegistry

PRIMITIVE_SEEDS = {"train": 200, "test": 50}
PROCEDURAL_SEEDS = {"train": 10, "test": 3}
EDIT_SEEDS = {"train": 5, "test": 2}
TRAINING_FAMILIES = tuple(name for name in FAMILIES if name not in HELD_OUT_FAMILIES)


SPEC = {"train": ("spec",), "test": ("spec",)}
TRAINED = {"train": TRAIN_STYLES, "test": TRAIN_STYLES}
# The families each generated suite draws from, by suite.
FAMILIES_BY_SUITE: dict[str, dict[str, SuiteFamily]] = {
    "primitives": {"primitive": SuiteFamily(FAMILIES["primitive"], SPEC)},
    "procedural": {name: SuiteFamily(f, SPEC) for name, f in FAMILIES.items()},
    "cad-styles": {
        name: SuiteFamily(FAMILIES[name], {"train": TRAIN_STYLES, "test": HELD_OUT_STYLES})
        for name in TRAINING_FAMILIES
    },
    "cad-families": {
        name: SuiteFamily(f, TRAINED, ("test",) if name in HELD_OUT_FAMILIES else ("train",))
        for name, f in FAMILIES.items()
    },
    "cad-edits": {name: SuiteFamily(f, TRAINED, edit=True) for name, f in FAMILIES.items()},
}
SPLIT_RULES = {
    "cad-styles": "held-out styles: test prompts use wording forms no training prompt uses "
    f"({', '.join(HELD_OUT_STYLES)}; with numbers and units masked, no sentence in common), "
    "on unseen seeds",
    "cad-families": "held-out families: the test split holds only "
    f"{', '.join(HELD_OUT_FAMILIES) or 'none yet'}, which no training task uses",
    "cad-edits": "unseen seeds: each task starts from a part and asks for a change",
}


@functools.cache
def suites() -> LazySuites:
    def made(
        name: str, description: str, families: Iterable[SuiteFamily], seeds: Mapping[str, int]
    ) -> Callable[[], Suite]:
        rule = SPLIT_RULES.get(name, UNSEEN_SEEDS)
        return functools.partial(
            generated_suite, name, "cadquery", description, families, seeds, rule
        )

    procedural = FAMILIES_BY_SUITE["procedural"]
    return LazySuites(
        {
            "primitives": made(
                "primitives",
                "One box, cylinder or sphere of varied size and placement.",
                FAMILIES_BY_SUITE["primitives"].values(),
                PRIMITIVE_SEEDS,
            ),
            "procedural": made(
                "procedural",
                "Every procedural family, a few seeds each.",
                [procedural[name] for name in sorted(FAMILIES)],
                PROCEDURAL_SEEDS,
            ),
            "cad-styles": made(
                "cad-styles",
                "The training families in every training style; the test split in held-out styles.",
                FAMILIES_BY_SUITE["cad-styles"].values(),
                PROCEDURAL_SEEDS,
            ),
            "cad-families": made(
                "cad-families",
                "The training families; the test split holds the held-out families only.",
                FAMILIES_BY_SUITE["cad-families"].values(),
                PROCEDURAL_SEEDS,
            ),
            "cad-edits": made(
                "cad-edits",
                "Edit tasks of every family: start from a part, change it as asked.",
                FAMILIES_BY_SUITE["cad-edits"].values(),
                EDIT_SEEDS,
            ),
        }
    )


def family_table() -> list[dict[str, object]]:
    """Each family: tier, features, tools, whether it is held out, and per generated suite its
    ``train/test`` task counts and the styles its tasks are said in."""

    def columns(name: str, family: Family) -> dict[str, object]:
        return {
            "tier": family.tier,
            "summary": family.summary,
            "features": list(family.features),
            "tools": list(family.operations()),
        }

    return family_rows(FAMILIES, FAMILIES_BY_SUITE, suites(), HELD_OUT_FAMILIES, columns)


def task(task_id: str) -> Task | None:
    return generated_task(task_id, FAMILIES_BY_SUITE)


def registry() -> ToolRegistry:
    from toolgym.envs.cadquery.tools import registry

    return registry


DOMAIN = Domain(
    card=CARD,
    default_suite="curated",
    suites=suites,
    task=task,
    registry=registry,
    verify_script=lazy("toolgym.envs.cadquery.verification", "verify_script"),
    export_reference=lazy("toolgym.envs.cadquery.verification", "export_reference"),
    export_formats=("step", "stl", "brep", "glb"),
    target_image=lazy("toolgym.envs.cadquery.verification", "target_image"),
    families=tuple(FAMILIES),
    family_problems=lambda name, parameters: FAMILIES[name].problems(parameters),
    family_table=family_table,
    cheats=lazy("toolgym.envs.cadquery.cheats", "cheats"),
    near_miss=lazy("toolgym.envs.cadquery.cheats", "near_miss"),
    code_scope="`cq` (CadQuery) and `tools` are in scope; bind the part to `result`",
    # CAD tools take and return the part
    code_call=("result = ", "globals().get('result')"),
    verify_files=lazy("toolgym.envs.cadquery.verification", "verify_file_pair"),
    verifier_version="2026.12.04",  # the last change that can move a score
)
