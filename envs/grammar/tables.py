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
- ``derived``: a real-valued parameter's slot also holds *derived* tokens after its bins (a
  prompt number halved, the previous call's top...; see ``toolgym.envs.grammar.derived``).
- ``copies=K``: every real-valued slot (coordinates too) holds a copy token for each of the
  prompt's first ``K`` numbers, and :meth:`Grammar.encode` says a value equal to a prompt
  number with its copy token, bin or not: a copy is then exact, never snapped to a bin (a
  shared grammar's bins are 1-2 mm apart where one family needs 0.5 mm).
  :meth:`Grammar.decode` computes them in a ``CallContext``, exactly; one that refers to
  nothing decodes to a call the environment rejects with a one-line message. A slot holds only
  the derived values its suite's references use (``vocabulary.suite_derived``), so copying
  suites keep their vocabulary.

With ``shared_points``, every point of a ``points`` parameter says its coordinates with the
same tokens (one range per axis) rather than each point with its own, and the count is capped at
``max_points``: a grammar over many polygons then holds two ranges of bins per parameter where it
held ``2 · max_points`` (a gear's polygon alone gave 125,000 tokens).

Which token may come next depends only on the tokens before it (the operation, and a points
parameter's count), so :meth:`Grammar.allowed` gives an autoregressive decoder its masks, and the
tables :attr:`Grammar.slot_lo` etc. let it build them for a batch without Python loops;
:attr:`Grammar.bin_values` lets it snap a number it read to a numeric slot's token.

Bins come from the registry's ranges (capped at ``max_bins`` per parameter, on a multiple of the
parameter's ``step``), or from a suite's own ranges (``vocabulary.suite_ranges``): what its
reference tool calls use, which is far narrower than what the registry allows.

A text parameter's tokens are its choices. Where the registry gives none (Blender's object,
modifier and material names: any string), they come from a suite (``vocabulary.text_choices``:
the names its tasks' tool calls use); a grammar over a text parameter with no choices from either
raises ``ValueError`` naming it.

Numbers are in the registry's units (mm, degrees).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.envs.grammar.derived import CallContext, Derived, DerivedValueError, derivation
from toolgym.envs.tools import ToolCallError, ToolRegistry

PAD, STOP = 0, 1
STOP_TOOL = "stop"  # the operation that ends an episode (``toolgym.envs.episode.loop.STOP_CALL``)
DEFAULT_MAX_BINS = 256
DEFAULT_MAX_POINTS = 8
DIGITS = 6  # decoded numbers are rounded to this many decimals (no 0.30000000000000004)


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

    @property
    def numeric(self) -> bool:
        """A number's slot (a value or a coordinate, not a choice or a count)."""
        return self.kind != "count" and not isinstance(self.values[0], str)


Ranges = Mapping[
    str, Any
]  # "tool.param" -> (low, high) | [choices] | {"count": .., "a": .., "b": ..}


def _grid(
    low: float,
    high: float,
    step: float | None,
    max_bins: int,
    integer: bool,
    anchored: bool = False,
) -> tuple:
    """Numbers from ``low`` to ``high`` inclusive on a multiple of ``step`` (widened so that there
    are at most ``max_bins``), counted from ``low``, or (``anchored``) multiples of the step
    itself (0 and round numbers among them) between the range's ends."""
    low, high = float(low), float(high)
    if high <= low:
        return (int(low) if integer else round(low, DIGITS),)
    room = max_bins - 2 if anchored else max_bins  # anchored: both ends may fall between
    step = step or (1.0 if integer else (high - low) / (room - 1))
    if (high - low) / step + 1 > room:
        step = math.ceil((high - low) / (room - 1) / step - 1e-9) * step
    first = math.ceil(low / step - 1e-9) * step if anchored else low
    count = math.floor((high - first) / step + 1e-9) + 1
    values = [first + i * step for i in range(count)]
    if first - low > 1e-9:
        values.insert(0, low)  # the range's ends are always bins
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
            ``vocabulary.suite_ranges``; others come from the registry.
        max_bins: most bins per numeric slot.
        max_points: most points of a ``points`` parameter.
        tools: the operations (by default every tool of the registry); e.g. only those a
            suite's references use, which the trainer does by default.
        derived: per parameter (``"tool.param"``; a polygon's coordinates ``"tool.param.a"``
            and ``"tool.param.b"``), the derived values (:class:`Derived`'s text form) its slot
            holds after its bins, e.g. from ``vocabulary.suite_derived``.
        stop: one more operation, ``stop`` (no slots): the call ``{"name": "stop"}`` that ends
            the episode (see ``toolgym.envs.episode.loop``).
        copies: a copy token for each of the prompt's first ``copies`` numbers in every
            real-valued slot, read exactly (0: copies only where ``derived`` lists them).
        shared_points: one range of coordinate tokens per axis for all of a parameter's
            points, the count capped at ``max_points``.
        anchored: numeric bins on multiples of their step (0 among them), not counted from
            the range's low end (a range from -50.25 on 0.5 steps held no 0: a centred part's).
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
        copies: int = 0,
        shared_points: bool = False,
        anchored: bool = False,
    ) -> None:
        self.registry, self.ranges = registry, dict(ranges or {})
        self.derived = {key: list(values) for key, values in (derived or {}).items() if values}
        self.stop, self.copies, self.shared_points = stop, copies, shared_points
        self.anchored = anchored
        self._copy_tokens = tuple(Derived("copy", i) for i in range(copies))
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
                    cursor = max(cursor, slot.stop)  # shared points reuse their first's tokens
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
            if self.shared_points:
                counts = tuple(min(c, self.max_points) for c in counts)
            count = Slot(tool, param, "count", tuple(range(counts[0], counts[1] + 1)), start)
            slots, cursor = [count], count.stop
            axis_start: dict[int, int] = {}
            for i in range(counts[1]):
                for coord, axis in enumerate("ab"):
                    low, high, *finer = known.get(axis, (p["min"], p["max"]))
                    step = finer[0] if finer else p["step"]
                    values = _grid(low, high, step, self.max_bins, False, self.anchored)
                    at = axis_start.setdefault(coord, cursor) if self.shared_points else cursor
                    derived = self._derived(f"{tool}.{param}.{axis}", values)
                    slots.append(Slot(tool, param, "coord", values, at, i, coord, derived))
                    cursor = max(cursor, slots[-1].stop)
            return slots
        low, high, *finer = known if known else (p["min"], p["max"])
        step = finer[0] if finer else p["step"]
        values = _grid(low, high, step, self.max_bins, p["kind"] == "integer", self.anchored)
        derived = self._derived(f"{tool}.{param}", values)
        return [Slot(tool, param, "value", values, start, derived=derived)]

    def _derived(self, key: str, values: tuple[Any, ...]) -> tuple[Derived, ...]:
        """The derived tokens of ``key``'s slot: those ``derived`` lists and, for a real-valued
        slot, the copy tokens they lack (``copies``)."""
        derived = tuple(Derived.parse(d) for d in self.derived.get(key, ()))
        if not values or not isinstance(values[0], float):
            return derived
        return derived + tuple(c for c in self._copy_tokens if c not in derived)

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
        numeric = [s for slots in self.slots.values() for s in slots if s.numeric]
        width = max((len(s.values) for s in numeric), default=1)
        self.bin_values = np.full((n, length, width), np.nan)
        # The token that copies prompt number k exactly at each position (-1: none there).
        self.copy_token = np.full((n, length, self.copies), -1, np.int64)
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
                    if isinstance(value, Derived) and value.op == "copy" and value.a < self.copies:
                        self.copy_token[o, t, value.a] = slot.start + i
                if slot.numeric:
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
        name, arguments = self.arguments(call)
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
                    tokens.append(self._number_token(slot, value[slot.point][slot.coord], context))
            elif isinstance(value, str):
                tokens.append(slot.start + _nearest_choice(slot.values, value))
            else:
                tokens.append(self._number_token(slot, value, context))
        tokens.append(STOP)
        return tokens + [PAD] * (self.length - len(tokens))

    def _copy_token(self, slot: Slot, value: float, context: CallContext | None) -> int | None:
        """With ``copies``: the token copying the first prompt number equal to ``value``."""
        if not self.copies or context is None or not slot.derived:
            return None
        for i, number in enumerate(context.numbers[: self.copies]):
            copy = Derived("copy", i)
            if abs(float(number) - value) < 1e-6 and copy in slot.derived:
                return slot.start + len(slot.values) + slot.derived.index(copy)
        return None

    def _number_token(self, slot: Slot, value: float, context: CallContext | None) -> int:
        """A number's token (a value's or a coordinate's): its copy (see :meth:`_copy_token`),
        else, in a ``context``, a derived token that says it, else its nearest bin."""
        copied = self._copy_token(slot, float(value), context)
        if copied is not None:
            return copied
        if slot.derived and context is not None:
            found = _derived_reading(slot, float(value), context)
            if found is not None:
                return slot.start + len(slot.values) + slot.derived.index(found)
        return slot.start + _nearest(slot.values, value)

    def arguments(self, call: Any) -> tuple[str, dict[str, Any]]:
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
        if self.stop:
            options["stop"] = True
        if self.copies:
            options["copies"] = self.copies
        if self.shared_points:
            options["shared_points"] = True
        if self.anchored:
            options["anchored"] = True
        return {
            "ranges": _plain(self.ranges),
            "max_bins": self.max_bins,
            "max_points": self.max_points,
            "tools": self.tools,
            **options,
        }

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
