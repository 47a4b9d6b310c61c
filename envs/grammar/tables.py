"""A discrete action grammar for tool calls, derived from a tool registry's ``grammar()``.

A tool call is a fixed-length sequence of ``length`` tokens::

    [operation] [one token per parameter slot of that operation ...] [STOP] [PAD ...]

- The operation token names the tool.
- Each parameter slot has its own contiguous range of tokens, one per *bin*: the parameter's
  choices, or numbers on a grid inside its range. A ``points`` parameter (a polygon or profile)
  takes one *count* slot, then two coordinate slots (``a``, ``b``) for each of up to
  ``max_points`` points; the coordinates of points past the count are ``PAD``.
- ``STOP`` follows the last slot; ``PAD`` fills the rest.

Two options let the grammar say what a prompt does not spell (the trainer sets both from its
suite's references):

- ``stop=True``: one more operation, ``stop`` (no slots): the call ``{"name": "stop"}`` that
  ends the episode (see ``toolgym.envs.episode.loop``).
- ``derived``: a real-valued parameter's slot also holds *derived* tokens (:class:`Derived`)
  after its bins: a prompt number halved, doubled, negated; the sum or difference of two, half
  of one minus another; positions relative to the previous applied call (its top, its top plus
  half a number, its value of the same parameter). :meth:`Grammar.decode` computes them in a
  :class:`CallContext` (the prompt's numbers, the previous call), exactly, not snapped to a
  bin; one that refers to nothing (no previous call, a number the prompt lacks) decodes to a
  call the environment rejects with a one-line message. A slot holds only the derived values
  its suite's references use (:func:`suite_derived`), so copying suites keep their vocabulary.

Which token may come next depends only on the tokens before it (the operation, and a points
parameter's count), so :meth:`Grammar.allowed` gives an autoregressive decoder its masks, and the
tables :attr:`Grammar.slot_lo` etc. let it build them for a batch without Python loops;
:attr:`Grammar.bin_values` lets it snap a number it read to a numeric slot's token.

Bins come from the registry's ranges (capped at ``max_bins`` per parameter, on a multiple of the
parameter's ``step``), or from a suite's own ranges (:func:`suite_ranges`): what its reference
tool calls use, which is far narrower than what the registry allows.

A text parameter's tokens are its choices. Where the registry gives none (Blender's object,
modifier and material names: any string), they come from a suite (:func:`text_choices`: the
names its tasks' tool calls use); a grammar over a text parameter with no choices from either
raises ``ValueError`` naming it.

Numbers are in the registry's units (mm, degrees).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.envs.tools import ToolCallError, ToolRegistry

PAD, STOP = 0, 1
STOP_TOOL = "stop"  # the operation that ends an episode (``toolgym.envs.episode.loop.STOP_CALL``)
DEFAULT_MAX_BINS = 256
DEFAULT_MARGIN = 0.1  # a suite range is widened by this share of its span on each side
DEFAULT_MAX_POINTS = 8
DIGITS = 6  # decoded numbers are rounded to this many decimals (no 0.30000000000000004)
DERIVED_NUMBERS = 16  # derived values refer to the prompt's first numbers (the pointer's reach)
# A derived value joins a slot when this share of the reference episodes that fill the slot
# read a value so (and at least two do): fewer are coincidences (half of one number minus
# another that happens to equal a third).
DERIVED_MIN_SHARE = 0.05
# How a value is derived, the likelier reading first (the first that matches is the one used):
# from one prompt number "a", two ("a", "b"), or the previous applied call.
UNARY = ("copy", "neg", "half", "neg_half", "double", "prev_top_plus_half")
BINARY = ("half_minus", "neg_half_minus", "sum", "difference")
NULLARY = ("prev_top", "prev_same")
PREVIOUS = ("prev_top_plus_half", "prev_top", "prev_same")


class DerivedValueError(ValueError):
    """A derived value that refers to nothing (no previous call, a number the prompt lacks)."""


@dataclasses.dataclass(frozen=True)
class Derived:
    """A value computed from the prompt's numbers ``a`` and ``b`` (0-based, in reading order;
    -1: unused) and the previous applied call; see :data:`UNARY`, :data:`BINARY`,
    :data:`NULLARY`. Its text form (``"half:2"``, ``"half_minus:0:3"``, ``"prev_top"``) is
    what a grammar's ``derived`` argument lists."""

    op: str
    a: int = -1
    b: int = -1

    @classmethod
    def parse(cls, text: str) -> Derived:
        op, *numbers = text.split(":")
        arity = 1 if op in UNARY else 2 if op in BINARY else 0 if op in NULLARY else -1
        if arity != len(numbers):
            raise ValueError(f"{text!r}: not a derived value (e.g. 'half:2', 'sum:0:1')")
        return cls(op, *(int(n) for n in numbers))

    def __str__(self) -> str:
        return ":".join([self.op, *(str(i) for i in (self.a, self.b) if i >= 0)])

    def describe(self) -> str:
        a, b = f"number {self.a + 1}", f"number {self.b + 1}"
        return {
            "copy": a, "neg": f"minus {a}", "half": f"half of {a}",
            "neg_half": f"minus half of {a}", "double": f"twice {a}",
            "prev_top_plus_half": f"the previous call's top + half of {a}",
            "sum": f"{a} + {b}", "difference": f"{a} - {b}", "half_minus": f"half of {a} - {b}",
            "neg_half_minus": f"{b} - half of {a}", "prev_top": "the previous call's top",
            "prev_same": "the previous call's value of this parameter",
        }[self.op]  # fmt: skip

    def value(self, context: CallContext, param: str) -> float:
        """The number this stands for in ``context``; ``DerivedValueError`` says why there is
        none."""
        numbers = context.numbers
        used = [i for i in (self.a, self.b) if i >= 0]
        if any(i >= len(numbers) for i in used):
            raise DerivedValueError(f"{self.describe()}: the prompt has {len(numbers)} number(s)")
        n = [float(numbers[i]) for i in used]
        if self.op in PREVIOUS:
            if context.previous is None:
                raise DerivedValueError(f"{self.describe()}: there is no previous call")
            arguments = context.previous.get("arguments", {})
            if self.op == "prev_same":
                if not isinstance(arguments.get(param), int | float):
                    raise DerivedValueError(f"{self.describe()}: the previous call has no {param}")
                return float(arguments[param])
            top = _top(arguments)
            if top is None:
                raise DerivedValueError(f"{self.describe()}: the previous call built no Z extent")
            return top if self.op == "prev_top" else top + n[0] / 2
        return {
            "copy": lambda: n[0], "neg": lambda: -n[0], "half": lambda: n[0] / 2,
            "neg_half": lambda: -n[0] / 2, "double": lambda: 2 * n[0],
            "sum": lambda: n[0] + n[1], "difference": lambda: n[0] - n[1],
            "half_minus": lambda: n[0] / 2 - n[1], "neg_half_minus": lambda: n[1] - n[0] / 2,
        }[self.op]()  # fmt: skip


def _top(arguments: Mapping[str, Any]) -> float | None:
    """The top (highest Z) of what a call built, where its arguments say: a centre ``z`` and a
    ``height`` along Z (boxes, cylinders) or a ``diameter`` (spheres)."""
    z = arguments.get("z")
    if not isinstance(z, int | float) or arguments.get("axis", "Z") != "Z":
        return None
    extent = arguments.get("height", arguments.get("diameter"))
    return float(z) + float(extent) / 2 if isinstance(extent, int | float) else None


def derived_catalogue(numbers: int = DERIVED_NUMBERS) -> tuple[Derived, ...]:
    """Every derived value, in the order a value is read as one (copying first)."""
    pairs = [(a, b) for a in range(numbers) for b in range(numbers) if a != b]
    return (
        *(Derived(op, a) for op in UNARY for a in range(numbers)),
        *(Derived(op, a, b) for op in BINARY for a, b in pairs if op != "sum" or a < b),
        *(Derived(op) for op in NULLARY),
    )


CATALOGUE = derived_catalogue()


@dataclasses.dataclass(frozen=True)
class CallContext:
    """What derived values are computed from: the prompt's numbers in reading order (as
    ``toolgym.agents.policy.prompt_numbers`` reads them) and the episode's previous applied call
    (``None`` at its start)."""

    numbers: tuple[float, ...] = ()
    previous: Mapping[str, Any] | None = None


def derivation(value: float, context: CallContext, param: str,
               candidates: Sequence[Derived] = CATALOGUE) -> Derived | None:  # fmt: skip
    """The first of ``candidates`` worth exactly ``value`` in ``context``, else ``None``."""
    for derived in candidates:
        try:
            if abs(derived.value(context, param) - value) < 1e-6:
                return derived
        except DerivedValueError:
            continue
    return None


def _failed(feedback: str) -> bool:
    """Whether an env's feedback says its last step failed (its last line is the error)."""
    return feedback.rsplit("\n", 1)[-1].startswith("error:")


def _parsed(call: str) -> dict[str, Any] | None:
    try:
        value = json.loads(call)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class EpisodeContexts:
    """Each env's :class:`CallContext` in a vector env, followed from what the envs show: the
    prompt's numbers, and the last call the env applied (none at a new episode; a step whose
    feedback ends in an error applied nothing, so the call before it stays the previous one).

    Each step: :meth:`decode` (or :meth:`contexts`, then :meth:`sent`)."""

    def __init__(self, count: int) -> None:
        self.applied: list[dict[str, Any] | None] = [None] * count
        self.pending: list[dict[str, Any] | None] = [None] * count

    def contexts(self, observations: Mapping[str, Any], numbers: np.ndarray,
                 number_at: np.ndarray) -> list[CallContext]:  # fmt: skip
        """Per env, the context of its next call (``numbers``, ``number_at``: as
        ``toolgym.agents.policy.prompt_numbers`` reads the prompts)."""
        out = []
        for i in range(len(self.applied)):
            if int(observations["step"][i]) == 0:
                self.applied[i] = None
            elif self.pending[i] is not None and not _failed(str(observations["feedback"][i])):
                self.applied[i] = self.pending[i]
            self.pending[i] = None
            found = tuple(float(n) for n, at in zip(numbers[i], number_at[i], strict=True)
                          if at >= 0)  # fmt: skip
            out.append(CallContext(found, self.applied[i]))
        return out

    def sent(self, calls: Sequence[str]) -> None:
        """The calls just sent (JSON text), one per env."""
        self.pending = [_parsed(call) for call in calls]

    def decode(self, grammar: Grammar, tokens: np.ndarray, observations: Mapping[str, Any],
               numbers: np.ndarray, number_at: np.ndarray) -> list[str]:  # fmt: skip
        """The JSON calls ``tokens`` (one row per env) spell, each in its env's context."""
        contexts = self.contexts(observations, numbers, number_at)
        calls = [grammar.decode_json(row, c) for row, c in zip(tokens, contexts, strict=True)]
        self.sent(calls)
        return calls


@dataclasses.dataclass(frozen=True)
class Slot:
    """One token position of a tool: a parameter (or one coordinate of one of its points).

    ``values[i]`` is what token ``start + i`` means, and ``derived[j]`` what token
    ``start + len(values) + j`` means. ``kind`` is ``"value"`` (a number, integer
    or choice), ``"count"`` (how many points), or ``"coord"`` (coordinate ``coord`` of point
    ``point``).
    """

    tool: str
    param: str
    kind: str
    values: tuple[Any, ...]
    start: int
    point: int = -1
    coord: int = -1
    derived: tuple[Derived, ...] = ()  # tokens after the bins: values derived in context

    @property
    def stop(self) -> int:
        return self.start + len(self.values) + len(self.derived)


Ranges = Mapping[
    str, Any
]  # "tool.param" -> (low, high) | [choices] | {"count": .., "a": .., "b": ..}


def _grid(low: float, high: float, step: float | None, max_bins: int, integer: bool) -> tuple:
    """Numbers from ``low`` to ``high`` inclusive on a multiple of ``step`` (widened so that there
    are at most ``max_bins``)."""
    low, high = float(low), float(high)
    if high <= low:
        return (int(low) if integer else round(low, DIGITS),)
    step = step or (1.0 if integer else (high - low) / (max_bins - 1))
    if (high - low) / step + 1 > max_bins:
        step = math.ceil((high - low) / (max_bins - 1) / step - 1e-9) * step
    count = math.floor((high - low) / step + 1e-9) + 1
    values = [low + i * step for i in range(count)]
    if high - values[-1] > 1e-9:
        values.append(high)  # the range's end is always a bin
    if integer:
        return tuple(sorted({round(v) for v in values}))
    return tuple(round(v, DIGITS) for v in values)


class Grammar:
    """Tokens for the tool calls of one registry; see the module docstring.

    Args:
        registry: the domain's tools.
        ranges: optional per-parameter ranges (``"tool.param"`` keys), e.g. from
            :func:`suite_ranges`; others come from the registry.
        max_bins: most bins per numeric slot.
        max_points: most points of a ``points`` parameter.
        tools: the operations (by default every tool of the registry); e.g. only those a
            suite's references use, which the trainer does by default.
        derived: per parameter (``"tool.param"``), the derived values (:class:`Derived`'s text
            form) its slot holds after its bins, e.g. from :func:`suite_derived`.
        stop: one more operation, ``stop`` (no slots): the call ``{"name": "stop"}`` that ends
            the episode (see ``toolgym.envs.episode.loop``).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        ranges: Ranges | None = None,
        max_bins: int = DEFAULT_MAX_BINS,
        max_points: int = DEFAULT_MAX_POINTS,
        tools: Sequence[str] | None = None,
        derived: Mapping[str, Sequence[str]] | None = None,
        stop: bool = False,
    ) -> None:
        self.registry, self.ranges = registry, dict(ranges or {})
        self.derived = {key: list(values) for key, values in (derived or {}).items() if values}
        self.stop = stop
        self.max_bins, self.max_points = max_bins, max_points
        spec = registry.grammar()
        unknown = sorted(set(tools or ()) - set(spec))
        if unknown:
            raise ValueError(f"unknown tool(s) {unknown}; known: {', '.join(spec)}")
        spec = {name: info for name, info in spec.items() if tools is None or name in tools}
        if not spec:
            raise ValueError("a grammar needs at least one tool")
        self.tools = None if tools is None else list(spec)
        self.ops = tuple(spec) + ((STOP_TOOL,) if stop else ())
        self.op_start = 2
        cursor = self.op_start + len(self.ops)
        self.slots: dict[str, tuple[Slot, ...]] = {}
        for tool, info in spec.items():
            slots: list[Slot] = []
            for param, p in info["params"].items():
                for slot in self._param_slots(tool, param, p, cursor):
                    slots.append(slot)
                    cursor = slot.stop
            self.slots[tool] = tuple(slots)
        if stop:
            self.slots[STOP_TOOL] = ()
        self.vocab_size = cursor
        self.length = 2 + max(len(s) for s in self.slots.values())
        self._tables()

    def _param_slots(self, tool: str, param: str, p: dict[str, Any], start: int) -> list[Slot]:
        known = self.ranges.get(f"{tool}.{param}")
        if p["kind"] == "string":
            if not known and not p["choices"]:
                raise ValueError(
                    f"{tool}.{param}: a text parameter with no finite set of values; give its "
                    "choices in ranges (text_choices draws them from a suite's tool calls)"
                )
            choices = tuple(known) if known else tuple(p["choices"])
            return [Slot(tool, param, "value", choices, start)]
        if p["kind"] == "points":
            known = known or {}
            counts = known.get("count", (3, self.max_points))
            count = Slot(tool, param, "count", tuple(range(counts[0], counts[1] + 1)), start)
            slots, cursor = [count], count.stop
            for i in range(counts[1]):
                for coord, axis in enumerate("ab"):
                    low, high, *finer = known.get(axis, (p["min"], p["max"]))
                    step = finer[0] if finer else p["step"]
                    values = _grid(low, high, step, self.max_bins, False)
                    slots.append(Slot(tool, param, "coord", values, cursor, i, coord))
                    cursor = slots[-1].stop
            return slots
        low, high, *finer = known if known else (p["min"], p["max"])
        step = finer[0] if finer else p["step"]
        values = _grid(low, high, step, self.max_bins, p["kind"] == "integer")
        derived = tuple(Derived.parse(d) for d in self.derived.get(f"{tool}.{param}", ()))
        return [Slot(tool, param, "value", values, start, derived=derived)]

    def _tables(self) -> None:
        """Per (operation, position) token ranges, for batched masks."""
        n, length = len(self.ops), self.length
        self.slot_lo = np.zeros((n, length), np.int64)  # allowed: lo <= token < hi
        self.slot_hi = np.ones((n, length), np.int64)  # PAD by default
        self.point_of = np.full((n, length), -1, np.int64)  # the point a coordinate belongs to
        self.count_at = np.zeros((n, length), np.int64)  # the position of that param's count
        self.count_of_token = np.zeros(self.vocab_size, np.int64)  # count token -> count
        self.value_of_token: list[Any] = [None] * self.vocab_size
        # The numbers a numeric slot's tokens stand for (NaN past them, and for other slots): a
        # number read from the task's text snaps to a token of the slot with these.
        numeric = [s for slots in self.slots.values() for s in slots if _is_numeric(s)]
        width = max((len(s.values) for s in numeric), default=1)
        self.bin_values = np.full((n, length, width), np.nan)
        for o, tool in enumerate(self.ops):
            self.slot_lo[o, 0], self.slot_hi[o, 0] = self.op_start, self.op_start + n
            count_position = 0
            for k, slot in enumerate(self.slots[tool]):
                t = k + 1
                self.slot_lo[o, t], self.slot_hi[o, t] = slot.start, slot.stop
                if slot.kind == "count":
                    count_position = t
                    self.count_of_token[slot.start : slot.stop] = slot.values
                if slot.kind == "coord":
                    self.point_of[o, t], self.count_at[o, t] = slot.point, count_position
                for i, value in enumerate((*slot.values, *slot.derived)):
                    self.value_of_token[slot.start + i] = value
                if _is_numeric(slot):
                    self.bin_values[o, t, : len(slot.values)] = slot.values
            end = len(self.slots[tool]) + 1
            self.slot_lo[o, end], self.slot_hi[o, end] = STOP, STOP + 1

    # -- masks --------------------------------------------------------------------------------
    def allowed(self, prefix: Sequence[int]) -> tuple[int, int]:
        """The tokens allowed after ``prefix``: ``range(lo, hi)``."""
        t = len(prefix)
        if t >= self.length:
            raise ValueError(f"a call has {self.length} tokens; the prefix already has {t}")
        if t == 0:
            return self.op_start, self.op_start + len(self.ops)
        o = int(prefix[0]) - self.op_start
        point = self.point_of[o, t]
        if point >= 0 and point >= self.count_of_token[prefix[self.count_at[o, t]]]:
            return PAD, PAD + 1
        return int(self.slot_lo[o, t]), int(self.slot_hi[o, t])

    def mask(self, prefix: Sequence[int]) -> np.ndarray:
        """Boolean ``(vocab_size,)``: which tokens may follow ``prefix``."""
        lo, hi = self.allowed(prefix)
        out = np.zeros(self.vocab_size, bool)
        out[lo:hi] = True
        return out

    def valid(self, tokens: Sequence[int]) -> bool:
        """Whether every token of a full sequence is allowed after the ones before it."""
        if len(tokens) != self.length:
            return False
        return all(
            (lambda lo, hi: lo <= tokens[t] < hi)(*self.allowed(tokens[:t]))
            for t in range(self.length)
        )

    def sample(self, rng: np.random.Generator) -> list[int]:
        """Uniformly random allowed tokens, one position at a time."""
        tokens: list[int] = []
        while len(tokens) < self.length:
            lo, hi = self.allowed(tokens)
            tokens.append(int(rng.integers(lo, hi)))
        return tokens

    # -- calls ----------------------------------------------------------------------------------
    def decode(
        self, tokens: Sequence[int], context: CallContext | None = None, strict: bool = True
    ) -> dict[str, Any]:
        """The tool call ``{"name": ..., "arguments": {...}}`` that ``tokens`` spell (every
        parameter given), derived values computed in ``context``. Raises ``ValueError`` for a
        sequence the grammar forbids, and (``strict``) ``DerivedValueError`` for a derived value
        that refers to nothing; not ``strict``, that parameter's value is the reason, a text."""
        if not self.valid(tokens):
            raise ValueError(f"not a valid token sequence: {list(tokens)}")
        tool = self.ops[tokens[0] - self.op_start]
        arguments: dict[str, Any] = {}
        for slot, token in zip(self.slots[tool], tokens[1:], strict=False):
            value = self.value_of_token[token] if token != PAD else None
            if isinstance(value, Derived):
                try:
                    value = round(value.value(context or CallContext(), slot.param), DIGITS)
                except DerivedValueError as exc:
                    if strict:
                        raise
                    value = str(exc)  # the env rejects the call with one line quoting it
            if slot.kind == "value":
                arguments[slot.param] = value
            elif slot.kind == "count":
                arguments[slot.param] = [[0.0, 0.0] for _ in range(value)]
            elif value is not None:
                arguments[slot.param][slot.point][slot.coord] = value
        return {"name": tool, "arguments": arguments}

    def decode_json(self, tokens: Sequence[int], context: CallContext | None = None) -> str:
        """:meth:`decode` as the JSON text an environment takes. A derived value that refers to
        nothing makes an invalid call: the parameter's value is the reason, so the environment
        rejects the call with one line naming the parameter and why (a penalty, nothing
        changed)."""
        return json.dumps(self.decode(tokens, context, strict=False))

    def encode(self, call: Any, context: CallContext | None = None) -> list[int]:
        """Tokens for a call (a dict or JSON text), each value snapped to its nearest bin; in a
        ``context``, a value the slot can derive exactly takes that derived token (when it is
        the value's first reading, or the value is on no bin), so that it stays exact.

        Defaults are filled in; the call's parameters are checked one by one, not against each
        other (a polygon with no area still encodes). A points list longer than ``max_points`` is
        cut to its first points. Raises ``ToolCallError`` for a call that names no tool or
        has a malformed parameter."""
        if self.stop and _call_name(call) == STOP_TOOL:
            tokens = [self.op_start + self.ops.index(STOP_TOOL), STOP]
            return tokens + [PAD] * (self.length - len(tokens))
        name, arguments = self._arguments(call)
        if name not in self.ops:
            raise ToolCallError(f"{name}: not one of this grammar's tools ({', '.join(self.ops)})")
        tokens = [self.op_start + self.ops.index(name)]
        count = 0
        for slot in self.slots[name]:
            value = arguments[slot.param]
            if slot.kind == "count":
                count = min(max(len(value), slot.values[0]), slot.values[-1])
                tokens.append(slot.start + slot.values.index(count))
            elif slot.kind == "coord":
                if slot.point >= count:
                    tokens.append(PAD)
                else:
                    tokens.append(slot.start + _nearest(slot.values, value[slot.point][slot.coord]))
            elif isinstance(value, str):
                tokens.append(slot.start + _nearest_choice(slot.values, value))
            elif (
                slot.derived
                and context is not None
                and (found := _derived_reading(slot, float(value), context)) is not None
            ):
                tokens.append(slot.start + len(slot.values) + slot.derived.index(found))
            else:
                tokens.append(slot.start + _nearest(slot.values, value))
        tokens.append(STOP)
        return tokens + [PAD] * (self.length - len(tokens))

    def _arguments(self, call: Any) -> tuple[str, dict[str, Any]]:
        """The tool's name and every argument, each checked alone, defaults filled in."""
        try:
            tool, arguments = self.registry.parse_call(call)
            return tool.name, arguments
        except ToolCallError:
            if isinstance(call, str | bytes):
                call = json.loads(call)
            tool = self.registry.tools.get(call.get("name")) if isinstance(call, dict) else None
            if tool is None or tool.check is None:
                raise
            arguments = dict(call.get("arguments", {}))
            check = dataclasses.replace(tool, check=None)
            return tool.name, self.registry._arguments(check, arguments)

    def snap(self, call: Any, context: CallContext | None = None) -> dict[str, Any]:
        """``call`` as the grammar can say it: its values snapped to the bins (in a
        ``context``, derived exactly where the slots can)."""
        return self.decode(self.encode(call, context), context)

    def describe(self) -> dict[str, Any]:
        """What rebuilds this grammar with :meth:`from_description` (for checkpoints; derived
        values and stop only where there are, so earlier checkpoints' grammars still match)."""
        options = {"derived": self.derived} if self.derived else {}
        return {"ranges": _plain(self.ranges), "max_bins": self.max_bins,
                "max_points": self.max_points, "tools": self.tools, **options,
                **({"stop": True} if self.stop else {})}  # fmt: skip

    @classmethod
    def from_description(cls, registry: ToolRegistry, description: Mapping[str, Any]) -> Grammar:
        return cls(registry, **description)


def _call_name(call: Any) -> Any:
    """A call's ``name`` when it is a dict or the JSON text of one, else ``None``."""
    try:
        call = json.loads(call) if isinstance(call, str | bytes) else call
    except ValueError:
        return None
    return call.get("name") if isinstance(call, dict) else None


def _on_bin(values: Sequence[Any], value: float) -> bool:
    return bool(np.any(np.abs(np.asarray(values, float) - value) < 1e-9))


def _derived_reading(slot: Slot, value: float, context: CallContext) -> Derived | None:
    """The slot's derived token for ``value`` in ``context``: the value's first reading
    (:data:`CATALOGUE`'s order) when the slot holds it, else (off every bin) any of the slot's
    that is worth it; ``None``: a bin says it. A copied number on a bin is the bin's (the
    policy's pointer copies onto bins); its copy token is for numbers past the bins."""
    first = derivation(value, context, slot.param)
    on_bin = _on_bin(slot.values, value)
    if first is not None and first in slot.derived and not (on_bin and first.op == "copy"):
        return first
    if on_bin:
        return None
    return derivation(value, context, slot.param, slot.derived)


def suite_derived(
    grammar: Grammar, episodes: Iterable[tuple[Sequence[float], Sequence[Any]]],
    min_share: float = DERIVED_MIN_SHARE,
) -> dict[str, list[str]]:  # fmt: skip
    """The derived values worth a token in each parameter's slot, from reference episodes
    (each: the prompt's numbers in reading order, and its tool calls): a value's first reading
    (:data:`CATALOGUE`'s order; none for a 0), kept where ``min_share`` of the episodes that
    fill the slot read a value so. Only what the references need: a suite whose calls copy
    their numbers gains a copy token per slot and number position it copies from (for numbers
    past the bins), little next to its bins."""
    uses: dict[str, dict[Derived, set[int]]] = {}
    filled: dict[str, set[int]] = {}
    for episode, (numbers, calls) in enumerate(episodes):
        previous = None
        for call in calls:
            name, arguments = grammar._arguments(call)
            context = CallContext(tuple(float(n) for n in numbers), previous)
            for slot in grammar.slots.get(name, ()):
                value = arguments.get(slot.param)
                if slot.kind != "value" or not _is_numeric(slot) or not isinstance(
                    value, int | float
                ):  # fmt: skip
                    continue
                key = f"{name}.{slot.param}"
                filled.setdefault(key, set()).add(episode)
                first = derivation(float(value), context, slot.param) if value != 0 else None
                if first is None:
                    continue
                uses.setdefault(key, {}).setdefault(first, set()).add(episode)
            previous = {"name": name, "arguments": arguments}
    order = {d: i for i, d in enumerate(CATALOGUE)}
    kept = {
        key: [d for d, seen in found.items() if len(seen) >= max(2, min_share * len(filled[key]))]
        for key, found in uses.items()
    }
    return {key: [str(d) for d in sorted(ds, key=order.__getitem__)]
            for key, ds in kept.items() if ds}  # fmt: skip


def _is_numeric(slot: Slot) -> bool:
    """A number's slot (a value or a coordinate, not a choice or a count)."""
    return slot.kind != "count" and not isinstance(slot.values[0], str)


def _nearest(values: tuple[Any, ...], value: float) -> int:
    return int(np.argmin(np.abs(np.asarray(values, float) - float(value))))


def _nearest_choice(values: tuple[Any, ...], value: str) -> int:
    return values.index(value) if value in values else 0


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def suite_tools(registry: ToolRegistry, calls: Iterable[Any]) -> list[str]:
    """The tools the given calls use, in the registry's order."""
    used = {registry.parse_call(call)[0].name for call in calls}
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
    for call in calls:
        tool, arguments = registry.parse_call(call)
        for name, value in arguments.items():
            seen.setdefault(f"{tool.name}.{name}", []).append(value)
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
                "count": (min(map(len, values)), max(map(len, values))),
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
    for call in calls:
        tool, arguments = registry.parse_call(call)
        for name, value in arguments.items():
            key = f"{tool.name}.{name}"
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
