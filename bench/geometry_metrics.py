"""Verifier benchmark: IoU three ways, Chamfer against a plain baseline, per-step verification cost.

Run::

    python bench/geometry_metrics.py              # 200 random pairs of CAD solids
    python bench/geometry_metrics.py --pairs 50

Everything is measured side by side in one run; the machines this runs on are shared and noisy,
so compare the ratios, not the absolute times. Figures and the command go into bench/RESULTS.md.

1. IoU by exact B-Rep booleans (the ground truth on these well-behaved pairs), by exact mesh
   booleans (manifold3d) and by the approximate ray-cast path (at its default resolution and at the
   per-step one): time of each and the maximum and mean absolute error against B-Rep. Target: both
   fast paths within 0.01.
2. Chamfer distance at 8,192 points per side: ours against trimesh's surface sampling plus SciPy's
   cKDTree. Target: at least parity.
3. The whole per-step verification (what the environment calls each step: mesh from the session's
   arrays, cheap tier) as a fraction of the time CadQuery takes to build and tessellate the same
   part. Target: at most 25 %.
4. The exact tier (mesh booleans, feature checks, exact surface distances) against the exact tier
   it replaced (B-Rep boolean plus sample-to-sample surface metrics and validity), both in this
   process on the same parts. Target: at most 1.5×. Also the new checks alone at the cheap tier:
   topology and face inventory (target: at most 5 ms per part), and the exact surface distances
   behind the deviation and the soft F-score.
"""

from __future__ import annotations

import argparse
import statistics
import time

import cadquery as cq
import numpy as np
import trimesh
from scipy.spatial import cKDTree

from toolgym.envs.cadquery.measure import common_volume, face_inventory, tessellation
from toolgym.verifiers import features, geometry
from toolgym.verifiers.cad import TIER_SETTINGS, verify_part
from toolgym.verifiers.occupancy import DEFAULT_RESOLUTION
from toolgym.verifiers.parts import TESSELLATION_TOLERANCE, Part

STEP_RESOLUTION = 128


def random_program(
    rng: np.random.Generator, base: dict[str, float] | None = None
) -> tuple[str, dict]:
    """A CadQuery program for a plausible part: a plate or a disc with holes, a boss, fillets.

    With ``base`` the parameters are a perturbation of it, so pairs span IoU from ~0.3 to ~1.
    """
    if base is None:
        p = {
            "kind": float(rng.integers(2)),
            "a": rng.uniform(20, 80),
            "b": rng.uniform(15, 60),
            "t": rng.uniform(3, 15),
            "hole": rng.uniform(2, 8),
            "boss": rng.uniform(4, 12),
            "fillet": rng.uniform(0.3, 1.5),
            "x": 0.0,
            "y": 0.0,
        }
    else:
        p = {k: v * rng.uniform(0.8, 1.2) for k, v in base.items()}
        p["kind"], p["x"], p["y"] = base["kind"], rng.uniform(-4, 4), rng.uniform(-4, 4)
    if p["kind"] == 0:
        body = f"cq.Workplane().box({p['a']:.3f}, {p['b']:.3f}, {p['t']:.3f})"
        body += f".edges('|Z').fillet({p['fillet']:.3f})"
    else:
        body = f"cq.Workplane().cylinder({p['t']:.3f}, {p['a'] / 2:.3f})"
    spacing = min(p["a"], p["b"]) / 4
    holes = f"rarray({spacing:.3f}, {spacing:.3f}, 2, 2).hole({p['hole']:.3f})"
    program = (
        f"result = ({body}\n"
        f"    .faces('>Z').workplane().{holes}\n"
        f"    .faces('>Z').workplane().circle({p['boss']:.3f}).extrude({p['t'] / 2:.3f})\n"
        f"    .translate(({p['x']:.3f}, {p['y']:.3f}, 0)))\n"
    )
    return program, p


def build(program: str) -> tuple[object, float]:
    """The solid a program binds to ``result``, its mesh arrays and face inventory, and the
    seconds to build and tessellate it."""
    started = time.perf_counter()
    namespace = {"cq": cq}
    exec(program, namespace)
    shape = namespace["result"].val()
    tolerance = TESSELLATION_TOLERANCE * shape.BoundingBox().DiagonalLength
    mesh = tessellation(shape, tolerance)
    elapsed = time.perf_counter() - started
    return (shape, (mesh["vertices"], mesh["faces"], face_inventory(shape))), elapsed


def iou_brep(a: object, b: object) -> float:
    common = common_volume(a.wrapped, b.wrapped)
    return common / (a.Volume() + b.Volume() - common)


def previous_exact_tier(shape_a: object, shape_b: object, a: Part, b: Part) -> None:
    """What the exact tier computed before: the B-Rep boolean, sample-to-sample surface metrics
    at 8,192 points (with the reference's own sampling noise) and the validity checks."""
    iou_brep(shape_a, shape_b)
    count = TIER_SETTINGS["exact"]["points"]
    geometry.nearest_distances(a.mesh, b.mesh, count, 0)
    geometry.distances(
        geometry.sample_surface(b.mesh, count, 1), geometry.sample_surface(b.mesh, count)
    )
    geometry.validity(a.mesh)


def feature_checks(a: Part, b: Part) -> None:
    """The cheap tier's new checks: topology and the face inventory of a new candidate."""
    features.Topology.of(a.mesh)
    features.match_features(features.face_groups(a.features), b.face_groups)


def exact_distances(a: Part, b: Part) -> None:
    """The cheap tier's exact surface distances (deviation, soft F-score): the candidate's
    samples and AABB tree, and its first samples measured each way."""
    settings = TIER_SETTINGS["cheap"]
    surface = b.surface(settings["points"], 0, geometry.DEFAULT_FSCORE_THRESHOLD)
    candidate = geometry.SampledSurface(a.mesh, settings["points"], 0)
    exact = slice(settings["exact_points"])
    surface.sampled.distances_from(candidate.points[exact])
    candidate.distances_from(surface.points[exact])


def timed(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def baseline_chamfer(a: trimesh.Trimesh, b: trimesh.Trimesh, n: int) -> float:
    """The plain way: trimesh's sampler and SciPy's KD-tree, same definition as ours."""
    p, _ = trimesh.sample.sample_surface(a, n, seed=0)
    q, _ = trimesh.sample.sample_surface(b, n, seed=0)
    d1, d2 = cKDTree(q).query(p)[0], cKDTree(p).query(q)[0]
    return (d1.mean() + d2.mean()) / 2 / geometry.diagonal(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "iou_brep",
            "t_brep",
            "err_mesh",
            "t_mesh",
            "err_fast",
            "t_fast",
            "err_step",
            "t_step_iou",
            "t_chamfer",
            "t_baseline",
            "step_fraction",
            "t_build",
            "t_exact",
            "t_previous",
            "t_features",
            "t_distances",
        )
    }
    for _ in range(args.pairs):
        program_a, params = random_program(rng)
        program_b, _ = random_program(rng, params)
        (shape_a, arrays_a), build_a = build(program_a)
        (shape_b, arrays_b), _ = build(program_b)
        a, b = Part.from_arrays(*arrays_a), Part.from_arrays(*arrays_b)
        exact, t_brep = timed(iou_brep, shape_a, shape_b)
        mesh_iou, t_mesh = timed(geometry.iou_mesh, a.mesh, b.mesh)
        fast_iou, t_fast = timed(geometry.iou_fast, a.mesh, b.mesh, DEFAULT_RESOLUTION)
        step_iou, t_step = timed(geometry.iou_fast, a.mesh, b.mesh, STEP_RESOLUTION)
        _, t_chamfer = timed(geometry.chamfer, a.mesh, b.mesh, 8192)
        _, t_baseline = timed(baseline_chamfer, a.mesh, b.mesh, 8192)
        # Per step: the reference is prepared once per episode; the candidate arrives as arrays.
        verify_part(Part.from_arrays(*arrays_b), b, tier="cheap")  # warms b's cached samples
        started = time.perf_counter()
        verify_part(Part.from_arrays(*arrays_a), b, tier="cheap")
        t_verify = time.perf_counter() - started
        _, t_features = timed(feature_checks, Part.from_arrays(*arrays_a), b)
        _, t_distances = timed(exact_distances, Part.from_arrays(*arrays_a), b)
        _, t_previous = timed(previous_exact_tier, shape_a, shape_b, a, Part.from_arrays(*arrays_b))
        _, t_exact = timed(verify_part, Part.from_arrays(*arrays_a), Part.from_arrays(*arrays_b))
        for key, value in (
            ("iou_brep", exact),
            ("t_brep", t_brep),
            ("err_mesh", abs(mesh_iou - exact)),
            ("t_mesh", t_mesh),
            ("err_fast", abs(fast_iou - exact)),
            ("t_fast", t_fast),
            ("err_step", abs(step_iou - exact)),
            ("t_step_iou", t_step),
            ("t_chamfer", t_chamfer),
            ("t_baseline", t_baseline),
            ("step_fraction", t_verify / build_a),
            ("t_build", build_a),
            ("t_exact", t_exact),
            ("t_previous", t_previous),
            ("t_features", t_features),
            ("t_distances", t_distances),
        ):
            rows[key].append(value)

    med = {k: statistics.median(v) for k, v in rows.items()}
    ious = rows["iou_brep"]
    print(f"# {args.pairs} random pairs of CAD solids, IoU {min(ious):.2f} to {max(ious):.2f}")

    def errors(key: str, target: str = "≤ 0.01") -> tuple[str, str]:
        worst, mean = max(rows[key]), statistics.fmean(rows[key])
        verdict_ = f"{target}: {verdict(worst <= 0.01)}" if target else "per-step shaping only"
        return f"{worst:.4f} / {mean:.4f}", verdict_

    def speed(key: str) -> str:
        return f"{med[key] * 1e3:.1f} ms ({med['t_brep'] / med[key]:.1f}× B-Rep's speed)"

    ratio = med["t_baseline"] / med["t_chamfer"]
    table = [
        ("IoU by B-Rep booleans: median time", f"{med['t_brep'] * 1e3:.1f} ms", "ground truth"),
        ("IoU by mesh booleans: median time", speed("t_mesh"), ""),
        ("IoU by mesh booleans: max / mean error", *errors("err_mesh")),
        (f"IoU by ray casting, {DEFAULT_RESOLUTION} columns: time", speed("t_fast"), ""),
        (f"IoU by ray casting, {DEFAULT_RESOLUTION}: max / mean error", *errors("err_fast")),
        (f"IoU by ray casting, {STEP_RESOLUTION} (per step): time", speed("t_step_iou"), ""),
        (f"IoU by ray casting, {STEP_RESOLUTION}: max / mean error", *errors("err_step", "")),
        (
            "Chamfer at 8,192 points: ours vs trimesh + cKDTree",
            f"{med['t_chamfer'] * 1e3:.1f} vs {med['t_baseline'] * 1e3:.1f} ms ({ratio:.2f}×)",
            f"≥ parity: {verdict(ratio >= 1)}",
        ),
        (
            "per-step verification / CadQuery build + tessellate",
            f"{med['step_fraction']:.0%} (build {med['t_build'] * 1e3:.0f} ms)",
            f"≤ 25 %: {verdict(med['step_fraction'] <= 0.25)}",
        ),
        (
            "exact tier: now vs before (B-Rep IoU + sampled surface metrics)",
            f"{med['t_exact'] * 1e3:.1f} vs {med['t_previous'] * 1e3:.1f} ms "
            f"({med['t_exact'] / med['t_previous']:.2f}×)",
            f"≤ 1.5×: {verdict(med['t_exact'] <= 1.5 * med['t_previous'])}",
        ),
        (
            "topology and face-inventory checks per part at the cheap tier",
            f"{med['t_features'] * 1e3:.2f} ms",
            f"≤ 5 ms: {verdict(med['t_features'] <= 0.005)}",
        ),
        (
            "exact surface distances per part at the cheap tier (deviation, soft F)",
            f"{med['t_distances'] * 1e3:.2f} ms",
            "",
        ),
    ]
    print("| measure | figure | target |\n|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


if __name__ == "__main__":
    main()
