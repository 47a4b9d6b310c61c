"""Sandbox latency benchmark: cold tool start vs warm session, per-call overhead, rollback.

Run::

    python bench/sandbox.py                      # 20 repeats, all three backends
    python bench/sandbox.py --repeats 5 --backends cadquery

Everything is measured side by side in one run and reported as medians: the machines this runs on
are shared and noisy, so the ratios are the evidence and absolute times only a rough guide. Paired
measurements (cold vs warm start, sandboxed vs in-process call) are interleaved round by round so
that background load hits both sides alike. The closing markdown table pastes into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from toolgym.envs.sandbox import Session, get_zygote

BACKENDS = ("cadquery", "blender", "scene")
COLD_IMPORT = {
    "cadquery": "import cadquery",
    "blender": "import bpy",
    "scene": "import panda3d.core, panda3d.bullet",
}
WARM_START_MAX_S = 0.050  # CadQuery warm session start
COLD_OVER_WARM_MIN = 40.0  # CadQuery cold start / warm session start
CALL_OVERHEAD_MAX_S = 0.005  # session.run("x = 1") minus in-process exec, every backend
BPY_READY_RENDER_MAX_S = 0.5  # bpy session ready with its first Workbench render


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def interleaved(samplers: dict[str, tuple[Callable[[], float], int]]) -> dict[str, float]:
    """Median of each sampler, ``name: (sample, count)``; samples are spread evenly over rounds
    (as many as the largest count) so that slow and fast measurements see the same machine load."""
    rounds = max(count for _, count in samplers.values())
    samples: dict[str, list[float]] = {name: [] for name in samplers}
    for i in range(rounds):
        for name, (sample, count) in samplers.items():
            if (i + 1) * count // rounds > i * count // rounds:  # this sampler is due this round
                samples[name].append(sample())
    return {name: statistics.median(values) for name, values in samples.items()}


def cold_start(backend: str) -> float:
    """A fresh interpreter importing the tool, end to end."""
    command = [sys.executable, "-c", COLD_IMPORT[backend]]
    return timed(lambda: subprocess.run(command, check=True, capture_output=True))


def warm_start(backend: str, snapshot_on_start: bool) -> float:
    """Forking a session from the already running zygote (closing it is not timed)."""
    started = time.perf_counter()
    session = Session(backend, snapshot_on_start=snapshot_on_start)
    elapsed = time.perf_counter() - started
    session.close()
    return elapsed


def checked(result: object) -> None:
    if not getattr(result, "ok", False):
        raise RuntimeError(f"sandbox call failed: {getattr(result, 'error', result)}")


def bench_backend(backend: str, repeats: int, cold_repeats: int) -> dict[str, float]:
    """Every figure for one backend, in seconds (ratios are plain numbers)."""
    get_zygote(backend)
    warm_start(backend, True)  # the first fork after the zygote's start pays one-off page faults
    fig = interleaved(
        {
            "cold": (lambda: cold_start(backend), cold_repeats),
            "warm": (lambda: warm_start(backend, False), repeats),
            "warm_snap": (lambda: warm_start(backend, True), repeats),
        }
    )
    fig["cold_over_warm"] = fig["cold"] / fig["warm"]

    session = Session(backend, snapshot_on_start=False)
    try:
        ns: dict[str, object] = {}
        checked(session.run("x = 1"))  # warm-up
        fig |= interleaved(
            {
                "call": (lambda: timed(lambda: checked(session.run("x = 1"))), repeats),
                "inproc": (
                    lambda: timed(lambda: exec(compile("x = 1", "<s>", "exec"), ns)),
                    repeats,
                ),
            }
        )
        fig["overhead"] = fig["call"] - fig["inproc"]
        fig["call_ratio"] = fig["call"] / fig["inproc"]

        snap_id = session.snapshot()
        session.rollback(snap_id)  # warm-up
        fig["rollback"] = statistics.median(
            timed(lambda: session.rollback(snap_id)) for _ in range(repeats)
        )
    finally:
        session.close()

    if backend == "blender":
        fig["ready_render"] = statistics.median(ready_with_render() for _ in range(cold_repeats))
    return fig


def ready_with_render() -> float:
    """From ``Session("blender")`` to the end of its first 64×64 Workbench render."""
    started = time.perf_counter()
    session = Session("blender", snapshot_on_start=False)
    try:
        checked(session.request("render", {"width": 64, "height": 64}))
        return time.perf_counter() - started
    finally:
        session.close()


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def report(backend: str, f: dict[str, float]) -> list[tuple[str, str, str]]:
    """``(metric, figure, target)`` rows for one backend; the target column carries the verdict."""
    cq = backend == "cadquery"
    rows = [
        ("cold start (fresh interpreter + import)", f"{f['cold']:.2f} s", ""),
        (
            "warm session start",
            ms(f["warm"]),
            f"≤ 50 ms: {verdict(f['warm'] <= WARM_START_MAX_S)}" if cq else "",
        ),
        ("warm session start, snapshot_on_start=True", ms(f["warm_snap"]), ""),
        (
            "cold / warm",
            f"{f['cold_over_warm']:.0f}×",
            f"≥ 40×: {verdict(f['cold_over_warm'] >= COLD_OVER_WARM_MIN)}" if cq else "",
        ),
        ('session.run("x = 1")', ms(f["call"]), ""),
        ("in-process exec", f"{f['inproc'] * 1e6:.1f} µs", ""),
        (
            "per-call overhead",
            ms(f["overhead"]),
            f"≤ 5 ms: {verdict(f['overhead'] <= CALL_OVERHEAD_MAX_S)}",
        ),
        ("session / in-process", f"{f['call_ratio']:.0f}×", ""),
        ("rollback", ms(f["rollback"]), ""),
    ]
    if "ready_render" in f:
        ok = f["ready_render"] <= BPY_READY_RENDER_MAX_S
        figure = f"{f['ready_render']:.3f} s"
        rows.append(("session ready, first Workbench render", figure, f"≤ 0.5 s: {verdict(ok)}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="samples per figure (median)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    args = parser.parse_args()
    repeats = max(1, args.repeats)
    cold_repeats = max(3, repeats // 4)

    load, python = os.getloadavg()[0], platform.python_version()
    print(
        f"# sandbox bench: repeats={repeats}, cold repeats={cold_repeats}, "
        f"{os.cpu_count()} CPUs, load {load:.2f}, Python {python}"
    )
    for backend in args.backends:  # all zygotes up before anything is timed
        get_zygote(backend)

    table: list[str] = ["| backend | metric | median | target |", "|---|---|---|---|"]
    for backend in args.backends:
        figures = bench_backend(backend, repeats, cold_repeats)
        print(f"\n## {backend}")
        for metric, figure, target in report(backend, figures):
            print(f"  {metric:<48} {figure:>12}   {target}")
            table.append(f"| {backend} | {metric} | {figure} | {target} |")
    print("\n" + "\n".join(table))


if __name__ == "__main__":
    main()
