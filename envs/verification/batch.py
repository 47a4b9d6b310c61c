"""Verifying scripts against tasks, one at a time or as a resumable batch, in any domain.

Each script runs in a fresh sandbox session of its task's tool, and what it built is scored against
the task's target by the domain's final-tier verifier (``Domain.verify_script``; for CAD see
``toolgym.envs.cadquery.verification``). This module holds what every domain shares: the verdict,
and batches that append one JSON line per task and resume where they stopped.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from toolgym.envs.domains import get_domain
from toolgym.envs.sandbox import Limits
from toolgym.envs.tasks.model import Task
from toolgym.verifiers.report import VerifierReport


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
    """The task's reference program did not build a target."""


def verify_script(
    task: Task, script: str, *, filename: str = "<script>", limits: Limits | None = None
) -> Outcome:
    """Run ``script`` in a fresh session of the task's tool (with ``limits``) and score what it
    built at the task's final tier."""
    return get_domain(task.domain).verify_script(task, script, filename, limits)


def script_path(scripts: Path, task: Task) -> Path:
    """Where a batch expects a task's script: the task id below the suite, plus ``.py``.

    ``curated/plate-four-holes`` → ``DIR/plate-four-holes.py``;
    ``procedural/flange/test-3`` → ``DIR/flange/test-3.py``.
    """
    return scripts / (task.id.split("/", 1)[1] + ".py")


def read_script(scripts: Path, task: Task) -> tuple[Path, str | Outcome]:
    """Where ``task``'s script is and its text, or the :class:`Outcome` saying why there is none
    (``missing_script``, or ``script`` when it cannot be read)."""
    path = script_path(scripts, task)
    if not path.is_file():
        return path, Outcome(task.id, None, "missing_script", f"no script at {path}")
    try:
        return path, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return path, Outcome(task.id, None, "script", f"cannot read {path}: {exc}")


def append_result(out: Path, result: dict[str, Any], previous: dict[str, dict[str, Any]]) -> None:
    """Append one result line (``Outcome.to_dict()``) to ``out``; but a script still missing is
    already on record in ``previous`` (:func:`read_results`), and the file does not grow on
    reruns."""
    kind = result.get("error_kind")
    if kind == "missing_script" and previous.get(result["task"], {}).get("error_kind") == kind:
        return
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(result) + "\n")


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
            path, code = read_script(scripts, task)
            if isinstance(code, str):
                outcome = verify_script(task, code, filename=str(path), limits=limits)
            else:
                outcome = code
            with lock:
                if stop.is_set():
                    return
                append_result(out, outcome.to_dict(), previous)
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
