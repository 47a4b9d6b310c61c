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
        args = ", ".join(f"{k}={v!r}" for k, v in call["arguments"].items())
        lines.append(f"tools.{call['name']}(world, {args})")
    return "\n".join(lines) + "\n"


def fmt(value: float) -> str:
    return f"{value + 0.0:g}"  # + 0.0: no "-0"


def room_text(w: float, d: float, door_x: float) -> str:
    return (
        f"The room is {fmt(w)} × {fmt(d)} m, centred on the origin (x from {fmt(-w / 2)} to "
        f"{fmt(w / 2)}, y from {fmt(-d / 2)} to {fmt(d / 2)}), with its doorway in the south wall "
        f"(y = {fmt(-d / 2)}) at x = {fmt(door_x)}."
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


def said(p: Mapping[str, Any], text: Text) -> str:
    """A prompt written with :class:`Phrases`, said in the style the parameters name
    (``p["style"]``, default ``"spec"``; a shuffled style shuffles by the parameters)."""
    phrases = Phrases()
    order = np.random.default_rng(zlib.crc32(json.dumps(sorted(p.items()), default=str).encode()))
    return say(text(phrases), get_style(str(p.get("style", "spec"))), phrases.words, order)


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
    """

    name: str
    kind: str
    build: Callable[[Mapping[str, Any]], Spec]
    draw: Callable[[random.Random], dict[str, Any]]
    difficulty: int
    summary: str = ""
    styled: bool = False
    near_miss: Callable[[Task, Spec], str | None] | None = None

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
        from toolgym.envs.scene.families import spec_for

        parameters = self.parameters(seed, split)
        if self.styled and style != "spec":
            parameters["style"] = style
        spec = spec_for(parameters)
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
        )
