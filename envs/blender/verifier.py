"""Verifiers for Blender scenes, one per task kind, on scene states extracted by a trusted process.

A scene state is the plain data of ``toolgym.envs.blender.scene.scene_state``: objects by name
with world transforms (m, unit quaternions), evaluated meshes (m), materials (linear RGB),
shape-key values and lights, and, for material and lighting tasks, Cycles renders. Every
verifier returns a :class:`VerifierReport` with a score in [0, 1] and checks whose messages name
what is off (which object, which parameter, by how much).

Each parameter's error ``e`` counts through ``1 / (1 + (e / tolerance)²)``: 1 when exact, 0.5 at
the tolerance, falling smoothly, so a step towards the goal always pays. Kinds:

What counts is what a final render draws (``shown`` in the state, read from the render's own
evaluation: see ``toolgym.envs.blender.evaluation``): objects hidden from renders, in excluded
collections or under a collection hidden from renders, invisible to the camera, holdouts and
fully transparent ones are left out, and their checks say why; objects hidden in the viewport
only are drawn, and count.

- ``modelling`` and ``procedural``: the union of the scene's meshes against the goal's: exact
  volumetric IoU (manifold3d, of every closed shell turned outward, as a render shows it both
  sides alike; open parts are left out of it, and the report says so) and surface metrics
  (``toolgym.verifiers.geometry``). Score (IoU × soft F)⁴: a near miss (a missing leg, an array
  one short) costs a third or more, a pass needs ≥ 0.92. Where the verifier's own measures
  disagree (the union's volume and its shells', the overlap and the volumes, the bounds:
  :data:`METRIC_TOLERANCE`) the scene fails with the reason and scores 0: never ignored.
- ``placement``: per goal mesh, matched by name, its evaluated world vertices against the goal's
  (:func:`pose_errors`: centroid offset over the scene's size, rotation (deg), relative scale and
  leftover of the best linear fit; :func:`surface_errors` when the vertex counts differ), so
  applied scale, parents, delta transforms and quaternions read as equal. Score: the mean over
  goal objects of the product, times ``n_goal / (n_goal + n_extra)`` for meshes it lacks.
- ``material``: per goal object, the surface that the node graph of each material on its faces
  (by area) reduces to (base colour as CIE76 ΔE in Lab, roughness, metallic, emitted light,
  transmission, alpha, and every other input and option of its shaders, ``settings_error``), as
  it shows (:func:`material_errors`: a glow that fills a channel hides
  what the surface reflects there, so an Emission shader alone can equal a glowing Principled
  BSDF); the renders score 30 % (:func:`render_delta_e` and the photometric
  loss), and all of it when a graph does not reduce (a texture), which the report says (its
  parameters then read nothing, never 0). When every graph reduces, the renders count only the
  ΔE beyond the goal's own resampling noise (``render_noise``): equal surfaces sampled with
  other random numbers are not blamed for it.
- ``shape_keys``: the evaluated mesh's mean vertex error over the object's diagonal; each mesh
  the goal lacks dilutes the score.
- ``lighting``: per goal light, by name: type, power as it renders (energy, exposure, node
  tree) as a log ratio, colour ΔE, position error over the scene size, where a spot, area or
  sun light points (``light_aim_error_deg``: the angle between its -Z axes, :func:`light_aim`)
  and every other setting Cycles reads (``light_settings``); each light the goal lacks dilutes
  the score; with renders (Cycles), the renders score 30 %.

For the two kinds with renders, renders that differ from the goal's (beyond its noise) while
every parameter read matches mean that something the parameters do not read changes the render:
the scene fails, saying so, and the renders decide its score with the weight of a full check.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any

import numpy as np
import trimesh

from toolgym.envs.blender.solids import ShellCache, Solid, scene_solid, shown_objects
from toolgym.verifiers.geometry import ReferenceSurface
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
    "settings_error": 0.1,  # the largest difference of a shader's other inputs and options
    "shape_error": 0.01,  # of the scene's size: surfaces apart once the pose is fitted
    "render_delta_e": 3.0,  # CIE76 ΔE of the renders' most different pixels
    "vertex_error": 0.005,  # of the object's diagonal
    "energy_error": 0.15,  # |ln(energy / goal energy)|
    "light_delta_e": 5.0,
    "light_position_error": 0.05,
    "light_aim_error_deg": 5.0,  # a spot's, an area's or a sun's direction
    "light_settings": 1.0,  # settings (of those Cycles reads) that differ from the goal's
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
        "settings_error": 0.03,
        "render_delta_e": 2.0,
    },
    "shape_keys": {"vertex_error": 0.002, "extra_objects": 0},
    "lighting": {
        "energy_error": 0.05,
        "light_delta_e": 2.0,
        "light_position_error": 0.02,
        "light_aim_error_deg": 2.0,
        "light_type": 1.0,
        "light_settings": 0,
        "extra_lights": 0,
        "render_delta_e": 2.0,
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


# Relative disagreement allowed between two of the verifier's own measures of one thing (the
# union's volume and its shells', the IoU and the volumes it is made of, bounds): beyond it the
# measures cannot all be right, and the scene fails with the reason, never scored.
METRIC_TOLERANCE = 1e-3


def _disagreements(solid: Solid, target: Solid, inter: float, size: float) -> list[str]:
    """Where the verifier's own measures of the candidate disagree with each other (see
    :data:`METRIC_TOLERANCE`): an empty list when they agree."""
    tol = METRIC_TOLERANCE
    volume, goal = solid.union.volume(), target.union.volume()
    found = []
    if solid.shells:
        largest, total = max(solid.shells), sum(solid.shells)
        if not largest * (1 - tol) - 1e-12 <= volume <= total * (1 + tol) + 1e-12:
            found.append(
                f"the union's volume {volume:.4g} m³ is outside what its shells make "
                f"({largest:.4g} to {total:.4g} m³)"
            )
        box = np.array(solid.union.bounding_box()).reshape(2, 3)
        if solid.bounds is not None and np.abs(box - solid.bounds).max() > tol * size:
            found.append("the union's bounds differ from its shells' bounds")
    if not -tol * goal <= inter <= min(volume, goal) * (1 + tol) + 1e-12:
        found.append(
            f"the overlap {inter:.4g} m³ exceeds the volumes it is part of "
            f"({volume:.4g} and {goal:.4g} m³)"
        )
    return found


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
        # The shells of candidate objects compared with this goal lately: an object a step left
        # unchanged is not turned into shells again.
        self.shells = ShellCache()
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

    def solid(self) -> Solid:
        if self._solid is None:
            self._solid = scene_solid(self.state)
        return self._solid


def verify_scene(
    candidate: dict[str, Any] | None,
    goal: Goal,
    tier: str = "cheap",
    images: np.ndarray | None = None,
) -> VerifierReport:
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
            score = _with_renders(metrics, checks, score, render, goal)
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


def _with_renders(
    metrics: dict[str, float],
    checks: dict[str, Any],
    score: float,
    render: dict[str, float],
    goal: Goal,
) -> float:
    """The score with the renders' share (:data:`_IMAGE_WEIGHT`), and their verdict when they
    disagree with the parameters: renders that differ from the goal's (beyond its own noise)
    while every parameter read matches mean something the parameters do not read changes the
    render, and then the renders decide, with the weight of a full check."""
    params_ok = _thresholds(metrics, goal.thresholds, checks) and all(
        c.get("ok") is not False for c in checks.values()
    )
    metrics |= render
    seen = render | {
        "render_delta_e": max(0.0, render["render_delta_e"] - metrics.get("render_noise", 0.0))
    }
    weight = _IMAGE_WEIGHT[goal.kind]
    blended = score ** (1 - weight) * _render_term(seen) ** weight
    if params_ok and seen["render_delta_e"] > goal.thresholds["render_delta_e"]:
        checks["renders"] = {
            "ok": False,
            "message": f"the renders differ from the goal's by {seen['render_delta_e']:.2g} ΔE "
            "though every setting read matches: something else changes what renders",
        }
        return min(blended, render_check(seen))
    return blended


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


def render_check(render: dict[str, float]) -> float:
    """The renders' score when they decide alone (a graph that does not reduce, renders that
    disagree with the parameters): each of their measures with the weight of a full check,
    ``term(ΔE) · term(photometric loss)``, not the gentler mean of :func:`_render_term` they
    add as 30 % of a score the parameters decide."""
    return term(render["render_delta_e"], TOLERANCES["render_delta_e"]) * term(
        render["photometric_loss"], TOLERANCES["photometric_loss"]
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
        checks["meshes"] = {
            "ok": False,
            "message": f"the scene has no mesh with faces in a final render{_undrawn(candidate)}",
        }
        return {"iou": 0.0, "fscore": 0.0, "soft_fscore": 0.0}, checks, 0.0
    surface = goal.surface(tier)
    measured = surface.metrics(mesh, SAMPLES[tier], 0, exact_count=256)
    metrics = {k: measured[k] for k in ("chamfer", "fscore", "soft_fscore", "deviation")}
    metrics["deviation_ratio"] = measured["deviation"] / goal.size
    solid = scene_solid(candidate, goal.shells)
    iou = None
    if solid.open_objects:
        listed = ", ".join(repr(n) for n in solid.open_objects[:4])
        checks["closed"] = {
            "ok": None,
            "message": f"not closed, left out of the IoU: {listed}",
        }
    target = goal.solid()
    volume, goal_volume = solid.union.volume(), target.union.volume()
    inter = (solid.union ^ target.union).volume()
    union = volume + goal_volume - inter
    if union > 0:
        iou = float(np.clip(inter / union, 0.0, 1.0))  # in [0, 1] when the measures agree
        metrics["iou"] = iou
    metrics["volume"], metrics["goal_volume"] = volume, goal_volume
    disagree = _disagreements(solid, target, inter, goal.size)
    if disagree:
        checks["consistency"] = {
            "ok": False,
            "message": "the measures disagree: " + "; ".join(disagree),
        }
        return metrics, checks, 0.0
    extent = mesh.extents / np.maximum(goal.mesh.extents, 1e-9)
    if np.abs(extent - 1).max() > 0.02:
        axes = "xyz"
        worst = int(np.argmax(np.abs(extent - 1)))
        checks["size"] = {
            "ok": False,
            "message": f"the scene is {extent[worst]:.2f}× the goal's size along {axes[worst]}",
        }
    soft = measured["soft_fscore"]
    if iou is not None and iou < goal.thresholds["iou"]:
        volumes = f"volume {volume:.3g} m³, goal {goal_volume:.3g} m³"
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


def _missing(name: str, checks: dict[str, Any], state: dict[str, Any] | None = None) -> None:
    """A failed check: object ``name`` is missing, or (``state`` holds it) not drawn, and why."""
    found = (state or {}).get("objects", {}).get(name)
    why = found.get("hidden") if found else None
    message = f"object {name!r} is missing" if why is None else f"{name!r} is not drawn: {why}"
    checks[f"object {name}"] = {"ok": False, "message": message}


def _undrawn(state: dict[str, Any]) -> str:
    """Why the scene's geometry is not drawn: its objects hidden from the render (why), and
    those a render evaluates to no faces."""
    notes = [
        f"{n!r} {o['hidden']}"
        for n, o in sorted(state["objects"].items())
        if o.get("geometry") and o.get("hidden")
    ]
    notes += [
        f"{n!r} renders no faces"
        for n, o in sorted(shown_objects(state).items())
        if not len(o["faces"])
    ]
    return (": " + "; ".join(notes[:4]) + (" …" if len(notes) > 4 else "")) if notes else ""


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


# Even sampling gives fewer points than asked on a small or thin mesh, by design; trimesh says so
# on every call ("only got 562/1024 samples!"), noise in every command that verifies.
logging.getLogger("trimesh.sample").setLevel(logging.ERROR)


def _surface_points(o: dict[str, Any], count: int = 1024) -> np.ndarray:
    mesh = trimesh.Trimesh(o["vertices"], o["faces"], process=False)
    return (
        trimesh.sample.sample_surface_even(mesh, count, seed=0)[0]
        if mesh.area > 0
        else (np.asarray(o["vertices"], np.float64))
    )


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
            _missing(name, checks, candidate)
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
            how = (
                ""
                if same
                else f" ({len(have['vertices'])} vertices, the goal's has {len(want['vertices'])})"
            )
            off.append(
                f"shaped differently{how}: surfaces {errors['shape_error'] * goal.size:.2g} m apart"
            )
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r} is " + ", ".join(off)}
        worst = {k: max(v, errors.get(k, 0.0)) for k, v in worst.items()}
    return worst, checks, _diluted(candidate, goal, checks, worst, scores)


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
    """The material on most of an object's surface (the first, on ties)."""
    shares = [m.get("share", 1.0) for m in o["materials"]]
    return o["materials"][int(np.argmax(shares))]


MIN_SHARE = 1e-3  # a material on less of an object's surface than this does not show


def _rendered_materials(o: dict[str, Any]) -> list[dict[str, Any]]:
    """The materials an object shows: those on at least :data:`MIN_SHARE` of its surface."""
    used = [m for m in o["materials"] if m.get("share", 1.0) >= MIN_SHARE]
    return used or list(o["materials"][:1])


def settings_errors(have: dict[str, Any], want: dict[str, Any]) -> dict[str, float]:
    """How far each of two surfaces' ``settings`` (the shaders' inputs and options the
    surface keys do not model, as ``label: [value, default]``; a setting one side lacks is at
    its default there) differ: the largest difference of their components, 1 for options
    that differ."""
    found: dict[str, float] = {}
    ours, theirs = have.get("settings", {}), want.get("settings", {})
    for label in sorted(set(ours) | set(theirs)):
        pair = ours.get(label) or theirs.get(label)
        default = pair[1]
        a = ours[label][0] if label in ours else default
        b = theirs[label][0] if label in theirs else default
        if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
            found[label] = 0.0 if a == b else 1.0
        else:
            found[label] = float(np.max(np.abs(np.subtract(np.atleast_1d(a), np.atleast_1d(b)))))
    return found


def _setting_text(label: str, have: dict[str, Any], want: dict[str, Any]) -> str:
    def value(surface: dict[str, Any], other: dict[str, Any]) -> str:
        pair = surface.get("settings", {}).get(label) or other["settings"][label]
        got = pair[0] if label in surface.get("settings", {}) else pair[1]
        if isinstance(got, list):
            return "(" + ", ".join(f"{v:.3g}" for v in got[:3]) + ")"
        return f"{got:.3g}" if isinstance(got, float) else str(got)

    return f"{label} is {value(have, want)} (goal {value(want, have)})"


def _material(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    """Per goal object, every material it shows (by its share of the surface), reduced from
    its node graph to a surface and its other settings, against the goal's main material. A
    graph that does not reduce is judged by the renders alone, with the weight of a full check:
    its parameters are not read, so they are not reported (never as 0)."""
    checks: dict[str, dict[str, Any]] = {}
    keys = (*_MATERIAL_TERMS, "settings_error")
    worst = dict.fromkeys(keys, 0.0)
    scores, read, unread = [], 0, 0
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want["materials"]:
            continue
        have = _mesh_objects(candidate).get(name)
        if have is None or not have["materials"]:
            _missing(name, checks, candidate) if have is None else checks.__setitem__(
                f"object {name}", {"ok": False, "message": f"{name!r} has no material"}
            )
            worst = dict.fromkeys(keys, math.inf)
            scores.append(0.0)
            read += 1
            continue
        shown, b = _rendered_materials(have), _main_material(want)
        blind = next((m for m in (*shown, b) if "irreducible" in m), None)
        if blind is not None:
            if render is None:
                raise ValueError(
                    f"the material of {name!r} cannot be reduced "
                    f"({blind['irreducible']}) and there are no renders"
                )
            checks[f"material {name}"] = {
                "ok": None,
                "message": f"{name!r}'s material {blind['name']!r} is not a constant surface "
                f"({blind['irreducible']}): judged by the renders alone",
            }
            scores.append(render_check(render))
            unread += 1
            continue
        read += 1
        total = sum(m.get("share", 1.0) for m in shown) or 1.0
        score, off = 0.0, []
        for a in shown:
            errors = material_errors(a, b)
            settings = settings_errors(a, b)
            errors["settings_error"] = max(settings.values(), default=0.0)
            share = a.get("share", 1.0) / total
            score += share * math.prod(term(e, TOLERANCES[k]) for k, e in errors.items())
            off += _material_off(a, b, errors, settings, goal, len(shown) > 1)
            worst = {k: max(v, errors[k]) for k, v in worst.items()}
        scores.append(score)
        if off:
            checks[f"object {name}"] = {"ok": False, "message": f"{name!r}: " + ", ".join(off)}
    if unread and not read:  # nothing was read by its parameters: none is reported as met
        worst = {}
    if unread:
        worst["unread_materials"] = float(unread)
    noise = goal.render_noise()
    if not unread and noise is not None and render is not None:
        # Every surface was compared by its parameters; the renders back them up, and two
        # equal scenes sampled differently (an Emission shader for a Principled glow draws
        # other random numbers) differ by up to the goal's own resampling noise.
        worst["render_noise"] = noise
    return worst, checks, float(np.mean(scores)) if scores else 0.0


def _material_off(
    a: dict[str, Any],
    b: dict[str, Any],
    errors: dict[str, float],
    settings: dict[str, float],
    goal: Goal,
    several: bool,
) -> list[str]:
    """What is off in material ``a`` against the goal's ``b``, in words."""
    glows = any(np.any(np.asarray(m["emission"]) > 0) for m in (a, b))
    labels = {k: label for k, (_key, label) in _MATERIAL_TERMS.items()}
    if glows:  # what differs is the colour shown, base colour and glow together
        labels["delta_e"] = "colour shown (base colour and glow)"
    off = [
        f"{labels[k]} is off by {errors[k]:.2g}" + (" ΔE" if k == "delta_e" else "")
        for k in _MATERIAL_TERMS
        if errors[k] > goal.thresholds[k]
    ]
    off += [
        _setting_text(k, a, b) for k, e in settings.items() if e > goal.thresholds["settings_error"]
    ]
    if off and several:
        share = a.get("share", 1.0)
        return [f"material {a['name']!r} (on {share:.0%} of it): " + ", ".join(off)]
    return off


def _shape_keys(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    checks: dict[str, dict[str, Any]] = {}
    worst, scores = 0.0, []
    for name, want in sorted(_mesh_objects(goal.state).items()):
        if not want.get("shape_keys"):
            continue
        have = _mesh_objects(candidate).get(name)
        if have is None:
            _missing(name, checks, candidate)
            worst, scores = math.inf, [*scores, 0.0]
            continue
        a, b = np.asarray(have["vertices"]), np.asarray(want["vertices"])
        if a.shape != b.shape:
            checks[f"object {name}"] = {
                "ok": False,
                "message": f"{name!r} has {len(a)} vertices where the goal has {len(b)}",
            }
            worst, scores = math.inf, [*scores, 0.0]
            continue
        diagonal = float(np.linalg.norm(np.ptp(b, axis=0))) or 1.0
        error = float(np.linalg.norm(a - b, axis=1).mean()) / diagonal
        scores.append(term(error, TOLERANCES["vertex_error"]))
        if error > goal.thresholds["vertex_error"]:
            keys = want["shape_keys"]
            off = [k for k in keys if abs(have.get("shape_keys", {}).get(k, 0.0) - keys[k]) > 0.01]
            which = f" (keys off: {', '.join(off)})" if off else ""
            checks[f"object {name}"] = {
                "ok": False,
                "message": f"{name!r}'s vertices are {error:.1%} of its size off{which}",
            }
        worst = max(worst, error)
    metrics = {"vertex_error": worst}
    return metrics, checks, _diluted(candidate, goal, checks, metrics, scores)


def _diluted(
    candidate: dict[str, Any],
    goal: Goal,
    checks: dict[str, Any],
    metrics: dict[str, float],
    scores: list[float],
) -> float:
    """The mean of ``scores`` times ``n_goal / (n_goal + n_extra)``: every mesh with faces the
    goal does not have (a cover, a leftover) takes a share, and fails the scene."""
    wanted = {n for n, o in _mesh_objects(goal.state).items() if len(o["faces"])}
    present = {n for n, o in _mesh_objects(candidate).items() if len(o["faces"])}
    extra = sorted(present - wanted)
    metrics["extra_objects"] = float(len(extra))
    if extra:
        listed = ", ".join(repr(n) for n in extra[:4]) + (" …" if len(extra) > 4 else "")
        checks["extra objects"] = {
            "ok": False,
            "message": f"{len(extra)} mesh object(s) the goal does not have: {listed}",
        }
    score = float(np.mean(scores)) if scores else 0.0
    return score * len(wanted) / max(len(wanted) + len(extra), 1)


def effective_light(light: dict[str, Any]) -> tuple[float, np.ndarray]:
    """A light's power (W; its energy times ``2 ** exposure`` and its node tree's strength)
    and colour (linear RGB, tinted by its node tree), as it renders."""
    tint = np.asarray(light.get("tint", [1.0, 1.0, 1.0]), np.float64)
    strength = float(np.dot(tint, _LUMINANCE))
    color = np.asarray(light["color"], np.float64) * (tint / strength if strength > 0 else tint)
    return float(light["energy"]) * strength, color


#: The lights whose direction lights the scene (a point light shines every way alike).
AIMED_LIGHTS = ("SPOT", "AREA", "SUN")


def light_aim(rotation: Any) -> np.ndarray:
    """The world direction a light shines along (its -Z axis) for its world rotation, a unit
    quaternion (w, x, y, z)."""
    w, x, y, z = (float(v) for v in rotation)
    return -np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


def aim_error_deg(have: dict[str, Any], want: dict[str, Any]) -> float:
    """The angle (deg) between where two lights of one type point: 0 for point lights."""
    if want["light"]["type"] not in AIMED_LIGHTS:
        return 0.0
    a, b = light_aim(have["rotation"]), light_aim(want["rotation"])
    cosine = float(np.dot(a, b) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))
    return math.degrees(math.acos(min(max(cosine, -1.0), 1.0)))


def light_settings(have: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """The settings two lights both have that differ (floats beyond 0.1 %), by name."""
    ours, theirs = have.get("settings", {}), want.get("settings", {})
    off = []
    for name in sorted(set(ours) & set(theirs)):
        a, b = ours[name], theirs[name]
        if isinstance(a, float) and isinstance(b, float):
            if abs(a - b) > 1e-3 * max(abs(b), 1.0):
                off.append(name)
        elif a != b:
            off.append(name)
    return off


def _lighting(candidate: dict[str, Any], goal: Goal, tier: str, render: Render = None) -> Result:
    """Per goal light, by name: type, power and colour as they render (exposure and node tree
    included), position, direction (spot, area and sun lights), and every other setting
    Cycles reads; a light the goal lacks dilutes
    the score; a light whose node tree does not reduce is judged by the renders alone."""
    checks: dict[str, dict[str, Any]] = {}
    keys = ("energy_error", "light_delta_e", "light_position_error", "light_aim_error_deg")
    keys += ("light_settings",)
    worst = {**dict.fromkeys(keys, 0.0), "light_type": 1.0}
    scores, unread = [], 0
    lights = shown_objects(goal.state, "LIGHT")
    present = shown_objects(candidate, "LIGHT")
    for name, want in sorted(lights.items()):
        have = present.get(name)
        if have is None:
            _missing(name, checks, candidate)
            worst = {**dict.fromkeys(keys, math.inf), "light_type": 0.0}
            scores.append(0.0)
            continue
        a, b = have["light"], want["light"]
        blind = next((x for x in (a, b) if "irreducible" in x), None)
        if blind is not None:
            if render is None:
                raise ValueError(
                    f"the light {name!r} cannot be read ({blind['irreducible']}) "
                    "and there are no renders"
                )
            checks[f"light {name} nodes"] = {
                "ok": None,
                "message": f"{name!r} is not read ({blind['irreducible']}): judged by the renders",
            }
            scores.append(render_check(render))
            unread += 1
            continue
        (power_a, color_a), (power_b, color_b) = effective_light(a), effective_light(b)
        same_type = a["type"] == b["type"]
        differ = light_settings(a, b) if same_type else []
        errors = {
            "energy_error": abs(math.log(max(power_a, 1e-6) / max(power_b, 1e-6))),
            "light_delta_e": delta_e(color_a, color_b),
            "light_position_error": float(
                np.linalg.norm(np.subtract(have["location"], want["location"]))
            )
            / goal.size,
            "light_aim_error_deg": aim_error_deg(have, want) if same_type else 0.0,
            "light_settings": float(len(differ)),
        }
        scores.append(
            (1.0 if same_type else 0.25)
            * math.prod(term(e, TOLERANCES[k]) for k, e in errors.items())
        )
        off = (
            []
            if same_type
            else [f"a {a['type'].lower()} light where the goal has a {b['type'].lower()} light"]
        )
        if errors["energy_error"] > goal.thresholds["energy_error"]:
            ratio = power_a / max(power_b, 1e-6)
            off.append(f"{'too bright' if ratio > 1 else 'too dim'} (×{ratio:.2g})")
        if errors["light_delta_e"] > goal.thresholds["light_delta_e"]:
            off.append(f"colour off by {errors['light_delta_e']:.2g} ΔE")
        if errors["light_position_error"] > goal.thresholds["light_position_error"]:
            off.append(f"{errors['light_position_error'] * goal.size:.2f} m from its goal position")
        if errors["light_aim_error_deg"] > goal.thresholds["light_aim_error_deg"]:
            off.append(f"pointing {errors['light_aim_error_deg']:.2g}° off its goal direction")
        if differ:
            listed = ", ".join(
                f"{k} {a['settings'][k]:g} (goal {b['settings'][k]:g})"
                if isinstance(a["settings"][k], float)
                else f"{k} {a['settings'][k]} (goal {b['settings'][k]})"
                for k in differ[:4]
            )
            off.append(f"settings differ: {listed}")
        if off:
            checks[f"light {name}"] = {"ok": False, "message": f"{name!r}: " + ", ".join(off)}
        worst = {k: max(v, errors[k]) for k, v in worst.items() if k in keys} | {
            "light_type": min(worst["light_type"], float(same_type))
        }
    if unread and unread == len(scores):  # nothing was read by its settings: none is met
        worst = {"unread_lights": float(unread)}
    elif unread:
        worst["unread_lights"] = float(unread)
    extra = sorted(set(present) - set(lights))
    worst["extra_lights"] = float(len(extra))
    if extra:
        listed = ", ".join(repr(n) for n in extra[:4]) + (" …" if len(extra) > 4 else "")
        checks["extra lights"] = {
            "ok": False,
            "message": f"{len(extra)} light(s) the goal does not have: {listed}",
        }
    noise = goal.render_noise()
    if not unread and noise is not None and render is not None:
        worst["render_noise"] = noise  # as for materials: equal lights sampled differently
    score = float(np.mean(scores)) if scores else 0.0
    return worst, checks, score * len(lights) / max(len(lights) + len(extra), 1)


_VERIFIERS = {
    "modelling": _geometry,
    "procedural": _geometry,
    "placement": _placement,
    "material": _material,
    "shape_keys": _shape_keys,
    "lighting": _lighting,
}
