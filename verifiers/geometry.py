"""Geometry metrics between a candidate part and a reference part.

Pure functions on meshes (``trimesh.Trimesh``) and B-Rep solids (OpenCASCADE ``TopoDS_Shape``).
Units are the parts' own (mm for CAD). Distances are divided by the *reference's* axis-aligned
bounding-box diagonal unless said otherwise, so they are comparable across part sizes. That
normaliser is unchanged by translations and quarter-turn rotations; raw distances are unchanged by
any rigid motion. Surface samples are
area-uniform and seeded, so every metric is deterministic.
"""

from __future__ import annotations

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from toolgym.verifiers.features import SurfaceDistance, Topology
from toolgym.verifiers.occupancy import DEFAULT_RESOLUTION, column_iou, winding_anomaly

DEFAULT_POINTS = 8192
DEFAULT_FSCORE_THRESHOLD = 0.01  # of the reference's bounding-box diagonal
SELF_INTERSECTION_TOLERANCE = 0.005  # share of the volume with a winding number not 0 or 1


# -- meshes --------------------------------------------------------------------------------------


def mesh_from_arrays(vertices: np.ndarray, faces: np.ndarray) -> trimesh.Trimesh:
    """A mesh with coincident vertices merged and zero-area triangles dropped: CAD tessellations
    duplicate vertices along edges and leave slivers at a sphere's poles, which would otherwise
    read as holes."""
    mesh = trimesh.Trimesh(
        vertices=np.asarray(vertices, dtype=np.float64).reshape(-1, 3),
        faces=np.asarray(faces, dtype=np.int64).reshape(-1, 3),
        process=True,
        validate=False,
    )
    if len(mesh.faces) and np.isfinite(mesh.vertices).all():
        mesh.update_faces(mesh.nondegenerate_faces())
        mesh.remove_unreferenced_vertices()
    return mesh


def normalized(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A copy centred on its bounding box and scaled so that its largest side is 1."""
    out = mesh.copy()
    if len(out.vertices):
        out.apply_translation(-out.bounds.mean(axis=0))
        out.apply_scale(1.0 / max(float(out.extents.max()), 1e-12))
    return out


def diagonal(mesh: trimesh.Trimesh) -> float:
    """Length of the axis-aligned bounding-box diagonal (0 for an empty mesh)."""
    return float(np.linalg.norm(mesh.extents)) if len(mesh.vertices) else 0.0


# -- validity ------------------------------------------------------------------------------------


def validity(
    mesh: trimesh.Trimesh,
    resolution: int = DEFAULT_RESOLUTION,
    anomalous_volume: float | None = None,
    topology: Topology | None = None,
) -> dict[str, object]:
    """Is ``mesh`` a sound solid? Each check is reported, and ``valid`` combines them.

    Keys: ``empty``, ``finite`` (no NaN or inf), ``degenerate_faces`` (count of zero-area
    triangles), ``watertight`` (every edge shared by exactly two faces), ``winding_consistent``,
    ``bodies`` (outward shells), ``cavities`` (inward shells: internal voids), ``volume``
    (signed, units³), ``self_intersecting`` (more than 0.5 % of the volume has a winding number
    other than 0 or 1: overlapping or inside-out shells; see ``occupancy.winding_anomaly``), and
    ``defects`` (what makes the part's B-Rep not a sound set of solids, ``""`` if nothing: an
    inside-out solid, faces outside any solid; see ``features.Topology``), and ``valid``:
    non-empty, finite, watertight, consistently wound, positive volume, not self-intersecting
    and no defect. ``anomalous_volume`` and ``topology`` may be passed when already known.
    """
    vertices = np.asarray(mesh.vertices)
    empty = len(mesh.faces) == 0
    finite = bool(np.isfinite(vertices).all())
    report: dict[str, object] = {"empty": empty, "finite": finite}
    if empty or not finite:
        report.update(
            degenerate_faces=0,
            watertight=False,
            winding_consistent=False,
            bodies=0,
            cavities=0,
            volume=0.0,
            self_intersecting=False,
            defects="",
            valid=False,
        )
        return report
    watertight = bool(mesh.is_watertight)
    volume = float(mesh.volume) if watertight else 0.0
    if anomalous_volume is None:
        anomalous_volume = winding_anomaly(mesh, resolution) if watertight else 0.0
    limit = SELF_INTERSECTION_TOLERANCE * max(abs(volume), 1e-12)
    self_intersecting = watertight and anomalous_volume > limit
    topology = topology or Topology.of(mesh)
    report.update(
        degenerate_faces=int((mesh.area_faces <= 1e-14).sum()),
        watertight=watertight,
        winding_consistent=bool(mesh.is_winding_consistent),
        bodies=topology.bodies,
        cavities=topology.cavities,
        volume=volume,
        self_intersecting=bool(self_intersecting),
        defects="; ".join(topology.defects),
    )
    report["valid"] = bool(
        watertight
        and report["winding_consistent"]
        and volume > 0
        and not self_intersecting
        and not topology.defects
    )
    return report


# -- volumetric IoU ------------------------------------------------------------------------------


def as_manifold(mesh: trimesh.Trimesh) -> object:
    """The mesh as a ``manifold3d.Manifold`` (exact booleans); raises ``ValueError`` when it is
    not a closed, consistently wound surface."""
    import manifold3d

    solid = manifold3d.Manifold(
        manifold3d.Mesh64(
            vert_properties=np.ascontiguousarray(mesh.vertices, dtype=np.float64),
            tri_verts=np.ascontiguousarray(mesh.faces, dtype=np.uint64),
        )
    )
    if solid.status() != manifold3d.Error.NoError:
        raise ValueError(f"not a closed manifold mesh ({solid.status().name})")
    return solid


def iou_mesh(candidate: trimesh.Trimesh, reference: trimesh.Trimesh) -> float:
    """Exact volumetric IoU of two closed meshes by mesh booleans (manifold3d).

    Raises ``ValueError`` if either mesh is not a closed manifold.
    """
    a, b = as_manifold(candidate), as_manifold(reference)
    inter = (a ^ b).volume()
    union = a.volume() + b.volume() - inter
    return float(np.clip(inter / union, 0.0, 1.0)) if union > 0 else 0.0


def iou_fast(
    candidate: trimesh.Trimesh, reference: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION
) -> float:
    """Approximate volumetric IoU by ray-cast occupancy (see :mod:`toolgym.verifiers.occupancy`)."""
    return column_iou(candidate, reference, resolution)


# -- surface distances ---------------------------------------------------------------------------


def sample_surface(
    mesh: trimesh.Trimesh, count: int = DEFAULT_POINTS, seed: int | np.random.SeedSequence = 0
) -> np.ndarray:
    """``count`` points uniformly distributed over the surface area, reproducibly for a seed."""
    rng = np.random.default_rng(seed)
    tri = np.asarray(mesh.triangles, dtype=np.float64)
    areas = np.asarray(mesh.area_faces, dtype=np.float64)
    if not len(tri) or areas.sum() <= 0:
        return np.zeros((0, 3))
    face = np.searchsorted(np.cumsum(areas), rng.random(count) * areas.sum())
    face = np.minimum(face, len(tri) - 1)
    r1, r2 = np.sqrt(rng.random(count)), rng.random(count)
    a, b, c = tri[face, 0], tri[face, 1], tri[face, 2]
    return (1 - r1)[:, None] * a + (r1 * (1 - r2))[:, None] * b + (r1 * r2)[:, None] * c


def nearest_distances(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh,
    count: int = DEFAULT_POINTS,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Distances from each candidate sample to the reference samples, and the other way round.

    Both surfaces are sampled with the same seed, so identical meshes give identical samples and
    distances of exactly 0.
    """
    return distances(sample_surface(candidate, count, seed), sample_surface(reference, count, seed))


def _tree(points: np.ndarray) -> cKDTree:
    # Unbalanced, uncompacted trees build about twice as fast and query as fast on surface samples.
    return cKDTree(points, balanced_tree=False, compact_nodes=False)


def distances(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(p) or not len(q):
        size = max(len(p), len(q), 1)
        return np.full(size, np.inf), np.full(size, np.inf)
    return _tree(q).query(p)[0], _tree(p).query(q)[0]


def _chamfer_fscore_hausdorff(
    to_ref: np.ndarray, to_cand: np.ndarray, scale: float, threshold: float
) -> tuple[float, float, float]:
    precision = float((to_ref <= threshold * scale).mean())
    recall = float((to_cand <= threshold * scale).mean())
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return (
        float((to_ref.mean() + to_cand.mean()) / 2 / scale),
        f,
        float(max(to_ref.max(), to_cand.max()) / scale),
    )


class SampledSurface:
    """Area-uniform samples on a mesh with their KD-tree, and exact distances to the mesh."""

    def __init__(self, mesh: trimesh.Trimesh, count: int, seed: int) -> None:
        self.points = sample_surface(mesh, count, seed)
        self.tree = _tree(self.points) if len(self.points) else None
        self.distances_from = SurfaceDistance(mesh)


class ReferenceSurface:
    """A reference's surface samples, KD-tree and sampling-noise level, computed once and reused
    for every candidate compared with it (the environment compares many per episode)."""

    def __init__(self, reference: trimesh.Trimesh, count: int, seed: int, threshold: float) -> None:
        self.scale = diagonal(reference) or 1.0
        self.threshold = threshold
        self.sampled = SampledSurface(reference, count, seed)
        self.points, self.tree = self.sampled.points, self.sampled.tree
        other = sample_surface(reference, count, seed + 1)
        self.floor, self.ceiling, _ = _chamfer_fscore_hausdorff(
            *distances(other, self.points), self.scale, threshold
        )

    def metrics(
        self, candidate: trimesh.Trimesh, count: int, seed: int, exact_count: int | None = None
    ) -> dict[str, float]:
        """Surface metrics of ``candidate`` against this reference (see :func:`surface_metrics`).

        Exact distances are measured for the first ``exact_count`` samples of each side (all by
        default): samples are independent, so any prefix is itself a uniform sample.
        """
        exact = slice(exact_count)
        sampled = SampledSurface(candidate, count, seed)
        if self.tree is None or sampled.tree is None:
            inf = np.full(1, np.inf)
            to_ref = to_cand = exact_to_ref = exact_to_cand = inf
        else:
            to_ref = self.tree.query(sampled.points)[0]
            to_cand = sampled.tree.query(self.points)[0]
            exact_to_ref = self.sampled.distances_from(sampled.points[exact])
            exact_to_cand = sampled.distances_from(self.points[exact])
        chamfer_value, f, haus = _chamfer_fscore_hausdorff(
            to_ref, to_cand, self.scale, self.threshold
        )
        tau = self.threshold * self.scale
        soft_precision = float((1 / (1 + (exact_to_ref / tau) ** 2)).mean())
        soft_recall = float((1 / (1 + (exact_to_cand / tau) ** 2)).mean())
        soft_sum = soft_precision + soft_recall
        return {
            "chamfer": chamfer_value,
            "fscore": f,
            "hausdorff": haus,
            "chamfer_floor": self.floor,
            "fscore_ceiling": self.ceiling,
            "surface_distance": float(
                (exact_to_ref.mean() + exact_to_cand.mean()) / 2 / self.scale
            ),
            "soft_fscore": 2 * soft_precision * soft_recall / soft_sum if soft_sum else 0.0,
            "deviation": float(max(exact_to_ref.max(), exact_to_cand.max())),
        }


def surface_metrics(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh | ReferenceSurface,
    count: int = DEFAULT_POINTS,
    seed: int = 0,
    threshold: float = DEFAULT_FSCORE_THRESHOLD,
    exact_count: int | None = None,
) -> dict[str, float]:
    """Surface metrics of a candidate against a reference.

    From nearest samples (see the functions of those names): ``chamfer``, ``fscore``,
    ``hausdorff``, and the same between two independent samplings of the reference itself,
    ``chamfer_floor`` and ``fscore_ceiling``: what sampling noise alone gives at this point count.

    From each sample's distance to the other *surface* (its nearest triangles, so sampling noise
    drops out): ``surface_distance``, the mean of both directions over the reference's diagonal;
    ``soft_fscore``, the F-score with each point counted by 1 / (1 + (d/τ)²), not by d ≤ τ, which
    falls smoothly where the F-score falls off a cliff (τ = ``threshold`` × the diagonal); and
    ``deviation``, the largest distance either way, in the parts' units (mm). These use the
    first ``exact_count`` samples of each side (default: all ``count``).

    Pass a :class:`ReferenceSurface` to reuse the reference's samples.
    """
    if not isinstance(reference, ReferenceSurface):
        reference = ReferenceSurface(reference, count, seed, threshold)
    return reference.metrics(candidate, count, seed, exact_count)


def _plain_metrics(
    candidate: trimesh.Trimesh, reference: trimesh.Trimesh, count: int, seed: int, threshold: float
) -> tuple[float, float, float]:
    to_ref, to_cand = nearest_distances(candidate, reference, count, seed)
    return _chamfer_fscore_hausdorff(to_ref, to_cand, diagonal(reference) or 1.0, threshold)


def chamfer(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh,
    count: int = DEFAULT_POINTS,
    seed: int = 0,
) -> float:
    """Symmetric Chamfer distance, normalised.

    Definition: sample ``count`` points area-uniformly on each surface; take the mean Euclidean
    (L2, not squared) distance from each candidate point to its nearest reference point, and the
    same from reference to candidate; average the two means; divide by the reference's bounding-box
    diagonal. 0 for identical surfaces, ``inf`` if either surface is empty.
    """
    return _plain_metrics(candidate, reference, count, seed, DEFAULT_FSCORE_THRESHOLD)[0]


def fscore(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh,
    threshold: float = DEFAULT_FSCORE_THRESHOLD,
    count: int = DEFAULT_POINTS,
    seed: int = 0,
) -> float:
    """F-score at ``threshold`` (a fraction of the reference's bounding-box diagonal).

    Precision: share of candidate samples within the threshold of the reference; recall: share of
    reference samples within it of the candidate; F = 2PR / (P + R).
    """
    return _plain_metrics(candidate, reference, count, seed, threshold)[1]


def hausdorff(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh,
    count: int = DEFAULT_POINTS,
    seed: int = 0,
) -> float:
    """Symmetric Hausdorff distance between the surface samples, over the reference's diagonal."""
    return _plain_metrics(candidate, reference, count, seed, DEFAULT_FSCORE_THRESHOLD)[2]


# -- global measures ------------------------------------------------------------------------------


def relative_error(value: float, reference: float) -> float:
    """|value − reference| / |reference| (``inf`` when the reference is 0 and the value is not)."""
    if reference == 0:
        return 0.0 if value == 0 else float("inf")
    return abs(value - reference) / abs(reference)


def bbox_error(candidate: trimesh.Trimesh, reference: trimesh.Trimesh) -> float:
    """Largest difference between matching bounding-box corners, over the reference's diagonal."""
    if not len(candidate.vertices):
        return float("inf")
    return float(np.abs(candidate.bounds - reference.bounds).max() / (diagonal(reference) or 1.0))
