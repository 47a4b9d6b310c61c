"""The game-scene tool set: each scene operation defined once, as a typed function on the world.

Every tool takes the session's ``world`` and returns it, after leaving a one-line account of what
it did in ``world.note``. Lengths are in m, angles in degrees, times in s; the world is Z-up and
positions are bounding-box centres (``z`` omitted: the object rests on the floor). Object names
come from a fixed vocabulary (``<asset>_<k>``, ``zone_<k>``, ``player``), so a discrete grammar
can name every object a tool call can make. Scripts reach the tools as
``tools.spawn(world, "crate", x=0, y=0)``; tool calls apply them to ``world``.
"""

from __future__ import annotations

from typing import Annotated, Any

from toolgym.envs.scene.catalogue import ASSET_NAMES, BODIES
from toolgym.envs.scene.catalogue import asset as catalogue_asset
from toolgym.envs.scene.runtime import ACTIONS, EVENTS, SceneError, World
from toolgym.envs.tools import Param, ToolCallError, ToolRegistry

MAX_INDEX = 20
OBJECT_NAMES = (
    *(f"{a}_{k}" for a in ASSET_NAMES for k in range(1, MAX_INDEX + 1)),
    "player",
)
TRIGGER_NAMES = tuple(f"zone_{k}" for k in range(1, MAX_INDEX + 1))
COUNTERS = ("coins", "score", "count")


def _check_world(world: Any) -> str | None:
    if not isinstance(world, World):
        return f"the first argument must be the session's world, got {type(world).__name__}"
    return None


registry = ToolRegistry("scene", check_part=_check_world)

Coordinate = Annotated[float, Param("m", -50.0, 50.0, 0.05)]
Height = Annotated[float, Param("m", 0.0, 20.0, 0.05)]
Extent = Annotated[float, Param("m", 0.05, 20.0, 0.05)]
Speed = Annotated[float, Param("m/s", -20.0, 20.0, 0.1)]
Angle = Annotated[float, Param("deg", -360.0, 360.0, 5.0)]
Seconds = Annotated[float, Param("s", 0.05, 10.0, 0.05)]
AssetName = Annotated[str, Param(choices=ASSET_NAMES)]
ObjectName = Annotated[str, Param(choices=OBJECT_NAMES)]
TriggerName = Annotated[str, Param(choices=TRIGGER_NAMES)]
Count = Annotated[int, Param(None, 1, MAX_INDEX, 1)]


def _resting_z(asset_name: str, z: float) -> float:
    return catalogue_asset(asset_name).size[2] / 2 if z < 0 else z


def _scene(call: Any) -> Any:
    """``call()``, with the runtime's errors as the tool's one-line errors."""
    try:
        return call()
    except SceneError as exc:
        raise ToolCallError(str(exc)) from None


def _place(
    world: World, asset_name: str, pos: tuple[float, float, float], heading: float, body: str
) -> Any:
    free = [n for n in OBJECT_NAMES if n.startswith(asset_name + "_") and n not in world.objects]
    if not free:
        raise ToolCallError(f"there are already {MAX_INDEX} {asset_name} objects")
    return _scene(
        lambda: world.spawn(
            asset_name, pos, (heading, 0, 0), name=free[0], body=None if body == "default" else body
        )
    )


@registry.tool
def spawn(
    world: Any,
    asset: AssetName,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    z: Annotated[float, Param("m", -1.0, 20.0, 0.05)] = -1.0,
    heading: Angle = 0.0,
    body: Annotated[str, Param(choices=("default", *BODIES))] = "default",
) -> Any:
    """Spawn a catalogue asset, named <asset>_<k> with the lowest free k.

    Args:
        asset: what to spawn: a catalogue asset (crate, table, chair, shelf, ball, ramp, ...).
        x: centre X.
        y: centre Y.
        z: centre Z; -1 (the default): the object rests on the floor.
        heading: turn about +Z, counter-clockwise; at 0 the front faces +Y.
        body: static, dynamic, kinematic or ghost; default, the asset's own.
    """
    obj = _place(world, asset, (x, y, _resting_z(asset, z)), heading, body)
    world.note = f"spawned {obj!r}"
    return world


@registry.tool
def spawn_row(
    world: Any,
    asset: AssetName,
    count: Count,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    dx: Annotated[float, Param("m", -5.0, 5.0, 0.05)] = 0.0,
    dy: Annotated[float, Param("m", -5.0, 5.0, 0.05)] = 0.5,
    heading: Angle = 0.0,
) -> Any:
    """Spawn count copies of an asset resting on the floor, the first at (x, y), each next one
    (dx, dy) further (a domino chain, a row of chairs).

    Args:
        asset: what to spawn.
        count: how many.
        x: first centre X.
        y: first centre Y.
        dx: step along X.
        dy: step along Y.
        heading: turn of every copy about +Z.
    """
    names = [
        _place(
            world, asset, (x + k * dx, y + k * dy, _resting_z(asset, -1.0)), heading, "default"
        ).name
        for k in range(count)
    ]
    world.note = f"spawned {', '.join(names)}"
    return world


@registry.tool
def spawn_stack(
    world: Any,
    asset: AssetName,
    count: Count,
    x: Coordinate = 0.0,
    y: Coordinate = 0.0,
    heading: Angle = 0.0,
) -> Any:
    """Stack count copies of an asset at (x, y), the first on the floor, each on the one below.

    Args:
        asset: what to stack.
        count: how many.
        x: centre X.
        y: centre Y.
        heading: turn of every copy about +Z.
    """
    height = catalogue_asset(asset).size[2]
    names = [
        _place(world, asset, (x, y, height * (k + 0.5)), heading, "default").name
        for k in range(count)
    ]
    world.note = f"stacked {', '.join(names)}"
    return world


@registry.tool
def move(
    world: Any,
    name: ObjectName,
    x: Coordinate,
    y: Coordinate,
    z: Annotated[float, Param("m", -1.0, 20.0, 0.05)] = -1.0,
) -> Any:
    """Move an object so its centre is at (x, y, z).

    Args:
        name: the object.
        x: centre X.
        y: centre Y.
        z: centre Z; -1 (the default): the object rests on the floor.
    """
    obj = _scene(lambda: world.get(name))
    _scene(lambda: obj.set_pos((x, y, _resting_z(obj.asset, z))))
    world.note = f"moved {obj!r}"
    return world


@registry.tool
def rotate(
    world: Any, name: ObjectName, heading: Angle, pitch: Angle = 0.0, roll: Angle = 0.0
) -> Any:
    """Turn an object to heading, pitch and roll (Panda3D's HPR; at heading 0 its front faces +Y).

    Args:
        name: the object.
        heading: turn about +Z, counter-clockwise.
        pitch: tilt about the object's X axis.
        roll: tilt about the object's Y axis.
    """
    obj = _scene(lambda: world.get(name))
    _scene(lambda: obj.set_hpr((heading, pitch, roll)))
    world.note = f"turned {name} to heading {heading:g}°"
    return world


@registry.tool
def delete(world: Any, name: ObjectName) -> Any:
    """Remove an object from the scene.

    Args:
        name: the object.
    """
    _scene(lambda: world.remove(name))
    world.note = f"deleted {name}"
    return world


@registry.tool
def set_body(
    world: Any,
    name: ObjectName,
    body: Annotated[str, Param(choices=BODIES)],
    mass: Annotated[float, Param("kg", -1.0, 1000.0, 0.5)] = -1.0,
    friction: Annotated[float, Param(None, -1.0, 2.0, 0.05)] = -1.0,
    restitution: Annotated[float, Param(None, -1.0, 1.0, 0.05)] = -1.0,
) -> Any:
    """Give an object a body: static, dynamic, kinematic or ghost, with mass, friction and
    restitution (-1, the default: the asset's own).

    Args:
        name: the object.
        body: static, dynamic, kinematic or ghost (no collision).
        mass: mass of a dynamic body.
        friction: friction coefficient.
        restitution: bounciness, 0 to 1.
    """
    given = [None if v < 0 else v for v in (mass, friction, restitution)]
    obj = _scene(lambda: world.set_body(name, body, *given))
    world.note = f"{obj!r}, mass {obj.mass:g} kg"
    return world


@registry.tool
def set_velocity(world: Any, name: ObjectName, vx: Speed, vy: Speed, vz: Speed = 0.0) -> Any:
    """Give a dynamic object an initial velocity.

    Args:
        name: the object.
        vx: velocity along X.
        vy: velocity along Y.
        vz: velocity along Z.
    """
    obj = _scene(lambda: world.get(name))
    _scene(lambda: obj.set_velocity((vx, vy, vz)))
    world.note = f"{name} moves at ({vx:g}, {vy:g}, {vz:g}) m/s"
    return world


@registry.tool
def add_trigger(
    world: Any,
    name: TriggerName,
    x: Coordinate,
    y: Coordinate,
    z: Height = 0.9,
    size_x: Extent = 1.0,
    size_y: Extent = 1.0,
    size_z: Extent = 1.8,
) -> Any:
    """Add a ghost trigger box centred at (x, y, z); on_trigger connects it to actions.

    Args:
        name: the trigger.
        x: centre X.
        y: centre Y.
        z: centre Z.
        size_x: size along X.
        size_y: size along Y.
        size_z: size along Z.
    """
    _scene(lambda: world.trigger(name, (x, y, z), (size_x, size_y, size_z)))
    world.note = f"trigger {name} at ({x:g}, {y:g}, {z:g})"
    return world


@registry.tool
def on_trigger(
    world: Any,
    trigger: TriggerName,
    action: Annotated[str, Param(choices=ACTIONS)],
    target: Annotated[str, Param(choices=(*OBJECT_NAMES, *COUNTERS, *ASSET_NAMES, "other"))],
    event: Annotated[str, Param(choices=EVENTS)] = "enter",
    only: Annotated[str, Param(choices=("", *ASSET_NAMES, *OBJECT_NAMES))] = "",
    amount: Annotated[int, Param(None, -10, 10, 1)] = 1,
) -> Any:
    """Connect a trigger to an action: when something enters (or exits) it, open, close, toggle
    or destroy the target object ("other": what entered), count amount on the target counter, or
    spawn the target asset at the trigger.

    Args:
        trigger: the trigger.
        action: open, close, toggle, destroy, count or spawn.
        target: an object, "other", a counter (coins, score, count) or an asset (for spawn).
        event: enter or exit.
        only: react only to this object or asset (empty: to anything).
        amount: what count adds.
    """
    _scene(lambda: world.bind(trigger, event, action, target, amount, only))
    world.note = f"on {event} {trigger}: {action} {target}"
    return world


@registry.tool
def add_waypoint_mover(
    world: Any,
    name: ObjectName,
    x1: Coordinate,
    y1: Coordinate,
    z1: Height,
    x2: Coordinate,
    y2: Coordinate,
    z2: Height,
    speed: Annotated[float, Param("m/s", 0.1, 20.0, 0.1)] = 1.0,
    loop: Annotated[str, Param(choices=("yes", "no"))] = "yes",
) -> Any:
    """Make an object kinematic and move it from waypoint 1 to waypoint 2 (and back, with loop).

    Args:
        name: the object.
        x1: waypoint 1 X.
        y1: waypoint 1 Y.
        z1: waypoint 1 Z.
        x2: waypoint 2 X.
        y2: waypoint 2 Y.
        z2: waypoint 2 Z.
        speed: speed along the path.
        loop: yes: back and forth for ever; no: stop at waypoint 2.
    """
    points = [(x1, y1, z1), (x2, y2, z2)]
    _scene(lambda: world.mover(name, points, speed, loop == "yes"))
    world.note = f"{name} moves between the waypoints at {speed:g} m/s"
    return world


@registry.tool
def add_spawner(
    world: Any,
    asset: AssetName,
    x: Coordinate,
    y: Coordinate,
    z: Height,
    interval: Seconds,
    count: Count,
    vx: Speed = 0.0,
    vy: Speed = 0.0,
    vz: Speed = 0.0,
) -> Any:
    """Spawn count copies of an asset at (x, y, z), one every interval seconds, each with the
    velocity (vx, vy, vz).

    Args:
        asset: what to spawn.
        x: X.
        y: Y.
        z: Z.
        interval: time between spawns; the first comes one interval after the start.
        count: how many.
        vx: initial velocity X.
        vy: initial velocity Y.
        vz: initial velocity Z.
    """
    _scene(lambda: world.spawner(asset, (x, y, z), interval, count, (vx, vy, vz)))
    world.note = f"spawner of {count} {asset} every {interval:g} s"
    return world


@registry.tool
def simulate(world: Any, seconds: Seconds = 1.0) -> Any:
    """Run the simulation in this session, to see what happens (the verifier simulates its own
    copy of the scene from the start).

    Args:
        seconds: simulated time.
    """
    _scene(lambda: world.run(seconds))
    world.note = f"simulated {seconds:g} s; t = {world.time:.2f} s"
    return world


@registry.tool
def clear(world: Any) -> Any:
    """Remove every object the task's level did not place, and the logic scripts added
    (triggers, bindings, movers, spawners, timers and update callbacks)."""
    removed = [n for n, o in list(world.objects.items()) if not o.level]
    for name in removed:
        world.remove(name)
    logic = world.clear_logic()
    world.note = f"removed {len(removed)} objects" + (
        f" and {logic} pieces of logic" if logic else ""
    )
    return world


class Tools:
    """The registry's functions as attributes, for scripts: ``tools.spawn(world, "crate")``."""

    def __init__(self) -> None:
        for name, tool in registry.tools.items():
            setattr(self, name, tool.function)

    def __repr__(self) -> str:
        return f"<scene tools: {', '.join(registry.tools)}>"
