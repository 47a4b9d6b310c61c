"""The zygote: a clean interpreter that imports one tool once and forks sessions from that state.

Started by the parent as ``python -m toolgym.envs.sandbox.zygote BACKEND FD OWNERS`` (``BACKEND``
the backend's class, ``module:Class``) with a
scrubbed environment. It never runs agent code, never renders and never runs OpenCASCADE booleans,
so its forks are safe. For each ``spawn`` request it forks the session's init (PID 1 of fresh
namespaces), which then starts the first worker.

``OWNERS`` are the pids (comma-separated) whose death ends the sandbox: the parent, and the process
that started it when the parent is a multiprocessing child (a vector-env worker). The zygote
watches them with pidfds: when one dies it kills every session it started and leaves at once
(``os._exit``, no interpreter shutdown), so nothing outlives its owner by more than a moment,
even mid-step, or when a forked child of the parent still holds a channel.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import sys
import traceback
import warnings
from typing import Any, NoReturn

from toolgym.envs.sandbox import filesystem, isolation, protocol, reaper
from toolgym.envs.sandbox.backend import Backend, load_backend
from toolgym.envs.sandbox.limits import Limits

# Directories of the sessions we started. Each session's init removes its own when it ends, but an
# init we kill when an owner dies gets no chance to, so we remove what is left on the way out.
_session_dirs: set[str] = set()

# How long a closed channel waits for word of its owner's death. A dying process's sockets close
# before its pidfd reports the exit, so the channel can close first; a parent that closes the
# channel itself kills us right after, so the wait costs nothing then.
OWNER_EXIT_WAIT_S = 10.0


def _prime(backend: Backend) -> None:
    """Run the backend's trusted warm-up (e.g. a first render) in a throwaway child."""
    child = os.fork()
    if child == 0:
        try:
            backend.prime()
        finally:
            os._exit(0)
    os.waitpid(child, 0)


def _spawn(
    sock: socket.socket,
    inherited: tuple[int, ...],
    backend: Backend,
    pidns: isolation.PidNamespaceSpawner,
    message: dict[str, Any],
    fds: list[int],
) -> None:
    """Start a session's init in fresh namespaces; it then starts the first worker.

    As root the init is forked straight into a new PID namespace. Otherwise an intermediate child
    enters a user namespace with the others and forks the init. Either way the init's pid is
    announced on the control channel before the init says anything, and names its uid.
    """
    control, worker_sock = (socket.socket(fileno=fd) for fd in fds)
    wanted = tuple(n for n in isolation.NAMESPACES if n in message["spec"]["isolation"])
    direct = pidns.available and "pidns" in wanted
    gate_read, gate_write = os.pipe()
    child = pidns.fork() if direct else os.fork()
    if child != 0:
        os.close(gate_read)
        if direct:
            _announce(control, gate_write, child)
        else:
            os.close(gate_write)
        control.close()
        worker_sock.close()
        _track(message["spec"]["session_dir"])
        protocol.send(sock, {"reply": "spawn", "ok": True})
        return
    try:
        sock.close()
        for fd in inherited:  # our wake-up pipe, pidfds and namespace: no business of a session
            os.close(fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        if direct:
            layers, warns = isolation.enter_namespaces(tuple(n for n in wanted if n != "pidns"))
            layers.insert(0, "pidns")
        else:
            layers, warns = isolation.enter_namespaces(wanted)
            os.close(gate_read)
            gate_read, own_gate = os.pipe()
            init_pid = os.fork()
            if init_pid != 0:
                _announce(control, own_gate, init_pid)
                return
        os.close(gate_write)
        outer_pid = int(os.read(gate_read, 32))  # also the first frame on the channel is sent
        os.close(gate_read)
        limits = Limits.from_dict(message["limits"])
        spec = dict(message["spec"], index=outer_pid)
        reaper.run(control, worker_sock, backend, limits, spec, layers, warns)
    except BaseException:
        traceback.print_exc()  # into the zygote's log; the parent sees the channel close
    finally:
        os._exit(0)


def _announce(control: socket.socket, gate_write: int, init_pid: int) -> None:
    """Tell the parent the init's pid, then let the init go on."""
    protocol.send(control, {"event": "init", "pid": init_pid})
    os.write(gate_write, str(init_pid).encode())
    os.close(gate_write)


def _track(session_dir: str) -> None:
    """Remember a session's directory, forgetting those whose sessions already removed theirs."""
    _session_dirs.difference_update([d for d in _session_dirs if not os.path.lexists(d)])
    if os.path.basename(session_dir).startswith("session-"):
        _session_dirs.add(session_dir)


def _leave(kill_sessions: bool) -> NoReturn:
    """Exit at once, without an interpreter shutdown (seconds with a tool loaded), removing our
    log (stderr, a file in the run directory): nobody is left to read it. With
    ``kill_sessions`` every process we started goes first."""
    if kill_sessions:
        for _ in range(20):  # a session may still be forking; a killed init ends its namespace
            strays = reaper.descendants(os.getpid())
            if not strays:
                break
            for pid in strays:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for _ in isolation.reap_exited():
                pass
        for session_dir in _session_dirs:  # killed inits could not remove their own
            shutil.rmtree(session_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(os.readlink("/proc/self/fd/2"))
    os._exit(0)


def _watch(owners: list[int]) -> list[int]:
    """Pidfds of ``owners``; leaves at once if one has already died."""
    fds = []
    for pid in owners:
        try:
            fds.append(os.pidfd_open(pid))
        except ProcessLookupError:
            _leave(kill_sessions=True)
        except OSError:  # no pidfds (Linux < 5.3): the parent's channel closing still tells
            continue
    return fds


def _owner_dies(watched: list[int], within_s: float) -> bool:
    """Whether one of the ``watched`` owners (pidfds) has died or dies within ``within_s``."""
    return bool(watched) and bool(select.select(watched, [], [], within_s)[0])


def main(argv: list[str]) -> None:
    backend_class, fd = argv[0], int(argv[1])
    owners = [int(pid) for pid in argv[2].split(",") if pid] if len(argv) > 2 else []
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() in a process with idle threads
    watched = _watch(owners)
    sock = socket.socket(fileno=fd)
    backend = load_backend(backend_class)
    backend.warm_up()
    filesystem.allow_list()  # computed once here (and checked), inherited by every session
    _prime(backend)
    isolation.prctl(isolation.PR_SET_CHILD_SUBREAPER, 1)  # adopt orphaned session inits
    pidns = isolation.PidNamespaceSpawner()
    wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)
    protocol.send(sock, {"event": "ready", "pid": os.getpid(), "python": sys.version})
    while True:
        readable, _, _ = select.select([sock, wake[0], *watched], [], [])
        if any(fd in readable for fd in watched):
            _leave(kill_sessions=True)  # an owner died: nobody will ever use these sessions
        if wake[0] in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake[0], 4096)
            for _ in isolation.reap_exited():
                pass
        if sock in readable:
            try:
                message, fds = protocol.recv(sock)
            except protocol.ChannelError:
                # An owner that died takes its sessions with it; otherwise they end on their own
                # when their control channels close.
                _leave(kill_sessions=_owner_dies(watched, OWNER_EXIT_WAIT_S))
            if message.get("op") == "spawn" and len(fds) == 2:
                inherited = (*wake, *watched, pidns.own_namespace)
                _spawn(sock, inherited, backend, pidns, message, fds)
            else:
                for received in fds:
                    os.close(received)
                protocol.send(sock, {"reply": "error", "ok": False, "message": "bad request"})


if __name__ == "__main__":
    main(sys.argv[1:])
