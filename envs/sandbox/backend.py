"""The interface every tool backend implements, and the registry of backends.

A backend adapts one tool (CadQuery, Blender, Panda3D) to the sandbox. It runs inside sandbox
processes only: ``warm_up`` in the zygote, everything else in session workers. Tool-specific code
lives in the tool's folder (``toolgym.envs.<tool>.backend``), which registers it by name
(``toolgym.envs.registration``); the sandbox stays generic.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

Namespace = dict[str, Any]
Request = Callable[[Namespace, dict[str, Any]], Any]

#: Backend name to its class, ``module:Class``: filled by :func:`register_backend`.
BACKENDS: dict[str, str] = {}


def register_backend(name: str, target: str) -> None:
    """Make the backend class ``target`` (``module:Class``) known as ``name``."""
    BACKENDS[name] = target


def unregister_backend(name: str) -> None:
    """Forget the backend ``name`` (its zygote, if one runs, stays until shutdown)."""
    BACKENDS.pop(name, None)


class Backend:
    """Base class: a tool as seen from inside the sandbox."""

    name: str = "base"

    def warm_up(self) -> None:
        """Import the tool once, in the zygote. Must not start threads, render or run booleans."""

    def prime(self) -> None:
        """Trusted one-off work in a throwaway child of the zygote (fills shader caches)."""

    def prepare_workspace(self, workspace: str) -> None:
        """Trusted set-up of a new session's workspace, run by its init before any agent code."""

    def environment(self) -> dict[str, str]:
        """Extra environment variables for sessions (never secrets)."""
        return {}

    def session_globals(self) -> Namespace:
        """The namespace a session's first script starts from: a script runs as ``__main__``, as
        under ``python script.py`` or ``blender --python``, so its ``if __name__ == "__main__":``
        block runs. It is the ``__dict__`` of a fresh module installed as
        ``sys.modules["__main__"]`` (called once per worker), so ``pickle``, ``dataclasses`` and
        ``typing.get_type_hints`` find the script's own names there."""
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main
        return main.__dict__

    def before_exec(self, namespace: Namespace) -> None:
        """Called in the worker before each script runs (a new step begins)."""

    def describe(self, value: Any) -> Any:
        """A plain-data summary of a tool object for ``fetch``; ``None`` if not a tool object."""
        return None

    def requests(self) -> dict[str, Request]:
        """Named backend requests (export, tessellate, render) callable by the parent."""
        return {}


def backend_target(name: str) -> str:
    """The class (``module:Class``) registered as ``name``. Raises ``ValueError`` naming the
    registered ones."""
    try:
        return BACKENDS[name]
    except KeyError:
        known = ", ".join(sorted(BACKENDS)) or "none"
        raise ValueError(f"unknown backend {name!r}; known: {known}") from None


def load_backend(target: str) -> Backend:
    """Instantiate a backend: a registered name, or its class as ``module:Class`` (what a zygote
    is started with, so that a tool registered outside ``toolgym`` loads there too)."""
    if ":" not in target:
        target = backend_target(target)
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)()
