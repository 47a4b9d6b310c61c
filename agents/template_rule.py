"""The template rule: the fixed rule a person writes for families of parts from worked examples.

Given the training split's tasks (each a prompt and its reference calls), it answers a request
with the calls of the training prompt nearest it in words, each number in them rewritten from
the request's numbers the way it came from the example's: a copy, a negation, a half or double,
or a sum of two (a hole's offset: half the side less the inset), or a step on from the previous
call's same argument (a section stacked on the last). A recipe must hold in every *sibling*
example (the same words, as many numbers, the same calls but for their numbers: one family said
one way), so that numbers that happen to agree in one example do not make the template. Nothing
is learnt: the examples are looked up, as a person would look up the family's drawing and fill
in its dimensions. On a family it has examples of, in a wording it has seen, it is as good as
reading the prompt gets; on a family it has none of, it writes the nearest one's calls.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolgym.agents.baselines import read_numbers
from toolgym.envs.episode.loop import STOP_CALL

FACTORS = (1.0, -1.0, 0.5, -0.5, 2.0, -2.0)  # one prompt number scaled
PAIR_FACTORS = (1.0, -1.0, 0.5, -0.5)  # two prompt numbers, each scaled, summed
COUNT_PENALTY = 0.02  # an example with as many numbers as the request is the likelier variant
_WORD = re.compile(r"[a-z]+")

# How a value of a call is rebuilt: the constant, or terms (index of a prompt number, factor).
Recipe = float | tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Example:
    """A worked example: its prompt's words, its numbers (value, the words naming it) and its
    reference calls with each numeric value replaced by its recipe."""

    words: frozenset[str]
    numbers: tuple[tuple[float, tuple[str, ...]], ...]
    calls: tuple[dict[str, Any], ...]


class TemplateAgent:
    """The nearest worked example's calls, refilled from the request (tool mode), then stop.

    ``examples``: (prompt, reference calls as JSON strings) pairs, the training split's. The
    nearest example is the one whose prompt shares the largest fraction of words with the
    request (numbers left out; Jaccard), a little less for each number more or fewer than the
    request has; its numbers are matched to the request's by the words
    naming them, else by position. Lengths are read in units of ``metres`` (CAD's mm by
    default; Blender's and the scenes' metres: 1.0), whatever unit the prompt writes."""

    def __init__(
        self, examples: Sequence[tuple[str, Sequence[str]]], metres: float = 0.001
    ) -> None:
        if not examples:
            raise ValueError("the template rule needs worked examples (a training split)")
        self.metres = metres
        self.examples = _examples(examples, metres)
        self._plans: dict[str, list[str]] = {}

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        """The plan's call for the observation's step (each prompt planned once), then stop."""
        prompt = str(observation.get("prompt", ""))
        plan = self._plans.get(prompt)
        if plan is None:
            plan = self._plans[prompt] = self.plan(prompt)
        step = int(observation.get("step", 0))
        return plan[step] if step < len(plan) else json.dumps({"name": STOP_CALL})

    def plan(self, prompt: str) -> list[str]:
        """The calls this rule writes for ``prompt``, in order."""
        words = frozenset(_WORD.findall(prompt.lower()))
        request = [(value, tuple(near)) for value, near, _ in read_numbers(prompt, self.metres)]

        def nearness(e: Example) -> float:  # words shared, less a little per number unmatched
            shared = len(words & e.words) / max(1, len(words | e.words))
            return shared - COUNT_PENALTY * abs(len(e.numbers) - len(request))

        example = max(self.examples, key=nearness)
        mapped = _match(example.numbers, request)
        own = [value for value, _ in example.numbers]
        values = [own[k] if j is None else request[j][0] for k, j in enumerate(mapped)]
        calls: list[dict[str, Any]] = []
        for call in example.calls:
            before = calls[-1].get("arguments", {}) if calls else {}
            calls.append(_filled(call, values, before))
        return [json.dumps(call) for call in calls]


def _examples(given: Sequence[tuple[str, Sequence[str]]], metres: float) -> list[Example]:
    """Each worked example with its recipes, each recipe one that holds in all its siblings."""
    read = []
    for prompt, calls in given:
        numbers = tuple((value, tuple(near)) for value, near, _ in read_numbers(prompt, metres))
        parsed = [json.loads(c) if isinstance(c, str) else c for c in calls]
        words = frozenset(_WORD.findall(prompt.lower()))
        read.append((words, numbers, parsed, _Explainer([v for v, _ in numbers])))
    keys = [
        (words, len(numbers), json.dumps(_layout(parsed))) for words, numbers, parsed, _ in read
    ]
    siblings: dict[Any, list[int]] = {}
    for k, key in enumerate(keys):
        siblings.setdefault(key, []).append(k)
    examples = []
    for k, (words, numbers, parsed, _) in enumerate(read):
        group = [k, *(j for j in siblings[keys[k]] if j != k)]
        explainers = [read[j][3] for j in group]
        calls = tuple(
            _recipe_of(
                [read[j][2][i] for j in group],
                explainers,
                [read[j][2][i - 1] for j in group] if i else None,
            )
            for i in range(len(parsed))
        )
        examples.append(Example(words=words, numbers=numbers, calls=calls))
    return examples


def _layout(value: Any) -> Any:
    """``value`` with its numbers left out: what siblings' calls share."""
    if isinstance(value, dict):
        return {k: _layout(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_layout(v) for v in value]
    return None if isinstance(value, int | float) and not isinstance(value, bool) else value


def _recipe_of(
    values: list[Any], explainers: list[_Explainer], previous: list[Any] | None, at: tuple = ()
) -> Any:
    """The first sibling's call (or a part of it at ``at``) with each number replaced by the
    recipe that gives it in every sibling (``values``: that call of each, ``previous``: the
    call before it, ``explainers``: their prompts'). An argument that is no one number of the
    prompt, but whose step from the previous call's same argument is one or two of them (a
    section stacked on the last: its z is the last one's plus half of each length), is that
    step on from it; else a sum of two; else the first sibling's constant."""
    first = values[0]
    if isinstance(first, dict):
        return {
            k: _recipe_of([v[k] for v in values], explainers, previous, (*at, k)) for k in first
        }
    if isinstance(first, list):
        return [
            _recipe_of([v[i] for v in values], explainers, previous, (*at, i))
            for i in range(len(first))
        ]
    if isinstance(first, bool) or not isinstance(first, int | float):
        return first
    numbers = [float(v) for v in values]
    integer = isinstance(first, int)
    recipe = _shared(explainers, numbers, "singles")
    if recipe is None and previous is not None and len(at) == 2 and at[0] == "arguments":
        lasts = [call.get("arguments", {}).get(at[1]) for call in previous]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in lasts):
            steps = [n - float(v) for n, v in zip(numbers, lasts, strict=True)]
            after = _shared(explainers, steps, "singles") or _shared(explainers, steps, "pairs")
            if after is not None:
                return _Leaf(after, integer, after=True)
    recipe = recipe or _shared(explainers, numbers, "pairs")
    return _Leaf(recipe if recipe is not None else first, integer)


def _shared(explainers: list[_Explainer], values: list[float], kind: str) -> Recipe | None:
    """The first recipe of ``kind`` ("singles" or "pairs") giving each sibling its value."""
    if values[0] == 0:
        return None  # a zero is a constant: too many recipes cancel
    holds = np.ones_like(getattr(explainers[0], kind), bool)
    for explainer, value in zip(explainers, values, strict=True):
        holds &= np.abs(getattr(explainer, kind) - value) < 1e-6
    found = np.flatnonzero(holds)
    return explainers[0].recipe(kind, int(found[0])) if found.size else None


@dataclass(frozen=True)
class _Leaf:
    recipe: Recipe
    integer: bool
    after: bool = False  # the recipe is a step on from the previous call's same argument


class _Explainer:
    """Recipes giving a value from a prompt's numbers: one number copied (else scaled), or two
    scaled and summed (a zero is a constant: too many pairs cancel). Every recipe's value is
    computed once, in order of preference, and a value looked up among them."""

    def __init__(self, numbers: list[float]) -> None:
        given, n = np.asarray(numbers, float), len(numbers)
        self.first, self.second = np.triu_indices(n, 1)  # each pair, in combinations' order
        self.pair_factors = list(itertools.product(PAIR_FACTORS, PAIR_FACTORS))
        # A copy of any number before a scaled one: a scaled match is likelier a coincidence.
        self.singles = (np.asarray(FACTORS)[:, None] * given[None, :]).ravel()
        self.pairs = (
            given[self.first, None] * np.asarray([fa for fa, _ in self.pair_factors])
            + given[self.second, None] * np.asarray([fb for _, fb in self.pair_factors])
        ).ravel()
        self.count = n

    def recipe(self, kind: str, index: int) -> Recipe:
        """Recipe ``index`` among the ``singles`` or the ``pairs``."""
        if kind == "singles":
            factor, number = divmod(index, self.count)
            return ((number, FACTORS[factor]),)
        pair, factors = divmod(index, len(self.pair_factors))
        fa, fb = self.pair_factors[factors]
        return ((int(self.first[pair]), fa), (int(self.second[pair]), fb))


def _filled(value: Any, numbers: list[float], before: dict[str, Any], key: str = "") -> Any:
    """``value`` with each recipe made a number from the request's ``numbers`` (and ``before``,
    the previous call's arguments, for a step on from it)."""
    if isinstance(value, dict):
        return {k: _filled(v, numbers, before, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, numbers, before) for v in value]
    if not isinstance(value, _Leaf):
        return value
    recipe = value.recipe
    number = recipe if isinstance(recipe, float | int) else sum(f * numbers[i] for i, f in recipe)
    if value.after:
        number += float(before.get(key, 0.0))
    return round(number) if value.integer else round(float(number), 6)


def _match(
    example: Sequence[tuple[float, tuple[str, ...]]],
    request: Sequence[tuple[float, tuple[str, ...]]],
) -> list[int | None]:
    """For each of the example's numbers, the request's number in its place: the first unused
    one named by the same words, else the one at the same position, else none (the example's
    own value stays)."""
    used: set[int] = set()
    found: list[int | None] = []
    for k, (_, near) in enumerate(example):
        same = [j for j, (_, words) in enumerate(request) if words == near and j not in used]
        j = same[0] if same else k if k < len(request) and k not in used else None
        if j is not None:
            used.add(j)
        found.append(j)
    return found
