"""Values derived from a step's context, for a grammar's derived tokens.

A real-valued parameter's slot may hold *derived* tokens (:class:`Derived`) after its bins: a
prompt number halved, doubled, negated; the sum or difference of two, half of one minus another;
positions relative to the previous applied call (its top, its top plus half a number, its value
of the same parameter). They are computed in a :class:`CallContext` (the prompt's numbers, the
previous call), exactly, not snapped to a bin; one that refers to nothing (no previous call, a
number the prompt lacks) raises :class:`DerivedValueError`. :class:`EpisodeContexts` follows each
env's context through a vector env's steps.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

DERIVED_NUMBERS = 16  # derived values refer to the prompt's first numbers (the pointer's reach)
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
            "copy": a,
            "neg": f"minus {a}",
            "half": f"half of {a}",
            "neg_half": f"minus half of {a}",
            "double": f"twice {a}",
            "prev_top_plus_half": f"the previous call's top + half of {a}",
            "sum": f"{a} + {b}",
            "difference": f"{a} - {b}",
            "half_minus": f"half of {a} - {b}",
            "neg_half_minus": f"{b} - half of {a}",
            "prev_top": "the previous call's top",
            "prev_same": "the previous call's value of this parameter",
        }[self.op]

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
            "copy": lambda: n[0],
            "neg": lambda: -n[0],
            "half": lambda: n[0] / 2,
            "neg_half": lambda: -n[0] / 2,
            "double": lambda: 2 * n[0],
            "sum": lambda: n[0] + n[1],
            "difference": lambda: n[0] - n[1],
            "half_minus": lambda: n[0] / 2 - n[1],
            "neg_half_minus": lambda: n[1] - n[0] / 2,
        }[self.op]()


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
    ``toolgym.agents.trainer.observations.prompt_numbers`` reads them) and the episode's previous
    applied call (``None`` at its start)."""

    numbers: tuple[float, ...] = ()
    previous: Mapping[str, Any] | None = None


def derivation(
    value: float, context: CallContext, param: str, candidates: Sequence[Derived] = CATALOGUE
) -> Derived | None:
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


class CallDecoder(Protocol):
    """What :meth:`EpisodeContexts.decode` needs of a grammar (``toolgym.envs.grammar.Grammar``)."""

    def decode_json(self, tokens: Sequence[int], context: CallContext | None = None) -> str: ...


class EpisodeContexts:
    """Each env's :class:`CallContext` in a vector env, followed from what the envs show: the
    prompt's numbers, and the last call the env applied (none at a new episode; a step whose
    feedback ends in an error applied nothing, so the call before it stays the previous one).

    Each step: :meth:`decode` (or :meth:`contexts`, then :meth:`sent`)."""

    def __init__(self, count: int) -> None:
        self.applied: list[dict[str, Any] | None] = [None] * count
        self.pending: list[dict[str, Any] | None] = [None] * count

    def contexts(
        self, observations: Mapping[str, Any], numbers: np.ndarray, number_at: np.ndarray
    ) -> list[CallContext]:
        """Per env, the context of its next call (``numbers``, ``number_at``: as
        ``toolgym.agents.trainer.observations.prompt_numbers`` reads the prompts)."""
        out = []
        for i in range(len(self.applied)):
            if int(observations["step"][i]) == 0:
                self.applied[i] = None
            elif self.pending[i] is not None and not _failed(str(observations["feedback"][i])):
                self.applied[i] = self.pending[i]
            self.pending[i] = None
            pairs = zip(numbers[i], number_at[i], strict=True)
            found = tuple(float(n) for n, at in pairs if at >= 0)
            out.append(CallContext(found, self.applied[i]))
        return out

    def sent(self, calls: Sequence[str]) -> None:
        """The calls just sent (JSON text), one per env."""
        self.pending = [_parsed(call) for call in calls]

    def decode(
        self,
        grammar: CallDecoder,
        tokens: np.ndarray,
        observations: Mapping[str, Any],
        numbers: np.ndarray,
        number_at: np.ndarray,
    ) -> list[str]:
        """The JSON calls ``tokens`` (one row per env) spell, each in its env's context."""
        contexts = self.contexts(observations, numbers, number_at)
        calls = [grammar.decode_json(row, c) for row, c in zip(tokens, contexts, strict=True)]
        self.sent(calls)
        return calls
