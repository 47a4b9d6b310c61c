"""Blender through its ``bpy`` module, headless: ``toolgym/Blender-v0``."""

from toolgym.envs.registration import DomainCard

CARD = DomainCard(
    package=__name__,
    name="blender",
    env_id="toolgym/Blender-v0",
    env="env:BlenderEnv",
    backend="backend:BlenderBackend",
    distributions=("bpy",),
)
