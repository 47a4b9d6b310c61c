"""Parts out of CadQuery sessions, as verifiers take them.

The mesh crosses the sandbox boundary as plain arrays. The exact solid crosses as BREP text, parsed
here by OpenCASCADE: plain data, never pickles, but parsed by a C++ reader, so only solids from the
sandbox's size-capped exports are read.
"""

from __future__ import annotations

import io

from OCP.BRep import BRep_Builder
from OCP.BRepTools import BRepTools
from OCP.TopoDS import TopoDS_Shape

from toolgym.envs.sandbox import CallResult, Session
from toolgym.verifiers.parts import TESSELLATION_TOLERANCE, Part


def read_brep(data: bytes) -> TopoDS_Shape:
    """An OpenCASCADE shape from BREP file bytes."""
    shape = TopoDS_Shape()
    BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
    if shape.IsNull():
        raise ValueError("the BREP data holds no shape")
    return shape


def session_part(
    session: Session, name: str = "result", *, exact: bool = True
) -> tuple[Part | None, CallResult]:
    """The part a script bound to ``name`` (or showed), with its B-Rep when ``exact``.

    Returns ``(None, result)`` when the session has no such solid; ``result`` says why.
    """
    args = {"name": name, "relative_tolerance": TESSELLATION_TOLERANCE}
    mesh = session.request("tessellate", args)
    if not mesh.ok:
        return None, mesh
    value = mesh.value if isinstance(mesh.value, dict) else {}
    part = Part.from_arrays(value.get("vertices"), value.get("faces"))
    return attach_brep(session, part, name) if exact else (part, mesh)


def attach_brep(
    session: Session, part: Part, name: str = "result"
) -> tuple[Part | None, CallResult]:
    """``part`` (tessellated from the session's ``name``) with that solid's B-Rep attached."""
    brep = session.request("export", {"name": name, "format": "brep"})
    if not brep.ok or not isinstance(brep.value, bytes):
        return None, brep
    part.shape = read_brep(brep.value)
    return part, brep
