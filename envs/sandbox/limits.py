"""Resource limits for sandbox sessions.

Every limit has a default that suits a CAD or scene script; environments and users override them per
session. A breach ends the call with a structured error naming the limit, and the session is
replaced from its latest snapshot so the episode can go on.
"""

from __future__ import annotations

import dataclasses
from typing import Any

MiB = 1024 * 1024
# Descriptors the sandbox itself may need beyond a script's share: its channel, the output
# capture, a snapshot's or a render's pipes while a backend request runs.
OWN_FILES = 64


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-session limits.

    Attributes:
        wall_s: wall-clock seconds one call may take (script or backend request).
        cpu_s: CPU seconds one call may use, per process (``RLIMIT_CPU``, reset before each call).
        memory_mb: address space the session may grow by beyond the tool's own footprint, in MiB
            (``RLIMIT_AS`` set to the zygote's virtual size plus this).
        max_processes: processes (and threads) a script may start, on top of the sandbox's own
            (the worker and its threads, the parked snapshots): the ``max_processes + 1``-th
            fails (``EAGAIN``), naming the limit. It is the soft ``RLIMIT_NPROC`` set before
            each script; the hard one, ``max_processes + max_snapshots + 8``, also bounds a
            script that raises its own soft limit.
        open_files: file descriptors (files, sockets, pipes) a script may open on top of those
            the session holds when the call starts: the ``open_files + 1``-th fails
            (``EMFILE``), naming the limit. It is the soft ``RLIMIT_NOFILE`` set before each
            script; the hard one, the worker's own descriptors plus ``open_files`` plus
            :data:`OWN_FILES`, also bounds files a script keeps open across calls and a script
            that raises its own soft limit.
        output_bytes: bytes of stdout and of stderr kept per call; the rest is counted and dropped.
        artifact_bytes: largest message a session may send back (meshes, images, exports).
        file_bytes: largest file a session may write, and the cap on its captured output stream
            (``RLIMIT_FSIZE``: a write past it fails with ``EFBIG``, naming the limit).
        max_snapshots: snapshots kept per session; the oldest (after the initial one) is dropped.
        workspace_bytes: bytes all of a session's writable files may hold together (its
            workspace, ``/tmp`` and ``/dev/shm``); a write beyond fails with ``ENOSPC``.
        snapshot_bytes: bytes the snapshots' copies of those files may hold together. A file
            unchanged since the previous snapshot is a hard link and costs nothing; when a new
            copy does not fit, the oldest snapshots (never the first) are dropped to make room,
            and a snapshot that still does not fit fails. So a session's files never hold more
            than ``workspace_bytes + snapshot_bytes`` of memory (both are ``tmpfs``).
    """

    wall_s: float = 30.0
    cpu_s: float = 30.0
    memory_mb: int = 2048
    max_processes: int = 32
    open_files: int = 256
    output_bytes: int = 64 * 1024
    artifact_bytes: int = 64 * MiB
    file_bytes: int = 256 * MiB
    max_snapshots: int = 64
    workspace_bytes: int = 256 * MiB
    snapshot_bytes: int = 256 * MiB

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{field.name} must be a positive number, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        return cls(**data)
