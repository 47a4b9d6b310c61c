"""Generic Blender cheats for the reward fuzzer (``toolgym.envs.verification.fuzzing``), and the
near miss.

Each cheat turns any Blender task's reference into a script that undoes what the task asks
while keeping what a careless verifier reads: geometry a final render does not draw (a modifier
on in renders only, a Geometry Nodes "Is Viewport" switch, coarse render levels, a collection
hidden from renders above the objects' own, objects invisible to the camera or drawn as
holdouts), geometry a render draws that a viewport reader skips (covers and leftovers hidden
in the viewport only), volume paid for by shells turned inside out (mirrored by a negative
scale, or with flipped normals), the same bounding boxes with the features removed, every value
just past its threshold at once, and materials and lights whose parameters read right while
something they do not model changes the render (nodes that change nothing, a texture times
zero, an unmodelled input, a light's exposure and ray visibility, an extra light). A cheat that
does not fit a task's kind is ``None`` for it.

The near miss is the reference with one honest error, just past one threshold: a part of a
model (the smallest with a twentieth of its surface) moved 2.2 % of its size along its middle
side (a one-part model 0.8 % too big), an object moved 1.5 % of the scene's size, a roughness
(an alpha where a glow would hide a roughness) a little off, a key light 8 % too bright. Every
cheat must score below it, per step and at the end.

Scripts run in the agent's sandbox like any agent's (``bpy`` and ``tools`` in scope); they
find the scene's objects when they run, so one script fits every task of a kind.
"""

from __future__ import annotations

from collections.abc import Callable

from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.fuzzing import Cheat

GEOMETRY = ("modelling", "procedural")
MESH_KINDS = ("modelling", "procedural", "placement", "shape_keys")
ALL_KINDS = (*MESH_KINDS, "material", "lighting")

# Helpers every script starts with (names with a leading underscore, out of the task's way).
PRELUDE = """
import bmesh as _bmesh
import mathutils as _mu

def _meshes():
    return sorted((o for o in bpy.context.scene.objects if o.type == 'MESH'), key=lambda o: o.name)

def _lights():
    return sorted((o for o in bpy.context.scene.objects if o.type == 'LIGHT'), key=lambda o: o.name)

def _bounds(objects):
    graph = bpy.context.evaluated_depsgraph_get()
    points = [o.evaluated_get(graph).matrix_world @ _mu.Vector(c)
              for o in objects for c in o.evaluated_get(graph).bound_box]
    low = _mu.Vector([min(p[i] for p in points) for i in range(3)])
    high = _mu.Vector([max(p[i] for p in points) for i in range(3)])
    return low, high

def _size():
    low, high = _bounds(_meshes())
    return (high - low).length

def _box(name, low, high, mirror=False, flip=False):
    mesh = bpy.data.meshes.new(name)
    b = _bmesh.new()
    _bmesh.ops.create_cube(b, size=1.0)
    if flip:
        _bmesh.ops.reverse_faces(b, faces=b.faces)
    b.to_mesh(mesh)
    b.free()
    made = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(made)
    made.location = (low + high) / 2
    made.scale = [max(h - l, 1e-4) for l, h in zip(low, high)]
    if mirror:
        made.scale.x = -made.scale.x
    return made

def _principled(obj):
    material = obj.active_material
    if material is None or material.node_tree is None:
        return None, None
    tree = material.node_tree
    return tree, next((n for n in tree.nodes if n.type == 'BSDF_PRINCIPLED'), None)

def _lab(rgb):
    import math
    m = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    white = (0.95047, 1.0, 1.08883)
    xyz = [sum(m[i][j] * max(rgb[j], 0.0) for j in range(3)) / white[i] for i in range(3)]
    f = [v ** (1 / 3) if v > (6 / 29) ** 3 else v / (3 * (6 / 29) ** 2) + 4 / 29 for v in xyz]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))

def _delta_e(a, b):
    return sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5

def _shown(base, glow):
    lit = [min(max(g, 0.0) + max(c, 0.0), 1.0) for c, g in zip(base, glow)]
    return lit, [min(max(g, 0.0), 1.0) for g in glow]

def _nudge_color(color, glow, target):
    # The colour scaled (darker, or brighter) until what it shows is `target` ΔE away.
    base = list(color[:3])
    lit, unlit = _shown(base, glow)
    for direction in (0.98, 1.02):
        k = 1.0
        for _ in range(400):
            k *= direction
            moved = [min(max(c * k, 0.0), 1.0) for c in base]
            seen = _shown(moved, glow)
            if max(_delta_e(seen[0], lit), _delta_e(seen[1], unlit)) >= target:
                return moved
    return None
"""


def _script(task: Task, after: str, before: str = "", reference: bool = True) -> str:
    """The prelude, ``before``, the task's reference (unless not ``reference``), ``after``."""
    body = task.reference if reference else ""
    return f"{PRELUDE}\n{before}\n{body}\n{after}\n"


def _kind(task: Task) -> str:
    return str(task.parameters.get("kind"))


def _when(kinds: tuple[str, ...], build: Callable[[Task], str | None]) -> Callable:
    def built(task: Task) -> str | None:
        return build(task) if _kind(task) in kinds else None

    return built


# -- geometry a final render does not draw ------------------------------------------------------

RENDER_ONLY_MODIFIER = """
tree = bpy.data.node_groups.new('Nothing', 'GeometryNodeTree')
tree.interface.new_socket('Geometry', in_out='INPUT', socket_type='NodeSocketGeometry')
tree.interface.new_socket('Geometry', in_out='OUTPUT', socket_type='NodeSocketGeometry')
tree.nodes.new('NodeGroupInput'); tree.nodes.new('NodeGroupOutput')
for o in _meshes():
    m = o.modifiers.new('Nothing', 'NODES'); m.node_group = tree
    m.show_viewport = False  # on in renders only
"""

IS_VIEWPORT_SWITCH = """
tree = bpy.data.node_groups.new('ViewportOnly', 'GeometryNodeTree')
tree.interface.new_socket('Geometry', in_out='INPUT', socket_type='NodeSocketGeometry')
tree.interface.new_socket('Geometry', in_out='OUTPUT', socket_type='NodeSocketGeometry')
given, out = tree.nodes.new('NodeGroupInput'), tree.nodes.new('NodeGroupOutput')
switch = tree.nodes.new('GeometryNodeSwitch'); switch.input_type = 'GEOMETRY'
viewport = tree.nodes.new('GeometryNodeIsViewport')
tree.links.new(viewport.outputs[0], switch.inputs['Switch'])
tree.links.new(given.outputs[0], switch.inputs['True'])
tree.links.new(switch.outputs[0], out.inputs[0])
for o in _meshes():
    m = o.modifiers.new('ViewportOnly', 'NODES'); m.node_group = tree
"""

RENDER_LEVELS = """
for o in _meshes():
    for m in o.modifiers:
        if m.type in ('SUBSURF', 'MULTIRES'):
            m.render_levels = 0
        elif m.type == 'SCREW':
            m.render_steps = 2
"""


def _render_levels(task: Task) -> str | None:
    if not any(kind in task.start + task.reference for kind in ("SUBSURF", "SCREW")):
        return None
    return _script(task, RENDER_LEVELS)


COLLECTION_HIDDEN = """
outer = bpy.data.collections.new('Outer'); bpy.context.scene.collection.children.link(outer)
inner = bpy.data.collections.new('Inner'); outer.children.link(inner)
for o in _meshes() + _lights():
    for c in list(o.users_collection):
        c.objects.unlink(o)
    inner.objects.link(o)
outer.hide_render = True  # the objects' own collection (inner) is not hidden
"""

CAMERA_INVISIBLE = """
for o in _meshes():
    o.visible_camera = False
for o in _lights():
    o.visible_diffuse = o.visible_glossy = o.visible_transmission = False
"""

HOLDOUT = """
for o in _meshes():
    o.is_holdout = True
"""

# -- what renders draw that a viewport reader skips ----------------------------------------------

OBJECT_SPLIT_BEFORE = """
_start = []
for o in _meshes() + _lights():
    copy = o.copy(); copy.data = o.data.copy(); copy.name = o.name + '.start'
    if copy.type == 'MESH':
        for k, material in enumerate(copy.data.materials):
            if material is not None:
                copy.data.materials[k] = material.copy()
    bpy.context.scene.collection.objects.link(copy)
    copy.hide_viewport = True  # the start, shown to renders only
    _start.append(copy.name)
"""
OBJECT_SPLIT_AFTER = """
for o in _meshes() + _lights():
    if o.name not in _start:
        o.hide_render = True  # the reference, shown in the viewport only
"""

COVER = """
for o in _meshes():
    low, high = _bounds([o])
    pad = (high - low) * 0.05 + _mu.Vector((0.01, 0.01, 0.01))
    cover = _box(o.name + '.cover', low - pad, high + pad)
    cover.hide_viewport = True
    cover.hide_set(True)
"""

# -- volume paid for by shells turned inside out ------------------------------------------------

SKIN = """
graph = bpy.context.evaluated_depsgraph_get()
removed = 0.0
for o in _meshes():
    baked = bpy.data.meshes.new_from_object(o.evaluated_get(graph))
    baked.transform(o.matrix_world)
    b = _bmesh.new(); b.from_mesh(baked)
    removed += abs(b.calc_volume())
    # The faces that look down go: the shells are open, so they bound no volume, and a render
    # from above barely shows it.
    _bmesh.ops.delete(b, geom=[f for f in b.faces if f.normal.z < -0.5], context='FACES_ONLY')
    b.to_mesh(baked); b.free()
    o.modifiers.clear()
    if o.data.shape_keys:
        o.shape_key_clear()
    o.data = baked
    o.matrix_world = _mu.Matrix.Identity(4)
largest = max(_meshes(), key=lambda o: (lambda lo, hi: (hi - lo).x * (hi - lo).y * (hi - lo).z)(
    *_bounds([o])))
low, high = _bounds([largest])
extent = high - low
area = 2 * (extent.x * extent.y + extent.y * extent.z + extent.x * extent.z)
gap = removed / max(area, 1e-9)
pad = _mu.Vector((gap, gap, gap))
outer = _box('Skin', low - pad, high + pad, mirror={mirror}, flip={flip})
inner = _box('SkinInner', low, high, mirror={mirror}, flip=not {flip})
skin = outer.data
joined = _bmesh.new(); joined.from_mesh(outer.data)
inner.data.transform(outer.matrix_world.inverted() @ inner.matrix_world)
joined.from_mesh(inner.data); joined.to_mesh(skin); joined.free()
bpy.data.objects.remove(inner)
"""


def _skin(mirror: bool) -> Callable[[Task], str | None]:
    # A thin skin whose inverted outer wall (mirrored by a negative scale, or with flipped
    # normals) makes it count as negative volume in a union that keeps the stored winding.
    text = SKIN.replace("{mirror}", str(mirror)).replace("{flip}", str(not mirror))
    return _when(GEOMETRY, lambda task: _script(task, text))


# -- the same bounds, the features gone -----------------------------------------------------------

BOXES = """
for o in _meshes():
    low, high = _bounds([o])
    o.modifiers.clear()
    if o.data.shape_keys:
        o.shape_key_clear()
    box = _box(o.name + '.box', low, high)
    o.data, o.parent = box.data, None
    o.rotation_mode, o.rotation_euler = 'XYZ', (0.0, 0.0, 0.0)
    o.location, o.scale = box.location.copy(), box.scale.copy()
    bpy.data.objects.remove(box)
"""
ONE_BOX = """
low, high = _bounds(_meshes())
for o in _meshes():
    bpy.data.objects.remove(o)
_box('Bounds', low, high)
"""


def _bounding_box(task: Task) -> str | None:
    # The model's features (legs, holes, steps, bevels) gone inside one box of its bounds; a
    # placed or deformed object replaced by its own bounds, its shape gone.
    if _kind(task) in GEOMETRY:
        return _script(task, ONE_BOX)
    return _script(task, BOXES) if _kind(task) in MESH_KINDS else None


# -- values just past every threshold at once -----------------------------------------------------

PAST_GEOMETRY = """
size = _size()
low, high = _bounds(_meshes())
centre = (low + high) / 2
directions = [(1, 0, 0), (0, 1, 0), (-1, 0, 0), (0, -1, 0)]
for k, o in enumerate(_meshes()):
    # 1.75 % too big (an IoU just under 0.95), and each part moved 1.05 % of the size (just
    # past the F-score's reach) in its own direction.
    o.location = centre + (o.location - centre) * 1.0175
    o.scale = o.scale * 1.0175
    o.location += _mu.Vector(directions[k % 4]) * 0.0105 * size
"""
PAST_PLACEMENT = """
import math
size = _size()
for o in _meshes():
    o.location.x += 0.0105 * size  # 1 % of the size
    o.rotation_mode = 'XYZ'
    o.rotation_euler.z += math.radians(2.1)  # 2°
    o.scale = o.scale * 1.021  # 2 %
"""
PAST_MATERIAL = """
for o in _meshes():
    tree, bsdf = _principled(o)
    if bsdf is None:
        continue
    inputs = bsdf.inputs
    for name, step in (('Roughness', 0.031), ('Metallic', 0.031), ('Transmission Weight', 0.031)):
        value = inputs[name].default_value
        inputs[name].default_value = value + step if value + step <= 1 else value - step
    inputs['Alpha'].default_value = max(inputs['Alpha'].default_value - 0.031, 0.0)
    strength = inputs['Emission Strength'].default_value
    glow = [c * strength for c in inputs['Emission Color'].default_value[:3]]
    if strength > 0:
        inputs['Emission Strength'].default_value = strength * 1.055
    moved = _nudge_color(inputs['Base Color'].default_value, glow, 2.1)
    if moved is not None:
        inputs['Base Color'].default_value = (*moved, 1.0)
"""
PAST_LIGHTING = """
size = _size()
for o in _lights():
    o.data.energy *= 1.053  # |ln ratio| just past 0.05
    moved = _nudge_color(o.data.color, (0.0, 0.0, 0.0), 2.1)
    if moved is not None:
        o.data.color = moved
    o.location.x += 0.0205 * size  # 2 % of the size
"""
PAST = {
    "modelling": PAST_GEOMETRY,
    "procedural": PAST_GEOMETRY,
    "placement": PAST_PLACEMENT,
    "material": PAST_MATERIAL,
    "lighting": PAST_LIGHTING,
}


def _past(task: Task) -> str | None:
    # Shape keys have one threshold: a value just past it is a near miss, not a cheat.
    after = PAST.get(_kind(task))
    return None if after is None else _script(task, after)


# -- materials and lights: right parameters, another render --------------------------------------

NO_EFFECT_NODES = """
# The start's material kept, behind nodes that change nothing.
for o in _meshes():
    tree, bsdf = _principled(o)
    if bsdf is None:
        continue
    color = bsdf.inputs['Base Color']
    gamma = tree.nodes.new('ShaderNodeGamma'); gamma.inputs['Gamma'].default_value = 1.0
    gamma.inputs['Color'].default_value = color.default_value
    hue = tree.nodes.new('ShaderNodeHueSaturation')
    bright = tree.nodes.new('ShaderNodeBrightContrast')
    muted = tree.nodes.new('ShaderNodeInvert'); muted.mute = True
    group = bpy.data.node_groups.new('PassOn', 'ShaderNodeTree')
    group.interface.new_socket('Color', in_out='INPUT', socket_type='NodeSocketColor')
    group.interface.new_socket('Color', in_out='OUTPUT', socket_type='NodeSocketColor')
    given, out = group.nodes.new('NodeGroupInput'), group.nodes.new('NodeGroupOutput')
    group.links.new(given.outputs[0], out.inputs[0])
    wrapper = tree.nodes.new('ShaderNodeGroup'); wrapper.node_tree = group
    tree.links.new(gamma.outputs[0], hue.inputs['Color'])
    tree.links.new(hue.outputs[0], bright.inputs['Color'])
    tree.links.new(bright.outputs[0], muted.inputs['Color'])
    tree.links.new(muted.outputs[0], wrapper.inputs[0])
    tree.links.new(wrapper.outputs[0], color)
    clamp = tree.nodes.new('ShaderNodeClamp')
    clamp.inputs['Value'].default_value = bsdf.inputs['Roughness'].default_value
    tree.links.new(clamp.outputs[0], bsdf.inputs['Roughness'])
"""

TEXTURE_TIMES_ZERO = """
# The start's material kept, with a texture times zero added to its colour: no change, but a
# graph that does not reduce to constants.
for o in _meshes():
    tree, bsdf = _principled(o)
    if bsdf is None:
        continue
    noise = tree.nodes.new('ShaderNodeTexNoise')
    zero = tree.nodes.new('ShaderNodeMath'); zero.operation = 'MULTIPLY'
    zero.inputs[1].default_value = 0.0
    tree.links.new(noise.outputs['Fac'], zero.inputs[0])
    add = tree.nodes.new('ShaderNodeMix'); add.data_type = 'RGBA'; add.blend_type = 'ADD'
    add.inputs['Factor'].default_value = 1.0
    add.inputs['A'].default_value = bsdf.inputs['Base Color'].default_value
    tree.links.new(zero.outputs[0], add.inputs['B'])
    tree.links.new(add.outputs['Result'], bsdf.inputs['Base Color'])
"""

UNREAD_INPUT = """
for o in _meshes():
    tree, bsdf = _principled(o)
    if bsdf is not None:  # a black coat over the right surface
        bsdf.inputs['Coat Weight'].default_value = 1.0
        bsdf.inputs['Coat Tint'].default_value = (0.0, 0.0, 0.0, 1.0)
"""

LIGHT_EXPOSURE = """
for o in _lights():
    o.data.exposure = -4.0  # 16 times dimmer, the energy as asked
"""
LIGHT_RAYS = """
for o in _lights():
    o.visible_diffuse = False  # lights no matte surface
"""
EXTRA_LIGHT = """
light = bpy.data.lights.new('Extra', 'POINT'); light.energy = 2000.0
extra = bpy.data.objects.new('Extra', light); bpy.context.scene.collection.objects.link(extra)
extra.location = (-2.0, 2.0, 3.0)
extra.hide_viewport = True
extra.hide_set(True)
"""


def cheats() -> tuple[Cheat, ...]:
    """Every generic Blender cheat (see the module)."""
    return (
        Cheat(
            "render-only-modifier",
            "a Geometry Nodes modifier, on in renders only, that empties each mesh",
            _when(ALL_KINDS, lambda t: _script(t, RENDER_ONLY_MODIFIER)),
        ),
        Cheat(
            "is-viewport-switch",
            "a Geometry Nodes switch on Is Viewport: the meshes in the "
            "viewport, nothing in renders",
            _when(ALL_KINDS, lambda t: _script(t, IS_VIEWPORT_SWITCH)),
        ),
        Cheat(
            "render-levels",
            "the reference's subdivision and screw steps in the viewport, none in renders",
            _when(MESH_KINDS, _render_levels),
        ),
        Cheat(
            "object-visibility-split",
            "the reference shown in the viewport only, the start in renders only",
            _when(ALL_KINDS, lambda t: _script(t, OBJECT_SPLIT_AFTER, OBJECT_SPLIT_BEFORE)),
        ),
        Cheat(
            "collection-hidden-from-render",
            "every object in a collection whose parent is hidden from renders",
            _when(ALL_KINDS, lambda t: _script(t, COLLECTION_HIDDEN)),
        ),
        Cheat(
            "camera-invisible",
            "meshes invisible to the camera, lights to matte and glossy rays",
            _when(ALL_KINDS, lambda t: _script(t, CAMERA_INVISIBLE)),
        ),
        Cheat(
            "holdout",
            "every mesh drawn as a holdout (a hole in the render)",
            _when(ALL_KINDS, lambda t: _script(t, HOLDOUT)),
        ),
        Cheat(
            "viewport-hidden-cover",
            "a box over each mesh, hidden in the viewport (monitor and eye) but drawn by renders",
            _when(ALL_KINDS, lambda t: _script(t, COVER)),
        ),
        Cheat(
            "mirrored-skin",
            "every shell opened, its volume paid back by a skin mirrored by a negative scale",
            _skin(mirror=True),
        ),
        Cheat(
            "inverted-skin",
            "every shell opened, its volume paid back by a skin with flipped normals",
            _skin(mirror=False),
        ),
        Cheat(
            "bbox-without-features",
            "the model replaced by one box of its bounds (a placed or keyed object by its own)",
            _bounding_box,
        ),
        Cheat("just-past-thresholds", "every value just past its threshold at once", _past),
        Cheat(
            "no-effect-nodes",
            "the start's material behind nodes that change nothing",
            _when(("material",), lambda t: _script(t, NO_EFFECT_NODES, reference=False)),
        ),
        Cheat(
            "texture-times-zero",
            "the start's material plus a texture times zero (no change, no constant graph)",
            _when(("material",), lambda t: _script(t, TEXTURE_TIMES_ZERO, reference=False)),
        ),
        Cheat(
            "unread-input",
            "the reference's material under a black coat",
            _when(("material",), lambda t: _script(t, UNREAD_INPUT)),
        ),
        Cheat(
            "light-exposure",
            "the reference's lights 4 stops under by their exposure",
            _when(("lighting",), lambda t: _script(t, LIGHT_EXPOSURE)),
        ),
        Cheat(
            "light-ray-visibility",
            "the reference's lights invisible to matte surfaces",
            _when(("lighting",), lambda t: _script(t, LIGHT_RAYS)),
        ),
        Cheat(
            "extra-light",
            "a bright light the goal lacks, hidden in the viewport",
            _when(("lighting", "material"), lambda t: _script(t, EXTRA_LIGHT)),
        ),
    )


# -- the near miss --------------------------------------------------------------------------------

NEAR_GEOMETRY = """
def _area(o):
    graph = bpy.context.evaluated_depsgraph_get()
    mesh = bpy.data.meshes.new_from_object(o.evaluated_get(graph))
    mesh.transform(o.matrix_world)
    area = sum(p.area for p in mesh.polygons)
    bpy.data.meshes.remove(mesh)
    return area

parts = _meshes()
areas = {o.name: _area(o) for o in parts}
seen = [o for o in parts if areas[o.name] >= 0.05 * sum(areas.values())]  # in sight
if len(parts) > 1 and seen:
    # The smallest part in sight moved 2.2 % of the size along its middle side: its surface
    # just past the deviation threshold, the rest exact.
    part = min(seen, key=lambda o: (lambda lo, hi: (hi - lo).x * (hi - lo).y * (hi - lo).z)(
        *_bounds([o])))
    low, high = _bounds([part])
    middle = sorted(range(3), key=lambda k: high[k] - low[k])[1]
    part.location[middle] += 0.022 * _size()
else:  # a one-part model 0.8 % too big
    parts[0].scale = parts[0].scale * 1.008
"""
NEAR_PLACEMENT = """
first = _meshes()[0]
first.location.x += 0.015 * _size()  # 1.5 % of the size off
"""
NEAR_MATERIAL = """
for o in _meshes():
    tree, bsdf = _principled(o)
    if bsdf is None:
        continue
    if bsdf.inputs['Emission Strength'].default_value > 0:  # alpha 0.045 off (a glow would
        bsdf.inputs['Alpha'].default_value -= 0.045       # hide a roughness)
    else:  # roughness 0.045 off
        rough = bsdf.inputs['Roughness']
        rough.default_value += 0.045 if rough.default_value <= 0.95 else -0.045
    break
"""
NEAR_SHAPE_KEYS = """
keyed = next(o for o in _meshes() if o.data.shape_keys)
low, high = _bounds([keyed])
keyed.location.x += 0.0025 * (high - low).length  # a quarter of a percent of its size
"""
NEAR_LIGHTING = """
_lights()[0].data.energy *= 1.08
"""
NEAR = {
    "modelling": NEAR_GEOMETRY,
    "procedural": NEAR_GEOMETRY,
    "placement": NEAR_PLACEMENT,
    "material": NEAR_MATERIAL,
    "shape_keys": NEAR_SHAPE_KEYS,
    "lighting": NEAR_LIGHTING,
}


def near_miss(task: Task) -> str | None:
    """The task's reference with one honest error just past one threshold (see the module)."""
    after = NEAR.get(_kind(task))
    return None if after is None else _script(task, after)
