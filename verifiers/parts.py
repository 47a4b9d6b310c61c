"""Parts as verifiers see them: a triangle mesh, and the B-Rep solid when one is known.

Loading accepts STEP (``.step``/``.stp``), BREP, STL, OBJ and glTF binary (``.glb``); STEP and BREP
also keep the exact solid, so IoU can be computed by B-Rep booleans.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import trimesh

from toolgym.verifiers.geometry import (
    ReferenceSurface,
    count_bodies,
    diagonal,
    mesh_from_arrays,
    normalized,
)

MESH_FORMATS = {".stl": "stl", ".obj": "obj", ".glb": "glb"}
BREP_FORMATS = (".step", ".stp", ".brep")
TESSELLATION_TOLERANCE = 1e-3  # of the bounding-box diagonal
ANGULAR_TOLERANCE = 0.1  # radians


class PartError(ValueError):
    """A part could not be read: missing file, unknown format, or unreadable content."""


@dataclasses.dataclass
class Part:
    """A mesh in the part's units (mm for CAD) and, optionally, its exact B-Rep solid."""

    mesh: trimesh.Trimesh
    shape: object | None = None

    @classmethod
    def from_arrays(cls, vertices: np.ndarray, faces: np.ndarray) -> Part:
        return cls(mesh_from_arrays(vertices, faces))

    @classmethod
    def from_shape(cls, shape: object) -> Part:
        """From a CadQuery ``Shape`` or an OCP ``TopoDS_Shape``."""
        import cadquery as cq

        wrapped = shape if isinstance(shape, cq.Shape) else cq.Shape.cast(shape)
        bbox = wrapped.BoundingBox()
        tolerance = max(TESSELLATION_TOLERANCE * bbox.DiagonalLength, 1e-6)
        vertices, triangles = wrapped.tessellate(tolerance, ANGULAR_TOLERANCE)
        mesh = mesh_from_arrays(np.array([v.toTuple() for v in vertices]), np.array(triangles))
        return cls(mesh, wrapped.wrapped)

    @classmethod
    def from_file(cls, path: str | Path) -> Part:
        """Load a part; raises :class:`PartError` with the reason if it cannot."""
        path = Path(path)
        suffix = path.suffix.lower()
        if not path.is_file():
            raise PartError(f"{path}: no such file")
        if suffix not in (*MESH_FORMATS, *BREP_FORMATS):
            known = ", ".join([*BREP_FORMATS, *MESH_FORMATS])
            raise PartError(f"{path}: unsupported format {suffix or '(none)'}; use one of {known}")
        try:
            if suffix in BREP_FORMATS:
                return cls.from_shape(_read_brep(path))
            mesh = trimesh.load(path, file_type=MESH_FORMATS[suffix], force="mesh", process=True)
        except PartError:
            raise
        except Exception as exc:  # the readers raise many types on bad content
            raise PartError(f"{path}: cannot read as {suffix[1:].upper()}: {exc}") from None
        if not isinstance(mesh, trimesh.Trimesh) or not len(mesh.faces):
            raise PartError(f"{path}: no triangles in the file")
        return cls(mesh)

    _cache: dict[object, object] = dataclasses.field(  # derived values, computed once
        default_factory=dict, repr=False, compare=False
    )

    @property
    def diagonal(self) -> float:
        return diagonal(self.mesh)

    def surface(self, count: int, seed: int, threshold: float) -> ReferenceSurface:
        """This part's surface samples as a reference (computed once per settings)."""
        key = ("surface", count, seed, threshold)
        if key not in self._cache:
            self._cache[key] = ReferenceSurface(self.mesh, count, seed, threshold)
        return self._cache[key]

    @property
    def volume(self) -> float:
        """Signed mesh volume (units³), computed once."""
        if "volume" not in self._cache:
            self._cache["volume"] = float(self.mesh.volume)
        return self._cache["volume"]

    def normalized(self) -> Part:
        """This part centred and scaled to a largest side of 1 (mesh only), computed once."""
        if "normalized" not in self._cache:
            self._cache["normalized"] = Part(normalized(self.mesh))
        return self._cache["normalized"]

    @property
    def bodies(self) -> int:
        """Number of disjoint bodies (connected components), computed once."""
        if "bodies" not in self._cache:
            self._cache["bodies"] = count_bodies(self.mesh)
        return self._cache["bodies"]


def _read_brep(path: Path) -> object:
    import cadquery as cq

    if path.suffix.lower() == ".brep":
        shape = cq.Shape.importBrep(str(path))
    else:
        shape = cq.importers.importStep(str(path)).val()
    if shape is None or shape.wrapped.IsNull():
        raise PartError(f"{path}: the file holds no shape")
    return shape.wrapped
