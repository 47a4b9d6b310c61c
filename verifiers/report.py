"""The verifier report: metrics, score, verdict, tier and errors, serialisable to JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

TIERS = ("cheap", "exact")
# Metrics where lower is better; thresholds on them are maxima, on all others minima.
LOWER_IS_BETTER = frozenset(
    {"chamfer", "hausdorff", "volume_error", "area_error", "bbox_error", "photometric_loss"}
)


@dataclasses.dataclass
class VerifierReport:
    """What a verifier concluded about one candidate.

    Attributes:
        metrics: metric name to value (``inf`` where undefined, e.g. Chamfer to an empty part).
        score: composite score in [0, 1], or ``None`` if the verifier itself failed.
        passed: every threshold met and no error.
        tier: ``"cheap"`` (per step) or ``"exact"`` (end of episode).
        errors: what went wrong inside the verifier; non-empty means the score is unknown, which
            is different from a score of 0.
        validity: soundness checks of the candidate (see ``geometry.validity``).
        checks: the pass criteria beyond the thresholds, each ``{"ok": bool or None (not
            checked), "message": ...}``: ``valid``, ``bodies``, ``cavities``, ``genus``,
            ``deviation``, ``features``; and ``brep_crosscheck`` or ``brep_mismatch`` when a
            B-Rep boolean cross-checked the IoU (informational); ``read_as_solid`` when a part
            file held closed shells that were sewn into solids to be measured (informational).
    """

    metrics: dict[str, float]
    score: float | None
    passed: bool
    tier: str
    errors: list[str] = dataclasses.field(default_factory=list)
    validity: dict[str, Any] = dataclasses.field(default_factory=dict)
    checks: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["metrics"] = {k: _json_number(v) for k, v in self.metrics.items()}
        data["validity"] = {k: _json_number(v) for k, v in self.validity.items()}
        data["checks"] = {
            name: {k: _json_number(v) for k, v in check.items()}
            for name, check in self.checks.items()
        }
        return data

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifierReport:
        """Inverse of :meth:`to_dict` (``"inf"`` strings become floats again)."""
        data = dict(data)
        data["metrics"] = {k: _from_json_number(v) for k, v in data["metrics"].items()}
        data["validity"] = {k: _from_json_number(v) for k, v in data.get("validity", {}).items()}
        data["checks"] = {
            name: {k: _from_json_number(v) for k, v in check.items()}
            for name, check in data.get("checks", {}).items()
        }
        return cls(**data)

    def failed_checks(self) -> list[str]:
        """What the failing pass criteria say, one message each."""
        return [
            check["message"]
            for name, check in self.checks.items()
            if check.get("ok") is False and name != "valid" and check.get("message")
        ]

    def summary(self) -> str:
        """One line for an agent's feedback."""
        if self.errors:
            return f"verifier error: {self.errors[0]}"
        shown = ", ".join(f"{k} {v:.3g}" for k, v in self.metrics.items() if k in _HEADLINE)
        verdict = "pass" if self.passed else "not yet"
        failed = "; ".join(self.failed_checks())
        return f"score {self.score:.3f} ({verdict}): {shown}" + (f"; {failed}" if failed else "")


_HEADLINE = (
    "iou", "soft_fscore", "deviation",  # parts and meshes
    "constraints_met",  # game scenes
    "position_error", "rotation_error_deg", "delta_e", "vertex_error", "energy_error",  # Blender
)  # fmt: skip


def _json_number(value: Any) -> Any:
    """JSON has no inf or NaN: write them as strings that ``float()`` reads back."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _from_json_number(value: Any) -> Any:
    return float(value) if value in ("inf", "-inf", "nan") else value


def check_thresholds(metrics: dict[str, float], thresholds: dict[str, float]) -> bool:
    """Whether every threshold holds: a maximum for lower-is-better metrics, else a minimum."""
    for name, bound in thresholds.items():
        value = metrics.get(name)
        if value is None or math.isnan(value):
            return False
        if (value > bound) if name in LOWER_IS_BETTER else (value < bound):
            return False
    return True


def describe_invalid(validity: dict[str, Any]) -> str:
    """Why a candidate is not a sound solid, in words, from the checks of ``geometry.validity``:
    empty, not finite, not watertight, inconsistent winding, self-intersecting, inside-out or zero
    volume (several are joined with commas)."""
    if validity.get("empty"):
        return "empty (no faces)"
    if validity.get("finite") is False:
        return "not finite (NaN or infinite coordinates)"
    reasons = []
    if validity.get("watertight") is False:
        reasons.append("not watertight (open or non-manifold edges)")
    elif validity.get("winding_consistent") is False:
        reasons.append("inconsistent face winding")
    if validity.get("self_intersecting"):
        reasons.append("self-intersecting")
    if validity.get("watertight") and float(validity.get("volume", 0.0)) <= 0.0:
        reasons.append("inside-out or zero volume")
    if validity.get("defects"):  # what a B-Rep said of itself (CAD parts)
        reasons.append(str(validity["defects"]))
    return ", ".join(reasons) or "fails the validity checks"
