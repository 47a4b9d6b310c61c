"""Exact geometry of the catalogue's collision parts, for the scene verifier: oriented boxes,
interpenetration and separation, footprints, and support (what holds an object up).

Every part is an oriented box ``(centre (3,), axes (3, 3) as columns, half sizes (3,))``; a sphere
or a wedge is taken by its box for interpenetration and separation, except where that would
invent a surface: a sphere offers only the single point on its top to stand on, a wedge's top is
a slope and offers nothing.

Support is contact, not a bounding box's top: an object stands on a surface where its own lowest
points (the corners of its parts' boxes, a sphere's lowest point) lie on that surface's flat top
face (the floor, or the face of a box part whose normal is within ``FLAT_DEG`` of up), within
``gap_m`` above it or ``sink_m`` into it. The contact regions (those points' hull clipped to each
face) of the surfaces allowed to hold it make a support polygon; the object is held when the
vertical through its centre of mass (the centre of its box, as Bullet's compound shapes have it)
passes strictly inside that polygon. A domino on a ball's top (a point) or a crate with its centre
over another's edge is not held.

Units: m, degrees. Z is up; the floor is the plane z = 0.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.envs.scene.catalogue import ASSETS

FLAT_DEG = 5.0  # a box part's face is a flat top to stand on when its normal is this close to up
FLOOR = "the floor"
Box = tuple[np.ndarray, np.ndarray, np.ndarray]  # centre (3,), axes (3, 3) columns, half sizes (3,)
_CORNERS = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


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


@dataclasses.dataclass(frozen=True)
class Placed:
    """An object at a pose: ``name``, catalogue ``asset``, ``pos`` (its box centre, m), ``rot``
    (3×3) and whether it collides (``solid``: not a ghost)."""

    name: str
    asset: str
    pos: np.ndarray
    rot: np.ndarray
    solid: bool = True

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Placed:
        """From a scene description's object (``pos``, ``hpr``, ``body``)."""
        return cls(
            obj["name"],
            obj["asset"],
            np.asarray(obj["pos"], float),
            rotation_hpr(obj["hpr"]),
            obj.get("body") != "ghost",
        )

    @classmethod
    def at(cls, obj: Mapping[str, Any], row: Sequence[float]) -> Placed:
        """``obj`` at a trace's sample ``row`` (x, y, z, qw, qx, qy, qz)."""
        return cls(
            obj["name"],
            obj["asset"],
            np.asarray(row[:3], float),
            rotation_quat(row[3:7]),
            obj.get("body") != "ghost",
        )

    def parts(self) -> list[tuple[str, Box]]:
        """Its collision parts: ``(kind, box)``, kind ``box``, ``sphere`` or ``wedge`` (one list
        per object, made once: not to be changed)."""
        return self._parts

    @functools.cached_property
    def _parts(self) -> list[tuple[str, Box]]:
        return [
            (
                part.kind,
                (
                    self.pos + self.rot @ np.asarray(part.offset),
                    self.rot,
                    np.asarray(part.size) / 2,
                ),
            )
            for part in ASSETS[self.asset].parts
        ]

    @functools.cached_property
    def tops(self) -> list[Surface]:
        """Its flat tops (see :func:`surfaces`), found once: a support check asks for every
        other object's tops, for each object."""
        return _tops(self)

    @functools.cached_property
    def low_points(self) -> np.ndarray:
        """Where it can touch what is under it (k, 3): each part's box corners, or a sphere's
        lowest point, part after part."""
        return np.concatenate(
            [
                (box[0] - np.array([0.0, 0.0, box[2][0]]))[None, :]
                if kind == "sphere"
                else corners(box)
                for kind, box in self.parts()
            ]
        )

    def boxes(self) -> list[Box]:
        return [box for _, box in self.parts()]


def corners(box: Box) -> np.ndarray:
    """The box's 8 corners (8, 3)."""
    center, rot, half = box
    return center + (_CORNERS * half) @ rot.T


def penetration(a: Box, b: Box) -> float:
    """How deep two oriented boxes interpenetrate (m): the smallest overlap over the 15
    separating axes; 0 when they are apart."""
    (ca, ra, ha), (cb, rb, hb) = a, b
    gap = np.abs(ca - cb) - (np.abs(ra) @ ha + np.abs(rb) @ hb)
    if (gap >= 0).any():  # their axis-aligned bounds are apart already
        return 0.0
    return max(0.0, -_gap(a, b))


def bounds_overlap(boxes: Sequence[Box]) -> np.ndarray:
    """(n, n) bool: whether each two boxes' axis-aligned bounds overlap, :func:`penetration`'s
    first test for every pair at once (where it is False, their penetration is 0)."""
    if not boxes:
        return np.zeros((0, 0), bool)
    centres = np.array([c for c, _, _ in boxes])
    extents = np.array([np.abs(r) @ h for _, r, h in boxes])
    gap = np.abs(centres[:, None] - centres[None]) - (extents[:, None] + extents[None])
    return ~(gap >= 0).any(axis=2)


def separation(a: Box, b: Box) -> float:
    """The gap between two oriented boxes (m): the largest separation over the 15 separating
    axes, 0 or less when they touch (a lower bound of their distance, exact face to face)."""
    return _gap(a, b)


def _gap(a: Box, b: Box) -> float:
    (ca, ra, ha), (cb, rb, hb) = a, b
    axes = np.concatenate([ra.T, rb.T, np.cross(ra.T[:, None, :], rb.T[None, :, :]).reshape(9, 3)])
    norms = np.linalg.norm(axes, axis=1)
    axes = axes[norms > 1e-9] / norms[norms > 1e-9, None]
    extent_a = np.abs(axes @ ra) @ ha
    extent_b = np.abs(axes @ rb) @ hb
    return float((np.abs(axes @ (cb - ca)) - extent_a - extent_b).max())


def part_gap(a: tuple[str, Box], b: tuple[str, Box]) -> float:
    """The gap between two parts (m; 0 or less: touching): exact for a sphere against a box or
    a sphere, the boxes' separation otherwise."""
    (kind_a, box_a), (kind_b, box_b) = a, b
    if kind_b == "sphere" and kind_a != "sphere":
        (kind_a, box_a), (kind_b, box_b) = (kind_b, box_b), (kind_a, box_a)
    if kind_a == "sphere":
        center, _, half = box_a
        if kind_b == "sphere":
            return float(np.linalg.norm(center - box_b[0]) - half[0] - box_b[2][0])
        c, rot, h = box_b
        local = rot.T @ (center - c)
        outside = np.linalg.norm(np.maximum(np.abs(local) - h, 0.0))
        inside = float(np.min(h - np.abs(local))) if outside == 0 else 0.0
        return float(outside - inside - half[0])
    return separation(box_a, box_b)


def object_gap(a: Placed, b: Placed) -> float:
    """The gap between two objects' collision parts (m; 0 or less: touching)."""
    return min(part_gap(p, q) for p in a.parts() for q in b.parts())


def footprint_distance(point: np.ndarray, box: Box) -> float:
    """Horizontal distance (m) from ``point`` (x, y) to a box's footprint (0 inside)."""
    center, rot, half = box
    local = rot[:2, :2].T @ (np.asarray(point, float)[:2] - center[:2])
    excess = np.maximum(np.abs(local) - half[:2], 0.0)
    return float(np.linalg.norm(excess))


# -- convex polygons in the plane ------------------------------------------------------------------


def hull(points: Iterable[Sequence[float]]) -> np.ndarray:
    """The convex hull (k, 2), counter-clockwise (Andrew's monotone chain); fewer than 3 rows
    when the points are one point or on one line."""
    rows = np.asarray(points, float).reshape(-1, 2).tolist()  # plain floats: rounded fast
    pts = sorted({(round(x, 9), round(y, 9)) for x, y in rows})
    if len(pts) <= 2:
        return np.asarray(pts, float).reshape(-1, 2)

    def cross(o: Any, a: Any, b: Any) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[Any] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 1e-12:
            lower.pop()
        lower.append(p)
    upper: list[Any] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 1e-12:
            upper.pop()
        upper.append(p)
    return np.asarray(lower[:-1] + upper[:-1], float)


def clip(subject: np.ndarray, window: np.ndarray) -> np.ndarray:
    """``subject`` (a convex polygon, a segment or a point, counter-clockwise) clipped to the
    convex polygon ``window`` (counter-clockwise, 3 or more vertices)."""
    edges = list(zip(window, np.roll(window, -1, axis=0), strict=True))

    def side(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        return float((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]))

    if len(subject) < 3:  # a point or a segment: Cyrus-Beck
        p, q = subject[0], subject[-1]
        lo, hi = 0.0, 1.0
        for a, b in edges:
            sp, sq = side(p, a, b), side(q, a, b)
            if sp < -1e-12 and sq < -1e-12:
                return np.empty((0, 2))
            if sp < -1e-12 or sq < -1e-12:
                s = sp / (sp - sq)
                lo, hi = (max(lo, s), hi) if sp < 0 else (lo, min(hi, s))
        if lo > hi:
            return np.empty((0, 2))
        return hull([p + lo * (q - p), p + hi * (q - p)])
    out = [np.asarray(v, float) for v in subject]  # Sutherland-Hodgman
    for a, b in edges:
        if not out:
            break
        kept = []
        for p, q in zip(out, out[1:] + out[:1], strict=True):
            sp, sq = side(p, a, b), side(q, a, b)
            if sp >= -1e-12:
                kept.append(p)
            if (sp >= -1e-12) != (sq >= -1e-12):
                kept.append(p + (q - p) * (sp / (sp - sq)))
        out = kept
    return hull(out) if out else np.empty((0, 2))


def _dot(x: float, y: float, u: float, v: float) -> float:
    """(x, y) · (u, v), the second product fused into the sum: numpy's dot of 2-vectors as its
    BLAS computes it on an FMA machine, written out so that every machine gets the same bits."""
    return math.fma(y, v, x * u)


def _segment_distance(px: float, py: float, a: Sequence[float], b: Sequence[float]) -> float:
    """The distance (m) from the point (px, py) to the segment from ``a`` to ``b``."""
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    share = 0.0
    if dx != 0 or dy != 0:
        share = min(max(_dot(px - ax, py - ay, dx, dy) / _dot(dx, dy, dx, dy), 0.0), 1.0)
    x, y = px - (ax + share * dx), py - (ay + share * dy)
    return math.sqrt(_dot(x, y, x, y))


def depth_inside(point: Sequence[float], polygon: np.ndarray) -> float:
    """How far ``point`` lies inside a convex polygon (m): positive inside (its distance to the
    nearest edge), negative outside; a point or a segment has no inside (minus the distance)."""
    if len(polygon) == 0:
        return -math.inf
    px, py = float(point[0]), float(point[1])
    rows = polygon.tolist()  # plain floats: a verifier asks this thousands of times a step
    if len(rows) < 3:
        return -_segment_distance(px, py, rows[0], rows[-1])
    edges = list(zip(rows, rows[1:] + rows[:1], strict=True))
    return _depth(px, py, edges, _edge_depth(px, py, edges))


def covers(polygon: np.ndarray, point: Sequence[float]) -> bool:
    """Whether a convex polygon (3 or more vertices) holds ``point``, its edges included:
    ``depth_inside(point, polygon) >= 0``, without measuring how far outside a point lies."""
    px, py = float(point[0]), float(point[1])
    rows = polygon.tolist()
    edges = list(zip(rows, rows[1:] + rows[:1], strict=True))
    inside = _edge_depth(px, py, edges)
    if inside < -1e-6:
        return False  # beyond an edge's line: its distance to the polygon is not 0
    return _depth(px, py, edges, inside) >= 0


def _depth(px: float, py: float, edges: list, inside: float) -> float:
    """:func:`depth_inside` of a polygon with 3 or more vertices, given its least edge depth."""
    if inside >= 0:
        return inside
    return -min(_segment_distance(px, py, a, b) for a, b in edges)


def _edge_depth(px: float, py: float, edges: list) -> float:
    """The least signed distance (m) from (px, py) to the lines of a counter-clockwise polygon's
    edges (positive on their inner side), zero-length edges skipped."""
    depths = []
    for (ax, ay), (bx, by) in edges:
        ex, ey = bx - ax, by - ay
        length = math.sqrt(_dot(ex, ey, ex, ey))
        if length < 1e-12:
            continue
        depths.append((ex * (py - ay) - ey * (px - ax)) / length)
    return min(depths)


# -- support --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Surface:
    """A flat face to stand on: ``name`` (the object's, or ``FLOOR``), its height ``z`` (m) and
    its outline (k, 2), counter-clockwise (``None``: the floor, unbounded; one row: a point)."""

    name: str
    z: float
    outline: np.ndarray | None


def surfaces(objects: Iterable[Placed]) -> list[Surface]:
    """The floor and every solid object's flat tops: the upward face of each box part whose
    normal is within ``FLAT_DEG`` of up, and the top point of each sphere."""
    return [Surface(FLOOR, 0.0, None), *(top for o in objects if o.solid for top in o.tops)]


def _tops(o: Placed) -> list[Surface]:
    """One object's flat tops (see :func:`surfaces`)."""
    found = []
    flat = math.cos(math.radians(FLAT_DEG))
    for kind, (center, rot, half) in o.parts():
        if kind == "sphere":
            found.append(Surface(o.name, float(center[2] + half[0]), center[None, :2].copy()))
        elif kind == "box":
            k = int(np.argmax(np.abs(rot[2])))
            if abs(rot[2, k]) < flat:
                continue
            normal = rot[:, k] * np.sign(rot[2, k])
            face = center + normal * half[k]
            u, v = [rot[:, j] * half[j] for j in range(3) if j != k]
            quad = [face + su * u + sv * v for su in (-1, 1) for sv in (-1, 1)]
            found.append(Surface(o.name, float(face[2]), hull([q[:2] for q in quad])))
    return found


def lowest(o: Placed) -> float:
    """The lowest point of an object's collision parts (m)."""
    return float(o.low_points[:, 2].min())


def _feet(o: Placed, z: float, gap_m: float, sink_m: float) -> np.ndarray:
    """The object's lowest points that lie on the plane at height ``z`` (from ``sink_m`` below
    it to ``gap_m`` above): its parts' box corners and its spheres' lowest points, as (x, y)."""
    points = o.low_points
    return points[(points[:, 2] >= z - sink_m) & (points[:, 2] <= z + gap_m), :2]


@dataclasses.dataclass(frozen=True)
class Support:
    """What holds an object up: ``contacts`` ({surface name: contact region (k, 2)}), ``held``
    (its centre lies inside the support polygon of the allowed surfaces' contacts), ``depth``
    (how far inside, m; negative: how far past its edge), ``gap`` (m, from its lowest point down
    to the nearest surface under its centre; negative: sunk in) and ``under`` (that surface)."""

    contacts: dict[str, np.ndarray]
    held: bool
    depth: float
    gap: float
    under: str

    @property
    def allowed(self) -> bool:
        return self.depth > -math.inf


def support(
    o: Placed, others: Iterable[Placed], allowed: Callable[[str], bool], gap_m: float, sink_m: float
) -> Support:
    """Where ``o`` touches the floor and the flat tops of ``others`` (see the module docstring),
    and whether the surfaces ``allowed(name)`` accepts hold it up."""
    low, centre = lowest(o), o.pos[:2]
    contacts: dict[str, np.ndarray] = {}
    gap, under = low, FLOOR
    for surface in surfaces(x for x in others if x.name != o.name):
        outline = surface.outline
        nearer = surface.z <= low + sink_m and low - surface.z < gap  # tested first: cheaper
        if nearer and (outline is None or (len(outline) >= 3 and covers(outline, centre))):
            gap, under = low - surface.z, surface.name
        if not surface.z - sink_m <= low <= surface.z + gap_m:
            continue
        feet = _feet(o, surface.z, gap_m, sink_m)
        if not len(feet):
            continue
        touch = hull(feet)
        if outline is not None:
            if len(outline) == 1:  # a sphere's top: a point, where the object's feet reach it
                inside = len(touch) >= 3 and covers(touch, outline[0])
                touch = outline if inside or _on(outline[0], touch) else np.empty((0, 2))
            else:
                touch = clip(touch, outline)
        if len(touch):
            contacts[surface.name] = (
                np.concatenate([contacts[surface.name], touch])
                if surface.name in contacts
                else touch
            )
    held_by = [region for name, region in contacts.items() if allowed(name)]
    if not held_by:
        return Support(contacts, False, -math.inf, float(gap), under)
    region = hull(np.concatenate(held_by))
    spheres = all(kind == "sphere" for kind, _ in o.parts())
    depth = (
        -float(np.linalg.norm(region[0] - centre))
        if spheres and len(region) == 1
        else (depth_inside(centre, region))
    )
    # A ball stands on one point: held when that point is under its centre.
    held = bool(depth >= -1e-6 if spheres else depth > 0)
    return Support(contacts, held, float(depth), float(gap), under)


def _on(point: np.ndarray, polygon: np.ndarray) -> bool:
    return len(polygon) > 0 and depth_inside(point, polygon) > -1e-6


def penetrations(box: Box, centers: np.ndarray, half: np.ndarray) -> np.ndarray:
    """How deep ``box`` interpenetrates each of the axis-aligned boxes at ``centers`` (n, 3)
    with half sizes ``half`` (3,) (m, 0 where apart): :func:`penetration`, vectorised."""
    center, rot, h = box
    world = np.eye(3)
    axes = np.concatenate([rot.T, world, np.cross(rot.T[:, None, :], world[None]).reshape(9, 3)])
    norms = np.linalg.norm(axes, axis=1)
    axes = axes[norms > 1e-9] / norms[norms > 1e-9, None]
    extent = np.abs(axes @ rot) @ h + np.abs(axes) @ np.asarray(half, float)  # (k,)
    distance = np.abs((np.asarray(centers, float) - center) @ axes.T)  # (n, k)
    return np.maximum(0.0, (extent[None, :] - distance).min(axis=1))
