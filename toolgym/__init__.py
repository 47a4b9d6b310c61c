"""toolgym: Gymnasium environments in which agents operate professional tools by writing scripts.

``import toolgym`` registers the environments: ``gym.make("toolgym/CadQuery-v0", ...)``.
"""

from gymnasium.envs.registration import register, registry

from toolgym._version import __version__

ENVIRONMENTS = {
    "toolgym/CadQuery-v0": "toolgym.envs.cadquery.env:CadQueryEnv",
    "toolgym/Blender-v0": "toolgym.envs.blender.env:BlenderEnv",
    "toolgym/GameScene-v0": "toolgym.envs.scene.env:GameSceneEnv",
}

for _env_id, _entry_point in ENVIRONMENTS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, disable_env_checker=False)

__all__ = ["ENVIRONMENTS", "__version__"]
