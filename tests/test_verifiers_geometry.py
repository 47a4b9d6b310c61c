"""Geometry verifiers against ground truth: analytic values, invariances, adversarial parts."""

from __future__ import annotations

import math

import cadquery as cq
import numpy as np
import pytest
import trimesh

from toolgym.envs.cadquery import measure
from toolgym.envs.cadquery.artifacts import part_from_shape
from toolgym.verifiers import geometry
from toolgym.verifiers.cad import composite_score, verify_part
from toolgym.verifiers.occupancy import (
    Columns,
    column_iou,
    column_volume,
    crossings,
    inside_lengths,
)
from toolgym.verifiers.parts import Part
from toolgym.verifiers.published import published_sample, published_summary


def box(x=1.0, y=1.0, z=1.0, at=(0.0, 0.0, 0.0)) -> Part:
    return part_from_shape(cq.Workplane().box(x, y, z).translate(at).val())


def brep_iou(a: cq.Workplane, b: cq.Workplane) -> float:
    """IoU by OpenCASCADE booleans, in this process (trusted shapes only)."""
    common = measure.common_volume(a.val().wrapped, b.val().wrapped)
    return common / (a.val().Volume() + b.val().Volume() - common)


@pytest.mark.parametrize("d", [0.0, 0.1, 0.25, 0.5, 0.9])
def test_offset_unit_cubes_have_iou_one_minus_d_over_one_plus_d(d):
    a, b = box(), box(at=(d, 0, 0))
    expected = (1 - d) / (1 + d)
    cubes = cq.Workplane().box(1, 1, 1), cq.Workplane().box(1, 1, 1).translate((d, 0, 0))
    assert brep_iou(*cubes) == pytest.approx(expected, abs=1e-9)
    assert geometry.iou_mesh(a.mesh, b.mesh) == pytest.approx(expected, abs=1e-9)
    assert geometry.iou_fast(a.mesh, b.mesh) == pytest.approx(expected, abs=0.01)
    assert verify_part(b, a).metrics["iou"] == pytest.approx(expected, abs=1e-9)


def test_sphere_volume_matches_the_formula_within_tessellation_tolerance():
    sphere = part_from_shape(cq.Workplane().sphere(10).val())
    exact = 4 / 3 * math.pi * 10**3
    assert measure.volume(cq.Workplane().sphere(10).val().wrapped) == pytest.approx(exact, rel=1e-9)
    # An inscribed mesh whose chords stray at most δ holds at least (1 − δ/r)³ of the volume.
    chord = 1e-3 * sphere.diagonal
    assert exact * (1 - chord / 10) ** 3 <= sphere.mesh.volume <= exact
    assert column_volume(sphere.mesh) == pytest.approx(sphere.mesh.volume, rel=2e-3)
    assert geometry.validity(sphere.mesh)["valid"]


def test_identical_shapes_give_chamfer_zero_and_iou_one():
    shape = cq.Workplane().box(30, 20, 5).faces(">Z").workplane().hole(6)
    part = part_from_shape(shape.val())
    assert geometry.chamfer(part.mesh, part.mesh) == 0.0
    assert geometry.hausdorff(part.mesh, part.mesh) == 0.0
    assert geometry.fscore(part.mesh, part.mesh) == 1.0
    assert brep_iou(shape, shape) == pytest.approx(1.0, abs=1e-12)
    assert geometry.iou_mesh(part.mesh, part.mesh) == pytest.approx(1.0, abs=1e-12)
    report = verify_part(part, part)
    assert report.score == pytest.approx(1.0) and report.passed


def test_chamfer_of_offset_planes_is_the_offset():
    """Two large parallel squares 0.5 apart: every nearest neighbour is ~0.5 away."""
    a = trimesh.Trimesh([[0, 0, 0], [10, 0, 0], [10, 10, 0], [0, 10, 0]], [[0, 1, 2], [0, 2, 3]])
    b = a.copy()
    b.apply_translation((0, 0, 0.5))
    raw = geometry.chamfer(b, a, count=4096) * geometry.diagonal(a)
    assert raw == pytest.approx(0.5, rel=0.05)


def rigid(mesh: trimesh.Trimesh, angle: float, axis, shift) -> trimesh.Trimesh:
    out = mesh.copy()
    out.apply_transform(trimesh.transformations.rotation_matrix(angle, axis))
    out.apply_translation(shift)
    return out


def test_rigid_motion_of_both_shapes_leaves_metrics_unchanged():
    a = part_from_shape(cq.Workplane().box(20, 10, 8).edges("|Z").fillet(2).val()).mesh
    b = part_from_shape(cq.Workplane().cylinder(8, 6).translate((3, 1, 0)).val()).mesh
    # Any rigid motion: volumes, IoU and raw distances are unchanged.
    moved = [rigid(m, 0.7, (1, 2, 3), (40, -7, 3)) for m in (a, b)]
    assert geometry.iou_mesh(*moved) == pytest.approx(geometry.iou_mesh(a, b), abs=1e-9)
    assert geometry.iou_fast(*moved) == pytest.approx(geometry.iou_mesh(a, b), abs=0.01)
    raw = [np.sort(np.concatenate(geometry.nearest_distances(*pair))) for pair in ((a, b), moved)]
    assert np.allclose(raw[0], raw[1], atol=1e-9)  # same samples, moved with the shapes
    # Motions that keep the axis-aligned box's diagonal (the normaliser): normalised metrics too.
    turned = [
        rigid(rigid(m, np.pi / 2, (0, 0, 1), (0, 0, 0)), np.pi / 2, (1, 0, 0), (-5, 9, 2))
        for m in (a, b)
    ]
    for metric in (geometry.chamfer, geometry.hausdorff, geometry.fscore):
        assert metric(*turned) == pytest.approx(metric(a, b), rel=1e-9)


def test_uniform_scale_is_invisible_in_normalized_mode():
    a = box(20, 10, 8, at=(5, 0, 0))
    b = part_from_shape(cq.Workplane().box(20, 10, 8).edges("|Z").fillet(3).val())
    scaled = Part(b.mesh.copy())
    scaled.mesh.apply_scale(7.5)
    plain = verify_part(b, a, alignment="normalized")
    bigger = verify_part(scaled, a, alignment="normalized")
    for name in ("iou", "chamfer", "fscore", "hausdorff"):
        assert bigger.metrics[name] == pytest.approx(plain.metrics[name], rel=1e-6, abs=1e-9)
    assert verify_part(scaled, a).metrics["iou"] < 0.2  # placement and size count by default


# -- adversarial candidates ----------------------------------------------------------------------

TARGET = part_from_shape(cq.Workplane().box(40, 30, 10).faces(">Z").workplane().hole(8).val())


def test_huge_enclosing_box_scores_low():
    report = verify_part(box(400, 300, 100), TARGET)
    assert report.metrics["iou"] < 0.002 and report.score < 0.05 and not report.passed


def test_empty_result_scores_zero_without_error():
    for empty in (None, Part(trimesh.Trimesh())):
        report = verify_part(empty, TARGET)
        assert report.score == 0.0 and not report.passed and report.errors == []


def test_shell_with_the_right_surface_but_no_volume_scores_zero():
    # The target's own surface, open (one face removed): a perfect silhouette, no solid.
    faces = TARGET.mesh.faces[TARGET.mesh.face_normals[:, 2] < 0.99]
    open_shell = Part(trimesh.Trimesh(TARGET.mesh.vertices, faces, process=False))
    report = verify_part(open_shell, TARGET)
    assert not report.validity["watertight"] and report.score == 0.0
    # A closed sheet of zero thickness: watertight, but no volume.
    sheet = trimesh.Trimesh(
        [[0, 0, 0], [40, 0, 0], [40, 30, 0], [0, 30, 0]],
        [[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]],
    )
    assert verify_part(Part(sheet), TARGET).score == 0.0


def test_many_tiny_disjoint_pieces_score_low():
    pieces = []
    for x in np.arange(-18, 20, 4.0):
        for y in np.arange(-13, 15, 4.0):
            cube = trimesh.creation.box((3.5, 3.5, 10))
            cube.apply_translation((x, y, 0))
            pieces.append(cube)
    candidate = Part(trimesh.util.concatenate(pieces))
    report = verify_part(candidate, TARGET)
    assert report.metrics["bodies"] == len(pieces)
    assert report.score < 0.05


def test_nan_vertices_are_invalid_and_score_zero():
    mesh = TARGET.mesh.copy()
    vertices = mesh.vertices.copy()
    vertices[0] = np.nan
    broken = Part(trimesh.Trimesh(vertices, mesh.faces, process=False))
    report = verify_part(broken, TARGET)
    assert not report.validity["finite"] and report.score == 0.0 and report.errors == []


def test_overlapping_unmerged_bodies_are_flagged_self_intersecting():
    a, b = trimesh.creation.box((2, 2, 2)), trimesh.creation.box((2, 2, 2))
    b.apply_translation((1, 0, 0))
    overlapping = trimesh.util.concatenate([a, b])
    report = geometry.validity(overlapping)
    assert report["watertight"] and report["self_intersecting"] and not report["valid"]


def test_verifier_failure_is_an_error_not_a_zero():
    broken_reference = Part(TARGET.mesh, features=np.zeros(5))  # not an inventory of 7 columns
    report = verify_part(TARGET, broken_reference)
    assert report.score is None and report.errors and not report.passed


# -- the approximate path ------------------------------------------------------------------------


def test_approximate_iou_agrees_with_exact_on_random_pairs():
    rng = np.random.default_rng(7)
    for _ in range(12):
        size = rng.uniform(5, 40, 3)
        first = cq.Workplane().box(*size)
        other = cq.Workplane().box(*(size * rng.uniform(0.6, 1.3, 3))).edges("|Z").fillet(1)
        other = other.translate(tuple(rng.uniform(-4, 4, 3)))
        a, b = part_from_shape(first.val()), part_from_shape(other.val())
        exact = brep_iou(first, other)
        assert geometry.iou_mesh(a.mesh, b.mesh) == pytest.approx(exact, abs=2e-3)
        assert geometry.iou_fast(a.mesh, b.mesh) == pytest.approx(exact, abs=0.01)


def test_approximate_iou_fills_solids_not_shells():
    """The published trap: a voxel 'IoU' of surfaces only. Nested boxes, walls 2.5 % apart."""
    outer, inner = box(40, 40, 40), box(38, 38, 38)
    exact = 38**3 / 40**3
    assert geometry.iou_mesh(outer.mesh, inner.mesh) == pytest.approx(exact)
    assert column_iou(outer.mesh, inner.mesh) == pytest.approx(exact, abs=0.01)
    shell_only = _surface_voxel_iou(outer.mesh, inner.mesh, pitch=1.0)
    assert shell_only < 0.2  # what an unfilled voxelisation reports: nearly disjoint shells


def _surface_voxel_iou(a: trimesh.Trimesh, b: trimesh.Trimesh, pitch: float) -> float:
    cells = [
        set(map(tuple, np.floor(geometry.sample_surface(m, 200_000) / pitch).astype(int)))
        for m in (a, b)
    ]
    return len(cells[0] & cells[1]) / len(cells[0] | cells[1])


# -- score and published convention --------------------------------------------------------------


def test_inside_lengths_count_each_column_as_a_ray_walked_crossing_by_crossing():
    # The vectorised parity and winding numbers against a plain walk up every ray, on meshes in
    # general position (no two crossings at one height): overlapping shells (winding 2), an
    # inside-out one (-1) and an open box (an odd count on some rays: each ray starts from 0),
    # at a coarse grid so the walk stays quick.
    rng = np.random.default_rng(3)
    box, ball = trimesh.creation.box((4, 3, 2)), trimesh.creation.icosphere(2, 1.5)
    lidless = trimesh.Trimesh(box.vertices, box.faces[:-2], process=False)
    for _ in range(6):
        a = trimesh.util.concatenate([box.copy(), ball.copy(), lidless.copy()])
        b = ball.copy()
        b.invert()  # inside-out
        for mesh in (a, b):
            mesh.apply_transform(trimesh.transformations.random_rotation_matrix(rng.random(3)))
            mesh.apply_translation(rng.normal(0, 1, 3))
        columns = Columns.covering([a, b], 24)
        lengths, inside, winding = inside_lengths([a, b], columns)
        rays: dict[int, list[tuple[float, int, int]]] = {}
        for owner, mesh in enumerate((a, b)):
            for cell, z, turn in zip(*crossings(mesh, columns), strict=True):
                rays.setdefault(int(cell), []).append((float(z), owner, int(turn)))
        walked = []
        for cell in sorted(rays):
            ray = sorted(rays[cell])
            counts, turned = [0, 0], [0, 0]
            for k, (z, owner, turn) in enumerate(ray):
                counts[owner] += 1
                turned[owner] += turn
                gap = ray[k + 1][0] - z if k + 1 < len(ray) else 0.0
                walked.append((gap, counts[0] % 2, counts[1] % 2, turned[0], turned[1]))
        walked = np.array(walked[:-1])  # the last crossing of the last ray starts no segment
        assert lengths.shape == (len(walked),) and inside.shape == winding.shape == (len(walked), 2)
        assert np.array_equal(lengths, walked[:, 0])
        assert np.array_equal(inside, walked[:, 1:3].astype(bool))
        assert np.array_equal(winding, walked[:, 3:5].astype(np.int64))
        assert {2, -1} <= set(np.unique(winding).tolist())


def test_composite_score_is_bounded_and_monotone_in_iou():
    base = {"surface_distance": 0.0, "soft_fscore": 1.0, "bodies": 1.0, "reference_bodies": 1.0}
    scores = [composite_score({**base, "iou": iou}, True) for iou in (0.0, 0.3, 0.6, 0.9, 1.0)]
    assert scores[0] == 0.0 and scores[-1] == 1.0 and scores == sorted(scores)
    assert composite_score({**base, "iou": 1.0}, False) == 0.0
    with pytest.raises(ValueError, match="unknown score weights"):
        composite_score({**base, "iou": 1.0}, True, {"volume": 1.0})


def test_published_convention_on_known_pairs():
    cube = trimesh.creation.box((2, 2, 2))
    same = published_sample(cube, cube)
    assert 0 < same.chamfer_x1e3 < 0.5 and same.iou == pytest.approx(1.0)  # the noise floor
    # Scale and placement do not matter after normalisation.
    moved = cube.copy()
    moved.apply_scale(3)
    moved.apply_translation((5, 5, 5))
    assert published_sample(moved, cube).iou == pytest.approx(1.0)
    half = trimesh.creation.box((2, 2, 1))  # normalised: a 1 × 1 × 0.5 slab inside the unit cube
    assert published_sample(half, cube).iou == pytest.approx(0.5, abs=1e-9)
    summary = published_summary([same, published_sample(half, cube), published_sample(None, cube)])
    assert summary["invalidity_ratio"] == pytest.approx(1 / 3)
    assert summary["iou_median"] == pytest.approx(0.75) and summary["iou_mean"] == pytest.approx(
        0.75
    )


def test_report_roundtrips_through_json_with_infinities():
    import json

    from toolgym.verifiers.report import VerifierReport

    report = verify_part(None, TARGET)
    data = json.loads(report.to_json())
    assert data["metrics"]["chamfer"] == "inf" and data["score"] == 0.0
    again = VerifierReport.from_dict(data)
    assert again == report and math.isinf(again.metrics["chamfer"])


def _pairwise_match(candidate, reference):
    """The feature match by its definition, every pair computed by ``FaceGroup.errors``."""
    from toolgym.verifiers.features import SIGNIFICANT_AREA

    floor = SIGNIFICANT_AREA * sum(g.area for g in reference)
    reference = [g for g in reference if g.area >= floor]
    candidate = [g for g in candidate if g.area >= floor]
    pairs = [[g.errors(c) if c.kind == g.kind else None for c in candidate] for g in reference]
    qualities, missing, extra = [], [], []
    for group, row in zip(reference, pairs, strict=True):
        found = [e for e in row if e is not None]
        qualities.append(max((1 / (1 + s**2 + a**2) for s, a in found), default=0.0))
        if not any(s <= 1 and a <= 1 for s, a in found):
            missing.append(group.describe())
    for j, group in enumerate(candidate):
        sizes = [row[j][0] for row in pairs if row[j] is not None]
        qualities.append(max((1 / (1 + s**2) for s in sizes), default=0.0))
        if not any(s <= 1 for s in sizes):
            extra.append(group.describe())
    return tuple(qualities), tuple(missing), tuple(extra)


def test_feature_match_in_bulk_equals_the_pairwise_definition():
    """The bulk estimate only picks which pairs to compute exactly: qualities, missing and
    extra groups are the pairwise computation's, bit for bit, ties and near-passes included."""
    from toolgym.verifiers.features import FaceGroup, match_features

    rng = np.random.default_rng(7)
    kinds = ("plane", "cylinder", "cone", "sphere", "torus", "freeform")

    def group() -> FaceGroup:
        kind = kinds[rng.integers(len(kinds))]
        if kind == "plane":
            normal = rng.normal(size=3) if rng.random() < 0.6 else np.eye(3)[rng.integers(3)]
            sizes = tuple(float(v) for v in normal / np.linalg.norm(normal))
        elif kind == "cone":
            sizes = (float(rng.choice([0.3, 0.30001, rng.uniform(0, 1.5)])),)
        elif kind == "freeform":
            sizes = (0.0,)
        else:
            sizes = (float(rng.choice([2.0, 5.0, 5.01, 5.3])), float(rng.choice([0.0, 1.0])))
        return FaceGroup(kind, sizes, float(rng.choice([10.0, 100.0, 109.9, 110.1, 1e-4])))

    for _ in range(200):
        reference = [group() for _ in range(rng.integers(0, 25))]
        candidate = [group() for _ in range(rng.integers(0, 25))]
        if reference and candidate:  # a group just inside and one just outside a tolerance
            base = reference[0]
            candidate[0] = FaceGroup(base.kind, base.sizes, base.area * 1.0999)
            candidate[-1] = FaceGroup(base.kind, base.sizes, base.area * 1.1001)
        found = match_features(candidate, reference)
        assert (found.qualities, found.missing, found.extra) == _pairwise_match(
            candidate, reference
        )


def test_a_count_that_cannot_be_made_stacks_in_a_vector_envs_info():
    """An open shell's genus cannot be counted: its check says so and holds -1, a number, so
    that Gymnasium's vector envs stack it beside another env's count (an int, then None,
    raised there and hung the evaluation that closed the vector env)."""
    from gymnasium.vector import SyncVectorEnv

    faces = TARGET.mesh.faces[TARGET.mesh.face_normals[:, 2] < 0.99]
    open_shell = Part(trimesh.Trimesh(TARGET.mesh.vertices, faces, process=False))
    counted, uncounted = verify_part(TARGET, TARGET), verify_part(open_shell, TARGET)
    genus = uncounted.checks["genus"]
    assert genus["candidate"] == -1 and "could not be counted" in genus["message"]
    assert not genus["ok"] and counted.checks["genus"]["candidate"] >= 0
    stack = SyncVectorEnv.__new__(SyncVectorEnv)
    stack.num_envs = 2
    infos: dict = {}
    for k, report in enumerate((counted, uncounted)):
        infos = stack._add_info(infos, {"report": report.to_dict()}, k)
    assert infos["report"]["checks"]["genus"]["candidate"].tolist() == [
        counted.checks["genus"]["candidate"], -1,
    ]  # fmt: skip
