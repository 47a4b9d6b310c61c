"""One `toolgym serve` under load: N concurrent sessions of a tool, each a client thread that
resets and steps through its task's reference calls (real sandbox work every step).

Reports per tool and N: the errors (none expected), the server's memory per session (the PSS of
the server and every process under it, sandboxes included, after the N sessions opened, less
before), the p50 and p99 latency of a reset and of a step as clients see them, and whether a
session left idle expired while the others were busy (its next step answered 404 "expired").

    .venv/bin/python bench/serve_load.py --tools cadquery --sessions 8 64 256
    .venv/bin/python bench/serve_load.py --tools cadquery blender scene --sessions 8
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import psutil

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.domains import get_domain
from toolgym.envs.serving.remote import RemoteEnv, RemoteError
from toolgym.envs.serving.sessions import reap_interval
from toolgym.envs.tasks.suites import get_suite

SUITES = {"cadquery": "primitives", "blender": "blender-moves", "scene": "scene-layout"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree_pss(pid: int) -> float:
    """The proportional set size of ``pid`` and every process under it, in MiB."""
    total = 0
    root = psutil.Process(pid)
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_full_info().pss
        except psutil.Error:
            continue  # a process that ended meanwhile
    return total / 2**20


def start_server(sessions: int, idle_s: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [
        str(Path(sys.executable).with_name("toolgym")), "serve", "--port", str(port),
        "--max-sessions", str(sessions), "--idle-s", str(idle_s),
    ]  # fmt: skip
    # Its output to a file: a pipe nobody reads fills, and the server stops at its next line.
    with open(Path(tempfile.gettempdir()) / f"serve-load-{port}.log", "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, url
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"toolgym serve did not start on {url}")


def client(url: str, env_id: str, task: Any, steps: int, opened: Any) -> dict[str, Any]:
    """One session: reset, then the task's reference calls in turn (reset again when the
    episode ends) until ``steps`` steps; waits at ``opened`` until every session has reset."""
    resets, step_times, errors = [], [], []
    env = RemoteEnv(url, env_id, task=task.id, action_mode="tool", timeout_s=600)
    try:
        started = time.perf_counter()
        try:
            env.reset(seed=0)
            resets.append(time.perf_counter() - started)
        finally:
            opened.wait()  # a failed reset still lets the others go on
        k = 0
        for _ in range(steps):
            started = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(task.tool_calls[k % len(task.tool_calls)])
            step_times.append(time.perf_counter() - started)
            k += 1
            if terminated or truncated:
                started = time.perf_counter()
                env.reset(seed=0)
                resets.append(time.perf_counter() - started)
                k = 0
    except Exception as exc:  # counted, not raised: the figure is how many there are
        errors.append(f"{type(exc).__name__}: {exc}"[:200])
    finally:
        env.close()
    return {"resets": resets, "steps": step_times, "errors": errors}


def run(tool: str, sessions: int, steps: int, idle_s: float) -> dict[str, Any]:
    env_id = get_domain(tool).env_id
    task = next(t for t in get_suite(SUITES[tool]).split("train") if t.tool_calls)
    server, url = start_server(sessions + 1, idle_s)
    try:
        before = tree_pss(server.pid)
        idle = RemoteEnv(url, env_id, task=task.id, action_mode="tool", timeout_s=600)
        idle.reset(seed=0)
        opened = threading.Barrier(sessions + 1)
        with ThreadPoolExecutor(sessions) as pool:
            futures = [
                pool.submit(client, url, env_id, task, steps, opened) for _ in range(sessions)
            ]
            opened.wait()  # every session open: the memory of N
            memory = (tree_pss(server.pid) - before) / sessions
            load_started = time.perf_counter()
            results = [f.result() for f in futures]
        load_s = time.perf_counter() - load_started
        # past its limit and the reaper's next look (reset before the others opened)
        time.sleep(max(0.0, idle_s + reap_interval(idle_s) + 2 - load_s))
        try:
            idle.step(task.tool_calls[0])
            expired = False
        except RemoteError as exc:
            expired = exc.status == 404 and "expired" in str(exc)
    finally:
        server.terminate()
        server.wait(timeout=60)
    resets = np.concatenate([r["resets"] for r in results])
    step_times = np.concatenate([r["steps"] for r in results])
    return {
        "tool": tool,
        "sessions": sessions,
        "errors": sum(len(r["errors"]) for r in results),
        "first_errors": [e for r in results for e in r["errors"]][:3],
        "mib_per_session": memory,
        "reset_p50_s": float(np.percentile(resets, 50)),
        "reset_p99_s": float(np.percentile(resets, 99)),
        "step_p50_s": float(np.percentile(step_times, 50)),
        "step_p99_s": float(np.percentile(step_times, 99)),
        "steps": int(step_times.size),
        "load_s": load_s,
        "idle_expired": expired,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", nargs="+", default=["cadquery"], choices=sorted(SUITES))
    parser.add_argument("--sessions", nargs="+", type=int, default=[8, 64])
    parser.add_argument("--steps", type=int, default=4, help="steps per session")
    parser.add_argument("--idle-s", type=float, default=30.0, help="the server's idle limit")
    parser.add_argument("--json", type=Path, default=Path("/tmp/serve_load.json"))
    args = parser.parse_args()
    print(f"load average at start {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs", flush=True)
    print("| tool | sessions | errors | MiB per session | reset p50 / p99 (s) | step p50 / p99 (s) "
          "| steps | idle session expired |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|", flush=True)
    rows = []
    for tool in args.tools:
        for sessions in args.sessions:
            r = run(tool, sessions, args.steps, args.idle_s)
            rows.append(r)
            print(
                f"| {tool} | {sessions} | {r['errors']} | {r['mib_per_session']:.1f} | "
                f"{r['reset_p50_s']:.2f} / {r['reset_p99_s']:.2f} | "
                f"{r['step_p50_s']:.2f} / {r['step_p99_s']:.2f} | {r['steps']} | "
                f"{'yes' if r['idle_expired'] else 'NO'} |",
                flush=True,
            )
    args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
