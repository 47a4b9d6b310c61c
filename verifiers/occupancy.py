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
cancelling. At the default 256 columns along the longest horizontal side, IoU lands within 0.01 of
the exact B-Rep value on CAD parts (measured in ``bench/geometry_metrics.py``).
"""

from __future__ import annotations

import numpy as np
import trimesh

DEFAULT_RESOLUTION = 256
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
    def grid(cls, origin: tuple[float, float], pitch: float, shape: tuple[int, int]) -> Columns:
        """Rays at ``origin + (i, j) * pitch`` exactly (no jitter), e.g. one per pixel centre."""
        columns = cls.__new__(cls)
        columns.origin, columns.pitch, columns.shape = (
            np.asarray(origin, float),
            float(pitch),
            shape,
        )
        return columns

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


def crossings(mesh: trimesh.Trimesh, columns: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every crossing of the columns' rays with ``mesh``: flat column index, height z, and
    direction: +1 where the upward ray enters the solid (the face looks down), -1 where it leaves.

    Triangles are rasterised row by row (the x-extent of each triangle along each grid row), so
    the work is proportional to the crossings found, even for the long thin triangles of CAD
    tessellations.
    """
    nx, ny = columns.shape
    h, (x0, y0) = columns.pitch, columns.origin
    tri = np.asarray(mesh.triangles, dtype=np.float64)
    if not len(tri):
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    # Grid coordinates: column centre (i, j) sits at integer (i, j).
    gx, gy = (tri[:, :, 0] - x0) / h, (tri[:, :, 1] - y0) / h
    row_lo = np.maximum(np.ceil(gy.min(axis=1)).astype(np.int64), 0)
    row_hi = np.minimum(np.floor(gy.max(axis=1)).astype(np.int64), ny - 1)
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    projected = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]  # > 0: counter-clockwise from above
    rows = np.where(projected == 0, 0, np.maximum(row_hi - row_lo + 1, 0))  # edge-on: no crossing
    tri_of_row = np.repeat(np.arange(len(tri)), rows)
    j = row_lo[tri_of_row] + _ranks(rows)
    # Where the line y = j crosses each of the triangle's three edges.
    x_lo, x_hi = np.full(j.size, np.inf), np.full(j.size, -np.inf)
    for a, b in ((0, 1), (1, 2), (2, 0)):
        ya, yb = gy[tri_of_row, a], gy[tri_of_row, b]
        xa, xb = gx[tri_of_row, a], gx[tri_of_row, b]
        spans = (np.minimum(ya, yb) <= j) & (j <= np.maximum(ya, yb)) & (ya != yb)
        x = np.where(spans, xa + (j - ya) * (xb - xa) / np.where(ya == yb, 1, yb - ya), np.nan)
        x_lo = np.where(spans, np.minimum(x_lo, x), x_lo)
        x_hi = np.where(spans, np.maximum(x_hi, x), x_hi)
    col_lo = np.maximum(np.ceil(x_lo), 0)
    col_hi = np.minimum(np.floor(x_hi), nx - 1)
    count = np.where(np.isfinite(col_lo) & np.isfinite(col_hi), col_hi - col_lo + 1, 0)
    count = np.maximum(count, 0).astype(np.int64)
    cell_row = np.repeat(np.arange(j.size), count)
    i = col_lo[cell_row].astype(np.int64) + _ranks(count)
    j = j[cell_row]
    plane = _plane_heights(tri)[tri_of_row[cell_row]]
    z = plane[:, 0] * (x0 + i * h) + plane[:, 1] * (y0 + j * h) + plane[:, 2]
    direction = -np.sign(projected).astype(np.int64)[tri_of_row[cell_row]]
    return i * ny + j, z, direction


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., n-1 for each n in ``counts``, concatenated."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def _plane_heights(tri: np.ndarray) -> np.ndarray:
    """Per triangle, (zx, zy, zc) such that its plane has height zx·x + zy·y + zc.

    Triangles seen edge-on from above (zero projected area) get garbage; callers skip them.
    """
    a, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    det = e1[:, 0] * e2[:, 1] - e2[:, 0] * e1[:, 1]
    inv = 1.0 / np.where(det == 0, 1.0, det)
    # Barycentric u, v of (x, y) are affine in x and y; z = az + u·e1z + v·e2z is too.
    ux, uy = e2[:, 1] * inv, -e2[:, 0] * inv
    vx, vy = -e1[:, 1] * inv, e1[:, 0] * inv
    zx, zy = ux * e1[:, 2] + vx * e2[:, 2], uy * e1[:, 2] + vy * e2[:, 2]
    return np.stack([zx, zy, a[:, 2] - zx * a[:, 0] - zy * a[:, 1]], axis=1)


def inside_lengths(
    meshes: list[trimesh.Trimesh], columns: Columns
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Along every ray, the segments between consecutive crossings, and for each mesh whether the
    segment is inside it (odd number of crossings below) and its winding number there.

    Returns ``(segment_lengths, inside, winding)``; ``inside`` is boolean and ``winding`` integer,
    both ``(segments, meshes)``. Sums of lengths times ``columns.area`` are volumes. In a sound
    solid the winding number is 0 outside and 1 inside; 2 or more means overlapping shells, -1 an
    inside-out one.
    """
    parts = [crossings(mesh, columns) for mesh in meshes]
    column = np.concatenate([p[0] for p in parts])
    z = np.concatenate([p[1] for p in parts])
    direction = np.concatenate([p[2] for p in parts])
    owner = np.repeat(np.arange(len(meshes)), [p[0].size for p in parts])
    # Sort by column, then height, with one float key (10× faster than a two-key lexsort): the
    # height is squeezed into [0, 1) below the column index.
    span = float(np.ptp(z)) if z.size else 0.0
    key = column + (z - (z.min() if z.size else 0.0)) / (span * (1 + 1e-9) + 1e-300)
    order = np.argsort(key)
    column, z, owner, direction = column[order], z[order], owner[order], direction[order]
    # Counts so far within the same column (they restart at each new column).
    first = np.r_[True, column[1:] != column[:-1]] if column.size else np.zeros(0, dtype=bool)
    start_of = np.maximum.accumulate(np.where(first, np.arange(column.size), 0))

    def running(steps: np.ndarray) -> np.ndarray:
        total = np.cumsum(steps)
        return total - (total - steps)[start_of]

    # One mesh at a time, on contiguous 1-D arrays (a cumulative sum down the columns of an
    # (n, meshes) array strides through memory: 3× slower); integers, so the same counts.
    inside, winding = [], []
    for index in range(len(meshes)):
        mine = owner == index
        inside.append((running(mine.astype(np.int64)) & 1).astype(bool)[:-1])
        winding.append(running(np.where(mine, direction, 0))[:-1])
    same = column[1:] == column[:-1]
    return (
        np.where(same, z[1:] - z[:-1], 0.0),
        np.stack(inside, axis=1),
        np.stack(winding, axis=1),
    )


def column_measures(
    a: trimesh.Trimesh, b: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION
) -> dict[str, float]:
    """Approximate volumes (units³, exact along z, sampled in x and y) of ``a`` and ``b`` by parity,
    of their intersection and union, their IoU, and ``anomalous_a``: the volume where ``a``'s
    winding number is neither 0 nor 1 (see :func:`winding_anomaly`)."""
    columns = Columns.covering([a, b], resolution)
    length, inside, winding = inside_lengths([a, b], columns)
    volume = lambda mask: float((length * mask).sum() * columns.area)  # noqa: E731
    measures = {
        "volume_a": volume(inside[:, 0]),
        "volume_b": volume(inside[:, 1]),
        # Two columns combined elementwise: the same booleans as ``all``/``any`` along the
        # rows, which reduce a pair at a time (4× slower).
        "intersection": volume(inside[:, 0] & inside[:, 1]),
        "union": volume(inside[:, 0] | inside[:, 1]),
        "anomalous_a": volume((winding[:, 0] != 0) & (winding[:, 0] != 1)),
    }
    measures["iou"] = measures["intersection"] / measures["union"] if measures["union"] else 0.0
    return measures


def winding_anomaly(mesh: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION) -> float:
    """Volume (units³) where the mesh's winding number is neither 0 nor 1: overlapping shells
    (2 or more) or inside-out ones (-1). 0 for a sound solid, up to rays that graze an edge."""
    columns = Columns.covering([mesh], resolution)
    length, _, winding = inside_lengths([mesh], columns)
    return float((length * ((winding[:, 0] != 0) & (winding[:, 0] != 1))).sum() * columns.area)


def column_iou(
    a: trimesh.Trimesh, b: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION
) -> float:
    """Approximate volumetric IoU of two closed meshes (exact along z, sampled in x and y)."""
    return column_measures(a, b, resolution)["iou"]


def column_volume(mesh: trimesh.Trimesh, resolution: int = DEFAULT_RESOLUTION) -> float:
    """Volume enclosed by ``mesh`` by parity (units³)."""
    columns = Columns.covering([mesh], resolution)
    length, inside, _ = inside_lengths([mesh], columns)
    return float((length * inside[:, 0]).sum() * columns.area)
