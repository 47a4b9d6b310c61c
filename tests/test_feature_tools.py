"""The feature tools (holes by callout, slots, pockets, patterns, sweeps, lofts, mirrors, revolved
cuts) build exactly the solids their closed-form volumes say, and refuse bad calls in one line."""

from __future__ import annotations

import json
import math

import pytest

from toolgym.envs.cadquery.tools import Tools, registry
from toolgym.envs.tools import ToolCallError

NEW_TOOLS = (
    "hole",
    "cut_slot",
    "cut_polygon",
    "pattern_linear",
    "pattern_polar",
    "sweep",
    "loft",
    "mirror",
    "cut_revolve",
)
tools = Tools()
PLATE_VOLUME = 40 * 30 * 10  # the plate: 40 x 30 x 10 mm, z 0..10


@pytest.fixture(scope="module")
def plate():
    return tools.add_box(None, 40, 30, 10, z=5)


def call(part, name, **arguments):
    """A JSON tool call, through the registry's parser."""
    return registry.apply(part, json.dumps({"name": name, "arguments": arguments}))


def volume(part) -> float:
    return part.val().Volume()


def refused(part, name, match, **arguments) -> str:
    with pytest.raises(ToolCallError, match=match) as caught:
        call(part, name, **arguments)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{name}: "), message
    return message


def test_every_face_has_the_new_tools():
    schemas = {s["function"]["name"]: s["function"] for s in registry.json_schemas()}
    grammar = registry.grammar()
    assert set(NEW_TOOLS) <= set(schemas) and set(NEW_TOOLS) <= set(grammar)
    assert all(hasattr(tools, name) for name in NEW_TOOLS)
    hole = schemas["hole"]["parameters"]
    assert hole["required"] == ["diameter"]
    assert hole["properties"]["countersink_angle"]["default"] == 90.0
    assert "(mm)" in hole["properties"]["depth"]["description"]
    assert schemas["sweep"]["parameters"]["properties"]["profile"]["enum"] == [
        "circle",
        "tube",
        "rect",
    ]
    assert grammar["pattern_polar"]["params"]["count"]["kind"] == "integer"
    assert grammar["sweep"]["params"]["path"]["kind"] == "points"
    assert grammar["mirror"]["needs_part"] and not grammar["loft"]["needs_part"]
    assert json.dumps(schemas) and json.dumps(grammar)


def test_hole_through_blind_counterbore_countersink(plate):
    assert volume(call(plate, "hole", diameter=6)) == pytest.approx(
        PLATE_VOLUME - math.pi * 3**2 * 10, rel=1e-6
    )
    assert volume(call(plate, "hole", diameter=6, x=5, y=-4, depth=4)) == pytest.approx(
        PLATE_VOLUME - math.pi * 3**2 * 4, rel=1e-6
    )
    counterbored = call(plate, "hole", diameter=6, counterbore_diameter=11, counterbore_depth=6)
    assert volume(counterbored) == pytest.approx(
        PLATE_VOLUME - math.pi * 3**2 * 4 - math.pi * 5.5**2 * 6, rel=1e-6
    )
    # A 90° countersink from 12 to 6 mm is 3 mm deep: a frustum, then the hole below it.
    sunk = call(plate, "hole", diameter=6, countersink_diameter=12)
    frustum = math.pi * 3 / 3 * (6**2 + 6 * 3 + 3**2)
    assert volume(sunk) == pytest.approx(PLATE_VOLUME - frustum - math.pi * 3**2 * 7, rel=1e-6)


def test_hole_refusals(plate):
    refused(plate, "hole", "not both", diameter=6, counterbore_diameter=11,
            counterbore_depth=2, countersink_diameter=10)  # fmt: skip
    refused(plate, "hole", "must exceed the hole diameter", diameter=6, counterbore_diameter=5,
            counterbore_depth=2)  # fmt: skip
    refused(plate, "hole", "needs both", diameter=6, counterbore_diameter=10)
    refused(plate, "hole", "less than the hole depth", diameter=6, depth=3,
            counterbore_diameter=10, counterbore_depth=3)  # fmt: skip
    message = refused(plate, "hole", "misses the part", diameter=6, x=100)
    assert "x -20..20" in message
    with pytest.raises(ToolCallError, match="needs an existing part"):
        call(None, "hole", diameter=6)
    # An L-shaped part: a hole under the missing corner removes nothing.
    ell = tools.cut_box(plate, 20, 15, 10, x=10, y=7.5, z=5)
    refused(ell, "hole", "removes nothing", diameter=4, x=10, y=7.5)


def test_slot_and_polygon(plate):
    slot = call(plate, "cut_slot", length=20, width=6, angle=30)
    assert volume(slot) == pytest.approx(PLATE_VOLUME - 10 * (14 * 6 + math.pi * 9), rel=1e-6)
    blind = call(plate, "cut_slot", length=12, width=4, x=8, y=5, depth=2.5)
    assert volume(blind) == pytest.approx(PLATE_VOLUME - 2.5 * (8 * 4 + math.pi * 4), rel=1e-6)
    refused(plate, "cut_slot", "must exceed width", length=6, width=6)
    pocket = call(plate, "cut_polygon", points=[[0, 0], [10, 0], [0, 10]], depth=3)
    assert volume(pocket) == pytest.approx(PLATE_VOLUME - 50 * 3, rel=1e-6)
    through = call(plate, "cut_polygon", points=[[-5, -5], [5, -5], [5, 5], [-5, 5]])
    assert volume(through) == pytest.approx(PLATE_VOLUME - 100 * 10, rel=1e-6)
    refused(plate, "cut_polygon", "no area", points=[[0, 0], [1, 1], [2, 2]])


def test_linear_patterns(plate):
    grid = call(plate, "pattern_linear", feature="hole", size=4, count_x=3, count_y=2,
                pitch_x=10, pitch_y=12)  # fmt: skip
    assert volume(grid) == pytest.approx(PLATE_VOLUME - 6 * math.pi * 4 * 10, rel=1e-6)
    pockets = call(plate, "pattern_linear", feature="pocket", size=5, length=3, count_x=2,
                   pitch_x=15, depth=2)  # fmt: skip
    assert volume(pockets) == pytest.approx(PLATE_VOLUME - 2 * 15 * 2, rel=1e-6)
    bosses = call(plate, "pattern_linear", feature="boss", size=4, count_y=2, pitch_y=10, depth=5)
    assert volume(bosses) == pytest.approx(PLATE_VOLUME + 2 * math.pi * 4 * 5, rel=1e-6)
    assert bosses.val().BoundingBox().zmax == pytest.approx(15)
    refused(plate, "pattern_linear", "needs pitch_x > 0", feature="hole", size=4, count_x=2)
    refused(plate, "pattern_linear", "boss needs depth > 0", feature="boss", size=4)
    refused(plate, "pattern_linear", "slot needs length > 0", feature="slot", size=4)
    refused(plate, "pattern_linear", "must exceed its width", feature="slot", size=4, length=3)
    refused(plate, "pattern_linear", "leave it 0 for a hole", feature="hole", size=4, length=3)
    refused(plate, "pattern_linear", "hole 2 of 2 at \\(45, 0\\) misses", feature="hole",
            size=4, count_x=2, pitch_x=30, x=30)  # fmt: skip


def test_polar_patterns(plate):
    holes = call(plate, "pattern_polar", feature="hole", size=4, count=6, pitch_diameter=20)
    assert volume(holes) == pytest.approx(PLATE_VOLUME - 6 * math.pi * 2**2 * 10, rel=1e-6)
    box = holes.val().BoundingBox()
    assert (box.xlen, box.ylen) == pytest.approx((40, 30))
    # Radial slots at 90°: each 10 long (end to end) and 4 wide, 3 mm deep.
    slots = call(plate, "pattern_polar", feature="slot", size=4, length=10, count=4,
                 pitch_diameter=20, start_angle=45, depth=3)  # fmt: skip
    assert volume(slots) == pytest.approx(PLATE_VOLUME - 4 * 3 * (6 * 4 + math.pi * 4), rel=1e-6)
    bosses = call(plate, "pattern_polar", feature="boss", size=4, count=3, pitch_diameter=16,
                  depth=5)  # fmt: skip
    assert volume(bosses) == pytest.approx(PLATE_VOLUME + 3 * math.pi * 4 * 5, rel=1e-6)
    refused(plate, "pattern_polar", "count' = 0", feature="hole", size=4, count=0,
            pitch_diameter=20)  # fmt: skip
    refused(plate, "pattern_polar", "pocket needs length > 0", feature="pocket", size=4, count=3,
            pitch_diameter=20)  # fmt: skip


def test_sweeps():
    # A tube: 50 mm along X, a 90° bend of centreline radius 10, 40 mm up: the straights lose
    # one radius each to the bend.
    tube = call(None, "sweep", profile="tube", size=8, size2=6, path=[[0, 0], [50, 0], [50, 40]],
                bend_radius=10)  # fmt: skip
    length = (50 - 10) + (40 - 10) + 10 * math.pi / 2
    assert volume(tube) == pytest.approx(math.pi * (4**2 - 3**2) * length, rel=1e-6)
    assert tube.val().isValid() and len(tube.solids().vals()) == 1
    # Bent sheet metal: a 2 mm sheet, 20 mm wide across the XZ plane (along Y).
    sheet = call(None, "sweep", profile="rect", size=2, size2=20, plane="XZ",
                 path=[[0, 0], [50, 0], [50, 40]], bend_radius=5)  # fmt: skip
    length = (50 - 5) + (40 - 5) + 5 * math.pi / 2
    assert volume(sheet) == pytest.approx(2 * 20 * length, rel=1e-6)
    box = sheet.val().BoundingBox()
    assert (box.ymin, box.ymax, box.zmin, box.xmax) == pytest.approx((-10, 10, -1, 51))
    # A straight rod in YZ (three points on a line), fused with a block it starts in.
    block = tools.add_box(None, 10, 10, 10)
    rod = call(block, "sweep", profile="circle", size=4, plane="YZ", path=[[0, 0], [20, 0],
               [40, 0]])  # fmt: skip
    assert volume(rod) == pytest.approx(1000 + math.pi * 4 * (40 - 5), rel=1e-6)
    path = [[0, 0], [20, 0], [20, 20]]
    refused(None, "sweep", "give bend_radius > 0", profile="circle", size=4, path=path)
    refused(None, "sweep", "too large", profile="circle", size=4, path=path, bend_radius=30)
    refused(None, "sweep", "exceed half the section", profile="circle", size=8, path=path,
            bend_radius=3)  # fmt: skip
    refused(None, "sweep", "0 < size2", profile="tube", size=4, size2=5, path=path,
            bend_radius=5)  # fmt: skip
    refused(None, "sweep", "rect section needs size2", profile="rect", size=2, path=path,
            bend_radius=5)  # fmt: skip
    refused(None, "sweep", "turns back", profile="circle", size=2, path=[[0, 0], [10, 0], [0, 0]],
            bend_radius=5)  # fmt: skip


def test_lofts():
    frustum = call(None, "loft", bottom="circle", bottom_size=20, top="circle", top_size=10,
                   height=15, z=2)  # fmt: skip
    assert volume(frustum) == pytest.approx(math.pi * 15 / 3 * (10**2 + 10 * 5 + 5**2), rel=1e-6)
    assert frustum.val().BoundingBox().zmin == pytest.approx(2)
    # Square to rect: a prismatoid, V = h/6 (A_bottom + 4 A_middle + A_top).
    hopper = call(None, "loft", bottom="square", bottom_size=20, top="rect", top_size=10,
                  top_size2=6, height=15)  # fmt: skip
    assert volume(hopper) == pytest.approx(15 / 6 * (400 + 4 * 15 * 13 + 60), rel=1e-6)
    adapter = call(None, "loft", bottom="circle", bottom_size=20, top="square", top_size=10,
                   height=15)  # fmt: skip
    assert adapter.val().isValid() and 15 * 100 < volume(adapter) < 15 * math.pi * 100
    refused(None, "loft", "rect top needs top_size2", bottom="circle", bottom_size=20,
            top="rect", top_size=10, height=5)  # fmt: skip
    refused(None, "loft", "leave it 0 for a circle", bottom="circle", bottom_size=20,
            bottom_size2=3, top="circle", top_size=10, height=5)  # fmt: skip


def test_mirror():
    box = tools.add_box(None, 10, 8, 6, x=5)  # x 0..10
    doubled = call(box, "mirror", plane="YZ")
    assert volume(doubled) == pytest.approx(2 * 480, rel=1e-9)
    assert len(doubled.solids().vals()) == 1 and doubled.val().isValid()
    assert doubled.val().BoundingBox().xmin == pytest.approx(-10)
    up = call(tools.add_box(None, 10, 8, 6, z=3), "mirror", plane="XY", offset=6)
    assert volume(up) == pytest.approx(960) and up.val().BoundingBox().zmax == pytest.approx(12)
    symmetric = call(tools.add_box(None, 10, 8, 6), "mirror", plane="XZ")
    assert volume(symmetric) == pytest.approx(480)
    refused(box, "mirror", "does not touch the part", plane="YZ", offset=-3)


def test_cut_revolve():
    shaft = tools.add_cylinder(None, 20, 40, z=20)  # ⌀20, z 0..40
    groove = call(shaft, "cut_revolve", points=[[8, 18], [11, 18], [11, 22], [8, 22]])
    assert volume(groove) == pytest.approx(math.pi * 100 * 40 - math.pi * (100 - 64) * 4, rel=1e-6)
    # A 45° chamfer of 2 mm on the top edge: a ring of triangle section, by Pappus.
    chamfer = call(shaft, "cut_revolve", points=[[7, 41], [11, 41], [11, 37]])
    ring = 0.5 * 2 * 2 * 2 * math.pi * (10 - 2 / 3)  # the part of the triangle inside the shaft
    assert volume(chamfer) == pytest.approx(math.pi * 100 * 40 - ring, rel=1e-6)
    quarter = call(shaft, "cut_revolve", points=[[8, 18], [11, 18], [11, 22], [8, 22]], angle=90)
    assert volume(quarter) == pytest.approx(math.pi * 100 * 40 - math.pi * 36, rel=1e-6)
    refused(shaft, "cut_revolve", "misses the part", points=[[5, 50], [8, 50], [8, 55]])
    refused(shaft, "cut_revolve", "removes nothing", points=[[30, 0], [35, 0], [35, 5]])
    refused(shaft, "cut_revolve", "radius >= 0", points=[[-1, 0], [5, 0], [5, 5]])
