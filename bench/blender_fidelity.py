"""Blender verifier fidelity: equivalent solutions written another way must pass, visible near
misses must not, and the score must say how far off a near miss is.

Run::

    python bench/blender_fidelity.py            # every case, a table on stdout
    python bench/blender_fidelity.py --json     # one JSON line per case

Each case is a task and a ``bpy`` script sent in one step (code mode) to ``toolgym/Blender-v0``;
the table shows its score and whether it passed. An ``equivalent`` case builds the goal another
way (a node graph, applied scale, a parent, an excluded collection...) and should pass; a
``near miss`` is visibly wrong to a Blender artist and should not, with a score clearly lower.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import gymnasium as gym

import toolgym  # noqa: F401 - registers toolgym/Blender-v0
from toolgym.envs.tasks.suites import get_task

NODES = """
def principled(name):
    material = bpy.data.objects[name].active_material
    tree = material.node_tree
    return tree, next(n for n in tree.nodes if n.type == 'BSDF_PRINCIPLED')
"""
EMISSION = """
tools.set_material('Ball', 0.5, 0.5, 0.5)
tree = bpy.data.objects['Ball'].active_material.node_tree
glow = tree.nodes.new('ShaderNodeEmission')
glow.inputs['Color'].default_value = ({r}, {g}, {b}, 1)
glow.inputs['Strength'].default_value = {strength}
tree.links.new(glow.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
"""
# A bright lamp, for the cases of a glow that hides what the surface reflects.
LAMP = dataclasses.replace(
    get_task("blender-material/glowing-green"),
    id="blender-material/lamp",
    prompt="Make Ball a lamp: base colour (0.9, 0.8, 0.6), emission strength 10.",
    reference="tools.set_material(name='Ball', r=0.9, g=0.8, b=0.6, emission_strength=10)",
)
CASES = [
    # (kind, task, label, expect_pass, script)
    (
        "material",
        "blender-material/red-plastic",
        "Base Color from an RGB node",
        True,
        NODES
        + """
tools.set_material('Ball', 0.5, 0.5, 0.5, roughness=0.2)
tree, bsdf = principled('Ball')
rgb = tree.nodes.new('ShaderNodeRGB'); rgb.outputs[0].default_value = (0.8, 0.05, 0.05, 1)
tree.links.new(rgb.outputs[0], bsdf.inputs['Base Color'])
""",
    ),
    (
        "material",
        "blender-material/red-plastic",
        "Roughness from a Value node",
        True,
        NODES
        + """
tools.set_material('Ball', 0.8, 0.05, 0.05, roughness=0.9)
tree, bsdf = principled('Ball')
value = tree.nodes.new('ShaderNodeValue'); value.outputs[0].default_value = 0.2
tree.links.new(value.outputs[0], bsdf.inputs['Roughness'])
""",
    ),
    (
        "material",
        "blender-material/red-plastic",
        "Mix node of red and red",
        True,
        NODES
        + """
tools.set_material('Ball', 0.5, 0.5, 0.5, roughness=0.2)
tree, bsdf = principled('Ball')
mix = tree.nodes.new('ShaderNodeMix'); mix.data_type = 'RGBA'
mix.inputs['Factor'].default_value = 0.5
mix.inputs[6].default_value = mix.inputs[7].default_value = (0.8, 0.05, 0.05, 1)
tree.links.new(mix.outputs[2], bsdf.inputs['Base Color'])
""",
    ),
    (
        "material",
        "blender-material/glowing-green",
        "glow added by an Add Shader",
        True,
        """
tools.set_material('Ball', 0.1, 0.9, 0.2, roughness=0.5)
tree = bpy.data.objects['Ball'].active_material.node_tree
bsdf = next(n for n in tree.nodes if n.type == 'BSDF_PRINCIPLED')
emission = tree.nodes.new('ShaderNodeEmission'); add = tree.nodes.new('ShaderNodeAddShader')
emission.inputs['Color'].default_value = (0.1, 0.9, 0.2, 1)
emission.inputs['Strength'].default_value = 3
tree.links.new(bsdf.outputs[0], add.inputs[0]); tree.links.new(emission.outputs[0], add.inputs[1])
tree.links.new(add.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
""",
    ),
    # Not the same surface: the goal also reflects its light (paler, with a highlight), ΔE ~17.
    (
        "material",
        "blender-material/glowing-green",
        "glow by an Emission shader alone",
        False,
        """
tools.set_material('Ball', 0.1, 0.9, 0.2, roughness=0.5)
tree = bpy.data.objects['Ball'].active_material.node_tree
emission = tree.nodes.new('ShaderNodeEmission')
emission.inputs['Color'].default_value = (0.1, 0.9, 0.2, 1)
emission.inputs['Strength'].default_value = 3
tree.links.new(emission.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
""",
    ),
    # A lamp: a Principled BSDF whose glow (9, 8, 6) fills every channel, so nothing it
    # reflects shows; an Emission shader of the same light is the same surface.
    (
        "material",
        LAMP.id,
        "lamp: the same light by an Emission shader alone",
        True,
        EMISSION.format(r=0.9, g=0.8, b=0.6, strength=10),
    ),
    (
        "material",
        LAMP.id,
        "lamp: an orange light by an Emission shader (the floor shows it)",
        False,
        EMISSION.format(r=0.9, g=0.2, b=0.1, strength=10),
    ),
    (
        "material",
        "blender-material/chrome",
        "Glossy BSDF for chrome",
        True,
        """
tools.set_material('Ball', 0.5, 0.5, 0.5)
tree = bpy.data.objects['Ball'].active_material.node_tree
glossy = tree.nodes.new('ShaderNodeBsdfGlossy')
glossy.inputs['Color'].default_value = (0.95, 0.95, 0.95, 1)
glossy.inputs['Roughness'].default_value = 0.05
tree.links.new(glossy.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
""",
    ),
    (
        "material",
        "blender-material/copper-and-jade",
        "copper set, output wired to grey Diffuse",
        False,
        """
tools.set_material('Left', 0.95, 0.64, 0.54, roughness=0.3, metallic=1.0)
tools.set_material('Right', 0.1, 0.6, 0.35, roughness=0.15)
tree = bpy.data.objects['Left'].active_material.node_tree
diffuse = tree.nodes.new('ShaderNodeBsdfDiffuse')
diffuse.inputs['Color'].default_value = (0.5, 0.5, 0.5, 1)
tree.links.new(diffuse.outputs[0], tree.get_output_node('CYCLES').inputs['Surface'])
""",
    ),
    (
        "material",
        "blender-material/gold",
        "gold ΔE 8 off",
        False,
        """
tools.set_material('Ball', 1.0, 0.66, 0.26, roughness=0.25, metallic=1.0)
""",
    ),
    (
        "material",
        "blender-material/gold",
        "a noise texture on gold (irreducible)",
        False,
        NODES
        + """
tools.set_material('Ball', 1.0, 0.77, 0.34, roughness=0.25, metallic=1.0)
tree, bsdf = principled('Ball')
noise = tree.nodes.new('ShaderNodeTexNoise')
tree.links.new(noise.outputs['Color'], bsdf.inputs['Base Color'])
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "scale applied (Ctrl+A) after solving",
        True,
        """
tools.set_location('Crate', 1.5, 0.5, 0.5); tools.set_rotation('Crate', 0, 0, 30)
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
crate = bpy.data.objects['Crate']
crate.scale = (2, 2, 2); crate.data.transform(__import__('mathutils').Matrix.Scale(0.5, 4))
bpy.context.view_layer.objects.active = crate
for o in bpy.context.view_layer.objects: o.select_set(o == crate)
bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "parented to a moved empty",
        True,
        """
import math
empty = bpy.data.objects.new('Pivot', None); bpy.context.scene.collection.objects.link(empty)
empty.location = (1.0, 0.0, 0.0)
crate = bpy.data.objects['Crate']; crate.parent = empty
crate.location = (0.5, 0.5, 0.5); crate.rotation_euler = (0, 0, math.radians(30))
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "delta transforms and a quaternion",
        True,
        """
import math
crate = bpy.data.objects['Crate']
crate.location = (1.0, 0.0, 0.5); crate.delta_location = (0.5, 0.5, 0.0)
crate.rotation_mode = 'QUATERNION'
crate.rotation_quaternion = (math.cos(math.radians(15)), 0, 0, math.sin(math.radians(15)))
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "a helper cube in an excluded collection",
        True,
        """
tools.set_location('Crate', 1.5, 0.5, 0.5); tools.set_rotation('Crate', 0, 0, 30)
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
helpers = bpy.data.collections.new('Helpers'); bpy.context.scene.collection.children.link(helpers)
mesh = bpy.data.meshes.new('h'); import bmesh; b = bmesh.new(); bmesh.ops.create_cube(b, size=1)
b.to_mesh(mesh); helpers.objects.link(bpy.data.objects.new('Helper', mesh))
bpy.context.view_layer.layer_collection.children['Helpers'].exclude = True
hidden = bpy.data.objects.new('Cutter', mesh); bpy.context.scene.collection.objects.link(hidden)
hidden.hide_set(True); hidden.hide_render = True
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "mesh moved 0.3 m inside its object",
        False,
        """
import mathutils
tools.set_location('Crate', 1.5, 0.5, 0.5); tools.set_rotation('Crate', 0, 0, 30)
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
bpy.data.objects['Crate'].data.transform(mathutils.Matrix.Translation((0.3, 0, 0)))
""",
    ),
    (
        "placement",
        "blender-placement/two-crates",
        "ten extra cubes",
        False,
        """
tools.set_location('Crate', 1.5, 0.5, 0.5); tools.set_rotation('Crate', 0, 0, 30)
tools.set_location('Box', -1, -1, 0.5); tools.set_rotation('Box', 0, 0, 45)
for k in range(10): tools.add_primitive('cube', f'Extra{k}', size=0.3, x=k * 0.4 - 2, y=2, z=0.15)
""",
    ),
    ("modelling", "blender-modelling/table", "the reference", True, None),
    (
        "modelling",
        "blender-modelling/table",
        "a leg missing",
        False,
        """
tools.add_primitive(kind='cube', name='Top', size=1.0, z=0.72)
tools.set_scale(name='Top', x=1.2, y=0.8, z=0.06)
tools.add_primitive(kind='cylinder', name='Leg1', size=0.08, depth=0.69, x=0.52, y=0.32, z=0.345)
tools.add_primitive(kind='cylinder', name='Leg2', size=0.08, depth=0.69, x=-0.52, y=0.32, z=0.345)
tools.add_primitive(kind='cylinder', name='Leg3', size=0.08, depth=0.69, x=-0.52, y=-0.32, z=0.345)
""",
    ),
    (
        "modelling",
        "blender-modelling/table",
        "legs in an excluded collection too",
        True,
        """
tools.add_primitive(kind='cube', name='Top', size=1.0, z=0.72)
tools.set_scale(name='Top', x=1.2, y=0.8, z=0.06)
for k, (x, y) in enumerate([(0.52, 0.32), (-0.52, 0.32), (-0.52, -0.32), (0.52, -0.32)], 1):
    tools.add_primitive(kind='cylinder', name=f'Leg{k}', size=0.08, depth=0.69, x=x, y=y, z=0.345)
old = bpy.data.collections.new('Old'); bpy.context.scene.collection.children.link(old)
for k in range(3):
    tools.add_primitive('cube', f'Draft{k}', size=0.5, z=2 + k)
    bpy.context.scene.collection.objects.unlink(bpy.data.objects[f'Draft{k}'])
    old.objects.link(bpy.data.objects[f'Draft{k}'])
bpy.context.view_layer.layer_collection.children['Old'].exclude = True
""",
    ),
    (
        "modelling",
        "blender-modelling/table",
        "legs as a collection instance",
        True,
        """
tools.add_primitive(kind='cube', name='Top', size=1.0, z=0.72)
tools.set_scale(name='Top', x=1.2, y=0.8, z=0.06)
legs = bpy.data.collections.new('Legs'); bpy.context.scene.collection.children.link(legs)
for k, (x, y) in enumerate([(0.52, 0.32), (-0.52, 0.32), (-0.52, -0.32), (0.52, -0.32)], 1):
    tools.add_primitive(kind='cylinder', name=f'Leg{k}', size=0.08, depth=0.69, x=x, y=y, z=0.345)
    bpy.context.scene.collection.objects.unlink(bpy.data.objects[f'Leg{k}'])
    legs.objects.link(bpy.data.objects[f'Leg{k}'])
bpy.context.view_layer.layer_collection.children['Legs'].exclude = True
empty = bpy.data.objects.new('LegSet', None); empty.instance_type = 'COLLECTION'
empty.instance_collection = legs; bpy.context.scene.collection.objects.link(empty)
""",
    ),
    ("procedural", "blender-procedural-curated/long-wall", "the reference", True, None),
    (
        "procedural",
        "blender-procedural-curated/long-wall",
        "an array one short",
        False,
        """
tools.set_modifier(name='Brick', modifier='Array', setting='count', value=5.0)
""",
    ),
    (
        "procedural",
        "blender-procedural-curated/long-wall",
        "with a DECIMATE (ratio 1) too",
        True,
        """
tools.set_modifier(name='Brick', modifier='Array', setting='count', value=6.0)
tools.add_modifier(name='Brick', kind='DECIMATE', modifier='Decimate')
""",
    ),
]


def run_case(env: gym.Env, task_id: str, script: str | None) -> dict:
    env.reset(options={"task": task_id})
    started = time.perf_counter()
    _obs, _r, _t, _tr, info = env.step(
        script if script is not None else env.unwrapped.task.reference
    )
    report = info.get("report") or {}
    return {
        "score": report.get("score"),
        "passed": bool(report.get("passed")),
        "error": info.get("error"),
        "summary": " ".join(
            c.get("message", "") for c in (report.get("checks") or {}).values() if c
        )[:160],
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = gym.make("toolgym/Blender-v0", max_steps=4)
    env.unwrapped._succeeded = lambda report: False  # keep the report of every step
    env.unwrapped.tasks = (*env.unwrapped.tasks, LAMP)
    rows = []
    try:
        for kind, task_id, label, expect, script in CASES:
            result = run_case(env, task_id, script) | {
                "kind": kind,
                "task": task_id,
                "case": label,
                "expect_pass": expect,
            }
            rows.append(result)
            if args.json:
                print(json.dumps(result), flush=True)
            else:
                score = "-" if result["score"] is None else f"{result['score']:.3f}"
                ok = "ok" if result["passed"] == expect and result["score"] is not None else "WRONG"
                print(
                    f"| {kind} | {label} | {'pass' if expect else 'fail'} | {score} | "
                    f"{'pass' if result['passed'] else 'fail'} | {ok} |",
                    flush=True,
                )
    finally:
        env.close()
    wrong = [r for r in rows if r["passed"] != r["expect_pass"] or r["score"] is None]
    print(f"{len(rows) - len(wrong)}/{len(rows)} cases as expected")


if __name__ == "__main__":
    main()
