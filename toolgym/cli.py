"""The ``toolgym`` command line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolgym._version import __version__

if TYPE_CHECKING:
    from toolgym.envs.sandbox import Limits
    from toolgym.envs.tasks import Task

app = typer.Typer(
    help="toolgym: agents that operate professional tools by writing scripts.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)
MAX_JOBS = 64  # parallel sessions in a batch; each holds a CadQuery process (~150 MB)
MAX_WALL_S = 3600.0
WallSeconds = Annotated[
    float | None,
    typer.Option(
        "--wall-s",
        min=0.1,
        max=MAX_WALL_S,
        help="Wall-clock seconds per script or step in the sandbox (default 30); the CPU-time "
        "limit is set to the same.",
    ),
]


def _limits(wall_s: float | None) -> Limits | None:
    """Sandbox limits with the wall-clock and CPU-time limits set to ``wall_s``."""
    from toolgym.envs.sandbox import Limits

    return None if wall_s is None else Limits(wall_s=wall_s, cpu_s=wall_s)


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
    difficulty: Annotated[
        int | None, typer.Option(min=1, max=5, help="Only tasks of this tier (1-5).")
    ] = None,
    split: Annotated[str | None, typer.Option(help="Only train or test tasks.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the task suites, or the tasks of one suite (of every suite, with a filter)."""
    from toolgym.envs.suites import get_suite, suites

    if split is not None and split not in ("train", "test"):
        _fail(f"--split must be train or test, got {split!r}")
    if suite is None and difficulty is None and split is None:
        _list_suites(list(suites().values()), as_json)
        return
    if suite is None:
        unique = {t.id: t for found in suites().values() for t in found.tasks}
        chosen, title = list(unique.values()), "every suite"
    else:
        found = _or_fail(get_suite, suite)
        chosen, title = list(found.tasks), f"suite {found.name}"
    chosen = [
        t
        for t in chosen
        if (difficulty is None or t.difficulty == difficulty)
        and (split is None or t.split == split)
    ]
    if as_json:
        print(json.dumps([_task_summary(t) for t in chosen], indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{title}: {len(chosen)} tasks")
    # Task ids are never wrapped: they are meant to be copied into --task.
    table.add_column("task", no_wrap=True, min_width=max((len(t.id) for t in chosen), default=4))
    table.add_column("difficulty")
    table.add_column("split")
    table.add_column("prompt", overflow="fold")
    for task in chosen:
        table.add_row(task.id, str(task.difficulty), task.split, escape(task.prompt))
    console.print(table)


def _list_suites(found: list[Any], as_json: bool) -> None:
    rows = [
        {
            "suite": s.name, "domain": s.domain, "tasks": len(s.tasks),
            "train": len(s.split("train")), "test": len(s.split("test")),
            "description": s.description,
        }
        for s in found
    ]  # fmt: skip
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="task suites")
    for column in rows[0] if rows else ():
        table.add_column(column, no_wrap=column == "suite")
    for row in rows:
        table.add_row(*(escape(str(v)) for v in row.values()))
    console.print(table)


def _task_summary(task: Task) -> dict[str, Any]:
    """What a user needs to pick a task: no reference program (that is the answer)."""
    return {
        "id": task.id,
        "domain": task.domain,
        "difficulty": task.difficulty,
        "split": task.split,
        "prompt": task.prompt,
    }


@app.command()
def show(
    task: Annotated[str, typer.Argument(help="Task id, e.g. curated/plate-four-holes.")],
    image: Annotated[
        Path | None, typer.Option(help="Write the target's four views here (PNG).")
    ] = None,
    export: Annotated[
        Path | None, typer.Option(help="Write the target part here: .step, .stl, .brep or .glb.")
    ] = None,
) -> None:
    """Show a task: its prompt and details; write its target's views and the target part."""
    from toolgym.envs.suites import get_task

    found = _or_fail(get_task, task)
    fmt = export.suffix.lower().lstrip(".") if export else None
    if export is not None and fmt not in ("step", "stl", "brep", "glb"):
        _fail(f"--export {export}: use a .step, .stl, .brep or .glb file name")
    for path in (image, export):
        if path is not None:
            _check_writable_file(path)
    console.print(f"[bold]{escape(found.id)}[/]  ({found.domain}, difficulty {found.difficulty}, "
                  f"{found.split} split)")  # fmt: skip
    console.print(escape(found.prompt), soft_wrap=True)
    if image is None and export is None:
        console.print("Add --image target.png to see the target, --export target.step to get it.")
        return
    try:
        _write_target(found, image, export, fmt)
    except (RuntimeError, ValueError, OSError) as exc:
        _fail(str(exc))


def _write_target(task: Task, image: Path | None, export: Path | None, fmt: str | None) -> None:
    from toolgym.envs.verification import export_reference, reference_part

    if image is not None:
        from PIL import Image

        from toolgym.renderers.labels import captioned, label_views
        from toolgym.renderers.mesh_views import Framing, MeshRenderer, tile

        mesh = reference_part(task).mesh
        renderer = MeshRenderer(256)
        try:
            views = tile(renderer.render(mesh, Framing.around(mesh.bounds)).rgb)
        finally:
            renderer.close()
        Image.fromarray(captioned({"target": label_views(views)})).save(image, format="PNG")
        console.print(
            f"target views (iso, front, right, top) in {escape(str(image))}", soft_wrap=True
        )
    if export is not None:
        if fmt == "glb":
            import trimesh

            mesh = reference_part(task).mesh
            data = trimesh.Trimesh(mesh.vertices, mesh.faces).export(file_type="glb")
        else:
            data = export_reference(task, str(fmt))
        export.write_bytes(data)
        console.print(
            f"target part ({str(fmt).upper()}, mm) in {escape(str(export))}", soft_wrap=True
        )


def _check_writable_file(path: Path) -> None:
    """Exit 2 unless ``path`` can be written as a file (checked before any work is done)."""
    if path.is_dir():
        _fail(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        _fail(f"{path}: the folder {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        _fail(f"{path}: not writable")


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

    _check_env(env)
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
        table.add_row(tool.name, escape(params), escape(tool.description))
    console.print(table)


@app.command()
def run(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    agent: Annotated[str, typer.Option(help="random or oracle.")] = "oracle",
    episodes: Annotated[
        int | None, typer.Option(min=1, help="Episodes; default: every task once.")
    ] = None,
    suite: Annotated[str, typer.Option(help="Task suite.")] = "curated",
    split: Annotated[str, typer.Option(help="train or test.")] = "train",
    task: Annotated[
        str | None, typer.Option(help="Run this one task (instead of a suite's tasks).")
    ] = None,
    action_mode: Annotated[str, typer.Option(help="code or tool.")] = "code",
    max_steps: Annotated[int, typer.Option(min=1, max=1000, help="Steps per episode.")] = 8,
    seed: Annotated[int, typer.Option(help="Seed of the first episode.")] = 0,
    wall_s: WallSeconds = None,
    out: Annotated[
        Path | None, typer.Option(help="Folder for each episode's final render (PNG).")
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(help="Record every step into this folder; see `toolgym replay`."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON line per episode instead of a table.")
    ] = False,
) -> None:
    """Run an agent for episodes and print a table: task, steps, score, time."""
    from rich.progress import Progress

    from toolgym.agents.runner import run_episodes

    _check_env(env)
    if agent not in ("random", "oracle"):
        _fail(f"unknown agent {agent!r}; known: random, oracle")
    if agent == "oracle" and action_mode != "code":
        _fail("the oracle replays reference programs: use --action-mode code")
    for folder, option in ((out, "--out"), (record, "--record")):
        if folder is not None:
            _check_writable_folder(folder, option)
    source = task or f"{suite}/{split}"
    table = Table(title=f"{agent} on {env} ({source})")
    table.add_column("task", no_wrap=True)  # ids are never wrapped: they are copied into --task
    for column in ("steps", "score", "passed", "time"):
        table.add_column(column)
    scores = []
    try:
        results = run_episodes(
            env, agent, episodes=episodes, seed=seed, out=out, record=record, suite=suite,
            split=split,
            task=task, action_mode=action_mode, max_steps=max_steps, limits=_limits(wall_s),
        )  # fmt: skip
        with Progress(console=err_console, transient=True, disable=as_json) as progress:
            bar = progress.add_task(f"{agent} episodes", total=episodes)
            for episode in results:
                progress.advance(bar)
                scores.append(episode.score or 0.0)
                if as_json:
                    print(json.dumps(episode.to_dict()), flush=True)
                    continue
                score = "error" if episode.score is None else f"{episode.score:.3f}"
                table.add_row(
                    episode.task, str(episode.steps), score, "yes" if episode.passed else "no",
                    f"{episode.seconds:.1f} s",
                )  # fmt: skip
    except (KeyError, ValueError, TypeError) as exc:
        _fail(str(exc).strip("'\""))
    if as_json:
        return
    table.columns[0].min_width = max((len(str(c)) for c in table.columns[0].cells), default=4)
    console.print(table)
    if scores:
        console.print(f"mean score {sum(scores) / len(scores):.3f} over {len(scores)} episodes")
    if out:
        console.print(
            f"renders in {escape(str(out))}: agent | target, views iso, front, right, top",
            soft_wrap=True,
        )
    if record:
        console.print(
            f"recording in {escape(str(record))}: toolgym replay {escape(str(record))}",
            soft_wrap=True,
        )


def _check_env(env: str) -> None:
    import toolgym

    if env not in toolgym.ENVIRONMENTS:
        _fail(
            f"unknown environment {env!r}; toolgym environments: {', '.join(toolgym.ENVIRONMENTS)}"
        )


def _check_writable_folder(path: Path, option: str = "--out") -> None:
    """Exit 2 unless ``path`` is, or can be made, a writable folder (before any episode runs)."""
    if path.exists() and not path.is_dir():
        what = "the renders" if option == "--out" else "the recording"
        _fail(f"{option} {path} is a file; give a folder for {what}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"{option} {path}: cannot make the folder: {exc.strerror or exc}")
    if not os.access(path, os.W_OK | os.X_OK):
        _fail(f"{option} {path}: the folder is not writable")


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
        _verify_task(task, script, _limits(wall_s))
    else:
        _verify_batch(suite, scripts, jobs, out, force, _limits(wall_s))


def _verify_files(candidate: Path, reference: Path, tier: str, alignment: str) -> None:
    from toolgym.envs.verification import verify_files
    from toolgym.verifiers.parts import PartError

    for path in (candidate, reference):
        if path.is_dir():
            _fail(f"{path} is a folder; --candidate and --reference take part files")
    try:
        report = verify_files(candidate, reference, tier=tier, alignment=alignment)
    except (PartError, ValueError) as exc:
        _fail(str(exc))
    print(report.to_json(indent=2))
    raise typer.Exit(EXIT_ERROR if report.errors else EXIT_PASS if report.passed else EXIT_FAIL)


def _verify_task(task_id: str, script: Path, limits: Limits | None) -> None:
    from toolgym.envs.suites import get_task
    from toolgym.envs.verification import verify_script

    task = _or_fail(get_task, task_id)
    if script.is_dir():
        _fail(
            f"{script} is a folder; --script takes one file (--suite and --scripts take a folder)"
        )
    if not script.is_file():
        _fail(f"{script}: no such script")
    try:
        code = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{script}: cannot read: {exc}")
    outcome = verify_script(task, code, filename=str(script), limits=limits)
    print(json.dumps(outcome.to_dict(), indent=2))
    if outcome.error_kind and outcome.error_kind != "no_part":  # no part: a score of 0, a fail
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_PASS if outcome.passed else EXIT_FAIL)


def _verify_batch(
    suite_name: str, scripts: Path, jobs: int, out: Path, force: bool, limits: Limits | None
) -> None:
    from rich.progress import Progress

    from toolgym.envs.suites import get_suite
    from toolgym.envs.verification import (
        done_tasks,
        read_results,
        results_file_problem,
        summarize,
        verify_batch,
    )

    suite = _or_fail(get_suite, suite_name)
    if scripts.is_file():
        _fail(f"{scripts} is a file; --scripts takes a folder with one <task name>.py per task")
    if not scripts.is_dir():
        _fail(f"{scripts}: no such folder")
    problem = results_file_problem(out)
    if problem and not (force and out.suffix == ".jsonl" and out.is_file()):
        _fail(problem)
    try:  # before any script runs: a results file that cannot be written fails now
        with out.open("w" if force else "a", encoding="utf-8"):
            pass
    except OSError as exc:
        _fail(f"--out {out}: cannot write: {exc.strerror or exc}")
    ids = {t.id for t in suite.tasks}
    remaining = len(ids - done_tasks(out))
    with Progress(console=err_console, transient=True) as progress:
        bar = progress.add_task(f"verifying {suite.name}", total=remaining)
        try:
            verify_batch(
                suite.tasks, scripts, out, jobs=jobs, limits=limits,
                on_done=lambda _: progress.advance(bar),
            )  # fmt: skip
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


@app.command()
def replay(
    run_dir: Annotated[Path, typer.Argument(help="A folder written by --record (or one episode).")],
    out: Annotated[
        Path | None, typer.Option(help="HTML report (default: RUN_DIR/report.html).")
    ] = None,
    gif: Annotated[Path | None, typer.Option(help="Also write the renders as a GIF.")] = None,
    mp4: Annotated[Path | None, typer.Option(help="Also write the renders as an MP4.")] = None,
    verify: Annotated[
        bool,
        typer.Option(help="Re-execute in a fresh env; exit 1 at the first divergence."),
    ] = False,
) -> None:
    """Replay recorded episodes: one self-contained HTML page (an index for several episodes),
    an animation, or a re-execution that checks they reproduce."""
    from toolgym.envs.episode_log import read_run

    try:
        episodes = read_run(run_dir)
    except FileNotFoundError as exc:
        _fail(str(exc))
    for episode in episodes:
        for problem in episode.problems:
            err_console.print(f"[yellow]warning:[/] {escape(problem)}", soft_wrap=True)
    if verify:
        _verify_replay(episodes)
        return
    for path in (gif, mp4):
        if path is not None:
            _check_writable_file(path)
    if gif is not None or mp4 is not None:
        _write_animation(episodes, gif, mp4)
    if out is not None or (gif is None and mp4 is None):
        from toolgym.renderers.replay_html import write_report

        target = out or run_dir / "report.html"
        _check_writable_file(target)
        written = write_report(episodes, target)
        steps = sum(len(e.steps) for e in episodes)
        console.print(
            f"{len(episodes)} episodes, {steps} steps: {escape(str(target))}", soft_wrap=True
        )
        if len(written) > 1:
            console.print(f"episode pages in {escape(str(written[1].parent))}", soft_wrap=True)


def _write_animation(episodes: list[Any], gif: Path | None, mp4: Path | None) -> None:
    from toolgym.renderers.replay_video import run_frames, write_gif, write_mp4

    frames = run_frames(episodes)
    if not frames:
        _fail("no step of the recording has images to animate")
    if gif is not None:
        write_gif(frames, gif)
        console.print(f"{len(frames)} frames: {escape(str(gif))}", soft_wrap=True)
    if mp4 is not None:
        try:
            write_mp4(frames, mp4)
        except RuntimeError as exc:
            _fail(str(exc))
        console.print(f"{len(frames)} frames: {escape(str(mp4))}", soft_wrap=True)


def _verify_replay(episodes: list[Any]) -> None:
    from gymnasium.error import Error as GymError

    from toolgym.envs.replay import verify_episode

    diverged = False
    for episode in episodes:
        try:
            divergence = verify_episode(episode)
        except (KeyError, ValueError, TypeError, GymError) as exc:  # cannot make the env again
            _fail(str(exc).strip("'\""))
        if divergence is None:
            console.print(f"{escape(episode.name)}: {len(episode.steps)} steps reproduce")
        else:
            diverged = True
            console.print(f"[red]diverged[/] {escape(str(divergence))}", soft_wrap=True)
    raise typer.Exit(EXIT_FAIL if diverged else EXIT_PASS)


if __name__ == "__main__":
    app()
