"""``toolgym doctor``: can this machine run toolgym? Tools, isolation layers and rendering.

Each check starts the real thing: a zygote per tool (a clean interpreter importing it), a session
(reporting the isolation layers it got and the allow-list of files it sees), and a Workbench
render inside a Blender session.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import time
from collections.abc import Callable

import numpy as np

from toolgym.envs.sandbox import Limits, Session, get_zygote
from toolgym.envs.sandbox.backend import load_backend
from toolgym.envs.sandbox.limits import MiB

ALL_LAYERS = ("netns", "pidns", "mountns", "uid", "rlimits", "env")


@dataclasses.dataclass
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def _versions(backend: str) -> str:
    parts = []
    for dist in load_backend(backend).distributions:
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{dist} missing")
    return ", ".join(parts)


def _guard(name: str, fn: Callable[[], Check], required: bool = True) -> Check:
    try:
        return fn()
    except Exception as exc:
        return Check(name, False, f"{type(exc).__name__}: {str(exc).strip()[:400]}", required)


def check_tool(backend: str) -> Check:
    def run() -> Check:
        started = time.perf_counter()
        get_zygote(backend)
        elapsed = time.perf_counter() - started
        return Check(f"tool {backend}", True, f"{_versions(backend)} (imported in {elapsed:.1f} s)")

    return _guard(f"tool {backend}", run)


def check_isolation() -> list[Check]:
    """The isolation layers a session gets here, and the files it can see (the allow-list)."""
    try:
        with Session("cadquery", snapshot_on_start=False) as session:
            layers, warnings = session.layers, session.warnings
            allowed, limits = session.allowed_paths, session.limits
    except Exception as exc:
        failed = f"{type(exc).__name__}: {str(exc).strip()[:400]}"
        return [Check(name, False, failed, False) for name in ("isolation layers", "filesystem")]
    missing = [layer for layer in ALL_LAYERS if layer not in layers]
    detail = "active: " + ", ".join(layers)
    if missing:
        detail += "; unavailable: " + ", ".join(missing)
    if warnings:
        detail += "; " + "; ".join(warnings)
    checks = [Check("isolation layers", not missing, detail, required=False)]
    checks.append(Check("filesystem", "mountns" in layers, _describe_allow_list(allowed, limits)))
    checks[-1].required = False
    return checks


def _describe_allow_list(allowed: list[str], limits: Limits) -> str:
    if not allowed:
        return "no allow-list: sessions see every file of this machine"
    modules = [p for p in allowed if p.endswith(".py")]
    shown = [p for p in allowed if not p.endswith(".py")]
    quota = limits.workspace_bytes / MiB
    return (
        f"allow-list, read-only: {', '.join(shown)}, and {len(modules)} worker module files "
        f"({os.path.commonpath(modules) if modules else '-'}); writable: /workspace, /tmp, "
        f"/dev/shm ({quota:g} MiB in all); nothing else exists in a session"
    )


def check_workbench() -> Check:
    def run() -> Check:
        with Session("blender", snapshot_on_start=False) as session:
            built = session.run("bpy.ops.mesh.primitive_cube_add(size=2)")
            if not built.ok:
                return Check("Workbench render", False, built.feedback())
            started = time.perf_counter()
            result = session.request("render", {"width": 64, "height": 64})
            elapsed = time.perf_counter() - started
        if not result.ok:
            return Check("Workbench render", False, result.feedback())
        image = np.asarray(result.value)
        covered = float((image[..., 3] > 0).mean())
        ok = image.shape == (64, 64, 4) and 0.02 < covered < 0.98
        return Check("Workbench render", ok, f"64x64 in {elapsed:.2f} s, cube covers {covered:.0%}")

    return _guard("Workbench render", run)


def check_offscreen() -> Check:
    def run() -> Check:
        with Session("scene", snapshot_on_start=False) as session:
            session.run("core.NodePath(core.CardMaker('c').generate()).reparent_to(scene)")
            result = session.request("render", {"width": 32, "height": 32})
        if not result.ok:
            return Check("Panda3D offscreen render", False, result.feedback())
        image = np.asarray(result.value)
        return Check(
            "Panda3D offscreen render",
            image.std() > 0,
            f"{image.shape[1]}x{image.shape[0]} software",
        )

    return _guard("Panda3D offscreen render", run)


def run_checks() -> list[Check]:
    """Every check, in order; required checks decide the verdict."""
    checks = [check_tool(b) for b in ("cadquery", "blender", "scene")]
    checks += [*check_isolation(), check_workbench(), check_offscreen()]
    return checks
