"""``toolgym run --agent openai``: a model behind an OpenAI-compatible endpoint plays episodes;
``toolgym sft``: recorded episodes as chat-format SFT data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolgym.cli.common import (
    app,
    check_writable_file,
    check_writable_folder,
    console,
    err_console,
    fail,
    limits_for,
)

BaseUrl = Annotated[
    str | None,
    typer.Option(help="--agent openai: the API root, e.g. http://127.0.0.1:8000/v1."),
]
ModelName = Annotated[str | None, typer.Option(help="--agent openai: the model's name.")]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(help="--agent openai: the environment variable holding the API key."),
]
Jobs = Annotated[int, typer.Option(min=1, max=64, help="--agent openai: episodes played at once.")]
ImageSize = Annotated[
    int,
    typer.Option(
        min=0, max=2048, help="--agent openai: pixels of each picture's longer side (0: none)."
    ),
]


def api_key_from(api_key_env: str | None) -> str | None:
    """The API key in the variable ``--api-key-env`` names (``None`` without one), or exit 2."""
    if not api_key_env:
        return None
    api_key = os.environ.get(api_key_env)
    if not api_key:
        fail(f"--api-key-env {api_key_env}: the variable is not set")
    return api_key


def run_openai(
    env: str,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    *,
    episodes: int | None,
    suite: str,
    split: str,
    task: str | None,
    action_mode: str,
    max_steps: int,
    seed: int,
    wall_s: float | None,
    record: Path | None,
    as_json: bool,
    jobs: int,
    image_size: int,
) -> None:
    """Play episodes with a model and print a table (or JSON lines)."""
    from rich.progress import Progress

    from toolgym.agents.llm.chat import ChatClient
    from toolgym.agents.llm.openai_runner import run_chat_episodes

    if not base_url or not model:
        fail("--agent openai needs --base-url and --model")
    api_key = api_key_from(api_key_env)
    if record is not None:
        check_writable_folder(record, "--record", "the recording")
    try:
        client = ChatClient(base_url, model, api_key=api_key)
    except ValueError as exc:
        fail(str(exc))
    table = Table(title=f"{model} on {env} ({task or f'{suite}/{split}'})")
    table.add_column("task", no_wrap=True)
    for column in ("steps", "turns", "score", "passed", "tokens in/out", "time", "stop"):
        table.add_column(column)
    rows, scores, failed = [], [], 0
    try:
        results = run_chat_episodes(
            env,
            client,
            episodes=episodes,
            seed=seed,
            jobs=jobs,
            image_size=image_size,
            record=record,
            suite=suite,
            split=split,
            task=task,
            action_mode=action_mode,
            max_steps=max_steps,
            limits=limits_for(wall_s),
        )
        with Progress(console=err_console, transient=True, disable=as_json) as progress:
            bar = progress.add_task(f"{model} episodes", total=episodes)
            for episode in results:
                progress.advance(bar)
                if episode.error:
                    failed += 1
                    err_console.print(
                        f"[red]error:[/] {escape(episode.task)}: {escape(episode.error)}"
                    )
                scores.append(episode.score or 0.0)
                if as_json:
                    print(json.dumps(episode.to_dict()), flush=True)
                    continue
                score = "error" if episode.score is None else f"{episode.score:.3f}"
                rows.append(
                    (
                        episode.index,
                        (
                            episode.task,
                            str(episode.steps),
                            str(episode.turns),
                            score,
                            "yes" if episode.passed else "no",
                            f"{episode.prompt_tokens}/{episode.completion_tokens}",
                            f"{episode.seconds:.1f} s",
                            episode.stop,
                        ),
                    )
                )
    except (KeyError, ValueError, TypeError) as exc:
        fail(str(exc).strip("'\""))
    finally:
        client.close()
    if as_json:
        return
    for _, row in sorted(rows):
        table.add_row(*row)
    table.columns[0].min_width = max((len(str(c)) for c in table.columns[0].cells), default=4)
    console.print(table)
    if scores:
        console.print(
            f"mean score {sum(scores) / len(scores):.3f} over {len(scores)} episodes"
            + (f"; {failed} failed on an endpoint error" if failed else "")
        )
    if record:
        console.print(
            f"recording in {escape(str(record))}: toolgym replay {escape(str(record))}",
            soft_wrap=True,
        )


@app.command()
def sft(
    run: Annotated[Path, typer.Argument(help="A recording (`toolgym run ... --record RUN`).")],
    out: Annotated[Path, typer.Option(help="The JSON-lines file to write.")] = Path("sft.jsonl"),
    min_score: Annotated[
        float, typer.Option(min=0, max=1, help="Keep episodes scoring at least this.")
    ] = 0.99,
    image_size: Annotated[
        int, typer.Option(min=0, max=2048, help="Pictures' longer side in pixels (0: none).")
    ] = 0,
) -> None:
    """Write recorded episodes as chat-format SFT data: messages and tools, one line each."""
    from toolgym.agents.llm.sft import write_sft

    check_writable_file(out)
    try:
        count = write_sft(run, out, min_score=min_score, image_size=image_size)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    console.print(f"{count} conversations in {escape(str(out))} (episodes scoring ≥ {min_score:g})")
