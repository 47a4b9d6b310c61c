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
    if out is not None:
        _check_writable_folder(out)
    source = task or f"{suite}/{split}"
    table = Table(title=f"{agent} on {env} ({source})")
    table.add_column("task", no_wrap=True)  # ids are never wrapped: they are copied into --task
    for column in ("steps", "score", "passed", "time"):
        table.add_column(column)
    scores = []
    try:
        results = run_episodes(
            env, agent, episodes=episodes, seed=seed, out=out, suite=suite, split=split,
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


@app.command()
def train(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    suite: Annotated[str, typer.Option(help="Suite: train split to learn, test to evaluate.")] = (
        "primitives"
    ),
    steps: Annotated[int, typer.Option(min=1, help="PPO environment steps (tool calls).")] = 2048,
    bc_steps: Annotated[
        int, typer.Option(min=0, help="Behaviour-cloning steps on oracle traces first.")
    ] = 0,
    out: Annotated[Path, typer.Option(help="Run folder: checkpoints, CSV, TensorBoard.")] = Path(
        "runs/ppo"
    ),
    seed: Annotated[int, typer.Option(help="Seed of everything.")] = 0,
    num_envs: Annotated[int, typer.Option(min=1, max=64, help="Parallel environments.")] = 2,
    num_steps: Annotated[int, typer.Option(min=1, help="Steps per env per iteration.")] = 32,
    max_steps: Annotated[int, typer.Option(min=1, max=1000, help="Calls per episode.")] = 4,
    sampler: Annotated[
        bool, typer.Option(help="Draw weak tasks more often (PLR-style); off: uniform.")
    ] = True,
    eval_episodes: Annotated[
        int, typer.Option(min=0, help="Test-split episodes at the end (0: none).")
    ] = 0,
    learning_rate: Annotated[float, typer.Option(min=0.0, help="Adam's rate, annealed.")] = 3e-4,
    update_epochs: Annotated[int, typer.Option(min=1, help="PPO epochs per iteration.")] = 4,
    device: Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")] = "auto",
    resume: Annotated[bool, typer.Option(help="Continue from --out's latest checkpoint.")] = True,
) -> None:
    """Train the bundled multimodal PPO policy on a suite in tool mode."""
    from toolgym.agents.train import TrainConfig, Trainer

    _check_env(env)
    _or_fail(_suite, suite)
    _check_writable_folder(out)
    config = TrainConfig(
        env_id=env, suite=suite, steps=steps, bc_steps=bc_steps, out=str(out), seed=seed,
        num_envs=num_envs, num_steps=num_steps, max_steps=max_steps, sampler=sampler,
        eval_episodes=eval_episodes, device=device,
    )  # fmt: skip
    config.sampling.enabled = sampler
    config.ppo.learning_rate, config.ppo.update_epochs = learning_rate, update_epochs
    try:
        row = Trainer(config, log=console.print).train(resume=resume)
    except (KeyError, ValueError) as exc:
        _fail(str(exc).strip("'\""))
    console.print(f"checkpoint: {escape(str(out / 'checkpoints' / 'latest.pt'))}")
    if "test_score" in row:
        console.print(f"test split: mean score {row['test_score']:.3f}")


@app.command(name="eval")
def evaluate(
    checkpoint: Annotated[Path, typer.Option(help="A checkpoint written by `toolgym train`.")],
    split: Annotated[str, typer.Option(help="train or test.")] = "test",
    episodes: Annotated[
        int | None, typer.Option(min=1, help="Episodes; default: every task of the split once.")
    ] = None,
    device: Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Evaluate a trained policy (greedy calls) and print a score table."""
    from toolgym.agents.evaluate import evaluate_checkpoint, score_table

    if not checkpoint.is_file():
        _fail(f"--checkpoint {checkpoint}: no such file")
    if split not in ("train", "test"):
        _fail(f"--split must be train or test, got {split!r}")
    try:
        report = evaluate_checkpoint(checkpoint, split, episodes, device)
    except (KeyError, ValueError, RuntimeError) as exc:
        _fail(str(exc).strip("'\""))
    if as_json:
        print(json.dumps(report))
        return
    console.print(score_table(report))


def _suite(name: str) -> Any:
    from toolgym.envs.suites import get_suite

    return get_suite(name)


def _check_env(env: str) -> None:
    import toolgym

    if env not in toolgym.ENVIRONMENTS:
        _fail(
            f"unknown environment {env!r}; toolgym environments: {', '.join(toolgym.ENVIRONMENTS)}"
        )


def _check_writable_folder(path: Path) -> None:
    """Exit 2 unless ``path`` is, or can be made, a writable folder (before any episode runs)."""
    if path.exists() and not path.is_dir():
        _fail(f"--out {path} is a file; give a folder for the renders")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"--out {path}: cannot make the folder: {exc.strerror or exc}")
    if not os.access(path, os.W_OK | os.X_OK):
        _fail(f"--out {path}: the folder is not writable")


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


if __name__ == "__main__":
    app()
