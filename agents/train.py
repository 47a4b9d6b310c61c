"""The bundled trainer: behaviour cloning (optional), then PPO over tool calls, on any toolgym env.

The trainer knows nothing of the tool: it needs an env id, a suite and the env's tool registry
(for the grammar). The suite's training split gives the tasks (and, where they have tool-call
references, the grammar's ranges and the demonstrations); its test split gives the evaluation.

Each iteration: the sampler's weights go to the workers; every env restarts from a seed fixed by
``(seed, iteration)`` (so an iteration depends only on the state saved at its start, and a resumed
run repeats an uninterrupted one exactly); ``num_steps`` calls per env are collected; an episode
cut by the iteration's end is bootstrapped from the value of its next observation; PPO updates.

Written under ``out``: ``config.json``, ``progress.csv`` (one row per iteration),
``tensorboard/`` (the same quantities), ``checkpoints/latest.pt`` (and one per
``checkpoint_every`` iterations), ``eval.json`` when evaluated at the end.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from toolgym.agents.grammar import DEFAULT_MAX_BINS, Grammar, suite_ranges, suite_tools
from toolgym.agents.policy import (
    Policy,
    PolicyConfig,
    batch_observations,
    pick_device,
    to_torch,
)
from toolgym.agents.ppo import PPOConfig, annealed_lr, behaviour_cloning, gae, update
from toolgym.agents.progress import phase
from toolgym.agents.sampler import SamplerConfig, WeaknessSampler
from toolgym.agents.vector import finished_episodes, make_vector_env, play_queued
from toolgym.envs.suites import get_suite
from toolgym.envs.tools import ToolRegistry

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
    steps: int = 2048
    bc_steps: int = 0
    bc_episodes: int | None = None
    bc_batch: int = 64
    bc_lr: float = 1e-3
    out: str = "runs/ppo"
    seed: int = 0
    num_envs: int = 2
    num_steps: int = 32
    max_steps: int = 4
    view_size: int = 32
    # The tier that settles a training episode's return: "cheap" keeps the last per-step score
    # (a CAD episode of one call costs about half as much); None, the task's (exact). Evaluation
    # always scores at the task's tier.
    final_tier: str | None = "cheap"
    max_bins: int = DEFAULT_MAX_BINS
    all_tools: bool = False
    sampler: bool = True
    asynchronous: bool = True
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

    def env_kwargs(self, evaluation: bool = False) -> dict[str, Any]:
        """The env's arguments: for training, or (``evaluation``) for scoring at the task's
        own final tier."""
        return {
            "suite": self.suite, "max_steps": self.max_steps, "view_size": self.view_size,
            "final_tier": None if evaluation else self.final_tier,
        }  # fmt: skip

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
) -> Grammar:
    """The registry's grammar with bins over ``calls``' ranges (and only their tools, unless
    ``all_tools``); the registry's widest ranges when there are no calls."""
    if not calls:
        return Grammar(registry, max_bins=max_bins)
    tools = None if all_tools else suite_tools(registry, calls)
    return Grammar(registry, suite_ranges(registry, calls), max_bins=max_bins, tools=tools)


def build_grammar(env_id: str, suite: str, max_bins: int, all_tools: bool) -> Grammar:
    """The grammar of the env's registry, with bins over the suite's training references'
    ranges (and only their tools, unless ``all_tools``)."""
    calls = [c for t in get_suite(suite).split("train") for c in t.tool_calls or ()]
    return calls_grammar(env_registry(env_id, suite), calls, max_bins, all_tools)


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
        self.grammar = build_grammar(config.env_id, config.suite, config.max_bins, config.all_tools)
        self.policy = Policy(self.grammar, config.policy).to(self.device)
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.ppo.learning_rate, eps=1e-5
        )
        self.train_tasks = get_suite(config.suite).split("train")
        self.sampler = WeaknessSampler([t.id for t in self.train_tasks], config.sampling)
        self.iteration, self.env_steps, self.bc_env_steps, self.episodes = 0, 0, 0, 0
        self.bc_done = config.bc_steps == 0

    # -- checkpoints ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "grammar": self.grammar.describe(),
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "sampler": self.sampler.state_dict(),
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
            **config.env_kwargs(),
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
                while self.iteration < last:
                    row = self._iteration(vec)
                    self.iteration += 1
                    self._log_row(row, writer)
                    self.save()
                    status = _status(row)
                    # One line per iteration stays above the bar: the score's course.
                    advance(status=status, line=f"iteration {row['iteration']:>4}  {status}")
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

        def oracle(obs: dict[str, Any], current: list[str]) -> list[str]:
            calls = []
            for i, task_id in enumerate(current):
                task = by_id.get(task_id)
                if task is None:  # an env past its queue, on a task without calls: not recorded
                    calls.append(self.grammar.decode_json(self.grammar.sample(rng)))
                    continue
                call = task.tool_calls[min(int(obs["step"][i]), len(task.tool_calls) - 1)]
                calls.append(self.grammar.decode_json(self.grammar.encode(call)))
            return calls

        def record(obs: dict[str, Any], calls: list[str], recording: np.ndarray) -> None:
            batch = batch_observations(obs, config.policy)
            for i in np.flatnonzero(recording):
                observations.append({k: v[i] for k, v in batch.items()})
                tokens.append(self.grammar.encode(calls[i]))
                pending[int(i)] = len(tokens) - 1

        def outcome(rewards: np.ndarray, dones: np.ndarray, recording: np.ndarray) -> None:
            for i in np.flatnonzero(recording):
                steps_of.setdefault(int(i), []).append(
                    (pending.pop(int(i)), float(rewards[i]), bool(dones[i]))
                )

        started = time.perf_counter()
        with phase(
            "oracle traces", count, config.progress, log=self.log,
            start=f"behaviour cloning: playing {count} oracle episodes for demonstrations",
        ) as advance:  # fmt: skip

            def outcome_and_bar(rewards: np.ndarray, dones: np.ndarray, rec: np.ndarray) -> None:
                outcome(rewards, dones, rec)
                advance(int(np.sum(dones & rec)))

            results = play_queued(
                vec, [t.id for t in queue], oracle, config.seed + 7919, record, outcome_and_bar
            )
        self.bc_env_steps = len(tokens)
        returns = np.zeros(len(tokens), np.float32)
        for steps in steps_of.values():  # discounted returns-to-go, episode by episode
            following = 0.0
            for index, reward, done in reversed(steps):
                following = reward + config.ppo.gamma * following * (not done)
                returns[index] = following
        score = float(np.mean([r[1] for r in results]))
        self.log(
            f"behaviour cloning: {len(results)} oracle episodes, {len(tokens)} calls, oracle "
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
        config, n, steps = self.config, self.config.num_envs, self.config.num_steps
        started = time.perf_counter()
        lr = annealed_lr(config.ppo, self.iteration, config.iterations)  # linear LR annealing
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        vec.set_attr("task_weights", [self.sampler.weights().tolist()] * n)
        env_wait = time.perf_counter()
        obs, _ = vec.reset(seed=config.seed * 1_000_003 + self.iteration * n)
        env_wait = time.perf_counter() - env_wait
        stored: list[dict[str, np.ndarray]] = []
        all_tokens, log_probs, values = [], [], []
        rewards, dones = np.zeros((steps, n)), np.zeros((steps, n))
        returns_so_far, episode_returns, scores, passes = np.zeros(n), [], [], []
        for t in range(steps):
            batch = batch_observations(obs, config.policy)
            stored.append(batch)
            with torch.no_grad():
                tokens, log_prob, _, value = self.policy.act(
                    to_torch(batch, self.device), self.sampling_generator
                )
            tokens_np = tokens.cpu().numpy()
            calls = [self.grammar.decode_json(row) for row in tokens_np]
            all_tokens.append(tokens_np)
            log_probs.append(log_prob.cpu().numpy())
            values.append(value.cpu().numpy())
            waited = time.perf_counter()
            obs, reward, terminated, truncated, info = vec.step(calls)
            env_wait += time.perf_counter() - waited
            rewards[t], dones[t] = reward, terminated | truncated
            returns_so_far += reward
            for i, task, score, passed in finished_episodes(info):
                self.sampler.update(task, score)
                episode_returns.append(returns_so_far[i])
                scores.append(score)
                passes.append(passed)
                returns_so_far[i] = 0.0
        with torch.no_grad():
            next_value = self.policy.value(
                to_torch(batch_observations(obs, config.policy), self.device)
            )
        values_np, log_probs_np = np.stack(values), np.stack(log_probs)
        advantages, returns = gae(  # GAE
            rewards, values_np, dones, next_value.cpu().numpy(), config.ppo.gamma,
            config.ppo.gae_lambda,
        )  # fmt: skip
        flat = {
            "obs": to_torch({k: np.concatenate([b[k] for b in stored]) for k in stored[0]},
                            self.device),
            "tokens": torch.as_tensor(np.concatenate(all_tokens), device=self.device),
            "log_probs": torch.as_tensor(log_probs_np.reshape(-1), device=self.device),
            "advantages": torch.as_tensor(advantages.reshape(-1), dtype=torch.float32,
                                          device=self.device),
            "returns": torch.as_tensor(returns.reshape(-1), dtype=torch.float32,
                                       device=self.device),
            "values": torch.as_tensor(values_np.reshape(-1), device=self.device),
        }  # fmt: skip
        stats = update(self.policy, self.optimizer, flat, config.ppo, self.generator)
        self.env_steps += n * steps
        self.episodes += len(scores)
        seconds = time.perf_counter() - started
        weights = self.sampler.weights()
        return {
            "iteration": self.iteration + 1,
            "env_steps": self.env_steps,
            "episodes": self.episodes,
            "return": float(np.mean(episode_returns)) if episode_returns else float("nan"),
            "score": float(np.mean(scores)) if scores else float("nan"),
            "success_rate": float(np.mean(passes)) if passes else float("nan"),
            "sps": n * steps / seconds,
            "lr": lr,
            **stats,
            # The learner blocks in reset/step while the workers run; the workers sit idle
            # while the learner decodes calls and updates.
            "learner_waits_env": env_wait / seconds,
            "env_waits_learner": 1 - env_wait / seconds,
            "sampler_max_weight": float(weights.max()),
            "sampler_entropy": float(-(weights * np.log(weights + 1e-12)).sum()),
            "seconds": seconds,
        }

    def _log_row(self, row: dict[str, Any], writer: Any) -> None:
        path = self.out / "progress.csv"
        fresh = not path.exists() or row["iteration"] == 1
        with path.open("w" if fresh else "a", newline="") as handle:
            out = csv.DictWriter(handle, CSV_FIELDS, extrasaction="ignore")
            if fresh:
                out.writeheader()
            out.writerow(row)
        for key in CSV_FIELDS[1:]:
            if isinstance(row.get(key), float | int) and np.isfinite(row[key]):
                writer.add_scalar(f"train/{key}", row[key], row["env_steps"])
        weights = self.sampler.weights()
        if len(weights) <= 64:  # one curve per level stays readable up to a few dozen
            for level, weight in zip(self.sampler.levels, weights, strict=True):
                writer.add_scalar(f"sampler/{level}", weight, row["env_steps"])
        else:
            writer.add_histogram("sampler/weights", weights, row["env_steps"])


def _status(row: dict[str, Any]) -> str:
    return (
        f"steps {row['env_steps']}  score {row['score']:.3f}  "
        f"success {row['success_rate']:.2f}  {row['sps']:.1f} steps/s"
    )


def train(config: TrainConfig, resume: bool = True) -> dict[str, Any]:
    """Train (or resume) a run; see :class:`TrainConfig`."""
    return Trainer(config).train(resume=resume)
