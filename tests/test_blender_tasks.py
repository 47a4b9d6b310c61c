"""Blender tasks, tool registry and verifiers: the parts that need no Blender session."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import trimesh

from toolgym.envs.blender.families import FAMILIES
from toolgym.envs.blender.tools import registry
from toolgym.envs.blender.verifier import KINDS, Goal, delta_e, term, verify_scene
from toolgym.envs.domains import get_domain
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_task, suites

HAND_WRITTEN = {
    "blender-modelling": "modelling",
    "blender-placement": "placement",
    "blender-material": "material",
    "blender-shape-keys": "shape_keys",
    "blender-lighting": "lighting",
    "blender-procedural-curated": "procedural",
}


def blender_tasks() -> list[Task]:
    return [t for s in suites().values() if s.domain == "blender" for t in s.tasks]


def test_hand_written_suites_cover_every_kind_with_test_tasks():
    found = suites()
    total = 0
    for name, kind in HAND_WRITTEN.items():
        suite = found[name]
        assert suite.domain == "blender" and {t.parameters["kind"] for t in suite.tasks} == {kind}
        assert suite.split("test") and suite.split("train")
        total += len(suite.tasks)
    assert total >= 40
    assert {f.kind for f in FAMILIES.values()} == set(KINDS)  # a family for every kind


def test_every_task_has_a_start_reference_prompt_and_tool_calls_the_registry_accepts():
    for task in blender_tasks():
        assert task.id.startswith("blender-") and task.prompt and task.reference
        assert task.parameters["kind"] in KINDS
        assert task.tool_calls, task.id
        for call in task.tool_calls:
            tool, _ = registry.parse_call(call)  # raises if the registry would refuse it
            assert f"tools.{tool.name}(" in task.reference


def test_generated_ids_for_any_seed_deterministic_and_splits_disjoint():
    domain = get_domain("blender")
    for name in FAMILIES:
        task = get_task(f"blender-procedural/{name}/test-1234")
        assert task == domain.task(f"blender-procedural/{name}/test-1234")
        assert task.split == "test" and task.seed == 1234 and task.domain == "blender"
    assert domain.task("procedural/plate_holes/train-0") is None
    # Test seeds draw from another generator stream; families with continuous parameters never
    # repeat a training task (discrete ones, a modifier count say, have few values to draw).
    for name in ("table", "placement", "material", "lighting"):
        train = {FAMILIES[name].task(s, "train").reference for s in range(20)}
        test = {FAMILIES[name].task(s, "test").reference for s in range(20)}
        assert not train & test, name


def test_the_moves_family_is_short_numbered_and_its_splits_never_share_a_task():
    """blender-moves: one to three objects, one set_location each, the call's numbers written
    in the prompt in the call's order (within the 128 bytes the mixed benchmark's policy reads);
    drawn on a 0.1 m grid, so seeds can meet, and the splits keep apart by construction."""
    from toolgym.agents.trainer.observations import prompt_numbers
    from toolgym.envs.tasks.suites import get_suite

    suite = get_suite("blender-moves")
    assert len(suite.split("train")) == 120 and len(suite.split("test")) == 30
    assert all(t.family == "move" and t.parameters["kind"] == "placement" for t in suite.tasks)
    move = FAMILIES["move"]
    train = {move.task(s, "train").reference for s in range(600)}
    test = {move.task(s, "test").reference for s in range(600)}
    assert not train & test
    counts = set()
    for task in suite.tasks:
        calls = [json.loads(c) for c in task.tool_calls]
        counts.add(len(calls))
        assert {c["name"] for c in calls} == {"set_location"}
        assert task.start.count("add_primitive") == len(calls)  # only what is to be moved
        numbers, at = prompt_numbers([task.prompt], 128, 16)
        read = [float(n) for n, i in zip(numbers[0], at[0], strict=True) if i >= 0]
        want = [c["arguments"][axis] for c in calls for axis in "xyz"]
        assert read == pytest.approx(want, abs=1e-6), task.id  # (float32)
        assert all(f"{c['arguments']['name']} to (" in task.prompt for c in calls)
    assert counts == {1, 2, 3}


def test_registry_has_the_three_faces_and_at_least_15_tools():
    assert len(registry.tools) >= 15
    schemas = {s["function"]["name"]: s for s in registry.json_schemas()}
    grammar = registry.grammar()
    assert set(schemas) == set(grammar) == set(registry.tools)
    location = schemas["set_location"]["function"]["parameters"]
    assert location["required"] == ["name", "x", "y", "z"]
    assert location["properties"]["x"]["minimum"] == -100.0
    assert grammar["set_rotation"]["params"]["x"]["unit"] == "deg"
    assert grammar["add_light"]["params"]["kind"]["choices"] == ["POINT", "SUN", "SPOT", "AREA"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            {"name": "set_location", "arguments": {"name": "A", "x": "1", "y": 0, "z": 0}},
            "parameter 'x' must be a finite number",
        ),
        ({"name": "set_scale", "arguments": {"name": "A", "x": 0, "y": 1, "z": 1}}, "out of range"),
        (
            {
                "name": "set_modifier",
                "arguments": {"name": "A", "modifier": "M", "setting": "count", "value": 2.5},
            },
            "count must be a whole number",
        ),
        ({"name": "teleport", "arguments": {}}, "unknown tool 'teleport'"),
    ],
)
def test_tool_calls_are_checked_before_they_run(call, message):
    from toolgym.envs.tools import ToolCallError

    with pytest.raises(ToolCallError, match=message):
        registry.parse_call(json.dumps(call))


def test_delta_e_and_terms():
    assert delta_e([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]) == 0.0
    assert delta_e([1, 1, 1], [0, 0, 0]) == pytest.approx(100.0, abs=0.05)  # white to black
    assert 20 < delta_e([0.8, 0.1, 0.1], [0.1, 0.1, 0.8]) < 200
    assert term(0.0, 1.0) == 1.0 and term(1.0, 1.0) == 0.5 and term(float("inf"), 1.0) == 0.0


def _state(**objects):
    return {"objects": objects}


def _obj(kind="MESH", location=(0, 0, 0), rotation=(1, 0, 0, 0), scale=(1, 1, 1), **extra):
    base = {"type": kind, "parent": None, "modifiers": [], "materials": []}
    base |= {"location": list(location), "rotation": list(rotation), "scale": list(scale)}
    if kind == "MESH":
        box = trimesh.creation.box((1, 1, 1))
        base |= {
            "vertices": box.vertices + 0.5 + location,
            "faces": box.faces.astype(np.int32),
            "shape_keys": {},
        }
    return base | extra


def test_placement_feedback_names_the_object_and_the_error():
    goal = Goal("placement", _state(Crate=_obj(location=(1, 0, 0)), Ball=_obj()), {})
    right = verify_scene(_state(Crate=_obj(location=(1, 0, 0)), Ball=_obj()), goal)
    assert right.score == 1.0 and right.passed
    off = verify_scene(_state(Crate=_obj(location=(1, 0.5, 0)), Ball=_obj()), goal)
    assert 0 < off.score < 0.6 and not off.passed
    assert "'Crate' is 0.50 m from its goal position (most along y)" in off.summary()
    missing = verify_scene(_state(Ball=_obj()), goal)
    assert "object 'Crate' is missing" in missing.summary() and missing.score == 0.5


def test_material_and_lighting_feedback_say_what_is_off():
    material = {"name": "m", "base_color": [0.8, 0.1, 0.1], "roughness": 0.2, "metallic": 0.0,
                "emission": [0, 0, 0], "transmission": 0.0, "alpha": 1.0}  # fmt: skip
    goal = Goal("material", _state(Ball=_obj(materials=[material])), {})
    blue = material | {"base_color": [0.1, 0.1, 0.8], "roughness": 0.6}
    report = verify_scene(_state(Ball=_obj(materials=[blue])), goal)
    assert report.score < 0.05 and "'Ball': base colour is off by" in report.summary()
    assert "roughness is off by 0.4" in report.summary()
    light = {"type": "POINT", "energy": 100.0, "color": [1, 1, 1]}
    lit = Goal("lighting", _state(Key=_obj("LIGHT", (0, 0, 3), light=light)), {})
    dim = _obj("LIGHT", (0, 0, 3), light=light | {"energy": 50.0, "type": "SPOT"})
    report = verify_scene(_state(Key=dim), lit)
    assert "a spot light where the goal has a point light" in report.summary()
    assert "too dim (×0.5)" in report.summary() and not report.passed


def test_lighting_checks_where_spot_area_and_sun_lights_point():
    spot = {"type": "SPOT", "energy": 100.0, "color": [1, 1, 1]}
    down = _obj("LIGHT", (0, 0, 3), light=spot)  # no rotation: along -Z
    goal = Goal("lighting", _state(Key=down), {})
    assert verify_scene(_state(Key=down), goal).passed
    half = math.radians(15) / 2  # turned 15° about X
    tilted = _obj("LIGHT", (0, 0, 3), (math.cos(half), math.sin(half), 0, 0), light=spot)
    report = verify_scene(_state(Key=tilted), goal)
    assert not report.passed and report.metrics["light_aim_error_deg"] == pytest.approx(15)
    assert "pointing 15° off its goal direction" in report.summary()
    point = {"type": "POINT", "energy": 100.0, "color": [1, 1, 1]}
    bulb = Goal("lighting", _state(Key=_obj("LIGHT", (0, 0, 3), light=point)), {})
    turned = _obj("LIGHT", (0, 0, 3), (math.cos(half), math.sin(half), 0, 0), light=point)
    assert verify_scene(_state(Key=turned), bulb).passed  # a point light shines every way


def test_a_malformed_state_is_a_verifier_error_not_a_zero():
    goal = Goal("placement", _state(Crate=_obj()), {})
    report = verify_scene({"objects": {"Crate": {"type": "MESH"}}}, goal)
    assert report.score is None and report.errors
    nothing = verify_scene(None, goal)
    assert nothing.score == 0.0 and "no scene could be read" in nothing.summary()


PRIMITIVE_MESHES = """
import hashlib, bpy
from toolgym.envs.blender.base_tools import PRIMITIVES, add_primitive
for kind in PRIMITIVES:
    add_primitive(bpy, kind, kind)
    mesh = bpy.data.objects[kind].data
    faces = [tuple(f.vertices) for f in mesh.polygons]
    edges = [tuple(e.vertices) for e in mesh.edges]
    points = [tuple(v.co) for v in mesh.vertices]
    print(kind, hashlib.sha256(repr((faces, edges, points)).encode()).hexdigest())
"""


def test_a_primitive_is_the_same_mesh_in_every_process():
    # create_uvsphere's face and edge order followed memory addresses: a Solidify on a sphere
    # then evaluated ~1e-8 m apart from one process to the next, and so did its rewards.
    import subprocess
    import sys

    runs = [
        subprocess.run(
            [sys.executable, "-c", PRIMITIVE_MESHES], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        for _ in range(3)
    ]
    meshes = [sorted(line for line in run if line.count(" ") == 1) for run in runs]
    assert len(meshes[0]) == 7
    assert meshes[0] == meshes[1] == meshes[2]
