"""Evaluate a trained policy on a suite's split: greedy tool calls, exact final scores."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from toolgym.agents.policy import Policy, pick_device, to_torch
from toolgym.agents.progress import phase
from toolgym.agents.vector import make_vector_env, play_queued
from toolgym.envs.grammar import STOP_TOOL, EpisodeContexts, Grammar
from toolgym.envs.wrappers.mixed import parse_mix


def evaluate_policy(
    policy: Policy,
    grammar: Grammar,
    config: Any,
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
    from toolgym.agents.train import observe

    tasks = [t.id for t in config.tasks(split)]
    if not tasks:
        raise ValueError(f"suite {config.mix or config.suite!r} has no {split!r} tasks")
    count = episodes or len(tasks)
    queue = [tasks[k % len(tasks)] for k in range(count)]
    device = next(policy.parameters()).device
    generator = torch.Generator(device).manual_seed(config.seed)
    contexts = EpisodeContexts(min(config.num_envs, count))
    stops = 0

    def choose(obs: dict[str, Any], current: list[str]) -> list[str]:
        seen = transform(dict(obs)) if transform else obs
        batch = observe(seen, config.policy)
        with torch.no_grad():
            tokens, *_ = policy.act(to_torch(batch, device), generator, greedy=greedy)
        return contexts.decode(grammar, tokens.cpu().numpy(), seen, batch["numbers"],
                               batch["number_at"])  # fmt: skip

    def count_stops(obs: dict[str, Any], calls: list[str], recording: np.ndarray) -> None:
        nonlocal stops  # of the episodes played for the report (not an env's past its queue)
        stops += sum(json.loads(calls[i]).get("name") == STOP_TOOL
                     for i in np.flatnonzero(recording))  # fmt: skip

    kwargs = dict(config.env_kwargs(evaluation=True), split=split, **(overrides or {}))
    vec = make_vector_env(
        config.env_id, tasks, min(config.num_envs, count), config.asynchronous,
        record=str(record) if record is not None else None, ray=config.ray, **kwargs,
    )  # fmt: skip
    try:
        with phase(f"{split} episodes", count, progress) as advance:
            results = play_queued(
                vec, queue, choose, seed=config.seed + 104_729, on_step=count_stops,
                on_outcome=lambda _, dones, rec: advance(int(np.sum(dones & rec))),
            )  # fmt: skip
    finally:
        vec.close()
    report = summarize(results, split) | {"stopped": stops}
    if config.mix:  # and per tool
        tool_of = {suite: tool for tool, suite in parse_mix(config.mix)}
        report["tools"] = {
            tool: summarize([r for r in results if tool_of[r[0].split("/", 1)[0]] == tool],
                            split)["score"]
            for tool in tool_of.values()
            if any(tool_of[r[0].split("/", 1)[0]] == tool for r in results)
        }  # fmt: skip
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


CHECKPOINT_KEYS = ("config", "grammar", "policy")


def read_checkpoint(path: str | Path, device: str = "auto") -> dict[str, Any]:
    """A trainer checkpoint's contents; ``ValueError`` saying "not a toolgym checkpoint" for
    anything else (an empty file, another program's pickle, a torch file of other things).

    Like every ``torch.load``, this unpickles: load only checkpoints you trust."""
    import pickle

    try:
        state = torch.load(path, map_location=pick_device(device), weights_only=False)
    except (pickle.UnpicklingError, EOFError, RuntimeError, ModuleNotFoundError,
            AttributeError, ValueError, TypeError) as exc:  # fmt: skip
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "empty or truncated"
        raise ValueError(f"{path}: not a toolgym checkpoint ({reason})") from None
    if not isinstance(state, dict) or not all(key in state for key in CHECKPOINT_KEYS):
        raise ValueError(f"{path}: not a toolgym checkpoint (no {', '.join(CHECKPOINT_KEYS)})")
    return state


def _suite_from(suite: str) -> str:
    """A run's suite; a suite file stored relative to the folder the run started in (older
    checkpoints) is looked for there and then beside the package's ``assets/``."""
    if not suite.endswith(".toml") or Path(suite).is_file():
        return suite
    beside = Path(__file__).resolve().parents[1] / suite
    return str(beside) if beside.is_file() else suite


def load_checkpoint(path: str | Path, device: str = "auto") -> tuple[Policy, Grammar, Any]:
    """The policy, its grammar and the run's config from a trainer checkpoint."""
    from toolgym.agents.train import TrainConfig, env_registry, make_policy

    state = read_checkpoint(path, device)
    config = TrainConfig.from_dict(state["config"])
    config.suite = _suite_from(config.suite)
    torch.set_num_threads(config.threads)
    op_ranges = None
    if config.mix:
        from toolgym.agents.mixed import mixed_grammar

        grammar, op_ranges = mixed_grammar(parse_mix(config.mix), config.max_bins, config.all_tools)
        if grammar.describe() != state["grammar"]:
            raise ValueError(f"{path}: the checkpoint's grammar differs from its mix's today")
    else:
        registry = env_registry(config.env_id, config.suite)
        grammar = Grammar.from_description(registry, state["grammar"])
    policy = make_policy(config, grammar, op_ranges).to(pick_device(device))
    policy.load_state_dict(state["policy"])
    policy.eval()
    return policy, grammar, config


def evaluate_checkpoint(
    path: str | Path,
    split: str = "test",
    episodes: int | None = None,
    device: str = "auto",
    record: str | Path | None = None,
    ray: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """:func:`evaluate_policy` on a checkpoint; ``ray``: run the envs in Ray actors (an address,
    or ``"local"``), whatever the run was trained with."""
    policy, grammar, config = load_checkpoint(path, device)
    config.ray = ray
    return evaluate_policy(
        policy, grammar, config, split, episodes, record=record, progress=progress
    )


def score_table(report: dict[str, Any]) -> Any:
    """A rich table: one row per family, then the total."""
    from rich.table import Table

    table = Table(title=f"{report['split']} split: {report['episodes']} episodes")
    for column in ("family", "episodes", "mean score", "success rate", "calls per episode"):
        table.add_column(column, justify="left" if column == "family" else "right")
    rows = [*report["families"].items(), ("all", report)]
    for family, row in rows:
        table.add_row(
            family, str(row["episodes"]), f"{row['score']:.3f}", f"{row['success_rate']:.2f}",
            f"{row['steps']:.1f}",
        )  # fmt: skip
    return table
