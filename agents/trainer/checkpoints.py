"""Trainer checkpoints: written whole (never a half-written ``latest.pt``), read back, and turned
into a policy, its grammar and the run's config.

A checkpoint is a ``torch.save``d dict holding at least :data:`CHECKPOINT_KEYS`; the trainer's
also hold its optimiser, sampler, generators and counters, so a run resumes exactly. Like every
``torch.load``, reading one unpickles: load only checkpoints you trust.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch

from toolgym.agents.trainer.build import env_registry, make_policy, mixed_grammar
from toolgym.agents.trainer.config import TrainConfig
from toolgym.agents.trainer.policy import Policy, pick_device
from toolgym.envs.grammar import Grammar
from toolgym.envs.wrappers.mixed import parse_mix

CHECKPOINT_KEYS = ("config", "grammar", "policy")


def write_checkpoint(folder: Path, state: dict[str, Any], iteration: int, every: int) -> Path:
    """``state`` into ``folder/latest.pt`` (through a temporary file, so never half-written),
    and into ``folder/iter-<iteration>.pt`` every ``every`` iterations (0: never)."""
    folder.mkdir(parents=True, exist_ok=True)
    latest = folder / "latest.pt"
    torch.save(state, latest.with_suffix(".tmp"))
    latest.with_suffix(".tmp").replace(latest)  # never a half-written latest
    if every and iteration % every == 0:
        torch.save(state, folder / f"iter-{iteration:05d}.pt")
    return latest


def read_checkpoint(path: str | Path, device: str = "auto") -> dict[str, Any]:
    """A trainer checkpoint's contents; ``ValueError`` saying "not a toolgym checkpoint" for
    anything else (an empty file, another program's pickle, a torch file of other things).

    Like every ``torch.load``, this unpickles: load only checkpoints you trust."""
    unreadable = (
        pickle.UnpicklingError,
        EOFError,
        RuntimeError,
        ModuleNotFoundError,
        AttributeError,
        ValueError,
        TypeError,
    )
    try:
        state = torch.load(path, map_location=pick_device(device), weights_only=False)
    except unreadable as exc:
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
    beside = Path(__file__).resolve().parents[2] / suite  # the checkout
    return str(beside) if beside.is_file() else suite


def load_checkpoint(path: str | Path, device: str = "auto") -> tuple[Policy, Grammar, TrainConfig]:
    """The policy, its grammar and the run's config from a trainer checkpoint."""
    state = read_checkpoint(path, device)
    config = TrainConfig.from_dict(state["config"])
    config.suite = _suite_from(config.suite)
    torch.set_num_threads(config.threads)
    op_ranges = None
    if config.mix:
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
