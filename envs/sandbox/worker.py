"""The session worker: runs agent scripts and backend requests, REPL-style, inside the sandbox.

A worker keeps one namespace for the whole episode, so a script at step 2 sees what step 1 built.
Snapshots are forked copies of the worker, parked until the parent resumes one; a resumed snapshot
forks a fresh worker that carries on from exactly that state. Every process here may be running
agent code, so the parent treats every byte it sends as untrusted.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import os
import resource
import signal
import socket
import sys
import time
import traceback
from typing import Any

from toolgym.envs.sandbox import isolation, protocol
from toolgym.envs.sandbox.backend import Backend, Namespace
from toolgym.envs.sandbox.limits import OWN_FILES, Limits

_libc = ctypes.CDLL(None)
_PLAIN_DEPTH = 8
_REPR_CHARS = 300


def to_plain(value: Any, backend: Backend, depth: int = 0) -> Any:
    """Convert a script value to data the wire format carries (tool objects via the backend)."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if depth > _PLAIN_DEPTH:
        return {"type": type(value).__name__, "repr": "<nested too deep>"}
    if type(value).__module__ == "numpy" and getattr(value, "dtype", None) is not None:
        return value if value.dtype.kind in "biuf" else value.tolist()
    if isinstance(value, list | tuple):
        return [to_plain(v, backend, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v, backend, depth + 1) for k, v in value.items()}
    described = backend.describe(value)
    if described is not None:
        return described
    return {"type": type(value).__name__, "repr": repr(value)[:_REPR_CHARS]}


class _Capture:
    """Captures fds 1 and 2 (Python and C output alike) in memfds; keeps at most ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.fds = (os.memfd_create("stdout"), os.memfd_create("stderr"))
        self.devnull = os.open(os.devnull, os.O_RDWR)

    def start(self) -> None:
        for fd, target in zip(self.fds, (1, 2), strict=True):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)  # the offset is shared with the dup'ed fd
            os.dup2(fd, target)

    def stop(self) -> tuple[tuple[str, int], tuple[str, int]]:
        """Restore the streams; return ``(text, bytes_dropped)`` for stdout and stderr."""
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        _libc.fflush(None)
        out = []
        for fd, target in zip(self.fds, (1, 2), strict=True):
            os.dup2(self.devnull, target)
            size = os.fstat(fd).st_size
            kept = os.pread(fd, self.limit, 0)
            out.append((kept.decode("utf-8", "replace"), max(0, size - len(kept))))
        return out[0], out[1]

    def close(self) -> None:
        for fd in (*self.fds, self.devnull):
            os.close(fd)


def _error(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "message": message, **extra}


def _classify(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, SystemExit):
        return _error("exit", f"the script called sys.exit({exc.code!r})")
    if isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__:
        return _error("memory", "the script ran out of memory (limit memory_mb)", limit="memory_mb")
    if isinstance(exc, RecursionError):
        return _error("recursion", f"RecursionError: {exc}")
    if (isinstance(exc, OSError) and exc.errno == errno.EMFILE) or (
        _at_file_limit() and "Too many open files" in str(exc)
    ):
        return _error(
            "open_files",
            f"cannot open another file: {exc} (limit open_files)",
            limit="open_files",
        )
    if _at_process_limit() and (
        isinstance(exc, BlockingIOError) or "can't start new thread" in str(exc)
    ):
        return _error(
            "processes",
            f"cannot start another process: {exc} (limit max_processes)",
            limit="max_processes",
        )
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return _error(
            "file_bytes",
            f"a file grew past the limit of {_file_limit()} bytes: {exc} (limit file_bytes)",
            limit="file_bytes",
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return _error(
            "workspace_bytes",
            f"the workspace is full: {exc} (limit workspace_bytes)",
            limit="workspace_bytes",
        )
    if isinstance(exc, SyntaxError):
        return _error("syntax", f"SyntaxError: {exc.msg} (line {exc.lineno})")
    return _error("exception", f"{type(exc).__name__}: {exc}")


def _internal(exc: Exception) -> dict[str, Any]:
    """A fault in the worker's own code; out of descriptors, it is the script's breach (it
    holds them), and the session goes back to its latest snapshot."""
    if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
        message = f"the sandbox has no file descriptor left: {exc} (limit open_files)"
        return _error("open_files", message, limit="open_files", restore=True)
    return _error("internal", f"sandbox worker: {exc!r}")


def _without_sandbox_frames(exc: BaseException) -> Any:
    """The traceback from the first frame that is not the worker's own."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


class Worker:
    """One live worker process: a namespace, a channel to the parent and a backend."""

    def __init__(self, sock: socket.socket, backend: Backend, limits: Limits) -> None:
        self.sock = sock
        self.backend = backend
        self.limits = limits
        self.namespace: Namespace = backend.session_globals()
        self.requests = backend.requests()
        self.capture = _Capture(limits.output_bytes)
        self.pid = os.getpid()
        self.seq: Any = None  # echoed in each reply, so the parent never takes a stale one
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead

    # -- main loop ---------------------------------------------------------------------------
    def serve(self) -> None:
        protocol.send(self.sock, {"event": "ready", "pid": os.getpid()})
        handlers = {
            "exec": self._exec,
            "request": self._request,
            "snapshot": self._snapshot,
            "ping": lambda message: {"ok": True},
            "reap": self._reap,
        }
        while True:
            try:
                message, fds = protocol.recv(self.sock)
            except protocol.ChannelError:
                os._exit(0)
            for fd in fds:
                os.close(fd)
            for _ in isolation.reap_exited():  # dropped snapshots, the script's killed children
                pass
            self.seq = message.get("seq")
            handler = handlers.get(message.get("op"))
            if handler is None:
                reply = {
                    "ok": False,
                    "error": _error("protocol", f"unknown op {message.get('op')!r}"),
                }
            else:
                try:
                    reply = handler(message)
                except Exception as exc:  # a fault of ours must not end the session
                    reply = {"ok": False, "error": _internal(exc)}
            if reply is not None:
                self._reply(reply)

    def _reply(self, reply: dict[str, Any], fds: list[int] | None = None) -> None:
        reply["seq"] = self.seq
        try:
            frame = protocol.encode(reply)
        except (UnicodeError, TypeError, ValueError, OverflowError):
            # Text that is not valid UTF-8 (a lone surrogate in an exception's message, say) or
            # a value msgpack cannot carry: send what can be sent, the rest replaced.
            frame = protocol.encode(_sendable(reply))
        if len(frame) > self.limits.artifact_bytes:
            message = (
                f"the reply is {len(frame)} bytes, over the limit of "
                f"{self.limits.artifact_bytes} (limit artifact_bytes)"
            )
            error = _error("artifact_bytes", message, limit="artifact_bytes")
            frame = protocol.encode({"ok": False, "error": error, "seq": self.seq})
        protocol.send_frame(self.sock, frame, fds)

    # -- limits ------------------------------------------------------------------------------
    def _arm_cpu_limit(self) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = math.ceil(used + self.limits.cpu_s)  # RLIMIT_CPU counts whole seconds
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))

    def _arm_process_limit(self, extra: int) -> None:
        """Let the script start exactly ``extra`` more processes (or threads): the soft
        ``RLIMIT_NPROC`` becomes what this uid runs now (the worker, its threads and the parked
        snapshots) plus ``extra``. The hard limit, set by the init, still bounds a script that
        raises its own soft limit."""
        _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        soft = _count_tasks() + extra
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, hard))

    def _disarm_limits(self) -> None:
        """Backend requests (a render's threads and pipes, say) and snapshots get the hard
        limits' room."""
        for which in (resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE):
            _soft, hard = resource.getrlimit(which)
            resource.setrlimit(which, (hard, hard))

    def _arm_file_limit(self, extra: int) -> None:
        """Let the script open exactly ``extra`` more descriptors than this process holds now;
        the hard limit, set before the worker started, still bounds the session."""
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        soft = isolation.open_descriptors() + extra
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    def _run(self, fn: Any) -> tuple[Any, dict[str, Any]]:
        """Run ``fn`` with limits armed and output captured; return ``(value, report)``."""
        self._arm_cpu_limit()
        self.capture.start()
        started = time.perf_counter()
        value, error, tb = None, None, None
        try:
            value = fn()
        except BaseException as exc:
            error = _classify(exc)  # with the script's limits still armed, to name them
            tb = "".join(traceback.format_exception(type(exc), exc, _without_sandbox_frames(exc)))
        finally:
            # The worker's own work (capture, the reply) gets the room a script's share left.
            self._disarm_limits()
        if os.getpid() != self.pid:
            os._exit(0)  # a process the script forked must never act as the worker
        duration = time.perf_counter() - started
        (stdout, stdout_dropped), (stderr, stderr_dropped) = self.capture.stop()
        room = _descriptor_room()
        if room < OWN_FILES // 4:
            # The script keeps open what the sandbox needs to go on (it raised its own soft
            # limit): a breach, and the session goes back to its latest snapshot.
            message = (
                f"the script keeps the session's file descriptors open, {room} left for the "
                "sandbox (limit open_files)"
            )
            error = _error("open_files", message, limit="open_files", restore=True)
        report = {
            "ok": error is None,
            "error": error,
            "traceback": tb,
            "stdout": stdout,
            "stderr": stderr,
            "stdout_dropped": stdout_dropped,
            "stderr_dropped": stderr_dropped,
            "duration_s": duration,
            "processes": _count_processes() if room else None,
        }
        return value, report

    # -- ops ---------------------------------------------------------------------------------
    def _exec(self, message: dict[str, Any]) -> dict[str, Any]:
        code, filename = message.get("code"), str(message.get("filename", "<script>"))
        if not isinstance(code, str):
            return {"ok": False, "error": _error("protocol", "exec needs a string 'code'")}

        def run() -> None:
            self.backend.before_exec(self.namespace)
            self._arm_process_limit(self.limits.max_processes)
            self._arm_file_limit(self.limits.open_files)
            # dont_inherit: the script's own __future__ imports only, never the worker's (with
            # ``annotations`` inherited, bpy.props annotations would be strings and not register).
            exec(compile(code, filename, "exec", dont_inherit=True), self.namespace)

        _, report = self._run(run)
        results, missing = {}, []
        for name in message.get("fetch") or ():
            if name in self.namespace:
                results[name] = to_plain(self.namespace[name], self.backend)
            else:
                missing.append(name)
        report.update(results=results, missing=missing)
        return report

    def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        name, args = message.get("name"), message.get("args") or {}
        handler = self.requests.get(name)
        if handler is None:
            known = ", ".join(sorted(self.requests))
            return {
                "ok": False,
                "error": _error("request", f"unknown request {name!r}; known: {known}"),
            }
        value, report = self._run(lambda: handler(self.namespace, args))
        report["value"] = value
        return report

    def _reap(self, message: dict[str, Any]) -> dict[str, Any]:
        """Wait for children of ours that the init just killed, so no zombie is left."""
        for pid in message.get("pids") or ():
            if isinstance(pid, int) and pid > 1:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
        return {"ok": True}

    def _snapshot(self, message: dict[str, Any]) -> dict[str, Any] | None:
        try:
            parent_end, snapshot_end = socket.socketpair()
        except OSError as exc:  # e.g. out of file descriptors
            return {"ok": False, "error": _error("snapshot", f"cannot make its channel: {exc}")}
        try:
            child = os.fork()
        except OSError as exc:  # e.g. the process limit, filled by the script's children
            parent_end.close()
            snapshot_end.close()
            return {"ok": False, "error": _error("snapshot", f"cannot fork a snapshot: {exc}")}
        if child == 0:
            try:
                parent_end.close()
                self.sock.close()
                _park(self, snapshot_end)
            finally:
                os._exit(0)  # a snapshot must never fall back into the worker loop
        snapshot_end.close()
        self._reply({"ok": True, "pid": child}, [parent_end.fileno()])
        parent_end.close()
        return None


def _sendable(value: Any, depth: int = 0) -> Any:
    """``value`` with unencodable characters escaped (``\\udc80``) and unsendable objects as
    their repr."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_sendable(str(k)): _sendable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_sendable(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool | float | bytes):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    if type(value).__module__ == "numpy" and depth <= _PLAIN_DEPTH:
        try:
            protocol.encode({"v": value})
            return value
        except (TypeError, ValueError, OverflowError):
            pass
    return _sendable(repr(value)[:_REPR_CHARS])


def _at_process_limit() -> bool:
    """Whether this uid is at its process limit (fork then fails with EAGAIN)."""
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    try:
        return soft != resource.RLIM_INFINITY and _count_tasks() >= soft - 1
    except OSError:  # no descriptor left to read /proc with: not the process limit
        return False


def _at_file_limit() -> bool:
    """Whether this process is at its open-files limit (open then fails with EMFILE)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    try:
        used = isolation.open_descriptors()
    except OSError:  # listing needs a descriptor too
        return True
    return soft != resource.RLIM_INFINITY and used >= soft - 1


def _descriptor_room() -> int:
    """How many more descriptors this process may open (0 when it cannot even list them)."""
    try:
        used = isolation.open_descriptors()
    except OSError:
        return 0
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(0, soft - used) if soft != resource.RLIM_INFINITY else OWN_FILES


def _file_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_FSIZE)[0]


def _count_tasks() -> int:
    """Tasks (processes and their threads) of this real uid, as ``RLIMIT_NPROC`` counts them."""
    uid, total = os.getuid(), 0
    for _pid, status in isolation.proc_files("status"):
        fields = dict(
            line.split(b":", 1) for line in status.splitlines() if line.startswith((b"Uid", b"Thr"))
        )
        with contextlib.suppress(KeyError, ValueError, IndexError):
            if int(fields[b"Uid"].split()[0]) == uid:
                total += int(fields[b"Threads"])
    return total


def _count_processes() -> int:
    """Processes visible in /proc: the whole session when a PID namespace is active."""
    return sum(name.isdigit() for name in os.listdir("/proc"))


def _park(worker: Worker, sock: socket.socket) -> None:
    """Life of a snapshot: a frozen copy of the worker, waiting on its channel for 'resume'.

    On resume this very process becomes the live worker, and a fork of it parks in its place, so
    a resume costs one fork and the snapshot can be resumed again later.
    """
    protocol.send(sock, {"event": "snapshot", "pid": os.getpid()})
    while True:
        try:
            message, fds = protocol.recv(sock)
        except protocol.ChannelError:
            os._exit(0)
        if message.get("op") != "resume" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            if message.get("op") == "drop":
                os._exit(0)
            continue
        try:
            replacement = os.fork()
        except OSError:
            os.close(fds[0])  # the parent sees the channel close and gives up on this snapshot
            continue
        if replacement == 0:
            os.close(fds[0])
            protocol.send(sock, {"event": "snapshot", "pid": os.getpid()})
            continue
        sock.close()
        worker.capture.close()
        worker.sock = socket.socket(fileno=fds[0])
        worker.capture = _Capture(worker.limits.output_bytes)
        worker.pid = os.getpid()
        worker.serve()
        os._exit(0)
