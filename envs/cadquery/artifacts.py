"""Parts out of CadQuery sessions and files, as verifiers take them.

Everything that reads or measures a B-Rep runs in a sandbox session, under its time and memory
limits: the part crosses to the verifier as plain arrays (a mesh, a face inventory, the B-Rep's
shells) and as BREP bytes that this process never parses. The agent's session is asked for one
thing only, its solid as BREP bytes (:func:`export_brep`); a :class:`Measurer`, a session that
runs no agent code and starts each measurement from its own fresh state, reads those bytes and
measures them. So every tier scores the exported solid, and the same one, whatever the agent's
code did to its own session (its copy of the measuring code included).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.envs.sandbox import CallResult, Limits, SandboxError, Session
from toolgym.envs.sandbox.rewind import Rewind
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
    """The part a script bound to ``name`` (or showed), with its face inventory, meshed by the
    session itself: for a look only (tests, a GLB export). Scored parts are measured from
    :func:`export_brep` by a :class:`Measurer`, since agent code can change how its own session
    answers.

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
    """The session's ``name`` solid as BREP bytes, or ``None`` and the failed call. A note on
    which object that is, when not obvious, is in ``result.value["note"]``."""
    result = session.request("brep", {"name": name})
    value = result.value if result.ok and isinstance(result.value, dict) else {}
    data = value.get("brep")
    return (data if isinstance(data, bytes) else None), result


def brep_note(result: CallResult) -> str | None:
    """The note :func:`export_brep`'s call carries (which object was scored), if any."""
    note = result.value.get("note") if isinstance(result.value, dict) else None
    return note if isinstance(note, str) else None


class Measurer:
    """Measures parts sent as file bytes in a sandbox session that runs no agent code.

    The session starts once, and every measurement starts from the state it started in: after
    each, the session is rolled back to its first snapshot (one fork), in a background thread
    so that the fork overlaps the caller's verification and rendering, and the next
    measurement waits for it. So each is what a fresh session would measure, and nothing one
    part did (a crash, the memory it took) reaches the next. An env keeps one for its episodes;
    :func:`measure` uses one (``reusable=False``: no snapshot, no rollback) for a single part.
    """

    def __init__(self, limits: Limits | None = None, *, reusable: bool = True) -> None:
        self.limits, self.reusable = limits, reusable  # limits: MEASURE_LIMITS by default
        self._session: Session | None = None
        self._used = False  # a single-use session has measured
        self._rewind = Rewind()  # the pending return to the fresh state

    def measure(
        self,
        data: bytes,
        *,
        tolerance: float | None = None,
        reference_brep: bytes | None = None,
        file_format: str = "brep",
    ) -> Measured:
        """Measure a solid sent as file bytes (``brep`` or ``step``): its mesh (chordal
        ``tolerance`` in mm, default 1e-3 of its diagonal), face inventory, shells and BREP;
        with ``reference_brep``, also the IoU of the two B-Rep solids by an OpenCASCADE
        boolean."""
        args: dict[str, Any] = {
            "data": data,
            "format": file_format,
            "angular_tolerance": ANGULAR_TOLERANCE,
        }
        if tolerance is None:
            args["relative_tolerance"] = TESSELLATION_TOLERANCE
        else:
            args["tolerance"] = tolerance
        try:
            session = self._fresh()
        except SandboxError as exc:
            return Measured(None, error=f"the measuring session failed: {exc}")
        try:
            return self._measure(session, args, tolerance, reference_brep)
        finally:
            self._release(session)

    def _measure(
        self,
        session: Session,
        args: dict[str, Any],
        tolerance: float | None,
        reference_brep: bytes | None,
    ) -> Measured:
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
        common, a, b = (float(volumes.value[k]) for k in ("common", "candidate", "reference"))
        union = a + b - common
        return Measured(part, float(np.clip(common / union, 0.0, 1.0)) if union > 0 else 0.0)

    def _fresh(self) -> Session:
        """The session in its fresh state: started, or back from the last measurement."""
        failed = self._rewind.wait()
        if self._session is None:
            limits = self.limits or MEASURE_LIMITS
            self._session = Session("cadquery", limits, snapshot_on_start=self.reusable)
        elif failed is not None or self._used:
            self._session.restart()  # raises SandboxError naming the cause if it cannot
        self._used = not self.reusable
        return self._session

    def _release(self, session: Session) -> None:
        """Start the return to the fresh state (reusable measurers only)."""
        if self.reusable:
            self._rewind.start(session)

    @property
    def session(self) -> Session | None:
        """The measuring session once started (its ``layers`` and ``allowed_paths``)."""
        self._rewind.wait()
        return self._session

    def close(self) -> None:
        self._rewind.wait()
        if self._session is not None:
            self._session.close()
            self._session = None

    def __enter__(self) -> Measurer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def measure(
    data: bytes,
    *,
    tolerance: float | None = None,
    reference_brep: bytes | None = None,
    file_format: str = "brep",
) -> Measured:
    """:meth:`Measurer.measure` in a fresh session of its own."""
    with Measurer(reusable=False) as measurer:
        return measurer.measure(
            data, tolerance=tolerance, reference_brep=reference_brep, file_format=file_format
        )


def _why(result: CallResult) -> str:
    """Why a measurement failed, in one line: the error's message (a traceback of the trusted
    measuring code says nothing about the file), or the feedback when there is no message."""
    if result.error is None or not result.error.message:
        return result.feedback()
    return result.error.message.removeprefix("ValueError: ").removeprefix("TypeError: ")


def _part(value: Any) -> Part:
    value = value if isinstance(value, dict) else {}
    return Part.from_arrays(
        value.get("vertices"), value.get("faces"), value.get("features"), value.get("topology")
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
