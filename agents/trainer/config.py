"""A training run's configuration (:class:`TrainConfig`): what to train on, for how long, and how.

Plain data: saved as ``config.json`` and in every checkpoint, read back by :meth:`from_dict`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.sampler import SamplerConfig
from toolgym.envs.grammar import DEFAULT_MAX_BINS, DEFAULT_MAX_POINTS
from toolgym.envs.tasks.suites import get_suite
from toolgym.envs.wrappers.mixed import mixed_tasks, parse_mix


@dataclasses.dataclass
class TrainConfig:
    """A training run. ``steps``: PPO's environment steps (tool calls), rounded up to whole
    iterations of ``num_envs * num_steps``; ``bc_steps``: behaviour-cloning gradient steps
    before PPO (0: none), on ``bc_episodes`` oracle episodes of the training split (``None``:
    each training task with tool calls once)."""

    env_id: str = "toolgym/CadQuery-v0"
    suite: str = "primitives"
    # Several tools at once: "tool:suite,tool:suite" (env_id and suite are then unused).
    mix: str | None = None
    steps: int = 2048
    bc_steps: int = 0
    bc_episodes: int | None = None
    bc_batch: int = 64
    bc_lr: float = 1e-3
    # Soft-binned cloning targets: a numeric slot's target is a Gaussian of this many bins about
    # the demonstrated bin (0: the bin alone). For numbers read from pictures, where a near miss
    # is better than a far one; see toolgym.agents.trainer.ppo.behaviour_cloning.
    bc_bin_sigma: float = 0.0
    out: str = "runs/ppo"
    seed: int = 0
    num_envs: int = 2
    num_steps: int = 32
    max_steps: int = 4
    view_size: int = 32
    # "image": the prompt names only the kind of task, the target exists only as pictures.
    prompt_form: str = "described"
    # The tier that settles a training episode's return: "cheap" keeps the last per-step score
    # (a CAD episode of one call costs about half as much); None, the task's (exact). Evaluation
    # always scores at the task's tier.
    final_tier: str | None = "cheap"
    max_bins: int = DEFAULT_MAX_BINS
    all_tools: bool = False
    # The grammar's derived-value tokens (halves, sums, positions on the previous call) where
    # the suite's references use them, and its stop operation (None: where the references have
    # several calls); see toolgym.envs.grammar. Not for mixed runs.
    derived: bool = True
    stop: bool | None = None
    # Copy tokens for the prompt's first ``copies`` numbers in every real-valued slot, so a copy
    # is exact rather than snapped to a bin; one range of coordinate tokens for all of a polygon's
    # points, at most ``max_points`` of them (see toolgym.envs.grammar.tables). For suites of
    # many families, whose shared bins are coarse and whose polygons are long.
    copies: int = 0
    shared_points: bool = False
    max_points: int = DEFAULT_MAX_POINTS
    # Bins on multiples of their step (0 among them) rather than counted from the range's low end.
    anchored_bins: bool = False
    sampler: bool = True
    asynchronous: bool = True
    # Run the envs in Ray actors: "local" (a Ray on this machine) or a cluster's address;
    # None: local worker processes (see toolgym.agents.distributed.runners).
    ray: str | None = None
    # Collect the next rollout while the learner updates on this one (one update behind at
    # most; PPO's ratio is against the stored log-probs of the policy that acted). A resumed
    # run then restarts the pipeline, so it does not repeat an uninterrupted one exactly.
    overlap: bool = False
    device: str = "auto"
    # Torch's CPU threads. One: on a small machine the env workers keep the cores busy, and
    # OpenMP threads spinning against them made a PPO update 30x slower on 2 busy cores.
    threads: int = 1
    eval_episodes: int = 0
    # Record the final evaluation's episodes into ``out/eval-episodes`` (see ``toolgym replay``).
    record_eval: bool = False
    checkpoint_every: int = 1
    progress: bool = True
    ppo: PPOConfig = dataclasses.field(default_factory=PPOConfig)
    policy: PolicyConfig = dataclasses.field(default_factory=PolicyConfig)
    sampling: SamplerConfig = dataclasses.field(default_factory=SamplerConfig)

    @property
    def iterations(self) -> int:
        return max(1, -(-self.steps // (self.num_envs * self.num_steps)))

    def __post_init__(self) -> None:
        if self.policy.depth and (self.mix or not _takes_depth(self.env_id)):
            where = f"the mix {self.mix}" if self.mix else self.env_id
            raise ValueError(f"PolicyConfig.depth reads an env's depth views; {where} has none")

    def env_kwargs(self, evaluation: bool = False) -> dict[str, Any]:
        """The env's arguments: for training, or (``evaluation``) for scoring at the task's
        own final tier."""
        where = {"mix": self.mix} if self.mix else {"suite": self.suite}
        form = {} if self.prompt_form == "described" else {"prompt_form": self.prompt_form}
        if self.policy.depth:  # the policy reads the views' depth (the env's ``depth``)
            form["depth"] = True
        max_steps = self.tool_max_steps() if self.mix else self.max_steps
        tier = None if evaluation else self.final_tier
        return {
            **where,
            "max_steps": max_steps,
            "view_size": self.view_size,
            "final_tier": tier,
            **form,
        }

    def grammar_options(self) -> dict[str, Any]:
        """The grammar's options past its bins, where they differ from the defaults (a run
        without them builds the grammar it always did)."""
        options = {
            "copies": self.copies,
            "shared_points": self.shared_points,
            "anchored": self.anchored_bins,
        }
        options = {key: value for key, value in options.items() if value}
        if self.max_points != DEFAULT_MAX_POINTS:
            options["max_points"] = self.max_points
        return options

    def tool_max_steps(self) -> dict[str, int]:
        """Mixed: each tool's calls per episode, ``max_steps`` or more: at least as many as
        its suite's longest reference has, so its demonstrations are whole and its tasks can
        be finished (a Blender placement of three objects takes six calls, a CAD part two)."""
        steps = {}
        for tool, suite in parse_mix(self.mix or ""):
            longest = max((len(t.tool_calls or ()) for t in get_suite(suite).tasks), default=0)
            steps[tool] = max(self.max_steps, longest)
        return steps

    def tasks(self, split: str) -> list[Any]:
        """The tasks of a split: the suite's, or every suite's of the mix."""
        if self.mix:
            return mixed_tasks(parse_mix(self.mix), split)
        return list(get_suite(self.suite).split(split))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        data = dict(data)
        nested = {"ppo": PPOConfig, "policy": PolicyConfig, "sampling": SamplerConfig}
        for key, kind in nested.items():
            if key in data:
                fields = dict(data[key])
                if key == "policy" and "channels" in fields:
                    fields["channels"] = tuple(fields["channels"])
                data[key] = kind(**fields)
        return cls(**data)


def _takes_depth(env_id: str) -> bool:
    """Whether the env has depth views to give (a ``depth`` argument among its options)."""
    try:
        entry = gym.spec(env_id).entry_point
    except gym.error.Error:
        return False
    env_class = load_env_creator(entry) if isinstance(entry, str) else entry
    options = getattr(env_class, "Options", None)
    return options is not None and "depth" in {f.name for f in dataclasses.fields(options)}
