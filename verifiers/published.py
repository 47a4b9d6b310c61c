"""The metric convention of published CAD-reconstruction tables (CAD-Recode, cadrille).

Per sample: each mesh is centred on its bounding box and scaled so its largest side is 1; 8,192
points are sampled on each surface, independently (as cadrille's ``evaluate.py`` does: identical
parts read the protocol's noise floor, not 0); Chamfer distance is the mean *squared*
nearest-neighbour distance from candidate to reference plus the same from reference to candidate,
times 10³; IoU is by exact mesh boolean. A sample whose candidate is missing or not a valid closed
solid has no result; the invalidity ratio is the share of such samples. Tables report the median
and the mean over the valid samples.
"""

from __future__ import annotations

import dataclasses
import statistics

import numpy as np
import trimesh

from toolgym.verifiers.geometry import distances, iou_mesh, normalized, sample_surface, validity

POINTS = 8192


@dataclasses.dataclass(frozen=True)
class PublishedSample:
    """One sample's result; ``None`` fields mean the sample is invalid."""

    chamfer_x1e3: float | None
    iou: float | None

    @property
    def valid(self) -> bool:
        return self.chamfer_x1e3 is not None and self.iou is not None


def published_sample(
    candidate: trimesh.Trimesh | None, reference: trimesh.Trimesh, seed: int = 0
) -> PublishedSample:
    """Chamfer ×10³ and IoU of one candidate against its reference, in the published convention."""
    if candidate is None or not validity(candidate)["valid"]:
        return PublishedSample(None, None)
    a, b = normalized(candidate), normalized(reference)
    # Two streams of one seed: independent samplings, reproducible for the seed.
    streams = np.random.SeedSequence(seed).spawn(2)
    to_ref, to_cand = distances(
        sample_surface(a, POINTS, streams[0]), sample_surface(b, POINTS, streams[1])
    )
    try:
        iou = iou_mesh(a, b)
    except ValueError:
        return PublishedSample(None, None)
    return PublishedSample(float(((to_ref**2).mean() + (to_cand**2).mean()) * 1e3), iou)


def published_summary(samples: list[PublishedSample]) -> dict[str, float | int | None]:
    """Median and mean Chamfer ×10³ and IoU over valid samples, and the invalidity ratio."""
    valid = [s for s in samples if s.valid]
    summary: dict[str, float | int | None] = {
        "samples": len(samples),
        "invalidity_ratio": 1 - len(valid) / len(samples) if samples else 0.0,
    }
    for name in ("chamfer_x1e3", "iou"):
        values = [getattr(s, name) for s in valid]
        summary[f"{name}_median"] = statistics.median(values) if values else None
        summary[f"{name}_mean"] = statistics.fmean(values) if values else None
    return summary
