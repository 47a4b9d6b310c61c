"""Generic game-scene cheats for the reward fuzzer (``toolgym.envs.verification.fuzzing``), and the
honest near miss every one of them must score below.

Each cheat is a script an agent could send: usually the task's reference, then lines that move
or alter what it built through the scene API (``world``), so that it looks like the task done to
a verifier that reads too little: every value just past its threshold, motion in the frames a
sampler once skipped, support on the wrong surface (a ball's top, another object's edge), objects
inside others, triggers that only fit the paths the prompt shows, static bodies where the
catalogue says dynamic, callbacks doing a physics task's work, edits to the level. What a cheat
needs of a task is read off its template's spec (the constraints and the level), never by running
scene code here; a cheat that cannot apply to a task returns ``None``.

The near miss is the reference with one honest error (one object a little out of place, a value
a little off): it fails, but it is close. Units: m, s, degrees.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toolgym.envs.scene import verifier as rules
from toolgym.envs.scene.catalogue import ASSETS
from toolgym.envs.scene.families import TEMPLATES, Spec, spec_for
from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.fuzzing import Cheat

PAST_M = 0.002  # how far past a length threshold a cheat goes
PAST_DEG = 1.0  # ... and past an angle threshold
ASIDE_M = 1.5  # how far a cheat moves a body in the frames it hopes go unseen
BALL_M = 0.3  # the catalogue ball's diameter: what an object balanced on one is lifted by

# The objects the script placed (after the reference ran), by asset.
PLACED = "_placed = [o for o in list(world.objects.values()) if not o.level]\n"


def _spec(task: Task) -> Spec:
    return spec_for(task.parameters)


def _script(task: Task, body: str) -> str:
    return f"{task.reference.rstrip()}\n{body}"


def _constraints(spec: Spec, kind: str) -> list[dict[str, Any]]:
    return [c for c in spec.constraints if c["kind"] == kind]


def _spawned(spec: Spec) -> list[str]:
    """The assets of the objects a layout or physics reference places, one per object."""
    if spec.kind == "logic":
        return []
    out: list[str] = []
    for call in spec.tool_calls:
        if call["name"] == "spawn":
            out.append(call["arguments"]["asset"])
        elif call["name"] in ("spawn_row", "spawn_stack"):
            out += [call["arguments"]["asset"]] * int(call["arguments"]["count"])
    return out


def _places(spec: Spec) -> bool:
    """Whether the reference places objects (layout and physics but ``roll``)."""
    return bool(_spawned(spec))


# -- the cheats ----------------------------------------------------------------------------------


def past_thresholds(task: Task) -> str | None:
    """Every value just past the threshold that decides it, everywhere at once: chairs turned
    just past facing, tables just past aligned, things just off the wall, a layout dropped from
    just past what settling allows, a set-up floating just past support; a door lifted just
    short of the player's clearance, a coin nudged just past staying put instead of collected,
    a platform's path and a spawner's point just too far off."""
    spec = _spec(task)
    if spec.kind == "layout":
        lines = [PLACED]
        for c in _constraints(spec, "facing"):
            turn = c["tol_deg"] + PAST_DEG
            lines.append(
                f"for o in _placed:\n    if o.asset == {c['asset']!r}:\n"
                f"        o.set_hpr((o.hpr[0] + {turn}, 0, 0))\n"
            )
        for c in _constraints(spec, "aligned"):
            turn = rules.ALIGN_DEG + PAST_DEG
            lines.append(
                f"for o in _placed:\n    if o.asset == {c['asset']!r}:\n"
                f"        o.set_hpr((o.hpr[0] + {turn}, 0, 0))\n"
            )
        for c in _constraints(spec, "against_wall"):
            nx, ny = rules._WALL_NORMALS[c["wall"]]
            off = c["gap"] + PAST_M
            lines.append(
                f"for o in _placed:\n    if o.asset == {c['asset']!r}:\n        x, y, z = "
                f"o.pos\n        o.set_pos((x - {nx * off}, y - {ny * off}, z))\n"
            )
        drop = rules.RESTING_MOVE_M + PAST_M  # then it settles further than "rests" allows
        lines.append(f"for o in _placed:\n    x, y, z = o.pos\n    o.set_pos((x, y, z + {drop}))\n")
        return _script(task, "".join(lines))
    if spec.kind == "physics":
        if not _places(spec):
            return None
        lift = rules.SUPPORT_M + PAST_M  # every placed thing floats just past touching
        return _script(
            task,
            PLACED + f"for o in _placed:\n    x, y, z = o.pos\n    o.set_pos((x, y, z + {lift}))\n",
        )
    if _opens_doors(spec):
        lift = 2 * rules.PLAYER_HALF[2] - rules.OVERLAP_M - PAST_M  # under the player's height
        return _script(
            task,
            # From where the door stood: a gate opened again (a coin more) stays just short.
            "_shut = {}\n"
            "def _lift(name):\n    x, y, z = _shut.setdefault(name, world.get(name).pos)\n"
            f"    world.get(name).set_pos((x, y, z + {lift}))\n"
            "world.open = _lift\n",
        )
    if spec.template == "coins":
        nudge = rules.LEVEL_STILL_M + PAST_M
        return _script(
            task,
            "def _nudge(name):\n    x, y, z = world.get(name).pos\n"
            f"    world.get(name).set_pos((x + {nudge}, y, z))\n"
            "world.destroy = _nudge\n",
        )
    if spec.template == "platform":
        (c,) = _constraints(spec, "platform")
        off = rules.MOVER_TOL_M + PAST_M
        points = [[p[0], p[1] + off, p[2]] for p in c["points"]]
        return f"world.mover('platform_1', {points!r}, speed={c['speed']!r}, loop=True)\n"
    if spec.template == "spawner":
        (c,) = _constraints(spec, "spawner")
        x, y, z = c["pos"]
        return (
            f"world.spawner({c['asset']!r}, ({x + rules.SPAWN_NEAR_M + 0.05!r}, {y!r}, {z!r}), "
            f"interval={c['interval']!r}, count={c['count']})\n"
        )
    return None  # a family's own near miss (its ``near_miss`` hook) stands in for it


def _opens_doors(spec: Any) -> bool:
    """Whether a logic rule of ``spec`` judges a door open by its clear passages (the classic
    door, and the plate, timer, sequence and coin gates)."""
    return any("door" in c and "passages" in c for c in spec.constraints)


# Frames the logic session is asked about are the host's; (world.frame + 1) % 2 is the parity
# of the frame about to run, the one a host sampling every 2nd frame never saw.
_ODD = "(world.frame + 1) % 2"


def between_frames(task: Task) -> str | None:
    """Motion in the frames a sampler skips: the logic's subject somewhere else on every other
    frame (a door flung open, coins moved aside, a platform off its path, a spawner's objects
    flickering in and out), right again on the frames between."""
    spec = _spec(task)
    if spec.kind != "logic":
        return None  # layout and physics play objects only: no callback reaches the simulation
    if spec.template == "platform":
        (c,) = _constraints(spec, "platform")
        (a, b), speed = c["points"], c["speed"]
        return (
            "import math\n"
            f"A, B, L = {tuple(a)!r}, {tuple(b)!r}, {math.dist(a, b)!r}\n"
            "def _follow(world, dt):\n"
            f"    s = ({speed!r} * (world.time + dt)) % (2 * L)\n"
            "    f = (2 * L - s if s > L else s) / L\n"
            "    x, y, z = [p + (q - p) * f for p, q in zip(A, B)]\n"
            f"    world.get('platform_1').set_pos((x, y + ({ASIDE_M} if {_ODD} else 0), z))\n"
            "world.on_update(_follow)\n"
        )
    if spec.template == "spawner":
        (c,) = _constraints(spec, "spawner")
        return _script(
            task,
            (
                "def _flicker(world, dt):\n"
                "    if 'extra_1' in world.objects:\n        world.destroy('extra_1')\n"
                f"    if {_ODD}:\n        world.spawn({c['asset']!r}, {tuple(c['pos'])!r}, "
                "name='extra_1')\n"
                "world.on_update(_flicker)\n"
            ),
        )
    subjects = [o["name"] for o in spec.level["objects"] if o["asset"] in ("door", "coin")]
    subjects += [c["name"] for c in _constraints(spec, "lift") if "name" in c]  # its platform
    return _script(
        task,
        (
            f"_home = {{n: world.get(n).pos for n in {subjects!r}}}\n"
            "def _aside(world, dt):\n"
            "    for name, (x, y, z) in _home.items():\n"
            "        if name in world.objects and not world.get(name).is_open:\n"
            f"            world.get(name).set_pos((x, y, z + ({ASIDE_M} if {_ODD} else 0)))\n"
            "world.on_update(_aside)\n"
        ),
    )


def wrong_support(task: Task) -> str | None:
    """Every placed thing on a ball: lifted by a ball's height, a ball under each that stood on
    the floor (a little off its centre, so that it rolls off): the red team's dominoes."""
    spec = _spec(task)
    if not _places(spec):
        return None
    return _script(
        task,
        PLACED
        + (
            "for o in _placed:\n"
            "    x, y, z = o.pos\n"
            "    on_floor = abs(z - o.size[2] / 2) < 0.01\n"
            f"    o.set_pos((x, y, z + {BALL_M}))\n"
            "    if on_floor:\n"
            f"        world.spawn('ball', (x - 0.02, y, {BALL_M / 2}))\n"
        ),
    )


def edge_balance(task: Task) -> str | None:
    """Each thing that stands on another placed thing moved out until its centre is just past
    that thing's edge (a stack stepped by half a crate and a hair, crates at the table's rim)."""
    spec = _spec(task)
    if spec.template == "stack":
        step = 0.25 + PAST_M  # half a crate: every crate's centre past the edge below it
        return _script(
            task,
            PLACED
            + (
                "_crates = sorted([o for o in _placed if o.asset == 'crate'],\n"
                "                 key=lambda o: o.pos[2])\n"
                "for k, o in enumerate(_crates):\n"
                "    x, y, z = _crates[0].pos[0], o.pos[1], o.pos[2]\n"
                f"    o.set_pos((x + {step} * k, y, z))\n"
            ),
        )
    if spec.template == "table_top":
        edge = 0.8 + PAST_M  # the table's half length
        return _script(
            task,
            PLACED
            + (
                "_table = next(o for o in _placed if o.asset == 'table')\n"
                "for k, o in enumerate(o for o in _placed if o.asset == 'crate'):\n"
                "    x, y, z = o.pos\n"
                f"    o.set_pos((_table.pos[0] + (1 if k % 2 else -1) * {edge}, y, z))\n"
            ),
        )
    return None


def inside_others(task: Task) -> str | None:
    """Things inside other things: each thing the prompt wants beside another moved to that
    one's centre (a crate in the shelf, a chair under the table); a set-up's things all in the
    place of the first."""
    spec = _spec(task)
    if len(_spawned(spec)) < 2:
        return None
    if spec.kind == "layout":
        pairs = sorted({(c["asset"], c["other"]) for c in _constraints(spec, "next_to")})
        if not pairs:  # nothing said beside another: every thing in the place of the first
            return _script(
                task,
                PLACED + "for o in _placed[1:]:\n"
                "    o.set_pos((_placed[0].pos[0], _placed[0].pos[1], o.pos[2]))\n",
            )
        return _script(
            task,
            PLACED
            + "".join(
                f"_other = next(o for o in _placed if o.asset == {other!r})\n"
                f"for o in _placed:\n    if o.asset == {what!r}:\n"
                "        o.set_pos((_other.pos[0], _other.pos[1], o.pos[2]))\n"
                for what, other in pairs
            ),
        )
    return _script(task, PLACED + ("for o in _placed[1:]:\n    o.set_pos(_placed[0].pos)\n"))


def path_triggers(task: Task) -> str | None:
    """A trigger that fits only the path the prompt shows: a strip along the door's demo path
    through the zone (its size along the path, 0.1 m across it)."""
    spec = _spec(task)
    if spec.template == "door":
        (c,) = _constraints(spec, "door")
        zx, zy, zz, size = c["zone"][0], c["zone"][1], c["zone"][2], c["zone"][3]
        return (
            f"world.trigger('zone_1', ({zx!r}, {zy!r}, {zz!r}), ({size!r}, 0.1, 1.8))\n"
            "world.bind('zone_1', 'enter', 'open', 'door_1', only='player')\n"
        )
    return None


def static_bodies(task: Task) -> str | None:
    """Static bodies where the catalogue says dynamic, and floating a centimetre up (a set-up
    that would not stand if the catalogue's body were kept)."""
    spec = _spec(task)
    if not any(ASSETS[a].body == "dynamic" for a in _spawned(spec)):
        return None
    return _script(
        task,
        PLACED
        + (
            "for o in _placed:\n"
            "    if o.body == 'dynamic':\n"
            "        x, y, z = o.pos\n"
            "        world.set_body(o.name, 'static').set_pos((x, y, z + 0.01))\n"
        ),
    )


def callback_work(task: Task) -> str | None:
    """A physics task's work done by a callback instead of by the set-up: the ball teleported
    into the goal or over the wall, dominoes turned across the chain and tipped in turn by a
    timer. The trusted simulation plays objects only."""
    spec = _spec(task)
    if spec.template == "roll":
        x, y, _ = next(o["pos"] for o in spec.level["objects"] if o["asset"] == "goal_zone")
        return (
            "def _teleport(world, dt):\n"
            f"    world.get('ball_1').set_pos(({x!r}, {y!r}, 0.15))\n"
            "world.on_update(_teleport)\n"
        )
    if spec.template == "ramp_jump":
        (c,) = _constraints(spec, "beyond")
        return (
            "def _teleport(world, dt):\n"
            f"    world.get('ball_1').set_pos(({c['value'] + 0.5!r}, 0, 0.15))\n"
            "world.on_update(_teleport)\n"
        )
    if spec.template == "dominoes":
        return _script(
            task,
            PLACED
            + (
                "for o in _placed:\n    o.set_hpr((90, 0, 0))\n"
                "def _tip(world):\n"
                "    for o in world.objects.values():\n"
                "        if not o.level and abs(o.hpr[1]) < 1:\n"
                "            x, y, _ = o.pos\n"
                "            o.set_pos((x, y, 0.025))\n            o.set_hpr((90, 90, 0))\n"
                "            break\n"
                "world.every(0.2, _tip)\n"
            ),
        )
    return None


def level_edits(task: Task) -> str | None:
    """The level changed to make the task trivial (the reference's work left undone): the goal
    moved onto the ball, the crate wall or the stack's pad moved, the door or the coins removed
    at the start, the platform removed."""
    spec = _spec(task)
    if spec.template == "roll":
        return "world.get('goal_zone_1').set_pos((0, 0, 0.25))\n"
    if spec.template == "ramp_jump":
        return "for k in range(5):\n    world.get(f'crate_{k + 1}').remove()\n"
    if spec.template == "stack":
        return _script(
            task,
            PLACED
            + (
                "for o in _placed:\n    x, y, z = o.pos\n    o.set_pos((x + 2, y, z))\n"
                "x, y, z = world.get('goal_zone_1').pos\n"
                "world.get('goal_zone_1').set_pos((x + 2, y, z))\n"
            ),
        )
    if spec.template == "door":
        return "world.remove('door_1')\n"
    if spec.template == "coins":
        return (
            "for name in [n for n in world.objects if n.startswith('coin_')]:\n"
            "    world.remove(name)\nworld.count('coins', 3)\n"
        )
    if spec.template == "platform":
        return "world.remove('platform_1')\n"
    return None


def cheats() -> tuple[Cheat, ...]:
    """Every generic scene cheat (see the module docstring)."""
    return (
        Cheat(
            "past-thresholds",
            "every value just past the threshold that decides it",
            past_thresholds,
        ),
        Cheat("between-frames", "the subject elsewhere on every other frame", between_frames),
        Cheat("wrong-support", "everything balanced on balls", wrong_support),
        Cheat("edge-balance", "centres just past the edge of what holds them", edge_balance),
        Cheat("inside-others", "things inside the things they should be beside", inside_others),
        Cheat("path-triggers", "triggers that fit only the prompt's demo path", path_triggers),
        Cheat(
            "static-bodies",
            "static bodies floating where the catalogue says dynamic",
            static_bodies,
        ),
        Cheat("callback-work", "a callback doing a physics task's work", callback_work),
        Cheat("level-edits", "the level changed to make the task trivial", level_edits),
    )


# -- the near miss -------------------------------------------------------------------------------


def _roll_aim(spec: Spec) -> tuple[float, float]:
    """A velocity (vx, vy) for ``roll`` aimed a few degrees off, so the ball passes a little
    beside the goal: turned until its path misses the zone by 0.2 m."""
    ball = np.zeros(2)
    goal = np.asarray(next(o["pos"] for o in spec.level["objects"] if o["asset"] == "goal_zone"))
    call = next(c["arguments"] for c in spec.tool_calls if c["name"] == "set_velocity")
    v = np.array([call["vx"], call["vy"]])
    for deg in np.arange(1.0, 60.0, 0.5):
        a = math.radians(deg)
        turned = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) @ v
        ts = np.linspace(0.0, spec.seconds, 400)
        path = ball + ts[:, None] * turned
        outside = np.maximum(np.abs(path - goal[:2]) - 0.5, 0.0)
        if float(np.linalg.norm(outside, axis=1).min()) >= 0.2:
            return float(turned[0]), float(turned[1])
    return float(v[0]) * 0.3, float(v[1]) * 0.3


def near_miss(task: Task) -> str | None:
    """The reference with one honest error: one object a little out of place (the last chair
    pulled back from the table 5 cm past "next to", the shelf 0.4 m along its wall, the top
    crate 3 cm aside, the last domino 0.2 m off the line, the ramp 0.4 m aside),
    or a value a little off (the ball aimed a little beside the goal, the door's trigger
    reaching 0.55 m too far on one side, the last coin's trigger 0.1 m off it, the platform a
    little fast, the spawner starting 0.1 s late)."""
    spec = _spec(task)
    t = spec.template
    own = TEMPLATES[t].near_miss if t in TEMPLATES else None
    if own is not None:  # a family that says its own near miss
        return own(task, spec)
    if t in ("dining", "table_top"):
        (c,) = _constraints(spec, "next_to")
        back = c["gap"] + 0.05  # pulled back from the table past what "next to" allows
        return _script(
            task,
            PLACED
            + (
                f"_last = [o for o in _placed if o.asset == {c['asset']!r}][-1]\n"
                "import math\nx, y, z = _last.pos\nh = math.radians(_last.hpr[0])\n"
                f"_last.set_pos((x + {back} * math.sin(h), y - {back} * math.cos(h), z))\n"
            ),
        )
    if t == "storage":
        (c,) = _constraints(spec, "against_wall")[:1]
        # The crates lie further along +X (north and south walls) or +Y: away from them.
        away = rules.NEAR_M + 0.1
        dx, dy = (-away, 0.0) if c["wall"] in ("north", "south") else (0.0, -away)
        return _script(
            task,
            PLACED
            + (
                "_shelf = next(o for o in _placed if o.asset == 'shelf')\n"
                "x, y, z = _shelf.pos\n"
                f"_shelf.set_pos((x + {dx!r}, y + {dy!r}, z))\n"
            ),
        )
    if t == "stack":
        return _script(
            task,
            PLACED
            + (
                "_top = max(_placed, key=lambda o: o.pos[2])\n"
                "x, y, z = _top.pos\n_top.set_pos((x, y + 0.03, z))\n"
            ),
        )
    if t == "roll":
        vx, vy = _roll_aim(spec)
        return f"world.get('ball_1').set_velocity(({vx!r}, {vy!r}, 0.0))\n"
    if t == "ramp_jump":  # 0.4 m aside: the ball only clips its edge and rolls into the wall
        return _script(
            task,
            PLACED + ("_ramp = _placed[0]\nx, y, z = _ramp.pos\n_ramp.set_pos((x, y + 0.4, z))\n"),
        )
    if t == "dominoes":
        return _script(
            task,
            PLACED
            + (
                "_last = max(_placed, key=lambda o: o.pos[1])\n"
                "x, y, z = _last.pos\n_last.set_pos((x + 0.2, y, z))\n"
            ),
        )
    if t == "door":  # the trigger reaches 0.55 m too far on the side the 2nd path passes
        (c,) = _constraints(spec, "door")
        zx, zy, zz, size = c["zone"][:4]
        mid = np.mean(np.asarray(spec.trajectories[1]["path"], float)[:, :2], axis=0)
        k = int(np.argmax(np.abs(mid - (zx, zy))))
        grow = np.zeros(2)
        grow[k] = 0.55 * float(np.sign(mid[k] - (zx, zy)[k]))
        centre = [float(v) for v in np.array([zx, zy]) + grow / 2]
        extent = [float(v) for v in np.array([size, size]) + np.abs(grow)]
        return (
            f"world.trigger('zone_1', ({centre[0]!r}, {centre[1]!r}, {zz!r}), "
            f"({extent[0]!r}, {extent[1]!r}, 1.8))\n"
            "world.bind('zone_1', 'enter', 'open', 'door_1', only='player')\n"
        )
    if t == "coins":  # the last coin's trigger 0.1 m off it, towards -X
        return task.reference + (
            "_last = sorted(n for n in world.triggers if n.startswith('zone_'))[-1]\n"
            "x, y, z = world.triggers[_last].pos\n"
            "world.triggers[_last].node.set_pos(x - 0.1, y, z)\n"
        )
    if t == "platform":
        (c,) = _constraints(spec, "platform")
        # Fast enough to drift past MOVER_TOL_M about 60 % into the play.
        speed = c["speed"] * (1 + rules.MOVER_TOL_M / (0.6 * spec.seconds * c["speed"]))
        return f"world.mover('platform_1', {c['points']!r}, speed={speed!r}, loop=True)\n"
    if t == "spawner":
        (c,) = _constraints(spec, "spawner")
        return (
            f"world.after(0.1, lambda w: w.spawner({c['asset']!r}, {tuple(c['pos'])!r}, "
            f"interval={c['interval']!r}, count={c['count']}))\n"
        )
    return None
