"""Game-scene task families: templates with seeded parameters, across layout (rooms a designer
would furnish), physics (set-ups judged after simulating) and logic (behaviour judged by playing
held-out player paths).

A template (``toolgym.envs.scene.families.model.Template``) turns parameters into a spec: the
level, the constraints, the held-out trajectories, the reference and the prompt. Templates live
by kind, one module each, which lists them as ``FAMILY_GROUP``; this module gathers every such
module of the package, in name order (``_...`` modules are drafts), and checks each spec's prompt
against the relation table (``toolgym.envs.scene.relations``).

Agent code never reads these modules: the sandbox refuses every module under ``families``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from toolgym.envs.scene.families.model import Edit, Spec, Template
from toolgym.envs.scene.relations import require_checked
from toolgym.envs.tasks.families import gather, lookup

__all__ = ["DIFFICULTY", "FAMILIES", "HELD_OUT_FAMILIES", "KINDS", "TEMPLATES", "Edit", "Spec"]
__all__ += ["Template", "family", "spec_for", "spec_json", "task_spec"]

TEMPLATES: dict[str, Template] = gather(__name__, __path__)
FAMILIES = TEMPLATES  # one family per template
KINDS = {name: t.kind for name, t in TEMPLATES.items()}
DIFFICULTY = {name: t.difficulty for name, t in TEMPLATES.items()}

#: The families no training suite uses: the ``scene-families`` suite's test split, some of each
#: kind, so a score on them says how far training carried to levels never seen.
HELD_OUT_FAMILIES: tuple[str, ...] = ("lounge", "corridor", "knock_off", "sequence_lock", "lift")


def family(name: str) -> Template:
    """A family by name; an unknown name is a one-line error naming the known ones."""
    return lookup(TEMPLATES, name, "scene template")


def spec_for(parameters: Mapping[str, Any]) -> Spec:
    """The spec of a task from its parameters (``template`` names the template): see
    :meth:`Template.spec`."""
    name = str(parameters.get("template", ""))
    if name not in TEMPLATES:
        raise ValueError(f"unknown scene template {name!r}; known: {', '.join(TEMPLATES)}")
    return TEMPLATES[name].spec(parameters)


def task_spec(task: Any) -> Spec:
    """A task's spec, its own prompt (the one the agent reads, e.g. from a task file) checked
    as the template's is: every relation it states has a rule, or ``UncheckedRelation``."""
    spec = spec_for(task.parameters)
    if task.prompt != spec.prompt:
        relations = family(str(task.parameters.get("template"))).relations
        require_checked(task.prompt, spec.constraints, task.id, relations)
    return spec


def spec_json(spec: Spec) -> str:
    """The spec as JSON (for caching and debugging)."""
    return json.dumps(dataclasses.asdict(spec), sort_keys=True)
