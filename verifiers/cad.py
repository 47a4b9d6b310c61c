"""The CAD verifier: a candidate part against a reference part, to a :class:`VerifierReport`.

Two tiers. ``cheap`` runs every environment step: ray-cast IoU at 128 columns and 2,048 surface
samples. ``exact`` runs at the end of an episode and in ``toolgym verify``: IoU by B-Rep booleans
when both solids are known (else by mesh booleans) and 8,192 surface samples.

The composite score is hard to fool by design:

    score = valid × bodies × IoU^w_iou × exp(−(chamfer − floor) / 0.01)^w_chamfer
            × (F / F_ceiling)^w_fscore

with the weights normalised to sum to 1 (default 0.6, 0.2, 0.2). ``floor`` and ``F_ceiling`` are
the Chamfer distance and F-score between two samplings of the reference itself: the sampling noise
at this point count, which a perfect candidate cannot beat. ``valid`` is 0 unless the
candidate is a sound closed solid; ``bodies`` = min(n, n_ref) / max(n, n_ref) compares the counts of
disjoint bodies; and the geometric mean makes any zero term zero the score. So a zero-thickness
shell with the right surface (IoU 0), an empty result, a huge enclosing box (tiny IoU, far surface),
NaN vertices (invalid) and many tiny disjoint pieces (body count) all score low.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toolgym.verifiers import geometry
from toolgym.verifiers.occupancy import column_measures
from toolgym.verifiers.parts import Part
from toolgym.verifiers.report import TIERS, VerifierReport, check_thresholds

DEFAULT_WEIGHTS = {"iou": 0.6, "chamfer": 0.2, "fscore": 0.2}
DEFAULT_THRESHOLDS = {"iou": 0.95}
CHAMFER_SCALE = 0.01  # normalised Chamfer at which its score term is 1/e
TIER_SETTINGS = {
    "cheap": {"points": 2048, "resolution": 128},
    "exact": {"points": geometry.DEFAULT_POINTS, "resolution": None},
}
ALIGNMENTS = ("none", "normalized")


def composite_score(
    metrics: dict[str, float], valid: bool, weights: dict[str, float] | None = None
) -> float:
    """The score in [0, 1] from the ``iou``, ``chamfer``, ``fscore`` and body-count metrics."""
    weights = check_weights(weights or DEFAULT_WEIGHTS)
    if not valid:
        return 0.0
    excess = max(0.0, metrics["chamfer"] - metrics.get("chamfer_floor", 0.0))
    terms = {
        "iou": metrics["iou"],
        "chamfer": math.exp(-excess / CHAMFER_SCALE),
        "fscore": min(1.0, metrics["fscore"] / max(metrics.get("fscore_ceiling", 1.0), 1e-9)),
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
    try:
        metrics, valid = _measure(candidate, reference, tier, alignment, seed)
        score = composite_score(metrics, bool(valid["valid"]), weights)
    except Exception as exc:  # a verifier failure is an error, never a silent 0
        return VerifierReport({}, None, False, tier, [f"{type(exc).__name__}: {exc}"], {})
    metrics["score"] = score
    passed = bool(valid["valid"]) and check_thresholds(metrics, thresholds)
    return VerifierReport(metrics, score, passed, tier, [], valid)


def _measure(
    candidate: Part, reference: Part, tier: str, alignment: str, seed: int
) -> tuple[dict[str, float], dict[str, Any]]:
    settings = TIER_SETTINGS[tier]
    if alignment == "normalized":
        candidate, reference = candidate.normalized(), reference.normalized()
    cand, ref = candidate.mesh, reference.mesh
    closed = bool(len(cand.faces)) and bool(np.isfinite(cand.vertices).all()) and cand.is_watertight
    if tier == "cheap" and closed:
        # One ray cast gives both the IoU and the winding numbers the validity check needs.
        measures = column_measures(cand, ref, settings["resolution"])
        valid = geometry.validity(cand, anomalous_volume=measures["anomalous_a"])
        iou = measures["iou"]
    else:
        valid = geometry.validity(cand)
        iou = None
    if not valid["valid"]:
        iou = 0.0
    elif iou is None and candidate.shape is not None and reference.shape is not None:
        iou = geometry.iou_brep(candidate.shape, reference.shape)
    elif iou is None:
        iou = geometry.iou_mesh(cand, ref)
    metrics = {"iou": iou}
    if valid["finite"]:
        surface = reference.surface(settings["points"], seed, geometry.DEFAULT_FSCORE_THRESHOLD)
        metrics.update(geometry.surface_metrics(cand, surface, settings["points"], seed))
    else:
        metrics.update(
            chamfer=math.inf, fscore=0.0, hausdorff=math.inf, chamfer_floor=0.0, fscore_ceiling=1.0
        )
    metrics.update(
        volume_error=geometry.relative_error(float(valid["volume"]), reference.volume),
        area_error=geometry.relative_error(float(cand.area), float(ref.area)),
        bbox_error=geometry.bbox_error(cand, ref) if valid["finite"] else math.inf,
        bodies=float(valid["bodies"]),
        reference_bodies=float(reference.bodies),
    )
    return metrics, valid


def _empty_metrics(reference: Part) -> dict[str, float]:
    return {
        "iou": 0.0, "chamfer": math.inf, "fscore": 0.0, "hausdorff": math.inf,
        "volume_error": 1.0, "area_error": 1.0, "bbox_error": math.inf, "bodies": 0.0,
        "reference_bodies": float(reference.bodies), "score": 0.0,
    }  # fmt: skip
