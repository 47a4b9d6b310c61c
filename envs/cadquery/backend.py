"""CadQuery inside the sandbox: the script namespace, solid summaries, tessellation and export.

Units are millimetres throughout, as in CadQuery. OpenCASCADE's parallel booleans start a thread
pool that does not survive ``fork`` (CadQuery issues #880 and #1354), and the sandbox forks workers
for snapshots, so booleans are forced single-threaded here.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from toolgym.envs.cadquery.tools import Tools, registry
from toolgym.envs.sandbox.backend import Backend, Namespace, Request

EXPORT_FORMATS = {"step": "STEP", "stl": "STL", "brep": "BREP"}


class CadQueryBackend(Backend):
    name = "cadquery"
    distributions = ("cadquery", "cadquery-ocp")

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
        shown: list[Any] = []

        def show_object(obj: Any, name: str | None = None, options: Any = None) -> None:
            """CQ-editor compatible: marks ``obj`` as the script's result."""
            shown.append(obj)

        namespace.update(
            cq=cadquery, cadquery=cadquery, show_object=show_object, __shown__=shown, tools=Tools()
        )
        return namespace

    def describe(self, value: Any) -> Any:
        return summarize(value)

    def requests(self) -> dict[str, Request]:
        return {
            "tessellate": tessellate,
            "export": export,
            "tool": apply_tool,
            "describe": describe,
        }


def apply_tool(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Apply one tool call (``{"name", "arguments"}``) to ``result``; returns its summary."""
    namespace["result"] = registry.apply(namespace.get("result"), args.get("call"))
    return summarize(namespace["result"])


def describe(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Summary of the result (volume, bounding box, validity), or ``None`` if there is none."""
    try:
        return summarize(result_shape(namespace, str(args.get("name", "result"))))
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


def result_shape(namespace: Namespace, name: str = "result") -> Any:
    """The solid a script produced: ``namespace[name]``, else the last ``show_object`` argument.

    Raises ``NameError`` if there is none and ``TypeError`` if it holds no solid (a sketch, a wire).
    """
    shown = namespace.get("__shown__") or []
    if name in namespace:
        shape = to_shape(namespace[name])
    elif name == "result" and shown:
        shape = to_shape(shown[-1])
    else:
        raise NameError(f"the script bound no {name!r} (and showed no object)")
    if not shape.Solids():
        raise TypeError(f"the result holds no solid (it is a {type(shape).__name__})")
    return shape


def tessellate(namespace: Namespace, args: dict[str, Any]) -> dict[str, np.ndarray]:
    """Triangle mesh of a result.

    Args: ``name`` (default ``result``); ``tolerance``, the chordal deviation in mm, or else
    ``relative_tolerance``, the same as a fraction of the bounding-box diagonal (default 1e-3);
    ``angular_tolerance`` in radians (default 0.1).

    Returns ``vertices`` (float64, (n, 3), mm) and ``faces`` (int32, (m, 3), counter-clockwise
    seen from outside).
    """
    shape = result_shape(namespace, str(args.get("name", "result")))
    if "tolerance" in args:
        tolerance = float(args["tolerance"])
    else:
        diagonal = shape.BoundingBox().DiagonalLength
        tolerance = max(float(args.get("relative_tolerance", 1e-3)) * diagonal, 1e-6)
    vertices, triangles = shape.tessellate(tolerance, float(args.get("angular_tolerance", 0.1)))
    return {
        "vertices": np.array([v.toTuple() for v in vertices], dtype=np.float64).reshape(-1, 3),
        "faces": np.array(triangles, dtype=np.int32).reshape(-1, 3),
    }


def export(namespace: Namespace, args: dict[str, Any]) -> bytes:
    """A result as file bytes. Args: ``name``, ``format`` (``step``, ``stl`` or ``brep``)."""
    import cadquery as cq

    fmt = str(args.get("format", "step")).lower()
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    shape = result_shape(namespace, str(args.get("name", "result")))
    fd, path = tempfile.mkstemp(suffix=f".{fmt}", dir=os.getcwd())
    os.close(fd)
    try:
        cq.exporters.export(shape, path, EXPORT_FORMATS[fmt])
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)
