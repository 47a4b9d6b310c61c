"""Shared fixtures: real sandbox sessions on the real tools."""

from __future__ import annotations

import os
import time

import pytest

from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.sandbox.reaper import descendants


def live_processes(session: Session, settle_s: float = 2.0) -> set[int]:
    """PIDs (as the parent sees them) of every process of the session but its init, zombies too.

    Processes that were just killed may linger as zombies for a moment, until the session's init
    reaps them; wait for that, but not forever: a zombie that stays is a bug.
    """
    deadline = time.monotonic() + settle_s
    while True:
        alive = set(descendants(session.init_pid))
        expected = 1 + len(session.info["snapshots"])  # the worker and the parked snapshots
        if len(alive) <= expected or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


def assert_no_strays(session: Session) -> None:
    processes = live_processes(session)
    expected = 1 + len(session.info["snapshots"])
    assert len(processes) == expected, f"{len(processes)} processes alive, expected {expected}"


@pytest.fixture
def cq_session():
    with Session("cadquery") as session:
        yield session


@pytest.fixture
def short_session():
    """A CadQuery session with tight limits, for containment tests."""
    limits = Limits(
        wall_s=4.0, cpu_s=1.0, memory_mb=512, max_processes=16, file_bytes=32 * 1024 * 1024
    )
    with Session("cadquery", limits) as session:
        yield session


@pytest.fixture(scope="session", autouse=True)
def _isolated_run_dir(tmp_path_factory):
    """Workspaces and zygote logs go to a per-test-run folder."""
    os.environ["TOOLGYM_RUN_DIR"] = str(tmp_path_factory.mktemp("toolgym-run"))
    yield
