"""What a procedural Blender family is: a seeded draw of one task (its start scene, the
reference as tool calls or a program, its description) said in any style of the phrase bank.

Lengths in metres, angles in degrees, colours linear RGB. The same ``(family, seed, split,
style)`` always gives the same task. Test seeds draw from a generator stream disjoint from
training seeds'; a family drawn from a grid (``disjoint``) keeps each reference on one split
only, so no test task is a training task, for any seeds.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolgym.envs.blender.families.phrases import Phrases, get_style, say
from toolgym.envs.tasks.model import Task, Verification

Call = tuple[str, dict[str, Any]]
Text = Callable[[Phrases], Sequence[str]]
SPLIT_STREAMS = {"train": 0, "test": 1}
#: The kinds of task (the verifier's, ``toolgym.envs.blender.verifier.KINDS``), and what each
#: asks: BlenderGym's five edits start from a scene; modelling starts from nothing.
KIND_EDITS = {
    "modelling": "model from nothing",
    "placement": "move, turn and scale objects of a given scene",
    "material": "change the materials of a given scene",
    "shape_keys": "set shape keys of a given mesh",
    "lighting": "change the lights of a given scene",
    "procedural": "change the modifiers or geometry nodes of a given object",
}


def call_lines(calls: Sequence[Call]) -> str:
    """Tool calls as a script: ``tools.name(arg=value, ...)`` per line."""
    return "".join(
        f"tools.{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})\n"
        for name, args in calls
    )


def call_json(calls: Sequence[Call]) -> tuple[str, ...]:
    """Tool calls as JSON texts, the form tool mode takes."""
    return tuple(json.dumps({"name": name, "arguments": args}) for name, args in calls)


def snap(value: float, step: float = 0.05) -> float:
    """``value`` on a ``step`` grid (metres, degrees or a colour channel): prompts read like an
    artist's, and no "-0"."""
    return round(round(float(value) / step) * step, 6) + 0.0


def rebuilt(start: Sequence[Call], calls: Sequence[Call]) -> list[Call]:
    """An edit's reference the plain way: delete every object ``start`` added, then run
    ``calls`` (the model after the edit). The verifier reads the scene, not the calls, so an
    agent that changes only what the edit asks for scores the same."""
    added = [args["name"] for tool, args in start if tool in ("add_primitive", "add_light")]
    return [("delete_object", {"name": name}) for name in added] + list(calls)


def split_of(calls: Sequence[Call]) -> str:
    """The split a grid family's reference belongs to: the parity of its calls' CRC-32."""
    parity = zlib.crc32("".join(call_json(calls)).encode()) % 2
    return next(split for split, stream in SPLIT_STREAMS.items() if stream == parity)


@dataclasses.dataclass(frozen=True)
class Drawn:
    """What a family draws for one seed.

    Attributes:
        prompt: the description: a fixed text (said the same in every style), or sentences
            written with :class:`Phrases` (the first names the task; the others read correctly
            in any order), said in the task's style.
        start: the scene the episode starts in, as tool calls or a program (empty: nothing).
        calls: the reference as tool calls (empty when only ``program`` can say it).
        parameters: the drawn values, for tables and task files.
        difficulty: the tier, 1-3 (by the objects, features and settings the edit touches).
        program: the reference as a program, where tool calls cannot say it (a node graph);
            ``None``: the calls' lines.
    """

    prompt: str | Text
    start: Sequence[Call] | str
    calls: Sequence[Call]
    parameters: dict[str, Any]
    difficulty: int = 2
    program: str | None = None


@dataclasses.dataclass(frozen=True)
class Family:
    """A seeded generator of one kind of Blender task.

    Attributes:
        name: the family's key (``blender-procedural/<name>/train-0``).
        kind: the task kind its verifier has (:data:`KIND_EDITS`).
        draw: the task for a seeded generator.
        summary: what the task is, in a few words, for tables.
        disjoint: the family draws from a grid, where two seeds can draw one task; each split
            then takes only references whose CRC-32 has its parity (drawing again until one
            does), so the splits never share a task.
        words: the family's own phrase-bank entries.
        edit: an edit task of a modelling family, for a seeded generator: ``start`` is one
            drawn model (as calls), ``calls`` change it into another, and ``prompt`` asks for
            the change only ("make the table 0.1 m taller"). ``None``: the family's own tasks
            are its edits (every kind but modelling starts from a scene), or it has none.
    """

    name: str
    kind: str
    draw: Callable[[np.random.Generator], Drawn]
    summary: str = ""
    disjoint: bool = False
    words: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    edit: Callable[[np.random.Generator], Drawn] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KIND_EDITS:
            raise ValueError(f"family {self.name}: kind must be one of {list(KIND_EDITS)}")

    def drawn(self, seed: int, split: str = "train") -> Drawn:
        """What seed ``seed`` of ``split`` draws."""
        if split not in SPLIT_STREAMS or seed < 0:
            raise ValueError(f"need a seed >= 0 and split 'train' or 'test', got {seed}, {split!r}")
        rng = np.random.default_rng([SPLIT_STREAMS[split], seed, sum(map(ord, self.name))])
        drawn = self.draw(rng)
        while self.disjoint and split_of(drawn.calls) != split:
            drawn = self.draw(rng)
        return drawn

    @functools.cached_property
    def styled(self) -> bool:
        """Whether its prompts are written with the phrase bank (else one fixed text)."""
        return not isinstance(self.drawn(0).prompt, str)

    def describe(self, drawn: Drawn, style: str, seed: int) -> str:
        """The drawn task's prompt in ``style``."""
        if isinstance(drawn.prompt, str):
            return drawn.prompt
        phrases = Phrases(self.words)
        order = np.random.default_rng([zlib.crc32(self.name.encode()), seed, 7])
        return say(drawn.prompt(phrases), get_style(style), phrases.words, order)

    @property
    def edits(self) -> bool:
        """Whether it has edit tasks: its own (a kind that starts from a scene) or drawn by
        :attr:`edit`."""
        return self.kind != "modelling" or self.edit is not None

    def task(
        self,
        seed: int,
        split: str = "train",
        suite: str = "blender-procedural",
        style: str = "spec",
    ) -> Task:
        return self._task(self.drawn(seed, split), seed, split, suite, style)

    def edit_task(
        self, seed: int, split: str = "train", suite: str = "blender-edits", style: str = "spec"
    ) -> Task:
        """An edit task: the episode starts from a scene and the prompt asks for a change. A
        modelling family's is drawn by :attr:`edit` (the program that built the start is in the
        prompt); any other family's tasks are edits as they stand."""
        if self.edit is None:
            if self.kind == "modelling":
                raise ValueError(f"the {self.name} family has no edit tasks")
            return self.task(seed, split, suite, style)
        if split not in SPLIT_STREAMS or seed < 0:
            raise ValueError(f"need a seed >= 0 and split 'train' or 'test', got {seed}, {split!r}")
        rng = np.random.default_rng([SPLIT_STREAMS[split], seed, sum(map(ord, self.name)), 1])
        drawn = self.edit(rng)
        start = drawn.start if isinstance(drawn.start, str) else call_lines(drawn.start)
        request = self.describe(drawn, style, seed)
        prompt = (
            f"Edit the scene this program built (it has run): {request}\n\n```python\n{start}```"
        )
        return self._task(drawn, seed, split, suite, style, prompt)

    def _task(
        self,
        drawn: Drawn,
        seed: int,
        split: str,
        suite: str,
        style: str,
        prompt: str | None = None,
    ) -> Task:
        start = drawn.start if isinstance(drawn.start, str) else call_lines(drawn.start)
        return Task(
            id=f"{suite}/{self.name}/{split}-{seed}",
            domain="blender",
            prompt=prompt if prompt is not None else self.describe(drawn, style, seed),
            reference=drawn.program if drawn.program is not None else call_lines(drawn.calls),
            parameters={"kind": self.kind, **drawn.parameters},
            difficulty=drawn.difficulty,
            verification=Verification(thresholds={}),
            split=split,
            family=self.name,
            seed=seed,
            tool_calls=call_json(drawn.calls) if drawn.calls else None,
            start=start,
            style=style if self.styled else None,
        )
