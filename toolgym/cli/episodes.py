"""``toolgym run``: an agent plays episodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolgym.cli.common import (
    WallSeconds,
    app,
    check_writable_folder,
    console,
    env_domain,
    err_console,
    fail,
    limits_for,
    message,
)
from toolgym.cli.distributed import RayAddress, episode_runner
from toolgym.cli.llm import ApiKeyEnv, BaseUrl, ImageSize, Jobs, ModelName, run_openai


@app.command()
def run(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    agent: Annotated[
        str, typer.Option(help="random, oracle, or openai (a model behind --base-url).")
    ] = "oracle",
    episodes: Annotated[
        int | None, typer.Option(min=1, help="Episodes; default: every task once.")
    ] = None,
    suite: Annotated[
        str | None, typer.Option(help="Task suite; default: the environment's (CAD: curated).")
    ] = None,
    split: Annotated[str, typer.Option(help="train or test.")] = "train",
    task: Annotated[
        str | None, typer.Option(help="Run this one task (instead of a suite's tasks).")
    ] = None,
    action_mode: Annotated[str, typer.Option(help="code or tool.")] = "code",
    max_steps: Annotated[int, typer.Option(min=1, max=1000, help="Steps per episode.")] = 8,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first episode.")] = 0,
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
    base_url: BaseUrl = None,
    model: ModelName = None,
    api_key_env: ApiKeyEnv = None,
    jobs: Jobs = 1,
    image_size: ImageSize = 256,
    ray: RayAddress = None,
) -> None:
    """Run an agent for episodes and print a table: task, steps, score, time."""
    from rich.progress import Progress

    suite = suite or env_domain(env).default_suite
    if agent == "openai":
        if out is not None:
            fail("--out is for the random and oracle agents; record a model's run with --record")
        if ray is not None:
            fail("--ray is for the random and oracle agents; a model's episodes run here (--jobs)")
        return run_openai(
            env,
            base_url,
            model,
            api_key_env,
            episodes=episodes,
            suite=suite,
            split=split,
            task=task,
            action_mode=action_mode,
            max_steps=max_steps,
            seed=seed,
            wall_s=wall_s,
            record=record,
            as_json=as_json,
            jobs=jobs,
            image_size=image_size,
        )
    if agent not in ("random", "oracle"):
        fail(f"unknown agent {agent!r}; known: random, oracle, openai")
    if out is not None:
        check_writable_folder(out)
    if record is not None:
        check_writable_folder(record, "--record", "the recording")
    source = task or f"{suite}/{split}"
    table = Table(title=f"{agent} on {env} ({source})")
    table.add_column("task", no_wrap=True)  # ids are never wrapped: they are copied into --task
    for column in ("steps", "score", "passed", "time"):
        table.add_column(column)
    scores: list[float] = []
    interrupted = False
    try:
        results = episode_runner(ray)(
            env,
            agent,
            episodes=episodes,
            seed=seed,
            out=out,
            record=record,
            suite=suite,
            split=split,
            task=task,
            action_mode=action_mode,
            max_steps=max_steps,
            limits=limits_for(wall_s),
        )
        with Progress(console=err_console, transient=True, disable=as_json) as progress:
            bar = progress.add_task(f"{agent} episodes", total=episodes)
            try:
                for episode in results:
                    progress.advance(bar)
                    scores.append(episode.score or 0.0)
                    if as_json:
                        print(json.dumps(episode.to_dict()), flush=True)
                        continue
                    score = "error" if episode.score is None else f"{episode.score:.3f}"
                    table.add_row(
                        episode.task,
                        str(episode.steps),
                        score,
                        "yes" if episode.passed else "no",
                        f"{episode.seconds:.1f} s",
                    )
            except KeyboardInterrupt:  # the episodes so far are shown, and the env closed
                interrupted = True
                results.close()
    except (KeyError, ValueError, TypeError) as exc:
        fail(message(exc))
    if interrupted:
        plural = "" if len(scores) == 1 else "s"
        shown = "shown above" if as_json else "in the table"
        err_console.print(
            f"interrupted after {len(scores)} finished episode{plural} ({shown}); the episode "
            "under way is not counted",
            highlight=False,
        )
    if as_json:
        raise typer.Exit(130) if interrupted else typer.Exit()
    table.columns[0].min_width = max((len(str(c)) for c in table.columns[0].cells), default=4)
    console.print(table)
    if scores:
        console.print(f"mean score {sum(scores) / len(scores):.3f} over {len(scores)} episodes")
    if out:
        console.print(
            f"renders in {escape(str(out))}: agent | target, views "
            + ("perspective, top" if "GameScene" in env else "iso, front, right, top"),
            soft_wrap=True,
        )
    if record:
        console.print(
            f"recording in {escape(str(record))}: toolgym replay {escape(str(record))}",
            soft_wrap=True,
        )
    if interrupted:
        raise typer.Exit(130)
