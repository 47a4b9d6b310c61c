"""Parent side of the sandbox: sessions with calls, snapshots and rollback.

Everything a session sends is untrusted: frames are size-capped msgpack, never pickles, and any
misbehaviour (a crash, a hang, garbage on the wire) becomes a :class:`CallError` in the result while
the session is replaced from its latest snapshot. Exceptions are raised only for misuse of this API.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import shutil
import signal
import socket
import tempfile
import time
import warnings
import weakref
from collections import Counter
from typing import Any

from toolgym.envs.sandbox import protocol
from toolgym.envs.sandbox.isolation import OPTIONAL_LAYERS
from toolgym.envs.sandbox.limits import Limits
from toolgym.envs.sandbox.results import (
    CallError,
    CallResult,
    SandboxError,
    as_list,
    describe_exit,
    error_from_reply,
    result_from_reply,
)
from toolgym.envs.sandbox.workspace import usage as workspace_usage
from toolgym.envs.sandbox.zygotes import (
    SETUP_TIMEOUT_S,
    default_run_dir,
    get_zygote,
    live_zygote_pid,
    reap_zygotes,
)

EXIT_STATUS_WAIT_S = 2.0
_FRAME_OVERHEAD = 1 << 20


@dataclasses.dataclass
class _Snapshot:
    sock: socket.socket
    pid: int


class _WorkerDied(Exception):
    def __init__(self, error: CallError) -> None:
        self.error = error


class SnapshotLost(SandboxError):
    """The snapshot asked for had died; the session went back to an older one, or started afresh.

    Attributes:
        restored_to: the snapshot the session now holds the state of (``None``: a fresh session).
        state_lost: no older snapshot survived either; the session restarted empty.
    """

    def __init__(self, message: str, restored_to: int | None, state_lost: bool) -> None:
        super().__init__(message)
        self.restored_to, self.state_lost = restored_to, state_lost


@dataclasses.dataclass
class _Handles:
    """What a session holds on the parent's side, released once: by close() or, if the session
    is dropped or the interpreter exits without close(), by a finaliser."""

    session_dir: str
    control: socket.socket | None = None
    worker: socket.socket | None = None
    init_pid: int | None = None
    snapshots: dict[int, _Snapshot] = dataclasses.field(default_factory=dict)

    def release(self) -> None:
        socks = [self.worker, *(s.sock for s in self.snapshots.values())]
        if self.control is not None:
            _close_session(self.control, [s for s in socks if s is not None], self.init_pid)
        else:
            for sock in socks:
                if sock is not None:
                    sock.close()
        self.snapshots.clear()
        self.control = self.worker = None
        shutil.rmtree(self.session_dir, ignore_errors=True)


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


def describe_os_error(exc: OSError) -> str:
    """An OS error in words, naming the limit when it is running out of file descriptors."""
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return protocol.descriptor_shortage() or "too many open files"
    return exc.strerror or str(exc)


class Session:
    """One episode's sandboxed tool process: REPL-like calls, snapshots and rollback.

    A session sees only an allow-list of the machine's files (``filesystem.py``) and one writable
    scratch space (its workspace, ``/tmp``, ``/dev/shm``), which snapshots cover like the rest of
    its state. Calls never raise for anything the script or a dying process does: the result says
    what happened, including state that was lost (:attr:`CallResult.recovery`).

    Args:
        backend: ``"cadquery"``, ``"blender"`` or ``"scene"``.
        limits: resource limits; defaults to :class:`Limits()`.
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
        self.restarts = 0
        # What the session was asked, by kind: "exec", each request's name, "snapshot",
        # "rollback", "clear", "restart"; what tests and benchmarks count per step.
        self.calls: Counter[str] = Counter()
        self.layers: list[str] = []
        self.warnings: list[str] = []
        self.allowed_paths: list[str] = []
        self._next_snapshot = 0
        self._seq = 0
        self._closed = False
        self._broken: str | None = None  # why the last restart failed; retried on the next call
        self._snapshot_on_start = snapshot_on_start
        self._fresh: int | None = None  # the snapshot of the state the session started in
        self._h = _Handles("")
        self._start()

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def init_pid(self) -> int | None:
        return self._h.init_pid

    @property
    def zygote_pid(self) -> int | None:
        """The pid of the backend's zygote now, ``None`` if it has died (then reaped): never a
        dead process's pid, which the system may give to another. A session does not need its
        zygote once started; the next session starts a fresh one."""
        return live_zygote_pid(self.backend)

    @property
    def _snapshots(self) -> dict[int, _Snapshot]:
        return self._h.snapshots

    @property
    def _worker(self) -> socket.socket:
        assert self._h.worker is not None
        return self._h.worker

    @property
    def _control(self) -> socket.socket:
        assert self._h.control is not None
        return self._h.control

    def _start(self) -> None:
        """Fork a session from the zygote; on failure nothing is left behind (SandboxError)."""
        try:
            zygote = get_zygote(self.backend)
        except OSError as exc:
            cause = describe_os_error(exc)
            raise SandboxError(f"the {self.backend} zygote failed to start: {cause}") from None
        session_dir = tempfile.mkdtemp(prefix="session-", dir=default_run_dir())
        self._h = handles = _Handles(session_dir)
        self._finalizer = weakref.finalize(self, handles.release)
        self.workspace = os.path.join(session_dir, "workspace")  # as the session sees it
        spec = {"session_dir": session_dir, "isolation": list(self.isolation)}
        self._exits: dict[int, int] = {}
        self._control_closed = False
        try:
            handles.control, handles.worker = zygote.spawn(spec, self.limits)
            deadline = time.monotonic() + SETUP_TIMEOUT_S
            hello: dict[str, Any] = {}
            while not hello:
                message, _ = protocol.recv(handles.control, deadline=deadline)
                if message.get("event") == "init":
                    handles.init_pid = int(message["pid"])
                elif message.get("event") == "hello":
                    hello = message
            ready, _ = protocol.recv(handles.worker, deadline=deadline)
            self.worker_pid = int(ready["pid"])
        except (OSError, protocol.ChannelError, SandboxError, KeyError, ValueError) as exc:
            self._finalizer()
            cause = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
            raise SandboxError(f"the {self.backend} session failed to start: {cause}") from None
        self.layers = [str(x) for x in as_list(hello.get("layers"))]
        self.warnings = [str(x) for x in as_list(hello.get("warnings"))]
        self.allowed_paths = [str(x) for x in as_list(hello.get("allowed"))]
        self.workspace = str(hello.get("workspace", self.workspace))
        for message in self.warnings:
            _warn_once(f"toolgym sandbox: {message}")
        self._broken = None
        self._fresh = None
        if self._snapshot_on_start:
            self._fresh = self.snapshot()

    def _teardown(self) -> None:
        self._finalizer()

    def close(self) -> None:
        """End the session: every process it started is killed and reaped, and its directory
        removed; idempotent."""
        if not self._closed:
            self._closed = True
            self._teardown()

    def clear(self) -> None:
        """Back to the state the session started in, as a new session would be, without starting
        processes: the worker is replaced by a fork of the snapshot taken at the start (its
        workspace, ``/tmp`` and ``/dev/shm`` put back) and every other snapshot is dropped. An
        episode's reset costs milliseconds instead of a session's start and close. Without that
        snapshot (``snapshot_on_start=False``, or it died) the session restarts instead.

        Raises :class:`SandboxError` if no session can be started (the cause is named)."""
        self._check_open()
        self.calls["clear"] += 1
        if self._broken is not None or self._found_dead() is not None:
            self._restart()  # nothing of this session is worth keeping
            return
        fresh = self._fresh
        if fresh is None or fresh not in self._snapshots:
            self._restart()
            return
        # One kill for the worker and every other snapshot. Their exits are awaited (the init
        # reaps them, adopting those the worker forked): a process not yet reaped still counts
        # against the uid's RLIMIT_NPROC, and the next script's max_processes must be exact.
        doomed = {i: snap for i, snap in self._snapshots.items() if i != fresh}
        for snapshot_id, snap in doomed.items():
            del self._snapshots[snapshot_id]
            snap.sock.close()
        pids = [self.worker_pid, *(snap.pid for snap in doomed.values())]
        self._control_send({"op": "kill", "pids": pids})
        for snapshot_id in doomed:
            self._control_send({"op": "discard", "id": snapshot_id})
        self._worker.close()
        for pid in pids:
            self._await_exit(pid)
        if not self._resume(fresh):  # the fresh state has died: start afresh
            self._restart()

    def restart(self) -> None:
        """Replace the session with a fresh one (state and snapshots are lost).

        Raises :class:`SandboxError` if no session can be started (the cause is named)."""
        self._check_open()
        self.calls["restart"] += 1
        self._restart()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def info(self) -> dict[str, Any]:
        """Active isolation layers, warnings, allowed paths, workspace, snapshots, restarts."""
        return {
            "backend": self.backend,
            "layers": list(self.layers),
            "warnings": list(self.warnings),
            "allowed_paths": list(self.allowed_paths),
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
        """Freeze the current state, workspace files included; returns an id for :meth:`rollback`.

        Raises :class:`SandboxError` naming the cause if no snapshot could be taken (the session
        is then still usable, holding the same state)."""
        self._check_open()
        self.calls["snapshot"] += 1
        self._ensure_running()
        try:
            reply, fds = self._call({"op": "snapshot"}, self.limits.wall_s)
        except _WorkerDied as died:
            self._recover()
            raise SandboxError(f"snapshot failed: {died.error.message}") from None
        except protocol.DescriptorsLost as exc:
            pid = exc.message.get("pid")
            if isinstance(pid, int):
                self._reap_in_worker([pid])  # the fork parked for nothing: no zombie is left
            raise SandboxError(f"snapshot failed: {exc}") from None
        if not reply.get("ok") or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            error = error_from_reply(reply)
            raise SandboxError(f"snapshot failed: {error.message if error else 'no channel'}")
        sock = socket.socket(fileno=fds[0])
        try:
            announce, _ = protocol.recv(sock, deadline=time.monotonic() + SETUP_TIMEOUT_S)
            pid = int(announce["pid"])
        except (protocol.ChannelError, KeyError, TypeError, ValueError) as exc:
            sock.close()
            raise SandboxError(f"snapshot failed: {exc}") from None
        snapshot_id = self._next_snapshot
        self._next_snapshot += 1
        self._snapshots[snapshot_id] = _Snapshot(sock, pid)
        self._save_files(snapshot_id)
        if len(self._snapshots) > self.limits.max_snapshots:
            oldest = min(i for i in self._snapshots if i not in (0, self._fresh))
            self.drop_snapshot(oldest)
        return snapshot_id

    def _save_files(self, snapshot_id: int) -> None:
        """Have the init copy the workspace for ``snapshot_id``; when the copies fill their store,
        older snapshots make room (never the first). Raises SandboxError if it still fails."""
        while True:
            earlier = [i for i in self._snapshots if i < snapshot_id]
            message = {"op": "save", "id": snapshot_id, "previous": max(earlier, default=None)}
            reply = self._control_send(message) or {"error": "the session's init did not answer"}
            if reply.get("ok"):
                return
            older = sorted(i for i in earlier if i != min(self._snapshots))
            if reply.get("error") != os.strerror(errno.ENOSPC) or not older:
                self.drop_snapshot(snapshot_id)
                raise SandboxError(f"snapshot failed: cannot copy the workspace: {reply['error']}")
            self.drop_snapshot(older[0])

    def drop_snapshot(self, snapshot_id: int) -> None:
        """Forget a snapshot and end its process."""
        snap = self._snapshots.pop(snapshot_id, None)
        if snap is not None:
            snap.sock.close()  # the parked process exits on EOF
            self._control_send({"op": "kill", "pids": [snap.pid]})
            self._control_send({"op": "discard", "id": snapshot_id})
            self._reap_in_worker([snap.pid])

    def rollback(self, snapshot_id: int) -> None:
        """Return the session to exactly the state saved by :meth:`snapshot`, workspace included.

        Raises ``KeyError`` for an id this session never gave. If that snapshot has died, the
        session goes back to the latest older one that lives, or starts afresh, and raises
        :class:`SnapshotLost` saying which; the session is usable either way."""
        self._check_open()
        self.calls["rollback"] += 1
        if not 0 <= snapshot_id < self._next_snapshot:
            raise KeyError(f"no snapshot {snapshot_id}; have {sorted(self._snapshots)}")
        self._ensure_running()
        if snapshot_id in self._snapshots:
            self._kill_worker()
            if self._resume(snapshot_id):
                return
        restored, lost = self._recover(before=snapshot_id)
        what = "the session restarted empty" if lost else f"it went back to snapshot {restored}"
        raise SnapshotLost(f"snapshot {snapshot_id} was lost; {what}", restored, lost)

    # -- internals ------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this session is closed")

    def _ensure_running(self) -> str | None:
        """Before a call: if the worker or the init died since the last one (killed from
        outside, say), bring the session back. Returns what happened, or ``None`` if nothing did.

        Raises SandboxError if no session can be started."""
        if self._broken is not None:
            self._restart()
            return "the sandbox had failed earlier; the session restarted empty"
        cause = self._found_dead()
        if cause is None:
            return None
        restored, lost = self._recover()
        if lost:
            return f"the session had died ({cause}); it restarted empty, so earlier state is lost"
        return f"the session's worker had died ({cause}); it was restored to snapshot {restored}"

    def _found_dead(self) -> str | None:
        """Why the worker is gone, without blocking; ``None`` if it still lives."""
        while not self._control_closed and protocol.readable([self._control], 0):
            self._read_control(deadline=time.monotonic() + 1.0)
        if self._control_closed:
            return "its init was killed"
        if self.worker_pid in self._exits:
            return describe_exit(self._exits.pop(self.worker_pid)).message
        try:
            if self._worker.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                return self._death_cause().message
        except BlockingIOError:
            pass
        except OSError as exc:
            return describe_os_error(exc)
        return None

    def _result(self, message: dict[str, Any], timeout: float | None) -> CallResult:
        self._check_open()
        self.calls[message["name"] if message["op"] == "request" else message["op"]] += 1
        reap_zygotes()  # one killed from outside is no zombie for longer than a call
        started = time.perf_counter()
        try:
            recovery = self._ensure_running()
        except SandboxError as exc:
            self._broken = str(exc)
            error = CallError("sandbox", f"the sandbox cannot run this call: {exc}")
            return CallResult(ok=False, error=error, state_lost=True)
        try:
            reply, fds = self._call(message, timeout or self.limits.wall_s)
        except (_WorkerDied, protocol.DescriptorsLost) as exc:
            if isinstance(exc, _WorkerDied):
                result = CallResult(ok=False, error=exc.error)
            else:
                result = CallResult(ok=False, error=CallError("sandbox", str(exc)))
                self._kill_worker()
            try:
                result.restored_to, result.state_lost = self._recover()
            except SandboxError as failed:
                self._broken = str(failed)
                result.state_lost = True
                result.recovery = f"the session could not be restarted: {failed}"
            result.recovery = result.recovery or recovery
            result.wall_s = time.perf_counter() - started
            return result
        for fd in fds:
            os.close(fd)
        result = result_from_reply(reply)
        result.recovery = recovery
        self._sweep(reply.get("processes"))
        self._check_quota(result)
        self._check_breach(reply, result)
        result.wall_s = time.perf_counter() - started
        return result

    def _check_quota(self, result: CallResult) -> None:
        """Without the allow-list's scratch file system nothing caps the workspace as it is
        written; check it after each call instead, and undo a call that overfilled it."""
        if "mountns" in self.layers:
            return
        used = workspace_usage(self.workspace)
        if used <= self.limits.workspace_bytes:
            return
        message = (
            f"the workspace holds {used} bytes, over the limit of "
            f"{self.limits.workspace_bytes} (limit workspace_bytes)"
        )
        result.ok, result.error = False, CallError("workspace_bytes", message, "workspace_bytes")
        self._kill_worker()
        result.restored_to, result.state_lost = self._recover()

    def _check_breach(self, reply: dict[str, Any], result: CallResult) -> None:
        """A worker that says it cannot go on (a script holds the descriptors it needs) is
        replaced from the latest snapshot, as after any breach. A forged flag costs the script
        only its own state."""
        error = reply.get("error")
        if result.error is None or not isinstance(error, dict) or error.get("restore") is not True:
            return
        self._kill_worker()
        result.restored_to, result.state_lost = self._recover()

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
                protocol.readable([self._worker, self._control], max(remaining, 0))
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
            if remaining <= 0 or not protocol.readable([self._control], remaining):
                break
            self._read_control(deadline)
        return self._exits.pop(pid, None)

    def _death_cause(self) -> CallError:
        return describe_exit(self._await_exit(self.worker_pid))

    def _kill_worker(self) -> None:
        if not self._control_closed:
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
        """Make snapshot ``snapshot_id`` the live worker, its workspace files put back; a fork of
        it parks in its place. ``False`` (and the snapshot forgotten) if it has died; raises
        SandboxError if this process cannot make the channel (out of file descriptors)."""
        snap = self._snapshots[snapshot_id]
        try:
            ours, theirs = socket.socketpair()
        except OSError as exc:  # our fault, not the snapshot's: keep it
            cause = describe_os_error(exc)
            raise SandboxError(f"cannot resume snapshot {snapshot_id}: {cause}") from None
        restored = self._control_send({"op": "restore", "id": snapshot_id}) or {}
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        try:
            if not restored.get("ok"):
                raise ValueError(restored.get("error"))
            protocol.send(snap.sock, {"op": "resume"}, [theirs.fileno()])
            theirs.close()
            ready, _ = protocol.recv(ours, deadline=deadline)
            announce, _ = protocol.recv(snap.sock, deadline=deadline)
            self.worker_pid, snap.pid = int(ready["pid"]), int(announce["pid"])
        except (OSError, protocol.ChannelError, KeyError, ValueError, TypeError):
            theirs.close()
            ours.close()
            self._snapshots.pop(snapshot_id).sock.close()
            self._control_send({"op": "discard", "id": snapshot_id})
            return False
        self._h.worker = ours
        return True

    def _recover(self, before: int | None = None) -> tuple[int | None, bool]:
        """After a breach or a death: resume the latest live snapshot (older than ``before`` if
        given), else start afresh (state lost). Returns ``(restored_to, state_lost)``.

        Raises SandboxError if no session can be started."""
        self._worker.close()
        if not self._control_closed:
            # What the dead worker left running goes first: it may hold every process slot.
            self._control_send({"op": "sweep", "keep": [s.pid for s in self._snapshots.values()]})
            for snapshot_id in sorted(self._snapshots, reverse=True):
                if (before is None or snapshot_id < before) and self._resume(snapshot_id):
                    return snapshot_id, False
        self._restart()
        return None, True

    def _restart(self) -> None:
        self._teardown()
        self.restarts += 1
        try:
            self._start()
        except SandboxError as exc:
            self._broken = str(exc)
            raise


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """A missing isolation layer is worth one warning per process, not one per session."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)
