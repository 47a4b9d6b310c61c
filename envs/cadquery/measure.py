"""Measurements of B-Rep solids: tessellation, face inventory and boolean volumes.

This module runs inside sandbox sessions (the CadQuery backend's requests) on parts that agent
code built or that arrive as BREP bytes, so anything costly here is bounded by the session's
limits. It imports OpenCASCADE and CadQuery only, never the verifiers or task content.

Units are the part's own (mm for CAD). Surface kinds of the face inventory, with the sizes each
row carries (``size_a``, ``size_b``) and the outward unit normal (planes only):

    plane        -           -           normal (nx, ny, nz)
    cylinder     radius      -
    cone         half-angle (radians, in [0, π/2])
    sphere       radius      -
    torus        major radius, minor radius
    freeform     -           -           (B-splines, Béziers, sweeps, offsets: area only)
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

SURFACE_KINDS = ("plane", "cylinder", "cone", "sphere", "torus", "freeform")
INVENTORY_COLUMNS = ("kind", "size_a", "size_b", "area", "nx", "ny", "nz")


def read_brep(data: bytes) -> Any:
    """An OpenCASCADE ``TopoDS_Shape`` from BREP file bytes; ``ValueError`` if it holds none."""
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape

    shape = TopoDS_Shape()
    try:
        BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
    except Exception as exc:  # OCP raises Standard_Failure subclasses on malformed text
        raise ValueError(f"the BREP data is unreadable: {exc}") from None
    if shape.IsNull():
        raise ValueError("the BREP data holds no shape")
    return shape


def tessellation(shape: Any, tolerance: float, angular_tolerance: float = 0.1) -> dict[str, Any]:
    """Triangles of a CadQuery ``Shape``: ``vertices`` (float64, (n, 3)) and ``faces`` (int32,
    (m, 3), counter-clockwise seen from outside).

    ``tolerance`` is the largest distance between the triangles and the true surface, in the
    part's units: absolute, unlike ``Shape.tessellate``, whose relative deflection scales with
    each face's size and let a loft's triangles stray 0.3 mm when asked for 0.05 mm. Meshing
    anew each time makes the mesh a function of the solid and the tolerances.
    """
    from OCP.BRep import BRep_Tool
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.BRepTools import BRepTools
    from OCP.TopAbs import TopAbs_REVERSED
    from OCP.TopLoc import TopLoc_Location

    # A mesh depends on the solid and the tolerances alone: never on a triangulation left by an
    # earlier call, or carried in by BREP data.
    BRepTools.Clean_s(shape.wrapped)
    BRepMesh_IncrementalMesh(shape.wrapped, tolerance, False, angular_tolerance, False)
    vertices, faces, offset = [], [], 0
    for face in shape.Faces():
        location = TopLoc_Location()
        poly = BRep_Tool.Triangulation_s(face.wrapped, location)
        if poly is None:
            continue
        nodes = np.array(
            [
                poly.Node(i).Transformed(location.Transformation()).Coord()
                for i in range(1, poly.NbNodes() + 1)
            ],
            dtype=np.float64,
        ).reshape(-1, 3)
        triangles = np.array(
            [(t.Value(1), t.Value(2), t.Value(3)) for t in poly.Triangles()], dtype=np.int64
        ).reshape(-1, 3)
        if face.wrapped.Orientation() == TopAbs_REVERSED:
            triangles = triangles[:, [0, 2, 1]]
        vertices.append(nodes)
        faces.append(triangles - 1 + offset)
        offset += len(nodes)
    return {
        "vertices": np.concatenate(vertices) if vertices else np.zeros((0, 3)),
        "faces": (np.concatenate(faces) if faces else np.zeros((0, 3))).astype(np.int32),
    }


def face_inventory(shape: Any) -> np.ndarray:
    """One row per B-Rep face, columns :data:`INVENTORY_COLUMNS` (``kind`` indexes
    :data:`SURFACE_KINDS`). Areas are exact surface integrals, so two models of the same part,
    however their faces are split, give the same total area per kind and size."""
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.BRepGProp import BRepGProp
    from OCP.GeomAbs import GeomAbs_SurfaceType as Kind
    from OCP.GProp import GProp_GProps

    rows = []
    for face in shape.Faces():
        surface = BRepAdaptor_Surface(face.wrapped)
        props = GProp_GProps()
        BRepGProp.SurfaceProperties_s(face.wrapped, props)
        kind, size_a, size_b, normal = "freeform", 0.0, 0.0, (0.0, 0.0, 0.0)
        match surface.GetType():
            case Kind.GeomAbs_Plane:  # the outward normal, with the face's orientation
                kind, normal = "plane", face.normalAt().toTuple()
            case Kind.GeomAbs_Cylinder:
                kind, size_a = "cylinder", surface.Cylinder().Radius()
            case Kind.GeomAbs_Cone:
                kind, size_a = "cone", abs(surface.Cone().SemiAngle())
            case Kind.GeomAbs_Sphere:
                kind, size_a = "sphere", surface.Sphere().Radius()
            case Kind.GeomAbs_Torus:
                torus = surface.Torus()
                kind, size_a, size_b = "torus", torus.MajorRadius(), torus.MinorRadius()
        rows.append((SURFACE_KINDS.index(kind), size_a, size_b, abs(props.Mass()), *normal))
    return np.array(rows, dtype=np.float64).reshape(-1, len(INVENTORY_COLUMNS))


def closed_solids(shape: Any) -> tuple[Any, str | None]:
    """The solids of a CadQuery ``Shape`` read from a file, and a note when they had to be made.

    Real STEP files often carry a part as a closed shell rather than a solid: each closed shell
    (after sewing its faces, if they were loose) becomes a solid, outward-oriented. Returns
    ``(shape, note)``, ``note`` saying what was done (``None`` if the file held solids). Raises
    ``ValueError`` ("not a closed solid", naming what is open) when no closed solid can be made.
    """
    import cadquery as cq
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Sewing
    from OCP.ShapeFix import ShapeFix_Solid

    if shape.Solids():
        return shape, None
    kind = type(shape).__name__
    shells = shape.Shells()
    if not shells and shape.Faces():  # a soup of faces: sew them into shells first
        sewing = BRepBuilderAPI_Sewing(1e-6 * max(shape.BoundingBox().DiagonalLength, 1.0))
        for face in shape.Faces():
            sewing.Add(face.wrapped)
        sewing.Perform()
        shells = cq.Shape.cast(sewing.SewedShape()).Shells()
    if not shells:
        raise ValueError(f"the part is not a closed solid: it holds no surface (it is a {kind})")
    open_shells = [s for s in shells if not s.Closed()]
    if open_shells:
        raise ValueError(
            f"the part is not a closed solid: {len(open_shells)} of its {len(shells)} shells "
            "are open (a surface with holes in it, not the boundary of a volume)"
        )
    solids = [cq.Solid(ShapeFix_Solid().SolidFromShell(s.wrapped)) for s in shells]
    many = f"{len(solids)} closed shells" if len(solids) > 1 else "a closed shell"
    note = f"the file held {many}, not a solid: sewn into {len(solids)} solid(s) to measure"
    return (solids[0] if len(solids) == 1 else cq.Compound.makeCompound(solids)), note


def volume(shape: Any) -> float:
    """Volume of an OpenCASCADE shape (units³)."""
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(shape, props)
    return float(props.Mass())


def common_volume(a: Any, b: Any) -> float:
    """Volume of the B-Rep intersection of two shapes, single-threaded (OpenCASCADE's thread pool
    would not survive the sandbox's forks). ``RuntimeError`` if the boolean fails."""
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common

    common = BRepAlgoAPI_Common(a, b)
    common.SetRunParallel(False)
    common.Build()
    if not common.IsDone():
        raise RuntimeError("OpenCASCADE could not intersect the solids")
    return volume(common.Shape())
