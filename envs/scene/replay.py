"""The session a logic task's steps are replayed in, kept between an episode's steps.

A logic task is verified by replaying the agent's steps on a fresh copy of the level in a logic
session (the agent's own session is never asked: it answers for nothing), then playing held-out
paths on the trusted simulator. Starting that session and loading the level cost more than most
replays, so :class:`LogicReplay` loads the level once and snapshots it; each later verification
of the same level rolls back to that snapshot, which ran no agent code and is as clean as a
fresh session (its files come back with it, and agent code cannot trace or change a parked
snapshot). A snapshot that is gone (the agent's code may kill it) means a fresh session.
"""

from __future__ import annotations

import copy
from typing import Any

from toolgym.envs.sandbox import Limits, SandboxError, Session


class LogicReplay:
    """A logic session holding one level, rolled back to it before each replay."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.session: Session | None = None
        self._level: dict[str, Any] | None = None
        self._clean: int | None = None  # the snapshot taken just after the level loaded

    def fresh(self, level: dict[str, Any]) -> tuple[Session | None, str | None]:
        """A session holding ``level`` (frozen) and nothing else, or ``None`` and why not."""
        if self.session is not None and self._clean is not None and self._level == level:
            try:
                self.session.rollback(self._clean)
                return self.session, None
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
        self.session, self._level = session, copy.deepcopy(level)
        return session, None

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.session, self._level, self._clean = None, None, None
