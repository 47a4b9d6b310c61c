"""Evaluate a trained policy on a suite's split: greedy tool calls, exact final scores.

It needs the policy, its grammar and the run's config (a checkpoint gives all three, see
``toolgym.agents.trainer.checkpoints``); the envs are the trainer's (``make_vector_env``), scoring
at the task's own final tier.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from toolgym.agents.trainer.checkpoints import load_checkpoint
from toolgym.agents.trainer.config import TrainConfig
from toolgym.agents.trainer.observations import observe
from toolgym.agents.trainer.policy import Policy, to_torch
from toolgym.agents.trainer.progress import phase
from toolgym.agents.trainer.seeds import SeedStreams
from toolgym.agents.trainer.vector import make_vector_env, play_queued
from toolgym.envs.grammar import STOP_TOOL, EpisodeContexts, Grammar
from toolgym.envs.wrappers.mixed import parse_mix


def evaluate_policy(
    policy: Policy,
    grammar: Grammar,
    config: TrainConfig,
    split: str = "test",
    episodes: int | None = None,
    greedy: bool = True,
    record: str | Path | None = None,
    progress: bool = False,
    overrides: dict[str, Any] | None = None,
    transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Play ``episodes`` tasks of ``config.suite``'s ``split`` (each task once, in order, cycling
    when asked for more; ``None``: every task once), recording them into ``record`` when given
    (see ``toolgym replay``), with a progress bar when ``progress``. Returns ``score`` (mean
    final score), ``success_rate``, ``steps`` (mean calls per episode), ``stopped`` (episodes
    the policy ended with the stop call) and per-family and per-episode rows.
    ``overrides``: env arguments that replace the run's (``prompt_form``...); ``transform``:
    what the policy sees instead of the observations (an ablation: images zeroed...)."""
    tasks = [t.id for t in config.tasks(split)]
    if not tasks:
        raise ValueError(f"suite {config.mix or config.suite!r} has no {split!r} tasks")
    count = episodes or len(tasks)
    queue = [tasks[k % len(tasks)] for k in range(count)]
    device = next(policy.parameters()).device
    seeds = SeedStreams(config.seed)
    generator = seeds.evaluation_sampling(device)
    contexts = EpisodeContexts(min(config.num_envs, count))
    stops = 0

    def choose(obs: dict[str, Any], current: list[str]) -> list[str]:
        seen = transform(dict(obs)) if transform else obs
        batch = observe(seen, config.policy)
        with torch.no_grad():
            tokens, *_ = policy.act(to_torch(batch, device), generator, greedy=greedy)
        numbers, number_at = batch["numbers"], batch["number_at"]
        return contexts.decode(grammar, tokens.cpu().numpy(), seen, numbers, number_at)

    def count_stops(obs: dict[str, Any], calls: list[str], recording: np.ndarray) -> None:
        nonlocal stops  # of the episodes played for the report (not an env's past its queue)
        played = np.flatnonzero(recording)
        stops += sum(json.loads(calls[i]).get("name") == STOP_TOOL for i in played)

    kwargs = dict(config.env_kwargs(evaluation=True), split=split, **(overrides or {}))
    vec = make_vector_env(
        config.env_id,
        tasks,
        min(config.num_envs, count),
        config.asynchronous,
        record=str(record) if record is not None else None,
        ray=config.ray,
        **kwargs,
    )
    try:
        with phase(f"{split} episodes", count, progress) as advance:
            results = play_queued(
                vec,
                queue,
                choose,
                seed=seeds.evaluation_resets(),
                on_step=count_stops,
                on_outcome=lambda _, dones, rec: advance(int(np.sum(dones & rec))),
            )
    finally:
        vec.close()
    report = summarize(results, split) | {"stopped": stops}
    if config.mix:  # and per tool
        tool_of = {suite: tool for tool, suite in parse_mix(config.mix)}
        by_tool: dict[str, list[tuple[str, float, bool, int]]] = {}
        for tool in tool_of.values():
            by_tool[tool] = [r for r in results if tool_of[r[0].split("/", 1)[0]] == tool]
        report["tools"] = {
            tool: summarize(rows, split)["score"] for tool, rows in by_tool.items() if rows
        }
    return report


def summarize(results: list[tuple[str, float, bool, int]], split: str) -> dict[str, Any]:
    """Means over ``(task, score, passed, steps)`` episodes, overall and by family."""
    by_family: dict[str, list[tuple[float, bool, int]]] = defaultdict(list)
    for task, score, passed, steps in results:
        by_family[_family(task)].append((score, passed, steps))
    rows = {
        family: {
            "episodes": len(rows),
            "score": float(np.mean([r[0] for r in rows])),
            "success_rate": float(np.mean([r[1] for r in rows])),
            "steps": float(np.mean([r[2] for r in rows])),
        }
        for family, rows in sorted(by_family.items())
    }
    return {
        "split": split,
        "episodes": len(results),
        "score": float(np.mean([r[1] for r in results])),
        "success_rate": float(np.mean([r[2] for r in results])),
        "steps": float(np.mean([r[3] for r in results])),
        "families": rows,
        "results": [{"task": t, "score": s, "passed": p, "steps": n} for t, s, p, n in results],
    }


def _family(task_id: str) -> str:
    """``suite/family/split-seed`` -> ``family``; a hand-written ``suite/name`` -> ``suite``."""
    parts = task_id.split("/")
    return parts[1] if len(parts) == 3 else parts[0]


def evaluate_checkpoint(
    path: str | Path,
    split: str = "test",
    episodes: int | None = None,
    device: str = "auto",
    record: str | Path | None = None,
    ray: str | None = None,
    progress: bool = False,
    suite: str | None = None,
    prompt_form: str | None = None,
) -> dict[str, Any]:
    """:func:`evaluate_policy` on a checkpoint; ``ray``: run the envs in Ray actors (an address,
    or ``"local"``), whatever the run was trained with. ``suite``: score on another suite of
    the same tool than the run's (held-out wording, families: does it generalise?);
    ``prompt_form``: ask its tasks another way. Raises ``ValueError`` for a suite of another
    tool, or a mixed run (its tools' suites are its mix)."""
    policy, grammar, config = load_checkpoint(path, device)
    config.ray = ray
    overrides = {}
    if suite is not None:
        if config.mix:
            raise ValueError(
                f"the checkpoint was trained on the mix {config.mix}; a suite is for one tool's run"
            )
        from toolgym.envs.domains import get_domain
        from toolgym.envs.tasks.suites import get_suite

        domain = get_domain(get_suite(suite).domain)
        if domain.env_id != config.env_id:
            raise ValueError(
                f"suite {suite!r} is {domain.env_id}'s; the checkpoint plays {config.env_id}"
            )
        config.suite = suite
    if prompt_form is not None:
        overrides["prompt_form"] = prompt_form
    return evaluate_policy(
        policy,
        grammar,
        config,
        split,
        episodes,
        record=record,
        progress=progress,
        overrides=overrides,
    )


def score_table(report: dict[str, Any]) -> Any:
    """A rich table: one row per family, then the total."""
    from rich.table import Table

    table = Table(title=f"{report['split']} split: {report['episodes']} episodes")
    for column in ("family", "episodes", "mean score", "success rate", "calls per episode"):
        table.add_column(column, justify="left" if column == "family" else "right")
    rows = [*report["families"].items(), ("all", report)]
    for family, row in rows:
        figures = (f"{row['score']:.3f}", f"{row['success_rate']:.2f}", f"{row['steps']:.1f}")
        table.add_row(family, str(row["episodes"]), *figures)
    return table
