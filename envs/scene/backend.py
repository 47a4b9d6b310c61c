"""The game-scene runtime (Panda3D) inside the sandbox: a scene graph and offscreen renders."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolgym.envs.sandbox.backend import Backend, Namespace, Request


class SceneBackend(Backend):
    name = "scene"
    distributions = ("panda3d", "panda3d-gltf")

    def warm_up(self) -> None:
        import panda3d.bullet
        import panda3d.core  # noqa: F401

        import toolgym.renderers.panda_offscreen  # noqa: F401

    def session_globals(self) -> Namespace:
        import panda3d.core as core

        namespace = super().session_globals()
        namespace.update(core=core, scene=core.NodePath("scene"))
        return namespace

    def requests(self) -> dict[str, Request]:
        return {"render": render}


def render(namespace: Namespace, args: dict[str, Any]) -> np.ndarray:
    """Render the session's ``scene`` node offscreen. Args: ``width``, ``height`` (pixels).

    Returns an RGB ``uint8`` array of shape (height, width, 3).
    """
    from toolgym.renderers.panda_offscreen import OffscreenRenderer

    renderer = namespace.get("__renderer__")
    size = (int(args.get("width", 128)), int(args.get("height", 128)))
    if renderer is None or (renderer.width, renderer.height) != size:
        renderer = namespace["__renderer__"] = OffscreenRenderer(*size)
    return renderer.render(namespace["scene"])
