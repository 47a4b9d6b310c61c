"""The session's init: PID 1 of its namespaces, reaper of all its processes, never runs agent code.

It builds the session's filesystem view, starts the first worker under an unprivileged uid, then
serves the parent's control channel: it reports every process that exits (with its wait status),
kills processes on request, and sweeps away anything agent code left running. When the parent goes
away it exits, and the kernel ends the whole PID namespace with it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import traceback
from typing import Any

from toolgym.envs.sandbox import isolation, protocol
from toolgym.envs.sandbox.backend import Backend
from toolgym.envs.sandbox.limits import Limits
from toolgym.envs.sandbox.worker import Worker


def descendants(root: int) -> set[int]:
    """PIDs of every live descendant of ``root``, read from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
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


def run(
    control: socket.socket,
    worker_sock: socket.socket,
    backend: Backend,
    limits: Limits,
    spec: dict[str, Any],
    layers: list[str],
    warnings: list[str],
) -> None:
    """Main of the session init. ``spec`` carries the workspace, hidden paths and uid index."""
    workspace = spec["workspace"]
    layers = list(layers)
    backend.prepare_workspace(workspace)
    if "mountns" in layers:
        try:
            isolation.setup_mounts(workspace, spec["hidden"], spec["secrets"])
        except OSError as exc:
            layers.remove("mountns")
            warnings.append(f"filesystem isolation failed: {exc}")
    if "pidns" not in layers:
        isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)
    isolation.prctl(isolation.PR_SET_DUMPABLE, 0)  # agent processes may not ptrace the init

    wants_uid = "uid" in spec["isolation"] and os.geteuid() == 0 and "userns" not in layers
    uid = isolation.session_uid(spec["index"]) if wants_uid else None
    if uid is not None:
        os.chown(workspace, uid, uid)
        layers.append("uid")
    layers += ["rlimits", "env"]

    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)

    worker_pid = os.fork()
    if worker_pid == 0:
        control.close()
        os.close(wake_read)
        os.close(wake_write)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _become_worker(worker_sock, backend, limits, workspace, uid)
    worker_sock.close()
    protocol.send(control, {"event": "hello", "layers": layers, "warnings": warnings})
    _serve(control, wake_read)


def _become_worker(
    sock: socket.socket, backend: Backend, limits: Limits, workspace: str, uid: int | None
) -> None:
    try:
        os.environ.clear()
        os.environ.update(isolation.scrubbed_env(workspace, backend.environment()))
        os.chdir(workspace)
        nproc = limits.max_processes + limits.max_snapshots + 8
        isolation.apply_session_rlimits(limits.memory_mb * 1024 * 1024, nproc, limits.file_bytes)
        if uid is not None:
            isolation.drop_privileges(uid)
        Worker(sock, backend, limits).serve()
    except BaseException:
        traceback.print_exc()  # the worker's stderr is the zygote's log until capture starts
    finally:
        os._exit(0)


def _serve(control: socket.socket, wake_read: int) -> None:
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
            elif op == "shutdown":
                break
            protocol.send(control, {"reply": op})
    _kill(sorted(descendants(me)))
    os._exit(0)


def _report_exits(control: socket.socket) -> None:
    for pid, status in isolation.reap_exited():
        with contextlib.suppress(OSError):
            protocol.send(control, {"event": "exit", "pid": pid, "status": status})
