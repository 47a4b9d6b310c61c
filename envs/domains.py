"""Tool domains: what each tool's folder ``envs/<tool>/`` plugs into the shared parts of the suite.

A domain is one folder: backend, tools, task families, environment, and ``domain.py``, which
defines ``DOMAIN``, a :class:`Domain`. The suites, the CLI (``tasks``, ``show``, ``run``,
``verify``) and the agents reach a tool only through it, so a new tool needs no change outside its
folder but a line in :data:`DOMAIN_MODULES` and one in ``toolgym.ENVIRONMENTS``.

Domains are imported when first asked for, so ``import toolgym`` imports no tool.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from toolgym.envs.sandbox import Limits
    from toolgym.envs.tasks.model import Suite, Task
    from toolgym.envs.tools import ToolRegistry
    from toolgym.envs.verification.batch import Outcome
    from toolgym.envs.verification.fuzzing import Cheat

#: Domain name (``Task.domain``, and the sandbox backend's name) to the module defining ``DOMAIN``.
DOMAIN_MODULES = {
    "cadquery": "toolgym.envs.cadquery.domain",
    "blender": "toolgym.envs.blender.domain",
    "scene": "toolgym.envs.scene.domain",
}


@dataclasses.dataclass(frozen=True)
class Domain:
    """What one tool plugs in.

    Attributes:
        name: the domain's name: ``Task.domain`` of its tasks and its sandbox backend.
        env_id: its Gymnasium id, e.g. ``"toolgym/CadQuery-v0"``.
        default_suite: the suite an environment uses when given none.
        suites: its generated (procedural) suites by name. Hand-written suites are TOML files
            under ``assets/<domain>/``, found by ``toolgym.envs.tasks.suites``.
        task: the generated task with this id, for any seed; ``None`` if the id is not one of
            this domain's generated ids.
        registry: its tool registry.
        verify_script: ``(task, script, filename, limits)``: run a script in a fresh session and
            score what it built at the task's final tier.
        export_reference: ``(task, format)``: the task's target as file bytes.
        export_formats: the formats ``export_reference`` knows; the first is the default.
        target_image: ``(task, view_size)``: the target's views as an RGB ``uint8`` tile.
        families: the procedural families a hand-written task may name (``family`` in a task
            file), e.g. to share a family's fixed view frame; none by default.
        cheats: the generic cheat transforms the reward fuzzer
        (``toolgym.envs.verification.fuzzing``)
            applies to this domain's tasks; none by default.
        near_miss: ``(task)``: the task's reference with one honest error (it fails, but not by
            much), which every cheat must score below; ``None`` when the domain has none.
    """

    name: str
    env_id: str
    default_suite: str
    suites: Callable[[], dict[str, Suite]]
    task: Callable[[str], Task | None]
    registry: Callable[[], ToolRegistry]
    verify_script: Callable[[Task, str, str, Limits | None], Outcome]
    export_reference: Callable[[Task, str], bytes]
    export_formats: tuple[str, ...]
    target_image: Callable[[Task, int], np.ndarray]
    families: tuple[str, ...] = ()
    cheats: Callable[[], tuple[Cheat, ...]] = tuple
    near_miss: Callable[[Task], str | None] | None = None


@functools.cache
def get_domain(name: str) -> Domain:
    """The domain called ``name``. Raises ``KeyError`` naming the known ones."""
    if name not in DOMAIN_MODULES:
        raise KeyError(f"unknown domain {name!r}; known: {', '.join(DOMAIN_MODULES)}")
    return importlib.import_module(DOMAIN_MODULES[name]).DOMAIN


def domains() -> list[Domain]:
    """Every domain, in :data:`DOMAIN_MODULES` order."""
    return [get_domain(name) for name in DOMAIN_MODULES]


def domain_of_env(env_id: str) -> Domain:
    """The domain behind a Gymnasium id. Raises ``KeyError`` naming the known ids."""
    for domain in domains():
        if domain.env_id == env_id:
            return domain
    known = ", ".join(d.env_id for d in domains())
    raise KeyError(f"unknown environment {env_id!r}; toolgym environments: {known}")
