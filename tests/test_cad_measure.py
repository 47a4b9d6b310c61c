"""The measurer's tessellation reads OpenCASCADE's triangles in bulk but must give the very
bits ``gp_Pnt.Transformed`` gives, per node: the verifier's scores are pinned to them."""

from __future__ import annotations

import cadquery as cq
import numpy as np
import pytest
from OCP.BRepBuilderAPI import BRepBuilderAPI_Transform
from OCP.gp import gp_Ax1, gp_Dir, gp_Pnt, gp_Trsf, gp_Vec

from toolgym.envs.cadquery.measure import _transformed, tessellation


def transforms() -> dict[str, gp_Trsf]:
    """One ``gp_Trsf`` of each form ``_transformed`` branches on, and a rotation with a scale."""
    made = {name: gp_Trsf() for name in ("identity", "translation", "rotation", "scale")}
    made["translation"].SetTranslation(gp_Vec(3.25, -1.5, 7.0))
    made["rotation"].SetRotation(gp_Ax1(gp_Pnt(1, 2, 3), gp_Dir(1, 1, 0.3)), 0.6457)
    made["scale"].SetScale(gp_Pnt(1, -2, 0.5), 1.75)
    made["mirror"] = gp_Trsf()
    made["mirror"].SetMirror(gp_Pnt(0.5, 0.25, -1))
    made["rotated and scaled"] = gp_Trsf()
    made["rotated and scaled"].SetRotation(gp_Ax1(gp_Pnt(0, 0, 0), gp_Dir(0, 0.2, 1)), 1.1)
    made["rotated and scaled"].SetScaleFactor(0.8)
    return made


@pytest.mark.parametrize("name", list(transforms()))
def test_nodes_move_as_opencascade_moves_them_bit_for_bit(name):
    transform = transforms()[name]
    points = np.random.default_rng(0).uniform(-50, 50, (200, 3))
    expected = np.array([gp_Pnt(*p).Transformed(transform).Coord() for p in points])
    assert np.array_equal(_transformed(points, transform), expected)


def test_a_located_part_meshes_as_the_same_part_moved_in_place():
    part = cq.Workplane().box(10, 20, 5).faces(">Z").hole(3).val()
    placed = cq.Location(cq.Vector(3, -2, 7), cq.Vector(1, 1, 0.3), 37)
    located = tessellation(part.moved(placed), 0.05, 0.3)  # every face carries the location
    copied = BRepBuilderAPI_Transform(part.wrapped, placed.wrapped.Transformation(), True).Shape()
    moved = tessellation(cq.Shape.cast(copied), 0.05, 0.3)  # new geometry, no location
    assert len(located["faces"]) == len(moved["faces"])
    assert np.allclose(np.sort(located["vertices"], axis=0), np.sort(moved["vertices"], axis=0))
    assert np.allclose(located["face_volumes"].sum(), part.Volume(), rtol=1e-3)
