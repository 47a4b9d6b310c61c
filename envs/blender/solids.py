"""The closed shells of a Blender scene's meshes as one manifold3d solid, each object's shells
made once for as long as its mesh is unchanged.

An agent's step usually changes one object of a scene; the others come back from the trusted
read with the very same evaluated triangles. Turning a mesh into outward closed shells (merge,
split, winding, manifold) is most of a geometry verification's cost, so :class:`ShellCache`
keeps each object's shells under a digest of its triangles: the union is built from the same
shells in the same order either way, so the result is bit for bit the same.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
import trimesh

from toolgym.verifiers.geometry import as_manifold


def shown_objects(state: dict[str, Any], kind: str = "MESH") -> dict[str, dict[str, Any]]:
    """The objects of ``kind`` a final render draws (``shown``); ``"MESH"`` is every object
    with geometry (meshes, curves, text, surfaces, metaballs), as the render meshes them."""

    def of_kind(o: dict[str, Any]) -> bool:
        return o["type"] == kind or (kind == "MESH" and bool(o.get("geometry")))

    return {n: o for n, o in state["objects"].items() if of_kind(o) and o.get("shown", True)}


@dataclasses.dataclass
class Solid:
    """The union of a scene's closed shells (manifold3d), each turned outward first, as a
    render shows it (both sides of a face render alike, so an inside-out or mirrored shell
    shows the solid it bounds, never a hole); what it was made of, for the checks that its
    volume agrees with its parts'."""

    union: Any
    shells: list[float]  # each closed shell's volume, m³ (positive)
    bounds: np.ndarray | None  # the closed shells' bounds (2×3, m); None without one
    open_objects: list[str]


@dataclasses.dataclass(frozen=True)
class ObjectShells:
    """One mesh's closed shells, turned outward, and whether it had open parts."""

    shells: tuple[Any, ...]  # manifold3d.Manifold, in the mesh's component order
    volumes: tuple[float, ...]  # m³, positive
    boxes: tuple[np.ndarray, ...]  # each shell's bounds (2×3, m)
    opened: bool  # a part is open or not a manifold: left out of the union
    faces: int  # triangles in the mesh (what the cache counts)


def object_shells(vertices: Any, faces: Any) -> ObjectShells:
    """The closed shells of one mesh (``vertices`` in m): each connected part that is closed,
    wound consistently (fixed when not) and outward (turned when not); open parts are left
    out, and ``opened`` says there were some."""
    merged = trimesh.Trimesh(vertices, faces, process=True)
    shells, volumes, boxes, opened = [], [], [], False
    with np.errstate(invalid="ignore", divide="ignore"):  # a flat part has no centre
        parts = merged.split(only_watertight=False)
    for part in parts:
        if not part.is_watertight:
            opened = True
            continue
        if not part.is_winding_consistent:
            trimesh.repair.fix_winding(part)
        with np.errstate(invalid="ignore", divide="ignore"):
            inside_out = part.volume < 0
        if inside_out:
            part.invert()
        try:
            shell = as_manifold(part)
        except ValueError:
            opened = True
            continue
        shells.append(shell)
        volumes.append(float(shell.volume()))
        boxes.append(part.bounds)
    return ObjectShells(tuple(shells), tuple(volumes), tuple(boxes), opened, len(merged.faces))


def mesh_digest(vertices: Any, faces: Any) -> bytes:
    """A digest of a mesh's triangles as the shells are made from them (float64 vertices,
    int64 faces, and their shapes)."""
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    digest = hashlib.blake2b(repr((v.shape, f.shape)).encode(), digest_size=20)
    digest.update(v.tobytes())
    digest.update(f.tobytes())
    return digest.digest()


class ShellCache:
    """:func:`object_shells` of the meshes seen lately, by :func:`mesh_digest`: the least
    recently used go first once they hold more than ``max_faces`` triangles in all (a mesh
    larger than that is never kept). A kept shell holds about 0.8 KiB a triangle (manifold3d's
    half-edges, normals and collider), so the default keeps at most ~16 MiB per goal: a scene's
    objects of a few hundred to a few thousand triangles each. Safe to share between threads."""

    def __init__(self, max_faces: int = 20_000) -> None:
        self.max_faces = max_faces
        self._kept: OrderedDict[bytes, ObjectShells] = OrderedDict()
        self._faces = 0
        self._lock = threading.Lock()
        self.made = 0  # meshes turned into shells (the rest came from the cache)

    def shells(self, vertices: Any, faces: Any) -> ObjectShells:
        key = mesh_digest(vertices, faces)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        made = object_shells(vertices, faces)
        with self._lock:
            self.made += 1
            if made.faces <= self.max_faces and key not in self._kept:
                self._kept[key] = made
                self._faces += made.faces
                while self._faces > self.max_faces:
                    self._faces -= self._kept.popitem(last=False)[1].faces
        return made


def scene_solid(state: dict[str, Any], cache: ShellCache | None = None) -> Solid:
    """The union of the shown objects' closed shells (:func:`object_shells`), in name order,
    and the objects with open parts (surfaces that bound no volume: left out of the union, and
    of the IoU); each object's shells from ``cache`` when it has them."""
    import manifold3d

    union, volumes, boxes, open_objects = manifold3d.Manifold(), [], [], []
    for name, o in sorted(shown_objects(state).items()):
        if not len(o["faces"]):
            continue
        if cache is None:
            made = object_shells(o["vertices"], o["faces"])
        else:
            made = cache.shells(o["vertices"], o["faces"])
        for shell in made.shells:
            union = union + shell
        volumes += made.volumes
        boxes += made.boxes
        if made.opened:
            open_objects.append(name)
    bounds = None
    if boxes:
        bounds = np.array(
            [np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0)]
        )
    return Solid(union, volumes, bounds, open_objects)
