"""Solid occupancy by vertical ray casting: the fast, approximate path to volumes and IoU.

A grid of vertical rays (columns) is cast through the meshes. Along each ray the crossings with
the surface are found exactly, and the ray is inside a closed mesh between the 1st and 2nd
crossing, the 3rd and 4th, and so on (parity). Inside lengths are integrated exactly along z and
summed over columns of area ``pitch²``, so the only approximation is the sampling in x and y.
The interior is filled by construction, unlike voxelising the surface alone, which measures only
a shell: on thin or large parts such a surface-only "IoU" can read 0.64 where the exact value is
0.95.

Requires closed (watertight) meshes. The column grid is offset by a tiny irrational fraction of the
pitch so rays never graze the edges and vertices of CAD meshes, whose coordinates are usually round
numbers. Error: only columns cut by a vertical-ish wall are misjudged, by at most one column area
each, so the relative error is about ``perimeter * pitch / (2 * area)`` with signs mostly
cancelling. At the default 384 columns along the longest horizontal side, IoU lands within 0.01 of
the exact B-Rep value on CAD parts (measured in ``bench/verifiers.py``).
"""

from __future__ import annotations

import numpy as np
import trimesh

DEFAULT_RESOLUTION = 384
_JITTER = np.array([np.sqrt(2), np.sqrt(3)]) * 1e-4  # in units of the pitch


class Columns:
    """Vertical rays through the centres of a square grid covering ``bounds`` (2×3) in x and y.

    ``resolution`` rays span the longer horizontal side; ``pitch`` is their spacing (mesh units).
    """

    def __init__(self, bounds: np.ndarray, resolution: int = DEFAULT_RESOLUTION) -> None:
        low, high = np.asarray(bounds, dtype=np.float64)[:, :2]
        extent = np.maximum(high - low, 1e-12)
        self.pitch = float(extent.max() / resolution)
        self.shape = tuple(int(n) for n in np.maximum(np.ceil(extent / self.pitch), 1))
        self.origin = low + (0.5 + _JITTER) * self.pitch

    @classmethod
    def covering(
        cls, meshes: list[trimesh.Trimesh], resolution: int = DEFAULT_RESOLUTION
    ) -> Columns:
        boxes = [m.bounds for m in meshes if len(m.faces)]
        if not boxes:
            return cls(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), resolution)
        bounds = np.vstack(boxes)
        return cls(np.array([bounds.min(axis=0), bounds.max(axis=0)]), resolution)

    @property
    def area(self) -> float:
        return self.pitch**2


def crossings(mesh: trimesh.Trimesh, columns: Columns) -> tuple[np.ndarray, np.ndarray]:
    """Every crossing of the columns' rays with ``mesh``: flat column index and height z."""
    nx, ny = columns.shape
    h, (x0, y0) = columns.pitch, columns.origin
    tri = np.asarray(mesh.triangles, dtype=np.float64)
    if not len(tri):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    xy = tri[:, :, :2]
    lo = np.maximum(np.ceil((xy.min(axis=1) - (x0, y0)) / h).astype(np.int64), 0)
    hi = np.minimum(np.floor((xy.max(axis=1) - (x0, y0)) / h).astype(np.int64), (nx - 1, ny - 1))
    span = np.maximum(hi - lo + 1, 0)
    counts = span[:, 0] * span[:, 1]
    keep = counts > 0
    coef = _affine_coefficients(tri[keep])
    counts, lo, span = counts[keep], lo[keep], span[keep]
    owner = np.repeat(np.arange(len(counts)), counts)
    offset = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    i = lo[owner, 0] + offset // span[owner, 1]
    j = lo[owner, 1] + offset % span[owner, 1]
    px, py = x0 + i * h, y0 + j * h
    g = coef[owner]  # one gather of each candidate's triangle row
    u = g[:, 0] * px + g[:, 1] * py + g[:, 2]
    v = g[:, 3] * px + g[:, 4] * py + g[:, 5]
    hit = (u >= 0) & (v >= 0) & (u + v <= 1)
    z = g[hit, 6] * px[hit] + g[hit, 7] * py[hit] + g[hit, 8]
    return i[hit] * ny + j[hit], z


def _affine_coefficients(tri: np.ndarray) -> np.ndarray:
    """Per triangle, u, v (barycentric) and z as affine functions of (x, y): rows of 9 numbers.

    Triangles seen edge-on from above (zero projected area) get u = v = -1: never hit.
    """
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    e1, e2 = b - a, c - a
    det = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
    flat = det == 0
    inv = 1.0 / np.where(flat, 1.0, det)
    # u = ((x - ax) e2y - e2x (y - ay)) / det ; v = (e1x (y - ay) - (x - ax) e1y) / det
    ux, uy = e2[:, 1] * inv, -e2[:, 0] * inv
    vx, vy = -e1[:, 1] * inv, e1[:, 0] * inv
    uc = -(ux * a[:, 0] + uy * a[:, 1])
    vc = -(vx * a[:, 0] + vy * a[:, 1])
    # z = az + u e1z + v e2z, affine in (x, y) too.
    zx, zy = ux * e1[:, 2] + vx * e2[:, 2], uy * e1[:, 2] + vy * e2[:, 2]
    zc = a[:, 2] + uc * e1[:, 2] + vc * e2[:, 2]
    coef = np.stack([ux, uy, uc, vx, vy, vc, zx, zy, zc], axis=1)
    coef[flat, :6] = (0, 0, -1, 0, 0, -1)
    return coef


def inside_lengths(meshes: list[trimesh.Trimesh], columns: Columns) -> np.ndarray:
    """Along every ray, the segments between consecutive crossings and which meshes they lie in.

    Returns ``(segment_lengths, inside)`` where ``inside`` is a boolean ``(segments, meshes)``
    array; sums of lengths times ``columns.area`` are volumes.
    """
    parts = [crossings(mesh, columns) for mesh in meshes]
    column = np.concatenate([p[0] for p in parts])
    z = np.concatenate([p[1] for p in parts])
    owner = np.repeat(np.arange(len(meshes)), [p[0].size for p in parts])
    order = np.lexsort((z, column))
    column, z, owner = column[order], z[order], owner[order]
    toggles = np.zeros((column.size, len(meshes)), dtype=np.int64)
    toggles[np.arange(column.size), owner] = 1
    # Parity of the crossings so far within the same column (counts restart at each new column).
    count = np.cumsum(toggles, axis=0)
    first = np.r_[True, column[1:] != column[:-1]] if column.size else np.zeros(0, dtype=bool)
    start_of = np.maximum.accumulate(np.where(first, np.arange(column.size), 0))
    inside = ((count - (count - toggles)[start_of]) & 1).astype(bool)
    same = column[1:] == column[:-1]
    return np.where(same, z[1:] - z[:-1], 0.0), inside[:-1]


def column_measures(
    a: trimesh.Trimesh, b: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION
) -> dict[str, float]:
    """Approximate volumes by parity of ``a``, ``b``, their intersection and union (units³), and
    their IoU; exact along z, sampled in x and y."""
    columns = Columns.covering([a, b], resolution)
    length, inside = inside_lengths([a, b], columns)
    volume = lambda mask: float((length * mask).sum() * columns.area)  # noqa: E731
    measures = {
        "volume_a": volume(inside[:, 0]),
        "volume_b": volume(inside[:, 1]),
        "intersection": volume(inside.all(axis=1)),
        "union": volume(inside.any(axis=1)),
    }
    measures["iou"] = measures["intersection"] / measures["union"] if measures["union"] else 0.0
    return measures


def column_iou(
    a: trimesh.Trimesh, b: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION
) -> float:
    """Approximate volumetric IoU of two closed meshes (exact along z, sampled in x and y)."""
    return column_measures(a, b, resolution)["iou"]


def column_volume(mesh: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION) -> float:
    """Volume enclosed by ``mesh`` by parity (units³). It differs from the signed volume where the
    mesh overlaps itself, which makes it a cheap self-intersection check."""
    columns = Columns.covering([mesh], resolution)
    length, inside = inside_lengths([mesh], columns)
    return float((length * inside[:, 0]).sum() * columns.area)
