"""The session's init: PID 1 of its namespaces, reaper of all its processes, never runs agent code.

It builds the session's file system (the allow-list of ``filesystem.py``), starts the first
worker under an unprivileged uid, then serves the parent's control channel: it reports every
process that exits (with its wait status), kills processes on request, sweeps away anything agent
code left running, and saves and restores the workspace's copy for each snapshot. When the parent
goes away it exits, removing the session's directory, and the kernel ends the PID namespace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import shutil
import signal
import socket
import traceback
from typing import Any

from toolgym.envs.sandbox import filesystem, isolation, protocol, workspace
from toolgym.envs.sandbox.backend import Backend
from toolgym.envs.sandbox.limits import OWN_FILES, Limits
from toolgym.envs.sandbox.worker import Worker


def descendants(root: int) -> set[int]:
    """PIDs of every live descendant of ``root``, read from /proc."""
    children: dict[int, list[int]] = {}
    for pid, stat in isolation.proc_files("stat"):
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _sweep(root: int, keep: set[int], rounds: int = 200) -> list[int]:
    """Kill every descendant of ``root`` not in ``keep``, until none is left (fork bombs refill).

    Returns the pids killed."""
    killed: set[int] = set()
    for _ in range(rounds):
        strays = descendants(root) - keep
        if not strays:
            break
        _kill(sorted(strays))
        killed |= strays
    return sorted(killed)


@dataclasses.dataclass
class Storage:
    """Where the session's writable files live, as the init sees them, and their snapshot copies.

    ``root/<name>`` for each of ``names`` is what a snapshot covers; ``workspace`` is the path the
    worker is given (its home and working directory)."""

    root: str
    names: list[str]
    store: str
    workspace: str
    uid: int | None = None
    budget: int | None = None  # bytes the snapshot copies may hold (Limits.snapshot_bytes)


def _make_storage(
    spec: dict[str, Any],
    backend: Backend,
    limits: Limits,
    layers: list[str],
    warnings: list[str],
) -> Storage:
    """Build the session's file system: the allow-list root where it can, else host directories."""
    session_dir = spec["session_dir"]
    plan = None
    if "mountns" in layers:
        try:
            # Opened inside the new mount namespace: a bind's source must belong to it.
            plan = filesystem.open_plan(filesystem.allow_list())
            warnings += filesystem.build_root(
                session_dir,
                plan,
                limits.workspace_bytes,
                backend.prepare_workspace,
                limits.snapshot_bytes,
            )
            names = list(filesystem.SCRATCH_MOUNTS)
            return Storage(
                filesystem.SCRATCH,
                names,
                filesystem.SNAPSHOTS,
                filesystem.WORKSPACE,
                budget=limits.snapshot_bytes,
            )
        except OSError as exc:
            layers.remove("mountns")
            warnings.append(f"filesystem allow-list failed ({exc}); the session sees every file")
    elif "mountns" in spec["isolation"]:
        warnings.append("filesystem allow-list not enforced: the session sees every file")
    if plan is not None:
        plan.close()
    workspace = os.path.join(session_dir, "workspace")
    store = os.path.join(session_dir, "snapshots")
    for path in (workspace, store):
        os.makedirs(path, exist_ok=True)
    os.chmod(workspace, 0o755)
    os.chmod(store, 0o700)
    backend.prepare_workspace(workspace)
    return Storage(session_dir, ["workspace"], store, workspace, budget=limits.snapshot_bytes)


def _give_to(path: str, uid: int) -> None:
    """Hand ``path`` and what the init put there to the worker's uid."""
    os.chown(path, uid, uid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def run(
    control: socket.socket,
    worker_sock: socket.socket,
    backend: Backend,
    limits: Limits,
    spec: dict[str, Any],
    layers: list[str],
    warnings: list[str],
) -> None:
    """Main of the session init. ``spec`` carries the session directory, layers and uid index."""
    layers = list(layers)
    # Held so the init can remove the session's directory when it ends, however the parent ends.
    run_dir_fd = os.open(os.path.dirname(spec["session_dir"]), os.O_PATH | os.O_DIRECTORY)
    storage = _make_storage(spec, backend, limits, layers, warnings)
    if "pidns" not in layers:
        isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)
    isolation.prctl(isolation.PR_SET_DUMPABLE, 0)  # agent processes may not ptrace the init

    wants_uid = "uid" in spec["isolation"] and os.geteuid() == 0 and "userns" not in layers
    uid = isolation.session_uid(spec["index"]) if wants_uid else None
    if uid is not None:
        _give_to(storage.workspace, uid)
        storage.uid = uid
        layers.append("uid")
    layers += ["rlimits", "env"]

    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)

    worker_pid = os.fork()
    if worker_pid == 0:
        control.close()
        for fd in (wake_read, wake_write, run_dir_fd):  # nothing of the host may reach the worker
            os.close(fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _become_worker(worker_sock, backend, limits, storage.workspace, uid)
    worker_sock.close()
    allowed = list(filesystem.allow_list()) if "mountns" in layers else []
    hello = {
        "event": "hello",
        "layers": layers,
        "warnings": warnings,
        "allowed": allowed,
        "workspace": storage.workspace,
    }
    protocol.send(control, hello)
    try:
        _serve(control, wake_read, storage)
    finally:
        _kill(sorted(descendants(os.getpid())))
        name = os.path.basename(spec["session_dir"])
        shutil.rmtree(name, dir_fd=run_dir_fd, ignore_errors=True)
        os._exit(0)


def _become_worker(
    sock: socket.socket, backend: Backend, limits: Limits, workspace: str, uid: int | None
) -> None:
    try:
        os.environ.clear()
        os.environ.update(isolation.scrubbed_env(workspace, backend.environment()))
        os.chdir(workspace)
        nproc = limits.max_processes + limits.max_snapshots + 8
        nofile = limits.open_files + OWN_FILES
        isolation.apply_session_rlimits(
            limits.memory_mb * 1024 * 1024, nproc, limits.file_bytes, nofile
        )
        if uid is not None:
            isolation.drop_privileges(uid)
        Worker(sock, backend, limits).serve()
    except BaseException:
        traceback.print_exc()  # the worker's stderr is the zygote's log until capture starts
    finally:
        os._exit(0)


def _storage_op(op: str, message: dict[str, Any], storage: Storage) -> dict[str, Any]:
    """Save, restore or discard the workspace copy of one snapshot."""
    snapshot_id = message.get("id")
    if not isinstance(snapshot_id, int):
        return {"reply": op, "ok": False, "error": "bad snapshot id"}
    try:
        if op == "save":
            previous = message.get("previous")
            previous = previous if isinstance(previous, int) else None
            workspace.save(
                storage.root, storage.names, storage.store, snapshot_id, previous, storage.budget
            )
        elif op == "restore":
            workspace.restore(storage.store, snapshot_id, storage.root, storage.names, storage.uid)
        else:
            workspace.discard(storage.store, snapshot_id)
    except OSError as exc:
        return {"reply": op, "ok": False, "error": os.strerror(exc.errno or 0) or str(exc)}
    return {"reply": op, "ok": True}


def _serve(control: socket.socket, wake_read: int, storage: Storage) -> None:
    me = os.getpid()
    while True:
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_read, 4096)
            _report_exits(control)
        if control in readable:
            try:
                message, fds = protocol.recv(control)
            except protocol.ChannelError:
                break
            for fd in fds:
                os.close(fd)
            op = message.get("op")
            if op == "kill":
                _kill([int(p) for p in message.get("pids", ())])
            elif op == "sweep":
                keep = {int(p) for p in message.get("keep", ())}
                protocol.send(control, {"reply": "sweep", "killed": _sweep(me, keep)})
                continue
            elif op in ("save", "restore", "discard"):
                protocol.send(control, _storage_op(op, message, storage))
                continue
            elif op == "shutdown":
                break
            protocol.send(control, {"reply": op})


def _report_exits(control: socket.socket) -> None:
    for pid, status in isolation.reap_exited():
        with contextlib.suppress(OSError):
            protocol.send(control, {"event": "exit", "pid": pid, "status": status})
