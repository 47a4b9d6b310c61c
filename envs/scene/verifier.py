"""The game-scene verifier: constraints checked on plain data, each passed or failed with the
reason in words.

Inputs are a scene description (``World.describe``'s format, rebuilt and validated by the caller),
simulation traces (``simulate``'s output: sample times, per-object position and quaternion rows at
every frame, final states) and, for logic tasks, one trace per held-out player trajectory. Every
frame of a trace is read: a check holds at each frame it concerns, not at a sample of them.
Geometry is exact for the catalogue's collision parts (``toolgym.envs.scene.geometry``):
oriented-box separating-axis tests for interpenetration and touch, support as contact with a
named surface (the object's lowest points on a flat top, its centre inside the contact polygon),
oriented footprints for distances, a 0.1 m navigation grid for walkways, the player's box along
held-out passages for doorways.

Score = Σ wᵢ·sᵢ / Σ wᵢ over the task's constraints, where sᵢ is 1 for a constraint met and half
its shaping term (in [0, 1], e.g. how close the ball came to the goal) otherwise; a report passes
when every constraint is met. A physics set-up is checked as it starts (``initial``: upright,
supported by the surfaces the prompt names, apart) before its outcome earns anything; what the
caller refused to take over from the agent (a body the catalogue does not give, an action on the
verifier's player) fails a ``refused`` check that weighs as much as the rest together. Every
tolerance is a named constant below. Units: m, s, degrees.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.ndimage

from toolgym.envs.scene.catalogue import ASSETS
from toolgym.envs.scene.geometry import (
    FLOOR,
    Box,
    Placed,
    bounds_overlap,
    corners,
    covers,
    footprint_distance,
    lowest,
    penetration,
    penetrations,
    rotation_hpr,
    rotation_quat,
    support,
    surfaces,
)
from toolgym.envs.scene.geometry import (
    object_gap as part_gap,
)
from toolgym.envs.scene.runtime import path_points
from toolgym.verifiers.report import VerifierReport

# Tolerances, each a designer's judgement (tests hold both sides of each):
OVERLAP_M = 0.003  # interpenetration up to this is contact (Bullet's resting contacts sink
# less than 1 mm); beyond it, overlap (``no_overlap``, and the physics set-up at t = 0)
ON_CONTACT_M = 0.005  # ``on``: after settling, the gap (or sinking) between an object's lowest
# points and the top that holds it; at t = 0, how far it may be sunk into that top
SUPPORT_M = 0.005  # a physics set-up's object touches a flat top its lowest points are this close
# above (``initial``; ``resting`` for bodies the simulation cannot drop)
UPRIGHT_DEG = 5.0  # tilt (pitch and roll) up to this is upright
ALIGN_DEG = 10.0  # ``aligned``: how far a heading may turn from the one the prompt states
NEAR_M = 0.3  # ``near``: how far an object's centre may be from where the prompt puts it
RESTING_MOVE_M = 0.03  # ``resting``: a placed object may settle this far while simulated
RESTING_TURN_DEG = 5.0  # ``resting``: ... and turn this far
STAND_MOVE_M = 0.05  # ``stands``: a stacked crate may move this far in the whole run
STACK_PAD_M = 0.1  # ``stands``: the bottom crate's centre this close to the pad
STACK_STEP_M = 0.02  # ``stands``: each crate's shift this close to what the prompt asks
WALL_SLACK_M = 0.02  # ``against_wall``: how far an object may reach into the wall's face
WALL_DEG = 10.0  # ``against_wall``: how far its front may turn from facing into the room
CHAIN_M = 0.15  # ``chain``: its ends this close to the marks, every piece this close to the line
TOUCH_M = 0.01  # ``chain``: two pieces whose parts come this close touch (one knocks the other)
KNOCKED_DEG = 10.0  # ``chain``: a piece tilted this far has been knocked over (its fall began)
FALLEN_DEG = 45.0  # ``all_fallen``: a piece tilted this far at the end has fallen
DOOR_DELAY_S = 0.1  # a door must be open this long after the player first overlaps the zone
EARLY_FRAMES = 1.5  # a door may open, a touched coin go, this many frames before the player's
# box overlaps (the trigger and the verifier's player may differ by a frame)
DOOR_CLOSED_M = 0.01  # a door is closed while no corner of its box is further from its place
PASSAGE_STEP_M = 0.05  # a doorway's held-out passages are walked in steps of this
COIN_DELAY_S = 0.1  # a coin the player touched must be gone this long after the first touch
LEVEL_STILL_M = 0.01  # a level coin stays this close to its place while it exists
MOVER_TOL_M = 0.05  # ``platform``: how far from where its waypoints put it, at every frame
SPAWN_SLACK_S = 2.5 / 60  # ``spawner``: the count is not judged this close to a due time
SPAWN_NEAR_M = 0.5  # ``spawner``: each object appears this close to the spawner
PLATE_RELEASE_S = 0.1  # ``plate_door``: the door must be closed again this long after the
# player steps off the plate (it must be open from DOOR_DELAY_S after they step on)
TIMER_SLACK_S = 0.1  # ``timed_door``: how far from its due time (the player's first entry plus
# the hold) the door may close
LIFT_TOL_M = 0.05  # ``lift``: how far the platform may be from where its rise puts it, at every
# frame
LIFT_DELAY_S = 0.1  # ``lift``: how late after the player's first overlap with the call zone the
# rise may start (it may start EARLY_FRAMES early)
PLAYER_HALF = tuple(s / 2 for s in ASSETS["player"].size)  # the verifier's player (m)
WALK_TO_M = 0.6  # ``walkway``: the path must end this close to the target (m)
WALK_REACH_M = max(PLAYER_HALF[0], WALK_TO_M)  # beyond this from a box, the walkway ignores it
GRID_M = 0.1
Check = tuple[bool, float, str]  # met, shaping in [0, 1], reason in words


# -- geometry ------------------------------------------------------------------------------------


def object_boxes(obj: Mapping[str, Any]) -> list[Box]:
    """The object's collision parts as oriented boxes (a sphere or wedge by its box)."""
    return Placed.of(obj).boxes()


def room_walls(room: Mapping[str, Any] | None) -> list[tuple[str, Box]]:
    """The room's walls as boxes (see ``World.make_room``)."""
    if not room:
        return []
    w, d, door_x, t = room["width"], room["depth"], room.get("door_x", 0.0), 0.2
    left, right = -w / 2 - t, w / 2 + t
    specs = {
        "north wall": ((0, d / 2 + t / 2, 0.5), (w + 2 * t, t, 1.0)),
        "east wall": ((w / 2 + t / 2, 0, 0.5), (t, d, 1.0)),
        "west wall": ((-w / 2 - t / 2, 0, 0.5), (t, d, 1.0)),
        "south wall": (
            ((left + door_x - 0.5) / 2, -d / 2 - t / 2, 0.5),
            (door_x - 0.5 - left, t, 1),
        ),
        "south wall ": (
            ((door_x + 0.5 + right) / 2, -d / 2 - t / 2, 0.5),
            (right - door_x - 0.5, t, 1),
        ),
    }
    return [
        (name.strip(), (np.array(c, float), np.eye(3), np.array(s, float) / 2))
        for name, (c, s) in specs.items()
    ]


def object_gap(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Horizontal gap (m) between two objects' bounding footprints (0 when they touch)."""
    boxes = []
    for obj in (a, b):
        rot = rotation_hpr((obj["hpr"][0], 0, 0))
        half = np.asarray(ASSETS[obj["asset"]].size) / 2
        boxes.append((np.asarray(obj["pos"], float), rot, half))
    gaps = []
    for one, other in ((boxes[0], boxes[1]), (boxes[1], boxes[0])):
        center, rot, half = one
        for sx, sy in ((-1, -1), (-1, 1), (1, -1), (1, 1)):
            corner = center[:2] + rot[:2, :2] @ (half[:2] * (sx, sy))
            gaps.append(footprint_distance(corner, other))
    if penetration(*boxes) > 0:
        return 0.0
    return min(gaps)


def forward(obj: Mapping[str, Any]) -> np.ndarray:
    """The object's front (its local +Y) in the world, 3D: pitch and roll count."""
    return rotation_hpr(obj["hpr"]) @ np.array([0.0, 1.0, 0.0])


def tilt_deg(obj: Mapping[str, Any]) -> float:
    """How far the object leans from standing as the catalogue has it (°): the angle of its
    local +Z from the world's; for a cube (a crate) the nearest of its axes, as any face may be
    its bottom."""
    return _tilt(obj["asset"], rotation_hpr(obj["hpr"]))


def _tilt(asset_name: str, rot: np.ndarray) -> float:
    entry = ASSETS[asset_name]
    cube = len(entry.parts) == 1 and entry.shape == "box" and len(set(entry.size)) == 1
    up = float(np.max(np.abs(rot[2]))) if cube else float(rot[2, 2])
    return math.degrees(math.acos(max(-1.0, min(1.0, up))))


def bottom(obj: Mapping[str, Any]) -> float:
    """The lowest point of the object's collision parts (m)."""
    return lowest(Placed.of(obj))


def angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    cos = float(u @ v) / max(float(np.linalg.norm(u) * np.linalg.norm(v)), 1e-12)
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


# -- the scene's objects -----------------------------------------------------------------------


class Scene:
    """A description's objects, split into the level's and the agent's, and their collision
    geometry (made once per scene: a step's checks ask for it many times)."""

    def __init__(self, description: Mapping[str, Any]) -> None:
        self.description = description
        self.room = description.get("room")
        self.objects = {o["name"]: o for o in description["objects"]}
        self.placed = [o for o in description["objects"] if not o.get("level")]
        self._start: dict[int, tuple[Mapping[str, Any], Placed]] = {}
        self._solid: dict[int, tuple[Any, list[Placed]]] = {}
        self._static: dict[int, tuple[Mapping[str, Any], Check]] = {}

    def of(self, asset_name: str, placed: bool = True) -> list[dict[str, Any]]:
        pool = self.placed if placed else list(self.objects.values())
        return [o for o in pool if o["asset"] == asset_name]

    def at_start(self, obj: Mapping[str, Any]) -> Placed:
        """One of the description's objects, at its description's pose."""
        if id(obj) not in self._start:  # keyed by identity: the object is kept with it
            self._start[id(obj)] = (obj, Placed.of(obj))
        return self._start[id(obj)][1]

    def static(self, c: Mapping[str, Any]) -> Check:
        """The check of constraint ``c`` (of a kind in ``STATIC_CHECKS``: read off the scene,
        nothing simulated), made once: a verifier may ask while the scene is simulated, and
        asks for an ``initial`` one before it simulates and again for the report."""
        if id(c) not in self._static:
            self._static[id(c)] = (c, STATIC_CHECKS[c["kind"]](self, c))
        return self._static[id(c)][1]

    def solid(self, trace: Mapping[str, Any] | None = None) -> list[Placed]:
        """The solid objects, at their description's poses or at ``trace``'s last samples (an
        object gone from it is left out)."""
        if id(trace) not in self._solid:
            at = None if trace is None else _last(trace)
            out = []
            for o in self.objects.values():
                if o["body"] == "ghost":
                    continue
                if at is None:
                    out.append(self.at_start(o))
                elif at.get(o["name"]) is not None:
                    out.append(Placed.at(o, at[o["name"]]))
            self._solid[id(trace)] = (trace, out)
        return list(self._solid[id(trace)][1])


def _surfaces_named(scene: Scene, names: Sequence[str]) -> Callable[[str], bool]:
    """Which surfaces a prompt names: ``"floor"``, an asset (``"crate"``: any crate) or
    ``"placed"`` (anything the agent placed: "on each other")."""

    def allowed(surface: str) -> bool:
        if surface == FLOOR:
            return "floor" in names
        o = scene.objects.get(surface)
        return o is not None and (o["asset"] in names or ("placed" in names and not o.get("level")))

    return allowed


def _words(names: Sequence[str]) -> str:
    """The named surfaces in words: "the floor or each other"."""
    said = {"floor": "the floor", "placed": "each other"}
    parts = [said.get(n, f"a {n}") for n in names]
    return " or ".join(parts) if parts else "nothing"


def _contact_names(contacts: Mapping[str, Any]) -> str:
    return " and ".join(sorted(contacts, key=lambda n: (n != FLOOR, n)))


def _unsupported(name: str, held: Any, names: Sequence[str], verb: str = "starts") -> str:
    """Why ``held`` (a ``geometry.Support``) does not hold ``name`` up on ``names``, in words."""
    if not held.contacts:
        return f"{name} {verb} {held.gap:.3f} m above {held.under} (unsupported)"
    if not held.allowed:
        return f"{name} {verb} on {_contact_names(held.contacts)}, not on {_words(names)}"
    regions = [r for r in held.contacts.values() if len(r)]
    if all(len(r) == 1 for r in regions):
        return (
            f"{name} {verb} balanced on a point of {_contact_names(held.contacts)} (it would tip)"
        )
    if set(held.contacts) == {FLOOR}:
        return (
            f"{name} {verb} tipping over (its centre {-held.depth:.3f} m outside where it "
            "touches the floor)"
        )
    return (
        f"{name} {verb} with its centre {-held.depth:.3f} m past the edge of what holds it "
        f"({_contact_names(held.contacts)}; it would tip)"
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def check_count(scene: Scene, c: Mapping[str, Any]) -> Check:
    found = len(scene.of(c["asset"]))
    ok = found == c["n"]
    return (
        ok,
        1.0 if ok else max(0.0, 1 - abs(found - c["n"]) / max(c["n"], 1)),
        (f"{_plural(found, c['asset'])} where the task asks for {c['n']}"),
    )


def check_near(scene: Scene, c: Mapping[str, Any]) -> Check:
    """The placed ``asset`` nearest to (``x``, ``y``) has its centre within ``NEAR_M`` of it."""
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    target = np.array([c["x"], c["y"]])
    dists = [(float(np.linalg.norm(np.asarray(o["pos"][:2]) - target)), o["name"]) for o in found]
    d, name = min(dists)
    return (
        d <= NEAR_M,
        1 / (1 + d),
        (f"{name} is {d:.2f} m from ({c['x']:g}, {c['y']:g}) (at most {NEAR_M:g} m)"),
    )


def _each(scene: Scene, c: Mapping[str, Any], test: Any) -> Check:
    """Apply ``test(obj, others) -> (ok, reason)`` to every placed ``asset``; met when all are."""
    found, others = scene.of(c["asset"]), scene.of(c["other"], placed=False)
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    if not others:
        return False, 0.0, f"no {c['other']} to relate the {c['asset']}s to"
    results = [test(o, others) for o in found]
    bad = [why for ok, why in results if not ok]
    share = 1 - len(bad) / len(results)
    if not bad:
        return True, 1.0, f"all {_plural(len(found), c['asset'])} hold"
    return (
        False,
        share,
        "; ".join(bad[:3]) + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""),
    )


def _footprint(obj: Mapping[str, Any]) -> Box:
    """The object's bounding footprint: its catalogue box turned by its heading."""
    half = np.asarray(ASSETS[obj["asset"]].size) / 2
    return np.asarray(obj["pos"], float), rotation_hpr((obj["hpr"][0], 0, 0)), half


def check_next_to(scene: Scene, c: Mapping[str, Any]) -> Check:
    """Each placed ``asset`` beside an ``other``: its bounding footprint within ``gap`` m of the
    other's, and its centre outside every other's footprint (a crate inside the shelf, or a
    chair under the table, is in it, not beside it)."""

    def test(o: dict, others: list) -> tuple[bool, str]:
        here = np.asarray(o["pos"][:2], float)
        inside = [b["name"] for b in others if footprint_distance(here, _footprint(b)) == 0]
        if inside:
            return False, f"{o['name']} is inside {inside[0]}, not beside it"
        gap, other = min((object_gap(o, b), b["name"]) for b in others)
        return gap <= c["gap"], f"{o['name']} is {gap:.2f} m from {other} (at most {c['gap']:g})"

    return _each(scene, c, test)


def check_facing(scene: Scene, c: Mapping[str, Any]) -> Check:
    """The object's front (full orientation: a chair on its back faces the sky) within
    ``tol_deg`` of the horizontal direction to the nearest ``other``, and the object upright
    within ``UPRIGHT_DEG``."""

    def test(o: dict, others: list) -> tuple[bool, str]:
        here = np.asarray(o["pos"][:2])
        other = min(others, key=lambda b: float(np.linalg.norm(np.asarray(b["pos"][:2]) - here)))
        towards = np.append(np.asarray(other["pos"][:2]) - here, 0.0)
        away = angle_deg(forward(o), towards)
        if away > c["tol_deg"]:
            return False, f"{o['name']} faces {away:.0f}° away from {other['name']}"
        tilt = tilt_deg(o)
        return tilt <= UPRIGHT_DEG, f"{o['name']} is tipped {tilt:.0f}° (it must stand upright)"

    return _each(scene, c, test)


def check_aligned(scene: Scene, c: Mapping[str, Any]) -> Check:
    """Every placed ``asset`` turned as the prompt states: its heading within ``tol_deg``
    (default ``ALIGN_DEG``) of ``heading`` modulo ``period`` (180 for a table's long side), and
    upright within ``UPRIGHT_DEG``."""
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    tol, period = float(c.get("tol_deg", ALIGN_DEG)), float(c.get("period", 360))
    bad, worst = [], 0.0
    for o in found:
        turn = abs((o["hpr"][0] - c["heading"] + period / 2) % period - period / 2)
        tilt = tilt_deg(o)
        worst = max(worst, turn / 90, tilt / 90)
        if turn > tol:
            bad.append(f"{o['name']} is turned {turn:.0f}° from {c['what']}")
        elif tilt > UPRIGHT_DEG:
            bad.append(f"{o['name']} is tipped {tilt:.0f}° (it must stand upright)")
    if not bad:
        return True, 1.0, f"every {c['asset']} is turned as asked: {c['what']}"
    return False, max(0.0, 1 - worst), "; ".join(bad[:3])


_WALL_NORMALS = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}


def check_against_wall(scene: Scene, c: Mapping[str, Any]) -> Check:
    """Every placed ``asset`` upright (within ``UPRIGHT_DEG``) with its back within ``gap`` m of
    the ``wall``'s face (reaching at most ``WALL_SLACK_M`` into it) and, unless ``facing`` is
    false, its front within ``WALL_DEG`` of facing into the room."""
    if not scene.room:
        return False, 0.0, "the scene has no room"
    normal = np.array(_WALL_NORMALS[c["wall"]], dtype=float)
    inner = scene.room["depth" if normal[1] else "width"] / 2
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    bad = []
    for o in found:
        if (tilt := tilt_deg(o)) > UPRIGHT_DEG:  # an upside-down shelf's front faces the room too
            bad.append(f"{o['name']} is tipped {tilt:.0f}° (it must stand upright)")
            continue
        rot = rotation_hpr((o["hpr"][0], 0, 0))[:2, :2]
        half = np.asarray(ASSETS[o["asset"]].size[:2]) / 2
        reach = float(np.asarray(o["pos"][:2]) @ normal + np.sum(np.abs(rot.T @ normal) * half))
        gap = inner - reach
        if not -WALL_SLACK_M <= gap <= c["gap"]:
            bad.append(
                f"{o['name']} is {gap:.2f} m from the {c['wall']} wall (at most {c['gap']:g})"
            )
        elif (
            c.get("facing", True)
            and (away := angle_deg(forward(o), np.append(-normal, 0))) > WALL_DEG
        ):
            bad.append(f"{o['name']} faces {away:.0f}° away from the room")
    if not bad:
        return True, 1.0, f"every {c['asset']} stands against the {c['wall']} wall"
    return False, 1 - len(bad) / len(found), "; ".join(bad[:3])


def check_inside_room(scene: Scene, c: Mapping[str, Any]) -> Check:
    if not scene.room:
        return True, 1.0, "no room"
    w, d = scene.room["width"] / 2 + 0.01, scene.room["depth"] / 2 + 0.01
    if not scene.placed:
        return False, 0.0, "nothing placed"
    bad = []
    for o in scene.placed:
        for center, rot, half in scene.at_start(o).boxes():
            corners = np.array([center + rot @ (half * s) for s in _SIGNS])
            if (np.abs(corners[:, 0]) > w).any() or (np.abs(corners[:, 1]) > d).any():
                bad.append(f"{o['name']} reaches outside the room")
                break
            if corners[:, 2].min() < -0.01:
                bad.append(f"{o['name']} reaches below the floor")
                break
    if not bad:
        return True, 1.0, "everything is inside the room"
    return False, 1 - len(bad) / len(scene.placed), "; ".join(bad[:3])


_SIGNS = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


def _depth(metres: float) -> str:
    """A depth in words: millimetres below a centimetre (the tolerance's scale), else metres."""
    return f"{metres * 1000:.0f} mm" if metres < 0.01 else f"{metres:.2f} m"


def check_no_overlap(scene: Scene, c: Mapping[str, Any]) -> Check:
    if not scene.placed:
        return False, 0.0, "nothing placed"
    solid = [o for o in scene.objects.values() if o["body"] != "ghost"]
    boxes = {o["name"]: scene.at_start(o).boxes() for o in solid}
    named = list(boxes.items()) + [(name, [box]) for name, box in room_walls(scene.room)]
    worst: list[tuple[float, str, str]] = []
    placed = {o["name"] for o in scene.placed}
    # Every part's index, so that the bounds of all pairs are compared at once.
    first = np.cumsum([0] + [len(parts) for _, parts in named])
    apart = ~bounds_overlap([box for _, parts in named for box in parts])
    for i, (a, parts_a) in enumerate(named):
        for j, (b, parts_b) in enumerate(named[i + 1 :], i + 1):
            if a not in placed and b not in placed:
                continue
            if apart[first[i] : first[i + 1], first[j] : first[j + 1]].all():
                continue  # a penetration of 0
            depth = max(penetration(p, q) for p in parts_a for q in parts_b)
            if depth > OVERLAP_M:
                worst.append((depth, a, b))
    if not worst:
        return True, 1.0, "nothing interpenetrates"
    worst.sort(reverse=True)
    reasons = [f"{a} intersects {b} by {_depth(d)}" for d, a, b in worst[:3]]
    return False, 1 / (1 + len(worst)), "; ".join(reasons)


def check_walkway(scene: Scene, c: Mapping[str, Any]) -> Check:
    """A path on a 0.1 m grid for a 0.5 m wide player, from the doorway to within 0.6 m of the
    target, around every solid object whose parts reach below 1.8 m."""
    if not scene.room:
        return False, 0.0, "the scene has no room"
    targets = scene.of(c["to"])
    if not targets:
        return False, 0.0, f"no {c['to']} to walk to"
    w, d = scene.room["width"], scene.room["depth"]
    xs = np.arange(-w / 2 + GRID_M / 2, w / 2, GRID_M)
    ys = np.arange(-d / 2 + GRID_M / 2, d / 2, GRID_M)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    points = np.stack([gx, gy], axis=2)
    clearance = np.minimum(
        np.minimum(points[..., 0] + w / 2, w / 2 - points[..., 0]),
        np.minimum(points[..., 1] + d / 2, d / 2 - points[..., 1]),
    )
    target_distance = np.full(gx.shape, np.inf)
    for o in scene.objects.values():
        if o["body"] == "ghost":
            continue
        for center, rot, half in scene.at_start(o).boxes():
            low = (center - np.abs(rot) @ half)[2]
            if low > 1.8:
                continue
            # Only the grid points this box can bring within WALK_REACH_M of it: farther ones
            # keep both answers (clear for the player, not near the target) whatever it is.
            near = _within_reach(center, rot, half, xs, ys)
            local = (points[near].reshape(-1, 2) - center[:2]) @ rot[:2, :2]  # heading only
            excess = np.maximum(np.abs(local) - half[:2], 0)
            dist = np.linalg.norm(excess, axis=1).reshape(clearance[near].shape)
            clearance[near] = np.minimum(clearance[near], dist)
            if o["asset"] == c["to"] and not o.get("level"):
                target_distance[near] = np.minimum(target_distance[near], dist)
    free = clearance > PLAYER_HALF[0]
    goal = (target_distance <= WALK_TO_M) & (clearance > PLAYER_HALF[0])
    door_x = scene.room.get("door_x", 0.0)
    start = (int(np.argmin(np.abs(xs - door_x))), int(np.argmin(np.abs(ys - (-d / 2 + 0.45)))))
    if not free[start]:
        return False, 0.0, "the doorway is blocked"
    regions, _ = scipy.ndimage.label(free)  # 4-connected regions of free cells
    if goal[regions == regions[start]].any():
        return True, 1.0, f"a walkway leads from the doorway to the {c['to']}"
    return False, 0.0, f"no 0.5 m wide walkway leads from the doorway to the {c['to']}"


def _within_reach(
    center: np.ndarray, rot: np.ndarray, half: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> tuple[slice, slice]:
    """The block of the grid (``xs`` by ``ys``) outside which every point is more than
    ``WALK_REACH_M`` (plus a micrometre) from the box's footprint, measured as the walkway does
    (in the box's heading frame); the whole grid when that frame is near degenerate."""
    frame = rot[:2, :2]
    if abs(np.linalg.det(frame)) < 1e-3:  # a box turned on its side: measure everywhere
        return slice(None), slice(None)
    # A point at p is at local = frameᵀ (p - c); within reach, |local| <= half + reach, so p - c
    # lies in that rectangle's image under frameᵀ's inverse.
    extent = np.abs(np.linalg.inv(frame.T)) @ (half[:2] + WALK_REACH_M) + 1e-6
    lo, hi = center[:2] - extent, center[:2] + extent  # the block holds lo <= point <= hi
    rows = slice(int(np.searchsorted(xs, lo[0], "left")), int(np.searchsorted(xs, hi[0], "right")))
    cols = slice(int(np.searchsorted(ys, lo[1], "left")), int(np.searchsorted(ys, hi[1], "right")))
    return rows, cols


def check_initial(scene: Scene, c: Mapping[str, Any]) -> Check:
    """A physics set-up as described at t = 0: every placed solid object upright (within
    ``UPRIGHT_DEG``: a domino lying down has not fallen), interpenetrating nothing (the ground,
    the level's objects, each other) by more than ``OVERLAP_M``, and standing on the surfaces
    the prompt names (``on``: ``"floor"``, an asset, ``"placed"`` for "each other"; default the
    floor or each other): its lowest points within ``SUPPORT_M`` of their flat tops and its
    centre strictly inside the contact polygon (a domino on a ball's top, or a crate with its
    centre over another's edge, is not supported). Until it holds, the simulated checks earn
    nothing."""
    names = tuple(c.get("on", ("floor", "placed")))
    allowed = _surfaces_named(scene, names)
    placed = [o for o in scene.placed if o["body"] != "ghost"]
    solid = scene.solid()
    bad = []
    for o in placed:
        tilt = tilt_deg(o)
        if tilt > UPRIGHT_DEG:
            bad.append(f"{o['name']} starts tipped {tilt:.0f}° (it must start upright)")
            continue
        here = scene.at_start(o)
        depth, other = max(
            (
                (max(penetration(p, q) for p in here.boxes() for q in b.boxes()), b.name)
                for b in solid
                if b.name != o["name"]
            ),
            default=(0.0, ""),
        )
        if -bottom(o) > OVERLAP_M:
            bad.append(f"{o['name']} starts {-bottom(o):.3f} m into the floor")
        elif depth > OVERLAP_M:
            bad.append(f"{o['name']} starts {depth:.3f} m into {other}")
        else:
            held = support(here, solid, allowed, SUPPORT_M, OVERLAP_M)
            if not held.held:
                bad.append(_unsupported(o["name"], held, names))
    if not bad:
        return True, 1.0, "the set-up starts at rest, upright, supported and apart"
    return False, 1 - len(bad) / max(len(placed), 1), "; ".join(bad[:3])


STATIC_CHECKS = {
    "count": check_count,
    "near": check_near,
    "next_to": check_next_to,
    "facing": check_facing,
    "against_wall": check_against_wall,
    "inside_room": check_inside_room,
    "no_overlap": check_no_overlap,
    "walkway": check_walkway,
    "aligned": check_aligned,
    "initial": check_initial,
}


# -- simulated checks ----------------------------------------------------------------------------


def _tilt_deg(row: Sequence[float]) -> float:
    up = rotation_quat(row[3:7]) @ np.array([0.0, 0.0, 1.0])
    return math.degrees(math.acos(max(-1.0, min(1.0, float(up[2])))))


def _rows(trace: Mapping[str, Any], name: str) -> list[Any]:
    return trace["samples"].get(name) or []


def _level_rows(trace: Mapping[str, Any], name: str) -> list[Any]:
    """A level object's samples; one the logic removed before the play began is gone (None)
    at every frame, not unseen."""
    return trace["samples"].get(name) or [None] * len(trace["times"])


def _last(trace: Mapping[str, Any]) -> dict[str, Any]:
    """Every object's last sample in a trace (the settled state), by name; None if gone."""
    return {name: rows[-1] if rows else None for name, rows in trace["samples"].items()}


def _turn_deg(a: Sequence[float], b: Sequence[float]) -> float:
    """The angle (°) between two quaternion rows' orientations."""
    dot = abs(float(np.dot(a[3:7], b[3:7])))
    return math.degrees(2 * math.acos(min(1.0, dot)))


def check_resting(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """Everything placed stays where it is (moves at most ``RESTING_MOVE_M`` and turns at most
    ``RESTING_TURN_DEG`` while simulated), and what the simulation cannot drop (static,
    kinematic or ghost bodies) starts supported: its lowest points within ``SUPPORT_M`` of a
    flat top and its centre inside what they touch."""
    if not scene.placed:
        return False, 0.0, "nothing placed"
    solid = scene.solid()
    bad = []
    for o in scene.placed:
        if o["body"] != "dynamic":
            held = support(scene.at_start(o), solid, lambda _: True, SUPPORT_M, OVERLAP_M)
            if not held.held:
                if held.contacts:
                    bad.append(_unsupported(f"{o['name']} ({o['body']})", held, (), "is"))
                else:
                    where = "above" if held.gap > 0 else "into"
                    bad.append(
                        f"{o['name']} ({o['body']}) is {abs(held.gap):.2f} m {where} {held.under}"
                    )
                continue
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        if not rows:
            bad.append(f"{o['name']} vanished")
            continue
        moved = float(np.linalg.norm(np.asarray(rows[-1][:3]) - np.asarray(rows[0][:3])))
        turned = _turn_deg(rows[0], rows[-1])
        if moved > RESTING_MOVE_M:
            bad.append(
                f"{o['name']} moved {moved:.2f} m in {trace['times'][-1]:.1f} s (unsupported)"
            )
        elif turned > RESTING_TURN_DEG:
            bad.append(f"{o['name']} turned {turned:.0f}° in {trace['times'][-1]:.1f} s")
    if not bad:
        return True, 1.0, "everything rests where it was placed"
    return False, 1 - len(bad) / len(scene.placed), "; ".join(bad[:3])


def check_on(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """Each placed ``asset`` stands on an ``other`` (an asset, or ``"floor"``) once the settling
    simulation has run: at its last sample the others of that kind hold it up (its lowest points
    within ``ON_CONTACT_M`` of their flat tops, its centre strictly inside the contact polygon),
    so an object placed a little above a top that it settles onto is on it. At t = 0 it may not
    be sunk into such a top by more than ``ON_CONTACT_M``, and if it was placed on something
    (touching within ``ON_CONTACT_M``) that must be an ``other`` holding it up: not a ball, not
    another object's edge."""
    floor = c["other"] == "floor"
    names = ("floor",) if floor else (c["other"],)
    allowed = _surfaces_named(scene, names)
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    if not floor and not scene.of(c["other"], placed=False):
        return False, 0.0, f"no {c['other']} to relate the {c['asset']}s to"
    start, settled = scene.solid(), scene.solid(trace)
    bad = []
    for o in found:
        here = scene.at_start(o)
        tops = [
            f
            for f in surfaces(b for b in start if b.name != o["name"] and allowed(b.name))
            if f.outline is not None and len(f.outline) >= 3 and covers(f.outline, here.pos)
        ]
        low = lowest(here)
        sunk = max(((f.z - low, f.name) for f in tops), default=(0.0, ""))
        if sunk[0] > ON_CONTACT_M:
            bad.append(f"{o['name']} is sunk {sunk[0]:.3f} m into {sunk[1]}'s top")
            continue
        placed_on = support(here, start, allowed, ON_CONTACT_M, ON_CONTACT_M)
        touched = {n for n in placed_on.contacts if allowed(n)}
        if placed_on.contacts and not placed_on.held:  # placed on something: it must be this
            if not touched:
                bad.append(
                    f"{o['name']} is placed on {_contact_names(placed_on.contacts)}, not "
                    f"on {_words(names) if floor else _contact_names_of(scene, c['other'])}"
                )
            elif FLOOR not in touched and len(touched) == len(placed_on.contacts):
                bad.append(
                    f"{o['name']}'s centre is {-placed_on.depth:.3f} m past the edge of "
                    f"{_contact_names(touched)}'s top"
                )
            else:
                bad.append(_unsupported(o["name"], placed_on, names, "is placed"))
            continue
        now = next((p for p in settled if p.name == o["name"]), None)
        if now is None:
            bad.append(f"{o['name']} vanished")
            continue
        held = support(now, settled, allowed, ON_CONTACT_M, ON_CONTACT_M)
        if held.held:
            continue
        if not held.contacts:
            top = "" if held.under == FLOOR else "'s top"
            bad.append(f"{o['name']} floats {held.gap:.3f} m above {held.under}{top}")
        elif not held.allowed:
            bad.append(
                f"{o['name']} ended on {_contact_names(held.contacts)}, not on "
                f"{_words(names) if floor else _contact_names_of(scene, c['other'])}"
            )
        else:
            bad.append(_unsupported(o["name"], held, names, "ended"))
    if not bad:
        where = "the floor" if floor else f"a {c['other']}"
        return True, 1.0, f"every {c['asset']} is on {where}"
    return False, 1 - len(bad) / len(found), "; ".join(bad[:3])


def _contact_names_of(scene: Scene, asset_name: str) -> str:
    return " or ".join(o["name"] for o in scene.of(asset_name, placed=False)) or asset_name


def check_stands(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """A stack of ``n`` ``asset`` built as described and still standing: the bottom one on the
    floor (its lowest point within ``STACK_STEP_M`` of it) with its centre within ``STACK_PAD_M``
    of the pad (``x``, ``y``), each next one shifted ``overhang`` along +X and not along Y from
    the one below (each within ``STACK_STEP_M``), and every one within ``STAND_MOVE_M`` of where
    it was placed at the end. Shaping: the share of the ``n`` that are placed as described
    (counted up from the bottom, to the first that is not) and still stand."""
    crates = sorted(scene.of(c["asset"]), key=lambda o: o["pos"][2])
    if not crates:
        return False, 0.0, f"no {c['asset']} placed; the stack needs {c['n']}"
    stood = set()
    for o in crates:
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        if rows and float(np.linalg.norm(np.asarray(rows[-1][:3]) - o["pos"])) <= STAND_MOVE_M:
            stood.add(o["name"])
    base = crates[0]
    off = float(np.linalg.norm(np.asarray(base["pos"][:2]) - (c["x"], c["y"])))
    problem, right = "", 0
    if off > STACK_PAD_M or bottom(base) > STACK_STEP_M:
        problem = f"the bottom {c['asset']} is {off:.2f} m off the pad, not on the floor there"
    else:
        right = 1
        for below, above in itertools.pairwise(crates):
            dx, dy = (above["pos"][k] - below["pos"][k] for k in (0, 1))
            if abs(dx - c["overhang"]) > STACK_STEP_M or abs(dy) > STACK_STEP_M:
                problem = (
                    f"{above['name']} is shifted ({dx:.2f}, {dy:.2f}) m from "
                    f"{below['name']}; the task asks for ({c['overhang']:g}, 0)"
                )
                break
            right += 1
    share = sum(o["name"] in stood for o in crates[:right]) / max(c["n"], len(crates))
    if len(crates) < c["n"]:
        return False, share, f"{_plural(len(crates), c['asset'])}; the stack needs {c['n']}"
    if problem:
        return False, share, problem
    fallen = [o["name"] for o in crates if o["name"] not in stood]
    if not fallen:
        return True, 1.0, f"the stack of {len(crates)} stands"
    return (
        False,
        share,
        f"the stack fell: {len(fallen)} of {len(crates)} moved more than "
        f"{STAND_MOVE_M:g} m ({fallen[0]} first)",
    )


def _zone_box(scene: Scene, name: str) -> tuple[np.ndarray, np.ndarray]:
    zone = scene.objects[name]
    return np.asarray(zone["pos"], float), np.asarray(ASSETS[zone["asset"]].size) / 2


def check_reaches(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    center, half = _zone_box(scene, c["zone"])
    rows = [r for r in _rows(trace, c["name"]) if r is not None]
    if not rows:
        return False, 0.0, f"{c['name']} is missing"
    points = np.asarray([r[:3] for r in rows])
    excess = np.maximum(np.abs(points - center) - half, 0)
    dist = np.linalg.norm(excess, axis=1)
    start = max(float(dist[0]), 1e-6)
    closest = float(dist.min())
    if closest <= 0:
        t = trace["times"][int(np.argmax(dist <= 0))]
        return True, 1.0, f"{c['name']} reached {c['zone']} at {t:.2f} s"
    return (
        False,
        max(0.0, 1 - closest / start),
        (f"{c['name']} came no closer than {closest:.2f} m to {c['zone']}"),
    )


def check_beyond(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    rows = [r for r in _rows(trace, c["name"]) if r is not None]
    if not rows:
        return False, 0.0, f"{c['name']} is missing"
    axis, value = int(c["axis"]), float(c["value"])
    start, end = rows[0][axis], rows[-1][axis]
    furthest = max(r[axis] for r in rows)
    if end > value:
        return True, 1.0, f"{c['name']} ended at {'xyz'[axis]} = {end:.2f}, beyond {value:g}"
    return (
        False,
        max(0.0, min(1.0, (furthest - start) / max(value - start, 1e-6))),
        (f"{c['name']} ended at {'xyz'[axis]} = {end:.2f}, {value - end:.2f} m short of {value:g}"),
    )


def _knocked(rows: Sequence[Any]) -> int | None:
    """The first frame at which a piece is tilted past ``KNOCKED_DEG`` (or gone), or None."""
    for k, row in enumerate(rows):
        if row is None or _tilt_deg(row) > KNOCKED_DEG:
            return k
    return None


def _touched(scene: Scene, trace: Mapping[str, Any], a: str, b: str, until: int) -> bool:
    """Whether ``a`` and ``b`` come within ``TOUCH_M`` at some frame up to ``until``."""
    rows_a, rows_b = _rows(trace, a), _rows(trace, b)
    for k in range(min(until, len(rows_a) - 1, len(rows_b) - 1), -1, -1):  # latest first
        if rows_a[k] is None or rows_b[k] is None:
            continue
        one = Placed.at(scene.objects[a], rows_a[k])
        two = Placed.at(scene.objects[b], rows_b[k])
        if part_gap(one, two) <= TOUCH_M:
            return True
    return False


def check_chain(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """A chain of ``asset`` from (``x``, ``y0``) to (``x``, ``y1``) that falls piece by piece:
    its ends within ``CHAIN_M`` of the marks, every piece within ``CHAIN_M`` of the line between
    them and apart from the next at t = 0 (more than ``TOUCH_M``); the first piece touched by
    ``by`` (within ``TOUCH_M``) and every other by the one before it, in order along the line,
    before it tilts past ``KNOCKED_DEG``, and no piece knocked before the one before it. Every
    frame of the trace is read."""
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    start, end = np.array([c["x"], c["y0"]], float), np.array([c["x"], c["y1"]], float)
    axis = (end - start) / max(float(np.linalg.norm(end - start)), 1e-9)
    along = lambda o: float((np.asarray(o["pos"][:2]) - start) @ axis)  # noqa: E731
    chain = sorted(found, key=along)
    ends = [
        float(np.linalg.norm(np.asarray(o["pos"][:2]) - m))
        for o, m in ((chain[0], start), (chain[-1], end))
    ]
    if max(ends) > CHAIN_M:
        return (
            False,
            1 / (1 + max(ends)),
            f"the chain's ends are {ends[0]:.2f} m and "
            f"{ends[1]:.2f} m from the marks (at most {CHAIN_M:g})",
        )
    for o in chain:
        rel = np.asarray(o["pos"][:2]) - start
        off = abs(float(rel[0] * axis[1] - rel[1] * axis[0]))
        if off > CHAIN_M:
            return (
                False,
                0.5,
                f"{o['name']} is {off:.2f} m off the line between the marks (at most {CHAIN_M:g})",
            )
    for one, two in itertools.pairwise(chain):
        if part_gap(Placed.of(one), Placed.of(two)) <= TOUCH_M:
            return (
                False,
                0.5,
                f"{one['name']} starts touching {two['name']} (the pieces of a chain start apart)",
            )
    knocked = [_knocked(_rows(trace, o["name"])) for o in chain]
    problems, good = [], 0
    for k, o in enumerate(chain):
        before = c["by"] if k == 0 else chain[k - 1]["name"]
        at = knocked[k]
        if at is None:
            problems.append(f"{o['name']} was never knocked over")
        elif k and (knocked[k - 1] is None or knocked[k - 1] > at):
            problems.append(f"{o['name']} tipped at {trace['times'][at]:.2f} s, before {before}")
        elif before not in scene.objects or not _touched(scene, trace, before, o["name"], at):
            problems.append(
                f"{o['name']} tipped at {trace['times'][at]:.2f} s without {before} "
                "touching it first"
            )
        else:
            good += 1
    if not problems:
        return True, 1.0, f"each of the {len(chain)} {c['asset']}s was knocked over in turn"
    return False, good / len(chain), "; ".join(problems[:3])


def check_all_fallen(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """At least ``n`` placed ``asset`` pieces, each tilted past ``FALLEN_DEG`` at the end."""
    found = scene.of(c["asset"])
    if len(found) < c["n"]:
        return False, 0.0, f"{_plural(len(found), c['asset'])} where the chain needs {c['n']}"
    standing = []
    for o in found:
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        if rows and _tilt_deg(rows[-1]) < FALLEN_DEG:
            standing.append(o["name"])
    fell = len(found) - len(standing)
    if not standing:
        return True, 1.0, f"all {len(found)} {c['asset']}s fell"
    return (
        False,
        fell / len(found),
        (f"{fell} of {len(found)} {c['asset']}s fell; {standing[0]} still stands"),
    )


def check_clears(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """``name`` goes over an obstacle, not round it: where its centre crosses ``x`` (the
    obstacle's middle, moving along +X; interpolated between samples) it is above ``top`` and
    between ``y0`` and ``y1`` (the obstacle's ends)."""
    rows = [r for r in _rows(trace, c["name"]) if r is not None]
    if not rows:
        return False, 0.0, f"{c['name']} is missing"
    x = float(c["x"])
    for a, b in itertools.pairwise(rows):
        if a[0] < x <= b[0]:
            share = (x - a[0]) / (b[0] - a[0])
            y, z = (a[k] + (b[k] - a[k]) * share for k in (1, 2))
            if not c["y0"] <= y <= c["y1"]:
                return False, 0.0, f"{c['name']} went round the wall (at y = {y:.2f}), not over"
            if z < c["top"]:
                return False, 0.0, f"{c['name']} went through the wall (at z = {z:.2f}), not over"
            return True, 1.0, f"{c['name']} went over the wall at y = {y:.2f}, z = {z:.2f}"
    start, furthest = rows[0][0], max(r[0] for r in rows)
    return (
        False,
        max(0.0, min(1.0, (furthest - start) / max(x - start, 1e-6))),
        f"{c['name']} never crossed x = {x:g} (it got to {furthest:.2f})",
    )


# -- a seesaw's outcome (``families/balance.py``) -------------------------------------------------

SEESAW_LEVEL_DEG = 1.5  # ``seesaw``: a plank tilted at most this far at the end stays level
SEESAW_TIPPED_DEG = 3.0  # ``seesaw``: a plank tilted at least this far, the named end down, tipped


def _on_plank(plank: Placed, thing: Placed) -> str:
    """Why ``thing`` is not on ``plank``'s top at their poses, in words ("" when it is): its
    centre over the top's rectangle and its lowest point within ``ON_CONTACT_M`` of the top, both
    in the plank's own frame (a tilted top counts)."""
    (center, rot, half), *_ = plank.boxes()
    lows = []
    for kind, (c, r, h) in thing.parts():
        if kind == "sphere":
            lows.append(float(rot[:, 2] @ (c - center)) - float(h[0]))
        else:
            lows.append(float(((corners((c, r, h)) - center) @ rot[:, 2]).min()))
    local = rot.T @ (np.asarray(thing.pos, float) - center)
    gap = min(lows) - float(half[2])
    if abs(local[0]) > half[0] or abs(local[1]) > half[1]:
        return f"{thing.name} is off {plank.name} (its centre past the plank's top)"
    if abs(gap) > ON_CONTACT_M:
        where = "above" if gap > 0 else "into"
        return f"{thing.name} is {abs(gap):.3f} m {where} {plank.name}'s top, not on it"
    return ""


def check_seesaw(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """A seesaw's outcome once the simulation has run: at the last sample the plank ``name``
    (its long side is its local X) is within ``SEESAW_LEVEL_DEG`` of level (``down`` 0), or
    tilted at least ``SEESAW_TIPPED_DEG`` with its end on the ``down`` side (+1 or -1) of world
    axis ``axis`` (0: X, 1: Y) lower; and the level's ``loads`` and every placed ``carry`` still
    lie on its top (centre over it, lowest point on it, in the plank's frame: nothing fell off).
    With ``side`` (+1 or -1), every placed ``carry`` starts with its centre on that side of the
    pivot (``pivot``, the fulcrum's centre (x, y)) along the axis. Shaping: level, 1 less a
    tenth of the tilt in degrees; tipped, a quarter for a level plank, rising to 1 at
    ``SEESAW_TIPPED_DEG`` towards the named end (0 tipped the other way); halved when something
    fell off or started on the wrong side."""
    axis, down = int(c["axis"]), int(c.get("down", 0))
    last = _last(trace)
    if last.get(c["name"]) is None:
        return False, 0.0, f"{c['name']} is missing"
    plank = Placed.at(scene.objects[c["name"]], last[c["name"]])
    carried = [o["name"] for o in scene.of(c["carry"])] if c.get("carry") else []
    bad = []
    if c.get("side"):
        word = ("-", "+")[int(c["side"]) > 0] + "xy"[axis]
        for name in carried:
            offset = (scene.objects[name]["pos"][axis] - float(c["pivot"][axis])) * int(c["side"])
            if offset <= 0:
                bad.append(f"{name} starts {abs(offset):.2f} m on the wrong side ({word} is asked)")
    for name in [*c.get("loads", ()), *carried]:
        row = last.get(name)
        if row is None:
            bad.append(f"{name} vanished")
        elif why := _on_plank(plank, Placed.at(scene.objects[name], row)):
            bad.append(why)
    long = rotation_quat(last[c["name"]][3:7])[:, 0]
    slope = math.degrees(math.asin(max(-1.0, min(1.0, float(long[2])))))
    tilt = abs(slope)
    lower = -int(np.sign(slope) * np.sign(long[axis])) if tilt >= 0.05 else 0
    end = f"{('-', '+')[lower > 0]}{'XY'[axis]} end" if lower else "neither end"
    if down == 0:
        ok = tilt <= SEESAW_LEVEL_DEG
        said = (
            f"{c['name']} ends {tilt:.1f}° from level ({end} lower; at most {SEESAW_LEVEL_DEG:g}°)"
        )
        shaping = max(0.0, 1 - tilt / 10)
    else:
        ok = tilt >= SEESAW_TIPPED_DEG and lower == down
        asked = f"{('-', '+')[down > 0]}{'XY'[axis]} end"
        said = (
            f"{c['name']} ends {tilt:.1f}° from level, {end} lower (the {asked} must be lower "
            f"by at least {SEESAW_TIPPED_DEG:g}°)"
        )
        toward = tilt if lower == down else -tilt
        shaping = max(0.0, min(1.0, 0.25 + 0.75 * toward / SEESAW_TIPPED_DEG))
    if ok and not bad:
        return True, 1.0, said + ", and nothing fell off it"
    problems = ([] if ok else [said]) + bad
    return False, shaping * (0.5 if bad else 1.0), "; ".join(problems[:3])


SIMULATED_CHECKS = {
    "resting": check_resting,
    "stands": check_stands,
    "reaches": check_reaches,
    "beyond": check_beyond,
    "chain": check_chain,
    "all_fallen": check_all_fallen,
    "clears": check_clears,
    "seesaw": check_seesaw,
    "on": check_on,
}


# -- logic checks (one trace per held-out trajectory) --------------------------------------------


def player_positions(trajectory: Mapping[str, Any], times: Sequence[float]) -> np.ndarray:
    """Where the verifier's player is at ``times``: along its path at its speed, standing at
    waypoints as long as ``waits`` says, then still (``runtime.path_points``, as the host)."""
    points, waits = trajectory["path"], trajectory.get("waits", ())
    return np.asarray(path_points(points, float(trajectory["speed"]), waits, times))


def _overlap_times(
    trajectory: Mapping[str, Any], box: tuple[np.ndarray, np.ndarray], dt: float, seconds: float
) -> list[float]:
    """Frame times (s) at which the player's box overlaps ``box`` (centre, half sizes)."""
    times = np.arange(1, round(seconds / dt) + 1) * dt
    where = player_positions(trajectory, times)
    center, half = box
    inside = (np.abs(where - center) < half + np.asarray(PLAYER_HALF)).all(axis=1)
    return [float(t) for t in times[inside]]


def passage_points(path: Sequence[Sequence[float]]) -> np.ndarray:
    """Where the player's centre passes along a held-out passage (a polyline, m), every
    ``PASSAGE_STEP_M``, ends included: (n, 3)."""
    points = [np.asarray(path[0], float)]
    for a, b in itertools.pairwise(np.asarray(path, float)):
        steps = max(1, math.ceil(float(np.linalg.norm(b - a)) / PASSAGE_STEP_M))
        points += [a + (b - a) * (k / steps) for k in range(1, steps + 1)]
    return np.asarray(points)


class Doorway:
    """A door and the held-out passages through its doorway. A sample row of the door is
    ``"closed"`` (every corner of its box within ``DOOR_CLOSED_M`` of where the level has it),
    ``"open"`` (gone, or the player's box meets it by at most ``OVERLAP_M`` all along every
    passage) or ``"ajar"`` (neither: it moved but still blocks the way)."""

    def __init__(self, door: Mapping[str, Any], passages: Sequence[Sequence[Sequence[float]]]):
        self.door = door
        self.closed = corners(Placed.of(door).boxes()[0])
        self.points = [passage_points(p) for p in passages]
        self._seen: dict[tuple[float, ...], tuple[str, float]] = {}

    def _judge(self, row: Sequence[float]) -> tuple[str, float]:
        key = tuple(row)
        if key not in self._seen:  # a door's rows repeat for long stretches
            box = Placed.at(self.door, row).boxes()[0]
            if float(np.abs(corners(box) - self.closed).max()) <= DOOR_CLOSED_M:
                self._seen[key] = ("closed", 0.0)
            else:
                deepest = max(float(penetrations(box, p, PLAYER_HALF).max()) for p in self.points)
                self._seen[key] = ("open" if deepest <= OVERLAP_M else "ajar", deepest)
        return self._seen[key]

    def state(self, row: Sequence[float] | None) -> str:
        return "open" if row is None else self._judge(row)[0]

    def why(self, row: Sequence[float]) -> str:
        """What blocks the doorway at ``row`` (an ajar door), in words."""
        low = float(corners(Placed.at(self.door, row).boxes()[0])[:, 2].min())
        return (
            f"{self.door['name']} still blocks its doorway: its lowest edge is {low:.2f} m "
            f"up, and a player {2 * PLAYER_HALF[2]:g} m tall walking through meets it "
            f"{self._judge(row)[1]:.2f} m deep"
        )


def check_door(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: a player who enters the ``zone`` finds the door closed until then
    (until ``EARLY_FRAMES`` before) and open from ``DOOR_DELAY_S`` after the first overlap to
    the end; one who walks past finds it closed at every frame. Open means its doorway is clear: the
    player's box walks the held-out ``passages`` through it without meeting the door (see
    :class:`Doorway`), so a door lifted less than the player's height is not open."""
    zone = np.asarray(c["zone"][:3], float), np.asarray(c["zone"][3:], float) / 2
    doorway = Doorway(scene.objects[c["door"]], c["passages"])
    results: list[tuple[str, bool, str]] = []
    for k, (trajectory, trace) in enumerate(plays):
        entered = _overlap_times(trajectory, zone, dt, seconds)
        rows = _level_rows(trace, c["door"])
        times = trace["times"]
        states = [doorway.state(r) for r in rows]
        if entered:
            t0 = entered[0]
            early = [
                (t, s)
                for t, s in zip(times, states, strict=False)
                if t < t0 - EARLY_FRAMES * dt and s != "closed"
            ]
            late = [
                (t, s, r)
                for t, s, r in zip(times, states, rows, strict=False)
                if t >= t0 + DOOR_DELAY_S
            ]
            shut = [(t, s, r) for t, s, r in late if s != "open"]
            if early:
                what = "opened" if early[0][1] == "open" else "moved"
                results.append(
                    (
                        "enter",
                        False,
                        f"path {k + 1}: the door {what} at "
                        f"{early[0][0]:.2f} s, before the player entered at {t0:.2f} s",
                    )
                )
            elif not late or shut:
                why = (
                    f" (at {shut[0][0]:.2f} s {doorway.why(shut[0][2])})"
                    if (shut and shut[0][1] == "ajar")
                    else ""
                )
                results.append(
                    (
                        "enter",
                        False,
                        f"path {k + 1}: the player entered the zone at "
                        f"{t0:.2f} s and the door was not open {DOOR_DELAY_S:g} s later "
                        f"and from then on{why}",
                    )
                )
            else:
                results.append(
                    ("enter", True, f"path {k + 1}: the door opened when the player entered")
                )
        else:
            moved = [(t, s) for t, s in zip(times, states, strict=False) if s != "closed"]
            if moved:
                what = "opened" if moved[0][1] == "open" else "moved"
                results.append(
                    (
                        "beside",
                        False,
                        f"path {k + 1}: the player walked past the zone "
                        f"and the door {what} at {moved[0][0]:.2f} s",
                    )
                )
            else:
                results.append(
                    (
                        "beside",
                        True,
                        f"path {k + 1}: the player walked past and the door stayed closed",
                    )
                )
    return _gated(results, "the door never opened for a player who entered the zone")


def _gated(
    results: Sequence[tuple[Any, ...]], why: str, acted: bool | None = None
) -> list[tuple[str, Check]]:
    """Checks that a do-nothing script passes ("stays closed") count only when the behaviour
    itself happened at least once (``acted``; default: some path that asked for it passed).
    ``results``: ``(kind, ok, message)`` or ``(kind, ok, message, shaping)`` per path (the
    shaping of a failed path: 0 unless given)."""
    if acted is None:
        acted = any(r[1] for r in results if r[0] != "beside")
    out = []
    for k, (kind, ok, message, *rest) in enumerate(results):
        shaping = 1.0 if ok else (float(rest[0]) if rest else 0.0)
        if kind == "beside" and ok and not acted:
            ok, shaping, message = False, 0.0, f"{message}, but not credited: {why}"
        out.append((f"path_{k + 1}", (ok, shaping, message)))
    return out


def check_coins(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: every level coin the player's box overlaps is gone from
    ``COIN_DELAY_S`` after the first touch (not before it), every other coin stays, each within
    ``LEVEL_STILL_M`` of its place at every frame while it exists, and the ``counter`` reads the
    number collected. A failed path's shaping is the share of its touched coins and its count
    that came out right (none if an untouched coin went or moved)."""
    coins = [o for o in scene.objects.values() if o["asset"] == "coin" and o.get("level")]
    results: list[tuple[str, bool, str, float]] = []
    acted = False  # some coin, on some path, was collected as asked
    for k, (trajectory, trace) in enumerate(plays):
        times = trace["times"]
        touched, problems, right, spoiled = 0, [], 0, False
        for coin in coins:
            before = len(problems)
            collected = False
            box = np.asarray(coin["pos"], float), np.asarray(ASSETS["coin"].size) / 2
            hits = _overlap_times(trajectory, box, dt, seconds)
            rows = _level_rows(trace, coin["name"])
            if hits:
                touched += 1
                t0 = hits[0]
                gone_early = [
                    t
                    for t, r in zip(times, rows, strict=False)
                    if t < t0 - EARLY_FRAMES * dt and r is None
                ]
                still = [
                    t
                    for t, r in zip(times, rows, strict=False)
                    if t >= t0 + COIN_DELAY_S and r is not None
                ]
                if gone_early:
                    problems.append(
                        f"{coin['name']} vanished at {gone_early[0]:.2f} s, before the player "
                        "touched it"
                    )
                elif still:
                    problems.append(f"{coin['name']} was touched at {t0:.2f} s and is still there")
                else:
                    collected = True
            elif rows and rows[-1] is None:
                problems.append(f"{coin['name']} vanished though the player never touched it")
            strayed = next(
                (
                    (t, d)
                    for t, r in zip(times, rows, strict=False)
                    if r is not None
                    and (d := float(np.linalg.norm(np.asarray(r[:3]) - box[0]))) > LEVEL_STILL_M
                ),
                None,
            )
            if strayed:
                problems.append(
                    f"{coin['name']} was {strayed[1]:.2f} m from its place at "
                    f"{strayed[0]:.2f} s (coins stay where the level has them)"
                )
            clean = len(problems) == before
            right += collected and clean
            spoiled = spoiled or (not hits and not clean)  # an untouched coin gone or moved
            acted = acted or (collected and clean)
        count = int(trace["counters"].get(c["counter"], 0))
        if count != touched:
            problems.append(
                f"the counter '{c['counter']}' reads {count}; the player collected {touched}"
            )
        else:
            right += touched > 0
        kind = "collect" if touched else "beside"
        message = f"path {k + 1}: " + (
            "; ".join(problems[:3]) if problems else f"{touched} coins collected and counted"
        )
        # Shaping: the share of what the logic had to do on this path (each touched coin, and
        # the count) that it did, nothing if it took or moved a coin the player never touched.
        shaping = 0.0 if spoiled or not touched else right / (touched + 1)
        results.append((kind, not problems, message, shaping))
    return _gated(results, "no coin was ever collected", acted)


def _mover_position(points: np.ndarray, speed: float, t: float) -> np.ndarray:
    total = float(np.linalg.norm(points[1] - points[0]))
    s = (speed * t) % (2 * total)
    s = 2 * total - s if s > total else s
    return points[0] + (points[1] - points[0]) * (s / total)


def check_platform(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: the mover's target within ``MOVER_TOL_M`` of where its two waypoints
    and speed put it (back and forth) at every frame of the play."""
    points = np.asarray(c["points"], float)
    out = []
    for k, (_trajectory, trace) in enumerate(plays):
        rows = _rows(trace, c["name"])
        errors = [
            float("inf")
            if r is None
            else float(np.linalg.norm(np.asarray(r[:3]) - _mover_position(points, c["speed"], t)))
            for t, r in zip(trace["times"], rows, strict=False)
        ]
        if not errors:
            out.append((f"path_{k + 1}", (False, 0.0, f"{c['name']} is missing")))
            continue
        good = sum(e <= MOVER_TOL_M for e in errors) / len(errors)
        worst = int(np.argmax(errors))
        ok = errors[worst] <= MOVER_TOL_M
        message = (
            f"{c['name']} follows its waypoints at every frame"
            if ok
            else f"{c['name']} is {errors[worst]:.2f} m off its path at "
            f"{trace['times'][worst]:.2f} s ({good:.0%} of frames on it, at most "
            f"{MOVER_TOL_M:g} m off)"
        )
        out.append((f"path_{k + 1}", (ok, good, message)))
    return out


def check_spawner(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: by each frame (but within ``SPAWN_SLACK_S`` of a due time) as many
    ``asset`` objects have appeared as are due (one every ``interval`` s, the first one
    ``interval`` after the start, ``count`` in all), each within ``SPAWN_NEAR_M`` of ``pos``."""
    out = []
    level = set(scene.objects)
    for k, (_trajectory, trace) in enumerate(plays):
        spawned = [n for n, a in trace["assets"].items() if a == c["asset"] and n not in level]
        first_seen = {}
        for name in spawned:
            rows = trace["samples"][name]
            i = (
                next(i for i, r in enumerate(rows) if r is not None)
                if any(r is not None for r in rows)
                else None
            )
            if i is not None:
                first_seen[name] = (trace["times"][i], rows[i])
        problems, judged, right = [], 0, 0
        for t in trace["times"]:
            expected = min(c["count"], math.floor(t / c["interval"] + 1e-6))
            near_spawn = (
                abs(t / c["interval"] - round(t / c["interval"])) * c["interval"] < SPAWN_SLACK_S
            )
            if near_spawn:
                continue
            seen = sum(1 for ts, _ in first_seen.values() if ts <= t + 1e-9)
            judged += 1
            right += seen == expected
            if seen != expected and len(problems) < 1:
                problems.append(f"{seen} {c['asset']}s by {t:.2f} s where {expected} are due")
        far = [
            n
            for n, (_, row) in first_seen.items()
            if np.linalg.norm(np.asarray(row[:3]) - c["pos"]) > SPAWN_NEAR_M
        ]
        if far:
            problems.append(f"{far[0]} appeared away from the spawner")
        # Shaping: frames with the right count, times the share of objects that appeared near.
        share = (right / judged if judged else 0.0) * (1 - len(far) / max(len(first_seen), 1))
        ok = not problems and judged > 0
        out.append(
            (
                f"path_{k + 1}",
                (
                    ok,
                    share,
                    f"{len(first_seen)} {c['asset']}s spawned on time"
                    if ok
                    else "; ".join(problems),
                ),
            )
        )
    return out


# -- logic checks of the gameplay families (``families/gameplay.py``) ------------------------------

Want = Callable[[float], str | None]  # the door state a rule asks for at a time, or None


def _zone(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """A zone ``[x, y, z, size_x, size_y, size_z]`` as (centre, half sizes)."""
    return np.asarray(values[:3], float), np.asarray(values[3:6], float) / 2


def _stays(
    trajectory: Mapping[str, Any], box: tuple[np.ndarray, np.ndarray], dt: float, seconds: float
) -> list[tuple[float, float | None]]:
    """The player's stays in ``box`` (centre, half sizes): for each, the first frame time (s) at
    which its box overlaps it and the first frame time after that at which it no longer does
    (None: still in at the end)."""
    times = np.arange(1, round(seconds / dt) + 1) * dt
    where = player_positions(trajectory, times)
    center, half = box
    inside = (np.abs(where - center) < half + np.asarray(PLAYER_HALF)).all(axis=1)
    stays: list[tuple[float, float | None]] = []
    start = None
    for t, now in zip(times, inside, strict=True):
        if now and start is None:
            start = float(t)
        elif not now and start is not None:
            stays.append((start, float(t)))
            start = None
    if start is not None:
        stays.append((start, None))
    return stays


def _door_frames(
    doorway: Doorway, trace: Mapping[str, Any], name: str, want: Want, since: float
) -> tuple[tuple[float, str, str, Any] | None, float, bool]:
    """The door's state at every frame against ``want(t)`` (``"open"``, ``"closed"`` or None: not
    judged). Returns the first frame that differs, as (time, wanted, found, row), or None; the
    share of the judged frames from ``since`` on that agree (the shaping, 0 unless the door was
    open at some frame that wanted it open); and whether it was."""
    rows, times = _level_rows(trace, name), trace["times"]
    wrong, judged, right, opened = None, 0, 0, False
    for t, row in zip(times, rows, strict=False):
        wanted = want(t)
        if wanted is None:
            continue
        found = doorway.state(row)
        ok = found == wanted
        opened = opened or (ok and wanted == "open")
        if t >= since - 1e-9:
            judged += 1
            right += ok
        if not ok and wrong is None:
            wrong = (t, wanted, found, row)
    return wrong, (right / judged if judged and opened else 0.0), opened


def _door_wrong(doorway: Doorway, wrong: tuple[float, str, str, Any]) -> str:
    """What the door did at a frame that differs, in words: "the door was open at 1.20 s", "the
    door was not open at 2.00 s (door_1 still blocks its doorway: ...)"."""
    t, wanted, found, row = wrong
    if wanted == "closed":
        return f"the door was {'open' if found == 'open' else 'out of its place'} at {t:.2f} s"
    why = f" ({doorway.why(row)})" if found == "ajar" else ""
    return f"the door was not open at {t:.2f} s{why}"


def _schedule(early: float, steps: Sequence[tuple[float, float, str]]) -> Want:
    """A door's wanted state over time: closed until ``early`` s before the first step, then,
    for each step ``(at, slack, state)``, not judged from ``early`` s before ``at`` until
    ``slack`` s after it, and ``state`` from then until ``early`` s before the next step."""

    def want(t: float) -> str | None:
        state = "closed"
        for at, slack, then in steps:
            if t < at - early - 1e-9:
                return state
            if t < at + slack - 1e-9:
                return None
            state = then
        return state

    return want


def check_plate_door(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: the door is open exactly while the player stands on the plate (their
    box overlaps the ``zone``, the plate's footprint): open from ``DOOR_DELAY_S`` after each step
    on until the step off, closed from ``PLATE_RELEASE_S`` after each step off until the next
    step on, and before the first (either may change ``EARLY_FRAMES`` before the player's box
    does); a player who never steps on finds it closed at every frame (credited only if the door
    ever opened for a player on the plate: see :func:`_gated`). Open is :class:`Doorway`'s (the
    held-out ``passages`` clear). A failed path's shaping: the share of its frames from the
    first step on at which the door was as it must be (none if it never opened then)."""
    zone = _zone(c["zone"])
    doorway = Doorway(scene.objects[c["door"]], c["passages"])
    early = EARLY_FRAMES * dt
    results: list[tuple[str, bool, str, float]] = []
    acted = False
    for k, (trajectory, trace) in enumerate(plays):
        stays = _stays(trajectory, zone, dt, seconds)
        steps: list[tuple[float, float, str]] = []
        for on, off in stays:
            steps.append((on, DOOR_DELAY_S, "open"))
            if off is not None:
                steps.append((off, PLATE_RELEASE_S, "closed"))
        since = stays[0][0] - early if stays else 0.0
        wrong, shaping, opened = _door_frames(
            doorway, trace, c["door"], _schedule(early, steps), since
        )
        acted = acted or opened
        if not stays:
            message = f"path {k + 1}: the player never stepped on the plate and " + (
                _door_wrong(doorway, wrong) if wrong else "the door stayed closed"
            )
            results.append(("beside", wrong is None, message, 0.0))
            continue
        if wrong is None:
            message = f"path {k + 1}: the door was open while the player stood on the plate"
        else:
            t = wrong[0]
            last_on = max((on for on, _ in stays if on <= t + early), default=None)
            last_off = max((off for _, off in stays if off is not None and off <= t), default=None)
            if last_on is None:
                where = f"before the player stepped on the plate at {stays[0][0]:.2f} s"
            elif last_off is not None and last_off >= last_on:
                where = f"after the player stepped off the plate at {last_off:.2f} s"
            else:
                where = f"after the player stepped on the plate at {last_on:.2f} s"
            message = f"path {k + 1}: {_door_wrong(doorway, wrong)}, {where}"
        results.append(("enter", wrong is None, message, shaping))
    return _gated(results, "the door never opened for a player on the plate", acted)


def check_timed_door(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: a player who enters the ``zone`` finds the door closed until then
    (until ``EARLY_FRAMES`` before the first overlap), open from ``DOOR_DELAY_S`` after it until
    ``TIMER_SLACK_S`` before ``hold`` s after it, and closed from ``TIMER_SLACK_S`` after that to
    the end, whatever the player does then; one who never enters finds it closed at every frame
    (credited only if the door ever opened for a player who entered). A failed path's shaping:
    the share of its frames from the entry on at which the door was as it must be (none if it
    never opened then)."""
    zone = _zone(c["zone"])
    doorway = Doorway(scene.objects[c["door"]], c["passages"])
    early, hold = EARLY_FRAMES * dt, float(c["hold"])
    results: list[tuple[str, bool, str, float]] = []
    acted = False
    for k, (trajectory, trace) in enumerate(plays):
        entered = _overlap_times(trajectory, zone, dt, seconds)
        steps = (
            [(entered[0], DOOR_DELAY_S, "open"), (entered[0] + hold, TIMER_SLACK_S, "closed")]
            if entered
            else []
        )
        since = entered[0] - early if entered else 0.0
        wrong, shaping, opened = _door_frames(
            doorway, trace, c["door"], _schedule(early, steps), since
        )
        acted = acted or opened
        if not entered:
            message = f"path {k + 1}: the player never entered the zone and " + (
                _door_wrong(doorway, wrong) if wrong else "the door stayed closed"
            )
            results.append(("beside", wrong is None, message, 0.0))
            continue
        t0 = entered[0]
        if wrong is None:
            message = (
                f"path {k + 1}: the door opened when the player entered at {t0:.2f} s and "
                f"closed {hold:g} s later"
            )
        elif wrong[0] < t0:
            message = (
                f"path {k + 1}: {_door_wrong(doorway, wrong)}, before the player entered at "
                f"{t0:.2f} s"
            )
        elif wrong[1] == "open":
            message = (
                f"path {k + 1}: the player entered at {t0:.2f} s and {_door_wrong(doorway, wrong)}"
            )
        else:
            message = (
                f"path {k + 1}: the player entered at {t0:.2f} s and the door was still "
                f"{wrong[2]} at {wrong[0]:.2f} s ({wrong[0] - t0:.2f} s later; it closes "
                f"{hold:g} s later, within {TIMER_SLACK_S:g} s)"
            )
        results.append(("enter", wrong is None, message, shaping))
    return _gated(results, "the door never opened for a player who entered the zone", acted)


def check_sequence_door(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: a player who enters the ``then`` zone after first entering the
    ``first`` zone finds the door closed until that entry into ``then`` (until ``EARLY_FRAMES``
    before it) and open from ``DOOR_DELAY_S`` after it to the end; one who never does (the
    wrong order, one zone only, neither) finds it closed at every frame (credited only if the
    door ever opened in the right order). A failed path's shaping: the share of its frames from
    that entry on at which the door was open (none if it never opened then)."""
    first, then = _zone(c["first"]), _zone(c["then"])
    doorway = Doorway(scene.objects[c["door"]], c["passages"])
    early = EARLY_FRAMES * dt
    results: list[tuple[str, bool, str, float]] = []
    acted = False
    for k, (trajectory, trace) in enumerate(plays):
        a = _overlap_times(trajectory, first, dt, seconds)
        b = [on for on, _ in _stays(trajectory, then, dt, seconds)]
        t_open = next((t for t in b if a and t > a[0]), None)
        steps = [(t_open, DOOR_DELAY_S, "open")] if t_open is not None else []
        since = t_open - early if t_open is not None else 0.0
        wrong, shaping, opened = _door_frames(
            doorway, trace, c["door"], _schedule(early, steps), since
        )
        acted = acted or opened
        if t_open is None:
            if a and b:
                order = f"the second zone at {b[0]:.2f} s before the first at {a[0]:.2f} s"
            elif a or b:
                order = f"only the {'first' if a else 'second'} zone"
            else:
                order = "neither zone"
            message = f"path {k + 1}: the player entered {order} and " + (
                _door_wrong(doorway, wrong) if wrong else "the door stayed closed"
            )
            results.append(("beside", wrong is None, message, 0.0))
            continue
        head = (
            f"path {k + 1}: the player entered the first zone at {a[0]:.2f} s and then the "
            f"second at {t_open:.2f} s"
        )
        message = f"{head} and " + (
            f"{_door_wrong(doorway, wrong)}" if wrong else "the door opened"
        )
        results.append(("enter", wrong is None, message, shaping))
    return _gated(
        results, "the door never opened for a player who entered the zones in order", acted
    )


def check_coin_gate(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: a player whose box touches ``need`` of the level's coins (each touch
    read as :func:`check_coins` reads it) finds the door closed until the touch that makes
    ``need`` (until ``EARLY_FRAMES`` before it) and open from ``DOOR_DELAY_S`` after it to the
    end; one who touches fewer finds it closed at every frame (credited only if the door ever
    opened for a player who collected enough). A failed path's shaping: the share of its frames
    from that touch on at which the door was open (none if it never opened then)."""
    coins = [o for o in scene.objects.values() if o["asset"] == "coin" and o.get("level")]
    doorway = Doorway(scene.objects[c["door"]], c["passages"])
    early, need = EARLY_FRAMES * dt, int(c["need"])
    half = np.asarray(ASSETS["coin"].size) / 2
    results: list[tuple[str, bool, str, float]] = []
    acted = False
    for k, (trajectory, trace) in enumerate(plays):
        touches = sorted(
            hits[0]
            for coin in coins
            if (
                hits := _overlap_times(
                    trajectory, (np.asarray(coin["pos"], float), half), dt, seconds
                )
            )
        )
        t_open = touches[need - 1] if len(touches) >= need else None
        steps = [(t_open, DOOR_DELAY_S, "open")] if t_open is not None else []
        since = t_open - early if t_open is not None else 0.0
        wrong, shaping, opened = _door_frames(
            doorway, trace, c["door"], _schedule(early, steps), since
        )
        acted = acted or opened
        if t_open is None:
            message = (
                f"path {k + 1}: the player collected {len(touches)} of the {need} coins that "
                "open the door and "
                + (_door_wrong(doorway, wrong) if wrong else "the door stayed closed")
            )
            results.append(("beside", wrong is None, message, 0.0))
            continue
        head = f"path {k + 1}: the player had collected {need} coins at {t_open:.2f} s"
        message = f"{head} and " + (_door_wrong(doorway, wrong) if wrong else "the door opened")
        results.append(("enter", wrong is None, message, shaping))
    return _gated(results, f"the door never opened for a player who collected {need} coins", acted)


def _lift_band(
    c: Mapping[str, Any], t0: float | None, t: float, early: float
) -> tuple[float, float]:
    """The heights (m) a lift's centre may have at ``t`` (before ``LIFT_TOL_M``): from the rise
    started ``LIFT_DELAY_S`` after the entry at ``t0`` to the one started ``early`` s before it."""
    z0, top, speed = float(c["start"][2]), float(c["height"]), float(c["speed"])
    if t0 is None:
        return z0, z0

    def height(start: float) -> float:
        return min(top, z0 + speed * max(0.0, t - start))

    return height(t0 + LIFT_DELAY_S), height(t0 - early)


def check_lift(
    scene: Scene,
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any],
    dt: float,
    seconds: float,
) -> list[tuple[str, Check]]:
    """Per held-out path: the platform ``name`` stays at its ``start`` until the player first
    enters the ``zone``, then rises straight up at ``speed`` m/s until its centre is at
    ``height`` and stays there, within ``LIFT_TOL_M`` at every frame of where a rise started
    between ``EARLY_FRAMES`` before the entry and ``LIFT_DELAY_S`` after it puts it; for a player
    who never enters, it stays at its start at every frame (credited only if it ever rose for a
    player who entered). A failed path's shaping: the share of its frames from the entry on at
    which it was where it must be (none if it never rose then)."""
    zone = _zone(c["zone"])
    start = np.asarray(c["start"], float)
    early = EARLY_FRAMES * dt
    results: list[tuple[str, bool, str, float]] = []
    acted = False
    for k, (trajectory, trace) in enumerate(plays):
        entered = _overlap_times(trajectory, zone, dt, seconds)
        t0 = entered[0] if entered else None
        worst, judged, right, rose = None, 0, 0, False
        for t, row in zip(trace["times"], _level_rows(trace, c["name"]), strict=False):
            low, high = _lift_band(c, t0, t, early)
            if row is None:
                error = math.inf
            else:
                x, y, z = row[:3]
                below_above = max(low - z, z - high, 0.0)
                error = math.hypot(x - start[0], y - start[1], below_above)
                rose = rose or (t0 is not None and t >= t0 - early and z - start[2] > LIFT_TOL_M)
            if t0 is not None and t >= t0 - early - 1e-9:
                judged += 1
                right += error <= LIFT_TOL_M
            if error > LIFT_TOL_M and (worst is None or error > worst[1]):
                worst = (t, error, row)
        acted = acted or rose
        ok = worst is None
        if t0 is None:
            message = f"path {k + 1}: the player never entered the call zone and " + (
                f"{c['name']} stayed where it was"
                if ok
                else f"{c['name']} was {_lift_off(worst)} from its place at {worst[0]:.2f} s"
            )
            results.append(("beside", ok, message, 0.0))
            continue
        message = f"path {k + 1}: the player entered the call zone at {t0:.2f} s and " + (
            f"{c['name']} rose to {float(c['height']):g} m"
            if ok
            else f"{c['name']} was {_lift_off(worst)} off its rise at {worst[0]:.2f} s (at most "
            f"{LIFT_TOL_M:g} m)"
        )
        shaping = right / judged if judged and rose else 0.0
        results.append(("enter", ok, message, shaping))
    return _gated(results, "the platform never rose for a player who entered the call zone", acted)


def _lift_off(worst: tuple[float, float, Any]) -> str:
    return "gone" if worst[2] is None else f"{worst[1]:.2f} m"


LOGIC_CHECKS = {
    "door": check_door,
    "coins": check_coins,
    "platform": check_platform,
    "spawner": check_spawner,
    "plate_door": check_plate_door,
    "timed_door": check_timed_door,
    "sequence_door": check_sequence_door,
    "coin_gate": check_coin_gate,
    "lift": check_lift,
}


# -- the report ----------------------------------------------------------------------------------


def verify_scene(
    description: Mapping[str, Any] | Scene,
    constraints: Sequence[Mapping[str, Any]],
    tier: str,
    traces: Sequence[Mapping[str, Any]] = (),
    plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]] = (),
    seconds: float = 0.0,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> VerifierReport:
    """Check every constraint; simulated ones must hold in every trace (the unperturbed run and
    the exact tier's perturbed runs) and earn nothing while an ``initial`` check fails (a set-up
    that starts wrong). Returns a report whose ``checks`` hold one entry per constraint (per
    trajectory for logic), ``{"ok", "message", "weight", "shaping"}``. ``notes``: what the
    caller did not take over from the agent, in words: ``refused`` (properties the task fixes,
    actions logic may not take: a failed ``refused`` check weighing as much as all the
    constraints together) and ``ignored`` (changes to the level: an ``ignored`` entry with
    ``ok`` None and weight 0, outside the score). ``description`` may come as the
    :class:`Scene` the caller already checked it as."""
    scene = description if isinstance(description, Scene) else Scene(description)
    dt = float(scene.description.get("dt", 1 / 60))
    checks: dict[str, dict[str, Any]] = {}
    notes = notes or {}
    started = all(scene.static(c)[0] for c in constraints if c["kind"] == "initial")

    def add(name: str, weight: float, check: Check) -> None:
        ok, shaping, message = check
        key, n = name, 2
        while key in checks:
            key, n = f"{name}_{n}", n + 1
        checks[key] = {
            "ok": bool(ok),
            "message": message,
            "weight": float(weight),
            "shaping": float(shaping),
        }

    for c in constraints:
        kind, weight = c["kind"], float(c.get("weight", 1.0))
        label = f"{kind}" + (f":{c['asset']}" if "asset" in c else "")
        if kind in STATIC_CHECKS:
            add(label, weight, scene.static(c))
        elif kind in SIMULATED_CHECKS:
            if not started:
                add(
                    label,
                    weight,
                    (
                        False,
                        0.0,
                        f"{kind} not credited: the set-up is wrong at t = 0 (see initial)",
                    ),
                )
                continue
            results = [SIMULATED_CHECKS[kind](scene, trace, c) for trace in traces]
            if not results:
                add(label, weight, (False, 0.0, "not simulated"))
                continue
            failed = [(k, r) for k, r in enumerate(results) if not r[0]]
            if not failed:
                add(label, weight, results[0])
            else:
                k, (_, _, message) = failed[0]
                where = f"in perturbed run {k}: " if k else ""
                add(label, weight, (False, min(r[1] for r in results), where + message))
        elif kind in LOGIC_CHECKS:
            per_path = LOGIC_CHECKS[kind](scene, plays, c, dt, seconds)
            for name, check in per_path:
                add(f"{kind}:{name}", weight / max(len(per_path), 1), check)
        else:
            raise ValueError(f"unknown constraint kind {kind!r}")
    if notes.get("refused"):
        # A rule the prompt states was broken (a body, mass or friction the catalogue does not
        # give, an action on the verifier's player): it weighs as much as all the rest, so a
        # refused scene earns at most half, below any honest attempt that breaks no rule.
        refused = list(notes["refused"])
        add(
            "refused",
            max(1.0, sum(float(c.get("weight", 1.0)) for c in constraints)),
            (
                False,
                0.0,
                "refused: "
                + "; ".join(refused[:3])
                + (f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""),
            ),
        )
    if notes.get("ignored"):
        checks["ignored"] = {
            "ok": None,
            "message": "ignored: " + "; ".join(notes["ignored"]),
            "weight": 0.0,
            "shaping": 0.0,
        }
    scored = {k: v for k, v in checks.items() if v["ok"] is not None}
    total = sum(v["weight"] for v in scored.values())
    score = sum(
        v["weight"] * (1.0 if v["ok"] else 0.5 * v["shaping"]) for v in scored.values()
    ) / max(total, 1e-12)
    met = sum(v["ok"] for v in scored.values())
    metrics = {"score": score, "constraints_met": float(met), "constraints": float(len(scored))}
    passed = bool(scored) and met == len(scored)
    return VerifierReport(metrics, round(score, 6), passed, tier, checks=checks)
