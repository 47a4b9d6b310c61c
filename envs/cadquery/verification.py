"""Verifying CadQuery scripts and part files: the CAD domain's half of ``envs.verification``.

The reference part is built once per task in a session and measured finely in a fresh one (and
kept in the on-disk cache, ``toolgym.envs.episode.cache``, for every process after the first); a
script's solid is exported as BREP and measured in another fresh session, so the verifier's process
never parses B-Rep data (see ``toolgym.envs.cadquery.artifacts``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import trimesh

from toolgym.envs.cadquery.artifacts import (
    EXACT_TOLERANCE_SHARE,
    STEP_TOLERANCE_SHARE,
    Measurer,
    export_brep,
    load_part,
    measure,
    measure_file,
    tessellation_tolerance,
)
from toolgym.envs.episode import cache
from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.batch import Outcome, ReferenceBuildError
from toolgym.verifiers.cad import verify_part
from toolgym.verifiers.parts import ANGULAR_TOLERANCE, TESSELLATION_TOLERANCE, Part
from toolgym.verifiers.report import VerifierReport

_references: dict[str, Part] = {}
_references_lock = threading.Lock()
# The sources whose code decides a reference's arrays: a change to one is a new cache key.
_REFERENCE_SOURCES = (
    "toolgym.envs.cadquery.backend",
    "toolgym.envs.cadquery.measure",
    "toolgym.envs.cadquery.artifacts",
    "toolgym.envs.cadquery.verification",
    "toolgym.verifiers.geometry",
)


def reference_part(task: Task) -> Part:
    """The task's target part: its reference run in a session and the solid it exported
    measured, finely, in a fresh one. Built once per process, and once per machine through the
    on-disk cache (``toolgym.envs.episode.cache``), keyed by the reference program and the settings
    that decide the part."""
    with _references_lock:
        if task.id in _references:
            return _references[task.id]
    key = _reference_key("cadquery-reference", task)
    part = _cached_part(key)
    if part is None:
        part = _build_reference(task, key)
    with _references_lock:
        _references[task.id] = part
    return part


def _build_reference(task: Task, key: str) -> Part:
    with Session("cadquery") as session:
        ran = session.run(task.reference, filename=f"<reference {task.id}>")
        described = session.request("describe") if ran.ok else ran
        brep, why = export_brep(session) if described.ok and described.value else (None, ran)
        hidden = cache.hidden_from(session.allowed_paths, session.layers)
    if brep is None:
        raise ReferenceBuildError(f"{task.id}: the reference program failed: {why.feedback()}")
    box = np.asarray(described.value["bbox_mm"], dtype=np.float64)
    tolerance = tessellation_tolerance(
        box[3:] - box[:3], EXACT_TOLERANCE_SHARE, task.verification.deviation_mm
    )
    measured = measure(brep, tolerance=tolerance)
    if measured.part is None:
        raise ReferenceBuildError(
            f"{task.id}: the reference could not be measured: {measured.error}"
        )
    if hidden:
        cache.store(key, _part_arrays(measured.part, with_brep=True))
    return measured.part


_step_references: dict[str, Part] = {}


def step_reference(task: Task, reference: Part) -> Part:
    """The target measured as each step's part is: the reference's BREP measured in a fresh
    session at the step tolerance, exactly as an env's :class:`~artifacts.Measurer` measures
    the BREP an agent's session exports. So a right part gives the very same triangles, and
    renders pixel for pixel as the target. Built once per task and process, and cached on disk
    as :func:`reference_part` is."""
    with _references_lock:
        if task.id in _step_references:
            return _step_references[task.id]
    key = _reference_key("cadquery-step-reference", task)
    part = _cached_part(key)
    if part is None:
        tolerance = tessellation_tolerance(
            reference.mesh.extents, STEP_TOLERANCE_SHARE, task.verification.deviation_mm
        )
        if reference.brep is None:
            raise ReferenceBuildError(f"{task.id}: the reference part has no BREP to measure")
        with Measurer(reusable=False) as measurer:
            measured = measurer.measure(reference.brep, tolerance=tolerance)
            session = measurer.session
            hidden = session is not None and cache.hidden_from(
                session.allowed_paths, session.layers
            )
        if measured.part is None:
            message = f"the reference could not be measured: {measured.error}"
            raise ReferenceBuildError(f"{task.id}: {message}")
        part = measured.part
        if hidden:
            cache.store(key, _part_arrays(part, with_brep=False))
    part.brep = reference.brep
    with _references_lock:
        _step_references[task.id] = part
    return part


def _reference_key(kind: str, task: Task) -> str:
    """What decides a reference's arrays: its program, the deviation tolerance, the meshing
    settings, CadQuery's and OpenCASCADE's versions, and the code that measures."""
    inputs = {
        "program": task.reference,
        "deviation_mm": task.verification.deviation_mm,
        "shares": [EXACT_TOLERANCE_SHARE, STEP_TOLERANCE_SHARE],
        "tessellation": [TESSELLATION_TOLERANCE, ANGULAR_TOLERANCE],
        "tools": cache.tool_versions("cadquery", "cadquery-ocp"),
    }
    return cache.cache_key(kind, inputs, modules=_REFERENCE_SOURCES)


def _part_arrays(part: Part, *, with_brep: bool) -> dict[str, np.ndarray]:
    """A part as plain arrays for the cache (its BREP as bytes, never parsed here)."""
    arrays = {
        "vertices": np.asarray(part.mesh.vertices, dtype=np.float64),
        "faces": np.asarray(part.mesh.faces, dtype=np.int64),
        "tolerance": np.float64(np.nan if part.tolerance is None else part.tolerance),
    }
    if part.features is not None:
        arrays["features"] = np.asarray(part.features, dtype=np.float64)
    if part.shells is not None:
        arrays["shells"] = np.asarray(part.shells, dtype=np.float64)
    if with_brep and part.brep is not None:
        arrays["brep"] = np.frombuffer(part.brep, dtype=np.uint8)
    if part.note:
        arrays["note"] = np.array(part.note)
    return arrays


def _cached_part(key: str) -> Part | None:
    """The part stored under ``key``, or ``None`` (none, or arrays that are not a part)."""
    arrays = cache.load(key)
    if arrays is None:
        return None
    vertices, faces = arrays.get("vertices"), arrays.get("faces")
    features, brep, shells = arrays.get("features"), arrays.get("brep"), arrays.get("shells")
    tolerance, note = arrays.get("tolerance"), arrays.get("note")
    shapes_ok = (
        vertices is not None
        and vertices.dtype == np.float64
        and vertices.ndim == 2
        and vertices.shape[1] == 3
        and faces is not None
        and faces.dtype == np.int64
        and faces.ndim == 2
        and faces.shape[1] == 3
        and len(faces) > 0
        and faces.min() >= 0
        and faces.max() < len(vertices)
        and tolerance is not None
        and tolerance.shape == ()
        and tolerance.dtype == np.float64
        and (features is None or (features.dtype == np.float64 and features.ndim == 2))
        and shells is not None
        and shells.dtype == np.float64
        and shells.ndim == 2
        and (brep is None or (brep.dtype == np.uint8 and brep.ndim == 1))
        and (note is None or (note.dtype.kind == "U" and note.shape == ()))
    )
    if not shapes_ok:
        return None
    # The very arrays the cold build made (already merged and cleaned): not processed again.
    mesh = trimesh.Trimesh(vertices=vertices, faces=faces, process=False, validate=False)
    part = Part(mesh, features, shells=shells)
    part.brep = brep.tobytes() if brep is not None else None
    part.tolerance = None if np.isnan(tolerance) else float(tolerance)
    part.note = str(note) if note is not None else None
    return part


def exact_tolerance(task: Task, reference: Part) -> float:
    """Chordal tolerance (mm) of exact-tier meshes for ``task``: the reference's own, so that a
    right part is meshed exactly as the reference was."""
    return reference.tolerance or tessellation_tolerance(
        reference.mesh.extents, EXACT_TOLERANCE_SHARE, task.verification.deviation_mm
    )


def verify_for_task(
    task: Task,
    candidate: Part | None,
    reference: Part,
    tier: str,
    *,
    brep_iou: float | str | None = None,
    success_iou: float | None = None,
) -> VerifierReport:
    """``verify_part`` with the task's weights, thresholds, alignment and deviation tolerance
    (``success_iou``, when given, replaces the task's IoU threshold)."""
    check = task.verification
    thresholds = dict(check.thresholds)
    if success_iou is not None:
        thresholds["iou"] = success_iou
    return verify_part(
        candidate,
        reference,
        tier=tier,
        weights=dict(check.weights) if check.weights else None,
        thresholds=thresholds,
        alignment=check.alignment,
        deviation_tolerance=check.deviation_mm,
        brep_iou=brep_iou,
    )


def verify_script(
    task: Task, script: str, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    """Run ``script`` in a fresh session (with ``limits``) and score the solid it binds to
    ``result`` (or shows) against ``task``. The solid is exported as BREP and measured in
    another fresh session."""
    started = time.perf_counter()
    try:
        reference = reference_part(task)
    except ReferenceBuildError as exc:
        return Outcome(task.id, None, "reference", str(exc), time.perf_counter() - started)
    with Session("cadquery", limits) as session:
        ran = session.run(script, filename=filename)
        if not ran.ok:
            message = ran.error.message if ran.error else "failed"
            return Outcome(task.id, None, "script", message, time.perf_counter() - started)
        brep, why = export_brep(session)
    tier = task.verification.final_tier
    if brep is None:  # no solid: a score of 0, and why
        report = verify_for_task(task, None, reference, tier)
        message = why.error.message if why.error else "the script built no part"
        return Outcome(task.id, report, "no_part", message, time.perf_counter() - started)
    measured = measure(
        brep,
        tolerance=exact_tolerance(task, reference),
        reference_brep=reference.brep if tier == "exact" else None,
    )
    if measured.part is None:
        return Outcome(task.id, None, "verifier", measured.error, time.perf_counter() - started)
    report = verify_for_task(task, measured.part, reference, tier, brep_iou=measured.brep_iou)
    kind = "verifier" if report.errors else None
    error = report.errors[0] if report.errors else None
    return Outcome(task.id, report, kind, error, time.perf_counter() - started)


def verify_files(
    candidate: Path, reference: Path, *, tier: str = "exact", alignment: str = "none"
) -> VerifierReport:
    """Score a part file against another (STEP, BREP, STL, OBJ, GLB). B-Rep files are measured
    in sandbox sessions, the candidate as finely as the reference's tolerances need; when both
    are B-Rep and the tier is exact, a B-Rep boolean cross-checks the IoU.
    Both B-Rep parts are meshed at the same tolerance, so a part scored against itself reads 1.
    Raises ``PartError`` for a file that cannot be read."""
    target = load_part(reference)
    tolerance = tessellation_tolerance(target.mesh.extents, EXACT_TOLERANCE_SHARE)
    if target.brep is not None:  # meshed at its default tolerance so far: mesh it as the candidate
        target = load_part(reference, tolerance=tolerance)
    measured = measure_file(
        candidate,
        tolerance=tolerance,
        reference_brep=target.brep if tier == "exact" else None,
    )
    return verify_part(
        measured.part, target, tier=tier, alignment=alignment, brep_iou=measured.brep_iou
    )


def verify_file_pair(candidate: Path, reference: Path, tier: str, alignment: str) -> VerifierReport:
    """:func:`verify_files` with every argument by position (``Domain.verify_files``)."""
    return verify_files(candidate, reference, tier=tier, alignment=alignment)


def export_reference(task: Task, fmt: str) -> bytes:
    """The task's reference part as file bytes: ``step``, ``stl``, ``brep`` (mm) or ``glb`` (its
    fine mesh)."""
    if fmt == "glb":
        mesh = reference_part(task).mesh
        return trimesh.Trimesh(mesh.vertices, mesh.faces).export(file_type="glb")
    with Session("cadquery") as session:
        ran = session.run(task.reference, filename=f"<reference {task.id}>")
        exported = session.request("export", {"format": fmt}) if ran.ok else ran
    if not exported.ok or not isinstance(exported.value, bytes):
        raise ReferenceBuildError(f"{task.id}: the reference did not export: {exported.feedback()}")
    return exported.value


def target_image(task: Task, view_size: int = 256) -> np.ndarray:
    """The reference part's iso, front, right and top views, labelled, as one RGB ``uint8``
    tile of ``view_size`` px views."""
    from toolgym.renderers.labels import label_views
    from toolgym.renderers.mesh_views import Framing, MeshRenderer, tile

    mesh = reference_part(task).mesh
    renderer = MeshRenderer(view_size)
    try:
        return label_views(tile(renderer.render(mesh, Framing.around(mesh.bounds)).rgb))
    finally:
        renderer.close()
