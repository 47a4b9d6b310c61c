"""``toolgym replay``: recorded episodes as an HTML report, an animation, or a re-execution."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolgym.cli.common import (
    EXIT_FAIL,
    EXIT_PASS,
    app,
    check_writable_file,
    console,
    err_console,
    fail,
    message,
)


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
    from toolgym.envs.recording.log import read_run

    if run_dir.is_file():
        fail(f"{run_dir} is a file; give the folder written by --record (or one episode's folder)")
    try:
        episodes = read_run(run_dir)
    except FileNotFoundError as exc:
        fail(str(exc))
    for episode in episodes:
        for problem in episode.problems:
            err_console.print(f"[yellow]warning:[/] {escape(problem)}", soft_wrap=True)
    if verify:
        _verify_replay(episodes)
        return
    for path in (gif, mp4):
        if path is not None:
            check_writable_file(path)
    if gif is not None or mp4 is not None:
        _write_animation(episodes, gif, mp4)
    if out is not None or (gif is None and mp4 is None):
        from toolgym.envs.recording.html import write_report

        target = out or run_dir / "report.html"
        check_writable_file(target)
        written = write_report(episodes, target)
        steps = sum(len(e.steps) for e in episodes)
        console.print(
            f"{len(episodes)} episodes, {steps} steps: {escape(str(target))}", soft_wrap=True
        )
        if len(written) > 1:
            console.print(f"episode pages in {escape(str(written[1].parent))}", soft_wrap=True)


def _write_animation(episodes: list[Any], gif: Path | None, mp4: Path | None) -> None:
    from toolgym.envs.recording.video import run_frames, write_gif, write_mp4

    frames = run_frames(episodes)
    if not frames:
        fail("no step of the recording has images to animate")
    if gif is not None:
        write_gif(frames, gif)
        console.print(f"{len(frames)} frames: {escape(str(gif))}", soft_wrap=True)
    if mp4 is not None:
        try:
            write_mp4(frames, mp4)
        except RuntimeError as exc:
            fail(str(exc))
        console.print(f"{len(frames)} frames: {escape(str(mp4))}", soft_wrap=True)


def _verify_replay(episodes: list[Any]) -> None:
    from gymnasium.error import Error as GymError

    from toolgym.envs.recording.replay import verify_episode

    diverged = False
    for episode in episodes:
        try:
            divergence = verify_episode(episode)
        except (KeyError, ValueError, TypeError, GymError) as exc:  # cannot make the env again
            fail(message(exc))
        if divergence is None:
            console.print(f"{escape(episode.name)}: {len(episode.steps)} steps reproduce")
        else:
            diverged = True
            console.print(f"[red]diverged[/] {escape(str(divergence))}", soft_wrap=True)
    raise typer.Exit(EXIT_FAIL if diverged else EXIT_PASS)
