"""Verifiers for Blender scenes, one per task kind, on scene states extracted by a trusted process.

A scene state is the plain data of ``toolgym.envs.blender.scene.scene_state``: objects by name
with world transforms (m, unit quaternions), evaluated meshes (m), materials (linear RGB),
shape-key values and lights, and, for material and lighting tasks, Cycles renders. Every
verifier returns a :class:`VerifierReport` with a score in [0, 1] and checks whose messages name
what is off (which object, which parameter, by how much).

Each parameter's error ``e`` counts through ``1 / (1 + (e / tolerance)²)``: 1 when exact, 0.5 at
the tolerance, falling smoothly, so a step towards the goal always pays. Kinds:

Only shown objects count (``shown`` in the state: not in an excluded collection, not hidden in
the viewport or from renders), as a designer sees the scene.

- ``modelling`` and ``procedural``: the union of the scene's meshes against the goal's: exact
  volumetric IoU (manifold3d; objects that are not closed are left out of it, and the report says
  so) and surface metrics (``toolgym.verifiers.geometry``). Score (IoU × soft F)⁴: a near miss
  (a missing leg, an array one short) costs a third or more, a pass needs ≥ 0.92.
- ``placement``: per goal mesh, matched by name, its evaluated world vertices against the goal's
  (:func:`pose_errors`: centroid offset over the scene's size, rotation (deg), relative scale and
  leftover of the best linear fit; :func:`surface_errors` when the vertex counts differ), so
  applied scale, parents, delta transforms and quaternions read as equal. Score: the mean over
  goal objects of the product, times ``n_goal / (n_goal + n_extra)`` for meshes it lacks.
- ``material``: per goal object, the surface that the node graph of the material on most of
  its faces reduces to (base colour as CIE76 ΔE in Lab, roughness, metallic, emitted light,
  transmission, alpha), as it shows (:func:`material_errors`: a glow that fills a channel hides
  what the surface reflects there, so an Emission shader alone can equal a glowing Principled
  BSDF); the renders score 30 % (:func:`render_delta_e` and the photometric
  loss), and all of it when a graph does not reduce (a texture), which the report says. When
  every graph reduces, the renders count only the ΔE beyond the goal's own resampling noise
  (``render_noise``): equal surfaces sampled with other random numbers are not blamed for it.
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
    "transmission_error": 0.1,
    "alpha_error": 0.1,
    "shape_error": 0.01,  # of the scene's size: surfaces apart once the pose is fitted
    "render_delta_e": 3.0,  # CIE76 ΔE of the renders' most different pixels
    "vertex_error": 0.005,  # of the object's diagonal
    "energy_error": 0.15,  # |ln(energy / goal energy)|
    "light_delta_e": 5.0,
    "light_position_error": 0.05,
    "photometric_loss": 0.004,
}
DEFAULT_THRESHOLDS = {
    "modelling": {"iou": 0.95, "soft_fscore": 0.9, "deviation_ratio": 0.02},
    "procedural": {"iou": 0.95, "soft_fscore": 0.9, "deviation_ratio": 0.02},
    "placement": {
        "position_error": 0.01,
        "rotation_error_deg": 2.0,
        "scale_error": 0.02,
        "shape_error": 0.005,
        "extra_objects": 0,
    },
    "material": {
        "delta_e": 2.0,
        "roughness_error": 0.03,
        "metallic_error": 0.03,
        "emission_error": 0.05,
        "transmission_error": 0.03,
        "alpha_error": 0.03,
        "render_delta_e": 2.0,
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
# A scene passes with every threshold met and at least this score; a geometry's score is
# (IoU · soft F)⁴, so a pass there means near-identical surfaces (a bevel's segment count shows)
# and a near miss (a table without a leg, an array one short) costs a third or more.
GEOMETRY_POWER = 4
PASS_SCORE = {"modelling": 0.92, "procedural": 0.92}
DEFAULT_PASS_SCORE = 0.75


def term(error: float, tolerance: float) -> float:
    """``1 / (1 + (error / tolerance)²)``: 1 at no error, ½ at the tolerance."""
    if not math.isfinite(error):
        return 0.0
    return 1.0 / (1.0 + (error / tolerance) ** 2)


def delta_e(rgb_a: Any, rgb_b: Any) -> float:
    """CIE76 colour difference of two linear-RGB colours (D65), in ΔE units (2.3: just visible)."""
    return float(np.linalg.norm(_lab(rgb_a) - _lab(rgb_b)))


_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])


def _lab(rgb: Any) -> np.ndarray:
    linear = np.clip(np.asarray(rgb, dtype=np.float64)[:3], 0.0, None)
    xyz = _XYZ @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def shown_objects(state: dict[str, Any], kind: str = "MESH") -> dict[str, dict[str, Any]]:
    """The objects of ``kind`` a designer sees: hidden helpers and objects in excluded
    collections (``shown`` false) are left out."""
    return {n: o for n, o in state["objects"].items() if o["type"] == kind and o.get("shown", True)}


def scene_mesh(state: dict[str, Any]) -> trimesh.Trimesh:
    """Every mesh object's evaluated triangles, in world coordinates, as one mesh."""
    parts = [o for o in shown_objects(state).values() if len(o["faces"])]
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
    for name, o in sorted(shown_objects(state).items()):
        if not len(o["faces"]):
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
    # The goal's renders with another sampling seed: the noise floor of render comparisons.
    resampled: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown task kind {self.kind!r}; known: {', '.join(KINDS)}")
        self.thresholds = {**DEFAULT_THRESHOLDS[self.kind], **self.thresholds}
        self.mesh = scene_mesh(self.state)
        self.size = float(np.linalg.norm(self.mesh.extents)) if len(self.mesh.faces) else 1.0
        self._surfaces: dict[str, ReferenceSurface] = {}
        self._solid: Any = None
        self._noise: float | None = None

    def surface(self, tier: str) -> ReferenceSurface:
        if tier not in self._surfaces:
            self._surfaces[tier] = ReferenceSurface(self.mesh, SAMPLES[tier], 0, FSCORE_THRESHOLD)
        return self._surfaces[tier]

    def render_noise(self) -> float | None:
        """:func:`render_delta_e` of the goal's renders against themselves with another
        sampling seed: how far path-tracing noise alone moves them (``None`` without both)."""
        if self.images is None or self.resampled is None:
            return None
        if self._noise is None:
            self._noise = render_delta_e(self.resampled, self.images)
        return self._noise

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
        render = None
        if images is not None and goal.images is not None and goal.kind in _IMAGE_WEIGHT:
            render = {
                "photometric_loss": photometric_loss(images, goal.images),
                "render_delta_e": render_delta_e(images, goal.images),
            }
        metrics, checks, score = _VERIFIERS[goal.kind](candidate, goal, tier, render)
        if render is not None:
            metrics |= render
            weight = _IMAGE_WEIGHT[goal.kind]
            seen = render | {"render_delta_e": max(
                0.0, render["render_delta_e"] - metrics.get("render_noise", 0.0))}  # fmt: skip
            score = score ** (1 - weight) * _render_term(seen) ** weight
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


_IMAGE_WEIGHT = {"material": 0.3, "lighting": 0.3}
RENDER_WORST = 0.05  # render_delta_e averages the 5 % most different pixels


def _srgb_lab(image: np.ndarray) -> np.ndarray:
    srgb = np.asarray(image, dtype=np.float64)[..., :3] / 255.0
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ _XYZ.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1
    )


def render_delta_e(candidate: np.ndarray, reference: np.ndarray) -> float:
    """How different two sets of renders look where they differ most: the mean CIE76 ΔE of the
    :data:`RENDER_WORST` share of pixels that differ most, after 2×2 box averaging (which tames
    path-tracing noise). A surface a tenth of the views wide that is ΔE 10 off reads about 10;
    identical renders read 0. Images: uint8 sRGB (..., H, W, 3) of equal shapes."""
    a, b = np.asarray(candidate), np.asarray(reference)
    if a.shape != b.shape:
        raise ValueError(f"renders of shapes {a.shape} and {b.shape} cannot be compared")
    difference = np.linalg.norm(_srgb_lab(a) - _srgb_lab(b), axis=-1)
    height, width = difference.shape[-2] // 2 * 2, difference.shape[-1] // 2 * 2
    pooled = difference[..., :height, :width]
    pooled = pooled.reshape(*pooled.shape[:-2], height // 2, 2, width // 2, 2).mean(axis=(-3, -1))
    values = np.sort(pooled.reshape(-1))[::-1]
    return float(values[: max(1, round(len(values) * RENDER_WORST))].mean())


def _render_term(render: dict[str, float]) -> float:
    return (
        term(render["render_delta_e"], TOLERANCES["render_delta_e"]) ** 0.5
        * term(render["photometric_loss"], TOLERANCES["photometric_loss"]) ** 0.5
    )


def _thresholds(
    metrics: dict[str, float], thresholds: dict[str, float], checks: dict[str, Any]
) -> bool:
    met = True
    for name, bound in thresholds.items():
        value = metrics.get(name)
        if value is None:
            continue  # a threshold of another kind (a task file's default IoU, say)
        if name == "render_delta_e":  # beyond the goal's own noise (see _material)
            value = max(0.0, value - metrics.get("render_noise", 0.0))
        ok = value >= bound if name in HIGHER_IS_BETTER else value <= bound
        met = met and ok
    return met


Result = tuple[dict[str, float], dict[str, dict[str, Any]], float]
Render = dict[str, float] | None


def _geometry(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
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
    score = (soft * (iou if iou is not None else soft)) ** GEOMETRY_POWER
    return metrics, checks, score


def _mesh_objects(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return shown_objects(state, "MESH")


def _missing(name: str, checks: dict[str, Any]) -> None:
    checks[f"object {name}"] = {"ok": False, "message": f"object {name!r} is missing"}


def _rotation_deg(a: Any, b: Any) -> float:
    # From the chord between unit quaternions, ‖a − b‖ = 2 sin(θ/4): accurate near 0, where
    # acos of the dot product is not.
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    chord = min(float(np.linalg.norm(a - b)), float(np.linalg.norm(a + b)))
    return math.degrees(4 * math.asin(min(chord / 2, 1.0)))


def pose_errors(have: np.ndarray, want: np.ndarray, size: float) -> dict[str, float]:
    """How far a mesh's world vertices ``have`` are from the same mesh's ``want`` (same vertex
    order): the centroid's offset over ``size``, and the rotation (deg), relative scale and
    leftover distance over ``size`` of the linear map that fits one onto the other best.
    Any way of getting the same world geometry (applied scale, a parent, delta transforms,
    quaternions or Euler angles) reads 0; a mesh moved inside its object does not."""
    from scipy.linalg import polar

    have, want = np.asarray(have, np.float64), np.asarray(want, np.float64)
    a, b = have - have.mean(axis=0), want - want.mean(axis=0)
    gram = b.T @ b
    ridge = 1e-9 * max(float(np.trace(gram)), 1e-12)  # flat meshes: no stretch across them
    linear = np.linalg.solve(gram + ridge * np.eye(3), b.T @ a + ridge * np.eye(3)).T
    rotation, stretch = polar(linear)
    mirrored = np.linalg.det(linear) < 0
    scale = float(np.max(np.abs(np.linalg.eigvalsh((stretch + stretch.T) / 2) - 1)))
    turn = float(np.linalg.norm(rotation - np.eye(3))) / (2 * math.sqrt(2))
    leftover = np.linalg.norm(a - b @ linear.T, axis=1)
    return {
        "position_error": float(np.linalg.norm(have.mean(axis=0) - want.mean(axis=0))) / size,
        "rotation_error_deg": 180.0 if mirrored else math.degrees(2 * math.asin(min(turn, 1.0))),
        "scale_error": max(scale, 1.0) if mirrored else scale,
        "shape_error": float(leftover.mean()) / size,
    }


def _surface_points(o: dict[str, Any], count: int = 1024) -> np.ndarray:
    mesh = trimesh.Trimesh(o["vertices"], o["faces"], process=False)
    return trimesh.sample.sample_surface_even(mesh, count, seed=0)[0] if mesh.area > 0 else (
        np.asarray(o["vertices"], np.float64)
    )  # fmt: skip


def surface_errors(have: dict[str, Any], want: dict[str, Any], size: float) -> dict[str, float]:
    """For meshes without a vertex-by-vertex match: the offset of the surfaces' centroids and
    their mean symmetric distance (both over ``size``), the extents' relative difference."""
    from scipy.spatial import cKDTree

    a, b = _surface_points(have), _surface_points(want)
    apart = (cKDTree(b).query(a)[0].mean() + cKDTree(a).query(b)[0].mean()) / 2
    extents = np.ptp(have["vertices"], axis=0), np.ptp(want["vertices"], axis=0)
    relative = np.abs(extents[0] - extents[1]) / np.maximum(extents[1], 1e-3 * size)
    return {
        "position_error": float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0))) / size,
        "scale_error": float(relative.max()),
        "shape_error": float(apart) / size,
    }


def _placement(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    """Per goal mesh, by name, its evaluated world geometry against the goal's; every mesh the
    goal does not have dilutes the score (``n_goal / (n_goal + n_extra)``)."""
    checks: dict[str, dict[str, Any]] = {}
    keys = ("position_error", "rotation_error_deg", "scale_error", "shape_error")
    worst = dict.fromkeys(keys, 0.0)
    scores = []
    wanted = {n: o for n, o in _mesh_objects(goal.state).items() if len(o["faces"])}
    present = {n: o for n, o in _mesh_objects(candidate).items() if len(o["faces"])}
    for name, want in sorted(wanted.items()):
        have = present.get(name)
        if have is None:
            _missing(name, checks)
            worst = dict.fromkeys(keys, math.inf)
            scores.append(0.0)
            continue
        same = np.shape(have["vertices"]) == np.shape(want["vertices"])
        if same:
            errors = pose_errors(have["vertices"], want["vertices"], goal.size)
        else:
            errors = surface_errors(have, want, goal.size)
        scores.append(math.prod(term(e, TOLERANCES[k]) for k, e in errors.items()))
        off = []
        if errors["position_error"] > goal.thresholds["position_error"]:
            offset = np.mean(have["vertices"], axis=0) - np.mean(want["vertices"], axis=0)
            axis = "xyz"[int(np.argmax(np.abs(offset)))]
            distance = errors["position_error"] * goal.size
            off.append(f"{distance:.2f} m from its goal position (most along {axis})")
        if errors.get("rotation_error_deg", 0.0) > goal.thresholds["rotation_error_deg"]:
            off.append(f"rotated {errors['rotation_error_deg']:.0f}° away from its goal")
        if errors["scale_error"] > goal.thresholds["scale_error"]:
            off.append(f"scaled {errors['scale_error']:.0%} off")
        if errors["shape_error"] > goal.thresholds["shape_error"]:
            how = "" if same else f" ({len(have['vertices'])} vertices, the goal's has " \
                f"{len(want['vertices'])})"  # fmt: skip
            off.append(f"shaped differently{how}: surfaces "
                       f"{errors['shape_error'] * goal.size:.2g} m apart")  # fmt: skip
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r} is " + ", ".join(off)}
        worst = {k: max(v, errors.get(k, 0.0)) for k, v in worst.items()}
    extra = sorted(set(present) - set(wanted))
    worst["extra_objects"] = float(len(extra))
    if extra:
        listed = ", ".join(repr(n) for n in extra[:4]) + (" …" if len(extra) > 4 else "")
        checks["extra objects"] = {
            "ok": False,
            "message": f"{len(extra)} mesh object(s) the goal does not have: {listed}",
        }
    score = float(np.mean(scores)) if scores else 0.0
    return worst, checks, score * len(wanted) / max(len(wanted) + len(extra), 1)


_MATERIAL_TERMS = {  # metric: (surface key, label)
    "delta_e": ("base_color", "base colour"),
    "roughness_error": ("roughness", "roughness"),
    "metallic_error": ("metallic", "metallic"),
    "emission_error": ("emission", "emission"),
    "transmission_error": ("transmission", "transmission"),
    "alpha_error": ("alpha", "alpha"),
}


_LUMINANCE = np.array([0.2126, 0.7152, 0.0722])  # linear Rec. 709 weights
_REFLECTION_TERMS = ("roughness_error", "metallic_error", "transmission_error")


def shown_colors(surface: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """What a surface shows on screen (linear RGB, clipped at white as the Standard view
    transform does): where no light falls, its emission alone; where a white light of unit
    irradiance falls, its emission plus its base colour. A glow that already fills a channel
    hides whatever the surface reflects in it."""
    emitted = np.clip(np.asarray(surface["emission"], np.float64)[:3], 0.0, None)
    base = np.clip(np.asarray(surface["base_color"], np.float64)[:3], 0.0, None)
    return np.clip(emitted + base, 0.0, 1.0), np.clip(emitted, 0.0, 1.0)


def reflection_visibility(surface: dict[str, Any]) -> float:
    """How much of what a surface reflects can show through its glow (0 to 1): the luminance
    share of the channels its emission leaves below white; 1 for a surface that emits nothing."""
    emitted = np.clip(np.asarray(surface["emission"], np.float64)[:3], 0.0, 1.0)
    return float(np.dot(_LUMINANCE, 1.0 - emitted))


def material_errors(have: dict[str, Any], want: dict[str, Any]) -> dict[str, float]:
    """Differences of two surfaces (see ``toolgym.envs.blender.scene.SURFACE_KEYS``) as they
    show: ``delta_e`` is the CIE76 ΔE of the colours they show lit and unlit
    (:func:`shown_colors`; the base colours' ΔE for surfaces that emit nothing), and the
    reflection's settings (roughness, metallic, transmission) count as much as a glow lets
    them show (:func:`reflection_visibility` of the surface that shows them most). So an
    Emission shader alone equals a glowing Principled BSDF whose glow hides its reflection."""
    emitted = np.asarray(want["emission"], np.float64)
    (lit_a, unlit_a), (lit_b, unlit_b) = shown_colors(have), shown_colors(want)
    shows = max(reflection_visibility(have), reflection_visibility(want))
    errors = {
        "delta_e": max(delta_e(lit_a, lit_b), delta_e(unlit_a, unlit_b)),
        "roughness_error": abs(have["roughness"] - want["roughness"]),
        "metallic_error": abs(have["metallic"] - want["metallic"]),
        "emission_error": float(np.linalg.norm(np.subtract(have["emission"], emitted)))
        / max(1.0, float(np.linalg.norm(emitted))),
        "transmission_error": abs(have["transmission"] - want["transmission"]),
        "alpha_error": abs(have["alpha"] - want["alpha"]),
    }
    return errors | {k: errors[k] * shows for k in _REFLECTION_TERMS}


def _main_material(o: dict[str, Any]) -> dict[str, Any]:
    """The material on most of an object's faces (the first, on ties)."""
    shares = [m.get("share", 1.0) for m in o["materials"]]
    return o["materials"][int(np.argmax(shares))]


def _material(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    """Per goal object, the surface (reduced from the node graph) of the material on most of
    its faces against the goal's; a graph that does not reduce is judged by the renders alone."""
    checks: dict[str, dict[str, Any]] = {}
    worst = dict.fromkeys(_MATERIAL_TERMS, 0.0)
    scores, reduced = [], True
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want["materials"]:
            continue
        have = _mesh_objects(candidate).get(name)
        if have is None or not have["materials"]:
            _missing(name, checks) if have is None else checks.__setitem__(
                f"object {name}", {"ok": False, "message": f"{name!r} has no material"}
            )
            worst = dict.fromkeys(_MATERIAL_TERMS, math.inf)
            scores.append(0.0)
            continue
        a, b = _main_material(have), _main_material(want)
        unread = next((m for m in (a, b) if "irreducible" in m), None)
        if unread is not None:
            if render is None:
                raise ValueError(f"the material of {name!r} cannot be reduced "
                                 f"({unread['irreducible']}) and there are no renders")  # fmt: skip
            checks[f"material {name}"] = {
                "ok": None,
                "message": f"{name!r}'s material {unread['name']!r} is not a constant surface "
                f"({unread['irreducible']}): judged by the renders",
            }
            scores.append(_render_term(render))
            reduced = False
            continue
        errors = material_errors(a, b)
        scores.append(math.prod(term(e, TOLERANCES[k]) for k, e in errors.items()))
        glows = any(np.any(np.asarray(m["emission"]) > 0) for m in (a, b))
        labels = {k: label for k, (_key, label) in _MATERIAL_TERMS.items()}
        if glows:  # what differs is the colour shown, base colour and glow together
            labels["delta_e"] = "colour shown (base colour and glow)"
        off = [
            f"{labels[k]} is off by {errors[k]:.2g}" + (" ΔE" if k == "delta_e" else "")
            for k in _MATERIAL_TERMS
            if errors[k] > goal.thresholds[k]
        ]
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r}: " + ", ".join(off)}
        worst = {k: max(v, errors[k]) for k, v in worst.items()}
    noise = goal.render_noise()
    if reduced and noise is not None and render is not None:
        # Every surface was compared by its parameters; the renders only back them up, and
        # two equal scenes sampled differently (an Emission shader for a Principled glow
        # draws other random numbers) differ by up to the goal's own resampling noise.
        worst["render_noise"] = noise
    return worst, checks, float(np.mean(scores)) if scores else 0.0


def _shape_keys(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    worst, scores = 0.0, []
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want.get("shape_keys"):
            continue
        have = _mesh_objects(candidate).get(name)
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


def _lighting(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    keys = ("energy_error", "light_delta_e", "light_position_error")
    worst = {**dict.fromkeys(keys, 0.0), "light_type": 1.0}
    scores = []
    lights = shown_objects(goal.state, "LIGHT")
    for name, want in sorted(lights.items()):
        have = shown_objects(candidate, "LIGHT").get(name)
        if have is None:
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
