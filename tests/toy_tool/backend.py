"""The abacus inside the sandbox: a script's namespace holds the rods and the tools."""

from __future__ import annotations

from typing import Any

from toolgym.envs.sandbox.backend import Backend, Namespace, Request

from .tools import RODS, Tools, registry


class AbacusBackend(Backend):
    name = "abacus"

    def session_globals(self) -> Namespace:
        namespace = super().session_globals()
        namespace.update(rods=[0] * RODS, tools=Tools())
        return namespace

    def requests(self) -> dict[str, Request]:
        return {"rods": rods, "tool": apply_tool}


def rods(namespace: Namespace, args: dict[str, Any]) -> list[int]:
    """The beads up on each rod, as plain integers (a script may have bound anything)."""
    value = namespace.get("rods")
    if not isinstance(value, list) or len(value) != RODS:
        raise ValueError(f"rods must be a list of {RODS} bead counts")
    return [int(beads) for beads in value]


def apply_tool(namespace: Namespace, args: dict[str, Any]) -> list[int]:
    namespace["rods"] = registry.apply(namespace.get("rods"), args.get("call"))
    return rods(namespace, args)
