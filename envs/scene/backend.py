"""The game-scene runtime (Panda3D + Bullet) inside the sandbox.

Scripts see ``world`` (a :class:`~toolgym.envs.scene.runtime.World`), ``scene`` (its root
``NodePath``), ``core`` (``panda3d.core``), ``bullet`` (``panda3d.bullet``), ``tools`` (the tool
registry's functions, ``tools.spawn(world, "crate", ...)``) and ``SceneError``.

Requests: ``render`` (offscreen RGB of the scene graph), ``load`` (replace the world by one built
from a description: the task's level), ``describe`` (the world's description, plain data),
``tool`` (one tool call on ``world``), ``simulate`` (build a fresh world from a description, never
from the session's objects, and simulate it), ``host`` and ``resume`` (one play of a logic task on
a world built from a description: the verifier's trusted sessions, which never run agent code),
``listen`` and ``react`` (the agent's logic session answers the host's stops with actions; see
``toolgym.envs.scene.logic``).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from toolgym.envs.sandbox.backend import Backend, Namespace, Request


class SceneBackend(Backend):
    name = "scene"

    def warm_up(self) -> None:
        import panda3d.bullet
        import panda3d.core  # noqa: F401

        import toolgym.envs.scene.logic
        import toolgym.envs.scene.runtime
        import toolgym.envs.scene.sampling
        import toolgym.envs.scene.tools
        import toolgym.renderers.panda_offscreen  # noqa: F401

    def session_globals(self) -> Namespace:
        import panda3d.bullet as bullet
        import panda3d.core as core

        from toolgym.envs.scene.runtime import SceneError, World
        from toolgym.envs.scene.tools import Tools

        namespace = super().session_globals()
        world = World()
        namespace.update(
            core=core, bullet=bullet, World=World, SceneError=SceneError, tools=Tools()
        )
        _set_world(namespace, world)
        return namespace

    def requests(self) -> dict[str, Request]:
        return {
            "render": render,
            "load": load,
            "describe": describe,
            "tool": apply_tool,
            "simulate": simulate,
            "host": host,
            "resume": resume,
            "listen": listen,
            "react": react,
        }


def _set_world(namespace: Namespace, world: Any) -> None:
    namespace.update(world=world, scene=world.root, result=world)


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


def load(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Replace the session's world by one built from ``args["description"]``; every object is
    marked as part of the level. ``frozen``: the world's own ``run()`` does nothing."""
    from toolgym.envs.scene.runtime import World

    world = World.build(args["description"])
    for obj in world.objects.values():
        obj.level = True
    world.frozen = bool(args.get("frozen", False))
    _set_world(namespace, world)
    return {"objects": len(world.objects)}


def _world(namespace: Namespace) -> Any:
    from toolgym.envs.scene.runtime import SceneError, World

    world = namespace.get("world")
    if not isinstance(world, World):
        raise SceneError(f"`world` must stay a World, got {type(world).__name__}")
    return world


def describe(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """The session world's description (see ``World.describe``)."""
    return _world(namespace).describe()


def apply_tool(namespace: Namespace, args: dict[str, Any]) -> Any:
    """Apply one tool call (``{"name", "arguments"}``) to ``world``; returns what it did."""
    from toolgym.envs.scene.tools import registry

    world = registry.apply(namespace.get("world"), args.get("call"))
    return str(getattr(world, "note", ""))


def _perturb(description: dict[str, Any], seed: int, pos_m: float, hpr_deg: float) -> None:
    """Move every object the script placed by up to ``pos_m`` and turn it by up to ``hpr_deg``
    (heading), seeded; level objects stay."""
    rng = random.Random(seed)
    for obj in description["objects"]:
        if obj.get("level"):
            continue
        obj["pos"] = [v + rng.uniform(-pos_m, pos_m) for v in obj["pos"]]
        h, p, r = obj["hpr"]
        obj["hpr"] = [h + rng.uniform(-hpr_deg, hpr_deg), p, r]


def simulate(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Build a fresh world from ``description`` (optionally perturbed: ``perturb`` =
    ``{"seed", "pos_m", "hpr_deg"}``) and simulate ``seconds``, sampling every frame.
    Returns ``times`` (s), ``samples`` ({name: [[x, y, z, qw, qx, qy, qz] or None, ...]}),
    ``final`` (``World.state``), ``events`` and ``counters``."""
    from toolgym.envs.scene.runtime import World
    from toolgym.envs.scene.sampling import sampled

    description = args["description"]
    if args.get("perturb"):
        p = args["perturb"]
        _perturb(description, int(p["seed"]), float(p["pos_m"]), float(p["hpr_deg"]))
    world = World.build(description)
    return sampled(world, float(args.get("seconds", 1.0)))


def host(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Trusted sessions only: start one play of a logic task (see ``logic.Host``): ``description``
    (plain data), ``path``, ``speed`` (m/s), ``waits`` (s per waypoint), ``seconds`` and
    ``listen`` (the logic session's :func:`listen`); every frame is sampled. Returns the host's
    first stop or the finished trace."""
    from toolgym.envs.scene.logic import Host

    namespace["__host__"] = Host(
        args["description"],
        args["path"],
        float(args["speed"]),
        float(args["seconds"]),
        args["listen"],
        args.get("waits", ()),
    )
    return namespace["__host__"].advance()


def resume(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Trusted sessions only: apply the logic session's ``answer`` and run to the next stop."""
    return namespace["__host__"].advance(args["answer"])


def listen(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Logic sessions: what the host must stop for (``logic.listening``)."""
    from toolgym.envs.scene.logic import listening

    return listening(_world(namespace))


def react(namespace: Namespace, args: dict[str, Any]) -> dict[str, Any]:
    """Logic sessions: copy the host's ``state`` in, run the callbacks due in ``phase`` and return
    what they changed as actions (``logic.reaction``)."""
    from toolgym.envs.scene.logic import reaction

    return reaction(_world(namespace), args["state"], str(args["phase"]))
