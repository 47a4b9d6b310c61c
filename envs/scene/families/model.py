"""What a game-scene task family is, and the pieces every template builds with.

A template turns its parameters into a :class:`Spec`: the level, the constraints the verifier
checks, the held-out player trajectories, the reference (a script and the same as tool calls)
and the prompt. A :class:`Template` is one family: the template, a seeded draw of its parameters,
its kind (layout, physics or logic) and difficulty tier. Its prompt can be said in any style of
the phrase bank (``toolgym.envs.scene.families.phrases``): the style is a parameter
(``"style"``), so the verifier rebuilds the very prompt the agent read.

Conventions as in the runtime: metres, seconds, degrees, Z-up; rooms are centred on the origin
with the doorway in the south wall (-Y); positions are bounding-box centres. This package decides
answers (the trajectories are held out), so sandbox sessions never import it.
"""

from __future__ import annotations

import dataclasses
import json
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.envs.scene.catalogue import asset
from toolgym.envs.scene.families.phrases import Phrases, get_style, say
from toolgym.envs.scene.relations import Phrase, require_checked
from toolgym.envs.tasks.model import Task, Verification

KINDS = ("layout", "physics", "logic")
TEST_SEED_OFFSET = 1_000_000  # test seeds draw from a disjoint stream
Text = Callable[[Phrases], Sequence[str]]

CONVENTIONS = (
    "Units: metres, seconds, degrees; Z is up; positions are the centres of bounding boxes; at "
    "heading 0 an object's front faces +Y and a heading turns it counter-clockwise."
)
LAYOUT_RULES = "Placed things keep the catalogue's body, mass and friction."
SETUP = (
    "Placed things keep the catalogue's body, mass and friction, and must start at rest, "
    "upright, on the floor or on each other, and apart."
)
FLOOR_SETUP = (
    "Placed things keep the catalogue's body, mass and friction, and must start at rest, "
    "upright, standing on the floor, and apart."
)


@dataclasses.dataclass(frozen=True)
class Spec:
    """A task's verifiable content. ``level`` is a scene description (see
    ``World.describe``); ``adjustable`` names, per level object, what the agent may change
    (``velocity``); ``trajectories`` are player paths ``{"path": [[x, y, z], ...], "speed",
    "waits"}`` (``waits``: seconds standing at each waypoint), held out from the agent;
    ``bodies`` names, per asset, the bodies the agent may choose for objects it places in a
    layout or physics task (otherwise each keeps its catalogue body)."""

    template: str
    kind: str
    level: dict[str, Any]
    constraints: tuple[dict[str, Any], ...]
    seconds: float
    cheap_seconds: float
    prompt: str
    reference: str
    tool_calls: tuple[dict[str, Any], ...]
    adjustable: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    trajectories: tuple[dict[str, Any], ...] = ()
    bounds: tuple[float, float, float, float] = (-4.0, -4.0, 4.0, 4.0)
    bodies: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    start: str = ""  # an edit's: the script that set the level up before the agent's steps


def new_level(room: tuple[float, float, float] | None = None) -> dict[str, Any]:
    return {
        "version": 1,
        "seed": 0,
        "dt": 1 / 60,
        "substeps": 2,
        "room": None if room is None else {"width": room[0], "depth": room[1], "door_x": room[2]},
        "objects": [],
        "triggers": [],
        "bindings": [],
        "movers": [],
        "spawners": [],
        "counters": {},
    }


def add_object(
    level: dict[str, Any],
    name: str,
    asset_name: str,
    pos: Any,
    heading: float = 0.0,
    body: str | None = None,
    velocity: Any = (0.0, 0.0, 0.0),
) -> None:
    entry = asset(asset_name)
    level["objects"].append(
        {
            "name": name,
            "asset": asset_name,
            "pos": [float(v) for v in pos],
            "hpr": [float(heading), 0.0, 0.0],
            "body": body or entry.body,
            "mass": entry.mass,
            "friction": entry.friction,
            "restitution": entry.restitution,
            "velocity": [float(v) for v in velocity],
            "open": False,
            "level": True,
        }
    )


def tool_call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


def call_script(calls: list[dict[str, Any]]) -> str:
    """The tool calls as a script (the oracle's code-mode reference for tool-expressible tasks)."""
    lines = []
    for call in calls:
        args = "".join(f", {k}={v!r}" for k, v in call["arguments"].items())
        lines.append(f"tools.{call['name']}(world{args})")
    return "\n".join(lines) + "\n"


def fmt(value: float) -> str:
    return f"{value + 0.0:g}"  # + 0.0: no "-0"


def room_text(w: float, d: float, door_x: float) -> str:
    return (
        f"The room is {fmt(w)} × {fmt(d)} m, centred on the origin (x from {fmt(-w / 2)} to "
        f"{fmt(w / 2)}, y from {fmt(-d / 2)} to {fmt(d / 2)}), with its doorway in the south wall "
        f"(y = {fmt(-d / 2)}) at x = {fmt(door_x)}."
    )


def room_said(s: Phrases, w: float, d: float, door_x: float) -> str:
    """:func:`room_text` for a styled prompt: the same sentence in the ``spec`` style."""
    return (
        f"The {s.w('room')} is {s.dims(w, d)}, {s.w('centred')} on the origin (x from "
        f"{s.len(-w / 2)} to {s.len(w / 2)}, y from {s.len(-d / 2)} to {s.len(d / 2)}), with "
        f"its {s.w('doorway')} in the south wall (y = {s.len(-d / 2)}) at x = {s.len(door_x)}"
    )


def layout_rules_said(s: Phrases, target: str) -> list[str]:
    """The rules every styled layout prompt ends with (no overlaps, inside the room, resting on
    the floor, a walkway to ``target``, a bank word of the catalogue's), in the ``spec`` style
    as the classic templates say them; each sentence has words a style changes."""
    return [
        f"nothing {s.w('may')} interpenetrate or leave the {s.w('room')}, everything "
        f"{s.w('must')} rest on the floor, and a {s.len(0.5)} {s.w('wide (walkway)')} walkway "
        f"{s.w('must')} lead from the {s.w('doorway')} to the {s.w(target)}",
        f"placed things {s.w('keep')} the catalogue's body, mass and friction",
        conventions_said(s),
    ]


def conventions_said(s: Phrases) -> str:
    """:data:`CONVENTIONS` for a styled prompt, in the style's unit of length."""
    return (
        f"{s.w('units')}: {s.unit()}, seconds, degrees; Z is up; positions are the centres of "
        f"bounding boxes; at heading 0 an object's front faces +Y and a heading turns it "
        f"counter-clockwise"
    )


# A physics set-up must start as described (upright, supported, apart) before its outcome
# counts: a gate (weight 0), so that doing nothing earns nothing for starting right.
INITIAL = {"kind": "initial", "weight": 0.0}


def on_floor(*assets: str) -> list[dict[str, Any]]:
    """ "rest on the floor": each of ``assets`` stands on the floor once settled."""
    return [{"kind": "on", "asset": a, "other": "floor", "weight": 0.5} for a in assets]


def common_layout(w: float, d: float, door_x: float, target: str) -> list[dict[str, Any]]:
    return [
        {"kind": "no_overlap", "weight": 1.0},
        {"kind": "inside_room", "weight": 1.0},
        {"kind": "walkway", "to": target, "weight": 1.0},
        {"kind": "resting", "weight": 1.0},
    ]


WALLS = {  # inner face coordinate from the room size, outward normal, heading facing the room
    "north": (lambda w, d: d / 2, (0, 1), 180.0),
    "south": (lambda w, d: -d / 2, (0, -1), 0.0),
    "east": (lambda w, d: w / 2, (1, 0), 90.0),
    "west": (lambda w, d: -w / 2, (-1, 0), -90.0),
}


def walk(rng: random.Random, start: tuple[float, float], end: tuple[float, float]) -> dict:
    return {
        "path": [[start[0], start[1], 0.9], [end[0], end[1], 0.9]],
        "speed": round(rng.uniform(1.2, 2.0), 2),
    }


def straight(
    rng: random.Random, start: Any, end: Any, low: float = 1.0, high: float = 2.5, waits: Any = ()
) -> dict:
    path = {
        "path": [[float(start[0]), float(start[1]), 0.9], [float(end[0]), float(end[1]), 0.9]],
        "speed": round(rng.uniform(low, high), 2),
    }
    if waits:
        path["path"][1:1] = [[float(w[0]), float(w[1]), 0.9] for w, _ in waits]
        path["waits"] = [0.0] + [float(t) for _, t in waits]
    return path


def said(
    p: Mapping[str, Any], text: Text, words: Mapping[str, tuple[str, str, str]] | None = None
) -> str:
    """A prompt written with :class:`Phrases`, said in the style the parameters name
    (``p["style"]``, default ``"spec"``; a shuffled style shuffles by the parameters), with the
    family's own ``words`` beside the bank's."""
    phrases = Phrases(words)
    order = np.random.default_rng(zlib.crc32(json.dumps(sorted(p.items()), default=str).encode()))
    return say(text(phrases), get_style(str(p.get("style", "spec"))), phrases.words, order)


@dataclasses.dataclass(frozen=True)
class Edit:
    """A change asked of a level that already holds one draw's reference (an edit task).

    Attributes:
        name: the edit's key (``Task.parameters["edit"]``).
        change: the parameters after the change, from the parameters before it and a seeded
            generator (the template's own ranges: the edited level is one the template draws).
        text: the request's sentences, written with :class:`Phrases`, from the parameters
            before and after (the relations it states are checked against the spec after it,
            in the ``spec`` wording, as any prompt's are).
    """

    name: str
    change: Callable[[Mapping[str, Any], random.Random], dict[str, Any]]
    text: Callable[[Mapping[str, Any], Mapping[str, Any]], Text]


EDIT_PREAMBLE = "Edit the level this script set up (it has run; keep everything else as it is):"


@dataclasses.dataclass(frozen=True)
class Template:
    """One game-scene family: a template and a seeded draw of its parameters.

    Attributes:
        name: the family's key (``scene-procedural/<name>/train-0``), also the template's.
        kind: ``"layout"``, ``"physics"`` or ``"logic"``.
        build: the spec of a task from its parameters (``p["style"]``: the prompt's style).
        draw: the parameters for a seeded generator (ranges in which the reference works).
        difficulty: the tier, 1-3.
        summary: what the task is, in a few words, for tables.
        styled: whether ``build`` says its prompt in the parameters' style (else one fixed text).
        near_miss: the reference with one honest error just past one rule, for a task and its
            spec (``None``: the shared near misses of ``toolgym.envs.scene.cheats``).
        edits: the changes its edit tasks ask for (one drawn per task); none: no edit tasks.
        words: the family's own phrase-bank entries.
        relations: the relation phrases its prompts use beyond the shared table's
            (``toolgym.envs.scene.relations.PHRASES``), each mapped to the rules that check it.
    """

    name: str
    kind: str
    build: Callable[[Mapping[str, Any]], Spec]
    draw: Callable[[random.Random], dict[str, Any]]
    difficulty: int
    summary: str = ""
    styled: bool = False
    near_miss: Callable[[Task, Spec], str | None] | None = None
    edits: tuple[Edit, ...] = ()
    words: Mapping[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    relations: tuple[Phrase, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"template {self.name}: kind must be one of {KINDS}")

    def parameters(self, seed: int, split: str = "train") -> dict[str, Any]:
        """The parameters seed ``seed`` of ``split`` draws (``template`` names this one)."""
        if split not in ("train", "test") or seed < 0:
            raise ValueError(f"need a seed >= 0 and split 'train' or 'test', got {seed}, {split!r}")
        rng = random.Random(seed + (TEST_SEED_OFFSET if split == "test" else 0))
        return {"template": self.name} | self.draw(rng)

    def task(
        self, seed: int, split: str = "train", suite: str = "scene-procedural", style: str = "spec"
    ) -> Task:
        parameters = self.parameters(seed, split)
        if self.styled and style != "spec":
            parameters["style"] = style
        return self._task(parameters, seed, split, suite, style)

    def edit_task(
        self, seed: int, split: str = "train", suite: str = "scene-edits", style: str = "spec"
    ) -> Task:
        """An edit task: the level starts with the reference of one draw placed (the script is
        in the prompt), and the prompt asks for one of :attr:`edits`; the target is the level
        after it."""
        if not self.edits:
            raise ValueError(f"the {self.name} family has no edit tasks")
        before = self.parameters(seed, split)
        rng = random.Random(f"{self.name}/{split}/{seed}/edit")
        edit = self.edits[rng.randrange(len(self.edits))]
        after = {**edit.change(before, rng), "template": self.name}
        parameters = {**after, "edit": edit.name, "before": before}
        if self.styled and style != "spec":
            parameters["style"] = style
        return self._task(parameters, seed, split, suite, style)

    def edit_named(self, name: str) -> Edit:
        """One of :attr:`edits` by name; an unknown name is a one-line error naming them."""
        for edit in self.edits:
            if edit.name == name:
                return edit
        known = ", ".join(e.name for e in self.edits) or "none"
        raise ValueError(f"the {self.name} family has no edit {name!r}; known: {known}")

    def spec(self, parameters: Mapping[str, Any]) -> Spec:
        """The spec of one of this template's tasks from its parameters. Raises
        ``relations.UncheckedRelation`` when its prompt states a relation no constraint checks;
        a styled prompt is checked as its ``spec`` wording (a style changes words, not
        relations)."""
        if "edit" in parameters:
            return self._edit_spec(parameters)
        spec = self.build(parameters)
        plain = (
            spec
            if parameters.get("style", "spec") == "spec"
            else self.build({k: v for k, v in parameters.items() if k != "style"})
        )
        where = f"the {self.name} template"
        require_checked(plain.prompt, plain.constraints, where, self.relations)
        return spec

    def _edit_spec(self, parameters: Mapping[str, Any]) -> Spec:
        """An edit task's spec: the level after the change (``parameters`` less ``edit`` and
        ``before``), started from the reference of the parameters ``before`` it; the prompt asks
        for the change (its relations checked in the ``spec`` wording against the spec after it),
        and the reference clears what the start placed and places the level after it."""
        edit = self.edit_named(str(parameters["edit"]))
        before = parameters.get("before")
        if not isinstance(before, Mapping):
            raise ValueError(f"the {self.name} edit {edit.name!r} needs its 'before' parameters")
        after = {k: v for k, v in parameters.items() if k not in ("edit", "before")}
        spec = self.spec(after)
        start = self.spec({**before, "template": self.name}).reference
        request = edit.text(before, after)

        def text(s: Phrases) -> list[str]:
            return [*request(s), conventions_said(s)]

        plain = said({k: v for k, v in after.items() if k != "style"}, text, self.words)
        where = f"the {self.name} template's {edit.name} edit"
        require_checked(plain, spec.constraints, where, self.relations)
        prompt = f"{EDIT_PREAMBLE} {said(after, text, self.words)}\n\n```python\n{start}```"
        clear = tool_call("clear")
        calls = (clear, *spec.tool_calls) if spec.tool_calls else ()
        reference = call_script([clear]) + spec.reference
        return dataclasses.replace(
            spec, prompt=prompt, reference=reference, tool_calls=calls, start=start
        )

    def _task(
        self, parameters: dict[str, Any], seed: int, split: str, suite: str, style: str
    ) -> Task:
        spec = self.spec(parameters)
        return Task(
            id=f"{suite}/{self.name}/{split}-{seed}",
            domain="scene",
            prompt=spec.prompt,
            reference=spec.reference,
            parameters=parameters,
            difficulty=self.difficulty,
            verification=Verification(thresholds={}),
            split=split,
            family=self.name,
            seed=seed,
            tool_calls=tuple(json.dumps(c) for c in spec.tool_calls),
            style=style if self.styled else None,
            start=spec.start,
        )
