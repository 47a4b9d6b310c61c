"""The game-scene catalogue and the verifier's geometry, with exact values."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import numpy as np
import pytest
from gltf import load_model
from panda3d.core import NodePath

from toolgym.envs.scene.catalogue import ASSETS, write_catalogue
from toolgym.envs.scene.runtime import World
from toolgym.envs.scene.verifier import Scene, check_facing, object_boxes, penetration

CATALOGUE = Path(__file__).resolve().parents[1] / "assets" / "scene"


def test_the_stored_catalogue_is_what_the_code_builds(tmp_path):
    written = write_catalogue(tmp_path)
    assert len(written) == len(ASSETS) + 1
    for path in written:
        assert filecmp.cmp(path, CATALOGUE / path.name, shallow=False), path.name
    index = json.loads((CATALOGUE / "catalogue.json").read_text())
    assert {a["name"] for a in index["assets"]} >= {
        "crate",
        "table",
        "chair",
        "shelf",
        "ball",
        "ramp",
        "plank",
        "domino",
        "door",
        "coin",
        "wall",
        "floor_tile",
        "goal_zone",
    }


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_glb_files_load_z_up_with_the_catalogue_size(name):
    # glTF is Y-up; panda3d-gltf turns it back into Panda3D's Z-up.
    low, high = NodePath(load_model(str(CATALOGUE / f"{name}.glb"))).get_tight_bounds()
    np.testing.assert_allclose(np.array(high - low), ASSETS[name].size, atol=1e-5)


def test_every_asset_spawns_with_its_default_body_and_rests_at_its_size():
    world = World()
    for k, name in enumerate(ASSETS):
        obj = world.spawn(name, (3 * k, 0, ASSETS[name].size[2] / 2))
        assert obj.body == ASSETS[name].body
    world.run(1.0)
    for name, obj in zip(ASSETS, world.objects.values(), strict=True):
        if ASSETS[name].body == "dynamic" and name != "domino":
            assert obj.pos[2] == pytest.approx(ASSETS[name].size[2] / 2, abs=0.01), name


def _obj(name: str, asset: str, pos, heading: float = 0.0) -> dict:
    return {
        "name": name,
        "asset": asset,
        "pos": list(pos),
        "hpr": [heading, 0, 0],
        "body": "static",
        "level": False,
    }


def test_penetration_depth_of_boxes_is_exact():
    a = object_boxes(_obj("crate_1", "crate", (0, 0, 0.25)))[0]
    b = object_boxes(_obj("crate_2", "crate", (0.4, 0, 0.25)))[0]
    assert penetration(a, b) == pytest.approx(0.1)
    turned = object_boxes(_obj("crate_2", "crate", (0.6, 0, 0.25), 45.0))[0]
    assert penetration(a, turned) == pytest.approx(0.25 + 0.25 * np.sqrt(2) - 0.6)
    apart = object_boxes(_obj("crate_2", "crate", (0.51, 0, 0.25)))[0]
    assert penetration(a, apart) == 0.0


def test_facing_reports_the_angle_in_words():
    scene = Scene(
        {
            "objects": [
                _obj("table_1", "table", (0, 0, 0.375)),
                _obj("chair_1", "chair", (0, -1, 0.45), heading=74.0),
            ]
        }
    )
    ok, _, message = check_facing(scene, {"asset": "chair", "other": "table", "tol_deg": 30})
    assert not ok and message == "chair_1 faces 74° away from table_1"


def test_timers_inputs_movers_and_spawners_run_on_the_frame_clock():
    world = World()
    ticks: list[float] = []
    world.every(0.5, lambda w: ticks.append(round(w.time, 6)), count=3)
    world.after(1.0, lambda w: w.log("late"))
    world.spawn("platform", (0, 0, 0.5), name="platform_1")
    world.mover("platform_1", [(0, 0, 0.5), (2, 0, 0.5)], speed=1.0)
    world.spawner("ball", (5, 0, 2), interval=0.5, count=2)
    player = world.player_inputs([(1.0, 1.0, 0.0), (1.0, 0.0, -2.0)], start=(-5, 0, 0.9))
    world.run(3.0)
    assert ticks == [0.5, 1.0, 1.5]
    assert [e["t"] for e in world.events if e["kind"] == "late"] == [1.0]
    assert [e["t"] for e in world.events if e["kind"] == "spawn"] == [0.5, 1.0]
    assert player.pos[0] == pytest.approx(-4.0, abs=1e-4)  # float32 sums
    assert player.pos[1] == pytest.approx(-2.0, abs=1e-4)
    assert world.get("platform_1").pos[0] == pytest.approx(1.0, abs=1e-5)  # 3 m at 1 m/s: back
