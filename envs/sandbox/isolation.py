"""Isolation layers for sandbox sessions (Linux).

Each session gets, where the machine allows it:

- ``netns``: a new network namespace with no interfaces up, so no connection leaves the session;
- ``pidns``: a new PID namespace whose init is the session's reaper, so killing it ends every
  process the session started;
- ``mountns``: a new mount namespace whose root is an allow-list of read-only paths and one
  writable scratch space (``filesystem.py``);
- ``uid``: workers run as an unprivileged, per-session user id (only when started as root);
- ``rlimits``: address space, CPU time, process count and file size limits (always);
- ``env``: a scrubbed environment with no variable of the parent (always).

As root the namespaces are created directly; otherwise through a user namespace. Layers that fail
are skipped and reported, never fatal: :func:`enter_namespaces` returns what is active.
"""

from __future__ import annotations

import ctypes
import os
import resource
from collections.abc import Iterator

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 4, 36, 38

# Layers a session can ask for; rlimits and the scrubbed environment are always on.
OPTIONAL_LAYERS = ("netns", "pidns", "mountns", "uid")
# Per-session uids start here; far above any real account.
SESSION_UID_BASE = 0x2A0000

SAFE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    # Threads and fork do not mix: keep numeric libraries single-threaded in the sandbox.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def check_result(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prctl(option: int, value: int) -> None:
    check_result(_libc.prctl(option, value, 0, 0, 0), f"prctl({option})")


NAMESPACES = {
    "netns": os.CLONE_NEWNET,
    "pidns": os.CLONE_NEWPID,
    "mountns": os.CLONE_NEWNS | os.CLONE_NEWIPC | os.CLONE_NEWUTS,
}


class PidNamespaceSpawner:
    """Forks children that are PID 1 of a fresh PID namespace, without an intermediate process.

    ``unshare(CLONE_NEWPID)`` only changes where the caller's *next* child goes; ``setns`` back to
    the caller's own namespace right after the fork undoes it. Needs ``CAP_SYS_ADMIN`` (root); use
    :meth:`available` to know whether it works here.
    """

    def __init__(self) -> None:
        self.own_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.unshare(os.CLONE_NEWPID)
            os.setns(self.own_namespace, os.CLONE_NEWPID)
            self.available = True
        except OSError:
            self.available = False

    def fork(self) -> int:
        os.unshare(os.CLONE_NEWPID)
        try:
            return os.fork()
        finally:
            if os.getpid() != 1:  # in the parent: later children stay in our namespace
                os.setns(self.own_namespace, os.CLONE_NEWPID)


def enter_namespaces(
    names: tuple[str, ...] = ("netns", "pidns", "mountns"),
) -> tuple[list[str], list[str]]:
    """Unshare the named namespaces (mountns includes IPC and UTS) of the calling process.

    With ``pidns`` the caller must fork afterwards: its first child becomes PID 1 there. As root
    the namespaces are created directly, else inside a new user namespace. Returns
    ``(layers, warnings)``; ``layers`` holds ``"userns"`` when a user namespace was needed.
    """
    if not names:
        return [], []
    flags = 0
    for name in names:
        flags |= NAMESPACES[name]
    layers = list(names)
    if os.geteuid() == 0:
        try:
            os.unshare(flags)
            return layers, []
        except OSError as exc:
            first_error = f"unshare as root failed ({exc})"
    else:
        first_error = "not root"
    uid, gid = os.geteuid(), os.getegid()
    try:
        os.unshare(flags | os.CLONE_NEWUSER)
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"0 {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"0 {gid} 1")
        return [*layers, "userns"], []
    except OSError as exc:
        return [], [f"namespaces unavailable: {first_error}; user namespace failed ({exc})"]


def reap_exited() -> Iterator[tuple[int, int]]:
    """``(pid, wait status)`` of each child that has exited, without blocking."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def proc_files(name: str) -> Iterator[tuple[int, bytes]]:
    """``(pid, content)`` of ``/proc/<pid>/<name>`` for every process visible, skipping those
    that exit while being read."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/{name}", "rb") as f:
                yield int(entry), f.read()
        except OSError:
            continue


def session_uid(index: int) -> int:
    return SESSION_UID_BASE + index % 0x100000


def drop_privileges(uid: int) -> None:
    """Become ``uid``/``uid`` with no supplementary groups and no way to regain privileges."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def virtual_memory_bytes() -> int:
    """Current address-space size (VmSize) of this process, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def open_descriptors() -> int:
    """How many file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd")) - 1  # less the one listing it


def apply_session_rlimits(
    memory_bytes: int, max_processes: int, file_bytes: int, open_files: int
) -> None:
    """Cap address space growth, process count, open descriptors (``open_files`` beyond those
    open now) and file size; core dumps off."""
    vm = virtual_memory_bytes() + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (vm, vm))
    nofile = open_descriptors() + open_files
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def home_dirs(home: str) -> dict[str, str]:
    """XDG directories below ``home``; tools (Mesa, Blender) otherwise use the passwd home dir."""
    return {
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
    }


def scrubbed_env(workspace: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The only environment a session sees: fixed safe values, its workspace, backend extras."""
    env = dict(SAFE_ENV, HOME=workspace, TMPDIR="/tmp", USER="sandbox", **home_dirs(workspace))
    env.update(extra or {})
    return env
