"""What a sandbox call returns: results and errors, read defensively from a session's reply."""

from __future__ import annotations

import dataclasses
import os
import signal
from typing import Any


class SandboxError(RuntimeError):
    """The sandbox itself failed (a zygote that cannot start, a session that cannot be made)."""


@dataclasses.dataclass(frozen=True)
class CallError:
    """Why a call failed.

    ``kind`` is one of: ``syntax``, ``exception``, ``exit`` (the script called ``sys.exit``),
    ``recursion``, ``memory``, ``timeout``, ``cpu_time``, ``artifact_bytes``, ``crash`` (killed by a
    signal, e.g. a segfault in the tool), ``exited`` (the process exited, e.g. ``os._exit``),
    ``request`` (unknown backend request), ``protocol`` (the session sent invalid data),
    ``workspace_bytes`` (the workspace is full), ``file_bytes`` (one file grew past its limit),
    ``processes`` (no more processes or threads: ``max_processes``), ``open_files`` (no more
    file descriptors: ``open_files``), ``snapshot`` (no snapshot
    could be forked),
    ``sandbox`` (the sandbox itself failed: no session could be started, say, for want of file
    descriptors; the message names the cause).
    ``limit`` names the :class:`Limits` field that was breached, if any.
    """

    kind: str
    message: str
    limit: str | None = None
    signal: str | None = None
    exit_code: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclasses.dataclass
class CallResult:
    """Outcome of one call on a session.

    Attributes:
        ok: the call completed without error.
        error: what went wrong, or ``None``.
        stdout, stderr: captured output (fd-level, so the tool's C output too), truncated to
            ``Limits.output_bytes``; ``stdout_dropped``/``stderr_dropped`` count bytes cut.
        traceback: the script's traceback, agent frames only.
        duration_s: seconds the script ran inside the worker.
        wall_s: seconds the whole call took as seen by the parent (overhead included).
        results: fetched names, as plain data; ``missing``: requested names the script never bound.
        value: the return value of a backend request.
        restored_to: after a breach, the snapshot the session was restored to (``None`` if none).
        state_lost: after a breach, no snapshot survived and a fresh session replaced the old one.
        recovery: set when a process had died before this call (killed from outside, say) and
            the session was brought back first, or could not be: what happened, in words. The
            call itself then ran on the state it says.
    """

    ok: bool
    error: CallError | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    traceback: str | None = None
    duration_s: float = 0.0
    wall_s: float = 0.0
    results: dict[str, Any] = dataclasses.field(default_factory=dict)
    missing: list[str] = dataclasses.field(default_factory=list)
    value: Any = None
    restored_to: int | None = None
    state_lost: bool = False
    recovery: str | None = None

    def feedback(self) -> str:
        """Human-readable summary for an agent: the error and the tail of stderr."""
        parts = [f"note: {self.recovery}"] if self.recovery else []
        if self.error:
            parts.append(f"error ({self.error.kind}): {self.error.message}")
        if self.traceback:
            parts.append(self.traceback.strip())
        if self.stderr.strip():
            parts.append(self.stderr.strip()[-2000:])
        return "\n".join(parts)


def error_from_reply(reply: dict[str, Any]) -> CallError | None:
    error = reply.get("error")
    if not error:
        return None
    if not isinstance(error, dict):
        return CallError("protocol", f"invalid error report from session: {error!r:.200}")
    return CallError(
        kind=str(error.get("kind", "exception")),
        message=str(error.get("message", "")),
        limit=error.get("limit") if isinstance(error.get("limit"), str) else None,
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def describe_exit(status: int | None) -> CallError:
    """Turn a wait status of a dead worker into a :class:`CallError`."""
    if status is None:
        return CallError("crash", "the session process died (exit status unknown)")
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if number == signal.SIGXCPU:
            return CallError(
                "cpu_time", "the script used up its CPU time (limit cpu_s)", "cpu_s", name
            )
        return CallError("crash", f"the session process was killed by {name}", signal=name)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return CallError("exited", f"the session process exited with status {code}", exit_code=code)


def result_from_reply(reply: dict[str, Any]) -> CallResult:
    """A :class:`CallResult` from a worker's reply, taking only well-typed fields (the reply is
    untrusted: a script can forge one)."""
    result = CallResult(
        ok=bool(reply.get("ok")),
        error=error_from_reply(reply),
        stdout=_str(reply.get("stdout")),
        stderr=_str(reply.get("stderr")),
        stdout_dropped=_int(reply.get("stdout_dropped")),
        stderr_dropped=_int(reply.get("stderr_dropped")),
        traceback=reply.get("traceback") if isinstance(reply.get("traceback"), str) else None,
        duration_s=_float(reply.get("duration_s")),
        results=reply.get("results") if isinstance(reply.get("results"), dict) else {},
        missing=[m for m in as_list(reply.get("missing")) if isinstance(m, str)],
        value=reply.get("value"),
    )
    if result.ok and result.error is not None:
        result.ok = False
    return result
