"""The task model shared by every domain, and loading tasks from files.

A task is what an episode asks for: a prompt, a reference program that builds the target, the
parameters behind both, a difficulty tier, how to verify (cheap per step, exact at the end) and a
split. Hand-written tasks live in TOML files under ``assets/<domain>/``; procedural families
generate them from seeds (see ``toolgym.envs.cadquery.families``).

A task file looks like::

    [suite]
    name = "curated"
    domain = "cadquery"
    description = "Hand-written parts with real dimensions."

    [[task]]
    name = "plate-four-holes"
    prompt = "A 60 × 40 × 6 mm plate with four 5 mm holes 8 mm in from each corner."
    difficulty = 2
    split = "train"
    parameters = { length = 60, width = 40, thickness = 6, hole = 5, inset = 8 }
    reference = '''
    result = cq.Workplane().box(60, 40, 6) ...
    '''
    tool_calls = [               # optional: the reference as tool calls, for tool mode
        { name = "add_box", arguments = { length = 60, width = 40, height = 6 } },
        { name = "cut_hole", arguments = { diameter = 5, x = 22, y = 12 } },
    ]
    [task.verification]          # optional; these are the defaults
    thresholds = { iou = 0.95 }
    alignment = "none"

A file that cannot be used raises :class:`TaskFileError` naming the file, the task and the field.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolgym.envs.registration import domain_names

SPLITS = ("train", "test")
DIFFICULTIES = range(1, 6)  # 1: one primitive ... 5: multi-feature assemblies of operations
ALIGNMENTS = ("none", "normalized")
SCORE_WEIGHTS = ("iou", "chamfer", "fscore")
Scalar = int | float | str | bool


class TaskFileError(ValueError):
    """A task file is unreadable or invalid; the message names the file, task and field."""


@dataclasses.dataclass(frozen=True)
class Verification:
    """How a task is verified.

    Attributes:
        thresholds: metric bounds that make a solution pass (maxima for lower-is-better metrics,
            see ``toolgym.verifiers.report``); default IoU ≥ 0.95.
        weights: composite-score weights for ``iou``, ``chamfer``, ``fscore``; ``None`` for the
            verifier's defaults.
        alignment: ``"none"`` (placement matters) or ``"normalized"`` (only shape matters).
        step_tier: verifier tier run every step (``"cheap"``).
        final_tier: verifier tier run when the episode ends (``"exact"``).
        deviation_mm: the largest surface deviation that passes, in the part's units; ``None``
            for the verifier's default (a quarter of min(1 mm, 10 % of the part's thinnest
            extent)).
    """

    thresholds: Mapping[str, float] = dataclasses.field(default_factory=lambda: {"iou": 0.95})
    weights: Mapping[str, float] | None = None
    alignment: str = "none"
    step_tier: str = "cheap"
    final_tier: str = "exact"
    deviation_mm: float | None = None


@dataclasses.dataclass(frozen=True)
class Task:
    """One task. ``id`` is ``"<suite>/<name>"`` and unique across suites.

    ``reference`` is the program that builds the target (what the oracle plays in code mode);
    ``tool_calls``, when the domain's tool registry can express it, is the same target as a
    sequence of JSON tool calls (what the oracle plays in tool mode).
    """

    id: str
    domain: str
    prompt: str
    reference: str
    parameters: Mapping[str, Scalar]
    difficulty: int
    verification: Verification
    split: str
    family: str | None = None
    seed: int | None = None
    # The reference as JSON tool calls ``{"name": ..., "arguments": {...}}``, played in order in
    # tool mode (by the oracle, and as behaviour-cloning demonstrations); ``None`` when the
    # domain's tool registry cannot express the reference.
    tool_calls: tuple[str, ...] | None = None
    # A program that builds the episode's start (a Blender scene, a CAD part to edit); empty:
    # start from nothing.
    start: str = ""
    # How a generated task's prompt is worded (a CAD family's style); ``None``: as written.
    style: str | None = None

    @property
    def suite(self) -> str:
        return self.id.rsplit("/", 1)[0]


#: The split rule of a hand-written suite: each task names its split.
WRITTEN_SPLIT = "as written: each task names its split"


@dataclasses.dataclass(frozen=True)
class Suite:
    """A named set of tasks; ``split_rule`` says what its test split holds out."""

    name: str
    domain: str
    description: str
    tasks: tuple[Task, ...]
    split_rule: str = WRITTEN_SPLIT

    def split(self, split: str) -> tuple[Task, ...]:
        return tuple(t for t in self.tasks if t.split == split)


# -- validation ----------------------------------------------------------------------------------


class _Fields:
    """Reads fields off one TOML table, raising errors that say where."""

    def __init__(self, table: Any, where: str) -> None:
        if not isinstance(table, dict):
            raise TaskFileError(f"{where}: expected a table, got {type(table).__name__}")
        self.table, self.where = table, where

    def fail(self, name: str, problem: str) -> TaskFileError:
        return TaskFileError(f"{self.where}: field {name!r}: {problem}")

    def get(
        self, name: str, kind: type | tuple[type, ...], default: Any = ..., choices: Any = None
    ) -> Any:
        if name not in self.table:
            if default is ...:
                raise self.fail(name, "missing")
            return default
        value = self.table[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            raise self.fail(name, f"expected {_kind_name(kind)}, got {value!r}")
        if choices is not None and value not in choices:
            raise self.fail(name, f"expected one of {list(choices)}, got {value!r}")
        if isinstance(value, str) and not value.strip():
            raise self.fail(name, "must not be empty")
        return value

    def check_unknown(self, known: set[str]) -> None:
        unknown = sorted(set(self.table) - known)
        if unknown:
            raise TaskFileError(f"{self.where}: unknown field(s) {unknown}; known: {sorted(known)}")


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _as_tuple(kind))


def _numbers(
    fields: _Fields, name: str, allowed: tuple[str, ...] | None = None
) -> dict[str, float] | None:
    table = fields.get(name, dict, None)
    if table is None:
        return None
    for key, value in table.items():
        if allowed is not None and key not in allowed:
            raise fields.fail(name, f"unknown key {key!r}; known: {list(allowed)}")
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise fields.fail(name, f"{key!r} must be a non-negative number, got {value!r}")
    return {k: float(v) for k, v in table.items()}


def parse_verification(table: Any, where: str) -> Verification:
    fields = _Fields(table, f"{where} [verification]")
    fields.check_unknown(
        {"thresholds", "weights", "alignment", "step_tier", "final_tier", "deviation_mm"}
    )
    weights = _numbers(fields, "weights", SCORE_WEIGHTS)
    if weights is not None and sum(weights.values()) <= 0:
        raise fields.fail("weights", "must have a positive sum")
    thresholds = _numbers(fields, "thresholds")
    return Verification(
        thresholds={"iou": 0.95} if thresholds is None else thresholds,
        weights=weights,
        alignment=fields.get("alignment", str, "none", ALIGNMENTS),
        step_tier=fields.get("step_tier", str, "cheap", ("cheap", "exact")),
        final_tier=fields.get("final_tier", str, "exact", ("cheap", "exact")),
        deviation_mm=_positive(fields, "deviation_mm"),
    )


def _positive(fields: _Fields, name: str) -> float | None:
    value = fields.get(name, (int, float), None)
    if value is not None and value <= 0:
        raise fields.fail(name, f"must be a positive number, got {value!r}")
    return None if value is None else float(value)


def _family(fields: _Fields, domain: str) -> str | None:
    """A task's ``family``: one of its domain's procedural families (the task then shares, for
    example, that family's fixed view frame), or ``None``."""
    if "family" not in fields.table:
        return None
    from toolgym.envs.domains import get_domain  # the domain names its families; imported late

    known = get_domain(domain).families
    if not known:
        raise fields.fail("family", f"the {domain} domain has no families a task may name")
    return fields.get("family", str, choices=known)


def _check_family_parameters(
    fields: _Fields, domain: str, family: str, parameters: Mapping[str, Any]
) -> None:
    """A task naming a family gives its parameters inside the family's documented ranges."""
    from toolgym.envs.domains import get_domain  # as in _family

    check = get_domain(domain).family_problems
    for name, problem in check(family, parameters) if check else ():
        field = "parameters" if name == "parameters" else f"parameters.{name}"
        raise fields.fail(field, f"{problem} (the {family} family's range)")


def parse_task(table: Any, suite: str, domain: str, where: str) -> Task:
    fields = _Fields(table, where)
    name = fields.get("name", str)
    fields.where = f"{where} ({name!r})"
    fields.check_unknown(
        {
            "name",
            "prompt",
            "reference",
            "parameters",
            "difficulty",
            "split",
            "verification",
            "tool_calls",
            "start",
            "family",
        }
    )
    parameters = fields.get("parameters", dict, {})
    for key, value in parameters.items():
        if not isinstance(value, Scalar):
            raise fields.fail("parameters", f"{key!r} must be a number, string or boolean")
    family = _family(fields, domain)
    if family is not None:
        _check_family_parameters(fields, domain, family, parameters)
    return Task(
        id=f"{suite}/{name}",
        domain=domain,
        prompt=fields.get("prompt", str).strip(),
        reference=fields.get("reference", str).strip() + "\n",
        parameters=dict(parameters),
        difficulty=fields.get("difficulty", int, choices=DIFFICULTIES),
        verification=parse_verification(fields.table.get("verification", {}), fields.where),
        split=fields.get("split", str, "train", SPLITS),
        tool_calls=_tool_calls(fields),
        start=fields.get("start", str, "").strip(),
        family=family,
    )


def _tool_calls(fields: _Fields) -> tuple[str, ...] | None:
    """``tool_calls``: a list of calls, each a ``{name = ..., arguments = {...}}`` table or the
    same as JSON text; kept as JSON texts.

    Only the shape is checked here; the domain's registry checks names and arguments."""
    calls = fields.get("tool_calls", list, None)
    if calls is None:
        return None
    if not calls:
        raise fields.fail("tool_calls", "must hold at least one call")
    texts = []
    for k, call in enumerate(calls):
        if isinstance(call, str):
            try:
                call = json.loads(call)
            except ValueError:
                call = None
        ok = isinstance(call, dict) and isinstance(call.get("name"), str)
        if (
            not ok
            or not isinstance(call.get("arguments", {}), dict)
            or set(call) - {"name", "arguments"}
        ):
            raise fields.fail("tool_calls", f"call {k} must be {{name = ..., arguments = {{...}}}}")
        texts.append(json.dumps({"name": call["name"], "arguments": call.get("arguments", {})}))
    return tuple(texts)


def load_task_file(path: str | Path) -> Suite:
    """Read one suite file; raises :class:`TaskFileError` on any problem, naming the field."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{path}: not valid TOML: {exc}") from None
    header = _Fields(data.get("suite"), f"{path} [suite]")
    header.check_unknown({"name", "domain", "description"})
    suite = header.get("name", str)
    domain = header.get("domain", str, choices=domain_names())
    unknown = sorted(set(data) - {"suite", "task"})
    if unknown:
        raise TaskFileError(f"{path}: unknown top-level table(s) {unknown}; known: suite, task")
    tables = data.get("task", [])
    if not isinstance(tables, list) or not tables:
        raise TaskFileError(f"{path}: field 'task': expected at least one [[task]] table")
    tasks = [parse_task(t, suite, domain, f"{path} task #{i + 1}") for i, t in enumerate(tables)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskFileError(f"{path}: field 'name': {task.id!r} appears twice")
        seen.add(task.id)
    return Suite(suite, domain, header.get("description", str, ""), tuple(tasks))
