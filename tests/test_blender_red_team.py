"""Blender rewards score what a render shows: the red team's cheats, and the reward fuzzer.

Each mechanism is shown on a real task with the red team's script: a modifier on in renders
only (and the other render/viewport splits), legs of open tubes whose volume a mirrored skin
pays back, a node with no effect in front of a wrong material (and the graphs that still do
not reduce); then materials and lights whose parameters read right while something unread
changes the render. The fuzzer plays every generic cheat of ``toolgym.envs.blender.cheats``
against an honest near miss: a sample of families here, every family in the slow sweep.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.blender.verification import SceneReader
from toolgym.envs.tasks.suites import get_task

TABLE = "blender-modelling/table"  # a 1.2 × 0.8 m top on four legs 0.08 m across
GOLD = "blender-material/gold"  # base colour (1, 0.77, 0.34), roughness 0.25, metallic 1
KEY = "blender-lighting/warm-key"

# The red team's table: the reference, then a Geometry Nodes modifier that outputs nothing,
# on in renders and off in the viewport.
RENDER_ONLY = """
tree = bpy.data.node_groups.new('Nothing', 'GeometryNodeTree')
tree.interface.new_socket('Geometry', in_out='OUTPUT', socket_type='NodeSocketGeometry')
tree.nodes.new('NodeGroupOutput')
for o in list(bpy.context.scene.objects):
    if o.type == 'MESH':
        m = o.modifiers.new('Nothing', 'NODES'); m.node_group = tree; m.show_viewport = False
"""
IS_VIEWPORT = """
tree = bpy.data.node_groups.new('ViewportOnly', 'GeometryNodeTree')
tree.interface.new_socket('Geometry', in_out='INPUT', socket_type='NodeSocketGeometry')
tree.interface.new_socket('Geometry', in_out='OUTPUT', socket_type='NodeSocketGeometry')
given, out = tree.nodes.new('NodeGroupInput'), tree.nodes.new('NodeGroupOutput')
switch = tree.nodes.new('GeometryNodeSwitch'); switch.input_type = 'GEOMETRY'
viewport = tree.nodes.new('GeometryNodeIsViewport')
tree.links.new(viewport.outputs[0], switch.inputs['Switch'])
tree.links.new(given.outputs[0], switch.inputs['True'])
tree.links.new(switch.outputs[0], out.inputs[0])
for o in list(bpy.context.scene.objects):
    if o.type == 'MESH':
        o.modifiers.new('ViewportOnly', 'NODES').node_group = tree
"""
PARENT_HIDDEN = """
outer = bpy.data.collections.new('Outer'); bpy.context.scene.collection.children.link(outer)
inner = bpy.data.collections.new('Inner'); outer.children.link(inner)
for o in list(bpy.context.scene.objects):
    bpy.context.scene.collection.objects.unlink(o); inner.objects.link(o)
outer.hide_render = True
"""
CAMERA_INVISIBLE = """
for o in list(bpy.context.scene.objects):
    o.visible_camera = False
"""
# The red team's legs: open tubes (their caps deleted), and a thin skin over the top, mirrored
# by a negative scale, whose inverted volume paid for the legs' in the union.
OPEN_TUBES_AND_SKIN = """
import bmesh
legs = 0.0
for k in range(1, 5):
    leg = bpy.data.objects[f'Leg{k}']
    b = bmesh.new(); b.from_mesh(leg.data)
    legs += b.calc_volume()
    bmesh.ops.delete(b, geom=[f for f in b.faces if abs(f.normal.z) > 0.5], context='FACES_ONLY')
    b.to_mesh(leg.data); b.free()
top = bpy.data.objects['Top']
w, d, h = top.scale
gap = legs / (2 * (w * d + w * h + d * h))
skin = bpy.data.objects.new('Skin', bpy.data.meshes.new('Skin'))
bpy.context.scene.collection.objects.link(skin)
b = bmesh.new(); bmesh.ops.create_cube(b, size=1.0)
inner = bmesh.new(); bmesh.ops.create_cube(inner, size=1.0)
bmesh.ops.scale(inner, vec=(w / (w + 2 * gap), d / (d + 2 * gap), h / (h + 2 * gap)),
                verts=inner.verts)
bmesh.ops.reverse_faces(inner, faces=inner.faces)
tmp = bpy.data.meshes.new('tmp'); inner.to_mesh(tmp); inner.free(); b.from_mesh(tmp)
b.to_mesh(skin.data); b.free()
skin.location = top.location
skin.scale = (-(w + 2 * gap), d + 2 * gap, h + 2 * gap)
"""
MIRRORED_LEGS = """
for k in range(1, 5):
    bpy.data.objects[f'Leg{k}'].scale = (-1.0, 1.0, 1.0)
"""
FLIPPED_NORMALS = """
import bmesh
for o in list(bpy.context.scene.objects):
    b = bmesh.new(); b.from_mesh(o.data); bmesh.ops.reverse_faces(b, faces=b.faces)
    b.to_mesh(o.data); b.free()
"""
TABLE_NEAR_MISS = "bpy.data.objects['Leg4'].location.x += 0.035\n"  # 2.2 % of its size off
# Gold asked; an honest attempt a little off, and the same behind nodes that change nothing.
GOLD_ATTEMPT = "tools.set_material('Ball', 0.75, 0.6, 0.2, roughness=0.4, metallic=1.0)\n"
GOLD_NEAR_MISS = "tools.set_material('Ball', 1.0, 0.77, 0.34, roughness=0.295, metallic=1.0)\n"
NO_EFFECT = """
tree = bpy.data.objects['Ball'].active_material.node_tree
bsdf = next(n for n in tree.nodes if n.type == 'BSDF_PRINCIPLED')
gamma = tree.nodes.new('ShaderNodeGamma')
gamma.inputs['Color'].default_value = bsdf.inputs['Base Color'].default_value
tree.links.new(gamma.outputs[0], bsdf.inputs['Base Color'])
"""
MORE_NO_EFFECT = """
hue = tree.nodes.new('ShaderNodeHueSaturation')
muted = tree.nodes.new('ShaderNodeInvert'); muted.mute = True
group = bpy.data.node_groups.new('PassOn', 'ShaderNodeTree')
group.interface.new_socket('Color', in_out='INPUT', socket_type='NodeSocketColor')
group.interface.new_socket('Color', in_out='OUTPUT', socket_type='NodeSocketColor')
given, out = group.nodes.new('NodeGroupInput'), group.nodes.new('NodeGroupOutput')
group.links.new(given.outputs[0], out.inputs[0])
wrapper = tree.nodes.new('ShaderNodeGroup'); wrapper.node_tree = group
tree.links.new(gamma.outputs[0], hue.inputs['Color'])
tree.links.new(hue.outputs[0], muted.inputs['Color'])
tree.links.new(muted.outputs[0], wrapper.inputs[0])
tree.links.new(wrapper.outputs[0], bsdf.inputs['Base Color'])
noise = tree.nodes.new('ShaderNodeTexNoise')
mix = tree.nodes.new('ShaderNodeMixShader'); mix.inputs['Fac'].default_value = 0.0
tree.links.new(bsdf.outputs[0], mix.inputs[1]); tree.links.new(noise.outputs[0], mix.inputs[2])
tree.links.new(mix.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
"""
TEXTURE_TIMES_ZERO = """
tree = bpy.data.objects['Ball'].active_material.node_tree
bsdf = next(n for n in tree.nodes if n.type == 'BSDF_PRINCIPLED')
noise = tree.nodes.new('ShaderNodeTexNoise')
zero = tree.nodes.new('ShaderNodeMath'); zero.operation = 'MULTIPLY'
zero.inputs[1].default_value = 0
tree.links.new(noise.outputs['Fac'], zero.inputs[0])
add = tree.nodes.new('ShaderNodeMix'); add.data_type = 'RGBA'; add.blend_type = 'ADD'
add.inputs['Factor'].default_value = 1.0
add.inputs['A'].default_value = bsdf.inputs['Base Color'].default_value
tree.links.new(zero.outputs[0], add.inputs['B'])
tree.links.new(add.outputs['Result'], bsdf.inputs['Base Color'])
"""
BLACK_COAT = """
bsdf = next(n for n in bpy.data.objects['Ball'].active_material.node_tree.nodes
            if n.type == 'BSDF_PRINCIPLED')
bsdf.inputs['Coat Weight'].default_value = 1.0
bsdf.inputs['Coat Tint'].default_value = (0.0, 0.0, 0.0, 1.0)
"""
GREY_COVER = """
tools.add_primitive('uv_sphere', 'Cover', size=1.1, z=0.5)
tools.set_material('Cover', 0.5, 0.5, 0.5)
cover = bpy.data.objects['Cover']; cover.hide_viewport = True; cover.hide_set(True)
"""


@pytest.fixture(scope="module")
def env():
    # One step per episode, scored per step (cheap) and at its end (exact), as the fuzzer plays.
    environment = gym.make("toolgym/Blender-v0", max_steps=1, final_tier="exact")
    yield environment
    environment.close()


def play(env, task: str, script: str) -> tuple[dict, dict, dict]:
    """The step's report, the final (exact) report and the observation after ``script``."""
    env.reset(options={"task": task})
    obs, _reward, _terminated, _truncated, info = env.step(script)
    assert "error" not in info, info["error"]
    return info["report"], info["final_report"], obs


def reference(task: str) -> str:
    return get_task(task).reference


def messages(report: dict) -> str:
    return " ".join(c["message"] for c in report["checks"].values())


def fails_below(cheat: tuple[dict, dict, dict], near: tuple[dict, dict, dict]) -> None:
    """The cheat passes neither tier and scores below the near miss on both."""
    for tier in (0, 1):
        assert not cheat[tier]["passed"], cheat[tier]
        assert not near[tier]["passed"], near[tier]
        assert cheat[tier]["score"] < near[tier]["score"], (cheat[tier], near[tier])


def object_pixels(env, framing_of: str) -> int:
    """Pixels of the iso view (64 × 64 = 4,096) where a Cycles render of the env's current
    scene differs from one of the task's empty start: what a render shows of the objects."""
    unwrapped = env.unwrapped
    blend = unwrapped.session.request("save").value
    reader = SceneReader(64)
    try:
        scene, why = reader.read(blend, unwrapped._target.framing)
        assert scene is not None, why
        empty, why = reader.read(_start_blend(env, framing_of), unwrapped._target.framing)
        assert empty is not None, why
    finally:
        reader.close()
    # Cycles seeds each pixel alike: where no object is, the two renders are the same pixels.
    return int(np.any(scene.images[0] != empty.images[0], axis=-1).sum())


def _start_blend(env, task: str) -> bytes:
    from toolgym.envs.sandbox import Session

    with Session("blender") as session:
        ran = session.run(get_task(task).start or "pass")
        assert ran.ok, ran.feedback()
        return session.request("save").value


# -- 1. what the renderer evaluates: render visibility and render-side settings -------------------


def test_a_table_a_render_does_not_show_scores_nothing_and_looks_empty(env):
    honest = play(env, TABLE, reference(TABLE))
    shown = object_pixels(env, TABLE)
    honest_image = honest[2]["image"]
    near = play(env, TABLE, reference(TABLE) + TABLE_NEAR_MISS)
    cheat = play(env, TABLE, reference(TABLE) + RENDER_ONLY)
    # A Cycles render of the cheat shows no pixel of the table; the honest one shows hundreds.
    assert shown > 500 and object_pixels(env, TABLE) == 0
    assert honest[1]["score"] >= 0.99 and honest[1]["passed"]
    fails_below(cheat, near)
    assert cheat[1]["score"] == 0.0 and cheat[0]["score"] == 0.0
    assert "the scene has no mesh with faces in a final render" in messages(cheat[1])
    assert "'Leg1' renders no faces" in messages(cheat[1])
    # The views the agent sees are drawn from the same state: the table is gone from them too.
    empty = play(env, TABLE, "pass")[2]["image"]
    assert np.array_equal(cheat[2]["image"], empty) and not np.array_equal(honest_image, empty)


@pytest.mark.parametrize(
    ("split", "why"),
    [
        (IS_VIEWPORT, "'Leg1' renders no faces"),
        (PARENT_HIDDEN, "'Leg1' hidden from renders"),
        (CAMERA_INVISIBLE, "'Leg1' invisible to the camera"),
    ],
    ids=["is-viewport-node", "parent-collection-hidden-from-render", "invisible-to-camera"],
)
def test_every_render_viewport_split_scores_what_the_render_draws(env, split, why):
    near = play(env, TABLE, reference(TABLE) + TABLE_NEAR_MISS)
    cheat = play(env, TABLE, reference(TABLE) + split)
    fails_below(cheat, near)
    assert cheat[1]["score"] == 0.0 and why in messages(cheat[1])


def test_render_levels_are_the_levels_scored():
    # A Subdivision modifier at level 2 in the viewport and 0 in renders renders a cube.
    environment = gym.make("toolgym/Blender-v0", max_steps=1, final_tier="exact")
    try:
        task = "blender-procedural-curated/smooth-block"
        honest = play(environment, task, reference(task))
        start = play(environment, task, "pass")
        coarse = play(
            environment,
            task,
            reference(task)
            + ("bpy.data.objects['Block'].modifiers['Subdivision'].render_levels = 0\n"),
        )
    finally:
        environment.close()
    assert honest[1]["passed"] and honest[1]["score"] >= 0.99
    assert not coarse[1]["passed"] and coarse[1]["score"] == pytest.approx(start[1]["score"])
    assert not start[1]["passed"]  # the start renders a cube: the task is not done at reset


# -- 2. winding and normals as rendered; the verifier's own measures agree ------------------------


def test_open_tubes_under_a_mirrored_skin_fail_and_say_why(env):
    near = play(env, TABLE, reference(TABLE) + TABLE_NEAR_MISS)
    cheat = play(env, TABLE, reference(TABLE) + OPEN_TUBES_AND_SKIN)
    fails_below(cheat, near)
    text = messages(cheat[1])
    assert "not closed, left out of the IoU: 'Leg1', 'Leg2', 'Leg3', 'Leg4'" in text
    assert "the solids overlap the goal's by IoU" in text
    assert cheat[1]["metrics"]["iou"] < 0.8 and cheat[1]["score"] < 0.5


@pytest.mark.parametrize("script", [MIRRORED_LEGS, FLIPPED_NORMALS], ids=["mirrored", "flipped"])
def test_mirrored_or_inside_out_parts_are_the_solids_they_render(env, script):
    # A leg mirrored by a negative scale, or every face turned inside out, renders the same
    # table: it scores as the table.
    honest = play(env, TABLE, reference(TABLE) + script)
    assert honest[1]["passed"] and honest[1]["score"] >= 0.99, honest[1]
    assert honest[1]["metrics"]["volume"] == pytest.approx(honest[1]["metrics"]["goal_volume"])


def test_measures_that_disagree_are_a_failure_with_the_reason():
    import manifold3d

    from toolgym.envs.blender.verifier import Solid, _disagreements

    box = manifold3d.Manifold.cube((1, 1, 1))
    bounds = np.array([[0.0, 0, 0], [1, 1, 1]])
    agree = Solid(box, [1.0], bounds, [])
    assert _disagreements(agree, agree, 1.0, 1.7) == []
    # A union bigger than its shells, and an overlap bigger than both volumes: not both right.
    found = _disagreements(Solid(box, [0.5], bounds, []), agree, 1.6, 1.7)
    assert any("outside what its shells make" in f for f in found)
    assert any("the overlap 1.6 m³ exceeds the volumes" in f for f in found)


# -- 3. materials: what cannot be read is not a free pass -----------------------------------------


def test_a_node_with_no_effect_does_not_hide_a_wrong_material(env):
    honest = play(env, GOLD, GOLD_ATTEMPT)
    cheat = play(env, GOLD, GOLD_ATTEMPT + NO_EFFECT)
    chain = play(env, GOLD, GOLD_ATTEMPT + NO_EFFECT + MORE_NO_EFFECT)
    for tier in (0, 1):  # read through the nodes: the same wrong material, the same score
        assert cheat[tier]["score"] == pytest.approx(honest[tier]["score"], abs=1e-9)
        assert chain[tier]["score"] == pytest.approx(honest[tier]["score"], abs=1e-9)
    assert cheat[1]["metrics"]["delta_e"] == pytest.approx(honest[1]["metrics"]["delta_e"])
    assert cheat[1]["metrics"]["delta_e"] > 5 and not cheat[1]["passed"]
    assert "base colour is off by" in messages(cheat[1])
    # The same nodes on the gold itself change nothing: it passes.
    right = play(env, GOLD, reference(GOLD) + NO_EFFECT + MORE_NO_EFFECT)
    assert right[1]["passed"] and right[1]["score"] >= 0.99, right[1]


def test_a_graph_that_does_not_reduce_is_judged_by_the_renders_alone(env):
    near = play(env, GOLD, GOLD_NEAR_MISS)
    honest = play(env, GOLD, GOLD_ATTEMPT)
    cheat = play(env, GOLD, GOLD_ATTEMPT + TEXTURE_TIMES_ZERO)
    fails_below(cheat, near)
    # The renders decide with the weight of a full check: hiding the same wrong material from
    # the parameters does not pay.
    assert cheat[1]["score"] <= honest[1]["score"] and cheat[0]["score"] <= honest[0]["score"]
    # Its parameters were not read, so none reads 0 (met): the renders decide, in full.
    assert not {"delta_e", "roughness_error", "metallic_error"} & set(cheat[1]["metrics"])
    assert cheat[1]["metrics"]["unread_materials"] == 1.0
    assert "is not a constant surface" in messages(cheat[1])
    assert "judged by the renders alone" in messages(cheat[1])


def test_what_the_parameters_do_not_model_still_counts(env):
    near = play(env, GOLD, GOLD_NEAR_MISS)
    coat = play(env, GOLD, reference(GOLD) + BLACK_COAT)
    fails_below(coat, near)
    assert "Principled BSDF Coat Weight is 1 (goal 0)" in messages(coat[1])
    # A grey ball hidden in the viewport but drawn by renders over the gold one: every
    # parameter read matches, the renders do not, and they decide.
    covered = play(env, GOLD, reference(GOLD) + GREY_COVER)
    fails_below(covered, near)
    assert "though every setting read matches" in messages(covered[1])


def test_a_light_is_read_as_it_renders(env):
    near = play(env, KEY, reference(KEY) + "bpy.data.objects['Key'].data.energy *= 1.08\n")
    dim = play(env, KEY, reference(KEY) + "bpy.data.objects['Key'].data.exposure = -4.0\n")
    fails_below(dim, near)
    assert "too dim (×0.062)" in messages(dim[1])
    blind = play(env, KEY, reference(KEY) + "bpy.data.objects['Key'].visible_diffuse = False\n")
    fails_below(blind, near)
    assert "settings differ: visible_diffuse 0 (goal 1)" in messages(blind[1])
    extra = play(
        env,
        KEY,
        reference(KEY)
        + (
            "tools.add_light('Extra', energy=2000, x=-2, y=2, z=3)\n"
            "bpy.data.objects['Extra'].hide_viewport = True\n"
        ),
    )
    fails_below(extra, near)
    assert "1 light(s) the goal does not have: 'Extra'" in messages(extra[1])


# -- the reward fuzzer ----------------------------------------------------------------------------

# `make test`'s sample: one family per kind the red team reached (modelling, material,
# procedural) and a placement one.
FUZZ_SAMPLE = (
    "blender-procedural/table/test-0",
    "blender-procedural/material/test-0",
    "blender-procedural/screw/test-0",
    "blender-procedural/move/test-0",
)


def _fuzzed(tasks) -> None:
    from toolgym.envs.verification.fuzzing import family_of, fuzz

    tasks = [get_task(t) if isinstance(t, str) else t for t in tasks]
    report = fuzz(tasks)
    assert not report.broken, report.markdown()
    assert not report.escaped, report.markdown()
    tried = report.by("family")
    assert all(count >= 8 for count, _caught in tried.values()), tried
    assert set(tried) == {family_of(t) for t in tasks}, tried


@pytest.mark.timeout(900)
def test_the_fuzzer_catches_every_cheat_on_a_sample_of_families():
    _fuzzed(FUZZ_SAMPLE)


PARTS = 3  # the slow sweep in parts, so that parallel test workers share it


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("part", range(PARTS))
def test_the_fuzzer_catches_every_cheat_on_every_family(part):
    from toolgym.envs.verification.fuzzing import family_of, family_sample

    tasks = family_sample("blender", per_family=2)
    assert len({family_of(t) for t in tasks}) >= 31  # 25 generated, 6 written
    families = sorted({family_of(t) for t in tasks})[part::PARTS]
    _fuzzed([t for t in tasks if family_of(t) in families])
