"""Parent side of the sandbox: sessions with calls, snapshots and rollback.

Everything a session sends is untrusted: frames are size-capped msgpack, never pickles, and any
misbehaviour (a crash, a hang, garbage on the wire) becomes a :class:`CallError` in the result while
the session is replaced from its latest snapshot. Exceptions are raised only for misuse of this API.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import shutil
import signal
import socket
import tempfile
import time
import warnings
import weakref
from pathlib import Path
from typing import Any

from toolgym.envs.sandbox import protocol
from toolgym.envs.sandbox.isolation import DEFAULT_HIDDEN, OPTIONAL_LAYERS
from toolgym.envs.sandbox.limits import Limits
from toolgym.envs.sandbox.results import (
    CallError,
    CallResult,
    SandboxError,
    as_list,
    describe_exit,
    result_from_reply,
)
from toolgym.envs.sandbox.zygotes import SETUP_TIMEOUT_S, default_run_dir, get_zygote

EXIT_STATUS_WAIT_S = 2.0
_FRAME_OVERHEAD = 1 << 20


@dataclasses.dataclass
class _Snapshot:
    sock: socket.socket
    pid: int


class _WorkerDied(Exception):
    def __init__(self, error: CallError) -> None:
        self.error = error


def _close_session(
    control: socket.socket, others: list[socket.socket], init_pid: int | None
) -> None:
    with contextlib.suppress(OSError):
        protocol.send(control, {"op": "shutdown"})
    for sock in [control, *others]:
        sock.close()
    if init_pid:
        # The init exits on its own within milliseconds; make sure even if it is stuck.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{init_pid}/stat", "rb") as f:
                    if f.read().split(b") ")[1][:1] == b"Z":
                        return
            except OSError:
                return
            time.sleep(0.002)
        with contextlib.suppress(OSError):
            os.kill(init_pid, signal.SIGKILL)


class Session:
    """One episode's sandboxed tool process: REPL-like calls, snapshots and rollback.

    Args:
        backend: ``"cadquery"``, ``"blender"`` or ``"scene"``.
        limits: resource limits; defaults to :class:`Limits()`.
        secrets: extra directories the session must not see (verifier data, task assets).
        isolation: the optional layers to try, of ``netns``, ``pidns``, ``mountns`` and ``uid``
            (default: all); ``rlimits`` and ``env`` are always on. Fewer layers are for machines
            where a layer misbehaves; what is actually active is in :attr:`layers`.
        snapshot_on_start: take snapshot 0 of the fresh state, so a breach in the first step can
            be rolled back without starting a new session.
    """

    def __init__(
        self,
        backend: str,
        limits: Limits | None = None,
        *,
        secrets: tuple[str, ...] = (),
        isolation: tuple[str, ...] = OPTIONAL_LAYERS,
        snapshot_on_start: bool = True,
    ) -> None:
        unknown = set(isolation) - set(OPTIONAL_LAYERS)
        if unknown:
            raise ValueError(
                f"unknown isolation layers {sorted(unknown)}; known: {OPTIONAL_LAYERS}"
            )
        self.isolation = tuple(isolation)
        self.backend = backend
        self.limits = limits or Limits()
        self.secrets = tuple(str(Path(s).resolve()) for s in (*_default_secrets(), *secrets))
        self.restarts = 0
        self._snapshots: dict[int, _Snapshot] = {}
        self._next_snapshot = 0
        self._seq = 0
        self._closed = False
        self._snapshot_on_start = snapshot_on_start
        self._finalizer: weakref.finalize | None = None
        self._start()

    # -- lifecycle ------------------------------------------------------------------------------
    def _start(self) -> None:
        zygote = get_zygote(self.backend)
        self.zygote_pid = zygote.pid
        self.workspace = tempfile.mkdtemp(prefix="session-", dir=default_run_dir())
        os.chmod(self.workspace, 0o755)
        spec = {
            "workspace": self.workspace,
            "hidden": list(DEFAULT_HIDDEN),
            "isolation": list(self.isolation),
            "secrets": list(self.secrets),
        }
        self._control, self._worker = zygote.spawn(spec, self.limits)
        self._exits: dict[int, int] = {}
        self._control_closed = False
        self.init_pid: int | None = None
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        hello: dict[str, Any] = {}
        try:
            while not hello:
                message, _ = protocol.recv(self._control, deadline=deadline)
                if message.get("event") == "init":
                    self.init_pid = int(message["pid"])
                elif message.get("event") == "hello":
                    hello = message
            ready, _ = protocol.recv(self._worker, deadline=deadline)
        except protocol.ChannelError as exc:
            self._teardown()
            raise SandboxError(f"the {self.backend} session failed to start: {exc}") from None
        self.layers: list[str] = list(hello.get("layers", []))
        self.warnings: list[str] = list(hello.get("warnings", []))
        for message in self.warnings:
            _warn_once(f"toolgym sandbox: {message}")
        self.worker_pid = int(ready["pid"])
        self._finalizer = weakref.finalize(
            self, _close_session, self._control, [self._worker], self.init_pid
        )
        if self._snapshot_on_start:
            self.snapshot()

    def _teardown(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
        _close_session(
            self._control,
            [self._worker, *(s.sock for s in self._snapshots.values())],
            self.init_pid,
        )
        self._snapshots.clear()
        shutil.rmtree(self.workspace, ignore_errors=True)

    def close(self) -> None:
        """End the session: every process it started is killed and reaped; idempotent."""
        if not self._closed:
            self._closed = True
            self._teardown()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def info(self) -> dict[str, Any]:
        """Active isolation layers, warnings, workspace, snapshots and restart count."""
        return {
            "backend": self.backend,
            "layers": list(self.layers),
            "warnings": list(self.warnings),
            "workspace": self.workspace,
            "snapshots": sorted(self._snapshots),
            "restarts": self.restarts,
        }

    # -- calls ----------------------------------------------------------------------------------
    def run(
        self,
        code: str,
        *,
        fetch: tuple[str, ...] | list[str] = (),
        timeout: float | None = None,
        filename: str = "<script>",
    ) -> CallResult:
        """Run ``code`` in the session's namespace; ``fetch`` names values to return as data."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        message = {"op": "exec", "code": code, "fetch": list(fetch), "filename": filename}
        return self._result(message, timeout)

    def request(
        self, name: str, args: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallResult:
        """Call a backend request (``tessellate``, ``export``, ``render``, ...) on the session."""
        return self._result({"op": "request", "name": name, "args": args or {}}, timeout)

    def snapshot(self) -> int:
        """Freeze the current state; returns an id for :meth:`rollback`."""
        self._check_open()
        try:
            reply, fds = self._call({"op": "snapshot"}, self.limits.wall_s)
        except _WorkerDied as died:
            self._recover()
            raise SandboxError(f"snapshot failed: {died.error.message}") from None
        if not reply.get("ok") or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"snapshot failed: {reply.get('error')}")
        sock = socket.socket(fileno=fds[0])
        try:
            announce, _ = protocol.recv(sock, deadline=time.monotonic() + SETUP_TIMEOUT_S)
        except protocol.ChannelError as exc:
            sock.close()
            raise SandboxError(f"snapshot failed: {exc}") from None
        snapshot_id = self._next_snapshot
        self._next_snapshot += 1
        self._snapshots[snapshot_id] = _Snapshot(sock, int(announce.get("pid", 0)))
        if len(self._snapshots) > self.limits.max_snapshots:
            oldest = min(i for i in self._snapshots if i != 0)
            self.drop_snapshot(oldest)
        return snapshot_id

    def drop_snapshot(self, snapshot_id: int) -> None:
        """Forget a snapshot and end its process."""
        snap = self._snapshots.pop(snapshot_id, None)
        if snap is not None:
            snap.sock.close()  # the parked process exits on EOF
            self._control_send({"op": "kill", "pids": [snap.pid]})
            self._reap_in_worker([snap.pid])

    def rollback(self, snapshot_id: int) -> None:
        """Return the session to exactly the state saved by :meth:`snapshot`."""
        self._check_open()
        if snapshot_id not in self._snapshots:
            raise KeyError(f"no snapshot {snapshot_id}; have {sorted(self._snapshots)}")
        self._kill_worker()
        if not self._resume(snapshot_id):
            self._restart()
            raise SandboxError(f"snapshot {snapshot_id} was lost; the session was restarted empty")

    # -- internals ------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this session is closed")

    def _result(self, message: dict[str, Any], timeout: float | None) -> CallResult:
        self._check_open()
        started = time.perf_counter()
        try:
            reply, fds = self._call(message, timeout or self.limits.wall_s)
        except _WorkerDied as died:
            result = CallResult(ok=False, error=died.error)
            result.restored_to, result.state_lost = self._recover()
            result.wall_s = time.perf_counter() - started
            return result
        for fd in fds:
            os.close(fd)
        result = result_from_reply(reply)
        self._sweep(reply.get("processes"))
        result.wall_s = time.perf_counter() - started
        return result

    def _call(self, message: dict[str, Any], timeout: float) -> tuple[dict[str, Any], list[int]]:
        """Send one request to the worker and wait for its reply, watching for its death."""
        deadline = time.monotonic() + timeout
        self._seq += 1
        try:
            protocol.send(self._worker, {**message, "seq": self._seq})
        except OSError:
            raise _WorkerDied(self._death_cause()) from None
        max_bytes = self.limits.artifact_bytes + _FRAME_OVERHEAD
        while True:
            remaining = deadline - time.monotonic()
            readable = (
                select.select([self._worker, self._control], [], [], max(remaining, 0))[0]
                if remaining > 0
                else []
            )
            if not readable:
                self._kill_worker()
                raise _WorkerDied(
                    CallError(
                        "timeout", f"the call ran past {timeout:g} s (limit wall_s)", "wall_s"
                    )
                )
            if self._control in readable:
                self._read_control(deadline=time.monotonic() + 1.0)
                if self.worker_pid in self._exits and self._worker not in readable:
                    raise _WorkerDied(describe_exit(self._exits.pop(self.worker_pid)))
            if self._worker in readable:
                try:
                    reply, fds = protocol.recv(self._worker, deadline=deadline, max_bytes=max_bytes)
                    if reply.get("seq") == self._seq:
                        return reply, fds
                    for fd in fds:  # a stale or forged frame: not the reply to this call
                        os.close(fd)
                except protocol.ChannelTimeout:
                    self._kill_worker()
                    raise _WorkerDied(
                        CallError(
                            "timeout", f"the call ran past {timeout:g} s (limit wall_s)", "wall_s"
                        )
                    ) from None
                except protocol.ChannelClosed:
                    raise _WorkerDied(self._death_cause()) from None
                except protocol.ProtocolViolation as exc:
                    self._kill_worker()
                    limit = "artifact_bytes" if "exceeds the limit" in str(exc) else None
                    kind = "artifact_bytes" if limit else "protocol"
                    raise _WorkerDied(
                        CallError(kind, f"the session sent invalid data: {exc}", limit)
                    ) from None

    def _read_control(self, deadline: float) -> dict[str, Any] | None:
        """Read one control message; exit events are recorded, replies returned."""
        try:
            message, fds = protocol.recv(self._control, deadline=deadline)
        except protocol.ChannelClosed:
            self._control_closed = True
            return None
        except protocol.ChannelError:
            return None
        for fd in fds:
            os.close(fd)
        if message.get("event") == "exit":
            self._exits[int(message["pid"])] = int(message["status"])
            return None
        return message

    def _control_send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Send a control op and wait for its reply (recording exit events on the way)."""
        try:
            protocol.send(self._control, message)
        except OSError:
            return None
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while time.monotonic() < deadline and not self._control_closed:
            reply = self._read_control(deadline)
            if reply is not None:
                return reply
        return None

    def _await_exit(self, pid: int) -> int | None:
        """Wait briefly for the init to report ``pid``'s exit; its wait status, or ``None``."""
        deadline = time.monotonic() + EXIT_STATUS_WAIT_S
        while pid not in self._exits and not self._control_closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._control], [], [], remaining)[0]:
                break
            self._read_control(deadline)
        return self._exits.pop(pid, None)

    def _death_cause(self) -> CallError:
        return describe_exit(self._await_exit(self.worker_pid))

    def _kill_worker(self) -> None:
        self._control_send({"op": "kill", "pids": [self.worker_pid]})
        self._await_exit(self.worker_pid)
        self._worker.close()

    def _sweep(self, processes: Any) -> None:
        expected = 2 + len(self._snapshots)  # init + worker + parked snapshots
        if "pidns" in self.layers and isinstance(processes, int) and processes <= expected:
            return
        keep = [self.worker_pid, *(s.pid for s in self._snapshots.values())]
        reply = self._control_send({"op": "sweep", "keep": keep}) or {}
        killed = as_list(reply.get("killed"))
        if killed:
            self._reap_in_worker(killed)

    def _reap_in_worker(self, pids: list[int]) -> None:
        """The worker waits for those of ``pids`` that are its children; the init the rest."""
        with contextlib.suppress(_WorkerDied):
            self._call({"op": "reap", "pids": pids}, self.limits.wall_s)

    def _resume(self, snapshot_id: int) -> bool:
        """Make snapshot ``snapshot_id`` the live worker; a fork of it parks in its place."""
        snap = self._snapshots[snapshot_id]
        ours, theirs = socket.socketpair()
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        try:
            protocol.send(snap.sock, {"op": "resume"}, [theirs.fileno()])
            theirs.close()
            ready, _ = protocol.recv(ours, deadline=deadline)
            announce, _ = protocol.recv(snap.sock, deadline=deadline)
            self.worker_pid, snap.pid = int(ready["pid"]), int(announce["pid"])
        except (OSError, protocol.ChannelError, KeyError, ValueError, TypeError):
            theirs.close()
            ours.close()
            self._snapshots.pop(snapshot_id).sock.close()
            return False
        self._worker = ours
        return True

    def _recover(self) -> tuple[int | None, bool]:
        """After a breach: resume the latest live snapshot, else start afresh (state lost)."""
        self._worker.close()
        # Whatever the dead worker left running goes first: it may hold every process slot.
        self._control_send({"op": "sweep", "keep": [s.pid for s in self._snapshots.values()]})
        for snapshot_id in sorted(self._snapshots, reverse=True):
            if self._resume(snapshot_id):
                return snapshot_id, False
        self._restart()
        return None, True

    def _restart(self) -> None:
        self._teardown()
        self.restarts += 1
        self._start()


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """A missing isolation layer is worth one warning per process, not one per session."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _default_secrets() -> tuple[str, ...]:
    """Task assets are never visible to sessions."""
    assets = Path(__file__).resolve().parents[2] / "assets"
    return (str(assets),) if assets.is_dir() else ()
