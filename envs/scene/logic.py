"""Game logic played by the verifier: a trusted world owns the state, the agent's logic decides.

Two sandbox sessions take part in each held-out play of a logic task:

- the **host**, a trusted session that never ran agent code, builds a fresh world from plain data
  (the task's level, the agent's objects and its declarative logic: triggers, ``bind`` bindings,
  movers, spawners, counters), walks the verifier's player and runs the physics, the bindings and
  the event log. Everything the checks read is sampled here (:class:`Host`).
- the **logic** session holds the agent's world after its steps were replayed, with its Python
  callbacks (trigger ``on_enter``/``on_exit``, ``on_update``, timers). It never steps physics for
  the verifier: when a callback is due, the host stops and sends a :func:`mirror` of its state; the
  logic session copies it into its world (:func:`sync`), runs the due callbacks and answers with
  what they changed as plain actions (:func:`reaction`). The host validates each action and applies
  it (:func:`apply`), or the play fails with the reason.

Stops: before a frame when an ``on_update`` callback exists or a timer is due (``"pre"``), after a
frame's physics when a trigger with Python callbacks saw something enter or leave (``"post"``);
so at most two per frame, none for purely declarative logic. Actions (``ACTIONS``): ``open``,
``close``, ``destroy``, ``count``, ``spawn``, ``move`` (pose), ``velocity``, ``mover``,
``spawner``; at most ``MAX_ACTIONS`` per stop, never on the player.

Limits of the mirror: triggers and bindings that callbacks create during play exist only in the
logic session (the host's triggers are those of the replayed script); timers and ``on_update``
callbacks added during play are heeded, as every answer says what is due next.
"""

from __future__ import annotations

import math
from typing import Any

from panda3d.bullet import BulletRigidBodyNode
from panda3d.core import Vec3

from toolgym.envs.scene.runtime import EVENTS, NAME, SceneError, World
from toolgym.envs.scene.sampling import Recorder

ACTIONS = ("open", "close", "destroy", "count", "spawn", "move", "velocity", "mover", "spawner")
MAX_ACTIONS = 200  # per stop
MAX_COUNT_STEP = 1000  # largest change of a counter in one action
PLAYER = "player"
MOVED_M = 1e-5  # a pose change below this is float noise, not a move


# -- plain-data state -----------------------------------------------------------------------------


def _velocity(obj: Any) -> list[float]:
    node = obj.node.node()
    if isinstance(node, BulletRigidBodyNode):
        v = node.get_linear_velocity()
        return [v.x, v.y, v.z]
    return [0.0, 0.0, 0.0]


def mirror(world: World, events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The host world's state as plain data, for the logic session: frame, objects (asset,
    body, pose, velocity, closed position if open), counters, what each trigger holds, and the
    trigger ``events`` to react to."""
    return {
        "frame": world.frame,
        "objects": {
            name: {
                "asset": o.asset,
                "body": o.body,
                "pos": list(o.pos),
                "hpr": list(o.hpr),
                "velocity": _velocity(o),
                "closed": list(o.closed_pos) if o.closed_pos is not None else None,
            }
            for name, o in world.objects.items()
        },
        "counters": dict(world.counters),
        "inside": {t.name: list(t.inside) for t in world.triggers.values()},
        "events": list(events or ()),
    }


def sync(world: World, state: dict[str, Any]) -> None:
    """Make the logic session's ``world`` look like the host's ``state`` (see :func:`mirror`)."""
    world.frame = int(state["frame"])
    objects = state["objects"]
    for name in [n for n in world.objects if n not in objects]:
        world.remove(name)
    for name, o in objects.items():
        obj = world.objects.get(name)
        if obj is None or (obj.asset, obj.body) != (o["asset"], o["body"]):
            if obj is not None:
                world.remove(name)
            obj = world.spawn(o["asset"], o["pos"], o["hpr"], name=name, body=o["body"])
        obj.node.set_pos(*o["pos"])
        obj.node.set_hpr(*o["hpr"])
        obj.closed_pos = tuple(o["closed"]) if o["closed"] is not None else None
        node = obj.node.node()
        if isinstance(node, BulletRigidBodyNode) and obj.body == "dynamic":
            node.set_linear_velocity(Vec3(*o["velocity"]))
    world.counters = {str(k): int(v) for k, v in state["counters"].items()}
    for name, inside in state["inside"].items():
        if name in world.triggers:
            world.triggers[name].inside = tuple(inside)


def _pose(obj: Any) -> tuple[list[float], list[float]]:
    return list(obj.pos), list(obj.hpr)


def _moved(a: list[float], b: list[float]) -> bool:
    return any(abs(x - y) > MOVED_M for x, y in zip(a, b, strict=True))


def listening(world: World) -> dict[str, Any]:
    """What the host must stop for: triggers with Python callbacks (``{name: [events]}``),
    whether an ``on_update`` callback exists, and when the next timer is due (s)."""
    triggers = {
        t.name: [e for e, callbacks in (("enter", t.on_enter), ("exit", t.on_exit)) if callbacks]
        for t in world.triggers.values()
    }
    return {
        "triggers": {name: events for name, events in triggers.items() if events},
        "every_frame": bool(world._updates),
        "next_timer": world.next_timer(),
    }


def reaction(world: World, state: dict[str, Any], phase: str) -> dict[str, Any]:
    """In the logic session: copy ``state`` into ``world``, run what is due in ``phase``
    (``"pre"``: update callbacks and due timers; ``"post"``: the callbacks of ``state``'s trigger
    events) and return ``{"actions": [...], **listening(world)}``, the actions being what the
    callbacks changed."""
    sync(world, state)
    before = {name: (_pose(o), o.closed_pos, _velocity(o)) for name, o in world.objects.items()}
    counters = dict(world.counters)
    movers, spawners = len(world.movers), len(world.spawners)
    if phase == "pre":
        world.run_frame_callbacks()
    else:
        for event in state["events"]:
            trigger = world.triggers.get(event["trigger"])
            if trigger is None:
                continue
            callbacks = trigger.on_enter if event["kind"] == "enter" else trigger.on_exit
            for callback in list(callbacks):
                callback(world, trigger.name, event["object"])
    actions: list[dict[str, Any]] = []
    actions += [{"do": "destroy", "object": n} for n in before if n not in world.objects]
    for name, obj in world.objects.items():
        if name not in before:
            pos, hpr = _pose(obj)
            actions.append(
                {
                    "do": "spawn",
                    "object": name,
                    "asset": obj.asset,
                    "body": obj.body,
                    "pos": pos,
                    "hpr": hpr,
                    "velocity": _velocity(obj),
                }
            )
            continue
        (pos, hpr), closed, velocity = before[name]
        if closed is None and obj.closed_pos is not None:
            actions.append({"do": "open", "object": name})
            pos = [pos[0], pos[1], pos[2] + obj.size[2]]
        elif closed is not None and obj.closed_pos is None:
            actions.append({"do": "close", "object": name})
            pos = list(closed)
        now_pos, now_hpr = _pose(obj)
        if _moved(now_pos, pos) or _moved(now_hpr, hpr):
            actions.append({"do": "move", "object": name, "pos": now_pos, "hpr": now_hpr})
        if obj.body == "dynamic" and _moved(_velocity(obj), velocity):
            actions.append({"do": "velocity", "object": name, "velocity": _velocity(obj)})
    for counter, value in world.counters.items():
        if value != counters.get(counter, 0):
            actions.append(
                {"do": "count", "counter": counter, "amount": value - counters.get(counter, 0)}
            )
    actions += [{"do": "mover", **m} for m in world.movers[movers:]]
    actions += [
        {"do": "spawner", **{k: v for k, v in s.items() if k not in ("spawned", "start")}}
        for s in world.spawners[spawners:]
    ]
    return {"actions": actions, **listening(world)}


# -- the trusted side ------------------------------------------------------------------------------


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise SceneError(f"{what} must be a name, got {value!r}")
    return value


def _target(world: World, action: dict[str, Any], key: str = "object") -> Any:
    name = _name(action.get(key), key)
    if name == PLAYER:
        raise SceneError(f"the logic may not {action['do']} the player; the verifier walks it")
    return world.get(name)


def apply(world: World, action: Any) -> None:
    """Apply one action from the logic session to the host ``world``, validated: a known kind,
    existing objects, never the player, finite numbers in range. Raises :class:`SceneError`."""
    if not isinstance(action, dict) or action.get("do") not in ACTIONS:
        kind = action.get("do") if isinstance(action, dict) else action
        raise SceneError(f"unknown action {kind!r}; known: {', '.join(ACTIONS)}")
    kind = action["do"]
    if kind == "count":
        amount = action.get("amount")
        if isinstance(amount, bool) or not isinstance(amount, int) or abs(amount) > MAX_COUNT_STEP:
            raise SceneError(f"a count must be a whole number up to {MAX_COUNT_STEP}")
        world.count(_name(action.get("counter"), "counter"), amount)
    elif kind == "spawn":
        if action.get("asset") == PLAYER or action.get("object") == PLAYER:
            raise SceneError("the logic may not spawn a player; the verifier walks its own")
        world.spawn(
            str(action.get("asset")),
            action.get("pos"),
            action.get("hpr"),
            name=_name(action.get("object"), "object"),
            body=action.get("body"),
            velocity=action.get("velocity") if action.get("body") == "dynamic" else None,
        )
    elif kind == "mover":
        _target(world, action, "target")
        world.mover(
            action["target"],
            action.get("points", ()),
            action.get("speed", 1.0),
            bool(action.get("loop", True)),
        )
    elif kind == "spawner":
        if action.get("asset") == PLAYER:
            raise SceneError("the logic may not spawn a player; the verifier walks its own")
        count = action.get("count")
        world.spawner(
            str(action.get("asset")),
            action.get("pos", ()),
            action.get("interval", 0),
            count if isinstance(count, int) else -1,
            action.get("velocity", (0, 0, 0)),
        )
    else:
        obj = _target(world, action)
        if kind in ("open", "close", "destroy"):
            getattr(world, kind)(obj.name)
        elif kind == "move":
            obj.set_pos(action.get("pos"))
            obj.set_hpr(action.get("hpr"))
        else:
            obj.set_velocity(action.get("velocity"))


def _time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


class Host:
    """The trusted side of one play: a fresh world built from ``description``, the verifier's
    player walking ``path`` at ``speed`` m/s (standing ``waits[k]`` s at waypoint ``k``) for
    ``seconds``, sampled after every frame's physics and trigger tests, before the logic
    session's answer to that frame's events is applied (what an answer changes takes part in the
    next frame, and is sampled after it: no state that the simulation used goes unsampled).
    Bindings that would act on the player are skipped and logged as ``"refused"`` events.

    :meth:`advance` runs frames until the logic session must react, and returns
    ``{"done": False, "phase", "state"}`` (``state``: :func:`mirror`), or, at the end,
    ``{"done": True, "trace": ...}``; the next call passes the logic session's answer."""

    def __init__(
        self,
        description: dict[str, Any],
        path: list,
        speed: float,
        seconds: float,
        listen: dict[str, Any],
        waits: list | tuple = (),
    ) -> None:
        self.world = World.build(description)
        self.world.protected = {PLAYER}  # bindings and movers may not act on the verifier's
        self.world.player_path(path, speed, waits=waits)
        self.frames = round(float(seconds) / self.world.dt)
        self.recorder = Recorder(self.world, self.frames)
        self.listen = {str(k): set(v) & set(EVENTS) for k, v in dict(listen["triggers"]).items()}
        self._heed(listen)
        self.done, self.stage, self.mark = 0, "pre", len(self.world.events)

    def _heed(self, answer: dict[str, Any]) -> None:
        self.every_frame = bool(answer.get("every_frame"))
        self.next_timer = _time(answer.get("next_timer"))

    def _pre_due(self) -> bool:
        due = self.next_timer is not None and self.next_timer <= self.world.time + 1e-9
        return self.every_frame or due

    def advance(self, answer: dict[str, Any] | None = None) -> dict[str, Any]:
        if answer is not None:
            actions = answer.get("actions")
            if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
                raise SceneError(
                    f"the logic must answer with a list of at most {MAX_ACTIONS} actions"
                )
            for action in actions:
                apply(self.world, action)
            self._heed(answer)
        world = self.world
        while True:
            if self.stage == "pre":
                if self.done >= self.frames:
                    return {"done": True, "trace": self.recorder.trace()}
                self.stage = "step"
                if self._pre_due():
                    return {"done": False, "phase": "pre", "state": mirror(world)}
            else:
                world.step()  # built from data: no Python callbacks run here
                self.recorder.after_frame()  # what this frame simulated, before any answer
                self.done, self.stage = self.done + 1, "pre"
                events = [
                    e
                    for e in world.events[self.mark :]
                    if e["kind"] in EVENTS and e["kind"] in self.listen.get(e.get("trigger"), ())
                ]
                self.mark = len(world.events)
                if events:
                    return {"done": False, "phase": "post", "state": mirror(world, events)}
