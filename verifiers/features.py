"""Feature checks: what a designer looks at that volume overlap misses.

IoU barely moves when a 5 mm hole is left out of a 60 mm plate, so three signals that the mesh and
the B-Rep give directly decide whether the part's features are there:

- **Topology**, per shell: outward shells are bodies, inward ones cavities (internal voids),
  and the genus counts through-holes. Shells are found by connected faces, never by shared
  vertices: faces joined through an edge that exactly two of them share, so two bodies that
  touch at a corner or along an edge are two shells. Counted on the B-Rep when the part has one
  (``toolgym.envs.cadquery.measure.topology``, in the session that measured it: Euler–Poincaré
  V − E + F − (L − F) = 2 − 2g per closed shell, L its loops), else on the mesh
  (χ = V − E + F = 2 − 2g). A count that cannot be made (an open shell, an odd
  characteristic) is ``None`` with the reason, and fails; a B-Rep that is not a sound set of
  solids (an inside-out solid, faces outside any solid) is a defect, which makes the part
  invalid.
- **Face inventory** of the B-Rep: the total area of each kind of surface at each size (planes by
  outward normal, cylinders and spheres by radius, tori by both radii, cones by half-angle). A
  missing fillet, chamfer, hole or boss removes a group; a wrong radius moves one. Totals, not
  face counts, so two models of one part agree however their faces are split.
- **Surface deviation** in the part's units (mm): the largest distance from a sample on either
  surface to the other surface, measured exactly to the nearest triangle (not to the nearest
  sample, which would add the sampling spacing: over 1 mm on a 60 mm plate).

Tolerances follow the rule "visibly off means ≥ 1 mm or ≥ 10 % of the feature's size": a feature
passes while its error is below half that bound (:data:`MARGIN`), so that a part visibly off
fails with room to spare and two exact models of the same part pass with room to spare.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import trimesh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

SURFACE_KINDS = ("plane", "cylinder", "cone", "sphere", "torus", "freeform")
VISIBLE_MM = 1.0  # an error this large (mm) is visible on any part
VISIBLE_FRACTION = 0.10  # ... and so is one of 10 % of the feature's size
MARGIN = 0.5  # a feature passes below MARGIN × the visible bound
NORMAL_TOLERANCE = math.radians(0.5)  # planes whose normals differ more are different planes
AREA_TOLERANCE = 0.10  # relative area difference of a face group at which it fails
SIGNIFICANT_AREA = 1e-4  # groups under this share of the reference's area are not compared
FEATURE_FLOOR = 0.8  # score factor of a missing or extra feature group
TOPOLOGY_FACTOR = 0.8  # score factor per through-hole or cavity too many or too few
INSIDE_OUT_MM3 = 1e-9  # a B-Rep solid enclosing less than minus this (mm³) is inside out


def visible_tolerance(size: float) -> float:
    """The largest error that still passes on a feature of ``size`` (mm)."""
    return MARGIN * min(VISIBLE_MM, VISIBLE_FRACTION * abs(size))


def deviation_tolerance(extents: np.ndarray) -> float:
    """Surface-deviation tolerance of a part: half the :func:`visible_tolerance` of its thinnest
    extent, since a dimension off by e can move each of its two faces by only e / 2."""
    return visible_tolerance(float(np.min(extents))) / 2


# -- topology ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Topology:
    """Bodies (outward shells), cavities (inward shells) and total genus (through-holes) of a
    part.

    ``genus`` is ``None`` when it cannot be counted, and ``unknown`` then says why (a shell is
    open, or its Euler characteristic is odd); ``defects`` lists what makes the part's B-Rep
    not a sound set of solids (an inside-out solid, faces outside any solid).
    """

    bodies: int
    cavities: int
    genus: int | None
    unknown: str | None = None
    defects: tuple[str, ...] = ()

    @classmethod
    def of(cls, mesh: trimesh.Trimesh) -> Topology:
        """The topology of a triangle mesh, shell by shell: triangles joined through edges
        that exactly two triangles share (vertices merged where they coincide)."""
        faces = np.asarray(mesh.faces, dtype=np.int64)
        if not len(faces):
            return cls(0, 0, 0)
        edge_of = np.asarray(mesh.edges_unique_inverse, dtype=np.int64)  # 3 per face, in order
        face_of = np.repeat(np.arange(len(faces)), 3)
        uses = np.bincount(edge_of)
        shared = uses[edge_of] == 2
        pairs = face_of[shared][np.argsort(edge_of[shared], kind="stable")].reshape(-1, 2)
        graph = coo_matrix(
            (np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(faces), len(faces))
        )
        count, shell = connected_components(graph, directed=False)
        tri = np.asarray(mesh.vertices)[faces]
        signed = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6.0
        volumes = np.bincount(shell, weights=signed, minlength=count)
        f = np.bincount(shell, minlength=count)
        # Per shell, its distinct edges and vertices, and how often its triangles use each edge.
        edge_uses = np.unique(shell[face_of] * (edge_of.max() + 1) + edge_of, return_counts=True)
        edge_shell = edge_uses[0] // (edge_of.max() + 1)
        e = np.bincount(edge_shell, minlength=count)
        open_edges = np.bincount(edge_shell, weights=edge_uses[1] != 2, minlength=count)
        corner_shell = np.unique(shell[face_of] * len(mesh.vertices) + faces.reshape(-1))
        v = np.bincount(corner_shell // len(mesh.vertices), minlength=count)
        return _counted(v - e + f, open_edges, volumes)

    @classmethod
    def of_brep(cls, rows: np.ndarray) -> Topology:
        """The topology a B-Rep measured of itself: rows of
        ``toolgym.envs.cadquery.measure.TOPOLOGY_COLUMNS``, one per shell."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, 7)
        v, e, f, loops, open_edges, volumes, solid = rows.T
        topology = _counted(v - e + 2 * f - loops, open_edges, volumes)
        defects = []
        if (solid < 0).any():
            defects.append(f"{int((solid < 0).sum())} shell(s) outside any solid")
        solids = solid[solid >= 0].astype(np.int64)
        if len(solids):
            enclosed = np.bincount(solids, weights=volumes[solid >= 0])
            # A solid of no volume is degenerate, not inside out: the mesh's checks say so.
            inverted = int((enclosed[np.unique(solids)] < -INSIDE_OUT_MM3).sum())
            if inverted:
                defects.append(f"{inverted} inside-out solid(s)")
        return dataclasses.replace(topology, defects=tuple(defects))


def _counted(chi: np.ndarray, open_edges: np.ndarray, volumes: np.ndarray) -> Topology:
    """A :class:`Topology` from each shell's Euler characteristic, open edges and signed
    volume."""
    chi = np.rint(chi).astype(np.int64)
    opened, odd = int((open_edges > 0).sum()), int((chi % 2 != 0).sum())
    unknown = None
    if opened:
        unknown = f"{opened} of the {len(chi)} shells are open"
    elif odd:
        unknown = f"{odd} of the {len(chi)} shells have an odd Euler characteristic"
    genus = None if unknown else int(((2 - chi) // 2).clip(min=0).sum())
    return Topology(int((volumes > 0).sum()), int((volumes < 0).sum()), genus, unknown)


def topology_factor(candidate: Topology, reference: Topology) -> float:
    """Score factor: :data:`TOPOLOGY_FACTOR` per through-hole and cavity too many or too few.

    A genus that cannot be counted costs as much as finding no hole, and one more: not knowing
    never pays more than an honest count of none."""
    misses = abs(candidate.cavities - reference.cavities)
    if candidate.genus is None or reference.genus is None:
        misses += (reference.genus or 0) + 1
    else:
        misses += abs(candidate.genus - reference.genus)
    return TOPOLOGY_FACTOR**misses


# -- face inventory ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FaceGroup:
    """Faces of one kind and size: ``sizes`` are radii (mm), a half-angle (radians) or a plane's
    outward unit normal; ``area`` is their total area (mm²)."""

    kind: str
    sizes: tuple[float, ...]
    area: float

    def describe(self) -> str:
        if self.kind == "plane":
            n = ", ".join(f"{round(c, 2) + 0.0:+.2f}" for c in self.sizes)  # no "-0.00"
            return f"planar faces facing ({n})"
        if self.kind == "cone":
            return f"conical faces of half-angle {math.degrees(self.sizes[0]):.1f}°"
        if self.kind == "torus":
            return f"toroidal faces of radii {self.sizes[0]:.3g} and {self.sizes[1]:.3g}"
        if self.kind == "freeform":
            return "free-form faces"
        return f"{self.kind}s of radius {self.sizes[0]:.3g}"

    def errors(self, other: FaceGroup) -> tuple[float, float]:
        """(size error, area error) of ``other`` against this group, each in units of its
        tolerance: ≤ 1 passes."""
        if self.kind == "plane":
            cosine = float(np.clip(np.dot(self.sizes, other.sizes), -1.0, 1.0))
            size_error = math.acos(cosine) / NORMAL_TOLERANCE
        elif self.kind == "cone":
            size_error = abs(self.sizes[0] - other.sizes[0]) / visible_tolerance(self.sizes[0])
        elif self.kind == "freeform":
            size_error = 0.0
        else:  # radii: the feature's size is the diameter, which moves by twice the radius
            size_error = max(
                2 * abs(a - b) / max(visible_tolerance(2 * a), 1e-9)
                for a, b in zip(self.sizes, other.sizes, strict=True)
            )
        area_error = abs(other.area - self.area) / (AREA_TOLERANCE * max(self.area, 1e-12))
        return size_error, area_error


def face_groups(inventory: np.ndarray, scale: float = 1.0) -> list[FaceGroup]:
    """Group inventory rows (see ``toolgym.envs.cadquery.measure``) by kind and size.

    ``scale`` multiplies lengths (areas by its square), for parts compared after normalisation.
    """
    rows = np.asarray(inventory, dtype=np.float64).reshape(-1, 7)
    groups: list[FaceGroup] = []
    for code, kind in enumerate(SURFACE_KINDS):
        members = rows[rows[:, 0] == code]
        if not len(members):
            continue
        if kind == "plane":
            keys = members[:, 4:7]
        elif kind == "cone":
            keys = members[:, 1:2]
        elif kind == "freeform":
            keys = np.zeros((len(members), 1))
        else:
            keys = members[:, 1:3] * scale
        groups.extend(
            FaceGroup(kind, tuple(float(k) for k in key), float(area) * scale**2)
            for key, area in _cluster(keys, members[:, 3], kind == "plane")
        )
    return groups


def _cluster(
    keys: np.ndarray, areas: np.ndarray, directions: bool
) -> list[tuple[np.ndarray, float]]:
    """Greedy clustering of equal keys (up to round-off), summing their areas."""
    clusters: list[tuple[np.ndarray, float]] = []
    for key, area in zip(keys, areas, strict=True):
        for index, (centre, total) in enumerate(clusters):
            close = (
                np.dot(centre, key) > math.cos(1e-6)
                if directions
                else np.allclose(centre, key, rtol=1e-6, atol=1e-9)
            )
            if close:
                clusters[index] = (centre, total + area)
                break
        else:
            clusters.append((key, area))
    return clusters


@dataclasses.dataclass(frozen=True)
class FeatureMatch:
    """How the candidate's face groups compare with the reference's.

    ``qualities`` has, for each significant reference group, 1 / (1 + size error² + area error²)
    against the best candidate group of its kind (0 when there is none), then for each candidate
    group 1 / (1 + size error²) against the nearest reference group of its kind: an extra
    feature counts too. ``missing`` lists the reference groups whose errors fail, ``extra`` the
    candidate's groups that no reference group is near in size.
    """

    qualities: tuple[float, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra

    @property
    def factor(self) -> float:
        """Score factor: between :data:`FEATURE_FLOOR` and 1 per group, smooth in the errors."""
        return math.prod(FEATURE_FLOOR + (1 - FEATURE_FLOOR) * q for q in self.qualities)

    def messages(self, most: int = 4) -> list[str]:
        """What fails, one line each: at most ``most`` lines, then how many more."""
        lines = [f"{m} missing or off" for m in self.missing]
        lines += [f"{e} not in the target" for e in self.extra]
        if len(lines) > most:
            lines = [*lines[:most], f"and {len(lines) - most} more face groups off"]
        return lines


def match_features(candidate: list[FaceGroup], reference: list[FaceGroup]) -> FeatureMatch:
    """Compare face groups; groups under :data:`SIGNIFICANT_AREA` of the reference's total area
    are left out on both sides."""
    floor = SIGNIFICANT_AREA * sum(g.area for g in reference)
    reference = [g for g in reference if g.area >= floor]
    candidate = [g for g in candidate if g.area >= floor]
    # Every pair's errors, estimated in bulk; only the pairs that can decide a maximum or a
    # pass are computed exactly (FaceGroup.errors), so the result is the pairwise one's, in
    # far less time on parts of many faces (a gear's hundreds of flank planes).
    sizes, areas = _estimated_errors(reference, candidate)
    qualities, missing, extra = [], [], []
    for i, group in enumerate(reference):
        near = _near_best(sizes[i] ** 2 + areas[i] ** 2)
        exact = [group.errors(candidate[j]) for j in near]
        qualities.append(max((1 / (1 + s**2 + a**2) for s, a in exact), default=0.0))
        passing = np.flatnonzero((sizes[i] <= 1 + _SLACK) & (areas[i] <= 1 + _SLACK))
        if not any(s <= 1 and a <= 1 for s, a in (group.errors(candidate[j]) for j in passing)):
            missing.append(group.describe())
    for j, group in enumerate(candidate):
        near = _near_best(sizes[:, j] ** 2)
        exact = [reference[i].errors(group)[0] for i in near]
        qualities.append(max((1 / (1 + s**2) for s in exact), default=0.0))
        passing = np.flatnonzero(sizes[:, j] <= 1 + _SLACK)
        if not any(reference[i].errors(group)[0] <= 1 for i in passing):
            extra.append(group.describe())
    return FeatureMatch(tuple(qualities), tuple(missing), tuple(extra))


#: How far the bulk estimates may stray from ``FaceGroup.errors`` (an arc-cosine near ±1 turns
#: round-off of 1e-16 into 2e-6 of a tolerance): pairs within it are computed exactly.
_SLACK = 1e-3


def _near_best(values: np.ndarray) -> np.ndarray:
    """Indices whose estimate could be the smallest (``inf``: a pair of different kinds)."""
    finite = np.isfinite(values)
    if not finite.any():
        return np.zeros(0, dtype=int)
    best = values[finite].min()
    return np.flatnonzero(finite & (values <= best + 10 * _SLACK * (1 + best)))


def _estimated_errors(
    reference: list[FaceGroup], candidate: list[FaceGroup]
) -> tuple[np.ndarray, np.ndarray]:
    """(size errors, area errors) of every candidate group (columns) against every reference
    group (rows), as :meth:`FaceGroup.errors` computes them up to round-off; ``inf`` where the
    kinds differ."""
    shape = (len(reference), len(candidate))
    sizes, areas = np.full(shape, np.inf), np.full(shape, np.inf)
    for kind in {g.kind for g in reference} & {g.kind for g in candidate}:
        rows = np.array([i for i, g in enumerate(reference) if g.kind == kind])
        cols = np.array([j for j, g in enumerate(candidate) if g.kind == kind])
        ref = np.array([reference[i].sizes for i in rows], dtype=np.float64)
        can = np.array([candidate[j].sizes for j in cols], dtype=np.float64)
        if kind == "plane":
            block = np.arccos(np.clip(ref @ can.T, -1.0, 1.0)) / NORMAL_TOLERANCE
        elif kind == "cone":
            tolerance = MARGIN * np.minimum(VISIBLE_MM, VISIBLE_FRACTION * np.abs(ref[:, :1]))
            block = np.abs(ref[:, :1] - can[:, 0]) / tolerance
        elif kind == "freeform":
            block = np.zeros((len(rows), len(cols)))
        else:
            tolerance = MARGIN * np.minimum(VISIBLE_MM, VISIBLE_FRACTION * np.abs(2 * ref))
            gaps = 2 * np.abs(ref[:, None, :] - can[None, :, :])  # in diameters
            block = np.max(gaps / np.maximum(tolerance, 1e-9)[:, None, :], axis=2)
        ref_area = np.array([reference[i].area for i in rows])
        can_area = np.array([candidate[j].area for j in cols])
        area_block = np.abs(can_area[None, :] - ref_area[:, None]) / (
            AREA_TOLERANCE * np.maximum(ref_area, 1e-12)[:, None]
        )
        sizes[np.ix_(rows, cols)] = block
        areas[np.ix_(rows, cols)] = area_block
    return sizes, areas


# -- surface deviation ---------------------------------------------------------------------------


class SurfaceDistance:
    """Exact distances from points to a triangle mesh's surface, by an AABB tree (libigl) built
    once: the nearest point of the nearest triangle, not of the nearest sample."""

    def __init__(self, mesh: trimesh.Trimesh) -> None:
        import igl

        self.vertices = np.ascontiguousarray(mesh.vertices, dtype=np.float64)
        self.faces = np.ascontiguousarray(mesh.faces, dtype=np.int64)
        self.tree = igl.AABB()
        if len(self.faces):
            self.tree.init(self.vertices, self.faces)

    def __call__(self, points: np.ndarray) -> np.ndarray:
        """Distance from each of ``points`` (n, 3) to the surface, in the mesh's units."""
        if not len(points) or not len(self.faces):
            return np.full(max(len(points), 1), np.inf)
        points = np.ascontiguousarray(points, dtype=np.float64)
        squared = self.tree.squared_distance(self.vertices, self.faces, points)[0]
        return np.sqrt(np.maximum(np.asarray(squared).reshape(-1), 0.0))
