"""The game-scene runtime: a small scene API on Panda3D and Bullet (``panda3d.bullet``).

Scripts in a scene session get ``world``, a :class:`World`::

    crate = world.spawn("crate", pos=(0, 0, 0.25))            # from the catalogue
    world.spawn("ball", pos=(-2, 0, 0.15), velocity=(3, 0, 0), name="ball_1")
    world.trigger("zone_1", pos=(2, 0, 0.5), size=(1, 1, 1),
                  on_enter=lambda world, trigger, other: world.open("door_1"))
    world.every(0.5, lambda world: world.log("tick"))
    world.player_path([(0, -3, 0.9), (0, 3, 0.9)], speed=1.5)
    world.run(3.0)                                           # simulate 3 s
    world.events                                             # the event log

Conventions: metres, kilograms, seconds, degrees; Z-up; positions are the centre of an object's
bounding box and ``hpr`` its heading, pitch and roll (Panda3D's). See ``catalogue`` for assets.

Physics: gravity 9.81 m/s² along -Z; the ground is an infinite static plane at z = 0 with
friction 0.8 (as a crate's); objects take their friction and restitution from the catalogue
unless given. Deactivation (Bullet's sleeping) is off for dynamic bodies: a body at rest keeps
being simulated, so a state never depends on how long something has been still.

Determinism: a fixed frame of ``dt`` seconds (1/60) split into ``substeps`` Bullet steps (2),
callbacks in a fixed order (registration order; triggers, overlaps and objects by name), and a
seeded ``world.rng`` for scripts. The same scene gives bit-identical states in any process.

Everything is bounded: at most ``MAX_OBJECTS`` objects, ``MAX_RUN_S`` simulated seconds per
``run`` call and finite coordinates within ``MAX_COORD_M``; breaking a bound raises
:class:`SceneError` with one line in the scene's terms.

Tool-style logic (trigger bindings, waypoint movers, spawners) is plain data and part of
:meth:`World.describe`, the scene description that :meth:`World.build` rebuilds; Python callbacks
are not (they run only where the script that registered them ran: for logic tasks the verifier
calls them there on a mirror of its own world, see ``toolgym.envs.scene.logic``).
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from panda3d.bullet import (
    BulletBoxShape,
    BulletConvexHullShape,
    BulletGhostNode,
    BulletPlaneShape,
    BulletRigidBodyNode,
    BulletSphereShape,
    BulletWorld,
)
from panda3d.core import NodePath, Point3, TransformState, Vec3

from toolgym.envs.scene.catalogue import ASSETS, BODIES, asset

DESCRIPTION_VERSION = 1
MAX_OBJECTS = 500
MAX_TRIGGERS = 64
MAX_RUN_S = 120.0
MAX_COORD_M = 1000.0
MAX_SPEED = 100.0  # m/s for velocities, movers and the player
MAX_EVENTS = 10_000
GROUND_FRICTION = 0.8  # the ground plane's (see the module docstring)
ACTIONS = ("open", "close", "toggle", "destroy", "count", "spawn")
EVENTS = ("enter", "exit")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")

Callback = Callable[..., Any]


class SceneError(ValueError):
    """A scene call that cannot be applied; the message is one line in the scene's terms."""


def _vector(value: Any, what: str, low: float = -MAX_COORD_M, high: float = MAX_COORD_M) -> Vec3:
    try:
        x, y, z = (float(v) for v in value)
    except (TypeError, ValueError):
        raise SceneError(f"{what} must be three numbers, got {value!r}") from None
    for v in (x, y, z):
        if not math.isfinite(v):
            raise SceneError(f"{what} must be finite, got {value!r}")
        if not low <= v <= high:
            raise SceneError(f"{what} {value!r} is out of range [{low:g}, {high:g}]")
    return Vec3(x, y, z)


def _positive(value: Any, what: str, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SceneError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number) or not 0 <= number <= high:
        raise SceneError(f"{what} must be a number from 0 to {high:g}, got {value!r}")
    return number


def _shape(part: Any) -> Any:
    sx, sy, sz = (s / 2 for s in part.size)
    if part.kind == "sphere":
        return BulletSphereShape(sx)
    if part.kind == "wedge":
        hull = BulletConvexHullShape()
        for x in (-sx, sx):
            hull.add_point(Point3(x, -sy, -sz))
            hull.add_point(Point3(x, sy, -sz))
            hull.add_point(Point3(x, sy, sz))
        return hull
    return BulletBoxShape(Vec3(sx, sy, sz))


def path_point(
    points: Sequence[Sequence[float]], speed: float, waits: Sequence[float], t: float
) -> tuple[float, float, float]:
    """Where a walker is ``t`` seconds after starting at ``points[0]``: it walks the legs at
    ``speed`` m/s, stands ``waits[k]`` seconds on reaching point ``k`` (``waits`` may be shorter
    than ``points``), and stays at the last point."""
    return path_points(points, speed, waits, [t])[0]


def path_points(
    points: Sequence[Sequence[float]], speed: float, waits: Sequence[float], times: Iterable[float]
) -> list[tuple[float, float, float]]:
    """:func:`path_point` at each of ``times``, the legs measured once."""
    legs = []  # (from, to, seconds walking, seconds standing at its end or None)
    here = tuple(float(v) for v in points[0])
    for k, point in enumerate(points):
        target = tuple(float(v) for v in point)
        length = math.dist(here, target)
        walk = length / speed if speed > 0 else math.inf
        legs.append((here, target, walk, float(waits[k]) if k < len(waits) else None))
        here = target
    return [_walked(legs, here, t) for t in times]


def _walked(legs: list, last: tuple, t: float) -> tuple[float, ...]:
    left = max(0.0, float(t))
    for here, target, walk, wait in legs:
        if left < walk:
            share = left / walk
            return tuple(a + (b - a) * share for a, b in zip(here, target, strict=True))
        left -= walk
        if wait is not None:
            if left <= wait:
                return target
            left -= wait
    return last


class SceneObject:
    """A named object of the world: an asset with a body. ``node`` is its Panda3D ``NodePath``
    (a Bullet rigid body, or a ghost for ghost bodies)."""

    def __init__(
        self,
        world: World,
        name: str,
        asset_name: str,
        body: str,
        node: NodePath,
        mass: float,
        friction: float,
        restitution: float,
    ) -> None:
        self.world, self.name, self.asset, self.body, self.node = (
            world,
            name,
            asset_name,
            body,
            node,
        )
        self.mass, self.friction, self.restitution = mass, friction, restitution
        self.velocity = (0.0, 0.0, 0.0)  # the initial velocity it was given (m/s)
        self.closed_pos: tuple[float, float, float] | None = None  # a door's closed position
        self.level = False  # part of the task's level, not placed by the script

    @property
    def pos(self) -> tuple[float, float, float]:
        p = self.node.get_pos()
        return (p.x, p.y, p.z)

    @property
    def hpr(self) -> tuple[float, float, float]:
        h = self.node.get_hpr()
        return (h.x, h.y, h.z)

    @property
    def size(self) -> tuple[float, float, float]:
        return asset(self.asset).size

    @property
    def is_open(self) -> bool:
        return self.closed_pos is not None

    def set_pos(self, pos: Sequence[float]) -> None:
        self.node.set_pos(_vector(pos, f"{self.name}: pos"))

    def set_hpr(self, hpr: Sequence[float]) -> None:
        self.node.set_hpr(_vector(hpr, f"{self.name}: hpr", -3600, 3600))

    def set_velocity(self, velocity: Sequence[float]) -> None:
        v = _vector(velocity, f"{self.name}: velocity", -MAX_SPEED, MAX_SPEED)
        node = self.node.node()
        if not isinstance(node, BulletRigidBodyNode) or self.body != "dynamic":
            raise SceneError(f"{self.name} is {self.body}; only a dynamic body has a velocity")
        node.set_linear_velocity(v)
        node.set_active(True)
        self.velocity = (v.x, v.y, v.z)

    def remove(self) -> None:
        self.world.remove(self.name)

    def __repr__(self) -> str:
        x, y, z = self.pos
        return f"<{self.asset} {self.name!r} {self.body} at ({x:.2f}, {y:.2f}, {z:.2f})>"


class Trigger:
    """A ghost box that reports what enters and leaves it, each frame, by name."""

    def __init__(self, name: str, node: NodePath, size: tuple[float, float, float]) -> None:
        self.name, self.node, self.size = name, node, size
        self.on_enter: list[Callback] = []
        self.on_exit: list[Callback] = []
        self.inside: tuple[str, ...] = ()

    @property
    def pos(self) -> tuple[float, float, float]:
        p = self.node.get_pos()
        return (p.x, p.y, p.z)


class World:
    """A Bullet world with a ground plane at z = 0, named objects, triggers, timers, movers,
    spawners, a scripted player and an event log. See the module docstring."""

    def __init__(self, seed: int = 0, dt: float = 1 / 60, substeps: int = 2) -> None:
        if not 1 / 1000 <= float(dt) <= 1 / 10 or not 1 <= int(substeps) <= 16:
            raise SceneError("dt must be 1 ms to 0.1 s and substeps 1 to 16")
        self.seed, self.dt, self.substeps = int(seed), float(dt), int(substeps)
        self.rng = random.Random(self.seed)
        self.root = NodePath("scene")
        self.bullet = BulletWorld()
        self.bullet.set_gravity(Vec3(0, 0, -9.81))
        ground = BulletRigidBodyNode("ground")
        ground.add_shape(BulletPlaneShape(Vec3(0, 0, 1), 0))
        ground.set_friction(GROUND_FRICTION)
        self.root.attach_new_node(ground)
        self.bullet.attach(ground)
        self.objects: dict[str, SceneObject] = {}
        self.triggers: dict[str, Trigger] = {}
        self.counters: dict[str, int] = {}
        self.events: list[dict[str, Any]] = []
        self.bindings: list[dict[str, Any]] = []
        self.movers: list[dict[str, Any]] = []
        self.spawners: list[dict[str, Any]] = []
        self.room: dict[str, Any] | None = None
        self._updates: list[Callback] = []
        self._timers: list[list[Any]] = []  # [due time, interval or None, remaining, fn]
        self._player: dict[str, Any] | None = None
        self.frame = 0
        self.frozen = False  # the verifier's replays: a script's own run() does nothing
        # Objects that bindings and movers may not act on (the verifier's player in its plays):
        # such an action is skipped and logged as a "refused" event.
        self.protected: set[str] = set()
        self.note = ""  # what the last tool did, in words

    # -- objects ------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulated seconds since the world was made."""
        return self.frame * self.dt

    def _new_name(self, base: str) -> str:
        k = 1
        while f"{base}_{k}" in self.objects or f"{base}_{k}" in self.triggers:
            k += 1
        return f"{base}_{k}"

    def _check_name(self, name: str) -> str:
        if not isinstance(name, str) or not NAME.match(name):
            raise SceneError(
                f"name {name!r} must start with a letter and hold up to 40 letters, digits or _"
            )
        if name in self.objects or name in self.triggers:
            raise SceneError(f"the name {name!r} is taken")
        return name

    def spawn(
        self,
        asset_name: str,
        pos: Sequence[float] = (0.0, 0.0, 0.0),
        hpr: Sequence[float] = (0.0, 0.0, 0.0),
        *,
        name: str | None = None,
        body: str | None = None,
        mass: float | None = None,
        friction: float | None = None,
        restitution: float | None = None,
        velocity: Sequence[float] | None = None,
    ) -> SceneObject:
        """Spawn a catalogue asset at ``pos`` (its bounding-box centre, m) turned by ``hpr``
        (degrees), with a ``body`` (``static``, ``dynamic``, ``kinematic`` or ``ghost``; default:
        the asset's) and optional ``mass`` (kg), ``friction``, ``restitution`` and initial
        ``velocity`` (m/s). ``name`` defaults to ``<asset>_<k>``, the lowest free ``k``."""
        if asset_name not in ASSETS:
            raise SceneError(f"unknown asset {asset_name!r}; known: {', '.join(ASSETS)}")
        if len(self.objects) >= MAX_OBJECTS:
            raise SceneError(f"the world holds at most {MAX_OBJECTS} objects")
        entry = asset(asset_name)
        name = self._check_name(name) if name is not None else self._new_name(asset_name)
        body = entry.body if body is None else body
        if body not in BODIES:
            raise SceneError(f"body must be one of {', '.join(BODIES)}, got {body!r}")
        position, angles = _vector(pos, f"{name}: pos"), _vector(hpr, f"{name}: hpr", -3600, 3600)
        mass = entry.mass if mass is None else _positive(mass, f"{name}: mass (kg)", 10_000)
        if body == "dynamic" and mass <= 0:
            raise SceneError(f"{name}: a dynamic body needs a mass above 0 kg")
        friction = entry.friction if friction is None else _positive(friction, "friction", 10)
        restitution = (
            entry.restitution if restitution is None else _positive(restitution, "restitution", 1)
        )
        node: Any = BulletGhostNode(name) if body == "ghost" else BulletRigidBodyNode(name)
        for part in entry.parts:
            node.add_shape(_shape(part), TransformState.make_pos(Point3(*part.offset)))
        if body != "ghost":
            node.set_mass(mass if body == "dynamic" else 0.0)
            node.set_kinematic(body == "kinematic")
            node.set_friction(friction)
            node.set_restitution(restitution)
            if body == "dynamic":
                node.set_deactivation_enabled(False)  # sleeping bodies would depend on history
        path = self.root.attach_new_node(node)
        path.set_pos(position)
        path.set_hpr(angles)
        self.bullet.attach(node)
        obj = SceneObject(self, name, asset_name, body, path, mass, friction, restitution)
        self.objects[name] = obj
        if velocity is not None:
            obj.set_velocity(velocity)
        return obj

    def get(self, name: str) -> SceneObject:
        """The object called ``name``."""
        try:
            return self.objects[name]
        except (KeyError, TypeError):
            raise SceneError(f"no object is called {name!r}") from None

    def remove(self, name: str) -> None:
        """Remove the object ``name`` from the world."""
        obj = self.get(name)
        self.bullet.remove(obj.node.node())
        obj.node.remove_node()
        del self.objects[name]

    def set_body(
        self,
        name: str,
        body: str,
        mass: float | None = None,
        friction: float | None = None,
        restitution: float | None = None,
    ) -> SceneObject:
        """Give ``name`` a new body (respawned in place, same name)."""
        old = self.get(name)
        pos, hpr, asset_name, level = old.pos, old.hpr, old.asset, old.level
        self.remove(name)
        obj = self.spawn(
            asset_name,
            pos,
            hpr,
            name=name,
            body=body,
            mass=mass,
            friction=friction,
            restitution=restitution,
        )
        obj.level = level
        return obj

    # -- logic ---------------------------------------------------------------------------------
    def trigger(
        self,
        name: str,
        pos: Sequence[float],
        size: Sequence[float] = (1.0, 1.0, 1.0),
        on_enter: Callback | None = None,
        on_exit: Callback | None = None,
    ) -> Trigger:
        """A ghost box of ``size`` (m) centred at ``pos``. ``on_enter(world, trigger, other)`` and
        ``on_exit(...)`` are called with names when an object starts or stops overlapping it."""
        if len(self.triggers) >= MAX_TRIGGERS:
            raise SceneError(f"the world holds at most {MAX_TRIGGERS} triggers")
        self._check_name(name)
        extent = _vector(size, f"{name}: size", 0.01, 100)
        node = BulletGhostNode(name)
        node.add_shape(BulletBoxShape(extent / 2))
        path = self.root.attach_new_node(node)
        path.set_pos(_vector(pos, f"{name}: pos"))
        self.bullet.attach(node)
        trigger = Trigger(name, path, (extent.x, extent.y, extent.z))
        self.triggers[name] = trigger
        if on_enter is not None:
            trigger.on_enter.append(on_enter)
        if on_exit is not None:
            trigger.on_exit.append(on_exit)
        return trigger

    def on_trigger(self, trigger: str, event: str, callback: Callback) -> None:
        """Call ``callback(world, trigger, other)`` on the trigger's ``"enter"`` or ``"exit"``."""
        found = self._trigger(trigger)
        if event not in EVENTS:
            raise SceneError(f"event must be 'enter' or 'exit', got {event!r}")
        (found.on_enter if event == "enter" else found.on_exit).append(callback)

    def bind(
        self,
        trigger: str,
        event: str,
        action: str,
        target: str = "",
        amount: int = 1,
        only: str = "",
    ) -> None:
        """Declarative logic (plain data, part of the description): when something (``only``:
        an object name or asset, if given) enters or exits ``trigger``, ``open``, ``close``,
        ``toggle`` or ``destroy`` the object ``target`` (``"other"``: what entered),
        ``count`` ``amount`` on the counter ``target``, or ``spawn`` the asset ``target``
        at the trigger."""
        self._trigger(trigger)
        if event not in EVENTS:
            raise SceneError(f"event must be 'enter' or 'exit', got {event!r}")
        if action not in ACTIONS:
            raise SceneError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
        if action == "spawn" and target not in ASSETS:
            raise SceneError(f"spawn needs an asset as target, got {target!r}")
        self.bindings.append(
            {
                "trigger": trigger,
                "event": event,
                "action": action,
                "target": str(target),
                "amount": int(amount),
                "only": str(only),
            }
        )

    def on_update(self, callback: Callback) -> None:
        """Call ``callback(world, dt)`` every frame, before physics."""
        self._updates.append(callback)

    def after(self, seconds: float, callback: Callback) -> None:
        """Call ``callback(world)`` once, ``seconds`` from now."""
        self._timers.append(
            [self.time + _positive(seconds, "seconds", MAX_RUN_S), None, 1, callback]
        )

    def every(self, seconds: float, callback: Callback, count: int | None = None) -> None:
        """Call ``callback(world)`` every ``seconds``, first ``seconds`` from now, ``count`` times
        (``None``: for ever)."""
        interval = _positive(seconds, "seconds", MAX_RUN_S)
        if interval < self.dt:
            raise SceneError(f"an interval must be at least one frame ({self.dt:.4f} s)")
        self._timers.append([self.time + interval, interval, count, callback])

    def mover(
        self, target: str, points: Iterable[Sequence[float]], speed: float = 1.0, loop: bool = True
    ) -> None:
        """Move ``target`` (made kinematic) through ``points`` at ``speed`` m/s; with ``loop``,
        back and forth for ever (ping-pong), else it stops at the last point."""
        obj = self.get(target)
        if target in self.protected:
            raise SceneError(f"a mover may not move {target}; the verifier walks it")
        waypoints = [_vector(p, f"{target}: waypoint") for p in points]
        if not 2 <= len(waypoints) <= 64:
            raise SceneError("a mover needs 2 to 64 waypoints")
        speed = _positive(speed, "speed (m/s)", MAX_SPEED)
        if obj.body != "kinematic":
            obj = self.set_body(target, "kinematic")
        obj.set_pos(waypoints[0])
        self.movers.append(
            {
                "target": target,
                "points": [[p.x, p.y, p.z] for p in waypoints],
                "speed": speed,
                "loop": bool(loop),
            }
        )

    def spawner(
        self,
        asset_name: str,
        pos: Sequence[float],
        interval: float,
        count: int,
        velocity: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        """Spawn ``count`` ``asset_name`` objects at ``pos``, one every ``interval`` seconds,
        the first one ``interval`` from now, each with ``velocity``."""
        if asset_name not in ASSETS:
            raise SceneError(f"unknown asset {asset_name!r}")
        if not isinstance(count, int) or not 1 <= count <= 200:
            raise SceneError(f"count must be an integer from 1 to 200, got {count!r}")
        interval = _positive(interval, "interval (s)", MAX_RUN_S)
        if interval < self.dt:
            raise SceneError(f"an interval must be at least one frame ({self.dt:.4f} s)")
        position = _vector(pos, "spawner: pos")
        v = _vector(velocity, "spawner: velocity", -MAX_SPEED, MAX_SPEED)
        self.spawners.append(
            {
                "asset": asset_name,
                "pos": [position.x, position.y, position.z],
                "interval": interval,
                "count": count,
                "velocity": [v.x, v.y, v.z],
                "spawned": 0,
                "start": self.time,
            }
        )

    def clear_logic(self) -> int:
        """Remove every trigger (with its callbacks), binding, mover, spawner, ``on_update``
        callback and timer: the logic scripts add (a task's level has none). Returns how many
        things went."""
        gone = sum(map(len, (self.triggers, self.bindings, self.movers, self.spawners)))
        gone += len(self._updates) + len(self._timers)
        for trigger in self.triggers.values():
            self.bullet.remove(trigger.node.node())
            trigger.node.remove_node()
        self.triggers.clear()
        for logic in (self.bindings, self.movers, self.spawners, self._updates, self._timers):
            logic.clear()
        return gone

    def count(self, counter: str, amount: int = 1) -> int:
        """Add ``amount`` to the counter ``counter``; returns its value."""
        self.counters[counter] = self.counters.get(counter, 0) + int(amount)
        self.log("count", counter=counter, value=self.counters[counter])
        return self.counters[counter]

    def open(self, name: str) -> None:
        """Open a door (or any object): it slides up by its height. Opening an open door does
        nothing."""
        obj = self.get(name)
        if obj.closed_pos is None:
            obj.closed_pos = obj.pos
            x, y, z = obj.pos
            obj.node.set_pos(x, y, z + obj.size[2])
            self.log("open", object=name)

    def close(self, name: str) -> None:
        """Close what :meth:`open` opened."""
        obj = self.get(name)
        if obj.closed_pos is not None:
            obj.node.set_pos(*obj.closed_pos)
            obj.closed_pos = None
            self.log("close", object=name)

    def toggle(self, name: str) -> None:
        """Open ``name`` if closed, close it if open."""
        (self.close if self.get(name).is_open else self.open)(name)

    def destroy(self, name: str) -> None:
        """Remove ``name`` and log it."""
        self.remove(name)
        self.log("destroy", object=name)

    def log(self, kind: str, **data: Any) -> None:
        """Add an event ``{"t", "frame", "kind", ...data}`` to ``world.events``."""
        if len(self.events) < MAX_EVENTS:
            self.events.append(
                {"t": round(self.time, 6), "frame": self.frame, "kind": str(kind), **data}
            )

    # -- the player ----------------------------------------------------------------------------
    def player_path(
        self,
        waypoints: Iterable[Sequence[float]],
        speed: float = 1.5,
        name: str = "player",
        waits: Sequence[float] = (),
    ) -> SceneObject:
        """A kinematic player (spawned if missing) that walks through ``waypoints`` at ``speed``
        m/s, starting at the first, stands still ``waits[k]`` seconds on reaching waypoint ``k``
        (none if not given), and stops at the last (see :func:`path_point`)."""
        points = [_vector(p, "player waypoint") for p in waypoints]
        if not 1 <= len(points) <= 256:
            raise SceneError("a player path needs 1 to 256 waypoints")
        pauses = [_positive(w, "a wait (s)", MAX_RUN_S) for w in waits][: len(points)]
        player = self._ensure_player(name, points[0])
        self._player = {
            "name": player.name,
            "points": [tuple(p) for p in points],
            "speed": _positive(speed, "speed (m/s)", MAX_SPEED),
            "waits": pauses,
            "t0": self.time,
            "inputs": None,
        }
        return player

    def player_inputs(
        self,
        inputs: Iterable[Sequence[float]],
        start: Sequence[float] = (0, 0, 0.9),
        name: str = "player",
    ) -> SceneObject:
        """A kinematic player that follows an input sequence: ``(seconds, vx, vy)`` rows, each a
        velocity (m/s) held for that long."""
        rows = [(_positive(s, "seconds", MAX_RUN_S), float(vx), float(vy)) for s, vx, vy in inputs]
        for _, vx, vy in rows:
            _vector((vx, vy, 0), "player input", -MAX_SPEED, MAX_SPEED)
        player = self._ensure_player(name, _vector(start, "player start"))
        self._player = {"name": player.name, "inputs": rows, "t0": self.time}
        return player

    def _ensure_player(self, name: str, start: Vec3) -> SceneObject:
        if name not in self.objects:
            self.spawn("player", start, name=name)
        player = self.get(name)
        player.node.set_pos(start)
        return player

    def _move_player(self) -> None:
        plan = self._player
        if plan is None or plan["name"] not in self.objects:
            return
        node = self.objects[plan["name"]].node
        if plan["inputs"] is not None:
            elapsed = self.time - plan["t0"]
            for seconds, vx, vy in plan["inputs"]:
                if elapsed < seconds:
                    node.set_pos(node.get_pos() + Vec3(vx, vy, 0) * self.dt)
                    return
                elapsed -= seconds
            return
        # Where the player is once this frame has run: a function of time alone, which the
        # verifier recomputes for its held-out paths.
        elapsed = self.time + self.dt - plan["t0"]
        node.set_pos(*path_point(plan["points"], plan["speed"], plan["waits"], elapsed))

    # -- simulation ----------------------------------------------------------------------------
    def step(self) -> None:
        """One frame: update callbacks, due timers, movers, spawners and the player, then
        ``substeps`` Bullet steps, then trigger events."""
        self.run_frame_callbacks()
        self._move_movers()
        self._run_spawners()
        self._move_player()
        self.bullet.do_physics(self.dt, self.substeps, self.dt / self.substeps)
        self.frame += 1
        self._fire_triggers()

    def run_frame_callbacks(self) -> None:
        """The start of a frame: ``on_update`` callbacks, then timers that are due."""
        for callback in list(self._updates):
            callback(self, self.dt)
        now = self.time
        for timer in [t for t in self._timers if t[0] <= now + 1e-9]:
            due, interval, remaining, callback = timer
            if interval is None or remaining == 1:
                self._timers.remove(timer)
            else:
                timer[0] = due + interval
                timer[2] = None if remaining is None else remaining - 1
            callback(self)

    def next_timer(self) -> float | None:
        """When the next timer is due (s), or None."""
        return min((t[0] for t in self._timers), default=None)

    def run(self, seconds: float) -> None:
        """Simulate ``seconds`` (at most ``MAX_RUN_S`` per call) frame by frame."""
        frames = round(_positive(seconds, "seconds", MAX_RUN_S) / self.dt)
        if self.frozen:
            return
        for _ in range(frames):
            self.step()

    def _move_movers(self) -> None:
        t = self.time + self.dt  # where they are when this frame's physics has run
        for mover in self.movers:
            if mover["target"] not in self.objects:
                continue
            points = [Vec3(*p) for p in mover["points"]]
            legs = [(b - a).length() for a, b in itertools.pairwise(points)]
            total = sum(legs)
            if total <= 0 or mover["speed"] <= 0:
                continue
            s = mover["speed"] * t
            if mover["loop"]:
                s %= 2 * total
                if s > total:
                    s = 2 * total - s
            s = min(s, total)
            for a, b, length in zip(points, points[1:], legs, strict=False):
                if s <= length or b is points[-1]:
                    where = a + (b - a) * (s / length if length > 0 else 0)
                    self.objects[mover["target"]].node.set_pos(where)
                    break
                s -= length

    def _run_spawners(self) -> None:
        for spawner in self.spawners:
            due = spawner["start"] + spawner["interval"] * (spawner["spawned"] + 1)
            if spawner["spawned"] < spawner["count"] and self.time + 1e-9 >= due:
                spawner["spawned"] += 1
                obj = self.spawn(spawner["asset"], spawner["pos"])
                if obj.body == "dynamic" and any(spawner["velocity"]):
                    obj.set_velocity(spawner["velocity"])
                self.log("spawn", object=obj.name, asset=spawner["asset"])

    def _fire_triggers(self) -> None:
        for name in sorted(self.triggers):
            trigger = self.triggers.get(name)
            if trigger is None:
                continue
            ghost = trigger.node.node()
            # Bullet's candidates (bounding boxes with margins), confirmed exactly: an object is
            # inside when its bounding box overlaps the trigger's box.
            candidates = {n.get_name() for n in ghost.get_overlapping_nodes()}
            inside = tuple(
                sorted(n for n in candidates & set(self.objects) if self._overlaps(trigger, n))
            )
            entered = [n for n in inside if n not in trigger.inside]
            left = [n for n in trigger.inside if n not in inside]
            trigger.inside = inside
            for event, others, callbacks in (
                ("exit", left, trigger.on_exit),
                ("enter", entered, trigger.on_enter),
            ):
                for other in others:
                    self.log(event, trigger=name, object=other)
                    for callback in list(callbacks):
                        callback(self, name, other)
                    self._apply_bindings(name, event, other)

    def _overlaps(self, trigger: Trigger, name: str) -> bool:
        obj = self.objects[name]
        quat = obj.node.get_quat()
        half = Vec3(*obj.size) / 2
        reach = [  # the object's world bounding box half sizes
            sum(
                abs(axis[k]) * half[i]
                for i, axis in enumerate(
                    (
                        quat.xform(Vec3(1, 0, 0)),
                        quat.xform(Vec3(0, 1, 0)),
                        quat.xform(Vec3(0, 0, 1)),
                    )
                )
            )
            for k in range(3)
        ]
        gap = obj.node.get_pos() - trigger.node.get_pos()
        return all(abs(gap[k]) < reach[k] + trigger.size[k] / 2 for k in range(3))

    def _apply_bindings(self, trigger: str, event: str, other: str) -> None:
        for b in self.bindings:
            if b["trigger"] != trigger or b["event"] != event:
                continue
            if (
                b["only"]
                and other != b["only"]
                and (other not in self.objects or self.objects[other].asset != b["only"])
            ):
                continue
            target = other if b["target"] == "other" else b["target"]
            if target in self.protected and b["action"] not in ("count", "spawn"):
                self.log("refused", action=b["action"], object=target, trigger=trigger)
                continue
            if b["action"] == "count":
                self.count(target, b["amount"])
            elif b["action"] == "spawn":
                self.spawn(target, self.triggers[trigger].pos)
            elif target in self.objects:
                getattr(self, b["action"])(target)

    def _trigger(self, name: str) -> Trigger:
        try:
            return self.triggers[name]
        except (KeyError, TypeError):
            raise SceneError(f"no trigger is called {name!r}") from None

    # -- state and description ----------------------------------------------------------------
    def state(self) -> dict[str, list[float]]:
        """Every object's position (m), quaternion (w, x, y, z) and linear velocity (m/s), by
        name: exact floats, for determinism checks."""
        found = {}
        for name in sorted(self.objects):
            path = self.objects[name].node
            p, q, node = path.get_pos(), path.get_quat(), path.node()
            v = node.get_linear_velocity() if isinstance(node, BulletRigidBodyNode) else Vec3(0)
            found[name] = [p.x, p.y, p.z, q.get_r(), q.get_i(), q.get_j(), q.get_k(), v.x, v.y, v.z]
        return found

    def describe(self) -> dict[str, Any]:
        """The scene as plain data (JSON-ready): settings, room, objects with transforms and
        bodies, triggers, bindings, movers, spawners and counters. Python callbacks are not
        included; ``World.build`` rebuilds the rest."""
        return {
            "version": DESCRIPTION_VERSION,
            "seed": self.seed,
            "dt": self.dt,
            "substeps": self.substeps,
            "room": self.room,
            "objects": [
                {
                    "name": o.name,
                    "asset": o.asset,
                    "pos": list(o.pos),
                    "hpr": list(o.hpr),
                    "body": o.body,
                    "mass": o.mass,
                    "friction": o.friction,
                    "restitution": o.restitution,
                    "velocity": list(o.velocity),
                    "open": o.is_open,
                    "level": o.level,
                }
                for o in self.objects.values()
            ],
            "triggers": [
                {"name": t.name, "pos": list(t.pos), "size": list(t.size)}
                for t in self.triggers.values()
            ],
            "bindings": [dict(b) for b in self.bindings],
            "movers": [dict(m) for m in self.movers],
            "spawners": [
                {k: v for k, v in s.items() if k not in ("spawned", "start")} for s in self.spawners
            ],
            "counters": dict(self.counters),
        }

    @classmethod
    def build(cls, description: dict[str, Any]) -> World:
        """A new world from :meth:`describe`'s output; raises :class:`SceneError` on bad data."""
        if not isinstance(description, dict):
            raise SceneError("a scene description must be a dict")
        world = cls(
            description.get("seed", 0),
            description.get("dt", 1 / 60),
            description.get("substeps", 2),
        )
        if description.get("room") is not None:
            room = description["room"]
            world.make_room(room["width"], room["depth"], room.get("door_x", 0.0))
        for o in description.get("objects", ()):
            if o.get("name") in world.objects:
                continue  # the room's walls
            obj = world.spawn(
                o["asset"],
                o["pos"],
                o.get("hpr", (0, 0, 0)),
                name=o["name"],
                body=o.get("body"),
                mass=o.get("mass"),
                friction=o.get("friction"),
                restitution=o.get("restitution"),
            )
            obj.level = bool(o.get("level", False))
            if any(o.get("velocity", (0, 0, 0))):
                obj.set_velocity(o["velocity"])
            if o.get("open"):
                x, y, z = obj.pos
                obj.closed_pos = (x, y, z - obj.size[2])
        for t in description.get("triggers", ()):
            world.trigger(t["name"], t["pos"], t["size"])
        for b in description.get("bindings", ()):
            world.bind(
                b["trigger"],
                b["event"],
                b["action"],
                b.get("target", ""),
                b.get("amount", 1),
                b.get("only", ""),
            )
        for m in description.get("movers", ()):
            world.mover(m["target"], m["points"], m["speed"], m.get("loop", True))
        for s in description.get("spawners", ()):
            world.spawner(
                s["asset"], s["pos"], s["interval"], s["count"], s.get("velocity", (0, 0, 0))
            )
        world.counters = {str(k): int(v) for k, v in description.get("counters", {}).items()}
        return world

    def make_room(self, width: float, depth: float, door_x: float = 0.0) -> None:
        """A ``width`` × ``depth`` m room centred on the origin: four static walls 1 m high
        named ``wall_north`` (+Y), ``wall_south``, ``wall_east`` (+X), ``wall_west``; the south
        wall has a 1 m doorway centred at x = ``door_x``."""
        width = _positive(width, "room width (m)", 100)
        depth = _positive(depth, "room depth (m)", 100)
        self.room = {"width": width, "depth": depth, "door_x": float(door_x)}
        t, h = 0.2, 1.0
        walls = {
            "wall_north": ((0, depth / 2 + t / 2, h / 2), (width + 2 * t, t, h)),
            "wall_east": ((width / 2 + t / 2, 0, h / 2), (t, depth, h)),
            "wall_west": ((-width / 2 - t / 2, 0, h / 2), (t, depth, h)),
        }
        left, right = -width / 2 - t, width / 2 + t
        gap_l, gap_r = door_x - 0.5, door_x + 0.5
        walls["wall_south"] = (
            ((left + gap_l) / 2, -depth / 2 - t / 2, h / 2),
            (gap_l - left, t, h),
        )
        walls["wall_south_2"] = (
            ((gap_r + right) / 2, -depth / 2 - t / 2, h / 2),
            (right - gap_r, t, h),
        )
        for name, (center, size) in walls.items():
            node = BulletRigidBodyNode(name)
            node.add_shape(BulletBoxShape(Vec3(*size) / 2))
            path = self.root.attach_new_node(node)
            path.set_pos(*center)
            path.set_python_tag("size", size)
            self.bullet.attach(node)
