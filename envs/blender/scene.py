"""A Blender scene as plain data, saved by an agent's session and read back by a trusted one.

Runs inside sandbox sessions only. The agent's session saves its scene as a ``.blend`` in its
workspace (:func:`save`); a session that runs no agent code loads those bytes with Python
auto-execution off, so no driver expression, text block or registered script of the file runs
(:func:`extract`), and returns the scene's state as numbers, strings and arrays (msgpack, never
pickle): objects with their world transforms and evaluated meshes, modifiers, materials, shape
keys and lights; and, when asked, Cycles renders from fixed cameras.

Units are Blender's: metres, radians in the data (degrees only in tool arguments), linear RGB.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

BLEND_NAME = "scene.blend"
MAX_TRIANGLES = 400_000  # over this the scene is refused, not measured: a verifier's budget
MAX_OBJECTS = 256
# Scalar modifier settings worth reporting (the rest of a modifier's RNA is UI state).
_MODIFIER_KINDS = ("INT", "FLOAT", "BOOLEAN", "ENUM")
_PRINCIPLED_INPUTS = {
    "base_color": "Base Color",
    "roughness": "Roughness",
    "metallic": "Metallic",
    "emission_color": "Emission Color",
    "emission_strength": "Emission Strength",
}


def save(bpy: Any, workspace: str) -> bytes:
    """Save the session's scene as an uncompressed copy in ``workspace``; return its bytes.

    The session's ``bpy.app.handlers`` are set aside while it saves: a script's handler (one
    that never returns, say) runs in the script's own steps, never in the environment's save."""
    path = os.path.join(workspace, BLEND_NAME)
    handlers = bpy.app.handlers
    kept = {
        name: list(value)
        for name in dir(handlers)
        if not name.startswith("_") and isinstance(value := getattr(handlers, name), list)
    }
    for name in kept:
        getattr(handlers, name).clear()
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False, check_existing=False)
    finally:
        for name, functions in kept.items():
            getattr(handlers, name).extend(functions)
    try:
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def load_trusted(bpy: Any, data: bytes, workspace: str) -> None:
    """Open ``.blend`` bytes with Python auto-execution off (no drivers, text blocks, scripts)."""
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    path = os.path.join(workspace, BLEND_NAME)
    with open(path, "wb") as f:
        f.write(data)
    try:
        bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=False)
    finally:
        os.unlink(path)


def _vector(value: Any) -> list[float]:
    return [float(v) for v in value]


def _modifier(modifier: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for prop in modifier.bl_rna.properties:
        if prop.identifier in ("name", "rna_type", "type") or prop.type not in _MODIFIER_KINDS:
            continue
        if getattr(prop, "is_array", False) and prop.array_length:
            continue
        value = getattr(modifier, prop.identifier)
        settings[prop.identifier] = value if isinstance(value, str) else float(value)
    return {"name": modifier.name, "type": modifier.type, "settings": settings}


def _material(material: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": material.name}
    node = None
    if material.use_nodes and material.node_tree is not None:
        node = next((n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if node is None:
        out["base_color"] = _vector(material.diffuse_color)[:3]
        out.update(roughness=float(material.roughness), metallic=float(material.metallic))
        out.update(emission_color=[0.0, 0.0, 0.0], emission_strength=0.0)
        return out
    for key, socket in _PRINCIPLED_INPUTS.items():
        value = node.inputs[socket].default_value
        out[key] = _vector(value)[:3] if key.endswith("color") else float(value)
    return out


def _light(light: Any) -> dict[str, Any]:
    out = {
        "type": light.type,
        "energy": float(light.energy),
        "color": _vector(light.color),
    }
    if light.type == "SPOT":
        out["spot_size"] = float(light.spot_size)
    if light.type in ("POINT", "SPOT"):
        out["radius"] = float(light.shadow_soft_size)
    return out


def evaluated_mesh(obj: Any, depsgraph: Any) -> tuple[np.ndarray, np.ndarray]:
    """``obj``'s evaluated, triangulated mesh: vertices (float64 (n, 3), m, world coordinates)
    and faces (int32 (m, 3))."""
    evaluated = obj.evaluated_get(depsgraph)
    data = evaluated.to_mesh()
    try:
        data.calc_loop_triangles()
        vertices = np.empty(len(data.vertices) * 3, dtype=np.float64)
        data.vertices.foreach_get("co", vertices)
        faces = np.empty(len(data.loop_triangles) * 3, dtype=np.int32)
        data.loop_triangles.foreach_get("vertices", faces)
    finally:
        evaluated.to_mesh_clear()
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    vertices = vertices.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    return vertices, faces.reshape(-1, 3)


def scene_state(bpy: Any) -> dict[str, Any]:
    """The scene as plain data: ``objects`` by name, each with ``type``, ``parent``, world
    ``location`` (m), ``rotation`` (unit quaternion w, x, y, z), ``scale``, ``modifiers``,
    ``materials`` (one dict per slot), ``shape_keys`` (name to value), ``light`` (lights only),
    ``vertices`` (float64 (n, 3), m, world) and ``faces`` (int32 (m, 3)) of the evaluated mesh."""
    scene = bpy.context.scene
    objects = list(scene.objects)
    if len(objects) > MAX_OBJECTS:
        raise ValueError(f"the scene has {len(objects)} objects; the limit is {MAX_OBJECTS}")
    depsgraph = bpy.context.evaluated_depsgraph_get()
    triangles = 0
    out: dict[str, Any] = {}
    for obj in objects:
        location, rotation, scale = obj.matrix_world.decompose()
        entry: dict[str, Any] = {
            "type": obj.type,
            "parent": obj.parent.name if obj.parent else None,
            "location": _vector(location),
            "rotation": _vector(rotation),
            "scale": _vector(scale),
            "modifiers": [_modifier(m) for m in obj.modifiers],
            "materials": [_material(s.material) for s in obj.material_slots if s.material],
        }
        if obj.type == "MESH":
            keys = obj.data.shape_keys
            entry["shape_keys"] = (
                {k.name: float(k.value) for k in keys.key_blocks[1:]} if keys else {}
            )
            vertices, faces = evaluated_mesh(obj, depsgraph)
            triangles += len(faces)
            if triangles > MAX_TRIANGLES:
                raise ValueError(
                    f"the scene's meshes have over {MAX_TRIANGLES:,} triangles; simplify it"
                )
            entry["vertices"], entry["faces"] = vertices, faces
        elif obj.type == "LIGHT":
            entry["light"] = _light(obj.data)
        out[obj.name] = entry
    return {"objects": out}


# -- Cycles renders from fixed cameras ------------------------------------------------------------


def _look_at(location: list[float], target: list[float]) -> tuple[float, float, float]:
    from mathutils import Vector

    direction = Vector(target) - Vector(location)
    return tuple(direction.to_track_quat("-Z", "Y").to_euler())


def render_views(
    bpy: Any, workspace: str, cameras: list[dict[str, Any]], size: int, samples: int
) -> np.ndarray:
    """Cycles (CPU, ``samples`` per pixel, seed 0, no denoising) renders of the scene from
    ``cameras`` (each ``location``, ``target``, ``ortho_scale`` in m). Returns uint8 RGB
    (V, size, size, 3). The scene's own cameras and world are replaced by fixed ones, so only
    the objects, materials and lights differ between two scenes' renders."""
    from PIL import Image

    scene = bpy.context.scene
    world = bpy.data.worlds.new("toolgym_world")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.05, 0.05, 0.05, 1)
    scene.world = world
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.seed = 0
    scene.cycles.use_denoising = False
    scene.cycles.use_adaptive_sampling = False
    scene.cycles.max_bounces = 4
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 1  # one thread: the same pixels whatever the machine
    scene.render.resolution_x = scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.view_settings.view_transform = "Standard"
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    images = []
    for k, view in enumerate(cameras):
        data = bpy.data.cameras.new(f"toolgym_view_{k}")
        data.type = "ORTHO"
        data.ortho_scale = float(view["ortho_scale"])
        data.clip_start, data.clip_end = 0.001, 10 * float(view["ortho_scale"]) + 100
        camera = bpy.data.objects.new(f"toolgym_view_{k}", data)
        scene.collection.objects.link(camera)
        camera.location = view["location"]
        camera.rotation_euler = _look_at(view["location"], view["target"])
        scene.camera = camera
        path = os.path.join(workspace, f".view-{k}.png")
        scene.render.filepath = path
        bpy.ops.render.render(write_still=True)
        with Image.open(path) as image:
            images.append(np.asarray(image.convert("RGB")))
        os.unlink(path)
    return np.stack(images)


def fixed_cameras(
    center: list[float], half_width: float, directions: list[list[float]]
) -> list[dict[str, Any]]:
    """Orthographic views looking at ``center`` from ``directions`` (towards the camera), each
    showing a square ``2 · half_width`` m wide (the framing of the mesh renderer's views)."""
    out = []
    for direction in directions:
        norm = math.sqrt(sum(d * d for d in direction))
        location = [c + d / norm * half_width * 4 for c, d in zip(center, direction, strict=True)]
        out.append({"location": location, "target": list(center), "ortho_scale": 2 * half_width})
    return out
