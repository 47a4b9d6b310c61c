"""The scene as a final render evaluates it: runs in trusted sessions only.

Blender evaluates a scene twice over: for the viewport (``evaluated_depsgraph_get``) and for a
final render, and the two differ wherever a setting has a viewport and a render side: an
object's or a collection's ``hide_render`` and ``hide_viewport``, a modifier's ``show_render``
and ``show_viewport``, a Subdivision or Multiresolution modifier's ``render_levels``, a Screw's
``render_steps``, a curve's render resolution, particles' render amounts, Simplify's render
settings, a Geometry Nodes "Is Viewport" node. What the verifier scores is what the renderer
draws, so :func:`evaluate` reads the depsgraph a final render builds: it renders the scene with
a render engine of ours whose only work is to hand that depsgraph to the reader (a few ms; no
pixel is drawn). The Cycles views are renders of the same scene, so they show the same state.

Before anything is read, :func:`prepare` makes what forms the image the same for every scene
(the goal's and the agent's), so only objects, materials and lights tell two renders apart: one
view layer, rendered; no compositor, sequencer, border, pixel aspect, motion blur, Freestyle,
background set or world override; the colour management and Cycles' own settings at their
defaults (the render sets its camera, samples, world and view transform after). Settings that
shape geometry (Simplify, the frame) are the scene's own, for the state and the renders alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ENGINE = "TOOLGYM_EVALUATE"
# Scalar kinds of RNA property reset to their defaults.
_SCALARS = ("BOOLEAN", "INT", "FLOAT", "ENUM")


def reset(struct: Any, keep: tuple[str, ...] = ()) -> None:
    """Set every writable scalar property of an RNA struct to its default (but ``keep``)."""
    for prop in struct.bl_rna.properties:
        name = prop.identifier
        if prop.is_readonly or prop.type not in _SCALARS or name in keep or name == "name":
            continue
        try:
            if getattr(prop, "is_array", False) and prop.array_length:
                setattr(struct, name, prop.default_array)
            elif prop.type == "ENUM" and getattr(prop, "is_enum_flag", False):
                setattr(struct, name, set(prop.default_flag))
            else:
                setattr(struct, name, prop.default)
        except (AttributeError, TypeError, ValueError):
            continue  # a property whose default is not settable here (a context-bound enum)


def prepare(bpy: Any) -> None:
    """Make what forms the image (not what it shows) the same for every scene; see the module."""
    scene = bpy.context.scene
    keep = bpy.context.view_layer
    for layer in list(scene.view_layers):
        if layer != keep:
            scene.view_layers.remove(layer)
    keep.use = True
    for name in ("use_solid", "use_sky", "use_strand", "use_volumes", "use_motion_blur"):
        setattr(keep, name, True)
    keep.use_freestyle = False
    keep.samples = 0
    keep.world_override = None
    scene.background_set = None
    render = scene.render
    render.use_compositing = render.use_sequencer = False
    render.use_border = render.use_crop_to_border = False
    render.pixel_aspect_x = render.pixel_aspect_y = 1.0
    render.use_motion_blur = render.use_freestyle = render.use_multiview = False
    render.film_transparent = False
    render.use_single_layer = True
    render.dither_intensity = 0.0  # no noise added to the pixels
    reset(scene.cycles)
    reset(scene.cycles_curves)
    reset(scene.view_settings)
    scene.view_settings.look = "None"
    scene.display_settings.display_device = "sRGB"


def evaluate[T](bpy: Any, read: Callable[[Any], T]) -> T:
    """``read(depsgraph)`` on the depsgraph a final render of the scene builds (evaluated for
    rendering: render visibility, render-side modifier settings). Raises ``ValueError`` when
    Blender cannot render the scene, and whatever ``read`` raises."""
    got: dict[str, Any] = {}

    class Evaluate(bpy.types.RenderEngine):
        bl_idname = ENGINE
        bl_label = "toolgym evaluation"
        bl_use_postprocess = False

        def render(self, depsgraph: Any) -> None:
            try:
                got["value"] = read(depsgraph)
            except BaseException as exc:  # re-raised outside the render
                got["error"] = exc

    render = bpy.context.scene.render
    engine = render.engine
    size = (render.resolution_x, render.resolution_y, render.resolution_percentage)
    bpy.utils.register_class(Evaluate)
    try:
        render.engine = ENGINE
        render.resolution_x = render.resolution_y = 4  # no pixel is drawn: the smallest buffer
        render.resolution_percentage = 100
        bpy.ops.render.render()
    except RuntimeError as exc:
        raise ValueError(f"the scene cannot be rendered: {str(exc).strip()}") from None
    finally:
        render.engine = engine
        render.resolution_x, render.resolution_y, render.resolution_percentage = size
        bpy.utils.unregister_class(Evaluate)
    if "error" in got:
        raise got["error"]
    if "value" not in got:
        raise ValueError("the scene cannot be rendered: Blender rendered no view layer")
    return got["value"]
