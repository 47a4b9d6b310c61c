"""CadQuery inside the sandbox: the script namespace, solid summaries, tessellation and export.

Units are millimetres throughout, as in CadQuery. OpenCASCADE's parallel booleans start a thread
pool that does not survive ``fork`` (CadQuery issues #880 and #1354), and the sandbox forks workers
for snapshots, so booleans are forced single-threaded here.
"""

from __future__ import annotations

import dataclasses
import io
import os
import tempfile
from typing import Any

from toolgym.envs.cadquery import measure
from toolgym.envs.cadquery.tools import Tools, registry
from toolgym.envs.sandbox.backend import Backend, Namespace, Request

EXPORT_FORMATS = {"step": "STEP", "stl": "STL", "brep": "BREP"}


class CadQueryBackend(Backend):
    name = "cadquery"

    def warm_up(self) -> None:
        import cadquery
        import cadquery.occ_impl.exporters  # noqa: F401
        from cadquery.occ_impl.shapes import Shape
        from OCP.BOPAlgo import BOPAlgo_Options

        BOPAlgo_Options.SetParallelMode_s(False)
        bool_op = Shape._bool_op

        def serial_bool_op(
            self: Any, args: Any, tools: Any, op: Any, parallel: bool = False
        ) -> Any:
            return bool_op(self, args, tools, op, parallel=False)

        Shape._bool_op = serial_bool_op

    def session_globals(self) -> Namespace:
        import cadquery

        namespace = super().session_globals()
        shown = Shown()

        def show_object(obj: Any, name: str | None = None, options: Any = None) -> None:
            """CQ-editor compatible: shows ``obj``; what a step shows is its result, unless it
            binds ``result`` afterwards."""
            shown.add(obj, namespace.get("result", _UNBOUND))

        namespace.update(
            cq=cadquery, cadquery=cadquery, show_object=show_object, __shown__=shown, tools=Tools()
        )
        return namespace

    def before_exec(self, namespace: Namespace) -> None:
        shown = namespace.get("__shown__")
        if isinstance(shown, Shown):
            shown.step += 1

    def describe(self, value: Any) -> Any:
        return summarize(value)

    def requests(self) -> dict[str, Request]:
        return {
            "tessellate": tessellate,
            "brep": brep,
            "export": export,
            "tool": apply_tool,
            "describe": describe,
            "measure": measure_brep,
            "brep_volumes": brep_volumes,
        }


_UNBOUND = object()  # what ``result`` was when nothing was bound to it


@dataclasses.dataclass
class Shown:
    """Objects passed to ``show_object``: each with the step that showed it and what ``result``
    was bound to at that moment, so the later of the two is the one scored."""

    step: int = 0
    entries: list[tuple[int, Any, Any]] = dataclasses.field(default_factory=list)

    def add(self, obj: Any, result: Any) -> None:
        self.entries.append((self.step, obj, result))

    def latest(self) -> tuple[list[Any], Any]:
        """The objects shown by the last step that showed any, and ``result`` at the last show."""
        if not self.entries:
            return [], _UNBOUND
        last_step, _, result = self.entries[-1]
        return [obj for step, obj, _ in self.entries if step == last_step], result


def apply_tool(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Apply one tool call (``{"name", "arguments"}``) to ``result``; returns its summary."""
    namespace["result"] = registry.apply(namespace.get("result"), args.get("call"))
    return summarize(namespace["result"])


def describe(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Summary of the result (volume, bounding box, validity), or ``None`` if there is none."""
    try:
        return summarize(result_shape(namespace, str(args.get("name", "result")))[0])
    except (NameError, TypeError):
        return None


def summarize(value: Any) -> dict[str, Any] | None:
    """Solids, volume (mm³), area (mm²), bounding box (mm) and validity of a CadQuery object;
    ``None`` for anything else."""
    try:
        shape = to_shape(value)
    except TypeError:
        return None
    bbox = shape.BoundingBox()
    return {
        "type": type(value).__name__,
        "solids": len(shape.Solids()),
        "volume_mm3": shape.Volume(),
        "area_mm2": shape.Area(),
        "bbox_mm": [bbox.xmin, bbox.ymin, bbox.zmin, bbox.xmax, bbox.ymax, bbox.zmax],
        "valid": shape.isValid(),
    }


def to_shape(value: Any) -> Any:
    """A CadQuery ``Shape`` from a Workplane, Shape or Assembly; ``TypeError`` for anything else."""
    import cadquery as cq

    if isinstance(value, cq.Workplane):
        shapes = [v for v in value.vals() if isinstance(v, cq.Shape)]
        if not shapes:
            raise TypeError("the Workplane holds no solid")
        return shapes[0] if len(shapes) == 1 else cq.Compound.makeCompound(shapes)
    if isinstance(value, cq.Shape):
        return value
    if isinstance(value, cq.Assembly):
        return value.toCompound()
    raise TypeError(f"expected a CadQuery Workplane, Shape or Assembly, got {type(value).__name__}")


def result_shape(namespace: Namespace, name: str = "result") -> tuple[Any, str | None]:
    """The solid a script produced, and a note for the agent when which one is not obvious.

    That is ``namespace[name]``, or for ``result``: what the latest step showed with
    ``show_object`` (several shown objects are fused, as CQ-editor shows them all), unless
    ``result`` was bound after that show. Raises ``NameError`` if there is none and ``TypeError``
    if it holds no solid (a sketch, a wire).
    """
    shown = namespace.get("__shown__")
    objects, result_at_show = shown.latest() if isinstance(shown, Shown) else ([], _UNBOUND)
    note = None
    if objects and name == "result" and namespace.get(name, _UNBOUND) is result_at_show:
        shape = to_shape(objects[0])
        if len(objects) > 1:
            shape = shape.fuse(*(to_shape(o) for o in objects[1:])).clean()
            note = f"scored the union of the {len(objects)} objects passed to show_object"
    elif name in namespace:
        shape = to_shape(namespace[name])
        if objects:
            note = f"scored {name!r}, bound after the last show_object"
    else:
        raise NameError(f"the script bound no {name!r} (and showed no object)")
    if not shape.Solids():
        raise TypeError(f"the result holds no solid (it is a {type(shape).__name__})")
    return shape, note


def tessellate(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Triangle mesh of a result, and its face inventory when ``features`` is true.

    Args: ``name`` (default ``result``); ``tolerance``, the chordal deviation in mm, or else
    ``relative_tolerance``, the same as a fraction of the bounding-box diagonal (default 1e-3);
    ``angular_tolerance`` in radians (default 0.1); ``features`` (default false).

    Returns ``vertices`` (float64, (n, 3), mm) and ``faces`` (int32, (m, 3), counter-clockwise
    seen from outside), ``features`` and ``topology`` (see :func:`measure.face_inventory` and
    :func:`measure.topology`) and ``note`` (which object was scored, when that is not obvious).
    Answered by the session that ran the script, so for a look only: what is scored is measured
    from :func:`brep` in a session that ran no agent code.
    """
    shape, note = result_shape(namespace, str(args.get("name", "result")))
    return _measured(shape, args) | {"note": note}


def brep(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """A result as BREP bytes (``brep``, without triangulations: only the solid) and ``note``
    (which object was scored, when that is not obvious), for a trusted session to measure.

    Args: ``name`` (default ``result``)."""
    from OCP.BRepTools import BRepTools
    from OCP.TopTools import TopTools_FormatVersion

    shape, note = result_shape(namespace, str(args.get("name", "result")))
    stream = io.BytesIO()
    version = TopTools_FormatVersion.TopTools_FormatVersion_VERSION_1
    BRepTools.Write_s(shape.wrapped, stream, False, False, version)
    return {"brep": stream.getvalue(), "note": note}


def _measured(shape: Any, args: dict[str, Any]) -> dict[str, Any]:
    """Mesh of ``shape`` and, with ``features``, its face inventory and its topology (the rows
    of :func:`measure.topology`)."""
    if "tolerance" in args:
        tolerance = float(args["tolerance"])
    else:
        diagonal = shape.BoundingBox().DiagonalLength
        tolerance = float(args.get("relative_tolerance", 1e-3)) * diagonal
    tolerance = max(tolerance, 1e-6)
    out = measure.tessellation(shape, tolerance, float(args.get("angular_tolerance", 0.1)))
    face_volumes = out.pop("face_volumes")
    if args.get("features"):
        out["features"] = measure.face_inventory(shape)
        out["topology"] = measure.topology(shape, face_volumes)
    return out


def measure_brep(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """:func:`tessellate` with features, for a part sent as file bytes (``data``, of ``format``
    ``brep`` or ``step``) rather than built in this session; also its B-Rep ``volume`` and the
    part as ``brep`` bytes, and ``note``: what had to be done to read it (closed shells sewn into
    solids), or ``None``. Meant for sessions that run no agent code."""
    import cadquery as cq

    fmt = str(args.get("format", "brep")).lower()
    if fmt == "step":
        path = os.path.join(os.getcwd(), "part.step")
        with open(path, "wb") as f:
            f.write(args["data"])
        shape = cq.importers.importStep(path).val()
        if not isinstance(shape, cq.Shape):
            raise TypeError("the STEP file holds no shape")
    elif fmt == "brep":
        shape = cq.Shape.cast(measure.read_brep(args["data"]))
    else:
        raise ValueError(f"unknown format {fmt!r}; known: brep, step")
    shape, note = measure.closed_solids(shape)  # closed shells become solids, said in ``note``
    if fmt == "brep" and note is None:
        brep = args["data"]
    else:
        brep = export({"result": shape}, {"format": "brep"})
    return _measured(shape, {**args, "features": True}) | {
        "volume": measure.volume(shape.wrapped),
        "brep": brep,
        "note": note,
    }


def brep_volumes(namespace: Namespace, args: dict[str, Any]) -> dict[str, float]:
    """Volumes of two parts sent as BREP bytes (``candidate``, ``reference``) and of their B-Rep
    intersection: ``candidate``, ``reference``, ``common`` (units³)."""
    a, b = measure.read_brep(args["candidate"]), measure.read_brep(args["reference"])
    return {
        "candidate": measure.volume(a),
        "reference": measure.volume(b),
        "common": measure.common_volume(a, b),
    }


def export(namespace: Namespace, args: dict[str, Any]) -> bytes:
    """A result as file bytes. Args: ``name``, ``format`` (``step``, ``stl`` or ``brep``)."""
    import cadquery as cq

    fmt = str(args.get("format", "step")).lower()
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    shape, _ = result_shape(namespace, str(args.get("name", "result")))
    fd, path = tempfile.mkstemp(suffix=f".{fmt}", dir=os.getcwd())
    os.close(fd)
    try:
        cq.exporters.export(shape, path, EXPORT_FORMATS[fmt])
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)
