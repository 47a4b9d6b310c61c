"""The game-scene asset catalogue: every asset a scene can spawn, built from boxes, a sphere and a
wedge by the project itself (nothing is downloaded).

Conventions: metres, kilograms, degrees. The world is Z-up and right-handed. An asset's origin is
the centre of its bounding box; at heading 0 its front faces +Y (a chair's seat opens towards +Y,
a ramp rises towards +Y, a domino falls along ±Y). A heading ``h`` turns the asset
counter-clockwise about +Z, as Panda3D's HPR does, so its front faces
``(-sin h, cos h, 0)``.

Each asset is a list of parts (boxes, one sphere or one wedge) that are both its visual mesh and
its collision shape, plus a default body, mass, friction and restitution. Ghost assets (the goal
zone) take part in no collision. ``write_catalogue`` exports the catalogue to ``assets/scene/``
as GLB files (Y-up, as glTF requires) and ``catalogue.json``; a test keeps them in sync.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

BODIES = ("static", "dynamic", "kinematic", "ghost")


@dataclasses.dataclass(frozen=True)
class Part:
    """One piece of an asset: ``kind`` ``"box"``, ``"sphere"`` or ``"wedge"`` (a box whose top
    slopes down from +Y to -Y), of ``size`` (x, y, z) in m centred at ``offset`` from the asset's
    origin."""

    kind: str
    size: tuple[float, float, float]
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclasses.dataclass(frozen=True)
class Asset:
    """A catalogue entry. ``size`` is the bounding box (x, y, z) in m; ``shape`` names the
    collision shape (``box``, ``sphere``, ``wedge`` or ``compound`` of boxes); ``mass`` in kg is
    used when the body is dynamic; ``color`` is RGB in [0, 1]."""

    name: str
    size: tuple[float, float, float]
    parts: tuple[Part, ...]
    body: str = "dynamic"
    mass: float = 1.0
    friction: float = 0.6
    restitution: float = 0.1
    color: tuple[float, float, float] = (0.6, 0.6, 0.6)
    description: str = ""

    @property
    def shape(self) -> str:
        return self.parts[0].kind if len(self.parts) == 1 else "compound"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "size_m": list(self.size),
            "shape": self.shape,
            "body": self.body,
            "mass_kg": self.mass,
            "friction": self.friction,
            "restitution": self.restitution,
            "description": self.description,
        }


def _box(sx: float, sy: float, sz: float, x: float = 0.0, y: float = 0.0, z: float = 0.0) -> Part:
    return Part("box", (sx, sy, sz), (x, y, z))


def _table() -> tuple[Part, ...]:
    legs = tuple(
        _box(0.06, 0.06, 0.70, sx * 0.74, sy * 0.39, -0.025) for sx in (-1, 1) for sy in (-1, 1)
    )
    return (_box(1.6, 0.9, 0.05, 0, 0, 0.35), *legs)


def _chair() -> tuple[Part, ...]:
    legs = tuple(
        _box(0.04, 0.04, 0.425, sx * 0.205, sy * 0.205, -0.2375) for sx in (-1, 1) for sy in (-1, 1)
    )
    return (_box(0.45, 0.45, 0.05, 0, 0, -0.025), _box(0.45, 0.05, 0.4, 0, -0.2, 0.25), *legs)


def _shelf() -> tuple[Part, ...]:
    boards = tuple(_box(0.94, 0.38, 0.03, 0, 0.01, -0.885 + k * 0.59) for k in range(4))
    sides = (_box(0.03, 0.4, 1.8, -0.485, 0, 0), _box(0.03, 0.4, 1.8, 0.485, 0, 0))
    return (*sides, *boards, _box(0.94, 0.02, 1.8, 0, -0.19, 0))


ASSETS: dict[str, Asset] = {
    a.name: a
    for a in (
        Asset(
            "crate",
            (0.5, 0.5, 0.5),
            (_box(0.5, 0.5, 0.5),),
            mass=10.0,
            friction=0.8,
            restitution=0.05,
            color=(0.72, 0.52, 0.3),
            description="a wooden crate",
        ),
        Asset(
            "table",
            (1.6, 0.9, 0.75),
            _table(),
            mass=30.0,
            color=(0.55, 0.38, 0.22),
            description="a table, 0.75 m high; its top is at its centre + 0.375 m",
        ),
        Asset(
            "chair",
            (0.45, 0.45, 0.9),
            _chair(),
            mass=5.0,
            color=(0.35, 0.45, 0.7),
            description="a chair; the seat opens to its front, the back is behind",
        ),
        Asset(
            "shelf",
            (1.0, 0.4, 1.8),
            _shelf(),
            mass=40.0,
            color=(0.5, 0.42, 0.3),
            description="a shelf, open to its front, back panel behind",
        ),
        Asset(
            "ball",
            (0.3, 0.3, 0.3),
            (Part("sphere", (0.3, 0.3, 0.3)),),
            mass=1.0,
            friction=0.5,
            restitution=0.3,
            color=(0.85, 0.2, 0.2),
            description="a 0.3 m ball",
        ),
        Asset(
            "ramp",
            (0.6, 1.2, 0.4),
            (Part("wedge", (0.6, 1.2, 0.4)),),
            body="static",
            mass=20.0,
            friction=0.4,
            restitution=0.0,
            color=(0.6, 0.6, 0.55),
            description="a wedge rising 0.4 m towards its front over 1.2 m",
        ),
        Asset(
            "plank",
            (2.0, 0.3, 0.05),
            (_box(2.0, 0.3, 0.05),),
            mass=3.0,
            color=(0.75, 0.6, 0.4),
            description="a 2 m plank",
        ),
        Asset(
            "domino",
            (0.2, 0.05, 0.4),
            (_box(0.2, 0.05, 0.4),),
            mass=0.5,
            friction=0.5,
            restitution=0.0,
            color=(0.95, 0.95, 0.9),
            description="a domino standing upright; it falls along its front (±Y)",
        ),
        Asset(
            "door",
            (1.0, 0.1, 2.0),
            (_box(1.0, 0.1, 2.0),),
            body="kinematic",
            mass=0.0,
            color=(0.45, 0.3, 0.2),
            description="a door; open() slides it up out of the way",
        ),
        Asset(
            "coin",
            (0.3, 0.05, 0.3),
            (_box(0.3, 0.05, 0.3),),
            body="ghost",
            mass=0.0,
            color=(0.95, 0.8, 0.1),
            description="a coin (no collision)",
        ),
        Asset(
            "wall",
            (2.0, 0.2, 1.0),
            (_box(2.0, 0.2, 1.0),),
            body="static",
            mass=0.0,
            color=(0.8, 0.8, 0.8),
            description="a 2 m wall section, 1 m high",
        ),
        Asset(
            "floor_tile",
            (1.0, 1.0, 0.05),
            (_box(1.0, 1.0, 0.05),),
            body="static",
            mass=0.0,
            color=(0.7, 0.7, 0.65),
            description="a 1 m floor tile",
        ),
        Asset(
            "goal_zone",
            (1.0, 1.0, 0.5),
            (_box(1.0, 1.0, 0.5),),
            body="ghost",
            mass=0.0,
            color=(0.2, 0.8, 0.3),
            description="a goal zone (no collision)",
        ),
        Asset(
            "platform",
            (1.5, 1.5, 0.2),
            (_box(1.5, 1.5, 0.2),),
            body="kinematic",
            mass=0.0,
            color=(0.4, 0.4, 0.5),
            description="a moving platform",
        ),
        Asset(
            "player",
            (0.5, 0.5, 1.8),
            (_box(0.5, 0.5, 1.8),),
            body="kinematic",
            mass=0.0,
            color=(0.2, 0.6, 0.9),
            description="the player",
        ),
    )
}
ASSET_NAMES = tuple(ASSETS)


def asset(name: str) -> Asset:
    """The catalogue entry ``name``; ``KeyError`` lists the known ones."""
    try:
        return ASSETS[name]
    except KeyError:
        raise KeyError(f"unknown asset {name!r}; known: {', '.join(ASSET_NAMES)}") from None


def forward(heading_deg: float) -> tuple[float, float]:
    """The (x, y) direction an asset at ``heading_deg`` faces."""
    h = math.radians(heading_deg)
    return (-math.sin(h), math.cos(h))


def part_mesh(part: Part) -> tuple[list[list[float]], list[list[int]]]:
    """Vertices (m) and triangles (counter-clockwise seen from outside) of one part."""
    sx, sy, sz = (s / 2 for s in part.size)
    ox, oy, oz = part.offset
    if part.kind == "sphere":
        return _sphere(sx, (ox, oy, oz))
    corners = [
        (x * sx + ox, y * sy + oy, z * sz + oz) for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)
    ]
    if part.kind == "wedge":  # the top edge at -Y drops to the floor
        corners[4] = (corners[4][0], corners[4][1], -sz + oz)
        corners[5] = (corners[5][0], corners[5][1], -sz + oz)
        faces = [[0, 2, 1], [1, 2, 3], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4], [2, 6, 7],
                 [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]]  # fmt: skip
        return [list(c) for c in corners], faces
    faces = [[0, 2, 1], [1, 2, 3], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4], [2, 6, 7],
             [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]]  # fmt: skip
    return [list(c) for c in corners], faces


def _sphere(
    radius: float, center: tuple[float, float, float], rings: int = 8, segments: int = 12
) -> tuple[list[list[float]], list[list[int]]]:
    vertices = [[center[0], center[1], center[2] - radius]]
    for i in range(1, rings):
        theta = math.pi * i / rings - math.pi / 2
        for j in range(segments):
            phi = 2 * math.pi * j / segments
            vertices.append(
                [
                    center[0] + radius * math.cos(theta) * math.cos(phi),
                    center[1] + radius * math.cos(theta) * math.sin(phi),
                    center[2] + radius * math.sin(theta),
                ]
            )
    vertices.append([center[0], center[1], center[2] + radius])
    top = len(vertices) - 1
    faces = [[0, 1 + (j + 1) % segments, 1 + j] for j in range(segments)]
    for i in range(rings - 2):
        a, b = 1 + i * segments, 1 + (i + 1) * segments
        for j in range(segments):
            k = (j + 1) % segments
            faces += [[a + j, a + k, b + k], [a + j, b + k, b + j]]
    last = 1 + (rings - 2) * segments
    faces += [[last + j, last + (j + 1) % segments, top] for j in range(segments)]
    return vertices, faces


def asset_mesh(name: str) -> tuple[list[list[float]], list[list[int]]]:
    """The asset's whole mesh (its parts concatenated), Z-up, origin at the bounding-box centre."""
    vertices: list[list[float]] = []
    faces: list[list[int]] = []
    for part in asset(name).parts:
        v, f = part_mesh(part)
        faces += [[i + len(vertices) for i in tri] for tri in f]
        vertices += v
    return vertices, faces


# glTF is Y-up: (x, y, z) Z-up becomes (x, z, -y).
Z_UP_TO_Y_UP = ((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1))


def write_catalogue(folder: str | Path) -> list[Path]:
    """Write ``catalogue.json`` and one GLB per asset (Y-up) into ``folder``; returns the paths."""
    import numpy as np
    import trimesh

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, entry in ASSETS.items():
        vertices, faces = asset_mesh(name)
        mesh = trimesh.Trimesh(np.array(vertices), np.array(faces), process=False)
        mesh.apply_transform(np.array(Z_UP_TO_Y_UP, dtype=float))
        mesh.visual.face_colors = [int(c * 255) for c in entry.color] + [255]
        path = folder / f"{name}.glb"
        path.write_bytes(mesh.export(file_type="glb"))
        written.append(path)
    index = folder / "catalogue.json"
    data = {"up": "+Z in the scene, +Y in the GLB files", "units": "m, kg"}
    data["assets"] = [ASSETS[n].to_dict() | {"glb": f"{n}.glb"} for n in ASSET_NAMES]
    index.write_text(json.dumps(data, indent=1) + "\n")
    return [index, *written]


if __name__ == "__main__":  # python -m toolgym.envs.scene.catalogue assets/scene
    import sys

    for written_path in write_catalogue(sys.argv[1] if len(sys.argv) > 1 else "assets/scene"):
        print(written_path)
