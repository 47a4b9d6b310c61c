"""The parent's zygotes: one long-lived interpreter per backend, started on first use."""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from toolgym.envs.sandbox import protocol
from toolgym.envs.sandbox.backend import backend_target
from toolgym.envs.sandbox.isolation import SAFE_ENV, home_dirs
from toolgym.envs.sandbox.limits import Limits
from toolgym.envs.sandbox.results import SandboxError

ZYGOTE_START_TIMEOUT_S = 180.0
SETUP_TIMEOUT_S = 30.0


def default_run_dir() -> Path:
    """Where workspaces and logs live: ``$TOOLGYM_RUN_DIR`` or ``<tmp>/toolgym-<uid>``."""
    root = os.environ.get("TOOLGYM_RUN_DIR") or os.path.join(
        tempfile.gettempdir(), f"toolgym-{os.getuid()}"
    )
    path = Path(root)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _zygote_env() -> dict[str, str]:
    home = str(default_run_dir())
    env = dict(SAFE_ENV, HOME=home, **home_dirs(home))
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def owners() -> list[int]:
    """Processes whose death ends the sandbox: this one and, in a multiprocessing child (a
    vector-env worker, say), the process that started it, which it would otherwise outlive until
    its step ends."""
    pids = [os.getpid()]
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid:
        pids.append(parent.pid)
    return pids


class Zygote:
    """A long-lived, clean interpreter with one tool imported; forks sessions on request."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.target = backend_target(backend)  # the class, wherever the tool was registered
        self.starts = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._start()

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        log_path = default_run_dir() / f"zygote-{self.backend}-{os.getpid()}.log"
        with open(log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-P",  # neither the working directory nor the script's is on its path
                    "-m",
                    "toolgym.envs.sandbox.zygote",
                    self.target,
                    str(theirs.fileno()),
                    ",".join(str(pid) for pid in owners()),
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=_zygote_env(),
                cwd="/",
                start_new_session=True,
            )
        theirs.close()
        self._sock = ours
        self.log_path = log_path
        try:
            ready, _ = protocol.recv(ours, deadline=time.monotonic() + ZYGOTE_START_TIMEOUT_S)
        except protocol.ChannelError as exc:
            self._kill()
            tail = log_path.read_text(errors="replace")[-3000:]
            raise SandboxError(
                f"the {self.backend} zygote failed to start ({exc}):\n{tail}"
            ) from None
        self.pid = int(ready["pid"])
        self.starts += 1

    def alive(self) -> bool:
        """Whether the zygote runs; one that died is reaped here (no zombie is left)."""
        return self._proc is not None and self._proc.poll() is None

    def spawn(self, spec: dict[str, Any], limits: Limits) -> tuple[socket.socket, socket.socket]:
        """Fork a new session; returns the parent's ends of its control and worker channels."""
        with self._lock:
            for attempt in range(2):
                if not self.alive():
                    self._kill()
                    self._start()
                control, control_child = socket.socketpair()
                worker, worker_child = socket.socketpair()
                try:
                    request = {"op": "spawn", "spec": spec, "limits": limits.to_dict()}
                    protocol.send(
                        self._sock, request, [control_child.fileno(), worker_child.fileno()]
                    )
                    reply, _ = protocol.recv(
                        self._sock, deadline=time.monotonic() + SETUP_TIMEOUT_S
                    )
                    if not reply.get("ok"):
                        raise SandboxError(f"zygote refused to spawn: {reply}")
                    return control, worker
                except (OSError, protocol.ChannelError):
                    control.close()
                    worker.close()
                    self._kill()
                    if attempt:
                        raise SandboxError(f"the {self.backend} zygote keeps dying") from None
                finally:
                    control_child.close()
                    worker_child.close()
        raise AssertionError("unreachable")

    def _kill(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            crashed = self._proc.poll() is not None
            if not crashed:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
            with contextlib.suppress(OSError):
                # The log of a zygote we stopped is noise (Blender's start-up messages, say); one
                # that died on its own keeps it, if it says anything, to tell why.
                if not crashed or self.log_path.stat().st_size == 0:
                    self.log_path.unlink()

    def close(self, wait_s: float | None = None) -> None:
        """Stop the zygote. With ``wait_s``, a thread still mid-spawn after that long (at exit,
        an abandoned daemon thread waiting up to ``SETUP_TIMEOUT_S`` for a reply) does not hold
        it up: the process is killed without the lock, and that thread's wait then fails."""
        if self._lock.acquire(timeout=-1 if wait_s is None else wait_s):
            try:
                self._kill()
            finally:
                self._lock.release()
        elif (proc := self._proc) is not None and proc.poll() is None:
            proc.kill()


# By backend class, not name: a name registered again for another class gets its own zygote.
_zygotes: dict[str, Zygote] = {}
_zygotes_lock = threading.Lock()


def get_zygote(backend: str) -> Zygote:
    """The process-wide zygote for ``backend``, started on first use. Raises ``ValueError``
    for a name no tool registered."""
    target = backend_target(backend)
    with _zygotes_lock:
        zygote = _zygotes.get(target)
        if zygote is None:
            zygote = _zygotes[target] = Zygote(backend)
        return zygote


def live_zygote_pid(backend: str) -> int | None:
    """The pid of this process's zygote for ``backend`` if it runs; ``None`` if there is none or
    it died (it is then reaped, and the next session starts a fresh one)."""
    try:
        zygote = _zygotes.get(backend_target(backend))
    except ValueError:  # no longer registered
        return None
    return zygote.pid if zygote is not None and zygote.alive() else None


def reap_zygotes() -> None:
    """Reap zygotes that died (killed from outside, say), so none stays a zombie."""
    for zygote in list(_zygotes.values()):
        zygote.alive()


def shutdown_zygotes(wait_s: float | None = None) -> None:
    """Stop every zygote (see :meth:`Zygote.close` for ``wait_s``)."""
    with _zygotes_lock:
        for zygote in _zygotes.values():
            zygote.close(wait_s)
        _zygotes.clear()


def _forget_inherited_zygotes() -> None:
    # A forked child (e.g. a vector-env worker) must not share its parent's zygote channels, nor
    # hold them open: a zygote leaves when its parent's end closes.
    for zygote in _zygotes.values():
        if zygote._sock is not None:
            with contextlib.suppress(OSError):
                zygote._sock.close()
    _zygotes.clear()


os.register_at_fork(after_in_child=_forget_inherited_zygotes)
# At exit, a Ctrl-C'd batch verification may leave a daemon thread mid-spawn; exiting waits for it
# a second at most.
atexit.register(shutdown_zygotes, wait_s=1.0)
