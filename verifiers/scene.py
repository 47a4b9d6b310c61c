"""The game-scene verifier: constraints checked on plain data, each passed or failed with the
reason in words.

Inputs are a scene description (``World.describe``'s format, rebuilt and validated by the caller),
simulation traces (``simulate``'s output: sample times, per-object position and quaternion rows,
final states) and, for logic tasks, one trace per held-out player trajectory. Geometry is exact
for the catalogue's collision boxes: oriented-box separating-axis tests for interpenetration,
oriented footprints for distances, a 0.1 m navigation grid for walkways.

Score = Σ wᵢ·sᵢ / Σ wᵢ over the task's constraints, where sᵢ is 1 for a constraint met and half
its shaping term (in [0, 1], e.g. how close the ball came to the goal) otherwise; a report passes
when every constraint is met. A physics set-up is checked as it starts (``initial``: upright,
supported, apart) before its outcome earns anything; what the caller refused to take over from
the agent (a body the catalogue does not give, an action on the verifier's player) fails a
``refused`` check. Every tolerance is a named constant below. Units: m, s, degrees.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.ndimage

from toolgym.envs.scene.catalogue import ASSETS
from toolgym.envs.scene.runtime import path_point
from toolgym.verifiers.report import VerifierReport

# Tolerances, each a designer's judgement (tests hold both sides of each):
OVERLAP_M = 0.003  # interpenetration up to this is contact (Bullet's resting contacts sink
# less than 1 mm); beyond it, overlap (``no_overlap``, and the physics set-up at t = 0)
ON_CONTACT_M = 0.005  # ``on``: the gap (or sinking) between an object's bottom and the top
SUPPORT_M = 0.005  # an object's bottom this close to the floor or a top below it is supported
UPRIGHT_DEG = 5.0  # tilt (pitch and roll) up to this is upright
ALIGN_DEG = 10.0  # ``aligned``: how far a heading may turn from the one the prompt states
RESTING_MOVE_M = 0.03  # ``resting``: a placed object may settle this far while simulated
STAND_MOVE_M = 0.05  # ``stands``: a stacked crate may move this far in the whole run
WALL_SLACK_M = 0.02  # ``against_wall``: how far an object may reach into the wall's face
WALL_DEG = 10.0  # ``against_wall``: how far its front may turn from facing into the room
DOOR_DELAY_S = 0.1  # a door must be open this long after the player first overlaps the zone
# (and may open 1.5 frames early: the trigger and the verifier's player may differ by a frame)
COIN_DELAY_S = 0.1  # a coin the player touched must be gone this long after the first touch
PLAYER_HALF = (0.25, 0.25, 0.9)
GRID_M = 0.1
Check = tuple[bool, float, str]  # met, shaping in [0, 1], reason in words


# -- geometry ------------------------------------------------------------------------------------


def rotation_hpr(hpr: Sequence[float]) -> np.ndarray:
    """Panda3D's HPR (degrees) as a 3×3 rotation (column vectors): Rz(h) · Rx(p) · Ry(r)."""
    h, p, r = (math.radians(float(v)) for v in hpr)
    rz = np.array([[math.cos(h), -math.sin(h), 0], [math.sin(h), math.cos(h), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, math.cos(p), -math.sin(p)], [0, math.sin(p), math.cos(p)]])
    ry = np.array([[math.cos(r), 0, math.sin(r)], [0, 1, 0], [-math.sin(r), 0, math.cos(r)]])
    return rz @ rx @ ry


def rotation_quat(q: Sequence[float]) -> np.ndarray:
    """A unit quaternion (w, x, y, z) as a 3×3 rotation."""
    w, x, y, z = (float(v) for v in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


Box = tuple[np.ndarray, np.ndarray, np.ndarray]  # centre (3,), axes (3, 3) columns, half sizes (3,)


def object_boxes(obj: Mapping[str, Any]) -> list[Box]:
    """The object's collision parts as oriented boxes (a sphere or wedge by its box)."""
    rot = rotation_hpr(obj["hpr"])
    pos = np.asarray(obj["pos"], dtype=float)
    return [
        (pos + rot @ np.asarray(part.offset), rot, np.asarray(part.size) / 2)
        for part in ASSETS[obj["asset"]].parts
    ]


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
        "south wall": (((left + door_x - 0.5) / 2, -d / 2 - t / 2, 0.5),
                       (door_x - 0.5 - left, t, 1)),
        "south wall ": (((door_x + 0.5 + right) / 2, -d / 2 - t / 2, 0.5),
                        (right - door_x - 0.5, t, 1)),
    }  # fmt: skip
    return [
        (name.strip(), (np.array(c, float), np.eye(3), np.array(s, float) / 2))
        for name, (c, s) in specs.items()
    ]


def penetration(a: Box, b: Box) -> float:
    """How deep two oriented boxes interpenetrate (m): the smallest overlap over the 15
    separating axes; 0 when they are apart."""
    (ca, ra, ha), (cb, rb, hb) = a, b
    gap = np.abs(ca - cb) - (np.abs(ra) @ ha + np.abs(rb) @ hb)
    if (gap >= 0).any():  # their axis-aligned bounds are apart already
        return 0.0
    axes = np.concatenate([ra.T, rb.T, np.cross(ra.T[:, None, :], rb.T[None, :, :]).reshape(9, 3)])
    norms = np.linalg.norm(axes, axis=1)
    axes = axes[norms > 1e-9] / norms[norms > 1e-9, None]
    extent_a = np.abs(axes @ ra) @ ha
    extent_b = np.abs(axes @ rb) @ hb
    overlap = extent_a + extent_b - np.abs(axes @ (cb - ca))
    return max(0.0, float(overlap.min()))


def footprint_distance(point: np.ndarray, box: Box) -> float:
    """Horizontal distance (m) from ``point`` (x, y) to a box's footprint (0 inside)."""
    center, rot, half = box
    local = rot[:2, :2].T @ (np.asarray(point, float) - center[:2])
    excess = np.maximum(np.abs(local) - half[:2], 0.0)
    return float(np.linalg.norm(excess))


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
    rot = rotation_hpr(obj["hpr"])
    entry = ASSETS[obj["asset"]]
    cube = len(entry.parts) == 1 and entry.shape == "box" and len(set(entry.size)) == 1
    up = float(np.max(np.abs(rot[2]))) if cube else float(rot[2, 2])
    return math.degrees(math.acos(max(-1.0, min(1.0, up))))


def bottom(obj: Mapping[str, Any]) -> float:
    """The lowest point of the object's collision boxes (m)."""
    return min(float((c - np.abs(r) @ h)[2]) for c, r, h in object_boxes(obj))


def top_box(obj: Mapping[str, Any]) -> Box:
    """The collision box that reaches highest (a table's top)."""
    return max(object_boxes(obj), key=lambda b: float((b[0] + np.abs(b[1]) @ b[2])[2]))


def top(obj: Mapping[str, Any]) -> float:
    c, r, h = top_box(obj)
    return float((c + np.abs(r) @ h)[2])


def support(scene: Scene, obj: Mapping[str, Any]) -> tuple[float, str]:
    """What holds ``obj`` up: ``(gap, name)`` for the floor or the solid object whose top lies
    under its centre nearest to its bottom (``gap`` in m, negative when it sinks in)."""
    low = bottom(obj)
    best = (low, "the floor")
    here = np.asarray(obj["pos"][:2], float)
    for other in scene.objects.values():
        if other["name"] == obj["name"] or other["body"] == "ghost":
            continue
        if footprint_distance(here, top_box(other)) > 0:
            continue
        gap = low - top(other)
        if abs(gap) < abs(best[0]):
            best = (gap, other["name"])
    return best


def angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    cos = float(u @ v) / max(float(np.linalg.norm(u) * np.linalg.norm(v)), 1e-12)
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


# -- the scene's objects -----------------------------------------------------------------------


class Scene:
    """A description's objects, split into the level's and the agent's."""

    def __init__(self, description: Mapping[str, Any]) -> None:
        self.description = description
        self.room = description.get("room")
        self.objects = {o["name"]: o for o in description["objects"]}
        self.placed = [o for o in description["objects"] if not o.get("level")]

    def of(self, asset_name: str, placed: bool = True) -> list[dict[str, Any]]:
        pool = self.placed if placed else list(self.objects.values())
        return [o for o in pool if o["asset"] == asset_name]


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
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    target = np.array([c["x"], c["y"]])
    dists = [(float(np.linalg.norm(np.asarray(o["pos"][:2]) - target)), o["name"]) for o in found]
    d, name = min(dists)
    return (
        d <= c["tol"],
        1 / (1 + d),
        (f"{name} is {d:.2f} m from ({c['x']:g}, {c['y']:g}) (at most {c['tol']:g} m)"),
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


def check_next_to(scene: Scene, c: Mapping[str, Any]) -> Check:
    def test(o: dict, others: list) -> tuple[bool, str]:
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
        return True, 1.0, f"every {c['asset']} lies {c['what']}"
    return False, max(0.0, 1 - worst), "; ".join(bad[:3])


_WALL_NORMALS = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}


def check_against_wall(scene: Scene, c: Mapping[str, Any]) -> Check:
    if not scene.room:
        return False, 0.0, "the scene has no room"
    normal = np.array(_WALL_NORMALS[c["wall"]], dtype=float)
    inner = scene.room["depth" if normal[1] else "width"] / 2
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    bad = []
    for o in found:
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


def check_on(scene: Scene, c: Mapping[str, Any]) -> Check:
    """Each placed ``asset`` stands on an ``other``: its centre over the other's top (the top's
    footprint) and its bottom within ``ON_CONTACT_M`` of that top (neither floating nor sunk)."""

    def test(o: dict, others: list) -> tuple[bool, str]:
        low, here = bottom(o), np.asarray(o["pos"][:2], float)
        best = (math.inf, "", 0.0, 0.0)
        for b in others:
            outside = footprint_distance(here, top_box(b))
            gap = low - top(b)
            best = min(best, (outside + max(0.0, abs(gap) - ON_CONTACT_M), b["name"], outside, gap))
        _, name, outside, gap = best
        if outside > 0:
            return False, f"{o['name']}'s centre is {outside:.3f} m past the edge of {name}'s top"
        if gap > ON_CONTACT_M:
            return False, f"{o['name']} floats {gap:.3f} m above {name}'s top"
        if gap < -ON_CONTACT_M:
            return False, f"{o['name']} is sunk {-gap:.3f} m into {name}'s top"
        return True, f"{o['name']} is on {name}"

    return _each(scene, c, test)


def check_inside_room(scene: Scene, c: Mapping[str, Any]) -> Check:
    if not scene.room:
        return True, 1.0, "no room"
    w, d = scene.room["width"] / 2 + 0.01, scene.room["depth"] / 2 + 0.01
    if not scene.placed:
        return False, 0.0, "nothing placed"
    bad = []
    for o in scene.placed:
        for center, rot, half in object_boxes(o):
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
    boxes = {o["name"]: object_boxes(o) for o in solid}
    named = list(boxes.items()) + [(name, [box]) for name, box in room_walls(scene.room)]
    worst: list[tuple[float, str, str]] = []
    placed = {o["name"] for o in scene.placed}
    for i, (a, parts_a) in enumerate(named):
        for b, parts_b in named[i + 1 :]:
            if a not in placed and b not in placed:
                continue
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
    points = np.stack([gx.ravel(), gy.ravel()], axis=1)
    clearance = np.minimum(
        np.minimum(points[:, 0] + w / 2, w / 2 - points[:, 0]),
        np.minimum(points[:, 1] + d / 2, d / 2 - points[:, 1]),
    )
    target_distance = np.full(len(points), np.inf)
    for o in scene.objects.values():
        if o["body"] == "ghost":
            continue
        for center, rot, half in object_boxes(o):
            low = (center - np.abs(rot) @ half)[2]
            if low > 1.8:
                continue
            local = (points - center[:2]) @ rot[:2, :2]  # heading only: tilt is ignored here
            excess = np.maximum(np.abs(local) - half[:2], 0)
            dist = np.linalg.norm(excess, axis=1)
            clearance = np.minimum(clearance, dist)
            if o["asset"] == c["to"] and not o.get("level"):
                target_distance = np.minimum(target_distance, dist)
    free = (clearance > PLAYER_HALF[0]).reshape(gx.shape)
    goal = ((target_distance <= 0.6) & (clearance > PLAYER_HALF[0])).reshape(gx.shape)
    door_x = scene.room.get("door_x", 0.0)
    start = (int(np.argmin(np.abs(xs - door_x))), int(np.argmin(np.abs(ys - (-d / 2 + 0.45)))))
    if not free[start]:
        return False, 0.0, "the doorway is blocked"
    regions, _ = scipy.ndimage.label(free)  # 4-connected regions of free cells
    if goal[regions == regions[start]].any():
        return True, 1.0, f"a walkway leads from the doorway to the {c['to']}"
    return False, 0.0, f"no 0.5 m wide walkway leads from the doorway to the {c['to']}"


def check_initial(scene: Scene, c: Mapping[str, Any]) -> Check:
    """A physics set-up as described at t = 0: every placed solid object upright (within
    ``UPRIGHT_DEG``: a domino lying down has not fallen), resting on the floor or on a top under
    its centre (within ``SUPPORT_M``: a stack is settled), and interpenetrating nothing (the
    ground, the level's objects, each other) by more than ``OVERLAP_M``. Until it holds, the
    simulated checks earn nothing."""
    placed = [o for o in scene.placed if o["body"] != "ghost"]
    solid = [o for o in scene.objects.values() if o["body"] != "ghost"]
    bad = []
    for o in placed:
        tilt = tilt_deg(o)
        if tilt > UPRIGHT_DEG:
            bad.append(f"{o['name']} starts tipped {tilt:.0f}° (it must start upright)")
            continue
        depth, other = max(
            ((max(penetration(p, q) for p in object_boxes(o) for q in object_boxes(b)),
              b["name"]) for b in solid if b["name"] != o["name"]),
            default=(0.0, ""),
        )  # fmt: skip
        if -bottom(o) > OVERLAP_M:
            bad.append(f"{o['name']} starts {-bottom(o):.3f} m into the floor")
        elif depth > OVERLAP_M:
            bad.append(f"{o['name']} starts {depth:.3f} m into {other}")
        else:
            gap, under = support(scene, o)
            if gap > SUPPORT_M:
                bad.append(f"{o['name']} starts {gap:.3f} m above {under} (unsupported)")
    if not bad:
        return True, 1.0, "the set-up starts at rest, upright, supported and apart"
    return False, 1 - len(bad) / max(len(placed), 1), "; ".join(bad[:3])


STATIC_CHECKS = {
    "count": check_count, "near": check_near, "next_to": check_next_to, "facing": check_facing,
    "against_wall": check_against_wall, "on": check_on, "inside_room": check_inside_room,
    "no_overlap": check_no_overlap, "walkway": check_walkway, "aligned": check_aligned,
    "initial": check_initial,
}  # fmt: skip


# -- simulated checks ----------------------------------------------------------------------------


def _tilt_deg(row: Sequence[float]) -> float:
    up = rotation_quat(row[3:7]) @ np.array([0.0, 0.0, 1.0])
    return math.degrees(math.acos(max(-1.0, min(1.0, float(up[2])))))


def _rows(trace: Mapping[str, Any], name: str) -> list[Any]:
    return trace["samples"].get(name) or []


def check_resting(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    """Everything placed stays where it is (moves at most 3 cm while simulated), and what the
    simulation cannot drop (static, kinematic or ghost bodies) starts supported: its bottom
    within ``SUPPORT_M`` of the floor or of a top under its centre."""
    if not scene.placed:
        return False, 0.0, "nothing placed"
    bad = []
    for o in scene.placed:
        if o["body"] != "dynamic":
            gap, under = support(scene, o)
            if abs(gap) > SUPPORT_M:
                where = "above" if gap > 0 else "into"
                bad.append(f"{o['name']} ({o['body']}) is {abs(gap):.2f} m {where} {under}")
                continue
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        if not rows:
            bad.append(f"{o['name']} vanished")
            continue
        moved = float(np.linalg.norm(np.asarray(rows[-1][:3]) - np.asarray(rows[0][:3])))
        if moved > RESTING_MOVE_M:
            bad.append(
                f"{o['name']} moved {moved:.2f} m in {trace['times'][-1]:.1f} s (unsupported)"
            )
    if not bad:
        return True, 1.0, "everything rests where it was placed"
    return False, 1 - len(bad) / len(scene.placed), "; ".join(bad[:3])


def check_stands(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    crates = sorted(scene.of(c["asset"]), key=lambda o: o["pos"][2])
    if len(crates) < c["n"]:
        return False, 0.0, f"{_plural(len(crates), c['asset'])}; the stack needs {c['n']}"
    base = crates[0]
    off = float(np.linalg.norm(np.asarray(base["pos"][:2]) - (c["x"], c["y"])))
    if off > 0.1 or base["pos"][2] > 0.3:
        return (
            False,
            0.0,
            f"the bottom {c['asset']} is {off:.2f} m off the pad, not on the floor there",
        )
    for below, above in itertools.pairwise(crates):
        shift = above["pos"][0] - below["pos"][0]
        if abs(shift - c["overhang"]) > 0.02 or abs(above["pos"][1] - below["pos"][1]) > 0.02:
            return (
                False,
                0.0,
                (
                    f"{above['name']} is shifted {shift:.2f} m along X from {below['name']}; "
                    "the task "
                    f"asks for {c['overhang']:g} m"
                ),
            )
    fallen = []
    for o in crates:
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        moved = (
            float(np.linalg.norm(np.asarray(rows[-1][:3]) - np.asarray(o["pos"]))) if rows else 9
        )
        if moved > STAND_MOVE_M:
            fallen.append((moved, o["name"]))
    if not fallen:
        return True, 1.0, f"the stack of {len(crates)} stands"
    moved, name = max(fallen)
    return (
        False,
        1 - len(fallen) / len(crates),
        (f"the stack fell: {name} moved {moved:.2f} m ({len(fallen)} of {len(crates)} moved)"),
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


def check_chain_ends(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    found = scene.of(c["asset"])
    if not found:
        return False, 0.0, f"no {c['asset']} placed"
    ends = [np.array([c["x"], c["y0"]]), np.array([c["x"], c["y1"]])]
    gaps = [min(float(np.linalg.norm(np.asarray(o["pos"][:2]) - e)) for o in found) for e in ends]
    ok = max(gaps) <= c["tol"]
    return (
        ok,
        1 / (1 + max(gaps)),
        (f"the chain's ends are {gaps[0]:.2f} m and {gaps[1]:.2f} m from the marks"),
    )


def check_all_fallen(scene: Scene, trace: Mapping[str, Any], c: Mapping[str, Any]) -> Check:
    found = scene.of(c["asset"])
    if len(found) < c["n"]:
        return False, 0.0, f"{_plural(len(found), c['asset'])} where the chain needs {c['n']}"
    standing = []
    for o in found:
        rows = [r for r in _rows(trace, o["name"]) if r is not None]
        if rows and _tilt_deg(rows[-1]) < 45:
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


SIMULATED_CHECKS = {
    "resting": check_resting, "stands": check_stands, "reaches": check_reaches,
    "beyond": check_beyond, "chain_ends": check_chain_ends, "all_fallen": check_all_fallen,
    "clears": check_clears,
}  # fmt: skip


# -- logic checks (one trace per held-out trajectory) --------------------------------------------


def player_positions(trajectory: Mapping[str, Any], times: Sequence[float]) -> np.ndarray:
    """Where the verifier's player is at ``times``: along its path at its speed, standing at
    waypoints as long as ``waits`` says, then still (``runtime.path_point``, as the host)."""
    points, waits = trajectory["path"], trajectory.get("waits", ())
    return np.asarray([path_point(points, float(trajectory["speed"]), waits, t) for t in times])


def _overlap_times(trajectory: Mapping[str, Any], box: tuple[np.ndarray, np.ndarray],
                   dt: float, seconds: float) -> list[float]:  # fmt: skip
    """Frame times (s) at which the player's box overlaps ``box`` (centre, half sizes)."""
    times = np.arange(1, round(seconds / dt) + 1) * dt
    where = player_positions(trajectory, times)
    center, half = box
    inside = (np.abs(where - center) < half + np.asarray(PLAYER_HALF)).all(axis=1)
    return [float(t) for t in times[inside]]


def _is_open(row: Any, closed_z: float) -> bool:
    return row is None or row[2] > closed_z + 0.5


def check_door(
    scene: Scene, plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any], dt: float, seconds: float,
) -> list[tuple[str, Check]]:  # fmt: skip
    zone = np.asarray(c["zone"][:3], float), np.asarray(c["zone"][3:], float) / 2
    closed_z = scene.objects[c["door"]]["pos"][2]
    results: list[tuple[str, bool, str]] = []
    for k, (trajectory, trace) in enumerate(plays):
        entered = _overlap_times(trajectory, zone, dt, seconds)
        rows = _rows(trace, c["door"])
        times = trace["times"]
        if entered:
            t0 = entered[0]
            early = [
                t
                for t, r in zip(times, rows, strict=False)
                if t < t0 - 1.5 * dt and _is_open(r, closed_z)
            ]
            late = [r for t, r in zip(times, rows, strict=False) if t >= t0 + DOOR_DELAY_S]
            if early:
                results.append(
                    (
                        "enter",
                        False,
                        f"path {k + 1}: the door opened at {early[0]:.2f} s, before the player "
                        f"entered at {t0:.2f} s",
                    )
                )
            elif not late or not all(_is_open(r, closed_z) for r in late):
                results.append(
                    (
                        "enter",
                        False,
                        f"path {k + 1}: the player entered the zone at {t0:.2f} s and the door "
                        f"was not open {DOOR_DELAY_S:g} s later and from then on",
                    )
                )
            else:
                results.append(
                    ("enter", True, f"path {k + 1}: the door opened when the player entered")
                )
        else:
            opened = [t for t, r in zip(times, rows, strict=False) if _is_open(r, closed_z)]
            if opened:
                results.append(
                    (
                        "beside",
                        False,
                        f"path {k + 1}: the player walked past the zone and the door opened at "
                        f"{opened[0]:.2f} s",
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


def _gated(results: list[tuple[str, bool, str]], why: str) -> list[tuple[str, Check]]:
    """Checks that a do-nothing script passes ("stays closed") count only when the behaviour
    itself happened at least once."""
    acted = any(ok for kind, ok, _ in results if kind != "beside")
    out = []
    for k, (kind, ok, message) in enumerate(results):
        if kind == "beside" and ok and not acted:
            ok, message = False, f"{message}, but not credited: {why}"
        out.append((f"path_{k + 1}", (ok, 1.0 if ok else 0.0, message)))
    return out


def check_coins(
    scene: Scene, plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any], dt: float, seconds: float,
) -> list[tuple[str, Check]]:  # fmt: skip
    coins = [o for o in scene.objects.values() if o["asset"] == "coin" and o.get("level")]
    results: list[tuple[str, bool, str]] = []
    for k, (trajectory, trace) in enumerate(plays):
        times = trace["times"]
        touched, problems = 0, []
        for coin in coins:
            box = np.asarray(coin["pos"], float), np.asarray(ASSETS["coin"].size) / 2
            hits = _overlap_times(trajectory, box, dt, seconds)
            rows = _rows(trace, coin["name"])
            if hits:
                touched += 1
                t0 = hits[0]
                gone_early = [
                    t for t, r in zip(times, rows, strict=False) if t < t0 - 1.5 * dt and r is None
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
            elif rows and rows[-1] is None:
                problems.append(f"{coin['name']} vanished though the player never touched it")
        count = int(trace["counters"].get(c["counter"], 0))
        if count != touched:
            problems.append(
                f"the counter '{c['counter']}' reads {count}; the player collected {touched}"
            )
        kind = "collect" if touched else "beside"
        message = f"path {k + 1}: " + (
            "; ".join(problems[:3]) if problems else f"{touched} coins collected and counted"
        )
        results.append((kind, not problems, message))
    return _gated(results, "no coin was ever collected")


def _mover_position(points: np.ndarray, speed: float, t: float) -> np.ndarray:
    total = float(np.linalg.norm(points[1] - points[0]))
    s = (speed * t) % (2 * total)
    s = 2 * total - s if s > total else s
    return points[0] + (points[1] - points[0]) * (s / total)


def check_platform(
    scene: Scene, plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any], dt: float, seconds: float,
) -> list[tuple[str, Check]]:  # fmt: skip
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
        good = sum(e <= c["tol"] for e in errors) / len(errors)
        worst = int(np.argmax(errors))
        ok = good >= 0.97
        message = (
            f"{c['name']} follows its waypoints" if ok else
            f"{c['name']} is {errors[worst]:.2f} m off its path at "
            f"{trace['times'][worst]:.2f} s ({good:.0%} of samples on it)"
        )  # fmt: skip
        out.append((f"path_{k + 1}", (ok, good, message)))
    return out


def check_spawner(
    scene: Scene, plays: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    c: Mapping[str, Any], dt: float, seconds: float,
) -> list[tuple[str, Check]]:  # fmt: skip
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
                abs(t / c["interval"] - round(t / c["interval"])) * c["interval"] < 2.5 * dt
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
            if np.linalg.norm(np.asarray(row[:3]) - c["pos"]) > 0.5
        ]
        if far:
            problems.append(f"{far[0]} appeared away from the spawner")
        share = right / judged if judged else 0.0
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


LOGIC_CHECKS = {
    "door": check_door, "coins": check_coins, "platform": check_platform, "spawner": check_spawner,
}  # fmt: skip


# -- the report ----------------------------------------------------------------------------------


def verify_scene(
    description: Mapping[str, Any],
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
    actions logic may not take: a failed ``refused`` check of weight 1) and ``ignored``
    (changes to the level: an ``ignored`` entry with ``ok`` None and weight 0, outside the
    score)."""
    scene = Scene(description)
    dt = float(description.get("dt", 1 / 60))
    checks: dict[str, dict[str, Any]] = {}
    notes = notes or {}
    started = all(
        STATIC_CHECKS["initial"](scene, c)[0] for c in constraints if c["kind"] == "initial"
    )

    def add(name: str, weight: float, check: Check) -> None:
        ok, shaping, message = check
        key, n = name, 2
        while key in checks:
            key, n = f"{name}_{n}", n + 1
        checks[key] = {"ok": bool(ok), "message": message, "weight": float(weight),
                       "shaping": float(shaping)}  # fmt: skip

    for c in constraints:
        kind, weight = c["kind"], float(c.get("weight", 1.0))
        label = f"{kind}" + (f":{c['asset']}" if "asset" in c else "")
        if kind in STATIC_CHECKS:
            add(label, weight, STATIC_CHECKS[kind](scene, c))
        elif kind in SIMULATED_CHECKS:
            if not started:
                add(label, weight, (False, 0.0, f"{kind} not credited: the set-up is wrong at "
                                    "t = 0 (see initial)"))  # fmt: skip
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
        refused = list(notes["refused"])
        add(
            "refused",
            1.0,
            (
                False,
                0.0,
                "refused: "
                + "; ".join(refused[:3])
                + (f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""),
            ),
        )
    if notes.get("ignored"):
        checks["ignored"] = {"ok": None, "message": "ignored: " + "; ".join(notes["ignored"]),
                             "weight": 0.0, "shaping": 0.0}  # fmt: skip
    scored = {k: v for k, v in checks.items() if v["ok"] is not None}
    total = sum(v["weight"] for v in scored.values())
    score = sum(
        v["weight"] * (1.0 if v["ok"] else 0.5 * v["shaping"]) for v in scored.values()
    ) / max(total, 1e-12)
    met = sum(v["ok"] for v in scored.values())
    metrics = {"score": score, "constraints_met": float(met), "constraints": float(len(scored))}
    passed = bool(scored) and met == len(scored)
    return VerifierReport(metrics, round(score, 6), passed, tier, checks=checks)
