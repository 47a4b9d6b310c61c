"""Blender's tool registry, whole: the object, modifier, material, shape-key and light tools
(``base_tools``), the node graphs (``material_tools``), and the mirror, aim and light settings
(``scene_tools``), each registered where it is defined; importing this module gathers them."""

from __future__ import annotations

from toolgym.envs.blender import material_tools, scene_tools
from toolgym.envs.blender.base_tools import Tools, registry

__all__ = ["Tools", "material_tools", "registry", "scene_tools"]
