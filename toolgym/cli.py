"""The ``toolgym`` command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from toolgym._version import __version__

app = typer.Typer(
    help="toolgym: agents that operate professional tools by writing scripts.", no_args_is_help=True
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        console.print(f"toolgym {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """toolgym: Gymnasium environments for CadQuery, Blender and a Panda3D game-scene runtime."""


@app.command()
def doctor() -> None:
    """Check the tools, the sandbox's isolation layers and headless rendering on this machine."""
    from toolgym.envs.doctor import run_checks

    checks = run_checks()
    table = Table(title="toolgym doctor")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in checks:
        status = (
            "[green]ok[/]"
            if check.ok
            else ("[red]FAIL[/]" if check.required else "[yellow]warn[/]")
        )
        table.add_row(check.name, status, check.detail)
    console.print(table)
    failed = [c.name for c in checks if c.required and not c.ok]
    warned = [c.name for c in checks if not c.required and not c.ok]
    if failed:
        console.print(f"[red bold]Verdict: NOT READY[/] - failed: {', '.join(failed)}")
        raise typer.Exit(1)
    if warned:
        console.print(
            f"[yellow bold]Verdict: READY, with reduced isolation[/] ({', '.join(warned)})"
        )
    else:
        console.print(
            "[green bold]Verdict: READY[/] - every tool works and every isolation layer is active."
        )


@app.command()
def tasks(
    suite: Annotated[str | None, typer.Argument(help="List this suite's tasks.")] = None,
) -> None:
    """List the task suites, or the tasks of one suite."""
    from toolgym.envs.suites import get_suite, suites

    if suite is None:
        table = Table(title="task suites")
        for column in ("suite", "domain", "tasks", "train", "test", "description"):
            table.add_column(column)
        for found in suites().values():
            train, test = len(found.split("train")), len(found.split("test"))
            row = (found.name, found.domain, str(len(found.tasks)), str(train), str(test))
            table.add_row(*row, found.description)
    else:
        found = _or_fail(get_suite, suite)
        table = Table(title=f"suite {found.name}")
        for column in ("task", "difficulty", "split", "prompt"):
            table.add_column(column, overflow="fold")
        for task in found.tasks:
            table.add_row(task.id, str(task.difficulty), task.split, task.prompt)
    console.print(table)


@app.command()
def tools(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    as_json: Annotated[bool, typer.Option("--json", help="Function-calling JSON schemas.")] = False,
    grammar: Annotated[
        bool, typer.Option(help="Grammar metadata (ranges, units, steps) as JSON.")
    ] = False,
) -> None:
    """List an environment's tools, or print their function-calling schemas."""
    from toolgym.envs.cadquery.tools import registry

    if env != "toolgym/CadQuery-v0":
        _fail(f"unknown environment {env!r}; known: toolgym/CadQuery-v0")
    if as_json or grammar:
        print(json.dumps(registry.grammar() if grammar else registry.json_schemas(), indent=2))
        return
    table = Table(title=f"{env} tools")
    for column in ("tool", "parameters", "description"):
        table.add_column(column, overflow="fold")
    for tool in registry.tools.values():
        params = ", ".join(
            f"{p.name}{'' if p.required else '?'}"
            + (f" ({p.constraint.unit})" if p.constraint.unit else "")
            for p in tool.params
        )
        table.add_row(tool.name, params, tool.description)
    console.print(table)


@app.command()
def run(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    agent: Annotated[str, typer.Option(help="random or oracle.")] = "oracle",
    episodes: Annotated[
        int | None, typer.Option(help="Episodes; default: every task once.")
    ] = None,
    suite: Annotated[str, typer.Option(help="Task suite.")] = "curated",
    split: Annotated[str, typer.Option(help="train or test.")] = "train",
    action_mode: Annotated[str, typer.Option(help="code or tool.")] = "code",
    seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    out: Annotated[
        Path | None, typer.Option(help="Write each episode's final render here.")
    ] = None,
) -> None:
    """Run an agent for episodes and print a table: task, steps, score, time."""
    from rich.progress import Progress

    from toolgym.agents.runner import run_episodes

    if agent not in ("random", "oracle"):
        _fail(f"unknown agent {agent!r}; known: random, oracle")
    if agent == "oracle" and action_mode != "code":
        _fail("the oracle replays reference programs: use --action-mode code")
    table = Table(title=f"{agent} on {env} ({suite}/{split})")
    for column in ("task", "steps", "score", "passed", "time"):
        table.add_column(column)
    scores = []
    try:
        results = run_episodes(
            env, agent, episodes=episodes, seed=seed, out=out, suite=suite, split=split,
            action_mode=action_mode,
        )  # fmt: skip
        with Progress(console=err_console, transient=True) as progress:
            bar = progress.add_task(f"{agent} episodes", total=episodes)
            for episode in results:
                progress.advance(bar)
                scores.append(episode.score or 0.0)
                score = "error" if episode.score is None else f"{episode.score:.3f}"
                table.add_row(
                    episode.task, str(episode.steps), score, "yes" if episode.passed else "no",
                    f"{episode.seconds:.1f} s",
                )  # fmt: skip
    except (KeyError, ValueError) as exc:
        _fail(str(exc).strip("'\""))
    console.print(table)
    if scores:
        console.print(f"mean score {sum(scores) / len(scores):.3f} over {len(scores)} episodes")
    if out:
        console.print(f"renders in {out}")


EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> NoReturn:
    err_console.print(f"[red]error:[/] {message}")
    raise typer.Exit(EXIT_ERROR)


def _or_fail[T](lookup: Callable[[str], T], name: str) -> T:
    """``lookup(name)``, or exit 2 with its message (unknown suite, task, ...)."""
    try:
        return lookup(name)
    except (KeyError, ValueError) as exc:
        _fail(str(exc).strip("'\""))


@app.command()
def verify(
    task: Annotated[str | None, typer.Option(help="Task id; with --script.")] = None,
    script: Annotated[
        Path | None, typer.Option(help="Script binding `result`; with --task.")
    ] = None,
    candidate: Annotated[Path | None, typer.Option(help="Part file; with --reference.")] = None,
    reference: Annotated[Path | None, typer.Option(help="STEP, BREP, STL, OBJ or GLB.")] = None,
    suite: Annotated[str | None, typer.Option(help="Suite to verify; with --scripts.")] = None,
    scripts: Annotated[Path | None, typer.Option(help="Folder: <task name>.py per task.")] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Parallel sessions in batch mode.")] = 1,
    out: Annotated[Path, typer.Option(help="Batch results, one JSON line per task.")] = Path(
        "results.jsonl"
    ),
    tier: Annotated[str, typer.Option(help="With --candidate: exact or cheap.")] = "exact",
    alignment: Annotated[str, typer.Option(help="With --candidate: none or normalized.")] = "none",
) -> None:
    """Score parts against references. Exit 0 pass, 1 fail, 2 error (bad input, script crash).

    Three modes: --task ID --script FILE; --candidate A --reference B; --suite NAME --scripts DIR.
    """
    modes = {
        "task": (task, script),
        "files": (candidate, reference),
        "batch": (suite, scripts),
    }
    chosen = [name for name, pair in modes.items() if any(v is not None for v in pair)]
    if len(chosen) != 1 or not all(v is not None for v in modes[chosen[0]]):
        _fail(
            "give exactly one of: --task ID --script FILE | --candidate A --reference B | "
            "--suite NAME --scripts DIR"
        )
    if chosen[0] == "files":
        _verify_files(candidate, reference, tier, alignment)
    elif chosen[0] == "task":
        _verify_task(task, script)
    else:
        _verify_batch(suite, scripts, jobs, out)


def _verify_files(candidate: Path, reference: Path, tier: str, alignment: str) -> None:
    from toolgym.envs.verification import verify_files
    from toolgym.verifiers.parts import PartError

    try:
        report = verify_files(candidate, reference, tier=tier, alignment=alignment)
    except (PartError, ValueError) as exc:
        _fail(str(exc))
    print(report.to_json(indent=2))
    raise typer.Exit(EXIT_ERROR if report.errors else EXIT_PASS if report.passed else EXIT_FAIL)


def _verify_task(task_id: str, script: Path) -> None:
    from toolgym.envs.suites import get_task
    from toolgym.envs.verification import verify_script

    task = _or_fail(get_task, task_id)
    if not script.is_file():
        _fail(f"{script}: no such script")
    try:
        code = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{script}: cannot read: {exc}")
    outcome = verify_script(task, code, filename=str(script))
    print(json.dumps(outcome.to_dict(), indent=2))
    if outcome.error_kind:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_PASS if outcome.passed else EXIT_FAIL)


def _verify_batch(suite_name: str, scripts: Path, jobs: int, out: Path) -> None:
    from rich.progress import Progress

    from toolgym.envs.suites import get_suite
    from toolgym.envs.verification import done_tasks, summarize, verify_batch

    suite = _or_fail(get_suite, suite_name)
    if not scripts.is_dir():
        _fail(f"{scripts}: no such folder")
    remaining = len(suite.tasks) - len(done_tasks(out) & {t.id for t in suite.tasks})
    with Progress(console=err_console, transient=True) as progress:
        bar = progress.add_task(f"verifying {suite.name}", total=remaining)
        try:
            verify_batch(
                suite.tasks, scripts, out, jobs=jobs, on_done=lambda _: progress.advance(bar)
            )
        except KeyboardInterrupt:
            err_console.print(f"interrupted: finished items are in {out}; rerun to resume")
            raise typer.Exit(130) from None
    ids = {t.id for t in suite.tasks}
    lines = [
        json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    results = [r for r in lines if r.get("task") in ids]
    summary = summarize(results)
    table = Table(title=f"{suite.name}: {summary['tasks']} tasks -> {out}")
    for column in ("mean score", "pass rate", "errors by kind"):
        table.add_column(column)
    errors = ", ".join(f"{k} {v}" for k, v in sorted(summary["errors"].items())) or "none"
    table.add_row(f"{summary['mean_score']:.3f}", f"{summary['pass_rate']:.1%}", errors)
    console.print(table)
    raise typer.Exit(EXIT_PASS if summary["pass_rate"] == 1.0 else EXIT_FAIL)


if __name__ == "__main__":
    app()
