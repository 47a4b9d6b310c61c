"""What a suite's reference tool calls span: the tools they use, the ranges and the names of their
parameters, and the derived values they read; each reference call parsed once.

:class:`SuiteVocabulary` holds a suite's reference calls parsed against a registry
(:class:`ParsedCall`), once each; :func:`suite_tools`, :func:`suite_ranges`, :func:`text_choices`
and :func:`suite_derived` take such parsed calls (or raw ones, parsed there).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolgym.envs.grammar.derived import CATALOGUE, CallContext, Derived, derivation
from toolgym.envs.grammar.tables import DIGITS, Grammar, Ranges, Slot
from toolgym.envs.tools import ToolRegistry

DEFAULT_MARGIN = 0.1  # a suite range is widened by this share of its span on each side
# A derived value joins a slot when this share of the reference episodes that fill the slot
# read a value so (and at least two do): fewer are coincidences (half of one number minus
# another that happens to equal a third).
DERIVED_MIN_SHARE = 0.05


@dataclasses.dataclass(frozen=True)
class ParsedCall:
    """A tool call parsed against a registry: its tool's name and every argument, defaults
    filled in (what ``ToolRegistry.parse_call`` gives)."""

    name: str
    arguments: Mapping[str, Any]


def parse_calls(registry: ToolRegistry, calls: Iterable[Any]) -> list[ParsedCall]:
    """Each call parsed by ``registry``; one already parsed (a :class:`ParsedCall`) is kept."""
    parsed = []
    for call in calls:
        if not isinstance(call, ParsedCall):
            tool, arguments = registry.parse_call(call)
            call = ParsedCall(tool.name, arguments)
        parsed.append(call)
    return parsed


@dataclasses.dataclass(frozen=True)
class ReferenceEpisode:
    """A task's prompt and its reference calls, parsed, and its family (if it names one)."""

    prompt: str
    tool_calls: tuple[ParsedCall, ...]
    family: str | None = None


@dataclasses.dataclass(frozen=True)
class SuiteVocabulary:
    """A suite's reference calls, each parsed once: the training split's (``train``: the
    grammar's ranges and tools), every split's (``every``: the names the prompts give), and the
    training tasks that have calls (``episodes``: the derived values and the stop operation)."""

    train: tuple[ParsedCall, ...]
    every: tuple[ParsedCall, ...]
    episodes: tuple[ReferenceEpisode, ...]

    @classmethod
    def of(
        cls, registry: ToolRegistry, tasks: Sequence[Any], train: Sequence[Any]
    ) -> SuiteVocabulary:
        """From a suite's ``tasks`` and those of its training split (``train``), each with an
        ``id``, a ``prompt`` and its ``tool_calls``."""
        parsed = {t.id: tuple(parse_calls(registry, t.tool_calls or ())) for t in tasks}
        for task in train:  # (a split's tasks are the suite's: nothing is parsed twice)
            if task.id not in parsed:
                parsed[task.id] = tuple(parse_calls(registry, task.tool_calls or ()))
        return cls(
            train=tuple(c for t in train for c in parsed[t.id]),
            every=tuple(c for t in tasks for c in parsed[t.id]),
            episodes=tuple(
                ReferenceEpisode(t.prompt, parsed[t.id], getattr(t, "family", None))
                for t in train
                if t.tool_calls
            ),
        )


def suite_tools(registry: ToolRegistry, calls: Iterable[Any]) -> list[str]:
    """The tools the given calls use, in the registry's order."""
    used = {call.name for call in parse_calls(registry, calls)}
    return [name for name in registry.tools if name in used]


def suite_ranges(
    registry: ToolRegistry, calls: Iterable[Any], margin: float = DEFAULT_MARGIN
) -> dict[str, Any]:
    """Per-parameter ranges that the given reference tool calls use (defaults filled in).

    Numbers: ``(low, high)``, or ``(low, high, step)`` when the calls use values off the
    parameter's own step (then half or a quarter of it, the coarsest that holds them, or a
    quarter); choices: the ones used, in the registry's order; points: ``{"count": (fewest,
    most), "a": (low, high[, step]), "b": (...)}`` over all their points.
    Number ranges are widened by ``margin`` of their span on each side (onto the parameter's
    step, inside its bounds): the calls are a sample, and other tasks of the suite reach a
    little further. They also reach what the sample says nothing against (:func:`_pooled`):
    the axes ``x``, ``y``, ``z`` of one tool's turn or scale share one range (a suite that
    turns things about X may turn them about Y), and an angle's range is symmetric about 0 (a
    tilt one way may be a tilt the other); positions keep their own range per axis. So a task
    outside the sample, a test task, stays expressible, without its values being looked at.
    """
    seen: dict[str, list[Any]] = {}
    for call in parse_calls(registry, calls):
        for name, value in call.arguments.items():
            seen.setdefault(f"{call.name}.{name}", []).append(value)
    seen = _pooled(registry, seen)
    ranges: dict[str, Any] = {}
    for key, values in seen.items():
        tool, name = key.split(".", 1)
        spec = registry.grammar()[tool]["params"][name]
        if spec["kind"] == "string":
            choices = spec["choices"] or list(dict.fromkeys(values))  # free text: as first used
            ranges[key] = [c for c in choices if c in values]
        elif spec["kind"] == "points":
            points = [pt for value in values for pt in value]
            ranges[key] = {
                # From the registry's fewest (3): a test part may have fewer than training's.
                "count": (min(3, *map(len, values)), max(map(len, values))),
                "a": _widen([p[0] for p in points], spec, margin),
                "b": _widen([p[1] for p in points], spec, margin),
            }
        else:
            ranges[key] = _widen(values, spec, margin)
    return ranges


AXES = ("x", "y", "z")


# Axis parameters pooled across axes: turns (degrees) and scale factors (no unit), the same kind
# of thing about any axis. Positions and lengths are not: a suite's floor is at z = 0.
POOLED_UNITS = ("deg", None)


def _pooled(registry: ToolRegistry, seen: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """``seen`` with the number values of one tool's axis parameters (``x``, ``y``, ``z`` of
    one kind, unit and bounds) pooled where they are turns or factors (:data:`POOLED_UNITS`),
    and angles (unit ``deg``) mirrored about 0."""
    spec = registry.grammar()
    pooled = dict(seen)
    for tool, info in spec.items():
        groups: dict[tuple[Any, ...], list[str]] = {}
        for name in AXES:
            p = info["params"].get(name)
            if p is not None and p["kind"] in ("number", "integer"):
                groups.setdefault((p["kind"], p["unit"], p["min"], p["max"], p["step"]), [])
                groups[(p["kind"], p["unit"], p["min"], p["max"], p["step"])].append(name)
        for (_, unit, *_), names in groups.items():
            if unit not in POOLED_UNITS:
                continue  # a position's range says where the suite's parts lie: kept per axis
            keys = [f"{tool}.{name}" for name in names if f"{tool}.{name}" in seen]
            values = [v for key in keys for v in seen[key]]
            if unit == "deg":
                values += [-v for v in values]
            for key in keys:
                pooled[key] = values
    return pooled


def text_choices(registry: ToolRegistry, calls: Iterable[Any]) -> dict[str, list[str]]:
    """Choices for the text parameters the registry leaves open (``choices=None``: object,
    modifier, material names), from the values the given tool calls use, as first used.

    A parameter the calls never fill takes the values of the parameters of the same name (a
    ``name`` is an object's name whatever the tool); one with none is left out, and a grammar
    over its tool raises (see :func:`usable_tools`).
    """
    spec = registry.grammar()
    open_params = {
        f"{tool}.{name}": name
        for tool, info in spec.items()
        for name, p in info["params"].items()
        if p["kind"] == "string" and not p["choices"]
    }
    seen: dict[str, list[str]] = {}
    by_name: dict[str, list[str]] = {}
    for call in parse_calls(registry, calls):
        for name, value in call.arguments.items():
            key = f"{call.name}.{name}"
            if key in open_params and isinstance(value, str):
                seen.setdefault(key, []).append(value)
                by_name.setdefault(name, []).append(value)
    choices = {}
    for key, name in open_params.items():
        values = seen.get(key) or by_name.get(name)
        if values:
            choices[key] = list(dict.fromkeys(values))
    return choices


def usable_tools(registry: ToolRegistry, ranges: Ranges) -> list[str]:
    """The registry's tools whose every text parameter has choices (its own, or in ``ranges``)."""
    return [
        tool
        for tool, info in registry.grammar().items()
        if all(
            p["kind"] != "string" or p["choices"] or ranges.get(f"{tool}.{name}")
            for name, p in info["params"].items()
        )
    ]


def _widen(values: list[float], spec: Mapping[str, Any], margin: float) -> tuple[float, ...]:
    """``values``' range widened by ``margin`` of its span, inside the parameter's bounds, with
    both ends on multiples of its step (so the grid holds the round values tasks use)."""
    low, high = min(values), max(values)
    extra, step = margin * (high - low), spec["step"] or 1e-9
    extra_low = max(low - extra, spec["min"]) if spec["min"] is not None else low - extra
    extra_high = high + extra if spec["max"] is None else min(high + extra, spec["max"])
    low = min(low, math.ceil(extra_low / step - 1e-9) * step)
    high = max(high, math.floor(extra_high / step + 1e-9) * step)
    if spec["step"] is None or spec["kind"] == "integer":
        return round(low, DIGITS), round(high, DIGITS)
    finer = next(
        (s for s in (step, step / 2, step / 4) if all(_on_grid(v, s) for v in values)), step / 4
    )
    if finer == step:
        return round(low, DIGITS), round(high, DIGITS)
    return round(low, DIGITS), round(high, DIGITS), finer


def _on_grid(value: float, step: float) -> bool:
    return abs(value / step - round(value / step)) < 1e-6


def suite_derived(
    grammar: Grammar,
    episodes: Iterable[tuple[Sequence[float], Sequence[Any]]],
    min_share: float = DERIVED_MIN_SHARE,
    groups: Sequence[Any] | None = None,
) -> dict[str, list[str]]:
    """The derived values worth a token in each parameter's slot, from reference episodes
    (each: the prompt's numbers in reading order, and its tool calls, raw or parsed): a value's
    first reading
    (:data:`CATALOGUE`'s order; none for a 0), kept where ``min_share`` of the episodes that
    fill the slot read a value so. Only what the references need: a suite whose calls copy
    their numbers gains a copy token per slot and number position it copies from (for numbers
    past the bins), little next to its bins.

    With ``shared_points``, a polygon's coordinates too (a profile's radius is half a
    diameter the prompt gives), under ``"tool.param.a"`` and ``"tool.param.b"``.

    ``groups``: per episode, its group (a CAD family); the share is then counted within each
    group, so a reading one family of fifty always uses is kept (a hole's offset from an
    edge), where across all of them it would be a coincidence's share."""
    uses: dict[tuple[str, Any], dict[Derived, set[int]]] = {}
    filled: dict[tuple[str, Any], set[int]] = {}
    groups = list(groups) if groups is not None else None
    for episode, (numbers, calls) in enumerate(episodes):
        group = groups[episode] if groups is not None else None
        previous = None
        for call in calls:
            if isinstance(call, ParsedCall):  # parsed once, by the registry the grammar has
                name, arguments = call.name, call.arguments
            else:
                name, arguments = grammar.arguments(call)
            context = CallContext(tuple(float(n) for n in numbers), previous)
            for slot in grammar.slots.get(name, ()):
                value, where = _slot_value(grammar, slot, arguments)
                if where is None or not isinstance(value, int | float):
                    continue
                key = (f"{name}.{where}", group)
                filled.setdefault(key, set()).add(episode)
                first = derivation(float(value), context, slot.param) if value != 0 else None
                if first is None:
                    continue
                uses.setdefault(key, {}).setdefault(first, set()).add(episode)
            previous = {"name": name, "arguments": arguments}
    order = {d: i for i, d in enumerate(CATALOGUE)}
    kept: dict[str, set[Derived]] = {}
    for (key, group), found in uses.items():
        enough = max(2, min_share * len(filled[(key, group)]))
        kept.setdefault(key, set()).update(d for d, seen in found.items() if len(seen) >= enough)
    return {
        key: [str(d) for d in sorted(ds, key=order.__getitem__)] for key, ds in kept.items() if ds
    }


def _slot_value(grammar: Grammar, slot: Slot, arguments: Mapping[str, Any]) -> tuple[Any, Any]:
    """The value a call gives a numeric slot and the key its derived values go under
    (``"param"``; a point's coordinate, with ``shared_points``: ``"param.a"`` or ``"param.b"``),
    or ``(None, None)`` where the slot holds none."""
    if slot.kind == "value" and slot.numeric:
        return arguments.get(slot.param), slot.param
    if slot.kind == "coord" and grammar.shared_points:
        points = arguments.get(slot.param) or ()
        if slot.point < len(points):
            return points[slot.point][slot.coord], f"{slot.param}.{'ab'[slot.coord]}"
    return None, None
