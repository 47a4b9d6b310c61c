"""Parts as verifiers see them: a triangle mesh, and what the B-Rep said of it when known.

Verifiers never parse B-Rep data: a CAD part's mesh and face inventory are measured inside a
sandbox session (``toolgym.envs.cadquery.artifacts``) and arrive here as plain arrays, so nothing
an agent's part can do runs unbounded in the verifier's process. This module reads mesh files
(STL, OBJ, glTF binary) directly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import trimesh

from toolgym.verifiers.features import FaceGroup, Topology, face_groups
from toolgym.verifiers.geometry import ReferenceSurface, diagonal, mesh_from_arrays, normalized

MESH_FORMATS = {".stl": "stl", ".obj": "obj", ".glb": "glb"}
BREP_FORMATS = (".step", ".stp", ".brep")
TESSELLATION_TOLERANCE = 1e-3  # of the bounding-box diagonal
# Radians. Loose on purpose: the chordal tolerance already bounds the error, and a tighter
# angle only multiplies the triangles of curved faces (2.3× on a bent tube).
ANGULAR_TOLERANCE = 0.3
MAX_FILE_BYTES = 256 * 1024 * 1024


class PartError(ValueError):
    """A part could not be read: missing file, unknown format, or unreadable content."""


@dataclasses.dataclass
class Part:
    """A part in its own units (mm for CAD).

    Attributes:
        mesh: closed triangle mesh of the part.
        features: the B-Rep face inventory (rows of ``toolgym.envs.cadquery.measure``'s
            ``INVENTORY_COLUMNS``), or ``None`` for parts known only as meshes.
        brep: the exact solid as BREP bytes, for B-Rep cross-checks in a sandbox; never parsed
            here.
        length_scale: lengths of ``features`` are multiplied by this (a normalised part's scale).
        tolerance: the chordal tolerance the mesh was made with, when known; parts compared with
            this one are meshed alike.
        note: what had to be done to read the part (closed shells sewn into solids), if anything;
            reports say so.
        shells: the B-Rep's own topology, one row per shell (``toolgym.envs.cadquery.measure``'s
            ``TOPOLOGY_COLUMNS``), or ``None`` for parts known only as meshes, whose topology
            is counted on the mesh.
    """

    mesh: trimesh.Trimesh
    features: np.ndarray | None = None
    brep: bytes | None = None
    length_scale: float = 1.0
    tolerance: float | None = None
    note: str | None = None
    shells: np.ndarray | None = None

    @classmethod
    def from_arrays(
        cls,
        vertices: np.ndarray,
        faces: np.ndarray,
        features: np.ndarray | None = None,
        shells: np.ndarray | None = None,
    ) -> Part:
        return cls(mesh_from_arrays(vertices, faces), features, shells=shells)

    @classmethod
    def from_file(cls, path: str | Path) -> Part:
        """Load a mesh file; raises :class:`PartError` with the reason if it cannot.

        STEP and BREP files hold B-Rep solids, which are measured in a sandbox: use
        ``toolgym.envs.cadquery.artifacts.load_part`` for those.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        check_file(path)
        if suffix in BREP_FORMATS:
            raise PartError(f"{path}: B-Rep files are measured in a sandbox; use load_part()")
        try:
            mesh = trimesh.load(path, file_type=MESH_FORMATS[suffix], force="mesh", process=True)
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
        """This part centred and scaled to a largest side of 1, computed once."""
        if "normalized" not in self._cache:
            scale = 1.0 / max(float(self.mesh.extents.max()), 1e-12) if len(self.mesh.faces) else 1
            self._cache["normalized"] = Part(
                normalized(self.mesh),
                self.features,
                None,
                self.length_scale * scale,
                note=self.note,
                shells=self.shells,  # counts and volume signs do not change with scale
            )
        return self._cache["normalized"]

    @property
    def topology(self) -> Topology:
        """Bodies, cavities and genus (see ``features.Topology``): the B-Rep's own counts when
        it was measured, else the mesh's; computed once."""
        if "topology" not in self._cache:
            self._cache["topology"] = (
                Topology.of(self.mesh) if self.shells is None else Topology.of_brep(self.shells)
            )
        return self._cache["topology"]

    @property
    def bodies(self) -> int:
        """Number of disjoint bodies (outward shells; a cavity is not a body)."""
        return self.topology.bodies

    @property
    def face_groups(self) -> list[FaceGroup] | None:
        """The face inventory grouped by kind and size, or ``None`` without one."""
        if self.features is None:
            return None
        if "groups" not in self._cache:
            self._cache["groups"] = face_groups(self.features, self.length_scale)
        return self._cache["groups"]


def check_file(path: Path) -> None:
    """Raise :class:`PartError` unless ``path`` is a readable part file of a known format."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise PartError(f"{path}: is a directory, not a part file")
    if not path.is_file():
        raise PartError(f"{path}: no such file")
    if suffix not in (*MESH_FORMATS, *BREP_FORMATS):
        known = ", ".join([*BREP_FORMATS, *MESH_FORMATS])
        raise PartError(f"{path}: unsupported format {suffix or '(none)'}; use one of {known}")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PartError(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB")
