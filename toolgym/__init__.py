"""toolgym: Gymnasium environments in which agents operate professional tools by writing scripts.

``import toolgym`` registers the environments: ``gym.make("toolgym/CadQuery-v0", ...)``, and
their numeric faces ``toolgym/CadQuery-Std-v0`` etc. (tool mode under
``toolgym.envs.wrappers.standard.StandardSpaces``). A client that only takes an id writes
``"toolgym:toolgym/CadQuery-Std-v0"``: Gymnasium imports ``toolgym`` first.
"""

from gymnasium.envs.registration import register, registry

from toolgym._version import __version__

ENVIRONMENTS = {
    "toolgym/CadQuery-v0": "toolgym.envs.cadquery.env:CadQueryEnv",
    "toolgym/Blender-v0": "toolgym.envs.blender.env:BlenderEnv",
    "toolgym/GameScene-v0": "toolgym.envs.scene.env:GameSceneEnv",
}

#: Numeric ids: MultiDiscrete tool calls and token-id texts, for RL libraries (see StandardSpaces).
STANDARD_ENVIRONMENTS = {
    "toolgym/CadQuery-Std-v0": "toolgym/CadQuery-v0",
    "toolgym/Blender-Std-v0": "toolgym/Blender-v0",
    "toolgym/GameScene-Std-v0": "toolgym/GameScene-v0",
}

for _env_id, _entry_point in ENVIRONMENTS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, disable_env_checker=False)
for _env_id, _inner in STANDARD_ENVIRONMENTS.items():
    if _env_id not in registry:
        register(
            id=_env_id, entry_point="toolgym.envs.wrappers.standard:standard_env",
            kwargs={"env_id": _inner}, disable_env_checker=False,
        )  # fmt: skip


def load_environment(**kwargs: object) -> object:
    """A suite as a Prime Intellect ``verifiers`` environment: what ``vf.load_environment(
    "toolgym", suite=...)`` and ``vf-eval toolgym`` call (``toolgym.agents.verifiers_env``)."""
    from toolgym.agents.verifiers_env import load_environment as load

    return load(**kwargs)  # type: ignore[arg-type]


__all__ = ["ENVIRONMENTS", "STANDARD_ENVIRONMENTS", "__version__", "load_environment"]
