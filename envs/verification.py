"""Verifying scripts against tasks, one at a time or as a resumable batch.

The script runs in a sandbox session; the part it builds is scored against the task's reference
part (built once per task, also in a session) by the task's final-tier verifier.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.envs.cadquery.artifacts import (
    EXACT_TOLERANCE_SHARE,
    export_brep,
    load_part,
    measure,
    measure_file,
    tessellation_tolerance,
)
from toolgym.envs.sandbox import Limits, Session
from toolgym.envs.tasks import Task
from toolgym.verifiers.cad import verify_part
from toolgym.verifiers.parts import Part
from toolgym.verifiers.report import VerifierReport

_references: dict[str, Part] = {}
_references_lock = threading.Lock()


@dataclasses.dataclass
class Outcome:
    """The verdict on one script. ``error_kind`` is set when no score could be given:
    ``missing_script``, ``script`` (it raised, crashed or timed out), ``reference`` (the task's own
    program failed) or ``verifier``; and to ``no_part`` when the script ran but bound no solid to
    ``result``: that scores 0, and ``error`` says why."""

    task: str
    report: VerifierReport | None
    error_kind: str | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.report is not None and self.report.passed

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "passed": self.passed,
            "score": self.report.score if self.report else None,
            "error_kind": self.error_kind,
            "error": self.error,
            "seconds": round(self.seconds, 3),
            "report": self.report.to_dict() if self.report else None,
        }


class ReferenceBuildError(RuntimeError):
    """The task's reference program did not build a part."""


def reference_part(task: Task) -> Part:
    """The task's target part, built once per process by running its reference in a session and
    measuring the solid it exported, finely, in a fresh one."""
    with _references_lock:
        if task.id in _references:
            return _references[task.id]
    if task.domain != "cadquery":
        raise ReferenceBuildError(f"{task.id}: verifying {task.domain} tasks is not supported yet")
    with Session("cadquery") as session:
        ran = session.run(task.reference, filename=f"<reference {task.id}>")
        described = session.request("describe") if ran.ok else ran
        brep, why = export_brep(session) if described.ok and described.value else (None, ran)
    if brep is None:
        raise ReferenceBuildError(f"{task.id}: the reference program failed: {why.feedback()}")
    box = np.asarray(described.value["bbox_mm"], dtype=np.float64)
    tolerance = tessellation_tolerance(
        box[3:] - box[:3], EXACT_TOLERANCE_SHARE, task.verification.deviation_mm
    )
    measured = measure(brep, tolerance=tolerance)
    if measured.part is None:
        raise ReferenceBuildError(
            f"{task.id}: the reference could not be measured: {measured.error}"
        )
    with _references_lock:
        _references[task.id] = measured.part
    return measured.part


def exact_tolerance(task: Task, reference: Part) -> float:
    """Chordal tolerance (mm) of exact-tier meshes for ``task``: the reference's own, so that a
    right part is meshed exactly as the reference was."""
    return reference.tolerance or tessellation_tolerance(
        reference.mesh.extents, EXACT_TOLERANCE_SHARE, task.verification.deviation_mm
    )


def verify_for_task(
    task: Task,
    candidate: Part | None,
    reference: Part,
    tier: str,
    *,
    brep_iou: float | str | None = None,
    success_iou: float | None = None,
) -> VerifierReport:
    """``verify_part`` with the task's weights, thresholds, alignment and deviation tolerance
    (``success_iou``, when given, replaces the task's IoU threshold)."""
    check = task.verification
    thresholds = dict(check.thresholds)
    if success_iou is not None:
        thresholds["iou"] = success_iou
    return verify_part(
        candidate,
        reference,
        tier=tier,
        weights=dict(check.weights) if check.weights else None,
        thresholds=thresholds,
        alignment=check.alignment,
        deviation_tolerance=check.deviation_mm,
        brep_iou=brep_iou,
    )


def verify_script(
    task: Task, script: str, *, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    """Run ``script`` in a fresh session (with ``limits``) and score the solid it binds to
    ``result`` (or shows) against ``task``. The solid is exported as BREP and measured in
    another fresh session."""
    started = time.perf_counter()
    try:
        reference = reference_part(task)
    except ReferenceBuildError as exc:
        return Outcome(task.id, None, "reference", str(exc), time.perf_counter() - started)
    with Session("cadquery", limits) as session:
        ran = session.run(script, filename=filename)
        if not ran.ok:
            message = ran.error.message if ran.error else "failed"
            return Outcome(task.id, None, "script", message, time.perf_counter() - started)
        brep, why = export_brep(session)
    tier = task.verification.final_tier
    if brep is None:  # no solid: a score of 0, and why
        report = verify_for_task(task, None, reference, tier)
        message = why.error.message if why.error else "the script built no part"
        return Outcome(task.id, report, "no_part", message, time.perf_counter() - started)
    measured = measure(
        brep,
        tolerance=exact_tolerance(task, reference),
        reference_brep=reference.brep if tier == "exact" else None,
    )
    if measured.part is None:
        return Outcome(task.id, None, "verifier", measured.error, time.perf_counter() - started)
    report = verify_for_task(task, measured.part, reference, tier, brep_iou=measured.brep_iou)
    kind = "verifier" if report.errors else None
    error = report.errors[0] if report.errors else None
    return Outcome(task.id, report, kind, error, time.perf_counter() - started)


def verify_files(
    candidate: Path, reference: Path, *, tier: str = "exact", alignment: str = "none"
) -> VerifierReport:
    """Score a part file against another (STEP, BREP, STL, OBJ, GLB). B-Rep files are measured
    in sandbox sessions, the candidate as finely as the reference's tolerances need; when both
    are B-Rep and the tier is exact, a B-Rep boolean cross-checks the IoU.
    Raises ``PartError`` for a file that cannot be read."""
    target = load_part(reference)
    measured = measure_file(
        candidate,
        tolerance=tessellation_tolerance(target.mesh.extents, EXACT_TOLERANCE_SHARE),
        reference_brep=target.brep if tier == "exact" else None,
    )
    return verify_part(
        measured.part, target, tier=tier, alignment=alignment, brep_iou=measured.brep_iou
    )


def export_reference(task: Task, fmt: str) -> bytes:
    """The task's reference part as file bytes: ``step``, ``stl`` or ``brep``."""
    if task.domain != "cadquery":
        raise ReferenceBuildError(f"{task.id}: exporting {task.domain} tasks is not supported yet")
    with Session("cadquery") as session:
        ran = session.run(task.reference, filename=f"<reference {task.id}>")
        exported = session.request("export", {"format": fmt}) if ran.ok else ran
    if not exported.ok or not isinstance(exported.value, bytes):
        raise ReferenceBuildError(f"{task.id}: the reference did not export: {exported.feedback()}")
    return exported.value


def script_path(scripts: Path, task: Task) -> Path:
    """Where a batch expects a task's script: the task id below the suite, plus ``.py``.

    ``curated/plate-four-holes`` → ``DIR/plate-four-holes.py``;
    ``procedural/flange/test-3`` → ``DIR/flange/test-3.py``.
    """
    return scripts / (task.id.split("/", 1)[1] + ".py")


def read_results(out: Path) -> dict[str, dict[str, Any]]:
    """The results in a file, by task; a task written twice (redone) counts by its last line.
    A line cut short by an interruption is skipped."""
    results: dict[str, dict[str, Any]] = {}
    if not out.exists():
        return results
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            result = json.loads(line)
            results[result["task"]] = result
        except (ValueError, KeyError, TypeError):
            continue
    return results


def done_tasks(out: Path) -> set[str]:
    """Tasks already in a results file, which an interrupted batch does not redo. A task whose
    script was missing is not done: its script may be there now."""
    return {
        task
        for task, result in read_results(out).items()
        if result.get("error_kind") != "missing_script"
    }


def results_file_problem(out: Path) -> str | None:
    """Why ``out`` cannot be a batch's results file, or ``None``: it must be named ``*.jsonl``,
    and if it exists hold result lines only (but for a last line that an interruption cut short
    before its newline)."""
    if out.suffix != ".jsonl":
        return f"{out}: results go to a .jsonl file (one JSON line per task)"
    if out.is_dir():
        return f"{out} is a folder; results go to a .jsonl file"
    if not out.exists():
        return None
    try:
        text = out.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{out}: cannot read it: {exc}"
    lines = text.splitlines()
    whole = lines if text.endswith("\n") else lines[:-1]
    for number, line in enumerate(whole, 1):
        try:
            ok = isinstance(json.loads(line).get("task"), str)
        except (ValueError, AttributeError):
            ok = False
        if not ok and line.strip():
            return f"{out} is not a toolgym results file (line {number} is not a result)"
    return None


def verify_batch(
    tasks: Iterable[Task],
    scripts: Path,
    out: Path,
    *,
    jobs: int = 1,
    on_done: Callable[[Outcome], None] | None = None,
    limits: Limits | None = None,
) -> list[Outcome]:
    """Verify every task's script, appending one JSON line per task to ``out`` as it finishes.

    Tasks already in ``out`` are skipped (see :func:`done_tasks`), so an interrupted batch resumes
    without redoing them. ``jobs`` sessions run at once (at most one per task). On Ctrl-C, items
    in flight are abandoned (not written) and ``KeyboardInterrupt`` propagates at once; their
    sessions end with this process. Returns the outcomes of this run only.
    """
    previous = read_results(out)
    done = done_tasks(out)
    todo: queue.SimpleQueue[Task] = queue.SimpleQueue()
    for task in tasks:
        if task.id not in done:
            todo.put(task)
    jobs = max(1, min(jobs, todo.qsize()))
    stop = threading.Event()
    lock = threading.Lock()
    outcomes: list[Outcome] = []

    def work() -> None:
        while not stop.is_set():
            try:
                task = todo.get_nowait()
            except queue.Empty:
                return
            path = script_path(scripts, task)
            if not path.is_file():
                outcome = Outcome(task.id, None, "missing_script", f"no script at {path}")
            else:
                try:
                    code = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    outcome = Outcome(task.id, None, "script", f"cannot read {path}: {exc}")
                else:
                    outcome = verify_script(task, code, filename=str(path), limits=limits)
            # A script still missing is already on record: the file does not grow on reruns.
            recorded = previous.get(task.id, {}).get("error_kind") == outcome.error_kind
            with lock:
                if stop.is_set():
                    return
                if not (recorded and outcome.error_kind == "missing_script"):
                    with out.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(outcome.to_dict()) + "\n")
                outcomes.append(outcome)
                if on_done:
                    on_done(outcome)

    # Daemon threads, joined with a timeout, so Ctrl-C reaches the main thread at once.
    workers = [threading.Thread(target=work, daemon=True) for _ in range(jobs)]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            while worker.is_alive():
                worker.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        raise
    return outcomes


def summarize(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean score, pass rate and errors by kind over result lines (``Outcome.to_dict()``)."""
    errors: dict[str, int] = {}
    for o in outcomes:
        if o.get("error_kind"):
            errors[o["error_kind"]] = errors.get(o["error_kind"], 0) + 1
    return {
        "tasks": len(outcomes),
        # A task with no score (its script crashed, say) counts as 0 in the mean.
        "mean_score": sum(o.get("score") or 0.0 for o in outcomes) / len(outcomes)
        if outcomes
        else 0.0,
        "pass_rate": sum(bool(o.get("passed")) for o in outcomes) / len(outcomes)
        if outcomes
        else 0.0,
        "errors": errors,
    }
