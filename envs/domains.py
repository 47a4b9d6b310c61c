"""Tool domains: what each tool's folder ``envs/<tool>/`` plugs into the shared parts of the suite.

A domain is one folder: its card (``__init__.py``, see ``toolgym.envs.registration``), backend,
tools, task families, environment, verifier, and ``domain.py``, which defines ``DOMAIN``, a
:class:`Domain`. The suites, the CLI (``tasks``, ``show``, ``run``, ``verify``, ``doctor``), the
recorder and the agents reach a tool only through it, so a new tool is its folder and one
registration line, ``register_domain("<package>")``.

Domains are imported when first asked for, so ``import toolgym`` imports no tool.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from toolgym.envs.registration import DomainCard, cards, get_card

if TYPE_CHECKING:
    from pathlib import Path

    from toolgym.envs.sandbox import Limits
    from toolgym.envs.tasks.model import Suite, Task
    from toolgym.envs.tools import ToolRegistry
    from toolgym.envs.verification.batch import Outcome
    from toolgym.envs.verification.fuzzing import Cheat
    from toolgym.verifiers.report import VerifierReport


@dataclasses.dataclass(frozen=True)
class Domain:
    """What one tool plugs in.

    Attributes:
        card: what registered it: its name (``Task.domain`` of its tasks, its sandbox backend),
            Gymnasium id and distributions (:attr:`name` and :attr:`env_id` read it).
        default_suite: the suite an environment uses when given none.
        suites: its generated (procedural) suites by name (a ``LazySuites`` of
            ``toolgym.envs.tasks.suites`` makes each only when asked for). Hand-written suites
            are TOML files under ``assets/<domain>/``, found by ``toolgym.envs.tasks.suites``.
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
        family_problems: ``(family, parameters)``: ``(field, problem)`` for each parameter a
            task file gives that is outside that family's documented range (checked when the
            file is read); ``None`` when the domain documents no ranges.
        family_table: one row per procedural family (its tier, features, tools, and its task
            counts and styles per generated suite and split), for ``toolgym tasks --families``;
            ``None``: the domain lists none.
        cheats: the generic cheat transforms the reward fuzzer
        (``toolgym.envs.verification.fuzzing``)
            applies to this domain's tasks; none by default.
        near_miss: ``(task)``: the task's reference with one honest error (it fails, but not by
            much), which every cheat must score below; ``None`` when the domain has none.
        code_scope: what a script finds in scope in a session, in words (the code-mode tool's
            description that language-model doors show).
        code_call: how a code-mode script calls one of the registry's tools: what the call's
            result is assigned to, and its first argument (``("result = ", "part")``); ``None``:
            ``tools.name(**arguments)`` as it stands.
        verify_files: ``(candidate, reference, tier, alignment)``: score a part file against
            another (``toolgym verify --candidate A --reference B``); ``None`` when the domain
            scores no files.
        doctor_check: ``(title, check)``: a check ``toolgym doctor`` runs beyond importing the
            tool (a render in a session, say); ``check()`` returns ``(ok, detail)``.
        verifier_version: the version of how this tool's parts are scored; raise it whenever a
            change can move a score, so benchmark sets hashed before it (``toolgym bench``)
            no longer compare with those after.
    """

    card: DomainCard
    default_suite: str
    suites: Callable[[], Mapping[str, Suite]]
    task: Callable[[str], Task | None]
    registry: Callable[[], ToolRegistry]
    verify_script: Callable[[Task, str, str, Limits | None], Outcome]
    export_reference: Callable[[Task, str], bytes]
    export_formats: tuple[str, ...]
    target_image: Callable[[Task, int], np.ndarray]
    families: tuple[str, ...] = ()
    family_problems: Callable[[str, Mapping[str, Any]], list[tuple[str, str]]] | None = None
    family_table: Callable[[], list[dict[str, Any]]] | None = None
    cheats: Callable[[], tuple[Cheat, ...]] = tuple
    near_miss: Callable[[Task], str | None] | None = None
    code_scope: str = ""
    code_call: tuple[str, str] | None = None
    verify_files: Callable[[Path, Path, str, str], VerifierReport] | None = None
    doctor_check: tuple[str, Callable[[], tuple[bool, str]]] | None = None
    verifier_version: str = "1"

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def env_id(self) -> str:
        return self.card.env_id


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported on its first call: a domain names its verifier and cheats
    without loading them (and trimesh, SciPy, the renderers) in a process that only lists
    suites or makes tasks."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def get_domain(name: str) -> Domain:
    """The domain called ``name``. Raises ``KeyError`` naming the registered ones."""
    card = get_card(name)
    domain = _load(card.target(card.domain))
    if not isinstance(domain, Domain) or domain.name != name:
        raise TypeError(f"{card.target(card.domain)} is not the Domain of {name!r}")
    return domain


@functools.cache
def _load(target: str) -> object:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def domains() -> list[Domain]:
    """Every registered domain, in registration order."""
    return [get_domain(card.name) for card in cards()]


def domain_of_env(env_id: str) -> Domain:
    """The domain behind a Gymnasium id. Raises ``KeyError`` naming the known ids."""
    for domain in domains():
        if domain.env_id == env_id:
            return domain
    known = ", ".join(d.env_id for d in domains())
    raise KeyError(f"unknown environment {env_id!r}; toolgym environments: {known}")
