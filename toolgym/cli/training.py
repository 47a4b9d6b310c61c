"""``toolgym train`` and ``toolgym eval``: the bundled multimodal PPO trainer."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolgym.cli.common import (
    app,
    check_device,
    check_writable_folder,
    console,
    env_domain,
    err_console,
    fail,
    message,
    or_fail,
)
from toolgym.cli.distributed import RayAddress, connect
from toolgym.envs.tasks.model import SPLITS


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
    seed: Annotated[int, typer.Option(min=0, help="Seed of everything.")] = 0,
    num_envs: Annotated[int, typer.Option(min=1, max=64, help="Parallel environments.")] = 2,
    num_steps: Annotated[int, typer.Option(min=1, help="Steps per env per iteration.")] = 32,
    max_steps: Annotated[
        int,
        typer.Option(
            min=1,
            max=1000,
            help="Calls per episode (--mix: each tool at least its suite's longest reference).",
        ),
    ] = 4,
    sampler: Annotated[
        bool, typer.Option(help="Draw weak tasks more often (PLR-style); off: uniform.")
    ] = True,
    eval_episodes: Annotated[
        int, typer.Option(min=0, help="Test-split episodes at the end (0: none).")
    ] = 0,
    record_eval: Annotated[
        bool, typer.Option(help="Record the test episodes into --out/eval-episodes.")
    ] = False,
    final_tier: Annotated[
        str, typer.Option(help="Tier settling a training episode: cheap (per-step) or exact.")
    ] = "cheap",
    learning_rate: Annotated[float, typer.Option(min=0.0, help="Adam's rate, annealed.")] = 3e-4,
    update_epochs: Annotated[int, typer.Option(min=1, help="PPO epochs per iteration.")] = 4,
    device: Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")] = "auto",
    resume: Annotated[bool, typer.Option(help="Continue from --out's latest checkpoint.")] = True,
    ray: RayAddress = None,
    overlap: Annotated[
        bool,
        typer.Option(help="Collect the next rollout while the learner updates (lag: one update)."),
    ] = False,
    mix: Annotated[
        str | None,
        typer.Option(
            help="Several tools at once, tool:suite pairs (cadquery:primitives,"
            "blender:blender-placement,scene:scene-layout); replaces --env and --suite."
        ),
    ] = None,
    prompt_form: Annotated[
        str,
        typer.Option(help="described (the request's words) or image (the target's views only)."),
    ] = "described",
    depth: Annotated[
        bool,
        typer.Option(
            help="CadQuery: the policy reads the views' depth too and copies numbers measured "
            "off it (sizes and places to the 0.5 mm an image-only prompt needs)."
        ),
    ] = False,
) -> None:
    """Train the bundled multimodal PPO policy on a suite in tool mode (or on several tools)."""
    from toolgym.agents.trainer.policy import PolicyConfig
    from toolgym.agents.trainer.train import TrainConfig, Trainer

    if mix is not None:
        from toolgym.envs.wrappers.mixed import mix_text, parse_mix

        mix = mix_text(or_fail(parse_mix, mix))
    else:
        env_domain(env)
        or_fail(_suite, suite)
        suite = _portable_suite(suite)
    from toolgym.envs.episode.options import PROMPT_FORMS
    from toolgym.verifiers.report import TIERS

    if prompt_form not in PROMPT_FORMS:
        fail(f"--prompt-form must be {' or '.join(PROMPT_FORMS)}, not {prompt_form!r}")
    if final_tier not in TIERS:
        fail(f"--final-tier must be {' or '.join(TIERS)}, not {final_tier!r}")
    try:  # before the run's folder is made: TrainConfig refuses --depth where there is none
        config = TrainConfig(
            env_id=env,
            suite=suite,
            steps=steps,
            bc_steps=bc_steps,
            out=str(out),
            seed=seed,
            num_envs=num_envs,
            num_steps=num_steps,
            max_steps=max_steps,
            sampler=sampler,
            eval_episodes=eval_episodes,
            record_eval=record_eval,
            device=device,
            final_tier=final_tier,
            ray=ray,
            mix=mix,
            overlap=overlap,
            prompt_form=prompt_form,
            policy=PolicyConfig(depth=depth, measure=depth),
        )
    except ValueError as exc:
        fail(message(exc))
    check_writable_folder(out, what="the run (checkpoints, progress.csv, TensorBoard)")
    check_device(device)
    connect(ray)
    config.sampling.enabled = sampler
    config.ppo.learning_rate, config.ppo.update_epochs = learning_rate, update_epochs
    trainer = None
    try:
        trainer = Trainer(config, log=console.print)
        row = trainer.train(resume=resume)
    except (KeyError, ValueError) as exc:
        fail(message(exc))
    except KeyboardInterrupt:
        iteration = trainer.iteration if trainer else 0
        done = f"after iteration {iteration}" if iteration else "before the first iteration ended"
        again = shlex.join(a for a in sys.argv[1:] if a != "--no-resume")
        err_console.print(
            f"interrupted {done}; checkpoints are in {escape(str(out))}; resume with: "
            f"toolgym {escape(again)}"
        )
        raise typer.Exit(130) from None
    console.print(f"checkpoint: {escape(str(out / 'checkpoints' / 'latest.pt'))}")
    if "test_score" in row:
        console.print(f"test split: mean score {row['test_score']:.3f}")
    for key in sorted(k for k in row if k.startswith("test_score_")):
        console.print(f"  {key.removeprefix('test_score_')}: {row[key]:.3f}")


@app.command(name="eval")
def evaluate(
    checkpoint: Annotated[Path, typer.Option(help="A checkpoint written by `toolgym train`.")],
    split: Annotated[str, typer.Option(help="train or test.")] = "test",
    episodes: Annotated[
        int | None, typer.Option(min=1, help="Episodes; default: every task of the split once.")
    ] = None,
    device: Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")] = "auto",
    record: Annotated[
        Path | None,
        typer.Option(help="Record every episode into this folder; see `toolgym replay`."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    ray: RayAddress = None,
    suite: Annotated[
        str | None,
        typer.Option(help="Score on this suite of the same tool (default: the run's own)."),
    ] = None,
    prompt_form: Annotated[
        str | None, typer.Option(help="described or image (default: the run's).")
    ] = None,
) -> None:
    """Evaluate a trained policy (greedy calls) and print a score table."""
    from toolgym.agents.trainer.evaluate import evaluate_checkpoint, score_table

    checkpoint = checkpoint_file(checkpoint)
    if split not in SPLITS:
        fail(f"--split must be train or test, got {split!r}")
    if suite is not None:
        or_fail(_suite, suite)
        suite = _portable_suite(suite)
    from toolgym.envs.episode.options import PROMPT_FORMS

    if prompt_form is not None and prompt_form not in PROMPT_FORMS:
        fail(f"--prompt-form must be {' or '.join(PROMPT_FORMS)}, not {prompt_form!r}")
    if record is not None:
        check_writable_folder(record, "--record", "the recording")
    check_device(device)
    connect(ray)
    try:
        report = evaluate_checkpoint(
            checkpoint,
            split,
            episodes,
            device,
            record=record,
            ray=ray,
            progress=not as_json,
            suite=suite,
            prompt_form=prompt_form,
        )
    except (KeyError, ValueError, RuntimeError) as exc:
        fail(message(exc))
    except KeyboardInterrupt:
        err_console.print("interrupted: the evaluation did not finish, so there is no score")
        raise typer.Exit(130) from None
    if as_json:
        print(json.dumps(report))
        return
    console.print(score_table(report))
    if record:
        console.print(f"recording in {escape(str(record))}: toolgym replay {escape(str(record))}")


def checkpoint_file(path: Path) -> Path:
    """The checkpoint file ``--checkpoint`` names: a file, or a run folder's latest."""
    if path.is_dir():
        for inside in (path / "checkpoints" / "latest.pt", path / "latest.pt"):
            if inside.is_file():
                return inside
        fail(f"--checkpoint {path} is a folder without checkpoints/latest.pt; give a .pt file")
    if not path.exists():
        fail(f"--checkpoint {path}: no such file")
    return path


def _portable_suite(name: str) -> str:
    """A suite file's absolute path (a checkpoint then evaluates from any folder); names as is."""
    return str(Path(name).resolve()) if name.endswith(".toml") else name


def _suite(name: str) -> Any:
    from toolgym.envs.tasks.suites import get_suite

    return get_suite(name)
