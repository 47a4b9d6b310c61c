"""Game scenes on Panda3D with Bullet physics: ``toolgym/GameScene-v0``."""

from toolgym.envs.registration import DomainCard

CARD = DomainCard(
    package=__name__,
    name="scene",
    env_id="toolgym/GameScene-v0",
    env="env:GameSceneEnv",
    backend="backend:SceneBackend",
    distributions=("panda3d", "panda3d-gltf"),
)
