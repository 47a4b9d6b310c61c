"""Shared fixtures: real sandbox sessions on the real tools."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.sandbox.reaper import descendants


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_pytest_tmp(tmp_path_factory):
    """SB3's models make a log folder under /tmp on every ``learn()`` unless told where."""
    previous = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))
    yield
    if previous is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = previous


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


def dead(pid: int) -> bool:
    """Gone, or a zombie (the machine's init may reap orphans late: they hold nothing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def outer_pid(session: Session, inner: int) -> int:
    """The pid, as we see it, of the session's process whose pid inside the session is ``inner``."""
    for pid in live_processes(session, settle_s=0):
        status = Path(f"/proc/{pid}/status").read_text()
        nspid = next(line for line in status.splitlines() if line.startswith("NSpid:"))
        if int(nspid.split()[-1]) == inner:
            return pid
    raise LookupError(inner)


def wait_until(condition, timeout_s: float = 20.0, what: str = "condition") -> None:
    """Poll ``condition`` until it holds; fail after ``timeout_s`` (a generous bound, not a
    measurement: the outcome asserted never depends on how long it took)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def wait_for_server(url: str, server: subprocess.Popen) -> None:
    """Wait until the server process ``server`` answers ``GET url/health``; fail, with its
    stderr, if it exits first."""
    import httpx

    def healthy():
        try:
            return httpx.get(url + "/health").status_code == 200
        except httpx.TransportError:
            return server.poll() is not None

    wait_until(healthy, 120, "the server")
    assert server.poll() is None, server.stderr.read()


def in_syscall(pid: int, name: str) -> bool:
    """Whether process ``pid`` is blocked in the kernel function ``name`` (its wchan)."""
    try:
        return name in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


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


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache_dir(tmp_path_factory):
    """References cached on disk go to a per-test-run folder, never the user's cache."""
    os.environ["TOOLGYM_CACHE_DIR"] = str(tmp_path_factory.mktemp("toolgym-cache"))
    yield


# "A sphere 38 mm in diameter, centred at (24, 18, -16.5) mm."
SPHERE = "primitives/primitive/train-170"


def trainer_spaces(view_size: int = 16, max_steps: int = 4, depth: bool = False):
    """The sphere task under ``TrainerSpaces`` with a grammar that has a part tool, derived
    values and stop; ``depth``: an image-only prompt, the env's depth and the policy's
    measured numbers."""
    import gymnasium as gym

    from toolgym.agents.trainer.peer_spaces import TrainerSpaces
    from toolgym.agents.trainer.policy import PolicyConfig
    from toolgym.envs.cadquery.tools import registry
    from toolgym.envs.grammar import Grammar, suite_ranges
    from toolgym.envs.tasks.suites import get_suite

    calls = [c for t in get_suite("primitives").split("train") for c in t.tool_calls]
    grammar = Grammar(
        registry,
        suite_ranges(registry, calls),
        tools=["add_sphere", "fillet_edges"],
        derived={"add_sphere.z": ["prev_top"]},
        stop=True,
    )
    looking = {"depth": True, "prompt_form": "image"} if depth else {}
    inner = gym.make(
        "toolgym/CadQuery-v0",
        task=SPHERE,
        action_mode="tool",
        max_steps=max_steps,
        view_size=view_size,
        **looking,
    )
    policy = PolicyConfig(
        prompt_bytes=64, feedback_bytes=32, max_numbers=8, depth=depth, measure=depth
    )
    return TrainerSpaces(inner, grammar, policy)
