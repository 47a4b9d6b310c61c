"""The zygote: a clean interpreter that imports one tool once and forks sessions from that state.

Started by the parent as ``python -m toolgym.envs.sandbox.zygote BACKEND FD`` with a scrubbed
environment. It never runs agent code, never renders and never runs OpenCASCADE booleans, so its
forks are safe. For each ``spawn`` request it forks the session's init (PID 1 of fresh namespaces),
which then starts the first worker.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import traceback
import warnings
from typing import Any

from toolgym.envs.sandbox import filesystem, isolation, protocol, reaper
from toolgym.envs.sandbox.backend import Backend, load_backend
from toolgym.envs.sandbox.limits import Limits


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
    wake: tuple[int, int],
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
        protocol.send(sock, {"reply": "spawn", "ok": True})
        return
    try:
        sock.close()
        for fd in wake:
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


def _drop_empty_log() -> None:
    """Our stderr is a log file in the run directory: leave none behind if nothing was logged."""
    with contextlib.suppress(OSError):
        if os.fstat(2).st_size == 0:
            os.unlink(os.readlink("/proc/self/fd/2"))


def main(argv: list[str]) -> None:
    backend_name, fd = argv[0], int(argv[1])
    warnings.simplefilter("ignore", DeprecationWarning)  # fork() in a process with idle threads
    sock = socket.socket(fileno=fd)
    backend = load_backend(backend_name)
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
        readable, _, _ = select.select([sock, wake[0]], [], [])
        if wake[0] in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake[0], 4096)
            for _ in isolation.reap_exited():
                pass
        if sock in readable:
            try:
                message, fds = protocol.recv(sock)
            except protocol.ChannelError:
                _drop_empty_log()
                return  # the parent is gone; sessions end when their control channels close
            if message.get("op") == "spawn" and len(fds) == 2:
                _spawn(sock, wake, backend, pidns, message, fds)
            else:
                for received in fds:
                    os.close(received)
                protocol.send(sock, {"reply": "error", "ok": False, "message": "bad request"})


if __name__ == "__main__":
    main(sys.argv[1:])
