"""A Blender scene as plain data, saved by an agent's session and read back by a trusted one.

Runs inside sandbox sessions only. The agent's session saves its scene as a ``.blend`` in its
workspace (:func:`save`); a session that runs no agent code loads those bytes with Python
auto-execution off, so no driver expression, text block or registered script of the file runs
(:func:`load_trusted`), and returns the scene's state as numbers, strings and arrays (msgpack,
never pickle): objects with their world transforms and evaluated meshes, modifiers, materials,
shape keys and lights; and, when asked, Cycles renders from fixed cameras.

The state is the scene as a final render draws it (:mod:`toolgym.envs.blender.evaluation`):
the render's depsgraph (render visibility of objects and collections, modifiers shown in
renders, render levels), an object shown when the render draws it to the camera, its triangles
wound as the renderer winds them (an object mirrored by a negative scale has its faces turned
back, as Blender turns them), its materials those on its faces, area by area.

Units are Blender's: metres, radians in the data (degrees only in tool arguments), linear RGB.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from toolgym.envs.blender import evaluation
from toolgym.envs.blender.budget import GEOMETRY_TYPES, MAX_TRIANGLES, check_bound, over_budget
from toolgym.envs.blender.materials import (
    SURFACE_KEYS,
    Defaults,
    Irreducible,
    light_tint,
    material_surface,
)

__all__ = ["MAX_TRIANGLES", "SURFACE_KEYS", "Irreducible", "check_bound", "scene_state"]

BLEND_NAME = "scene.blend"
MAX_OBJECTS = 256
# Scalar modifier settings worth reporting (the rest of a modifier's RNA is UI state).
_MODIFIER_KINDS = ("INT", "FLOAT", "BOOLEAN", "ENUM")
# A surface this transparent (alpha) renders nothing: the object is not shown.
CLEAR_ALPHA = 0.05


def save(bpy: Any, workspace: str) -> bytes:
    """Save the session's scene as an uncompressed copy in ``workspace``; return its bytes.

    Raises the budget's ``ValueError`` for a scene far over it (see :func:`check_bound`). The
    session's ``bpy.app.handlers`` are set aside while it saves: a script's handler (one
    that never returns, say) runs in the script's own steps, never in the environment's save."""
    # Saving can build a Geometry Nodes tree's output: a scene far over the triangle budget
    # is refused first, with the budget's message.
    view_layer = bpy.context.view_layer
    objects = list(bpy.context.scene.objects)
    renders = renderable(objects, view_layer)
    check_bound(
        objects, {o.name: renders[o.name] or o.visible_get(view_layer=view_layer) for o in objects}
    )
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


def _setting(value: Any) -> Any:
    """A modifier setting as plain data: enum flags as a sorted list, numbers as floats."""
    if isinstance(value, str):
        return value
    if isinstance(value, set | frozenset):
        return sorted(str(v) for v in value)
    return float(value)


def _modifier(modifier: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for prop in modifier.bl_rna.properties:
        if prop.identifier in ("name", "rna_type", "type") or prop.type not in _MODIFIER_KINDS:
            continue
        if getattr(prop, "is_array", False) and prop.array_length:
            continue
        settings[prop.identifier] = _setting(getattr(modifier, prop.identifier))
    return {"name": modifier.name, "type": modifier.type, "settings": settings}


def canonical_order(faces: np.ndarray) -> np.ndarray:
    """The order :func:`canonical_faces` puts ``faces`` (int (m, 3)) in."""
    rolled = _rolled(faces)
    return np.lexsort(rolled.T[::-1]) if len(rolled) else np.zeros(0, dtype=np.int64)


def _rolled(faces: np.ndarray) -> np.ndarray:
    faces = np.asarray(faces, dtype=np.int32).reshape(-1, 3)
    if not len(faces):
        return faces
    first = np.argmin(faces, axis=1)
    rows = np.arange(len(faces))[:, None]
    return faces[rows, (first[:, None] + np.arange(3)) % 3]


def canonical_faces(faces: np.ndarray) -> np.ndarray:
    """Triangles in one order whatever order Blender made them in: each starts at its smallest
    vertex index (winding kept), rows sorted. Equal meshes then give equal arrays and pixels."""
    rolled = _rolled(faces)
    return np.ascontiguousarray(rolled[canonical_order(rolled)])


def _triangles(evaluated: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An evaluated object's mesh as flat arrays: local vertex coordinates (float64, 3 per
    vertex), triangle corners (int32, 3 per triangle) and each triangle's material index
    (int32); the temporary mesh is freed. Geometry that does not mesh reads as none."""
    try:
        data = evaluated.to_mesh()
    except RuntimeError:  # nothing to mesh (an empty curve)
        data = None
    if data is None:
        return np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    try:
        data.calc_loop_triangles()
        vertices = np.empty(len(data.vertices) * 3, dtype=np.float64)
        data.vertices.foreach_get("co", vertices)
        faces = np.empty(len(data.loop_triangles) * 3, dtype=np.int32)
        data.loop_triangles.foreach_get("vertices", faces)
        materials = np.empty(len(data.loop_triangles), dtype=np.int32)
        data.loop_triangles.foreach_get("material_index", materials)
    finally:
        evaluated.to_mesh_clear()
    return vertices, faces, materials


def evaluated_mesh(obj: Any, depsgraph: Any) -> tuple[np.ndarray, np.ndarray]:
    """``obj``'s triangulated mesh as ``depsgraph`` evaluates it: vertices (float64 (n, 3), m,
    world coordinates) and faces (int32 (m, 3), in :func:`canonical_faces` order, wound as
    rendered)."""
    evaluated = obj.evaluated_get(depsgraph)
    vertices, faces, _materials = world_triangles(evaluated, evaluated.matrix_world)
    return vertices, faces


# -- what a final render draws --------------------------------------------------------------------


def _layer_flags(view_layer: Any) -> tuple[set[str], dict[str, str]]:
    """From ``view_layer``'s collections: the objects a render includes (in a collection that
    is neither excluded nor hidden from renders, all the way up), and those drawn as holdouts
    or to indirect light only (why)."""
    included: set[str] = set()
    held: dict[str, str] = {}

    def walk(layer: Any, why: str | None) -> None:
        if layer.exclude or layer.collection.hide_render:
            return
        why = why or ("a holdout" if layer.holdout else None)
        why = why or ("indirect light only" if layer.indirect_only else None)
        for obj in layer.collection.objects:
            included.add(obj.name)
            if why:
                held.setdefault(obj.name, f"its collection renders it as {why}")
        for child in layer.children:
            walk(child, why)

    walk(view_layer.layer_collection, None)
    return included, held


def renderable(objects: Any, view_layer: Any) -> dict[str, bool]:
    """Whether a final render includes each of ``objects``, from its flags alone (before
    anything is evaluated): not hidden from renders, in a collection that is neither excluded
    from the view layer nor hidden from renders, up to the scene's."""
    included, _held = _layer_flags(view_layer)
    return {o.name: o.name in included and not o.hide_render for o in objects}


def _camera_hidden(obj: Any, held: dict[str, str]) -> str | None:
    """Why a rendered object does not show to the camera (``None``: it shows)."""
    if not getattr(obj, "visible_camera", True):
        return "invisible to the camera"
    if getattr(obj, "is_holdout", False):
        return "a holdout"
    if getattr(obj, "is_shadow_catcher", False):
        return "a shadow catcher"
    return held.get(obj.original.name if obj.is_evaluated else obj.name)


def world_triangles(evaluated: Any, matrix: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An evaluated object's triangles in world coordinates as the renderer draws them:
    vertices (float64 (n, 3), m), faces (int32 (m, 3), in :func:`canonical_faces` order; wound
    back where ``matrix`` mirrors, as Blender renders a negative scale) and each face's material
    index (int32 (m,), in the same order)."""
    vertices, faces, materials = _triangles(evaluated)
    matrix = np.array(matrix, dtype=np.float64)
    vertices = vertices.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    faces = faces.reshape(-1, 3)
    if np.linalg.det(matrix[:3, :3]) < 0:
        faces = faces[:, ::-1]
    order = canonical_order(faces)
    return vertices, _rolled(faces)[order], materials[order]


def _shares(vertices: np.ndarray, faces: np.ndarray, indices: np.ndarray, slots: int) -> list:
    """Each material slot's share of the rendered surface's area (a face count where the
    surface has no area)."""
    if not len(faces) or not slots:
        return [1.0] * slots
    corners = vertices[faces]
    areas = np.linalg.norm(
        np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1
    )
    weights = areas if areas.sum() > 0 else np.ones(len(faces))
    found = np.bincount(np.clip(indices, 0, slots - 1), weights=weights, minlength=slots)
    return [float(v) for v in found / found.sum()]


def _materials(
    evaluated: Any, override: Any, shares: list[float], defaults: Defaults
) -> list[dict[str, Any]]:
    """The materials an object renders, each with ``share`` (of its surface's area): its
    slots' in order (empty slots left out), or the view layer's override on every face."""
    if override is not None:
        return [material_surface(override, defaults) | {"share": 1.0}]
    slots = list(evaluated.material_slots)
    return [
        material_surface(slot.material, defaults) | {"share": share}
        for slot, share in zip(slots, shares or [1.0] * len(slots), strict=True)
        if slot.material
    ]


# Light settings that Cycles does not read (EEVEE's shadows, the editor), left out of the
# settings compared; the rest of a light's scalar settings are compared as they are.
_LIGHT_UNREAD = frozenset(
    {
        "name",
        "type",
        "energy",
        "color",
        "exposure",
        "use_nodes",
        "use_fake_user",
        "use_extra_user",
        "is_runtime_data",
        "tag",
        "show_cone",
        "use_custom_distance",
        "cutoff_distance",
        "shadow_buffer_clip_start",
        "shadow_filter_radius",
        "shadow_maximum_resolution",
        "use_shadow_jitter",
        "shadow_jitter_overblur",
        "use_absolute_resolution",
        "shadow_cascade_max_distance",
        "shadow_cascade_count",
        "shadow_cascade_exponent",
        "shadow_cascade_fade",
    }
)
_RAYS = ("visible_camera", "visible_diffuse", "visible_glossy", "visible_transmission",
         "visible_volume_scatter", "visible_shadow")  # fmt: skip


def _light(light: Any, obj: Any, defaults: Defaults) -> dict[str, Any]:
    """A light as it renders: ``type``, ``energy`` (W; times ``2 ** exposure``), ``color``
    (linear RGB), ``exposure``, ``tint`` (what its node tree does to its colour, see
    :func:`light_tint`), and ``settings``: its other scalar settings that Cycles reads and its
    object's ray visibility, by name."""
    out: dict[str, Any] = {
        "type": light.type,
        "energy": float(light.energy) * 2.0 ** float(getattr(light, "exposure", 0.0)),
        "color": _vector(light.color),
        "exposure": float(getattr(light, "exposure", 0.0)),
    }
    settings: dict[str, Any] = {}
    for struct, prefix in ((light, ""), (getattr(light, "cycles", None), "cycles.")):
        if struct is None:
            continue
        for prop in struct.bl_rna.properties:
            name = prop.identifier
            if prop.is_readonly or prop.type not in _MODIFIER_KINDS or name in _LIGHT_UNREAD:
                continue
            if getattr(prop, "is_array", False) and prop.array_length:
                continue
            settings[prefix + name] = _setting(getattr(struct, name))
    for name in _RAYS:
        settings[name] = float(getattr(obj, name, True))
    out["settings"] = settings
    if light.type == "SPOT":
        out["spot_size"] = float(light.spot_size)
    if light.type in ("POINT", "SPOT"):
        out["radius"] = float(light.shadow_soft_size)
    return out | light_tint(light, defaults)


def scene_state(bpy: Any) -> dict[str, Any]:
    """The scene as a final render draws it, as plain data: ``objects`` by name, each with
    ``type``, ``parent``, ``shown`` (a render draws it to the camera) and ``hidden`` (why not,
    when not), world ``location`` (m), ``rotation`` (unit quaternion w, x, y, z), ``scale``,
    ``modifiers``, ``materials`` (one dict per slot with its ``share`` of the surface, see
    :func:`toolgym.envs.blender.materials.material_surface`), ``shape_keys`` (name to value),
    ``light`` (lights only), and for objects with geometry ``vertices`` (float64 (n, 3), m,
    world) and ``faces`` (int32 (m, 3), wound as rendered) of the render-evaluated mesh (empty
    for hidden objects; ``unread`` says why for geometry that cannot be meshed). Meshes that
    shown objects instance are objects of their own (``instanced``).

    Raises ``ValueError`` with the budget's message for a scene over :data:`MAX_TRIANGLES`
    triangles, before evaluating it when its settings already say so."""
    scene, view_layer = bpy.context.scene, bpy.context.view_layer
    objects = sorted(scene.objects, key=lambda o: o.name)
    if len(objects) > MAX_OBJECTS:
        raise ValueError(f"the scene has {len(objects)} objects; the limit is {MAX_OBJECTS}")
    check_bound(objects, renderable(objects, view_layer))
    defaults = Defaults(bpy)
    try:
        return evaluation.evaluate(bpy, lambda depsgraph: _state(depsgraph, objects, defaults))
    finally:
        defaults.close()


class _Budget:
    def __init__(self) -> None:
        self.triangles = 0

    def spend(self, faces: np.ndarray) -> None:
        self.triangles += len(faces)
        if self.triangles > MAX_TRIANGLES:
            raise over_budget()


def _state(depsgraph: Any, objects: list[Any], defaults: Defaults) -> dict[str, Any]:
    view_layer = depsgraph.view_layer
    override = view_layer.material_override
    _included, held = _layer_flags(view_layer)
    budget = _Budget()
    rendered: dict[str, Any] = {}
    found: list[tuple[str, dict[str, Any]]] = []
    counts: dict[str, int] = {}
    for instance in depsgraph.object_instances:
        if not instance.is_instance:
            if instance.show_self:
                rendered[instance.object.original.name] = instance.object
            continue
        entry = _instance(instance, held, budget)
        if entry is None:
            continue
        label = f"{entry['parent']}/{instance.object.name}"
        counts[label] = counts.get(label, 0) + 1
        found.append((f"{label}#{counts[label]}", entry))
        if len(found) > MAX_OBJECTS:
            raise ValueError(
                f"the scene instances over {MAX_OBJECTS} meshes; the limit is {MAX_OBJECTS}"
            )
    out: dict[str, Any] = {}
    for obj in objects:
        evaluated = rendered.get(obj.name)
        location, rotation, scale = (evaluated or obj).matrix_world.decompose()
        entry: dict[str, Any] = {
            "type": obj.type,
            "parent": obj.parent.name if obj.parent else None,
            "location": _vector(location),
            "rotation": _vector(rotation),
            "scale": _vector(scale),
            "modifiers": [_modifier(m) for m in obj.modifiers],
            "materials": [],
        }
        hidden = "hidden from renders" if evaluated is None else None
        if obj.type in GEOMETRY_TYPES or (evaluated is not None and evaluated.type == "MESH"):
            vertices, faces = np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
            shares: list[float] = []
            if evaluated is not None:
                hidden = _camera_hidden(evaluated, held)
                vertices, faces, indices = world_triangles(evaluated, evaluated.matrix_world)
                shares = _shares(vertices, faces, indices, len(evaluated.material_slots))
            materials = _materials(evaluated or obj, override, shares, defaults)
            if hidden is None and faces.size and _clear(materials):
                hidden = "transparent: its materials render nothing"
            if hidden is not None:
                vertices, faces = np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int32)
            budget.spend(faces)
            keys = obj.data.shape_keys if obj.type == "MESH" else None
            entry |= {
                "materials": materials,
                "shape_keys": {k.name: float(k.value) for k in keys.key_blocks[1:]} if keys else {},
                "vertices": vertices,
                "faces": faces,
                "geometry": True,
            }
        elif obj.type in ("CURVES", "POINTCLOUD", "VOLUME", "GREASEPENCIL") and evaluated:
            entry["unread"] = f"a {obj.type.lower()} object, whose geometry is not measured"
        elif obj.type == "LIGHT":
            entry["light"] = _light((evaluated or obj).data, evaluated or obj, defaults)
        entry["shown"] = hidden is None
        if hidden is not None:
            entry["hidden"] = hidden
        out[obj.name] = entry
    out |= dict(found)
    return {"objects": out}


def _clear(materials: list[dict[str, Any]]) -> bool:
    """Whether every material on an object's faces reduces to a surface that renders nothing."""
    used = [m for m in materials if m.get("share", 1.0) > 0]
    return bool(used) and all("alpha" in m and m["alpha"] < CLEAR_ALPHA for m in used)


def _instance(instance: Any, held: dict[str, str], budget: _Budget) -> dict[str, Any] | None:
    """A mesh a shown object instances (a collection instance, geometry-node or particle
    instances), as an object of its own in world coordinates: geometry the render draws though
    no object of the scene holds it; ``None`` for what is not a mesh or not seen."""
    shown = instance.object
    if shown.type not in GEOMETRY_TYPES or instance.parent is None:
        return None
    if _camera_hidden(shown, held) is not None:
        return None
    vertices, faces, _materials = world_triangles(shown, instance.matrix_world)
    budget.spend(faces)
    location, rotation, scale = instance.matrix_world.decompose()
    return {
        "type": "MESH",
        "parent": instance.parent.original.name,
        "shown": True,
        "location": _vector(location),
        "rotation": _vector(rotation),
        "scale": _vector(scale),
        "modifiers": [],
        "materials": [],
        "shape_keys": {},
        "vertices": vertices,
        "faces": faces,
        "instanced": True,
        "geometry": True,
    }


# -- Cycles renders from fixed cameras ------------------------------------------------------------


def _look_at(location: list[float], target: list[float]) -> tuple[float, float, float]:
    from mathutils import Vector

    direction = Vector(target) - Vector(location)
    return tuple(direction.to_track_quat("-Z", "Y").to_euler())


def _add_grid(bpy: Any, scene: Any, grid: dict[str, Any]) -> None:
    """The ground grid (``vertices``, ``faces``), drawn as dark lines that cast no shadow."""
    mesh = bpy.data.meshes.new("toolgym_grid")
    faces = np.asarray(grid["faces"]).tolist()
    mesh.from_pydata(np.asarray(grid["vertices"], dtype=np.float64).tolist(), [], faces)
    material = bpy.data.materials.new("toolgym_grid")
    tree = material.node_tree
    if tree is None:
        material.use_nodes = True
        tree = material.node_tree
    bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
    bsdf.inputs["Base Color"].default_value = (0.02, 0.02, 0.02, 1.0)
    bsdf.inputs["Roughness"].default_value = 1.0
    mesh.materials.append(material)
    lines = bpy.data.objects.new("toolgym_grid", mesh)
    lines.visible_shadow = False
    scene.collection.objects.link(lines)


def render_views(
    bpy: Any,
    workspace: str,
    cameras: list[dict[str, Any]],
    size: int,
    samples: int,
    grid: dict[str, Any] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Cycles (CPU, ``samples`` per pixel, ``seed``, no denoising) renders of the scene from
    ``cameras`` (each ``location``, ``target``, ``ortho_scale`` in m), with the ground ``grid``
    (``vertices``, ``faces``) when given. Returns uint8 RGB
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
    scene.cycles.seed = seed
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
    if grid is not None:
        _add_grid(bpy, scene, grid)
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
