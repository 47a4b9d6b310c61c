"""The session a logic task's steps are replayed in, kept between an episode's steps.

A logic task is verified by replaying the agent's steps on a fresh copy of the level in a logic
session (the agent's own session is never asked: it answers for nothing), then playing held-out
paths on the trusted simulator. Starting that session and loading the level cost more than most
replays, so :class:`LogicReplay` loads the level once and snapshots it; each later verification
of the same level rolls back to that snapshot, which ran no agent code and is as clean as a
fresh session (its files come back with it, and agent code cannot trace or change a parked
snapshot). The return starts as soon as a replay's plays are done and runs in the background
while the caller scores them. A snapshot that is gone (the agent's code may kill it) means a
fresh session.
"""

from __future__ import annotations

import copy
from typing import Any

from toolgym.envs.sandbox import Limits, SandboxError, Session
from toolgym.envs.sandbox.rewind import Rewind


class LogicReplay:
    """A logic session holding one level, rolled back to it before each replay (the return
    starts in the background as soon as a replay's plays are done: :meth:`release`)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._session: Session | None = None
        self._level: dict[str, Any] | None = None
        self._clean: int | None = None  # the snapshot taken just after the level loaded
        self._rewind, self._rewinding = Rewind(), False
        self._at_level = False  # the session is back at its level, untouched since

    @property
    def session(self) -> Session | None:
        """The session once started, after any return to its level in progress."""
        self._settle()
        return self._session

    def fresh(self, level: dict[str, Any]) -> tuple[Session | None, str | None]:
        """A session holding ``level`` (frozen) and nothing else, or ``None`` and why not."""
        self._settle()
        session, at_level, self._at_level = self._session, self._at_level, False
        if session is not None and self._clean is not None and self._level == level:
            if at_level:
                return session, None
            try:
                session.rollback(self._clean)
                return session, None
            except SandboxError:  # the snapshot is gone: start afresh
                pass
        self.close()
        session = Session("scene", self.limits)
        loaded = session.request("load", {"description": level, "frozen": True})
        if not loaded.ok:
            session.close()
            return None, f"the level did not load: {loaded.feedback()}"
        try:
            self._clean = session.snapshot()
        except SandboxError:  # used once, as a fresh session would be
            self._clean = None
        self._session, self._level = session, copy.deepcopy(level)
        return session, None

    def release(self) -> None:
        """A replay is done with the session: start its return to the level now."""
        if self._session is not None and self._clean is not None and not self._rewinding:
            self._rewind.start(self._session, self._clean)
            self._rewinding = True

    def _settle(self) -> None:
        if self._rewinding:
            self._rewinding = False
            self._at_level = self._rewind.wait() is None

    def close(self) -> None:
        self._settle()
        if self._session is not None:
            self._session.close()
        self._session, self._level, self._clean, self._at_level = None, None, None, False
