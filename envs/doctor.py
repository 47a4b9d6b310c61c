"""``toolgym doctor``: can this machine run toolgym? Tools, isolation layers and rendering.

Each check starts the real thing: a zygote per registered tool (a clean interpreter importing
it), a session (reporting the isolation layers it got and the allow-list of files it sees), and
each tool's own check (``Domain.doctor_check``: a Workbench render in a Blender session, say).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import time
from collections.abc import Callable

from toolgym.envs.domains import domains
from toolgym.envs.registration import cards, get_card
from toolgym.envs.sandbox import Limits, Session, get_zygote
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
    for dist in get_card(backend).distributions:
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
        with Session(cards()[0].name, snapshot_on_start=False) as session:
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


def check_domain(title: str, check: Callable[[], tuple[bool, str]]) -> Check:
    """A tool's own check (``Domain.doctor_check``), its failure caught as a failed check."""

    def run() -> Check:
        ok, detail = check()
        return Check(title, ok, detail)

    return _guard(title, run)


def run_checks() -> list[Check]:
    """Every check, in order; required checks decide the verdict."""
    checks = [check_tool(card.name) for card in cards()]
    checks += check_isolation()
    checks += [check_domain(*d.doctor_check) for d in domains() if d.doctor_check is not None]
    return checks
