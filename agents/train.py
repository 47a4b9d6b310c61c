"""The bundled trainer: behaviour cloning (optional), then PPO over tool calls, on any toolgym env.

The trainer knows nothing of the tool: it needs an env id, a suite and the env's tool registry
(for the grammar). The suite's training split gives the tasks (and, where they have tool-call
references, the grammar's ranges and the demonstrations); its test split gives the evaluation.

Each iteration: the sampler's weights go to the workers; every env restarts from a seed fixed by
``(seed, iteration)`` (so an iteration depends only on the state saved at its start, and a resumed
run repeats an uninterrupted one exactly); ``num_steps`` calls per env are collected; an episode
cut by the iteration's end is bootstrapped from the value of its next observation; PPO updates.

Several tools train together with ``mix`` (``"cadquery:primitives,blender:blender-placement,
scene:scene-layout"``, see ``toolgym.envs.wrappers.mixed``): one policy (``toolgym.agents.mixed``:
one encoder, one decoder, each tool's calls in one grammar), workers that play any tool, and a
sampler over every task of every tool, grouped by tool, so the weakest tool is played more.
``progress.csv`` then has each tool's score, its share of the iteration's steps and its share of
the sampler's weight (``score_<tool>``, ``share_<tool>``, ``weight_<tool>``).

Written under ``out``: ``config.json``, ``progress.csv`` (one row per iteration),
``tensorboard/`` (the same quantities), ``checkpoints/latest.pt`` (and one per
``checkpoint_every`` iterations), ``eval.json`` when evaluated at the end.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import json
import queue
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from toolgym.agents.policy import (
    Policy,
    PolicyConfig,
    batch_observations,
    pick_device,
    prompt_numbers,
    to_torch,
)
from toolgym.agents.ppo import PPOConfig, annealed_lr, behaviour_cloning, gae, update
from toolgym.agents.progress import phase
from toolgym.agents.sampler import SamplerConfig, WeaknessSampler
from toolgym.agents.vector import finished_episodes, make_vector_env, play_queued
from toolgym.envs.grammar import (
    DEFAULT_MAX_BINS,
    STOP_TOOL,
    EpisodeContexts,
    Grammar,
    suite_derived,
    suite_ranges,
    suite_tools,
    text_choices,
    usable_tools,
)
from toolgym.envs.tasks.suites import get_suite
from toolgym.envs.tools import ToolRegistry
from toolgym.envs.wrappers.mixed import mixed_tasks, parse_mix, tool_of_task

CSV_FIELDS = (
    "iteration", "env_steps", "episodes", "return", "score", "success_rate", "sps", "lr",
    "policy_loss", "value_loss", "entropy", "approx_kl", "old_approx_kl", "clipfrac",
    "explained_variance", "epochs", "learner_waits_env", "env_waits_learner", "sampler_max_weight",
    "sampler_entropy", "seconds",
)  # fmt: skip


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
    # is better than a far one; see toolgym.agents.ppo.behaviour_cloning.
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
    sampler: bool = True
    asynchronous: bool = True
    # Run the envs in Ray actors: "local" (a Ray on this machine) or a cluster's address;
    # None: local worker processes (see toolgym.agents.ray_runners).
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
        if self.policy.depth and (self.mix or self.env_id != "toolgym/CadQuery-v0"):
            where = f"the mix {self.mix}" if self.mix else self.env_id
            raise ValueError(f"PolicyConfig.depth reads CadQuery-v0's depth; {where} has none")

    def env_kwargs(self, evaluation: bool = False) -> dict[str, Any]:
        """The env's arguments: for training, or (``evaluation``) for scoring at the task's
        own final tier."""
        where = {"mix": self.mix} if self.mix else {"suite": self.suite}
        form = {} if self.prompt_form == "described" else {"prompt_form": self.prompt_form}
        if self.policy.depth:  # the policy reads the views' depth (CadQuery-v0's ``depth``)
            form["depth"] = True
        return {
            **where, "max_steps": self.tool_max_steps() if self.mix else self.max_steps,
            "view_size": self.view_size,
            "final_tier": None if evaluation else self.final_tier, **form,
        }  # fmt: skip

    def tool_max_steps(self) -> dict[str, int]:
        """Mixed: each tool's calls per episode, ``max_steps`` or more: at least as many as
        its suite's longest reference has, so its demonstrations are whole and its tasks can
        be finished (a Blender placement of three objects takes six calls, a CAD part two)."""
        longest = {
            tool: max((len(t.tool_calls or ()) for t in get_suite(suite).tasks), default=0)
            for tool, suite in parse_mix(self.mix or "")
        }  # fmt: skip
        return {tool: max(self.max_steps, calls) for tool, calls in longest.items()}

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


def observe(observations: Any, config: PolicyConfig) -> dict[str, np.ndarray]:
    """The policy's inputs (``batch_observations``), with each row's tool when mixed."""
    batch = batch_observations(observations, config)
    if "tool" in observations:
        batch["tool"] = np.asarray(observations["tool"], np.int64)
    return batch


def make_policy(config: TrainConfig, grammar: Grammar, op_ranges: Any = None) -> Policy:
    """The bundled policy, or (mixed) its form masked to each row's tool."""
    if config.mix:
        from toolgym.agents.mixed import MixedPolicy

        return MixedPolicy(grammar, op_ranges, config.policy)
    return Policy(grammar, config.policy)


def run_grammar(config: TrainConfig) -> tuple[Grammar, Any]:
    """The run's grammar (and, mixed, each tool's operation tokens)."""
    if config.mix:
        from toolgym.agents.mixed import mixed_grammar

        return mixed_grammar(parse_mix(config.mix), config.max_bins, config.all_tools)
    grammar = build_grammar(
        config.env_id, config.suite, config.max_bins, config.all_tools, config.derived,
        config.stop, config.policy,
    )  # fmt: skip
    return grammar, None


def seed_everything(seed: int) -> torch.Generator:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def env_registry(env_id: str, suite: str | None = None) -> ToolRegistry:
    """The tool registry of ``env_id`` in tool mode (made and closed; no session starts)."""
    env = gym.make(env_id, action_mode="tool", **({"suite": suite} if suite else {}))
    registry = env.unwrapped.registry
    env.close()
    return registry


def calls_grammar(
    registry: ToolRegistry,
    calls: Sequence[str],
    max_bins: int = DEFAULT_MAX_BINS,
    all_tools: bool = False,
    names: Sequence[str] = (),
) -> Grammar:
    """The registry's grammar with bins over ``calls``' ranges (and only their tools, unless
    ``all_tools``); the registry's widest ranges when there are no calls.

    The registry's open text parameters (object, modifier, material names) take the values that
    ``calls`` and ``names`` (more calls: the suite's other splits, whose names the prompts
    give) use; tools with a text parameter left without choices are left out."""
    ranges: dict[str, Any] = suite_ranges(registry, calls) if calls else {}
    # Text values (names, settings) from every call given: a test task's object is named in its
    # prompt, and a grammar that cannot say it could never solve the task.
    words = {k: v for k, v in suite_ranges(registry, names).items() if isinstance(v, list)}
    for key, values in words.items():
        if key in ranges:
            ranges[key] = list(dict.fromkeys([*ranges[key], *values]))
    for key, values in text_choices(registry, [*calls, *names]).items():
        ranges[key] = list(dict.fromkeys([*ranges.get(key, ()), *values]))
    usable = usable_tools(registry, ranges)
    tools = usable if all_tools or not calls else suite_tools(registry, calls)
    if not calls and len(tools) == len(registry.tools):
        tools = None  # every tool: the grammar describes itself as such
    return Grammar(registry, ranges, max_bins=max_bins, tools=tools)


def suite_calls(suite: str, split: str | None = "train") -> list[Any]:
    """The reference tool calls of a suite's tasks (of one ``split``, or all with ``None``)."""
    found = get_suite(suite)
    tasks = found.tasks if split is None else found.split(split)
    return [c for t in tasks for c in t.tool_calls or ()]


def build_grammar(
    env_id: str, suite: str, max_bins: int, all_tools: bool, derived: bool = False,
    stop: bool | None = False, policy: PolicyConfig | None = None,
) -> Grammar:  # fmt: skip
    """The grammar of the env's registry, with bins over the suite's training references'
    ranges (and only their tools, unless ``all_tools``), and names from the whole suite;
    ``derived``: with the derived values the training references use (the prompts' numbers read
    as ``policy`` reads them); ``stop``: with the stop operation (``None``: when a training
    reference has several calls)."""
    registry = env_registry(env_id, suite)
    calls, names = suite_calls(suite), suite_calls(suite, None)
    grammar = calls_grammar(registry, calls, max_bins, all_tools, names)
    tasks = [t for t in get_suite(suite).split("train") if t.tool_calls]
    if stop is None:
        stop = any(len(t.tool_calls) > 1 for t in tasks)
    options = {"derived": reference_derived(grammar, tasks, policy) if derived else {},
               "stop": stop}  # fmt: skip
    if not any(options.values()):
        return grammar
    return Grammar.from_description(registry, {**grammar.describe(), **options})


def reference_derived(
    grammar: Grammar, tasks: Sequence[Any], policy: PolicyConfig | None = None
) -> dict[str, list[str]]:
    """The derived values (``suite_derived``) the tasks' reference calls use, their prompts'
    numbers read as the policy reads them."""
    config = policy or PolicyConfig()
    numbers, at = prompt_numbers([t.prompt for t in tasks], config.prompt_bytes,
                                 config.max_numbers)  # fmt: skip
    found = [tuple(float(n) for n, i in zip(row, where, strict=True) if i >= 0)
             for row, where in zip(numbers, at, strict=True)]  # fmt: skip
    return suite_derived(grammar, zip(found, (t.tool_calls for t in tasks), strict=True))


class Trainer:
    """One run; :meth:`train` does it all (and resumes from ``out/checkpoints/latest.pt``)."""

    def __init__(self, config: TrainConfig, log: Callable[[str], None] = print) -> None:
        self.config, self.log = config, log
        self.out = Path(config.out)
        self.device = pick_device(config.device)
        torch.set_num_threads(config.threads)
        self.generator = seed_everything(config.seed)  # minibatch order, demonstrations
        # Sampling calls, on the policy's device (CUDA's generator lives there).
        self.sampling_generator = torch.Generator(self.device).manual_seed(config.seed + 1)
        self.grammar, op_ranges = run_grammar(config)
        self.policy = make_policy(config, self.grammar, op_ranges).to(self.device)
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.ppo.learning_rate, eps=1e-5
        )
        self.train_tasks = config.tasks("train")
        # Mixed: each task's tool, and the sampler grouped by tool.
        self.mix = parse_mix(config.mix) if config.mix else None
        self.tools = [tool for tool, _ in self.mix] if self.mix else []
        suite_tool = tool_of_task(self.mix) if self.mix else {}
        self.tool_of = {t.id: suite_tool[t.id.split("/", 1)[0]] for t in self.train_tasks
                        if suite_tool}  # fmt: skip
        groups = [self.tool_of[t.id] for t in self.train_tasks] if self.mix else None
        self.sampler = WeaknessSampler([t.id for t in self.train_tasks], config.sampling, groups)
        self.csv_fields = CSV_FIELDS + tuple(
            f"{kind}_{tool}" for tool in self.tools for kind in ("score", "share", "weight")
        )
        self.iteration, self.env_steps, self.bc_env_steps, self.episodes = 0, 0, 0, 0
        self.bc_done = config.bc_steps == 0
        self._lock = threading.Lock()  # the sampler, shared with the collecting thread

    # -- checkpoints ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "grammar": self.grammar.describe(),
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "sampler": self._sampler_state(),
            "generator": self.generator.get_state(),
            "sampling_generator": self.sampling_generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "numpy_rng": np.random.get_state(),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "bc_env_steps": self.bc_env_steps,
            "episodes": self.episodes,
            "bc_done": self.bc_done,
        }

    def _sampler_state(self) -> dict[str, Any]:
        with self._lock:
            return self.sampler.state_dict()

    def save(self) -> Path:
        folder = self.out / "checkpoints"
        folder.mkdir(parents=True, exist_ok=True)
        state = self.state_dict()
        latest = folder / "latest.pt"
        torch.save(state, latest.with_suffix(".tmp"))
        latest.with_suffix(".tmp").replace(latest)  # never a half-written latest
        every = self.config.checkpoint_every
        if every and self.iteration % every == 0:
            torch.save(state, folder / f"iter-{self.iteration:05d}.pt")
        return latest

    def load(self, path: Path) -> None:
        state = torch.load(path, map_location=self.device, weights_only=False)
        if state["grammar"] != self.grammar.describe():
            raise ValueError(f"{path}: the checkpoint's grammar differs from this run's")
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sampler.load_state_dict(state["sampler"])
        self.generator.set_state(state["generator"])
        self.sampling_generator.set_state(state["sampling_generator"].cpu())
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])
        self.iteration, self.env_steps = state["iteration"], state["env_steps"]
        self.bc_env_steps, self.episodes = state["bc_env_steps"], state["episodes"]
        self.bc_done = state["bc_done"]

    # -- the run ----------------------------------------------------------------------------
    def train(self, resume: bool = True, stop_after: int | None = None) -> dict[str, Any]:
        """Run (or resume) to ``config.iterations``; ``stop_after`` stops after that many
        iterations in total, as an interrupted run would. Returns the last iteration's row."""
        config = self.config
        self.out.mkdir(parents=True, exist_ok=True)
        latest = self.out / "checkpoints" / "latest.pt"
        if resume and latest.exists():
            self.load(latest)
            self.log(f"resumed from {latest} at iteration {self.iteration}")
        (self.out / "config.json").write_text(json.dumps(config.to_dict(), indent=2))
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(self.out / "tensorboard"), purge_step=self.env_steps)
        vec = make_vector_env(
            config.env_id, self.sampler.levels, config.num_envs, config.asynchronous,
            ray=config.ray, **config.env_kwargs(),
        )  # fmt: skip
        row: dict[str, Any] = {}
        try:
            if not self.bc_done:
                self._behaviour_cloning(vec, writer)
                self.bc_done = True
                self.save()
            last = config.iterations if stop_after is None else min(stop_after, config.iterations)
            with phase(
                "PPO", last, config.progress, self.iteration, self.log,
                f"PPO: {last} iterations of {config.num_envs * config.num_steps} calls",
            ) as advance:  # fmt: skip

                def report(row: dict[str, Any]) -> None:
                    status = _status(row)
                    # One line per iteration stays above the bar: the score's course.
                    advance(status=status, line=f"iteration {row['iteration']:>4}  {status}")

                if config.overlap:
                    row = self._overlapped(vec, last, writer, report) or row
                while self.iteration < last:
                    row = self._iteration(vec)
                    self.iteration += 1
                    self._log_row(row, writer)
                    self.save()
                    report(row)
        finally:
            vec.close()
            writer.close()
        if config.eval_episodes and self.iteration >= config.iterations:
            from toolgym.agents.evaluate import evaluate_policy

            record = self.out / "eval-episodes" if config.record_eval else None
            report = evaluate_policy(
                self.policy, self.grammar, config, "test", config.eval_episodes, record=record,
                progress=config.progress,
            )  # fmt: skip
            (self.out / "eval.json").write_text(json.dumps(report, indent=2))
            row["test_score"] = report["score"]
            row.update({f"test_score_{tool}": v for tool, v in report.get("tools", {}).items()})
        return row

    def _behaviour_cloning(self, vec: gym.vector.VectorEnv, writer: Any) -> None:
        """Oracle episodes on the training split (snapped to the grammar), then supervised
        steps on their (observation, call) pairs."""
        config = self.config
        tasks = [t for t in self.train_tasks if t.tool_calls]
        if not tasks:
            self.log("no training task has tool calls: no behaviour cloning")
            return
        count = config.bc_episodes or len(tasks)
        queue = [tasks[k % len(tasks)] for k in range(count)]
        by_id = {t.id: t for t in tasks}
        observations: list[dict[str, np.ndarray]] = []
        tokens: list[list[int]] = []
        # Per env, its recorded steps (indices into ``tokens``), rewards and episode ends, for
        # the returns-to-go that the value head learns alongside the calls.
        steps_of: dict[int, list[tuple[int, float, bool]]] = {}
        pending: dict[int, int] = {}

        rng = np.random.default_rng(config.seed)
        contexts = EpisodeContexts(config.num_envs)
        chosen: list[list[int]] = []  # this step's tokens, per env

        def oracle(obs: dict[str, Any], current: list[str]) -> list[str]:
            batch = observe(obs, config.policy)
            where = contexts.contexts(obs, batch["numbers"], batch["number_at"])
            chosen.clear()
            for i, task_id in enumerate(current):
                task = by_id.get(task_id)
                step = int(obs["step"][i])
                if task is None:  # an env past its queue, on a task without calls: not recorded
                    chosen.append(self.grammar.sample(rng))
                    continue
                if step >= len(task.tool_calls) and self.grammar.stop:
                    chosen.append(self.grammar.encode({"name": STOP_TOOL}))  # done: say so
                    continue
                call = task.tool_calls[min(step, len(task.tool_calls) - 1)]
                if self.mix:  # the mixed grammar's names carry the tool
                    call = json.loads(call) if isinstance(call, str | bytes) else dict(call)
                    call["name"] = f"{self.tool_of[task_id]}.{call['name']}"
                chosen.append(self.grammar.encode(call, where[i]))
            calls = [self.grammar.decode_json(t, c) for t, c in zip(chosen, where, strict=True)]
            contexts.sent(calls)
            return calls

        def record(obs: dict[str, Any], calls: list[str], recording: np.ndarray) -> None:
            batch = observe(obs, config.policy)
            for i in np.flatnonzero(recording):
                observations.append({k: v[i] for k, v in batch.items()})
                tokens.append(chosen[i])
                pending[int(i)] = len(tokens) - 1

        def outcome(rewards: np.ndarray, dones: np.ndarray, recording: np.ndarray) -> None:
            for i in np.flatnonzero(recording):
                steps_of.setdefault(int(i), []).append(
                    (pending.pop(int(i)), float(rewards[i]), bool(dones[i]))
                )

        stop_tokens = self.grammar.encode({"name": STOP_TOOL}) if self.grammar.stop else None
        stops: list[int] = []  # the demonstrations' stop calls (not played: no env step)

        def finished(i: int, final: dict[str, Any]) -> None:
            """An oracle episode that ended by itself (its part passed): the demonstrations
            end with stop there, so the policy learns to stop where its part is done (played,
            such an episode ends before the oracle could say so)."""
            if stop_tokens is None:
                return
            one = {k: np.asarray([v]) for k, v in final.items()}
            observations.append({k: v[0] for k, v in observe(one, config.policy).items()})
            tokens.append(stop_tokens)
            stops.append(len(tokens) - 1)
            steps_of.setdefault(i, []).append((len(tokens) - 1, 0.0, True))

        started = time.perf_counter()
        with phase(
            "oracle traces", count, config.progress, log=self.log,
            start=f"behaviour cloning: playing {count} oracle episodes for demonstrations",
        ) as advance:  # fmt: skip

            def outcome_and_bar(rewards: np.ndarray, dones: np.ndarray, rec: np.ndarray) -> None:
                outcome(rewards, dones, rec)
                advance(int(np.sum(dones & rec)))

            results = play_queued(
                vec, [t.id for t in queue], oracle, config.seed + 7919, record, outcome_and_bar,
                finished,
            )  # fmt: skip
        self.bc_env_steps = len(tokens) - len(stops)
        returns = np.zeros(len(tokens), np.float32)
        for steps in steps_of.values():  # discounted returns-to-go, episode by episode
            following = 0.0
            for index, reward, done in reversed(steps):
                following = reward + config.ppo.gamma * following * (not done)
                returns[index] = following
        score = float(np.mean([r[1] for r in results]))
        self.log(
            f"behaviour cloning: {len(results)} oracle episodes, {self.bc_env_steps} calls and "
            f"{len(stops)} stops, oracle "
            f"score {score:.3f} (snapped to the grammar), {time.perf_counter() - started:.0f} s"
        )
        obs_t = to_torch(
            {k: np.stack([o[k] for o in observations]) for k in observations[0]}, self.device
        )
        tokens_t = torch.as_tensor(np.array(tokens), device=self.device)
        returns_t = torch.as_tensor(returns, device=self.device)
        for group in self.optimizer.param_groups:
            group["lr"] = config.bc_lr
        losses: list[float] = []
        # In chunks, for the bar: the same steps, minibatches and result as one call.
        chunk = max(1, config.bc_steps // 100)
        with phase("cloning", config.bc_steps, config.progress) as advance:
            while len(losses) < config.bc_steps:
                n = min(chunk, config.bc_steps - len(losses))
                losses += behaviour_cloning(
                    self.policy, self.optimizer, obs_t, tokens_t, n, config.bc_batch,
                    self.generator, config.ppo.max_grad_norm, returns_t, config.ppo.vf_coef,
                    config.bc_bin_sigma,
                )  # fmt: skip
                advance(n, status=f"NLL {losses[-1]:.2f}")
        for k, loss in enumerate(losses):
            writer.add_scalar("bc/nll", loss, k)
        self.log(f"behaviour cloning: NLL {losses[0]:.2f} -> {losses[-1]:.2f} per call")
        # PPO starts with a fresh optimiser state: Adam's moments from the supervised steps
        # would push the first updates along the cloning loss.
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.ppo.learning_rate, eps=1e-5
        )

    def _iteration(self, vec: gym.vector.VectorEnv) -> dict[str, Any]:
        """One iteration in turns: collect with the current policy, then update."""
        started = time.perf_counter()
        rollout = self._collect(vec, self.policy, self.iteration)
        stats, lr = self._learn(rollout)
        seconds = time.perf_counter() - started
        # The learner blocks in reset/step while the workers run; the workers sit idle while
        # the learner decodes calls and updates.
        busy = rollout["env_busy"] / seconds
        return self._row(rollout, stats, lr, seconds, busy, 1 - busy)

    def _overlapped(
        self, vec: gym.vector.VectorEnv, last: int, writer: Any,
        advance: Callable[[dict[str, Any]], None],
    ) -> dict[str, Any]:  # fmt: skip
        """Iterations up to ``last`` with collection and learning at once: a thread collects
        rollout ``k`` with the weights after update ``k - 1`` (the start's for the first two),
        while the learner updates on rollout ``k - 1``. The lag is fixed, so a run is the same
        in any process however fast each side is."""
        start = self.iteration
        acting = copy.deepcopy(self.policy)  # the behaviour policy: the envs act with it
        versions = {start: _weights(self.policy)}  # updates done -> the weights then
        ready = threading.Condition()
        rollouts: queue.Queue[Any] = queue.Queue(maxsize=1)  # one rollout ahead at most
        stop = threading.Event()

        def hand_over(item: Any) -> None:
            while not stop.is_set():
                with contextlib.suppress(queue.Full):
                    rollouts.put(item, timeout=0.2)
                    return

        def collect() -> None:
            try:
                for k in range(start, last):
                    need = max(start, k - 1)
                    with ready:
                        ready.wait_for(lambda need=need: need in versions or stop.is_set())
                        if stop.is_set():
                            return
                        acting.load_state_dict(versions[need])
                    hand_over(self._collect(vec, acting, k))
            except BaseException as exc:  # the learner raises it
                hand_over(exc)

        thread = threading.Thread(target=collect, name="toolgym-collect", daemon=True)
        thread.start()
        row: dict[str, Any] = {}
        finished = time.perf_counter()
        try:
            while self.iteration < last:
                waited = time.perf_counter()
                rollout = rollouts.get()
                if isinstance(rollout, BaseException):
                    raise rollout
                waited = time.perf_counter() - waited
                stats, lr = self._learn(rollout)
                seconds, finished = time.perf_counter() - finished, time.perf_counter()
                busy = min(rollout["env_busy"] / seconds, 1.0)
                row = self._row(rollout, stats, lr, seconds, waited / seconds, 1 - busy)
                with ready:
                    self.iteration += 1
                    versions[self.iteration] = _weights(self.policy)
                    versions.pop(self.iteration - 2, None)
                    ready.notify_all()
                self._log_row(row, writer)
                self.save()
                advance(row)
        finally:
            stop.set()
            with ready:
                ready.notify_all()
            thread.join(timeout=60)
        return row

    def _collect(self, vec: gym.vector.VectorEnv, policy: Policy, iteration: int) -> dict[str, Any]:
        """``num_steps`` calls per env with ``policy`` (the behaviour policy: its log-probs and
        values are stored), from envs restarted with the iteration's seed."""
        config, n, steps = self.config, self.config.num_envs, self.config.num_steps
        started = time.perf_counter()
        with self._lock:
            weights = self.sampler.weights().tolist()
        vec.set_attr("task_weights", [weights] * n)
        env_busy = time.perf_counter()
        obs, _ = vec.reset(seed=config.seed * 1_000_003 + iteration * n)
        env_busy = time.perf_counter() - env_busy
        stored: list[dict[str, np.ndarray]] = []
        all_tokens, log_probs, values = [], [], []
        rewards, dones = np.zeros((steps, n)), np.zeros((steps, n))
        returns_so_far, episode_returns, scores, passes = np.zeros(n), [], [], []
        tool_scores: dict[str, list[float]] = {tool: [] for tool in self.tools}
        tool_steps = np.zeros(len(self.tools))
        contexts = EpisodeContexts(n)  # what derived values are computed from
        for t in range(steps):
            batch = observe(obs, config.policy)
            stored.append(batch)
            with torch.no_grad():
                tokens, log_prob, _, value = policy.act(
                    to_torch(batch, self.device), self.sampling_generator
                )
            tokens_np = tokens.cpu().numpy()
            calls = contexts.decode(self.grammar, tokens_np, obs, batch["numbers"],
                                    batch["number_at"])  # fmt: skip
            all_tokens.append(tokens_np)
            log_probs.append(log_prob.cpu().numpy())
            values.append(value.cpu().numpy())
            if self.mix:
                tool_steps += np.bincount(batch["tool"], minlength=len(self.tools))
            waited = time.perf_counter()
            if t == steps - 1:
                # The next rollout restarts every env with its own seed: an episode ending on
                # this step needs no autoreset (its observation is only bootstrapped if alive).
                vec.set_attr("hold_reset", [True] * n)
            obs, reward, terminated, truncated, info = vec.step(calls)
            if t == steps - 1:  # (Ray hands the attributes on to an actor that replaces one)
                vec.set_attr("hold_reset", [False] * n)
            env_busy += time.perf_counter() - waited
            rewards[t], dones[t] = reward, terminated | truncated
            returns_so_far += reward
            for i, task, score, passed in finished_episodes(info):
                with self._lock:
                    self.sampler.update(task, score)
                if self.mix:
                    tool_scores[self.tool_of[task]].append(score)
                episode_returns.append(returns_so_far[i])
                scores.append(score)
                passes.append(passed)
                returns_so_far[i] = 0.0
        with torch.no_grad():
            next_value = policy.value(to_torch(observe(obs, config.policy), self.device))
        with self._lock:  # the sampler after this rollout's episodes, for its row
            sampler_weights, group_shares = self.sampler.weights(), self.sampler.group_shares()
        return {
            "sampler_weights": sampler_weights, "group_shares": group_shares,
            "stored": stored, "tokens": all_tokens, "log_probs": np.stack(log_probs),
            "values": np.stack(values), "rewards": rewards, "dones": dones,
            "next_value": next_value.cpu().numpy(), "episode_returns": episode_returns,
            "scores": scores, "passes": passes, "tool_scores": tool_scores,
            "tool_steps": tool_steps, "env_busy": env_busy,
            "seconds": time.perf_counter() - started,
        }  # fmt: skip

    def _learn(self, rollout: dict[str, Any]) -> tuple[dict[str, float], float]:
        """GAE and PPO's update on a rollout. The ratio is taken against the stored log-probs
        of the policy that acted, so a rollout one update old is corrected for (and clipped)."""
        config = self.config
        lr = annealed_lr(config.ppo, self.iteration, config.iterations)  # linear LR annealing
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        stored, values_np = rollout["stored"], rollout["values"]
        advantages, returns = gae(  # GAE
            rollout["rewards"], values_np, rollout["dones"], rollout["next_value"],
            config.ppo.gamma, config.ppo.gae_lambda,
        )  # fmt: skip
        flat = {
            "obs": to_torch({k: np.concatenate([b[k] for b in stored]) for k in stored[0]},
                            self.device),
            "tokens": torch.as_tensor(np.concatenate(rollout["tokens"]), device=self.device),
            "log_probs": torch.as_tensor(rollout["log_probs"].reshape(-1), device=self.device),
            "advantages": torch.as_tensor(advantages.reshape(-1), dtype=torch.float32,
                                          device=self.device),
            "returns": torch.as_tensor(returns.reshape(-1), dtype=torch.float32,
                                       device=self.device),
            "values": torch.as_tensor(values_np.reshape(-1), device=self.device),
        }  # fmt: skip
        return update(self.policy, self.optimizer, flat, config.ppo, self.generator), lr

    def _row(
        self, rollout: dict[str, Any], stats: dict[str, float], lr: float, seconds: float,
        learner_waits: float, envs_wait: float,
    ) -> dict[str, Any]:  # fmt: skip
        """The iteration's figures (``progress.csv``)."""
        n, steps = self.config.num_envs, self.config.num_steps
        self.env_steps += n * steps
        scores, passes, returns = rollout["scores"], rollout["passes"], rollout["episode_returns"]
        self.episodes += len(scores)
        # Taken at the rollout's end: overlapped, the next rollout's episodes already update the
        # sampler while the learner writes this row.
        weights, shares = rollout["sampler_weights"], rollout["group_shares"]
        tool_steps = rollout["tool_steps"]
        per_tool: dict[str, float] = {}
        for k, (tool, share) in enumerate(shares.items()):
            found = rollout["tool_scores"][tool]
            per_tool[f"score_{tool}"] = float(np.mean(found)) if found else float("nan")
            per_tool[f"share_{tool}"] = float(tool_steps[k] / max(tool_steps.sum(), 1))
            per_tool[f"weight_{tool}"] = share
        return {
            "iteration": self.iteration + 1,
            "env_steps": self.env_steps,
            "episodes": self.episodes,
            "return": float(np.mean(returns)) if returns else float("nan"),
            "score": float(np.mean(scores)) if scores else float("nan"),
            "success_rate": float(np.mean(passes)) if passes else float("nan"),
            "sps": n * steps / seconds,
            "lr": lr,
            **stats,
            "learner_waits_env": learner_waits,
            "env_waits_learner": envs_wait,
            "sampler_max_weight": float(weights.max()),
            "sampler_entropy": float(-(weights * np.log(weights + 1e-12)).sum()),
            "seconds": seconds,
            **per_tool,
            "sampler_weights": weights,
        }

    def _log_row(self, row: dict[str, Any], writer: Any) -> None:
        path = self.out / "progress.csv"
        fresh = not path.exists() or row["iteration"] == 1
        with path.open("w" if fresh else "a", newline="") as handle:
            out = csv.DictWriter(handle, self.csv_fields, extrasaction="ignore")
            if fresh:
                out.writeheader()
            out.writerow(row)
        for key in self.csv_fields[1:]:
            if isinstance(row.get(key), float | int) and np.isfinite(row[key]):
                writer.add_scalar(f"train/{key}", row[key], row["env_steps"])
        weights = row["sampler_weights"]
        if len(weights) <= 64:  # one curve per level stays readable up to a few dozen
            for level, weight in zip(self.sampler.levels, weights, strict=True):
                writer.add_scalar(f"sampler/{level}", weight, row["env_steps"])
        else:
            writer.add_histogram("sampler/weights", weights, row["env_steps"])


def _weights(policy: Policy) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in policy.state_dict().items()}


def _status(row: dict[str, Any]) -> str:
    status = (
        f"steps {row['env_steps']}  score {row['score']:.3f}  "
        f"success {row['success_rate']:.2f}  {row['sps']:.1f} steps/s"
    )
    for tool in (k.removeprefix("share_") for k in row if k.startswith("share_")):
        # Mixed: each tool's score and its share of the iteration's steps.
        status += f"  {tool} {row[f'score_{tool}']:.3f} ({row[f'share_{tool}']:.0%})"
    return status


def train(config: TrainConfig, resume: bool = True) -> dict[str, Any]:
    """Train (or resume) a run; see :class:`TrainConfig`."""
    return Trainer(config).train(resume=resume)
