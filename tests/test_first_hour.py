"""What a new user meets in the first hour: Ctrl-C, checked options, messages, progress."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOOLGYM = str(Path(sys.executable).with_name("toolgym"))
DEMO_SUITE = str(Path(__file__).resolve().parents[1] / "assets/cadquery/demo/first-tools.toml")


def interrupt(args: list[str], marker: str, cwd: Path, timeout: float = 600) -> tuple[int, str]:
    """Run ``toolgym ARGS`` in a pseudo-terminal, press Ctrl-C once ``marker`` is printed, and
    return the exit code and everything printed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal's foreground process, Ctrl-C raising KeyboardInterrupt
        os.chdir(cwd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(TOOLGYM, [TOOLGYM, *args], {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
    output, sent = b"", False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        if not sent and marker in ANSI.sub("", output.decode("utf-8", "replace")):
            os.write(fd, b"\x03")
            sent = True
    else:
        os.kill(pid, signal.SIGKILL)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    text = ANSI.sub("", output.decode("utf-8", "replace").replace("\r\n", "\n"))
    assert sent, f"{marker!r} never appeared:\n{text}"
    return os.waitstatus_to_exitcode(status), text


def test_ctrl_c_during_run_prints_the_finished_episodes(tmp_path: Path) -> None:
    code, text = interrupt(
        ["run", "--agent", "oracle", "--suite", "curated", "--episodes", "6", "--json"],
        '"task": ', tmp_path,
    )  # fmt: skip
    assert code == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    finished = text.count('"task": ')
    assert 1 <= finished < 6
    assert f"interrupted after {finished} finished episode" in text, text


def test_ctrl_c_during_train_says_how_to_resume(tmp_path: Path) -> None:
    args = [
        "train", "--suite", DEMO_SUITE, "--steps", "160", "--num-steps", "8", "--max-steps",
        "1", "--out", "run", "--no-resume",
    ]  # fmt: skip
    # The workers are running once PPO starts: each also receives the terminal's SIGINT.
    code, text = interrupt(args, "PPO: 10 iterations", tmp_path)
    assert code == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    resume = [line for line in text.splitlines() if "resume with" in line]
    assert len(resume) == 1, text
    assert resume[0].endswith(
        f"toolgym train --suite {DEMO_SUITE} --steps 160 --num-steps 8 --max-steps 1 --out run"
    ), resume
