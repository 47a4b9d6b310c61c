"""How long sandbox processes outlive their owner, killed with SIGKILL mid-step.

Each sample starts an owner process (a plain one with a session and two snapshots, or the main
process of a two-env ``AsyncVectorEnv``), waits until every sandbox worker sleeps in its step,
SIGKILLs the owner and times until the last sandbox process (zygote, init, worker, snapshots) is
dead. Usage: ``.venv/bin/python bench/sandbox_lifecycle.py --repeats 3``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from toolgym.envs.sandbox.reaper import descendants

PLAIN = """
    from toolgym.envs.sandbox import Limits, Session
    session = Session("cadquery", Limits(wall_s=300, cpu_s=300))
    session.snapshot()
    print(0, flush=True)
    session.run("import time\\ntime.sleep(300)")
"""
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
        envs.step_async(("import time\\\\ntime.sleep(25)",) * 2)
        time.sleep(300)
"""


def dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def asleep(pid: int) -> bool:
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def sample(script: str, sleepers: int, folder: Path) -> tuple[float, int]:
    """Seconds from the owner's SIGKILL until its sandbox is dead, and how many processes."""
    path = folder / "owner.py"
    path.write_text(textwrap.dedent(script))
    env = {**os.environ, "TOOLGYM_RUN_DIR": str(folder / "run")}
    owner = subprocess.Popen(
        [sys.executable, str(path)], env=env, stdout=subprocess.PIPE, text=True
    )
    roots = [int(p) for p in owner.stdout.readline().split() if p != "0"] or [owner.pid]

    def sandbox() -> set[int]:
        return {p for root in roots for p in descendants(root)}

    deadline = time.monotonic() + 300
    while sum(asleep(p) for p in sandbox()) < sleepers and time.monotonic() < deadline:
        time.sleep(0.01)
    processes = sandbox()
    owner.kill()
    killed = time.monotonic()
    owner.wait()
    while not all(dead(p) for p in processes):
        time.sleep(0.005)
    gone = time.monotonic() - killed
    for root in roots:  # vector workers end on their own; do not leave them to the next sample
        while root != owner.pid and not dead(root) and time.monotonic() - killed < 120:
            time.sleep(0.05)
    return gone, len(processes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# sandbox lifecycle bench: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
        f"Python {platform.python_version()}"
    )
    for name, script, sleepers in (("plain", PLAIN, 1), ("AsyncVectorEnv", VECTOR, 2)):
        times, counts = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:
                gone, count = sample(script, sleepers, Path(folder))
            times.append(gone)
            counts.append(count)
        print(
            f"{name}: {max(counts)} sandbox processes dead {statistics.median(times):.3f} s "
            f"(median; max {max(times):.3f} s) after the owner's SIGKILL"
        )


if __name__ == "__main__":
    main()
