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

The topology (:func:`topology`) is counted on the B-Rep itself, one row per shell found by
connected faces, so that what touches at a corner or along an edge is never one shell.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

SURFACE_KINDS = ("plane", "cylinder", "cone", "sphere", "torus", "freeform")
INVENTORY_COLUMNS = ("kind", "size_a", "size_b", "area", "nx", "ny", "nz")
TOPOLOGY_COLUMNS = ("vertices", "edges", "faces", "loops", "open_edges", "volume", "solid")


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
    (m, 3), counter-clockwise seen from outside), and ``face_volumes`` (float64, one per B-Rep
    face in ``shape.Faces()`` order): the signed volume (mm³) its triangles add by the divergence
    theorem, which :func:`topology` sums per shell.

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
    vertices, faces, counts, offset = [], [], [], 0
    for face in shape.Faces():
        location = TopLoc_Location()
        poly = BRep_Tool.Triangulation_s(face.wrapped, location)
        if poly is None:
            counts.append(0)
            continue
        # Element by element: ``poly.Triangles()`` copies the face's whole array on each call
        # (30-50x slower), and OCP has no bulk view of either array.
        nodes = np.array(
            [poly.Node(i).Coord() for i in range(1, poly.NbNodes() + 1)], dtype=np.float64
        ).reshape(-1, 3)
        nodes = _transformed(nodes, location.Transformation())
        triangles = np.array(
            [poly.Triangle(i).Get() for i in range(1, poly.NbTriangles() + 1)], dtype=np.int64
        ).reshape(-1, 3)
        if face.wrapped.Orientation() == TopAbs_REVERSED:
            triangles = triangles[:, [0, 2, 1]]
        vertices.append(nodes)
        faces.append(triangles - 1 + offset)
        counts.append(len(triangles))
        offset += len(nodes)
    all_vertices = np.concatenate(vertices) if vertices else np.zeros((0, 3))
    all_faces = (np.concatenate(faces) if faces else np.zeros((0, 3))).astype(np.int32)
    return {
        "vertices": all_vertices,
        "faces": all_faces,
        "face_volumes": _face_volumes(all_vertices[all_faces], counts),
    }


def _transformed(points: np.ndarray, transform: Any) -> np.ndarray:
    """``points`` (n, 3) moved by a ``gp_Trsf``, with the arithmetic of ``gp_Pnt.Transform``
    term for term, so the same bits: per the transform's form, the matrix, then the scale, then
    the translation."""
    from OCP.gp import gp_TrsfForm

    form = transform.Form()
    if form == gp_TrsfForm.gp_Identity:  # most faces: no location
        return points
    shift = np.array(transform.TranslationPart().Coord(), dtype=np.float64)
    if form == gp_TrsfForm.gp_Translation:
        return points + shift
    if form == gp_TrsfForm.gp_Scale:
        return points * transform.ScaleFactor() + shift
    if form == gp_TrsfForm.gp_PntMirror:
        return -points + shift
    matrix = transform.HVectorialPart()  # without the scale factor, as gp_Trsf keeps it
    x, y, z = points.T
    moved = np.stack(
        [
            matrix.Value(row, 1) * x + matrix.Value(row, 2) * y + matrix.Value(row, 3) * z
            for row in (1, 2, 3)
        ],
        axis=1,
    )
    if transform.ScaleFactor() != 1.0:
        moved *= transform.ScaleFactor()
    return moved + shift


def _face_volumes(corners: np.ndarray, counts: list[int]) -> np.ndarray:
    """Per face, the signed volume (mm³) its ``counts[i]`` consecutive triangles of ``corners``
    (m, 3, 3) enclose with the origin (one cross product for all faces, a sum per face)."""
    if not len(corners):
        return np.zeros(len(counts), dtype=np.float64)
    triple = np.einsum("ij,ij->i", corners[:, 0], np.cross(corners[:, 1], corners[:, 2]))
    spans = zip(counts, np.cumsum(counts), strict=True)
    return np.array(
        [float(triple[end - n : end].sum() / 6) if n else 0.0 for n, end in spans],
        dtype=np.float64,
    )


def topology(shape: Any, face_volumes: np.ndarray) -> np.ndarray:
    """The shells of a CadQuery ``Shape`` found by its topology, one row each, columns
    :data:`TOPOLOGY_COLUMNS`; ``face_volumes`` as :func:`tessellation` gives them.

    A shell is a set of faces joined through the edges that exactly two of them share: a seam
    joins a face to itself, and an edge of three or more faces (where bodies touch along an
    edge) joins none, nor does a vertex (where they touch at a corner). So each body, and each
    internal void, is one shell, however its solid was built or fused.

    Per shell: the distinct ``vertices``, ``edges`` (degenerate edges, as at a sphere's pole or a
    cone's apex, left out) and ``faces`` it holds and its ``loops`` (wires); ``open_edges``, the
    edges its faces do not use exactly twice (none on a closed shell); its signed ``volume``
    (mm³: negative for an inward shell, a void); and ``solid``, the index of the solid that
    holds its first face, −1 for faces outside any solid. A closed shell of genus g (g
    through-holes) has Euler–Poincaré characteristic V − E + F − (L − F) = 2 (1 − g).
    """
    from OCP.BRep import BRep_Tool
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID, TopAbs_VERTEX, TopAbs_WIRE
    from OCP.TopExp import TopExp, TopExp_Explorer
    from OCP.TopoDS import TopoDS
    from OCP.TopTools import TopTools_IndexedMapOfShape

    def indexed(of: Any, kind: Any) -> Any:
        found = TopTools_IndexedMapOfShape()
        TopExp.MapShapes_s(of, kind, found)
        return found

    def explore(of: Any, kind: Any) -> list[Any]:
        items, explorer = [], TopExp_Explorer(of, kind)
        while explorer.More():
            items.append(explorer.Current())
            explorer.Next()
        return items

    root = shape.wrapped
    face_map, edge_map, vertex_map = (
        indexed(root, k) for k in (TopAbs_FACE, TopAbs_EDGE, TopAbs_VERTEX)
    )
    count = face_map.Extent()
    solid_of = np.full(count, -1, dtype=np.int64)
    solids = indexed(root, TopAbs_SOLID)
    for index in range(solids.Extent(), 0, -1):  # the lowest index wins
        for face in explore(solids.FindKey(index), TopAbs_FACE):
            solid_of[face_map.FindIndex(face) - 1] = index - 1
    edge_uses: list[list[int]] = []  # per face, the edges its wires use (a seam twice)
    face_vertices: list[set[int]] = []
    loops = np.zeros(count, dtype=np.int64)
    users: dict[int, list[int]] = {}  # edge -> the faces that use it, once per use
    for index in range(count):
        face = face_map.FindKey(index + 1)
        used = [
            edge_map.FindIndex(edge)
            for edge in explore(face, TopAbs_EDGE)
            if not BRep_Tool.Degenerated_s(TopoDS.Edge_s(edge))
        ]
        for edge in used:
            users.setdefault(edge, []).append(index)
        edge_uses.append(used)
        face_vertices.append({vertex_map.FindIndex(v) for v in explore(face, TopAbs_VERTEX)})
        loops[index] = len(explore(face, TopAbs_WIRE))
    parent = list(range(count))

    def root_of(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for faces in users.values():
        if len(faces) == 2 and faces[0] != faces[1]:
            parent[root_of(faces[0])] = root_of(faces[1])
    shells: dict[int, list[int]] = {}
    for index in range(count):
        shells.setdefault(root_of(index), []).append(index)
    volumes = np.asarray(face_volumes, dtype=np.float64).reshape(-1)
    if len(volumes) != count:
        raise ValueError(f"{len(volumes)} face volumes for {count} faces")
    rows = []
    for members in shells.values():
        uses: dict[int, int] = {}
        for index in members:
            for edge in edge_uses[index]:
                uses[edge] = uses.get(edge, 0) + 1
        rows.append(
            (
                len(set().union(*(face_vertices[i] for i in members))),
                len(uses),
                len(members),
                int(loops[members].sum()),
                sum(1 for n in uses.values() if n != 2),
                float(volumes[members].sum()),
                int(solid_of[members[0]]),
            )
        )
    return np.array(rows, dtype=np.float64).reshape(-1, len(TOPOLOGY_COLUMNS))


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
    from OCP.TopTools import TopTools_ListOfShape

    # The two-shape constructor builds at once: set the operands on an empty one, so that the
    # boolean runs once, with the options set.
    arguments, tools = TopTools_ListOfShape(), TopTools_ListOfShape()
    arguments.Append(a)
    tools.Append(b)
    common = BRepAlgoAPI_Common()
    common.SetArguments(arguments)
    common.SetTools(tools)
    common.SetRunParallel(False)
    common.Build()
    if not common.IsDone():
        raise RuntimeError("OpenCASCADE could not intersect the solids")
    return volume(common.Shape())
