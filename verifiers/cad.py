"""The CAD verifier: a candidate part against a reference part, to a :class:`VerifierReport`.

Two tiers. ``cheap`` runs every environment step: ray-cast IoU at 128 columns and 2,048 surface
samples, 256 of them measured exactly to the other surface. ``exact`` runs at the end of an
episode and in ``toolgym verify``: IoU by mesh booleans (manifold3d) on a fine tessellation and
8,192 surface samples. A B-Rep boolean, when the caller ran one in a sandbox, cross-checks
that value: a disagreement above :data:`BREP_AGREEMENT` fails (``checks["brep_mismatch"]``,
saying both IoUs) and the score takes the lower of the two, since a mesh that disagrees with its
own solid is not evidence of a right part. A boolean that could not be run, or that found no
common volume where the meshes overlap (OpenCASCADE's known failure on some swept solids), is
recorded in ``checks["brep_crosscheck"]`` and leaves the mesh IoU, which decides alone.

The score, in [0, 1], is hard to fool and has no cliffs:

    score = valid × bodies × topology × features × deviation
            × IoU^w_iou × exp(−surface_distance / 0.05)^w_chamfer × soft_F^w_fscore

with the weights normalised to sum to 1 (default 0.6, 0.2, 0.2). ``surface_distance`` (the mean
distance to the other surface over the reference's diagonal) and ``soft_F`` (an F-score that
counts each point by 1 / (1 + (d/τ)²)) fall smoothly as a part moves away, where a thresholded
F-score drops to 0 in one step. ``valid`` is 0 unless the candidate is a sound closed solid;
``bodies`` = min(n, n_ref) / max(n, n_ref) compares the counts of disjoint bodies (found by
connected faces of the B-Rep, so a sliver touching a corner is a second body); ``topology``,
``features`` and ``deviation`` are the feature factors of :mod:`toolgym.verifiers.features`:
0.8 per through-hole or cavity too many or too few (a genus that cannot be counted costs as
finding none, and one more), 0.8 to 1 per face group (smooth in its size and area errors), and
0.8 to 1 for the largest surface deviation in mm.

``passed`` uses the same criteria: valid, the thresholds (IoU ≥ 0.95 by default), the same numbers
of bodies, cavities and through-holes (a count that could not be made fails, with the reason),
every significant face group matched within tolerance, surface deviation within tolerance, no
B-Rep/mesh disagreement, and a score of at least :data:`PASS_SCORE`. So a plate without its
holes, a block without its fillets or a closed box for an open one fails, whatever its IoU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toolgym.verifiers import features, geometry
from toolgym.verifiers.occupancy import DEFAULT_RESOLUTION, column_measures
from toolgym.verifiers.parts import Part
from toolgym.verifiers.report import TIERS, VerifierReport, check_thresholds

DEFAULT_WEIGHTS = {"iou": 0.6, "chamfer": 0.2, "fscore": 0.2}
DEFAULT_THRESHOLDS = {"iou": 0.95}
CHAMFER_SCALE = 0.05  # normalised surface distance at which its score term is 1/e
PASS_SCORE = 0.75  # a part that passes every check scores at least this
BREP_AGREEMENT = 0.01  # mesh and B-Rep IoU further apart than this fail: the lower is scored
MAX_TRIANGLES = 400_000  # per part: the verifier's work is bounded by construction
# points: surface samples per side; exact_points: how many of them are measured exactly to the
# other surface (an AABB query each, the costly part on CAD meshes of long thin triangles).
TIER_SETTINGS = {
    "cheap": {"points": 2048, "exact_points": 256, "resolution": 128},
    "exact": {"points": geometry.DEFAULT_POINTS, "exact_points": None, "resolution": None},
}
ALIGNMENTS = ("none", "normalized")
UNCOUNTED = -1  # a topology count (bodies, cavities, genus) that could not be made
PASS_CHECKS = ("valid", "bodies", "cavities", "genus", "deviation", "features", "brep_mismatch")


def composite_score(
    metrics: dict[str, float], valid: bool, weights: dict[str, float] | None = None
) -> float:
    """The geometric part of the score, in [0, 1], from ``iou``, ``surface_distance``,
    ``soft_fscore`` and the body counts; the feature factors multiply it (see the module)."""
    weights = check_weights(weights or DEFAULT_WEIGHTS)
    if not valid:
        return 0.0
    terms = {
        "iou": metrics["iou"],
        "chamfer": math.exp(-metrics["surface_distance"] / CHAMFER_SCALE),
        "fscore": metrics["soft_fscore"],
    }
    total = sum(weights.values())
    log_score = 0.0
    for name, weight in weights.items():
        if weight == 0:
            continue
        if terms[name] <= 0:
            return 0.0
        log_score += weight / total * math.log(terms[name])
    bodies, reference_bodies = metrics["bodies"], metrics["reference_bodies"]
    body_factor = min(bodies, reference_bodies) / max(bodies, reference_bodies, 1)
    return float(min(1.0, body_factor * math.exp(log_score)))


def check_weights(weights: dict[str, float]) -> dict[str, float]:
    unknown = set(weights) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ValueError(
            f"unknown score weights {sorted(unknown)}; known: {sorted(DEFAULT_WEIGHTS)}"
        )
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError(f"score weights must be non-negative with a positive sum, got {weights}")
    return weights


def verify_part(
    candidate: Part | None,
    reference: Part,
    *,
    tier: str = "exact",
    weights: dict[str, float] | None = None,
    thresholds: dict[str, float] | None = None,
    alignment: str = "none",
    seed: int = 0,
    deviation_tolerance: float | None = None,
    brep_iou: float | str | None = None,
) -> VerifierReport:
    """Score ``candidate`` against ``reference``.

    Args:
        candidate: the agent's part; ``None`` when it produced nothing (scores 0, no error).
        tier: ``"cheap"`` or ``"exact"`` (see the module docstring).
        weights: composite-score weights for ``iou``, ``chamfer`` and ``fscore``.
        thresholds: metric bounds for ``passed`` (maxima for lower-is-better metrics); default
            IoU ≥ 0.95.
        alignment: ``"none"`` (absolute placement matters, the CAD default) or ``"normalized"``
            (each part centred on its bounding box and scaled to a largest side of 1).
        seed: surface-sampling seed; the same seed gives the same report.
        deviation_tolerance: the largest surface deviation that passes, in the parts' units;
            default: a quarter of min(1 mm, 10 % of the reference's thinnest extent).
        brep_iou: the IoU of the two B-Rep solids, when the caller computed one (in a sandbox),
            or why it could not; cross-checks the mesh IoU (see the module).
    """
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}; known: {TIERS}")
    if alignment not in ALIGNMENTS:
        raise ValueError(f"unknown alignment {alignment!r}; known: {ALIGNMENTS}")
    weights = check_weights(weights or DEFAULT_WEIGHTS)
    thresholds = DEFAULT_THRESHOLDS if thresholds is None else thresholds
    if candidate is None or not len(candidate.mesh.faces):
        metrics = _empty_metrics(reference)
        return VerifierReport(metrics, 0.0, False, tier, [], {"empty": True, "valid": False})
    for name, part in (("candidate", candidate), ("reference", reference)):
        if len(part.mesh.faces) > MAX_TRIANGLES:
            error = (
                f"the {name} has {len(part.mesh.faces):,} triangles, over the verifier's budget "
                f"of {MAX_TRIANGLES:,}"
            )
            return VerifierReport({}, None, False, tier, [error], {})
    try:
        if alignment == "normalized":
            candidate, reference = candidate.normalized(), reference.normalized()
        metrics, valid = _measure(candidate, reference, tier, seed)
        tolerance = (
            deviation_tolerance * reference.length_scale  # in the compared parts' units
            if deviation_tolerance
            else features.deviation_tolerance(reference.mesh.extents)
        )
        checks, factor = _feature_checks(candidate, reference, metrics, valid, tolerance)
        scored = metrics
        if brep_iou is not None:
            crosscheck = _crosscheck(metrics["iou"], brep_iou)
            checks.update(crosscheck)
            if "brep_mismatch" in crosscheck:  # the lower IoU is scored: see the module
                scored = {**metrics, "iou": min(metrics["iou"], float(brep_iou))}
        score = composite_score(scored, bool(valid["valid"]), weights) * factor
        notes = [
            f"{name}: {p.note}"
            for name, p in (("candidate", candidate), ("reference", reference))
            if p.note
        ]
        if notes:  # the part was repaired to be read: say so, it does not change the score
            checks["read_as_solid"] = {"ok": True, "message": "; ".join(notes)}
    except Exception as exc:  # a verifier failure is an error, never a silent 0
        return VerifierReport({}, None, False, tier, [f"{type(exc).__name__}: {exc}"], {})
    metrics["score"] = score
    passed = (
        check_thresholds(metrics, thresholds)
        and all(checks[name]["ok"] is not False for name in PASS_CHECKS if name in checks)
        and score >= PASS_SCORE
    )
    return VerifierReport(metrics, score, passed, tier, [], valid, checks)


def _measure(
    candidate: Part, reference: Part, tier: str, seed: int
) -> tuple[dict[str, float], dict[str, Any]]:
    settings = TIER_SETTINGS[tier]
    cand, ref = candidate.mesh, reference.mesh
    closed = bool(len(cand.faces)) and bool(np.isfinite(cand.vertices).all()) and cand.is_watertight
    if tier == "cheap" and closed:
        # One ray cast gives both the IoU and the winding numbers the validity check needs.
        measures = column_measures(cand, ref, settings["resolution"])
        valid = geometry.validity(
            cand, anomalous_volume=measures["anomalous_a"], topology=candidate.topology
        )
        iou = measures["iou"]
    else:
        valid = geometry.validity(cand, topology=candidate.topology)
        iou = None
    if not valid["valid"]:
        iou = 0.0
    elif iou is None:
        try:
            iou = geometry.iou_mesh(cand, ref)
        except ValueError:  # closed for trimesh, not for manifold3d: fall back to ray casting
            iou = geometry.iou_fast(cand, ref, 2 * DEFAULT_RESOLUTION)
    metrics = {"iou": float(np.clip(iou, 0.0, 1.0))}
    if valid["finite"]:
        surface = reference.surface(settings["points"], seed, geometry.DEFAULT_FSCORE_THRESHOLD)
        metrics.update(
            geometry.surface_metrics(
                cand, surface, settings["points"], seed, exact_count=settings["exact_points"]
            )
        )
    else:
        metrics.update(
            chamfer=math.inf,
            fscore=0.0,
            hausdorff=math.inf,
            chamfer_floor=0.0,
            fscore_ceiling=1.0,
            surface_distance=math.inf,
            soft_fscore=0.0,
            deviation=math.inf,
        )
    metrics.update(
        volume_error=geometry.relative_error(float(valid["volume"]), reference.volume),
        area_error=geometry.relative_error(float(cand.area), float(ref.area)),
        bbox_error=geometry.bbox_error(cand, ref) if valid["finite"] else math.inf,
        bodies=float(valid["bodies"]),
        reference_bodies=float(reference.bodies),
    )
    return metrics, valid


def _feature_checks(
    candidate: Part,
    reference: Part,
    metrics: dict[str, float],
    valid: dict[str, Any],
    tolerance: float,
) -> tuple[dict[str, dict[str, Any]], float]:
    """The pass criteria beyond IoU, each ``{"ok", "message", ...}``, and the score factor."""
    ours, theirs = candidate.topology, reference.topology
    checks: dict[str, dict[str, Any]] = {
        "valid": {
            "ok": bool(valid["valid"]),
            "message": "a sound closed solid" if valid["valid"] else "not a sound closed solid",
        },
    }
    for name, mine, target, what in (
        ("bodies", ours.bodies, theirs.bodies, "separate bodies"),
        ("cavities", ours.cavities, theirs.cavities, "internal cavities"),
        ("genus", ours.genus, theirs.genus, "through-holes"),
    ):
        # A count that cannot be made fails: an unknown is never the benefit of the doubt.
        message = f"{mine} {what} where the target has {target}"
        if mine is None:
            message = f"the {what} could not be counted ({ours.unknown}); the target has {target}"
        elif target is None:
            message = f"the target's {what} could not be counted ({theirs.unknown})"
        ok = mine is not None and target is not None and mine == target
        # -1 where a count could not be made: a number either way, as a vector env stacks the
        # infos of its envs into one array per key (an int, then None, does not stack).
        counts = {"candidate": UNCOUNTED if mine is None else mine}
        counts["reference"] = UNCOUNTED if target is None else target
        checks[name] = {"ok": ok, **counts, "message": message}
    deviation = metrics["deviation"]
    checks["deviation"] = {
        "ok": deviation <= tolerance,
        "value": deviation,
        "tolerance": tolerance,
        "message": f"surface {deviation:.3g} off the target in places (tolerance {tolerance:.3g})",
    }
    metrics["deviation_tolerance"] = tolerance
    deviation_term = 1 / (1 + (deviation / tolerance) ** 2) if math.isfinite(deviation) else 0
    factor = features.topology_factor(ours, theirs) * (
        features.FEATURE_FLOOR + (1 - features.FEATURE_FLOOR) * deviation_term
    )
    groups, target_groups = candidate.face_groups, reference.face_groups
    if groups is None or target_groups is None:
        checks["features"] = {"ok": None, "message": "not checked: a part has no B-Rep"}
    else:
        match = features.match_features(groups, target_groups)
        checks["features"] = {
            "ok": match.ok,
            "message": "; ".join(match.messages()) or "every face of the target has its match",
        }
        factor *= match.factor
    return checks, factor


def _crosscheck(mesh_iou: float, brep_iou: float | str) -> dict[str, dict[str, Any]]:
    """``brep_crosscheck`` (agreement, or a boolean that could not be run: not scored) or
    ``brep_mismatch`` (a disagreement over :data:`BREP_AGREEMENT`: fails)."""
    if isinstance(brep_iou, str):
        return {"brep_crosscheck": {"ok": None, "message": f"B-Rep boolean failed: {brep_iou}"}}
    if brep_iou == 0.0 and mesh_iou > BREP_AGREEMENT:
        # OpenCASCADE's common of overlapping solids sometimes comes back empty (swept parts
        # moved a millimetre, say): the boolean failed, it did not measure a disagreement.
        message = (
            f"B-Rep boolean failed: no common volume where the meshes overlap (mesh IoU "
            f"{mesh_iou:.3f}); the mesh IoU decides"
        )
        return {
            "brep_crosscheck": {
                "ok": None,
                "brep_iou": 0.0,
                "mesh_iou": mesh_iou,
                "message": message,
            }
        }
    agree = abs(brep_iou - mesh_iou) <= BREP_AGREEMENT
    entry = {
        "ok": agree,
        "brep_iou": brep_iou,
        "mesh_iou": mesh_iou,
        "message": f"B-Rep IoU {brep_iou:.3f}, mesh IoU {mesh_iou:.3f}: they "
        + ("agree" if agree else f"disagree by more than {BREP_AGREEMENT:g}; the lower is scored"),
    }
    return {"brep_crosscheck" if agree else "brep_mismatch": entry}


def _empty_metrics(reference: Part) -> dict[str, float]:
    return {
        "iou": 0.0,
        "chamfer": math.inf,
        "fscore": 0.0,
        "hausdorff": math.inf,
        "surface_distance": math.inf,
        "soft_fscore": 0.0,
        "deviation": math.inf,
        "volume_error": 1.0,
        "area_error": 1.0,
        "bbox_error": math.inf,
        "bodies": 0.0,
        "reference_bodies": float(reference.bodies),
        "score": 0.0,
    }
