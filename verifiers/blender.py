"""Verifiers for Blender scenes, one per task kind, on scene states extracted by a trusted process.

A scene state is the plain data of ``toolgym.envs.blender.scene.scene_state``: objects by name
with world transforms (m, unit quaternions), evaluated meshes (m), materials (linear RGB),
shape-key values and lights, and, for material and lighting tasks, Cycles renders. Every
verifier returns a :class:`VerifierReport` with a score in [0, 1] and checks whose messages name
what is off (which object, which parameter, by how much).

Each parameter's error ``e`` counts through ``1 / (1 + (e / tolerance)²)``: 1 when exact, 0.5 at
the tolerance, falling smoothly, so a step towards the goal always pays. Kinds:

- ``modelling`` and ``procedural``: the union of the scene's meshes against the goal's: exact
  volumetric IoU (manifold3d; objects that are not closed are left out of it, and the report says
  so) and surface metrics (``toolgym.verifiers.geometry``). Score IoU^½ × soft F^½.
- ``placement``: per goal object, matched by name: position error over the goal scene's size,
  rotation angle (deg), relative scale error. Score: the mean over objects of the product.
- ``material``: per goal object's first material: base colour as CIE76 ΔE in Lab, roughness,
  metallic, emission strength; with renders, the photometric loss scores a fifth.
- ``shape_keys``: the evaluated mesh's mean vertex error over the object's diagonal.
- ``lighting``: per goal light, by name: type, energy (log ratio), colour ΔE, position error over
  the scene size; with renders (Cycles), the photometric loss scores 30 %.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import trimesh

from toolgym.verifiers.geometry import ReferenceSurface, _manifold
from toolgym.verifiers.images import photometric_loss
from toolgym.verifiers.report import VerifierReport

KINDS = ("modelling", "placement", "material", "shape_keys", "lighting", "procedural")
GEOMETRY_KINDS = ("modelling", "procedural")
SAMPLES = {"cheap": 2048, "exact": 8192}
FSCORE_THRESHOLD = 0.01  # of the goal's bounding-box diagonal
# Tolerances (an error equal to one halves that term of the score) and pass thresholds.
TOLERANCES = {
    "position_error": 0.02,  # of the scene's size
    "rotation_error_deg": 5.0,
    "scale_error": 0.05,
    "delta_e": 5.0,
    "roughness_error": 0.1,
    "metallic_error": 0.1,
    "emission_error": 0.2,
    "vertex_error": 0.005,  # of the object's diagonal
    "energy_error": 0.15,  # |ln(energy / goal energy)|
    "light_delta_e": 5.0,
    "light_position_error": 0.05,
    "photometric_loss": 0.004,
}
DEFAULT_THRESHOLDS = {
    "modelling": {"iou": 0.95, "soft_fscore": 0.9, "deviation_ratio": 0.02},
    "procedural": {"iou": 0.95, "soft_fscore": 0.9, "deviation_ratio": 0.02},
    "placement": {"position_error": 0.01, "rotation_error_deg": 2.0, "scale_error": 0.02},
    "material": {
        "delta_e": 2.0,
        "roughness_error": 0.03,
        "metallic_error": 0.03,
        "emission_error": 0.05,
    },
    "shape_keys": {"vertex_error": 0.002},
    "lighting": {
        "energy_error": 0.05,
        "light_delta_e": 2.0,
        "light_position_error": 0.02,
        "light_type": 1.0,
    },
}
HIGHER_IS_BETTER = frozenset({"iou", "fscore", "soft_fscore", "light_type"})
# A scene passes with every threshold met and at least this score; a geometry's score is its
# similarity, so a pass there means near-identical surfaces (a bevel's segment count shows).
PASS_SCORE = {"modelling": 0.99, "procedural": 0.99}
DEFAULT_PASS_SCORE = 0.75


def term(error: float, tolerance: float) -> float:
    """``1 / (1 + (error / tolerance)²)``: 1 at no error, ½ at the tolerance."""
    if not math.isfinite(error):
        return 0.0
    return 1.0 / (1.0 + (error / tolerance) ** 2)


def delta_e(rgb_a: Any, rgb_b: Any) -> float:
    """CIE76 colour difference of two linear-RGB colours (D65), in ΔE units (2.3: just visible)."""
    return float(np.linalg.norm(_lab(rgb_a) - _lab(rgb_b)))


def _lab(rgb: Any) -> np.ndarray:
    linear = np.clip(np.asarray(rgb, dtype=np.float64)[:3], 0.0, None)
    xyz = (
        np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
        @ linear
        / np.array([0.95047, 1.0, 1.08883])
    )
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def scene_mesh(state: dict[str, Any]) -> trimesh.Trimesh:
    """Every mesh object's evaluated triangles, in world coordinates, as one mesh."""
    parts = [o for o in state["objects"].values() if o["type"] == "MESH" and len(o["faces"])]
    if not parts:
        return trimesh.Trimesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), process=False)
    offsets = np.cumsum([0] + [len(o["vertices"]) for o in parts[:-1]])
    vertices = np.concatenate([np.asarray(o["vertices"]) for o in parts])
    faces = np.concatenate(
        [np.asarray(o["faces"]) + k for o, k in zip(parts, offsets, strict=True)]
    )
    return trimesh.Trimesh(vertices, faces, process=False)


def _solid(state: dict[str, Any]) -> tuple[Any, list[str]]:
    """The union of the scene's closed mesh objects (manifold3d), and the names of open ones."""
    import manifold3d

    solid, open_objects = manifold3d.Manifold(), []
    for name, o in sorted(state["objects"].items()):
        if o["type"] != "MESH" or not len(o["faces"]):
            continue
        try:
            merged = trimesh.Trimesh(o["vertices"], o["faces"], process=True)
            solid = solid + _manifold(merged)
        except ValueError:
            open_objects.append(name)
    return solid, open_objects


@dataclasses.dataclass
class Goal:
    """A goal scene, with what every comparison against it reuses (meshes, samples, size)."""

    kind: str
    state: dict[str, Any]
    thresholds: dict[str, float]
    images: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown task kind {self.kind!r}; known: {', '.join(KINDS)}")
        self.thresholds = {**DEFAULT_THRESHOLDS[self.kind], **self.thresholds}
        self.mesh = scene_mesh(self.state)
        self.size = float(np.linalg.norm(self.mesh.extents)) if len(self.mesh.faces) else 1.0
        self._surfaces: dict[str, ReferenceSurface] = {}
        self._solid: Any = None

    def surface(self, tier: str) -> ReferenceSurface:
        if tier not in self._surfaces:
            self._surfaces[tier] = ReferenceSurface(self.mesh, SAMPLES[tier], 0, FSCORE_THRESHOLD)
        return self._surfaces[tier]

    def solid(self) -> Any:
        if self._solid is None:
            self._solid = _solid(self.state)[0]
        return self._solid


def verify_scene(
    candidate: dict[str, Any] | None, goal: Goal, tier: str = "cheap",
    images: np.ndarray | None = None,
) -> VerifierReport:  # fmt: skip
    """Score a candidate scene state against ``goal`` (``images``: the candidate's renders, for
    kinds scored by renders too). ``None`` (no scene could be read) scores 0 with a check
    saying so."""
    if candidate is None:
        check = {"scene": {"ok": False, "message": "no scene could be read"}}
        return VerifierReport({}, 0.0, False, tier, checks=check)
    try:
        metrics, checks, score = _VERIFIERS[goal.kind](candidate, goal, tier)
        if images is not None and goal.images is not None and goal.kind in _IMAGE_WEIGHT:
            loss = photometric_loss(images, goal.images)
            metrics["photometric_loss"] = loss
            weight = _IMAGE_WEIGHT[goal.kind]
            score = score ** (1 - weight) * term(loss, TOLERANCES["photometric_loss"]) ** weight
    except (ValueError, KeyError, TypeError) as exc:  # a malformed state: unknown, not 0
        return VerifierReport({}, None, False, tier, errors=[f"{type(exc).__name__}: {exc}"])
    met = _thresholds(metrics, goal.thresholds, checks)
    score = float(np.clip(score, 0.0, 1.0))
    passed = (
        met
        and all(c.get("ok") is not False for c in checks.values())
        and score >= PASS_SCORE.get(goal.kind, DEFAULT_PASS_SCORE)
    )
    return VerifierReport(metrics, score, passed, tier, checks=checks)


_IMAGE_WEIGHT = {"material": 0.2, "lighting": 0.3}


def _thresholds(
    metrics: dict[str, float], thresholds: dict[str, float], checks: dict[str, Any]
) -> bool:
    met = True
    for name, bound in thresholds.items():
        value = metrics.get(name)
        if value is None:
            continue  # a threshold of another kind (a task file's default IoU, say)
        ok = value >= bound if name in HIGHER_IS_BETTER else value <= bound
        met = met and ok
    return met


Result = tuple[dict[str, float], dict[str, dict[str, Any]], float]


def _geometry(candidate: dict[str, Any], goal: Goal, tier: str) -> Result:
    mesh = scene_mesh(candidate)
    checks: dict[str, dict[str, Any]] = {}
    if not len(mesh.faces):
        checks["meshes"] = {"ok": False, "message": "the scene has no mesh with faces"}
        return {"iou": 0.0, "fscore": 0.0, "soft_fscore": 0.0}, checks, 0.0
    surface = goal.surface(tier)
    measured = surface.metrics(mesh, SAMPLES[tier], 0, exact_count=256)
    metrics = {k: measured[k] for k in ("chamfer", "fscore", "soft_fscore", "deviation")}
    metrics["deviation_ratio"] = measured["deviation"] / goal.size
    solid, open_objects = _solid(candidate)
    iou = None
    if open_objects:
        listed = ", ".join(repr(n) for n in open_objects[:4])
        checks["closed"] = {
            "ok": None,
            "message": f"not closed, left out of the IoU: {listed}",
        }
    target = goal.solid()
    union = solid.volume() + target.volume() - (solid ^ target).volume()
    if union > 0:
        iou = float(np.clip((solid ^ target).volume() / union, 0.0, 1.0))
        metrics["iou"] = iou
    metrics["volume"], metrics["goal_volume"] = solid.volume(), target.volume()
    extent = mesh.extents / np.maximum(goal.mesh.extents, 1e-9)
    if np.abs(extent - 1).max() > 0.02:
        axes = "xyz"
        worst = int(np.argmax(np.abs(extent - 1)))
        checks["size"] = {"ok": False, "message": f"the scene is {extent[worst]:.2f}× the goal's "
                          f"size along {axes[worst]}"}  # fmt: skip
    soft = measured["soft_fscore"]
    if iou is not None and iou < goal.thresholds["iou"]:
        volumes = f"volume {solid.volume():.3g} m³, goal {target.volume():.3g} m³"
        message = f"the solids overlap the goal's by IoU {iou:.2f} ({volumes})"
        checks["volume"] = {"ok": False, "message": message}
    if (
        soft < goal.thresholds["soft_fscore"]
        or metrics["deviation_ratio"] > goal.thresholds["deviation_ratio"]
    ):
        message = f"surfaces lie up to {measured['deviation']:.2g} m from the goal's"
        checks["surface"] = {"ok": False, "message": message}
    score = soft**0.5 * (iou if iou is not None else soft) ** 0.5
    return metrics, checks, score


def _mesh_objects(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: o for n, o in state["objects"].items() if o["type"] == "MESH"}


def _missing(name: str, checks: dict[str, Any]) -> None:
    checks[f"object {name}"] = {"ok": False, "message": f"object {name!r} is missing"}


def _rotation_deg(a: Any, b: Any) -> float:
    # From the chord between unit quaternions, ‖a − b‖ = 2 sin(θ/4): accurate near 0, where
    # acos of the dot product is not.
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    chord = min(float(np.linalg.norm(a - b)), float(np.linalg.norm(a + b)))
    return math.degrees(4 * math.asin(min(chord / 2, 1.0)))


def _placement(candidate: dict[str, Any], goal: Goal, tier: str) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    worst = {"position_error": 0.0, "rotation_error_deg": 0.0, "scale_error": 0.0}
    scores = []
    for name, want in sorted(_mesh_objects(goal.state).items()):
        have = candidate["objects"].get(name)
        if have is None:
            _missing(name, checks)
            worst = dict.fromkeys(worst, math.inf)
            scores.append(0.0)
            continue
        offset = np.subtract(have["location"], want["location"])
        errors = {
            "position_error": float(np.linalg.norm(offset)) / goal.size,
            "rotation_error_deg": _rotation_deg(have["rotation"], want["rotation"]),
            "scale_error": float(
                np.max(np.abs(np.subtract(have["scale"], want["scale"])) / np.abs(want["scale"]))
            ),
        }
        scores.append(math.prod(term(e, TOLERANCES[k]) for k, e in errors.items()))
        off = []
        if errors["position_error"] > goal.thresholds["position_error"]:
            axis = "xyz"[int(np.argmax(np.abs(offset)))]
            off.append(f"{np.linalg.norm(offset):.2f} m from its goal position (most along {axis})")
        if errors["rotation_error_deg"] > goal.thresholds["rotation_error_deg"]:
            off.append(f"rotated {errors['rotation_error_deg']:.0f}° away from its goal")
        if errors["scale_error"] > goal.thresholds["scale_error"]:
            off.append(f"scaled {errors['scale_error']:.0%} off")
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r} is " + ", ".join(off)}
        worst = {k: max(v, errors[k]) for k, v in worst.items()}
    return worst, checks, float(np.mean(scores)) if scores else 0.0


def _material(candidate: dict[str, Any], goal: Goal, tier: str) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    keys = ("delta_e", "roughness_error", "metallic_error", "emission_error")
    worst = dict.fromkeys(keys, 0.0)
    scores = []
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want["materials"]:
            continue
        have = candidate["objects"].get(name)
        if have is None or not have["materials"]:
            _missing(name, checks) if have is None else checks.__setitem__(
                f"object {name}", {"ok": False, "message": f"{name!r} has no material"}
            )
            worst = dict.fromkeys(keys, math.inf)
            scores.append(0.0)
            continue
        a, b = have["materials"][0], want["materials"][0]
        errors = {
            "delta_e": delta_e(a["base_color"], b["base_color"]),
            "roughness_error": abs(a["roughness"] - b["roughness"]),
            "metallic_error": abs(a["metallic"] - b["metallic"]),
            "emission_error": abs(a["emission_strength"] - b["emission_strength"])
            / max(1.0, b["emission_strength"]),
        }
        scores.append(math.prod(term(e, TOLERANCES[k]) for k, e in errors.items()))
        off = [
            f"{label} is off by {errors[k]:.2g}" + (" ΔE" if k == "delta_e" else "")
            for k, label in zip(
                keys, ("base colour", "roughness", "metallic", "emission"), strict=True
            )
            if errors[k] > goal.thresholds[k]
        ]
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r}: " + ", ".join(off)}
        worst = {k: max(v, errors[k]) for k, v in worst.items()}
    return worst, checks, float(np.mean(scores)) if scores else 0.0


def _shape_keys(candidate: dict[str, Any], goal: Goal, tier: str) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    worst, scores = 0.0, []
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want.get("shape_keys"):
            continue
        have = candidate["objects"].get(name)
        if have is None:
            _missing(name, checks)
            worst, scores = math.inf, [*scores, 0.0]
            continue
        a, b = np.asarray(have["vertices"]), np.asarray(want["vertices"])
        if a.shape != b.shape:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r} has {len(a)} vertices "
                                        f"where the goal has {len(b)}"}  # fmt: skip
            worst, scores = math.inf, [*scores, 0.0]
            continue
        diagonal = float(np.linalg.norm(np.ptp(b, axis=0))) or 1.0
        error = float(np.linalg.norm(a - b, axis=1).mean()) / diagonal
        scores.append(term(error, TOLERANCES["vertex_error"]))
        if error > goal.thresholds["vertex_error"]:
            keys = want["shape_keys"]
            off = [k for k in keys if abs(have.get("shape_keys", {}).get(k, 0.0) - keys[k]) > 0.01]
            which = f" (keys off: {', '.join(off)})" if off else ""
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r}'s vertices are "
                                        f"{error:.1%} of its size off{which}"}  # fmt: skip
        worst = max(worst, error)
    return {"vertex_error": worst}, checks, float(np.mean(scores)) if scores else 0.0


def _lighting(candidate: dict[str, Any], goal: Goal, tier: str) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    keys = ("energy_error", "light_delta_e", "light_position_error")
    worst = {**dict.fromkeys(keys, 0.0), "light_type": 1.0}
    scores = []
    lights = {n: o for n, o in goal.state["objects"].items() if o["type"] == "LIGHT"}
    for name, want in sorted(lights.items()):
        have = candidate["objects"].get(name)
        if have is None or have["type"] != "LIGHT":
            _missing(name, checks)
            worst = {**dict.fromkeys(keys, math.inf), "light_type": 0.0}
            scores.append(0.0)
            continue
        a, b = have["light"], want["light"]
        same_type = a["type"] == b["type"]
        errors = {
            "energy_error": abs(math.log(max(a["energy"], 1e-6) / max(b["energy"], 1e-6))),
            "light_delta_e": delta_e(a["color"], b["color"]),
            "light_position_error": float(
                np.linalg.norm(np.subtract(have["location"], want["location"]))
            )
            / goal.size,
        }
        scores.append(
            (1.0 if same_type else 0.25)
            * math.prod(term(e, TOLERANCES[k]) for k, e in errors.items())
        )
        off = [] if same_type else [f"a {a['type'].lower()} light where the goal has a "
                                    f"{b['type'].lower()} light"]  # fmt: skip
        if errors["energy_error"] > goal.thresholds["energy_error"]:
            ratio = a["energy"] / max(b["energy"], 1e-6)
            off.append(f"{'too bright' if ratio > 1 else 'too dim'} (×{ratio:.2g})")
        if errors["light_delta_e"] > goal.thresholds["light_delta_e"]:
            off.append(f"colour off by {errors['light_delta_e']:.2g} ΔE")
        if errors["light_position_error"] > goal.thresholds["light_position_error"]:
            off.append(f"{errors['light_position_error'] * goal.size:.2f} m from its goal position")
        if off:
            checks[f"light {name}"] = {"ok": False, "message": f"{name!r}: " + ", ".join(off)}
        worst = {k: max(v, errors[k]) for k, v in worst.items() if k in keys} | {
            "light_type": min(worst["light_type"], float(same_type))
        }
    return worst, checks, float(np.mean(scores)) if scores else 0.0


_VERIFIERS = {
    "modelling": _geometry,
    "procedural": _geometry,
    "placement": _placement,
    "material": _material,
    "shape_keys": _shape_keys,
    "lighting": _lighting,
}
