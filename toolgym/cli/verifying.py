"""``toolgym verify``: score scripts or part files against targets, one or a batch."""

from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.table import Table

from toolgym.cli.common import (
    EXIT_ERROR,
    EXIT_FAIL,
    EXIT_PASS,
    WallSeconds,
    app,
    console,
    err_console,
    fail,
    limits_for,
    message,
    or_fail,
)
from toolgym.cli.distributed import RayAddress, batch_verifier

if TYPE_CHECKING:
    from toolgym.envs.sandbox import Limits
    from toolgym.envs.tasks.model import Task
    from toolgym.envs.verification.batch import Outcome

MAX_JOBS = 64  # parallel sessions in a batch; each holds a tool's process (~150 MB for CadQuery)


@app.command()
def verify(
    task: Annotated[
        str | None, typer.Option(help="Task id; with --script (and --suite FILE for its file).")
    ] = None,
    script: Annotated[
        Path | None, typer.Option(help="Script binding `result`; with --task.")
    ] = None,
    candidate: Annotated[Path | None, typer.Option(help="CAD part file; with --reference.")] = None,
    reference: Annotated[Path | None, typer.Option(help="STEP, BREP, STL, OBJ or GLB.")] = None,
    suite: Annotated[
        str | None,
        typer.Option(help="Suite (name or .toml file) to verify with --scripts, or of --task."),
    ] = None,
    scripts: Annotated[Path | None, typer.Option(help="Folder: <task name>.py per task.")] = None,
    jobs: Annotated[
        int, typer.Option(min=1, max=MAX_JOBS, help="Parallel sessions in batch mode.")
    ] = 1,
    out: Annotated[
        Path, typer.Option(help="Batch results (.jsonl), one JSON line per task.")
    ] = Path("results.jsonl"),
    force: Annotated[
        bool, typer.Option(help="Batch: start --out afresh instead of resuming it.")
    ] = False,
    wall_s: WallSeconds = None,
    tier: Annotated[str, typer.Option(help="With --candidate: exact or cheap.")] = "exact",
    alignment: Annotated[str, typer.Option(help="With --candidate: none or normalized.")] = "none",
    ray: RayAddress = None,
) -> None:
    """Score parts against references. Exit 0 pass, 1 fail, 2 error (bad input, script crash).

    Three modes: --task ID --script FILE [--suite FILE]; --candidate A --reference B;
    --suite NAME --scripts DIR. A single verdict prints one line (on stderr), then its JSON:
    verdict, task (or candidate and reference), passed, score, error_kind, error, seconds, report.
    """
    modes = {
        "task": (task, script),
        "files": (candidate, reference),
        "batch": (suite, scripts),
    }
    chosen = [name for name, pair in modes.items() if any(v is not None for v in pair)]
    if "task" in chosen and scripts is None and "batch" in chosen:
        chosen.remove("batch")  # --suite names where --task is defined
    if len(chosen) != 1 or not all(v is not None for v in modes[chosen[0]]):
        fail(
            "give exactly one of: --task ID --script FILE | --candidate A --reference B | "
            "--suite NAME --scripts DIR"
        )
    if ray is not None and chosen[0] != "batch":
        fail("--ray is for batch mode (--suite NAME --scripts DIR); a single verdict runs here")
    if chosen[0] == "files":
        _verify_files(candidate, reference, tier, alignment)
    elif chosen[0] == "task":
        _verify_task(task, script, limits_for(wall_s), suite)
    else:
        _verify_batch(suite, scripts, jobs, out, force, limits_for(wall_s), ray)


def _verify_files(candidate: Path, reference: Path, tier: str, alignment: str) -> None:
    from toolgym.envs.domains import domains
    from toolgym.envs.verification.batch import Outcome
    from toolgym.verifiers.parts import PartError

    for path in (candidate, reference):
        if path.is_dir():
            fail(f"{path} is a folder; --candidate and --reference take part files")
    scorers = [d.verify_files for d in domains() if d.verify_files is not None]
    if not scorers:
        fail("no registered tool scores part files")
    started = time.perf_counter()
    try:
        report = scorers[0](candidate, reference, tier, alignment)
    except (PartError, ValueError) as exc:
        fail(str(exc))
    outcome = Outcome(
        str(candidate),
        report,
        "verifier" if report.errors else None,
        report.errors[0] if report.errors else None,
        time.perf_counter() - started,
    )
    _print_verdict(outcome, {"candidate": str(candidate), "reference": str(reference)})


def _verify_task(task_id: str, script: Path, limits: Limits | None, suite: str | None) -> None:
    from toolgym.envs.verification.batch import verify_script

    task = _task_of(task_id, suite)
    if script.is_dir():
        fail(f"{script} is a folder; --script takes one file (--suite and --scripts take a folder)")
    if not script.is_file():
        fail(f"{script}: no such script")
    try:
        code = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{script}: cannot read: {exc}")
    outcome = verify_script(task, code, filename=str(script), limits=limits)
    _print_verdict(outcome, {})


def _task_of(task_id: str, suite_name: str | None) -> Task:
    """The task ``task_id``: from ``suite_name`` (a name or a .toml file) when given."""
    from toolgym.envs.tasks.suites import get_suite, get_task

    if suite_name is None:
        try:
            return get_task(task_id)
        except KeyError as exc:
            fail(message(exc) + "; a task of a suite file needs --suite FILE")
    suite = or_fail(get_suite, suite_name)
    for task in suite.tasks:
        if task_id in (task.id, task.id.split("/", 1)[-1]):
            return task
    known = ", ".join(t.id for t in suite.tasks[:8]) + (", ..." if len(suite.tasks) > 8 else "")
    fail(f"suite {suite.name} has no task {task_id!r}; its tasks: {known}")


def _print_verdict(outcome: Outcome, files: dict[str, Any]) -> NoReturn:
    """One verdict line on stderr, then the outcome as JSON (one layout for every mode; ``task``
    is null when ``files`` were compared), and exit 0 pass, 1 fail (a script that built no part
    fails), 2 error."""
    if outcome.error_kind and outcome.error_kind != "no_part":
        verdict = f"ERROR ({outcome.error_kind}) {outcome.task}: {outcome.error}"
    elif outcome.report is None:
        verdict = f"FAIL {outcome.task}: {outcome.error}"
    else:
        verdict = f"{'PASS' if outcome.passed else 'FAIL'} {outcome.task}: "
        verdict += outcome.report.summary()
        if outcome.error_kind == "no_part":
            verdict += f"; {outcome.error}"
    err_console.print(verdict, markup=False, highlight=False)
    data = outcome.to_dict()
    task = None if files else data.pop("task")
    data.pop("task", None)
    print(json.dumps({"verdict": verdict, "task": task, **files, **data}, indent=2))
    if outcome.error_kind and outcome.error_kind != "no_part":  # no part: a score of 0, a fail
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_PASS if outcome.passed else EXIT_FAIL)


def _verify_batch(
    suite_name: str,
    scripts: Path,
    jobs: int,
    out: Path,
    force: bool,
    limits: Limits | None,
    ray: str | None = None,
) -> None:
    from rich.progress import Progress

    from toolgym.envs.tasks.suites import get_suite
    from toolgym.envs.verification.batch import (
        done_tasks,
        read_results,
        results_file_problem,
        summarize,
    )

    suite = or_fail(get_suite, suite_name)
    if scripts.is_file():
        fail(f"{scripts} is a file; --scripts takes a folder with one <task name>.py per task")
    if not scripts.is_dir():
        fail(f"{scripts}: no such folder")
    verify_batch = batch_verifier(ray)  # with --ray: connected now, verified in Ray actors
    problem = results_file_problem(out)
    if problem and not (force and out.suffix == ".jsonl" and out.is_file()):
        fail(problem)
    try:  # before any script runs: a results file that cannot be written fails now
        held = out.open("a", encoding="utf-8")
    except OSError as exc:
        fail(f"--out {out}: cannot write: {exc.strerror or exc}")
    try:  # held until the batch ends: a second batch on the same file would redo every task
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        held.close()
        fail(f"--out {out}: another `toolgym verify` is writing it; wait, or give another --out")
    if force:
        held.truncate(0)
    ids = {t.id for t in suite.tasks}
    remaining = len(ids - done_tasks(out))
    with Progress(console=err_console, transient=True) as progress:
        bar = progress.add_task(f"verifying {suite.name}", total=remaining)
        try:
            verify_batch(
                suite.tasks,
                scripts,
                out,
                jobs=jobs,
                limits=limits,
                on_done=lambda _: progress.advance(bar),
            )
        except KeyboardInterrupt:
            err_console.print(f"interrupted: finished items are in {out}; rerun to resume")
            raise typer.Exit(130) from None
    results = [r for task, r in read_results(out).items() if task in ids]
    summary = summarize(results)
    table = Table(title=f"{suite.name}: {summary['tasks']} tasks -> {out}")
    for column in ("mean score", "pass rate", "errors by kind"):
        table.add_column(column)
    errors = ", ".join(f"{k} {v}" for k, v in sorted(summary["errors"].items())) or "none"
    table.add_row(f"{summary['mean_score']:.3f}", f"{summary['pass_rate']:.1%}", errors)
    console.print(table)
    raise typer.Exit(EXIT_PASS if summary["pass_rate"] == 1.0 else EXIT_FAIL)
