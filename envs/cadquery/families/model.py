"""What a procedural CAD family is: seeded parameters with documented ranges, one description
said in many styles, a reference program, the same part as tool calls, a near miss and edits.

Every length is in mm, every angle in degrees. The same ``(family, seed, split, style)`` always
gives the same task; the test split draws from seeds disjoint from the training split's
(generator stream ``2·seed`` for train, ``2·seed + 1`` for test), so an agent is judged on parts it
never saw. A task's prompt and reference cost well under a millisecond: nothing is built.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.envs.cadquery.families.phrases import Phrases, get_style, say
from toolgym.envs.tasks.model import Scalar, Task, Verification

Params = dict[str, Scalar]
Call = dict[str, Any]
UNITS = ("mm", "deg", "count", "choice")

#: What a family's part is made of: the designer's features and the operations that make them.
FEATURES = (
    "primitive",
    "hole",
    "counterbore",
    "countersink",
    "slot",
    "pocket",
    "fillet",
    "chamfer",
    "boss",
    "rib",
    "shell",
    "bolt_circle",
    "step",
    "keyway",
    "groove",
    "thread",
    "teeth",
    "hub",
    "bend",
    "sweep",
    "loft",
    "revolve",
    "pattern",
    "mirror",
    "polygon",
)


def mm(rng: np.random.Generator, low: float, high: float) -> float:
    """A length drawn from [low, high] mm and rounded to 0.5 mm, so prompts read like a
    designer's (a bound off the 0.5 mm grid may be passed by the rounding)."""
    return float(np.round(rng.uniform(low, high) * 2) / 2)


def fmt(value: float) -> str:
    """A length as a designer writes it: 12, 12.5."""
    return f"{value:g}"


def fmt4(value: float) -> str:
    """A number as the reference programs write it: at most 4 decimals."""
    return fmt(round(value, 4))


def round4(value: float) -> float:
    """A number rounded to the 4 decimals the reference programs and calls carry."""
    return round(float(value), 4)


def num(value: object) -> float:
    """A parameter read as a number (``Params`` values are plain scalars)."""
    return float(value)  # type: ignore[arg-type]


def whole(value: object) -> int:
    """A count parameter read as an integer."""
    return int(value)  # type: ignore[call-overload]


def pts(points: Sequence[tuple[float, float]]) -> str:
    """A point list as a program writes it, each coordinate to at most 4 decimals."""
    return "[" + ", ".join(f"({fmt(round(x, 4))}, {fmt(round(y, 4))})" for x, y in points) + "]"


def call(name: str, **arguments: Any) -> Call:
    """One tool call; numbers rounded to 4 decimals, as the reference programs write them."""

    def clean(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, 4)
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return {"name": name, "arguments": {k: clean(v) for k, v in arguments.items()}}


def rule(message: str, holds: Callable[[dict[str, float]], bool]) -> Callable[[Params], str | None]:
    """A family's ``check`` from one condition on its numeric parameters (counts included):
    ``message`` when it fails, ``None`` when it holds."""

    def check(params: Params) -> str | None:
        numbers = {
            k: float(v)
            for k, v in params.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        return None if holds(numbers) else message

    return check


@dataclasses.dataclass(frozen=True)
class Dimension:
    """One parameter's documented range.

    Attributes:
        name: the parameter's key.
        label: what a designer calls it ("flange thickness"); edits say it.
        low, high: the inclusive range (``unit`` mm, deg or count); the sampler may draw from a
            narrower range that depends on other parameters.
        unit: ``"mm"``, ``"deg"``, ``"count"`` (an integer) or ``"choice"``.
        choices: the values of a ``"choice"``.
    """

    name: str
    label: str
    low: float = 0.0
    high: float = 0.0
    unit: str = "mm"
    choices: tuple[str, ...] = ()

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is outside this range, in one line; ``None`` when it is inside."""
        if self.unit == "choice":
            return None if value in self.choices else f"expected one of {list(self.choices)}"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"expected a number, got {value!r}"
        if self.unit == "count" and value != int(value):
            return f"expected a whole count, got {value!r}"
        if not self.low <= value <= self.high:
            unit = "" if self.unit == "count" else f" {self.unit}"
            return f"{value:g}{unit} is outside {fmt(self.low)}..{fmt(self.high)}{unit}"
        return None


Instruction = Callable[[Phrases], str]


@dataclasses.dataclass(frozen=True)
class Edit:
    """A change a designer asks of an existing part.

    Either ``apply(params, rng)`` gives the edited parameters and the request, written with
    :class:`Phrases` ("add a 6 mm hole ..."), or ``resize = (dimension, low, high)`` changes
    one dimension by ``low``..``high`` mm either way (see :func:`resize`).
    """

    name: str
    apply: Callable[[Params, np.random.Generator], tuple[Params, Instruction]] | None = None
    resize: tuple[str, float, float] | None = None


def resize(name: str, low: float, high: float) -> Edit:
    """An edit that changes dimension ``name`` by ``low``..``high`` mm either way (rounded to
    0.5 mm; an edit that leaves the documented range or fails the family's check is drawn
    again)."""
    return Edit(f"resize {name}", resize=(name, low, high))


@dataclasses.dataclass(frozen=True)
class Family:
    """A procedural family of one kind of part.

    Attributes:
        name: the family's key (``procedural/<name>/train-0``).
        summary: what the part is, in a few words, for tables and image-only prompts.
        features: what it is made of (:data:`FEATURES`).
        dimensions: every parameter's documented range.
        sample: draws the parameters from a seeded generator.
        text: the description, as sentences written with :class:`Phrases`; the first names the
            part, the others read correctly in any order.
        program: the reference CadQuery program (binds ``result``).
        calls: the same part as tool calls (``toolgym.envs.cadquery.tools``).
        miss: the parameters with one feature removed or moved: a near miss that must fail.
        edits: the changes an edit task may ask for (at least one).
        check: cross-parameter rules (``None`` or the problem in one line), for edits and for
            task files that name the family.
        words: the family's own phrase-bank entries.
        prompt: the described prompt of the ``spec`` style, when the family kept its
            hand-written wording (the first thirteen families: their suites and the learning
            figures measured on them stay as they were).
        verification: how its tasks are verified.
    """

    name: str
    summary: str
    features: tuple[str, ...]
    dimensions: tuple[Dimension, ...]
    sample: Callable[[np.random.Generator], Params]
    text: Callable[[Params, Phrases], Sequence[str]]
    program: Callable[[Params], str]
    calls: Callable[[Params], list[Call]]
    miss: Callable[[Params], Params]
    edits: tuple[Edit, ...]
    check: Callable[[Params], str | None] | None = None
    words: Mapping[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    prompt: Callable[[Params], str] | None = None
    verification: Verification = dataclasses.field(default_factory=Verification)

    def __post_init__(self) -> None:
        unknown = set(self.features) - set(FEATURES)
        if unknown or not self.features:
            raise ValueError(f"family {self.name}: unknown features {sorted(unknown)}")
        if not self.edits:
            raise ValueError(f"family {self.name}: needs at least one edit")
        for edit in self.edits:
            if edit.resize is not None and edit.resize[0] not in self.dims:
                raise ValueError(f"family {self.name}: edit {edit.name!r} names no dimension")

    # -- what the family is --------------------------------------------------------------------

    @property
    def phrases(self) -> Phrases:
        return Phrases(self.words)

    def operations(self) -> tuple[str, ...]:
        """The tools its reference calls use (on its first eight training seeds)."""
        used = {c["name"] for s in range(8) for c in self.calls(self.sample(self.rng(s, "train")))}
        return tuple(sorted(used))

    @functools.cached_property
    def tier(self) -> int:
        """Difficulty 1–3 by the features plus the most tools one part's reference uses (over
        the first eight training seeds): up to 3 is tier 1, up to 6 tier 2, more tier 3."""
        parts = (self.calls(self.sample(self.rng(s, "train"))) for s in range(8))
        weight = len(self.features) + max(len({c["name"] for c in calls}) for calls in parts)
        return 1 if weight <= 3 else 2 if weight <= 6 else 3

    def problems(self, params: Mapping[str, Scalar]) -> list[tuple[str, str]]:
        """``(parameter, problem)`` for each parameter outside its range, then the check's."""
        found = []
        for dimension in self.dimensions:
            if dimension.name in params:
                problem = dimension.problem(params[dimension.name])
                if problem:
                    found.append((dimension.name, problem))
        if not found and self.check is not None and set(self.dims) <= set(params):
            problem = self.check(dict(params))
            if problem:
                found.append(("parameters", problem))
        return found

    @property
    def dims(self) -> dict[str, Dimension]:
        return {d.name: d for d in self.dimensions}

    # -- tasks -----------------------------------------------------------------------------------

    def rng(self, seed: int, split: str, edit: bool = False) -> np.random.Generator:
        if split not in ("train", "test") or seed < 0:
            raise ValueError(f"need a seed >= 0 and split 'train' or 'test', got {seed}, {split!r}")
        stream = 2 * seed + (1 if split == "test" else 0)
        return np.random.default_rng(
            [zlib.crc32(self.name.encode()), stream, *([1] if edit else [])]
        )

    def describe(self, params: Params, style: str, seed: int) -> str:
        """The described prompt of ``params`` in ``style``."""
        if style == "spec" and self.prompt is not None:
            return self.prompt(params)
        order = np.random.default_rng([zlib.crc32(self.name.encode()), seed, 7])
        return say(self.text(params, self.phrases), get_style(style), self.phrases.words, order)

    def task(
        self, seed: int, split: str = "train", suite: str = "procedural", style: str = "spec"
    ) -> Task:
        params = self.sample(self.rng(seed, split))
        return Task(
            id=f"{suite}/{self.name}/{split}-{seed}",
            domain="cadquery",
            prompt=self.describe(params, style, seed),
            reference=self.program(params),
            parameters=params,
            difficulty=self.tier,
            verification=self.verification,
            split=split,
            family=self.name,
            seed=seed,
            tool_calls=tuple(json.dumps(c) for c in self.calls(params)),
            style=style,
        )

    def near_miss(self, seed: int, split: str = "train") -> str:
        """The near miss's program for a seed's part (one feature removed or moved)."""
        return self.program(self.miss(self.sample(self.rng(seed, split))))

    def edit(self, params: Params, rng: np.random.Generator) -> tuple[str, Params, Instruction]:
        """One of the family's edits applied to ``params``: its name, the edited parameters and
        the request. Draws again (a few times) when an edit leaves the documented ranges."""
        for _ in range(32):
            edit = self.edits[int(rng.integers(len(self.edits)))]
            if edit.resize is not None:
                after, instruction = self._resize(edit.resize, params, rng)
            else:
                assert edit.apply is not None
                after, instruction = edit.apply(dict(params), rng)
            if after != params and not self.problems(after):
                return edit.name, after, instruction
        raise ValueError(f"family {self.name}: no edit of {params} stays in range")

    def _resize(
        self, change: tuple[str, float, float], params: Params, rng: np.random.Generator
    ) -> tuple[Params, Instruction]:
        name, low, high = change
        if name not in params:  # a dimension this draw does not have (a box has no diameter)
            return params, lambda q: ""
        dimension = self.dims[name]
        delta = mm(rng, low, high) * (1 if rng.random() < 0.5 else -1)
        old = float(params[name])  # type: ignore[arg-type]
        new = round(old + delta, 4)
        after = {**params, name: new}
        if dimension.unit == "deg":
            return (
                after,
                lambda q: f"change the {dimension.label} from {q.deg(old)} to {q.deg(new)}",
            )
        return after, lambda q: f"change the {dimension.label} from {q.len(old)} to {q.len(new)}"

    def edit_task(
        self, seed: int, split: str = "train", suite: str = "cad-edits", style: str = "spec"
    ) -> Task:
        """An edit task: the episode starts from one part (its program has run, ``result`` is
        bound to it) and the prompt asks for a change; the target is the edited part."""
        rng = self.rng(seed, split, edit=True)
        before = self.sample(rng)
        name, after, instruction = self.edit(before, rng)
        start = self.program(before)
        request = say([instruction(self.phrases)], get_style(style), self.phrases.words)
        prompt = (
            f"Edit the part this program built (it has run: `result` is bound to the part): "
            f"{request}\n\n```python\n{start}```"
        )
        return Task(
            id=f"{suite}/{self.name}/{split}-{seed}",
            domain="cadquery",
            prompt=prompt,
            reference=self.program(after),
            parameters={**after, "edit": name},
            difficulty=self.tier,
            verification=self.verification,
            split=split,
            family=self.name,
            seed=seed,
            tool_calls=None,
            start=start,
            style=style,
        )
