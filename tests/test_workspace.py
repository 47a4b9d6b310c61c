"""The workspace is part of a snapshot, has a quota, and nothing of a session outlives it: not its
directory (on any exit path: a failed start, exit without close, SIGTERM), nor an empty log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environment
from conftest import wait_until
from toolgym.envs.sandbox import Limits, Session

LISTING = (  # files of the scratch file system only (a checkout below /tmp is bound on top)
    "import os\n"
    "files = {}\n"
    "for top in TOPS + [os.getcwd()]:\n"
    "    device = os.stat(top).st_dev\n"
    "    for dirpath, dirnames, names in os.walk(top):\n"
    "        dirnames[:] = [d for d in dirnames\n"
    "                       if os.stat(os.path.join(dirpath, d)).st_dev == device]\n"
    "        for name in names:\n"
    "            path = os.path.join(dirpath, name)\n"
    "            if os.stat(path).st_dev == device:\n"
    "                files[path] = open(path).read()\n"
)


def files(session: Session) -> dict[str, str]:
    """The session's scratch files and their text (with the allow-list: /tmp and /dev/shm too)."""
    tops = ["/tmp", "/dev/shm"] if "mountns" in session.layers else []
    result = session.run(LISTING.replace("TOPS", repr(tops)), fetch=["files"])
    assert result.ok, result.feedback()
    return {k: v for k, v in result.results["files"].items() if "/.cache/" not in k}


@pytest.mark.parametrize("isolation", [None, ()], ids=["allow-list", "no namespaces"])
def test_snapshots_cover_the_workspace(isolation):
    kwargs = {} if isolation is None else {"isolation": isolation}
    with Session("cadquery", Limits(wall_s=10), **kwargs) as session:
        shared = ["/tmp/kept.txt", "/dev/shm/kept.txt"] if isolation is None else []
        scratch = ["kept.txt", *shared]
        write = "for p in {!r}:\n    open(p, 'w').write({!r})\n"
        assert session.run(write.format(scratch, "first")).ok
        snap = session.snapshot()
        before = files(session)
        assert session.run(write.format([*scratch, "later.txt"], "second")).ok
        assert files(session) != before
        session.rollback(snap)
        assert files(session) == before  # edits undone, new files gone
        crash = session.run(write.format(["after.txt"], "x") + "import os\nos._exit(1)")
        assert crash.restored_to == snap and files(session) == before


def test_a_failed_step_leaves_no_file_behind():
    env = gym.make("toolgym/CadQuery-v0", task="procedural/plate_holes/train-0")
    try:
        env.reset(seed=0)
        env.step("result = cq.Workplane().box(10, 10, 10)\nopen('good.txt', 'w').write('1')")
        _, _, _, _, info = env.step("open('bad.txt', 'w').write('1')\nraise ValueError")
        assert "ValueError" in info["error"]
        left = files(env.unwrapped.session)
        assert [Path(p).name for p in left] == ["good.txt"], left
    finally:
        env.close()


@pytest.mark.parametrize("isolation", [None, ()], ids=["allow-list", "no namespaces"])
def test_the_workspace_has_a_total_quota(isolation):
    kwargs = {} if isolation is None else {"isolation": isolation}
    limits = Limits(wall_s=20, workspace_bytes=64 * 1024 * 1024)
    with Session("cadquery", limits, **kwargs) as session:
        assert session.run("open('a.bin', 'wb').write(b'x' * 30_000_000)").ok
        snap = session.snapshot()
        over = session.run(
            "for name in ('b.bin', 'c.bin'):\n    open(name, 'wb').write(b'x' * 30_000_000)"
        )
        assert over.error.kind == "workspace_bytes" and over.error.limit == "workspace_bytes"
        if isolation is None:  # the write itself failed, and the session lives on
            assert "No space left" in over.error.message
            session.rollback(snap)
        else:  # found after the call, which was undone
            assert over.restored_to == snap
        sizes = session.run("import os\nn = sorted(os.listdir())", fetch=["n"]).results["n"]
        assert [n for n in sizes if n.endswith(".bin")] == ["a.bin"]


def run_dir_entries(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.iterdir() if p.name.startswith(("session-", "zygote")))


def python(script: str, run_dir: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "TOOLGYM_RUN_DIR": str(run_dir)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


@pytest.mark.parametrize("ending", ["no close", "KeyboardInterrupt", "SIGTERM"])
def test_nothing_is_left_after_the_process_ends(tmp_path, ending):
    script = f"""
        import sys, time
        from toolgym.envs.sandbox import Session
        session = Session("cadquery")
        session.run("open('x', 'w').write('x')")
        print("ready", flush=True)
        sys.stdin.readline()  # until the test has seen the session's directory
        if {ending!r} == "KeyboardInterrupt":
            raise KeyboardInterrupt
        if {ending!r} == "SIGTERM":
            time.sleep(600)
    """
    process = python(script, tmp_path, stdin=subprocess.PIPE)
    assert process.stdout.readline().strip() == "ready"
    assert any(n.startswith("session-") for n in run_dir_entries(tmp_path))
    if ending == "SIGTERM":
        process.send_signal(signal.SIGTERM)
    else:
        process.stdin.write("go\n")
        process.stdin.flush()
    process.wait(timeout=60)
    # The session's init removes its directory when the parent's channel closes.
    wait_until(lambda: run_dir_entries(tmp_path) == [], what=str(run_dir_entries(tmp_path)))


def test_failed_starts_leave_no_directory_and_name_the_cause(tmp_path):
    script = """
        import resource, os
        from toolgym.envs.sandbox import SandboxError, Session, get_zygote
        get_zygote("cadquery")
        used = len(os.listdir("/proc/self/fd"))
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (used, hard))
        errors = []
        for _ in range(5):
            try:
                Session("cadquery")
            except SandboxError as exc:
                errors.append(str(exc))
        print(len(errors), errors[0] if errors else "")
    """
    process = python(script, tmp_path)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-2000:]
    count, _, message = out.strip().partition(" ")
    assert count == "5" and "too many open files" in message and "RLIMIT_NOFILE" in message, out
    assert run_dir_entries(tmp_path) == []


def test_fd_exhaustion_in_a_step_is_an_error_naming_the_cause(tmp_path):
    script = """
        import os, resource
        import gymnasium as gym
        import toolgym
        env = gym.make("toolgym/CadQuery-v0", task="procedural/plate_holes/train-0", max_steps=20)
        env.reset(seed=0)
        for _ in range(2):  # everything the steps load is loaded
            env.step("result = cq.Workplane().box(10, 10, 10)")
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) - 1, hard))
        # A step's script needs no new descriptor (its sessions are open), but its snapshot,
        # taken while the measurer rewinds (each briefly needs one), or the next rollback does:
        # whichever runs out names the cause, in that step's feedback or the next one's.
        obs, reward, _, _, info = env.step("result = cq.Workplane().box(20, 20, 20)")
        assert "error" not in info, info["error"]
        feedback = obs["feedback"]
        obs, reward, _, _, info = env.step("raise ValueError")  # a rollback, still without fds
        print(repr(feedback + obs["feedback"]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
        obs, reward, _, _, info = env.step("raise ValueError")
        obs, reward, _, _, info = env.step("result = cq.Workplane().box(30, 30, 30)")
        print(repr(info.get("error")))
        env.close()
    """
    process = python(script, tmp_path)
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err[-3000:]
    feedback, error = (eval(line) for line in out.strip().splitlines()[-2:])
    assert "RLIMIT_NOFILE" in feedback, feedback
    assert error is None  # and afterwards the env works again
    wait_until(lambda: run_dir_entries(tmp_path) == [], what=str(run_dir_entries(tmp_path)))


def snapshot_store_bytes(session: Session) -> int:
    """Bytes the session's snapshot copies hold, read from outside the session."""
    from toolgym.envs.sandbox import workspace

    if "mountns" in session.layers:
        info = os.statvfs(f"/proc/{session.init_pid}/root/.toolgym/snapshots")
        return (info.f_blocks - info.f_bfree) * info.f_frsize
    return workspace.usage(os.path.join(os.path.dirname(session.workspace), "snapshots"))


@pytest.mark.parametrize("isolation", [None, ()], ids=["allow-list", "no namespaces"])
def test_snapshot_copies_stay_within_their_budget(isolation):
    """A big file rewritten every step and snapshotted each time: the copies never hold more than
    ``snapshot_bytes``, older snapshots make room, and the latest one restores the latest file."""
    kwargs = {} if isolation is None else {"isolation": isolation}
    mib = 1 << 20
    limits = Limits(wall_s=60, workspace_bytes=8 * mib, snapshot_bytes=12 * mib)
    with Session("cadquery", limits, **kwargs) as session:
        for step in range(6):
            write = f"open('big.bin', 'wb').write(bytes([{step}]) * {5 * mib})"
            assert session.run(write).ok
            latest = session.snapshot()
            assert snapshot_store_bytes(session) <= limits.snapshot_bytes
        assert len(session.info["snapshots"]) <= 3  # the first, and at most two 5 MiB copies
        session.run("open('big.bin', 'wb').write(b'gone')")
        session.rollback(latest)
        read = "b = open('big.bin', 'rb').read()\nn, v = len(b), b[0]"
        back = session.run(read, fetch=["n", "v"])
        assert back.results == {"n": 5 * mib, "v": 5}, back.feedback()
