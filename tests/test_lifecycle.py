"""Zygotes and sessions live exactly as long as their owner: a killed zygote is reaped and never
named again, no log or image is left in the run directory, and every sandbox process is gone
moments after the process that owns it dies, also mid-step inside ``AsyncVectorEnv``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import dead, descendants, in_syscall, wait_until
from toolgym.envs.sandbox import Session

# Dead within this long of the owner's death. The promise is 1 s; the margin is for a busy machine
# (a zygote that shuts its interpreter down takes 6 s quietly, and a step in progress 30 s).
GONE_WITHIN_S = 3.0


def python(script: str, run_dir: Path) -> subprocess.Popen:
    """Run ``script`` from a file (forkserver children import its ``__main__``)."""
    env = {**os.environ, "TOOLGYM_RUN_DIR": str(run_dir)}
    path = run_dir.parent / f"{run_dir.name}-script.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.Popen(
        [sys.executable, str(path)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_killed_zygote_is_reaped_and_never_named_again():
    with Session("cadquery", snapshot_on_start=False) as first:
        old = first.zygote_pid
        assert old is not None and not dead(old)
        os.kill(old, signal.SIGKILL)
        wait_until(lambda: dead(old), what="the zygote to die")
        assert first.run("x = 1").ok  # sessions do not need their zygote
        assert not os.path.exists(f"/proc/{old}")  # reaped: no zombie
        assert first.zygote_pid is None  # never the dead one's pid
        with Session("cadquery", snapshot_on_start=False) as second:
            new = second.zygote_pid
            assert new is not None and new != old and not dead(new)
            assert first.zygote_pid == new


@pytest.mark.parametrize("ending", ["exit", "SIGKILL"])
def test_blender_zygote_leaves_no_log_or_image(tmp_path, ending):
    script = """
        import sys
        from toolgym.envs.sandbox import Session
        session = Session("blender", snapshot_on_start=False)
        assert session.run("import bpy\\nbpy.ops.mesh.primitive_cube_add()").ok
        print(session.zygote_pid, flush=True)
        sys.stdin.readline()
        session.close()
    """
    process = python(script, tmp_path)
    zygote = int(process.stdout.readline())
    assert (tmp_path / f"zygote-blender-{process.pid}.log").exists()  # while it runs
    if ending == "SIGKILL":
        process.kill()
    else:
        process.stdin.write("go\n")
        process.stdin.flush()
    process.wait(timeout=60)
    wait_until(lambda: dead(zygote), what="the zygote to leave")
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert left == [], left


CHANNEL_FIRST = """
    import os
    import signal
    import sys
    import time
    from toolgym.envs.sandbox import Session
    from toolgym.envs.sandbox.zygotes import get_zygote
    session = Session("cadquery", snapshot_on_start=False)
    assert session.run("x = 1").ok
    print(session.zygote_pid, flush=True)
    sys.stdin.readline()
    get_zygote("cadquery")._sock.close()  # the zygote's channel closes first...
    time.sleep(2.0)
    os.kill(os.getpid(), signal.SIGKILL)  # ...and its owner dies a moment later
"""


def test_an_owner_whose_channel_closes_before_it_dies_takes_its_sessions_along(tmp_path):
    # A killed process's sockets close before its pidfd reports the exit: the zygote, woken by
    # its channel, must not leave the sessions (and their directories) to outlive it.
    process = python(CHANNEL_FIRST, tmp_path)
    zygote = int(process.stdout.readline())
    sandbox = descendants(zygote)
    assert sandbox  # the session's init and worker
    process.stdin.write("go\n")
    process.stdin.flush()
    wait_until(lambda: dead(zygote), what="the zygote to leave")
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert left == [], left  # removed by the zygote on its way out, after its owner's death
    assert process.wait(timeout=60) == -signal.SIGKILL
    wait_until(lambda: all(dead(p) for p in sandbox), what="the sessions to die")


OWNER = """
    import time
    from toolgym.envs.sandbox import Limits, Session
    session = Session("cadquery", Limits(wall_s=300, cpu_s=300))
    session.snapshot()
    print("ready", flush=True)
    session.run("import time\\ntime.sleep(300)")
"""


@pytest.mark.timing
def test_sandbox_processes_die_with_their_owner_mid_step(tmp_path):
    process = python(OWNER, tmp_path)
    assert process.stdout.readline().strip() == "ready"
    wait_until(lambda: any(in_syscall(p, "nanosleep") for p in descendants(process.pid)))
    sandbox = descendants(process.pid)
    assert len(sandbox) >= 4  # zygote, init, worker, two snapshots
    process.kill()
    process.wait()
    killed = time.monotonic()
    wait_until(lambda: all(dead(p) for p in sandbox), what="the sandbox to die")
    assert time.monotonic() - killed < GONE_WITHIN_S


VECTOR = """
    import time

    import gymnasium as gym

    import toolgym


    def make():
        return gym.make("toolgym/CadQuery-v0", task="procedural/plate_holes/train-0")


    if __name__ == "__main__":
        envs = gym.vector.AsyncVectorEnv([make, make], shared_memory=False, context="forkserver")
        envs.reset(seed=0)
        print(" ".join(str(p.pid) for p in envs.processes), flush=True)
        envs.step_async(("import time\\ntime.sleep(25)",) * 2)
        time.sleep(300)
"""


@pytest.mark.timing
def test_sandbox_processes_die_with_an_async_vector_env_killed_mid_step(tmp_path):
    process = python(VECTOR, tmp_path)
    workers = [int(p) for p in process.stdout.readline().split()]
    assert len(workers) == 2, process.stderr.read()

    def sandbox() -> set[int]:
        return {p for w in workers for p in descendants(w)}

    wait_until(lambda: sum(in_syscall(p, "nanosleep") for p in sandbox()) >= 2, timeout_s=60)
    before = sandbox()
    process.kill()
    process.wait()
    killed = time.monotonic()
    wait_until(lambda: all(dead(p) for p in before), what="the sandbox to die")
    assert time.monotonic() - killed < GONE_WITHIN_S
    # The orphaned vector workers may start a zygote while they recover: it leaves at once, and
    # the workers end when their step's answer finds no one to take it.
    wait_until(lambda: all(dead(p) for p in [*workers, *sandbox()]), timeout_s=60)
