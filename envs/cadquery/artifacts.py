"""Parts out of CadQuery sessions and files, as verifiers take them.

Everything that reads or measures a B-Rep runs in a sandbox session, under its time and memory
limits: the part crosses to the verifier as plain arrays (a mesh and a face inventory) and as
BREP bytes that this process never parses. The exact tier measures a part in a fresh session that
has run no agent code, from the BREP bytes the agent's session exported, so what is scored is the
exported solid, whatever the agent's code did to its own session.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.envs.sandbox import CallResult, Limits, Session
from toolgym.verifiers.features import deviation_tolerance
from toolgym.verifiers.parts import (
    ANGULAR_TOLERANCE,
    BREP_FORMATS,
    TESSELLATION_TOLERANCE,
    Part,
    PartError,
    check_file,
)

# A fresh session measures one part: generous for a real part, finite for a crafted one.
MEASURE_LIMITS = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=4096)
BREP_CROSSCHECK_S = 10.0  # the B-Rep boolean is only a cross-check: give up on it early
STEP_TOLERANCE_SHARE = 4  # per-step meshes: chordal error ≤ 1/4 of the deviation tolerance
EXACT_TOLERANCE_SHARE = 8  # exact-tier meshes: ≤ 1/8 of it (the reference too: 3/8 in all)


@dataclasses.dataclass(frozen=True)
class Measured:
    """A part measured in a clean session, and the B-Rep IoU against a reference (or why not)."""

    part: Part | None
    brep_iou: float | str | None = None
    error: str | None = None


def tessellation_tolerance(
    extents: np.ndarray, share: int, deviation_mm: float | None = None
) -> float:
    """Chordal tolerance (mm) for meshes compared with a reference of bounding-box ``extents``:
    tessellation stays under 1/``share`` of the deviation tolerance and 1e-3 of the diagonal."""
    extents = np.asarray(extents, dtype=np.float64)
    tolerance = deviation_mm or deviation_tolerance(extents)
    diagonal = float(np.linalg.norm(extents))
    return max(min(TESSELLATION_TOLERANCE * diagonal, tolerance / share), 1e-6)


def session_part(
    session: Session, name: str = "result", *, tolerance: float | None = None
) -> tuple[Part | None, CallResult]:
    """The part a script bound to ``name`` (or showed), with its face inventory.

    ``tolerance`` is the chordal deviation in mm (default: 1e-3 of the part's diagonal). Returns
    ``(None, result)`` when the session has no such solid; ``result`` says why. A note on which
    object was scored, when that is not obvious, is in ``result.value["note"]``.
    """
    args: dict[str, Any] = {"name": name, "features": True, "angular_tolerance": ANGULAR_TOLERANCE}
    if tolerance is None:
        args["relative_tolerance"] = TESSELLATION_TOLERANCE
    else:
        args["tolerance"] = tolerance
    mesh = session.request("tessellate", args)
    if not mesh.ok:
        return None, mesh
    return _part(mesh.value), mesh


def export_brep(session: Session, name: str = "result") -> tuple[bytes | None, CallResult]:
    """The session's ``name`` solid as BREP bytes, or ``None`` and the failed call."""
    result = session.request("export", {"name": name, "format": "brep"})
    ok = result.ok and isinstance(result.value, bytes)
    return (result.value if ok else None), result


def measure(
    data: bytes,
    *,
    tolerance: float | None = None,
    reference_brep: bytes | None = None,
    file_format: str = "brep",
) -> Measured:
    """Measure a solid sent as file bytes (``brep`` or ``step``) in a fresh session: its mesh
    (chordal ``tolerance`` in mm, default 1e-3 of its diagonal), face inventory and BREP; with
    ``reference_brep``, also the IoU of the two B-Rep solids by an OpenCASCADE boolean."""
    args: dict[str, Any] = {
        "data": data,
        "format": file_format,
        "angular_tolerance": ANGULAR_TOLERANCE,
    }
    if tolerance is None:
        args["relative_tolerance"] = TESSELLATION_TOLERANCE
    else:
        args["tolerance"] = tolerance
    with Session("cadquery", MEASURE_LIMITS, snapshot_on_start=False) as session:
        measured = session.request("measure", args)
        if not measured.ok:
            return Measured(None, error=_why(measured))
        part = _part(measured.value)
        part.brep, part.tolerance = measured.value["brep"], tolerance
        note = measured.value.get("note")
        part.note = note if isinstance(note, str) else None
        if reference_brep is None:
            return Measured(part)
        volumes = session.request(
            "brep_volumes",
            {"candidate": part.brep, "reference": reference_brep},
            timeout=BREP_CROSSCHECK_S,
        )
    if not volumes.ok:
        return Measured(part, volumes.error.message if volumes.error else "failed")
    # An empty intersection of overlapping solids is a wrong answer from the kernel, and then
    # disagrees with the mesh IoU: the verifier records the mismatch, never takes the 0.
    common, a, b = (float(volumes.value[k]) for k in ("common", "candidate", "reference"))
    union = a + b - common
    return Measured(part, float(np.clip(common / union, 0.0, 1.0)) if union > 0 else 0.0)


def _why(result: CallResult) -> str:
    """Why a measurement failed, in one line: the error's message (a traceback of the trusted
    measuring code says nothing about the file), or the feedback when there is no message."""
    if result.error is None or not result.error.message:
        return result.feedback()
    return result.error.message.removeprefix("ValueError: ").removeprefix("TypeError: ")


def _part(value: Any) -> Part:
    value = value if isinstance(value, dict) else {}
    features = value.get("features")
    return Part.from_arrays(
        value.get("vertices"), value.get("faces"), None if features is None else features
    )


def measure_file(
    path: str | Path, *, tolerance: float | None = None, reference_brep: bytes | None = None
) -> Measured:
    """:func:`measure` for a part file: STEP and BREP are measured in a sandbox session (with
    their face inventory, and the B-Rep cross-check against ``reference_brep``); STL, OBJ and GLB
    are read as meshes. Raises ``PartError`` with the reason when the file cannot be read."""
    path = Path(path)
    check_file(path)
    suffix = path.suffix.lower()
    if suffix not in BREP_FORMATS:
        return Measured(Part.from_file(path))
    measured = measure(
        path.read_bytes(),
        tolerance=tolerance,
        reference_brep=reference_brep,
        file_format="brep" if suffix == ".brep" else "step",
    )
    if measured.part is None:
        raise PartError(f"{path}: cannot read as {suffix[1:].upper()}: {measured.error}")
    return measured


def load_part(path: str | Path, *, tolerance: float | None = None) -> Part:
    """The part in a file (see :func:`measure_file`)."""
    part = measure_file(path, tolerance=tolerance).part
    assert part is not None  # measure_file raises instead
    return part


def part_from_shape(shape: Any, tolerance: float | None = None) -> Part:
    """A part from a CadQuery ``Shape`` built in this process: for trusted shapes only (tests,
    benchmarks); agents' parts go through :func:`session_part` and :func:`measure`."""
    import io

    import cadquery as cq
    from OCP.BRepTools import BRepTools

    from toolgym.envs.cadquery.measure import face_inventory, tessellation

    shape = shape if isinstance(shape, cq.Shape) else cq.Shape.cast(shape)
    if tolerance is None:
        tolerance = max(TESSELLATION_TOLERANCE * shape.BoundingBox().DiagonalLength, 1e-6)
    mesh = tessellation(shape, tolerance, ANGULAR_TOLERANCE)
    stream = io.BytesIO()
    BRepTools.Write_s(shape.wrapped, stream)
    part = Part.from_arrays(mesh["vertices"], mesh["faces"], face_inventory(shape))
    part.brep = stream.getvalue()
    return part
