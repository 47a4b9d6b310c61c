"""Snapshot and rollback return exactly the earlier state, also after booleans and crashes."""

from __future__ import annotations

import pytest

from conftest import assert_no_strays
from toolgym.envs.sandbox import Limits, SandboxError, Session, SnapshotLost


def test_rollback_returns_exactly_the_earlier_state(cq_session):
    cq_session.run("x = 1\npart = cq.Workplane().box(10, 10, 10)")
    first = cq_session.snapshot()
    cq_session.run("x = 2\npart = part.faces('>Z').workplane().hole(5)\nextra = 'later'")
    second = cq_session.snapshot()
    cq_session.run("x = 3\ndel part")

    cq_session.rollback(first)
    state = cq_session.run("v = part.val().Volume()", fetch=["x", "v"])
    assert state.results == {"x": 1, "v": pytest.approx(1000.0)}
    assert cq_session.run("extra").error.kind == "exception"  # not defined yet at `first`

    cq_session.rollback(second)
    state = cq_session.run("v = part.val().Volume()", fetch=["x", "v", "extra"])
    assert state.results["x"] == 2 and state.results["extra"] == "later"
    assert state.results["v"] == pytest.approx(1000.0 - 3.141592653589793 * 2.5**2 * 10)

    cq_session.rollback(first)  # a snapshot can be resumed more than once
    assert cq_session.run("y = x", fetch=["y"]).results == {"y": 1}
    assert_no_strays(cq_session)


def test_snapshots_taken_after_booleans_do_not_hang(cq_session):
    """OpenCASCADE's parallel booleans would leave a dead thread pool in forked snapshots."""
    script = (
        "part = cq.Workplane().box(10, 10, 10).union(cq.Workplane().sphere(6)).edges().fillet(0.5)"
    )
    assert cq_session.run(script).ok
    snap = cq_session.snapshot()
    cq_session.rollback(snap)
    again = cq_session.run(
        "part = part.cut(cq.Workplane().cylinder(30, 2))\nv = part.val().Volume()",
        fetch=["v"],
        timeout=20,
    )
    assert again.ok, again.feedback()
    assert again.results["v"] > 0


def test_rollback_after_a_crash_and_state_lost_when_snapshots_die():
    with Session("cadquery", Limits(wall_s=5)) as session:
        session.run("x = 'kept'")
        snap = session.snapshot()
        crashed = session.run("import ctypes; ctypes.string_at(0)")
        assert crashed.error.kind == "crash" and crashed.error.signal == "SIGSEGV"
        assert crashed.restored_to == snap
        assert session.run("y = x", fetch=["y"]).results == {"y": "kept"}
        # The script can kill its own snapshots (same uid); the next breach then restarts empty.
        assert session.run("import os, signal\nos.kill(-1, signal.SIGKILL)").ok
        wiped = session.run("import os\nos._exit(1)")
        assert wiped.error.kind == "exited" and wiped.state_lost and wiped.restored_to is None
        assert session.restarts == 1
        assert session.run("z = 1", fetch=["z"]).results == {"z": 1}
        with pytest.raises(SnapshotLost) as lost:  # it died with the old session
            session.rollback(snap)
        assert lost.value.state_lost and lost.value.restored_to is None
        assert session.run("z", fetch=["z"]).error.kind == "exception"  # and says so: empty
        with pytest.raises(KeyError):
            session.rollback(10**6)  # never given


def test_old_snapshots_are_dropped_beyond_the_limit():
    with Session("scene", Limits(max_snapshots=3)) as session:
        ids = [session.snapshot() for _ in range(5)]
        assert session.info["snapshots"] == [0, ids[-2], ids[-1]]
        assert_no_strays(session)


def test_lost_snapshot_raises_and_session_goes_on(cq_session):
    snap = cq_session.snapshot()
    pid = cq_session._snapshots[snap].pid
    cq_session._control_send({"op": "kill", "pids": [pid]})
    with pytest.raises(SandboxError, match="lost"):
        cq_session.rollback(snap)
    assert cq_session.run("a = 1", fetch=["a"]).results == {"a": 1}


def test_clear_is_a_fresh_session_without_new_processes():
    """What an env's reset does: the state, files and snapshots of the episode go, the session's
    init (and so its namespaces) stays; then it works as a new session would."""
    # What a fresh session's writable folders hold: the allow-list's mount points may show in
    # /tmp (a checkout under /tmp, say), so the comparison is with them, not with nothing.
    listing = "import os\nseen = [*map(os.listdir, ['/workspace', '/tmp', '/dev/shm'])]"
    with Session("cadquery", Limits(wall_s=20)) as session:
        init = session.init_pid
        fresh = session.run(listing, fetch=["seen"]).results["seen"]
        session.run(
            "x = 1\nimport subprocess\nopen('/workspace/a.txt', 'w').write('a')\n"
            "open('/tmp/b.txt', 'w').write('b')\nopen('/dev/shm/c', 'w').write('c')\n"
            "child = subprocess.Popen(['sleep', '600'])"
        )
        for _ in range(3):
            session.snapshot()
        session.clear()
        assert session.init_pid == init and session.restarts == 0
        assert len(session.info["snapshots"]) == 1  # the fresh state's, for the first step
        seen = session.run(f"kept = 'x' in globals()\n{listing}", fetch=["kept", "seen"])
        assert seen.results == {"kept": False, "seen": fresh}
        assert "b.txt" not in fresh[1] and fresh[0] == [] and fresh[2] == []
        assert_no_strays(session)
        # An episode's rollback still goes back to the fresh state, and later clears too.
        session.run("y = 2")
        session.rollback(session.info["snapshots"][0])
        assert session.run("y", fetch=["y"]).error.kind == "exception"
        session.clear()
        assert session.run("z = 3", fetch=["z"]).results == {"z": 3}
        assert_no_strays(session)


def test_clear_after_the_session_was_killed_starts_afresh():
    with Session("cadquery", Limits(wall_s=20)) as session:
        session.run("x = 1")
        assert session.run("import os, signal\nos.kill(-1, signal.SIGKILL)").ok  # snapshots too
        session.clear()
        assert session.run("x", fetch=["x"]).error.kind == "exception"
        assert session.run("z = 3", fetch=["z"]).results == {"z": 3}
        assert_no_strays(session)
