"""The session's filesystem: an allow-list, built from bind mounts on an empty root.

A session sees only what its tool and the worker need, read-only, at the same paths as on the
machine: the interpreter and its standard library, the site-packages the zygote imported from,
the source files of the worker's own modules (the sandbox and the backend, file by file, never the
project tree), the system libraries and data the tools load (``/usr/lib``, ``/usr/share``, a few
files of ``/etc``), a few device nodes, a private ``/proc``, and one writable scratch file system
(``/workspace``, ``/tmp`` and ``/dev/shm``) capped at ``Limits.workspace_bytes``. Everything else
(the project tree and its ``.git``, task files, verifiers, other checkouts, home directories) does
not exist there: the root is a fresh tmpfs, and nothing is hidden because nothing is shown.

The zygote computes the list once (:func:`allow_list`) after importing its tool; each session's
init, in its new mount namespace, opens the paths (:func:`open_plan`) and builds the root from
them (:func:`build_root`) as PID 1.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import platform
import site
import stat
import sys
import sysconfig
from collections.abc import Callable

from toolgym.envs.sandbox.isolation import check_result

_libc = ctypes.CDLL(None, use_errno=True)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
MNT_DETACH = 2
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
SYS_MOUNT_SETATTR = 442  # same number on every architecture (unified syscall table)
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}.get(platform.machine(), 155)

#: Where a session's writable scratch space appears inside it.
WORKSPACE = "/workspace"
#: Root-only directory of the init's own mounts (the scratch file system and snapshot copies).
PRIVATE = "/.toolgym"
SCRATCH = f"{PRIVATE}/scratch"
SNAPSHOTS = f"{PRIVATE}/snapshots"
#: Scratch subdirectories and where the session sees them; snapshots cover all three.
SCRATCH_MOUNTS = {"workspace": WORKSPACE, "tmp": "/tmp", "shm": "/dev/shm"}

# What the tools load besides Python: shared libraries, Mesa and glvnd data, fonts, locales.
SYSTEM_PATHS = (
    "/usr/bin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/share",
    "/bin",
    "/lib",
    "/lib64",
    "/etc/alternatives",
    "/etc/drirc",
    "/etc/fonts",
    "/etc/group",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/passwd",
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
DEVICE_LINKS = {
    "/dev/fd": "/proc/self/fd",
    "/dev/stdin": "/proc/self/fd/0",
    "/dev/stdout": "/proc/self/fd/1",
    "/dev/stderr": "/proc/self/fd/2",
}
#: Modules of this project a session may hold: the sandbox, backends and what they import.
#: Anything that decides a task's answer is refused, even if a backend imported it.
FORBIDDEN_MODULES = (
    "toolgym.agents",
    "toolgym.cli",
    "toolgym.envs.domains",
    "toolgym.envs.episode",
    "toolgym.envs.grammar",
    "toolgym.envs.recording",
    "toolgym.envs.serving",
    "toolgym.envs.tasks",
    "toolgym.envs.verification",
    "toolgym.envs.wrappers",
    "toolgym.verifiers",
)
#: The same, in every tool's folder (``toolgym.envs.<tool>``, or a package registered from
#: outside): its environment, task families, domain plug-in, verification, verifier, views and
#: cheats, which hold or build the answers.
FORBIDDEN_DOMAIN_MODULES = (
    "env",
    "families",
    "domain",
    "verification",
    "verifier",
    "views",
    "cheats",
)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    encode = lambda s: s.encode() if s is not None else None  # noqa: E731
    result = _libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data))
    check_result(result, f"mount {target}")


def mount_setattr(path: str, attr_set: int, attr_clr: int = 0, recursive: bool = False) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    result = _libc.syscall(
        SYS_MOUNT_SETATTR, -100, path.encode(), flags, ctypes.byref(attr), ctypes.sizeof(attr)
    )
    check_result(result, f"mount_setattr {path}")


def _is_below(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def forbidden_modules() -> list[str]:
    """Modules in ``sys.modules`` that a session must never hold."""
    return sorted(name for name in sys.modules if _forbidden(name))


def _forbidden(name: str) -> bool:
    if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_MODULES):
        return True
    # A tool's folder is a package declaring CARD (toolgym.envs.registration), wherever it lives.
    parts = name.split(".")
    return any(
        parts[i] in FORBIDDEN_DOMAIN_MODULES
        and hasattr(sys.modules.get(".".join(parts[:i])), "CARD")
        for i in range(1, len(parts))
    )


def _module_paths() -> set[str]:
    """Files of this project's imported modules, and the locations of other imported packages."""
    paths: set[str] = set()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name == "toolgym" or name.startswith("toolgym."):
            if isinstance(file, str):
                paths.add(file)  # the file only: its directory is the project tree
            continue
        if "." in name:
            continue  # a submodule lives in its top-level package's directory
        locations = list(getattr(module, "__path__", None) or ()) or [file]
        paths.update(p for p in locations if isinstance(p, str) and os.path.isabs(p))
        paths.update(_package_root(p) for p in locations if isinstance(p, str))
    paths.discard("")
    return paths


def _package_root(path: str) -> str:
    """The folder a package was installed as, when it imports from deeper inside it (``bpy``
    imports from ``site-packages/bpy/<version>/scripts/modules``, and loads libraries from
    ``site-packages/bpy/lib`` later, Cycles' denoiser for one); ``""`` otherwise."""
    for entry in sys.path:
        site_dir = os.path.basename(entry) in ("site-packages", "dist-packages")
        if site_dir and path != entry and _is_below(path, entry):
            top = os.path.relpath(path, entry).split(os.sep)[0]
            return os.path.join(entry, top) if top not in ("", ".", "..") else ""
    return ""


@functools.cache
def allow_list() -> tuple[str, ...]:
    """Host paths a session sees, read-only; computed once in the zygote, after its imports.

    Raises ``RuntimeError`` if the zygote imported a module that decides a task's answer.
    """
    forbidden = forbidden_modules()
    if forbidden:
        raise RuntimeError(f"the sandbox must not import {', '.join(forbidden)}")
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    python = {
        sys.executable,
        os.path.realpath(sys.executable),
        os.path.join(sys.prefix, "pyvenv.cfg"),
        *(base[key] for key in ("stdlib", "platstdlib")),
        *site.getsitepackages(),
    }
    libdir = sysconfig.get_config_var("LIBDIR")
    library = sysconfig.get_config_var("INSTSONAME")
    if libdir and library:
        python.add(os.path.join(libdir, library))
    modules = _module_paths()
    # Anything imported from inside site-packages or the standard library is already covered.
    dirs = [p for p in python if os.path.isdir(p)]
    modules = {m for m in modules if not any(_is_below(m, d) for d in dirs)}
    wanted = {*python, *modules, *SYSTEM_PATHS}
    return tuple(sorted(p for p in wanted if os.path.lexists(p)))


@dataclasses.dataclass
class Plan:
    """What a session's root is made of: symlinks to recreate and host paths (opened) to bind."""

    links: dict[str, str]
    binds: dict[str, int]  # real path -> O_PATH descriptor, opened before any namespace

    def close(self) -> None:
        for fd in self.binds.values():
            os.close(fd)
        self.binds.clear()


def _resolve(path: str, links: dict[str, str]) -> str:
    """Real path of ``path``, recording each symlink met on the way (to recreate it)."""
    current = "/"
    for part in path.strip("/").split("/"):
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            links[candidate] = os.readlink(candidate)
            target = os.path.join(current, links[candidate])
            current = _resolve(os.path.normpath(target), links)
        else:
            current = candidate
    return current


def open_plan(paths: tuple[str, ...]) -> Plan:
    """Resolve and open every allowed path (and device), in the session's mount namespace.

    Paths that do not exist are skipped; one that exists but cannot be opened raises ``OSError``
    (a session missing part of its interpreter would fail in confusing ways).
    """
    links = dict(DEVICE_LINKS)
    real: set[str] = set()
    for path in (*paths, *DEVICES):
        if os.path.exists(path):
            real.add(_resolve(os.path.abspath(path), links))
    # A path inside another bound directory is already there (and its mount point could not be
    # made without writing into the machine's directory).
    ordered = sorted(real)
    kept: list[str] = []
    for path in ordered:
        if not any(_is_below(path, k) for k in kept):
            kept.append(path)
    links = {
        link: target for link, target in links.items() if not any(_is_below(link, k) for k in kept)
    }
    plan = Plan(links, {})
    try:
        for path in kept:
            plan.binds[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        plan.close()
        raise
    return plan


def _make_skeleton(root: str, plan: Plan) -> None:
    """Directories, empty mount-point files and symlinks, all inside the new (tmpfs) root."""
    for path, fd in plan.binds.items():
        target = root + path
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.makedirs(target, exist_ok=True)
        elif not os.path.lexists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o444))
    for link, target in plan.links.items():
        os.makedirs(os.path.dirname(root + link), exist_ok=True)
        if not os.path.lexists(root + link):
            os.symlink(target, root + link)


def _bind(source_fd: int, target: str) -> None:
    try:
        mount(f"/proc/self/fd/{source_fd}", target, None, MS_BIND)
    except OSError:
        # In a user namespace a tree with locked submounts can only be bound whole.
        mount(f"/proc/self/fd/{source_fd}", target, None, MS_BIND | MS_REC)


def build_root(
    staging: str,
    plan: Plan,
    scratch_bytes: int,
    prepare: Callable[[str], None] | None = None,
    snapshot_bytes: int | None = None,
) -> list[str]:
    """Make the session's root on ``staging`` (an empty directory of ours) and switch to it.

    Call as root of the session's mount namespace (and PID 1 of its PID namespace). ``prepare``
    is called with the workspace's path before the switch (host paths still visible), to fill
    it with trusted files. Returns warnings (e.g. a private ``/proc`` that could not be made).
    """
    warnings: list[str] = []
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    os.chmod(staging, 0o755)
    for path in ("/proc", "/dev", SCRATCH, SNAPSHOTS, *SCRATCH_MOUNTS.values()):
        os.makedirs(staging + path, exist_ok=True)
    os.chmod(staging + PRIVATE, 0o700)
    size = f"size={max(scratch_bytes, 1 << 20)}"
    mount("tmpfs", staging + SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,{size}")
    # Copies are hard links where unchanged; Limits.snapshot_bytes bounds what they hold.
    store = f"size={max(snapshot_bytes or scratch_bytes, 1 << 20)}"
    mount("tmpfs", staging + SNAPSHOTS, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,{store}")
    for name, where in SCRATCH_MOUNTS.items():
        source = f"{staging}{SCRATCH}/{name}"
        os.mkdir(source, 0o1777 if name != "workspace" else 0o755)
        os.chmod(source, 0o1777 if name != "workspace" else 0o755)
        mount(source, staging + where, None, MS_BIND)
    # The allowed paths go on top of the scratch mounts: one below /tmp (a checkout there, say)
    # is bound over the scratch file system, where its mount point is made, not hidden under it.
    _make_skeleton(staging, plan)
    for path, fd in sorted(plan.binds.items()):
        _bind(fd, staging + path)
    plan.close()
    if prepare is not None:
        prepare(staging + WORKSPACE)

    mount_setattr(staging, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, recursive=True)
    for path in (SCRATCH, SNAPSHOTS, *SCRATCH_MOUNTS.values()):
        mount_setattr(staging + path, 0, MOUNT_ATTR_RDONLY)
    try:
        mount("proc", staging + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as exc:
        warnings.append(f"no private /proc ({exc}); the session has none")

    os.chdir(staging)
    check_result(_libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    check_result(_libc.umount2(b".", MNT_DETACH), "umount the old root")
    os.chdir("/")
    return warnings
