"""The session a logic task's steps are replayed in, kept between an episode's steps.

A logic task is verified by replaying the agent's steps on a fresh copy of the level in a logic
session (the agent's own session is never asked: it answers for nothing), then playing held-out
paths on the trusted simulator. Starting that session and loading the level cost more than most
replays, and replaying every earlier step again on each step costs more with each step, so
:class:`LogicReplay` keeps snapshots: the level just loaded, and the state after replaying the
last verifications' steps, each taken *before* any held-out path was played (so nothing a play
showed the agent's logic is in them). A verification starts from the longest kept run of its
own steps and replays only the rest: the same steps, run in the same order on the same level,
in a process forked from one that ran exactly those before. Agent code cannot trace or change a
parked snapshot, and its files come back with it. The return to the state the next step most
likely starts from runs in the background as soon as a replay's plays are done. A snapshot that
is gone (the agent's code may kill it) means a fresh session.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from toolgym.envs.sandbox import Limits, SandboxError, Session
from toolgym.envs.sandbox.rewind import Rewind

KEPT = 2  # replayed states kept besides the level: the last verification's, the one before


class LogicReplay:
    """A logic session holding one level and a few replayed states of it (see the module
    docstring). ``reuse=False``: one replay, in a session that keeps nothing (closed after)."""

    def __init__(self, limits: Limits, reuse: bool = True) -> None:
        self.limits, self.reuse = limits, reuse
        self._session: Session | None = None
        self._level: dict[str, Any] | None = None
        self._clean: int | None = None  # the snapshot taken just after the level loaded
        self._replayed: list[tuple[list[Any], int]] = []  # (steps replayed, snapshot), oldest first
        self._rewind, self._target = Rewind(), None  # the return in progress, and where to
        self._at: int | None = None  # the snapshot the session is back at, untouched since

    @property
    def session(self) -> Session | None:
        """The session once started, after any return in progress."""
        self._settle()
        return self._session

    def start(
        self, level: dict[str, Any], actions: Sequence[Any]
    ) -> tuple[Session | None, int, int | None, str | None]:
        """A session holding ``level`` with the first ``n`` of ``actions`` replayed (the longest
        run of them kept, else none): ``(session, n, the snapshot it is at or None, None)``, or
        ``(None, 0, None, why)``."""
        self._settle()
        at, self._at = self._at, None
        session = self._session
        if session is not None and self._clean is not None and self._level == level:
            done, snapshot = self._longest(actions)
            if at == snapshot:
                return session, done, snapshot, None
            try:
                session.rollback(snapshot)
                return session, done, snapshot, None
            except SandboxError:  # a kept state is gone: start afresh
                pass
        self.close()
        session = Session("scene", self.limits)
        loaded = session.request("load", {"description": level, "frozen": True})
        if not loaded.ok:
            session.close()
            return None, 0, None, f"the level did not load: {loaded.feedback()}"
        if self.reuse:
            try:
                self._clean = session.snapshot()
            except SandboxError:  # used once, as a fresh session would be
                self._clean = None
        self._session, self._level = session, copy.deepcopy(level)
        return session, 0, self._clean, None

    def _longest(self, actions: Sequence[Any]) -> tuple[int, int]:
        assert self._clean is not None
        best = (0, self._clean)
        for steps, snapshot in self._replayed:
            if len(steps) > best[0] and list(actions[: len(steps)]) == steps:
                best = (len(steps), snapshot)
        return best

    def keep(self, actions: Sequence[Any], snapshot: int) -> None:
        """``snapshot`` holds the level with ``actions`` replayed (and nothing played): a later
        replay that starts with them starts there."""
        if not self.reuse or self._session is None:
            return
        self._replayed = [(s, i) for s, i in self._replayed if i != snapshot]
        self._replayed.append((copy.deepcopy(list(actions)), snapshot))
        while len(self._replayed) > KEPT:
            _, oldest = self._replayed.pop(0)
            self._session.drop_snapshot(oldest)

    def release(self) -> None:
        """A replay is done with the session: start its return to the state the next one most
        likely starts from (the last kept)."""
        if self._session is None or self._clean is None or self._rewind.pending:
            return
        self._target = self._replayed[-1][1] if self._replayed else self._clean
        self._rewind.start(self._session, self._target)

    def _settle(self) -> None:
        if self._rewind.pending:
            self._at = self._target if self._rewind.wait() is None else None

    def close(self) -> None:
        self._settle()
        if self._session is not None:
            self._session.close()
        self._session, self._level, self._clean, self._at = None, None, None, None
        self._replayed = []
