"""The replay page in a real browser: Debian's headless Chromium, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: JSON messages on file descriptors 3 and 4).

The pipe needs nothing but the standard library: no WebDriver binary to match to the browser's
version, no websocket client, no port to pick. The page's step count, the → key, every image's
decoding and the absence of network requests are checked in the page itself.

Set ``TOOLGYM_REPLAY_SCREENSHOT=path.png`` to also copy the screenshot there (the README's
``tests/screenshots/replay-page.png`` is made this way).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs import RecordEpisodes
from toolgym.envs.recording.html import write_report
from toolgym.envs.recording.log import read_run

CHROMIUM = shutil.which("chromium")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,1000", "--remote-debugging-pipe",
)  # fmt: skip
# A bound, not a measurement: Chromium starts in a second or two even on a busy machine.
TIMEOUT_S = 120.0


class Chromium:
    """A headless Chromium and one page, over the DevTools pipe."""

    def __init__(self, profile: Path) -> None:
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4: move the child's ends there (high numbers first,
        # so the two dup2 calls cannot clobber each other).
        high_r = fcntl.fcntl(commands_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(replies_w, fcntl.F_DUPFD, 10)

        def wire() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in (commands_r, replies_w, high_r, high_w):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> Any:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def page(self, method: str, params: dict | None = None) -> Any:
        return self.send(method, params, self.session)

    def wait_for(self, event: str) -> dict[str, Any]:
        while True:
            for k, found in enumerate(self.events):
                if found.get("method") == event:
                    return self.events.pop(k)
            self.events.append(self._read())

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"].get("value")

    def press(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.page(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code},
            )

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            ready, _, _ = select.select(
                [self._replies], [], [], max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise TimeoutError("Chromium sent nothing")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._commands, self._replies):
            os.close(fd)


def inspect_page(html: Path, profile: Path, screenshot: Path) -> dict[str, Any]:
    """Open ``html``; return what the page shows before and after →; save a screenshot."""
    browser = Chromium(profile)
    try:
        for domain in ("Page.enable", "Network.enable", "Runtime.enable"):
            browser.page(domain)
        browser.page("Page.navigate", {"url": html.resolve().as_uri()})
        browser.wait_for("Page.loadEventFired")
        seen: dict[str, Any] = {
            "total": browser.evaluate("document.getElementById('step-total').textContent"),
            "first": browser.evaluate("document.getElementById('step-current').textContent"),
            "images": browser.evaluate(
                "Array.from(document.images)"
                ".map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
            ),
        }
        browser.press("ArrowRight", 39)
        seen["after_right"] = browser.evaluate(
            "[document.getElementById('step-current').textContent, "
            "document.querySelector('section.step:not([hidden])').dataset.step]"
        )
        shot = browser.page("Page.captureScreenshot", {"format": "png"})
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        seen["requests"] = [
            e["params"]["request"]["url"]
            for e in browser.events
            if e.get("method") == "Network.requestWillBeSent"
        ]
        return seen
    finally:
        browser.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, int]:
    """A real recording: three steps on a plate task (a wrong box, an error, the reference)."""
    run = tmp_path_factory.mktemp("run")
    env = RecordEpisodes(
        gym.make("toolgym/CadQuery-v0", task="curated/plate-four-holes", max_steps=3), run
    )
    try:
        env.reset(seed=0)
        task = env.unwrapped.task
        actions = ["result = cq.Workplane().box(60, 40, 6)", "result = cq.Workplane().nosuch()"]
        for action in [*actions, task.reference]:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    finally:
        env.close()
    episodes = read_run(run)
    out = run / "report.html"
    write_report(episodes, out)
    return out, len(episodes[0].steps)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make setup installs it)")
def test_replay_page_in_headless_chromium(report, tmp_path):
    html, steps = report
    assert steps == 3
    screenshot = tmp_path / "replay.png"
    seen = inspect_page(html, tmp_path / "profile", screenshot)
    assert seen["total"] == "3"
    assert seen["first"] == "1"
    assert seen["after_right"] == ["2", "2"]
    # Two views per step (the agent's, the target's) and the start's, all decoded.
    assert len(seen["images"]) == 2 * steps + 1
    assert all(complete and width > 0 and height > 0 for complete, width, height in seen["images"])
    # The page itself is the only request; images are data: URIs.
    assert [url for url in seen["requests"] if not url.startswith("data:")] == [html.as_uri()]
    assert screenshot.read_bytes().startswith(b"\x89PNG")
    if copy := os.environ.get("TOOLGYM_REPLAY_SCREENSHOT"):
        shutil.copyfile(screenshot, copy)
