"""A trusted session's return to its fresh state, in the background.

Sessions that run no agent code (a measurer, a scene reader) start each job from the snapshot
taken when they started, so that nothing one input did reaches the next. The return costs a
fork and a kill (tens of milliseconds); :class:`Rewind` runs it in a thread as soon as a job
is done, so that it overlaps the caller's own work, and the next job waits for it.
"""

from __future__ import annotations

import threading

from toolgym.envs.sandbox.client import Session, SnapshotLost


class Rewind:
    """One pending return of a session to its first snapshot (or a restart, without one), or to
    a given snapshot."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._failure: str | None = None

    def start(self, session: Session, snapshot_id: int | None = None) -> None:
        """Begin taking ``session`` back to its first snapshot (``snapshot_id``: to that one);
        nothing else may use the session until :meth:`wait` returns."""
        if self._thread is not None:  # an earlier return still running: its failure is kept
            self._thread.join()
        self._thread = threading.Thread(
            target=self._rewind, args=(session, snapshot_id), name="toolgym-rewind", daemon=True
        )
        self._thread.start()

    @property
    def pending(self) -> bool:
        """Whether a return was started and not yet waited for."""
        return self._thread is not None

    def wait(self) -> str | None:
        """Wait for the pending return; why it failed (the caller then restarts or replaces
        the session), or ``None``."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        failure, self._failure = self._failure, None
        return failure

    def _rewind(self, session: Session, snapshot_id: int | None) -> None:
        try:
            target = snapshot_id
            if target is None:
                target = min(session.info["snapshots"], default=None)
            if target is None:
                session.restart()
            else:
                session.rollback(target)
        except SnapshotLost as exc:
            if snapshot_id is not None:  # the state it was to return to is gone
                self._failure = str(exc)
            # else the fresh snapshot died: the session started afresh, which is as good
        except Exception as exc:  # the caller's next job restarts or replaces the session
            self._failure = f"{type(exc).__name__}: {exc}"
