"""The scene verifier's fast geometry against the plain computations it stands for: a polygon
covering a point (``covers``) against ``depth_inside``, all-pairs bounds (``bounds_overlap``)
against ``penetration``, the walkway measured near each box only against the walkway measured
everywhere. Random layouts, tilted and turned boxes included; units m and degrees."""

from __future__ import annotations

import math

import numpy as np
import scipy.ndimage

from toolgym.envs.scene.geometry import (
    Placed,
    bounds_overlap,
    covers,
    depth_inside,
    hull,
    penetration,
    rotation_hpr,
)
from toolgym.envs.scene.verifier import PLAYER_HALF, Scene, check_walkway

ASSETS = ("crate", "table", "chair", "domino", "shelf", "ball", "plank", "ramp")


def test_covers_is_depth_inside_at_least_zero_on_vertices_edges_and_random_points():
    rng = np.random.default_rng(0)
    for _ in range(300):
        polygon = hull(rng.normal(size=(rng.integers(3, 9), 2)))
        if len(polygon) < 3:
            continue
        a, b = polygon[0], polygon[1]
        points = [*rng.normal(size=(20, 2)) * 1.5, a, (a + b) / 2, polygon.mean(axis=0)]
        for p in points:
            assert covers(polygon, p) == (depth_inside(p, polygon) >= 0)


def test_depth_inside_is_the_distance_to_the_nearest_edge_inside_and_to_the_polygon_outside():
    square = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    assert depth_inside((0.5, 1.0), square) == 0.5
    assert depth_inside((3.0, 1.0), square) == -1.0
    assert math.isclose(depth_inside((3.0, 3.0), square), -math.sqrt(2), rel_tol=1e-15)
    assert depth_inside((1.0, -0.5), square[:2]) == -0.5  # a segment has no inside


def _box_of(rng: np.random.Generator) -> tuple:
    hpr = rng.uniform(-180, 180, 3) * rng.integers(0, 2, 3)
    return rng.normal(size=3), rotation_hpr(hpr), rng.uniform(0.05, 1.0, 3)


def test_boxes_whose_bounds_do_not_overlap_do_not_interpenetrate():
    rng = np.random.default_rng(1)
    boxes = [_box_of(rng) for _ in range(40)]
    overlap = bounds_overlap(boxes)
    assert overlap.shape == (40, 40) and (overlap == overlap.T).all()
    apart = [(i, j) for i in range(40) for j in range(i + 1, 40) if not overlap[i, j]]
    assert apart and len(apart) < 40 * 39 // 2  # both kinds of pair occur
    for i, j in apart:
        assert penetration(boxes[i], boxes[j]) == 0.0


def _walkway_everywhere(scene: Scene, to: str) -> bool:
    """The walkway check's answer with every box measured at every grid point."""
    w, d = scene.room["width"], scene.room["depth"]
    xs, ys = np.arange(-w / 2 + 0.05, w / 2, 0.1), np.arange(-d / 2 + 0.05, d / 2, 0.1)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    points = np.stack([gx.ravel(), gy.ravel()], axis=1)
    clearance = np.minimum(
        np.minimum(points[:, 0] + w / 2, w / 2 - points[:, 0]),
        np.minimum(points[:, 1] + d / 2, d / 2 - points[:, 1]),
    )
    target = np.full(len(points), np.inf)
    for o in scene.objects.values():
        for center, rot, half in Placed.of(o).boxes():
            if (center - np.abs(rot) @ half)[2] > 1.8:
                continue
            local = (points - center[:2]) @ rot[:2, :2]
            dist = np.linalg.norm(np.maximum(np.abs(local) - half[:2], 0), axis=1)
            clearance = np.minimum(clearance, dist)
            if o["asset"] == to:
                target = np.minimum(target, dist)
    free = (clearance > PLAYER_HALF[0]).reshape(gx.shape)
    goal = ((target <= 0.6) & (clearance > PLAYER_HALF[0])).reshape(gx.shape)
    start = (int(np.argmin(np.abs(xs))), int(np.argmin(np.abs(ys + d / 2 - 0.45))))
    regions, _ = scipy.ndimage.label(free)
    return bool(free[start] and goal[regions == regions[start]].any())


def test_the_walkway_measured_near_each_box_answers_as_measured_everywhere():
    rng = np.random.default_rng(2)
    answers = []
    for k in range(60):
        objects = []
        for n in range(rng.integers(3, 12)):
            hpr = [rng.uniform(-180, 180), 0.0, 0.0]
            if rng.random() < 0.2:  # tilted, on its side, or upside down
                hpr[1:] = rng.choice([0.0, 30.0, 90.0, 180.0], 2)
            objects.append(
                {
                    "name": f"o{n}",
                    "asset": str(rng.choice(ASSETS)),
                    "pos": [rng.uniform(-2.5, 2.5), rng.uniform(-2.5, 2.5), 0.4],
                    "hpr": hpr,
                    "body": "dynamic",
                }
            )
        scene = Scene({"room": {"width": 6.0, "depth": 6.0}, "objects": objects})
        to = objects[0]["asset"]
        met, _, _ = check_walkway(scene, {"to": to})
        assert met == _walkway_everywhere(scene, to), f"layout {k}"
        answers.append(met)
    assert True in answers and False in answers
