"""The verifier's own test suites: near misses that must fail, remodellings that must pass.

A reward an agent can satisfy with the wrong part teaches the wrong part, and one that rejects a
right part built another way teaches a single way of modelling. So every task's reference comes
with **near misses** a designer would reject: a feature removed (one face defeatured away by
OpenCASCADE: a hole, a fillet, a chamfer, a boss's side), a count wrong (one of several equal
features removed), a dimension off (the part stretched 1 mm or 10 % along its longest side; for
procedural families, each parameter moved by max(1 mm, 10 %)). And a list of **equivalent
remodellings**: the same part built in two ways that must both pass.

These build trusted reference programs, never agent code. OpenCASCADE can crash while it
defeatures or transforms some solids, so each variant is made in a forked child
(:func:`contained`) and comes back as BREP bytes, to be measured in a sandbox session like any
part; a variant whose child crashes or hangs is skipped.
"""

from __future__ import annotations

import dataclasses
import io
import os
import select
import signal
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from toolgym.envs.cadquery.artifacts import measure
from toolgym.envs.cadquery.families import Family
from toolgym.envs.cadquery.verification import (
    exact_tolerance,
    reference_part,
    verify_for_task,
    verify_script,
)
from toolgym.envs.tasks.model import Task, Verification
from toolgym.verifiers.parts import Part
from toolgym.verifiers.report import VerifierReport

DIMENSION_ERROR_MM = 1.0
DIMENSION_ERROR_FRACTION = 0.10


@dataclasses.dataclass(frozen=True)
class Variant:
    """A part derived from a reference: what was changed, and the part as BREP bytes."""

    description: str
    brep: bytes


def build(program: str) -> Any:
    """The solid a trusted reference program binds to ``result``, as a CadQuery ``Shape``."""
    import cadquery as cq

    namespace: dict[str, Any] = {"cq": cq, "cadquery": cq}
    exec(compile(program, "<reference>", "exec"), namespace)
    result = namespace["result"]
    return result.val() if isinstance(result, cq.Workplane) else result


def near_misses(shape: Any) -> list[Variant]:
    """Near misses of a reference solid: each non-planar face group with one face removed, and
    the part stretched along its longest side. Only variants that OpenCASCADE builds into one
    valid solid, different from the reference, are kept."""
    made = [(stretched_description(shape), contained(stretched, shape))]
    seen = set()
    for face in shape.Faces():
        key = (face.geomType(), round(face.Area(), 3))
        if face.geomType() == "PLANE" or key in seen:
            continue
        seen.add(key)
        made.append(
            (f"one {face.geomType().lower()} face removed", contained(defeatured, shape, face))
        )
    return [Variant(description, brep) for description, brep in made if brep is not None]


def contained(make: Callable[..., Any], *args: Any, timeout: float = 30.0) -> bytes | None:
    """``make(*args)`` (a shape or ``None``) computed in a forked child and returned as BREP
    bytes; ``None`` if the child crashed, hung past ``timeout`` seconds or made nothing."""
    from OCP.BRepTools import BRepTools

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # The child only runs OpenCASCADE on its copy and leaves by os._exit; one that deadlocks
        # on a lock inherited from another thread anyway is killed at the timeout, and skipped.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: build, write the BREP, leave without running the parent's cleanup
        os.close(read_end)
        try:
            shape = make(*args)
            if shape is not None:
                stream = io.BytesIO()
                BRepTools.Write_s(shape.wrapped, stream)
                os.write(write_end, stream.getvalue())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0 and select.select([read_end], [], [], left)[
            0
        ]:
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    crashed = os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL
    return data if data and not crashed else None


def defeatured(shape: Any, face: Any) -> Any | None:
    """``shape`` with ``face`` removed and the gap closed by its neighbours (OpenCASCADE's
    defeaturing), or ``None`` where that does not give a valid solid of another volume."""
    import cadquery as cq
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Defeaturing

    operation = BRepAlgoAPI_Defeaturing()
    operation.SetShape(shape.wrapped)
    operation.AddFaceToRemove(face.wrapped)
    operation.SetRunParallel(False)
    operation.Build()
    if not operation.IsDone():
        return None
    result = cq.Shape.cast(operation.Shape())
    valid = result.isValid() and len(result.Solids()) == len(shape.Solids())
    if not valid or abs(result.Volume() - shape.Volume()) < 1e-6 * shape.Volume():
        return None
    return result


def _stretch(shape: Any) -> tuple[int, float, float]:
    """The longest axis of ``shape``, its length, and the factor that lengthens it by
    max(1 mm, 10 %)."""
    box = shape.BoundingBox()
    extents = (box.xlen, box.ylen, box.zlen)
    axis = max(range(3), key=lambda i: extents[i])
    length = extents[axis]
    return axis, length, 1 + max(DIMENSION_ERROR_MM / length, DIMENSION_ERROR_FRACTION)


def stretched_description(shape: Any) -> str:
    axis, length, factor = _stretch(shape)
    return f"{'xyz'[axis]} extent {length * (factor - 1):.3g} mm longer"


def stretched(shape: Any) -> Any:
    """``shape`` scaled along its longest side, about its centre, by max(1 mm, 10 %)."""
    import cadquery as cq

    axis, _, factor = _stretch(shape)
    box = shape.BoundingBox()
    scale = [1.0, 1.0, 1.0]
    scale[axis] = factor
    centre = box.center
    matrix = cq.Matrix(
        [
            [scale[0], 0, 0, centre.x * (1 - scale[0])],
            [0, scale[1], 0, centre.y * (1 - scale[1])],
            [0, 0, scale[2], centre.z * (1 - scale[2])],
        ]
    )
    return shape.transformGeometry(matrix)


def parameter_near_misses(family: Family, task: Task) -> Iterator[tuple[str, str]]:
    """Each numeric parameter of a procedural task moved by max(1 mm, 10 %), one at a time, and
    each count moved by one: ``(description, program)`` pairs. Integer parameters are counts;
    a count that the family's program cannot render (a section it has no size for) is skipped."""
    for name, value in task.parameters.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value == 0:
            continue
        if isinstance(value, int):
            moved: float = value + 1
        else:
            moved = value + max(DIMENSION_ERROR_MM, DIMENSION_ERROR_FRACTION * abs(value))
        try:
            program = family.program({**task.parameters, name: moved})
        except (KeyError, IndexError, ValueError):
            continue
        yield f"{name} {value:g} → {moved:g}", program


@dataclasses.dataclass(frozen=True)
class Remodelling:
    """One part, two programs: a reference and an equivalent built another way."""

    name: str
    reference: str
    equivalent: str


REMODELLINGS = (
    Remodelling(
        "hole() against cutting a cylinder",
        "result = cq.Workplane().box(40, 30, 8).faces('>Z').workplane().hole(10)",
        "result = cq.Workplane().box(40, 30, 8).cut(cq.Workplane().cylinder(20, 5))",
    ),
    Remodelling(
        "filleted box against an extruded rounded rectangle",
        "result = cq.Workplane().box(40, 30, 10).edges('|Z').fillet(5)",
        "result = (cq.Workplane().sketch().rect(40, 30).vertices().fillet(5).finalize()"
        ".extrude(10).translate((0, 0, -5)))",
    ),
    Remodelling(
        "shell against boolean subtraction",
        "result = cq.Workplane().box(40, 30, 20).faces('>Z').shell(-2)",
        "result = cq.Workplane().box(40, 30, 20).cut("
        "cq.Workplane().box(36, 26, 18).translate((0, 0, 1)))",
    ),
    Remodelling(
        "revolve against stacked cylinders",
        "result = (cq.Workplane('XZ')"
        ".polyline([(0, 0), (10, 0), (10, 8), (6, 8), (6, 20), (0, 20)])"
        ".close().revolve(360, (0, 0, 0), (0, 1, 0)))",
        "result = (cq.Workplane().circle(10).extrude(8)"
        ".union(cq.Workplane().workplane(offset=8).circle(6).extrude(12)))",
    ),
    Remodelling(
        "a mirrored half against the whole",
        "result = cq.Workplane().box(60, 20, 10).faces('>Z').workplane()"
        ".pushPoints([(-20, 0), (20, 0)]).hole(6)",
        "result = (cq.Workplane().box(30, 20, 10).translate((15, 0, 0)).faces('>Z').workplane()"
        ".center(20, 0).hole(6).mirror('YZ', union=True))",
    ),
    Remodelling(
        "chamfer() against a revolved profile",
        "result = cq.Workplane().cylinder(20, 10).faces('>Z').chamfer(2)",
        "result = (cq.Workplane('XZ').polyline([(0, -10), (10, -10), (10, 8), (8, 10), (0, 10)])"
        ".close().revolve(360, (0, 0, 0), (0, 1, 0)))",
    ),
    Remodelling(
        "a slot cut by a rounded rectangle against a box and two cylinders",
        "result = cq.Workplane().box(50, 30, 6).faces('>Z').workplane().slot2D(30, 8).cutThruAll()",
        "result = (cq.Workplane().box(50, 30, 6).cut(cq.Workplane().box(22, 8, 10))"
        ".cut(cq.Workplane().pushPoints([(-11, 0), (11, 0)]).cylinder(10, 4)))",
    ),
    Remodelling(
        "an L bracket as a union against an extruded profile",
        "result = cq.Workplane().box(40, 20, 5).translate((20, 10, 2.5)).union("
        "cq.Workplane().box(5, 20, 30).translate((2.5, 10, 15)))",
        "result = (cq.Workplane('XZ')"
        ".polyline([(0, 0), (40, 0), (40, 5), (5, 5), (5, 30), (0, 30)])"
        ".close().extrude(-20))",
    ),
)


# -- running the suites through the verifier's exact path ------------------------------------------


def near_miss_reports(task: Task) -> list[tuple[str, VerifierReport]]:
    """Each near miss of a task's reference, measured and verified as an agent's final part is."""
    reference = reference_part(task)
    return [
        (variant.description, _verify_brep(task, reference, variant.brep))
        for variant in near_misses(build(task.reference))
    ]


def parameter_near_miss_reports(family: Family, task: Task) -> list[tuple[str, VerifierReport]]:
    """:func:`parameter_near_misses` of a procedural task, each built in a session and verified
    (parameters that give no valid part are skipped)."""
    reports = []
    for description, program in parameter_near_misses(family, task):
        outcome = verify_script(task, program)
        if outcome.report is not None and outcome.report.validity.get("valid"):
            reports.append((description, outcome.report))
    return reports


def remodelling_report(remodelling: Remodelling) -> VerifierReport:
    """The equivalent program verified against the reference program, as a task."""
    task = Task(
        id=f"remodelling/{remodelling.name}",
        domain="cadquery",
        prompt=remodelling.name,
        reference=remodelling.reference,
        parameters={},
        difficulty=1,
        verification=Verification(),
        split="test",
    )
    outcome = verify_script(task, remodelling.equivalent)
    if outcome.report is None:
        raise RuntimeError(f"{remodelling.name}: {outcome.error}")
    return outcome.report


def _verify_brep(task: Task, reference: Part, brep: bytes) -> VerifierReport:
    measured = measure(
        brep, tolerance=exact_tolerance(task, reference), reference_brep=reference.brep
    )
    if measured.part is None:
        raise RuntimeError(f"{task.id}: a near miss could not be measured: {measured.error}")
    return verify_for_task(task, measured.part, reference, "exact", brep_iou=measured.brep_iou)
