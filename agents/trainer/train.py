"""The bundled trainer: behaviour cloning (optional), then PPO over tool calls, on any toolgym env.

The trainer knows nothing of the tool: it needs an env id, a suite and the env's tool registry
(for the grammar). The suite's training split gives the tasks (and, where they have tool-call
references, the grammar's ranges and the demonstrations); its test split gives the evaluation.

Each iteration: the sampler's weights go to the workers; every env restarts from a seed fixed by
``(seed, iteration)`` (so an iteration depends only on the state saved at its start, and a resumed
run repeats an uninterrupted one exactly); ``num_steps`` calls per env are collected; an episode
cut by the iteration's end is bootstrapped from the value of its next observation; PPO updates.

Several tools train together with ``mix`` (``"cadquery:primitives,blender:blender-placement,
scene:scene-layout"``, see ``toolgym.envs.wrappers.mixed``): one policy
(``toolgym.agents.trainer.mixed``: one encoder, one decoder, each tool's calls in one grammar),
workers that play any tool, and a sampler over every task of every tool, grouped by tool, so the
weakest tool is played more. ``progress.csv`` then has each tool's score, its share of the
iteration's steps and its share of the sampler's weight (``score_<tool>``, ``share_<tool>``,
``weight_<tool>``).

Written under ``out``: ``config.json``, ``progress.csv`` (one row per iteration),
``tensorboard/`` (the same quantities), ``checkpoints/latest.pt`` (and one per
``checkpoint_every`` iterations), ``eval.json`` when evaluated at the end.

The :class:`Trainer` composes the parts, each in its own module, as RLlib splits an algorithm:
``config`` (:class:`TrainConfig`), ``build`` (grammar and policy), ``seeds`` (every random
stream), ``rollout`` and ``runners`` (collecting, in turns or overlapped, from local workers or
Ray actors alike), ``learner`` and ``demonstrations`` (PPO's updates, behaviour cloning),
``checkpoints`` and ``logs``, and ``evaluate``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from toolgym.agents.trainer.build import make_policy, run_grammar
from toolgym.agents.trainer.checkpoints import write_checkpoint
from toolgym.agents.trainer.config import TrainConfig
from toolgym.agents.trainer.demonstrations import OracleEpisodes
from toolgym.agents.trainer.evaluate import evaluate_policy
from toolgym.agents.trainer.learner import Learner
from toolgym.agents.trainer.logs import ProgressLog, progress_row, status
from toolgym.agents.trainer.policy import Policy, pick_device
from toolgym.agents.trainer.progress import phase
from toolgym.agents.trainer.rollout import Rollout, RolloutCollector
from toolgym.agents.trainer.runners import make_runner
from toolgym.agents.trainer.sampler import WeaknessSampler
from toolgym.agents.trainer.seeds import SeedStreams
from toolgym.agents.trainer.vector import make_vector_env
from toolgym.envs.wrappers.mixed import parse_mix, tool_of_task

__all__ = ["TrainConfig", "Trainer", "train"]


class Trainer:
    """One run; :meth:`train` does it all (and resumes from ``out/checkpoints/latest.pt``)."""

    def __init__(self, config: TrainConfig, log: Callable[[str], None] = print) -> None:
        self.config, self.log = config, log
        self.out = Path(config.out)
        self.device = pick_device(config.device)
        torch.set_num_threads(config.threads)
        self.seeds = SeedStreams(config.seed)
        # Seeded before the policy is built: its initial weights come from torch's generator.
        self.generator = self.seeds.learner()
        self.sampling_generator = self.seeds.sampling(self.device)
        self.grammar, op_ranges = run_grammar(config)
        self.policy = make_policy(config, self.grammar, op_ranges).to(self.device)
        self.learner = Learner(
            self.policy, config.ppo, config.iterations, self.generator, self.device
        )
        self.train_tasks = config.tasks("train")
        # Mixed: each task's tool.
        self.mix = parse_mix(config.mix) if config.mix else None
        self.tools = [tool for tool, _ in self.mix] if self.mix else []
        suite_tool = tool_of_task(self.mix) if self.mix else {}
        self.tool_of = {
            t.id: suite_tool[t.id.split("/", 1)[0]] for t in self.train_tasks if suite_tool
        }
        # The sampler grouped by tool (mixed) or by family (a suite of several), so the weakest
        # tool or family gains weight however many tasks the others have.
        families = [t.family for t in self.train_tasks]
        several = len(set(families)) > 1 and None not in families
        groups = [self.tool_of[t.id] for t in self.train_tasks] if self.mix else None
        groups = groups or (families if several else None)
        self.sampler = WeaknessSampler([t.id for t in self.train_tasks], config.sampling, groups)
        self.iteration, self.env_steps, self.bc_env_steps, self.episodes = 0, 0, 0, 0
        self.bc_done = config.bc_steps == 0
        self._lock = threading.Lock()  # the sampler, shared with an overlapped collecting thread

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        return self.learner.optimizer

    # -- checkpoints ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            sampler = self.sampler.state_dict()
        return {
            "config": self.config.to_dict(),
            "grammar": self.grammar.describe(),
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "sampler": sampler,
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
        return write_checkpoint(
            folder, self.state_dict(), self.iteration, self.config.checkpoint_every
        )

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
        logs = ProgressLog(self.out, self.sampler.levels, self.tools, purge_step=self.env_steps)
        vec = make_vector_env(
            config.env_id,
            self.sampler.levels,
            config.num_envs,
            config.asynchronous,
            ray=config.ray,
            **config.env_kwargs(),
        )
        row: dict[str, Any] = {}
        try:
            if not self.bc_done:
                self._behaviour_cloning(vec, logs)
                self.bc_done = True
                self.save()
            last = config.iterations if stop_after is None else min(stop_after, config.iterations)
            row = self._ppo(vec, last, logs) or row
        finally:
            vec.close()
            logs.close()
        if config.eval_episodes and self.iteration >= config.iterations:
            record = self.out / "eval-episodes" if config.record_eval else None
            report = evaluate_policy(
                self.policy,
                self.grammar,
                config,
                "test",
                config.eval_episodes,
                record=record,
                progress=config.progress,
            )
            (self.out / "eval.json").write_text(json.dumps(report, indent=2))
            row["test_score"] = report["score"]
            row.update({f"test_score_{tool}": v for tool, v in report.get("tools", {}).items()})
        return row

    def _ppo(self, vec: gym.vector.VectorEnv, last: int, logs: ProgressLog) -> dict[str, Any]:
        """PPO's iterations up to ``last``: each rollout, its update, its row and a checkpoint.
        Returns the last row (empty when there was none to run)."""
        config = self.config
        collector = self._collector(vec)
        runner = make_runner(config.overlap, collector, self.policy, self.iteration, last)
        row: dict[str, Any] = {}
        with (
            phase(
                "PPO",
                last,
                config.progress,
                self.iteration,
                self.log,
                f"PPO: {last} iterations of {config.num_envs * config.num_steps} calls",
            ) as advance,
            runner,
        ):
            for rollout in runner.rollouts():
                stats, lr = self.learner.update(rollout, self.iteration)
                row = self._row(rollout, stats, lr, runner.timing(rollout))
                self.iteration += 1
                runner.published(self.iteration, self.policy)
                logs.write(row)
                self.save()
                line = status(row)
                # One line per iteration stays above the bar: the score's course.
                advance(status=line, line=f"iteration {row['iteration']:>4}  {line}")
        return row

    def _collector(self, vec: gym.vector.VectorEnv) -> RolloutCollector:
        return RolloutCollector(
            vec,
            self.grammar,
            self.config.policy,
            self.config.num_steps,
            self.sampler,
            self._lock,
            self.seeds,
            self.sampling_generator,
            self.device,
            self.tools,
            self.tool_of,
        )

    def _collect(self, vec: gym.vector.VectorEnv, policy: Policy, iteration: int) -> Rollout:
        """One rollout of iteration ``iteration`` with ``policy`` (see ``RolloutCollector``)."""
        return self._collector(vec).collect(policy, iteration)

    def _row(
        self,
        rollout: Rollout,
        stats: dict[str, float],
        lr: float,
        timing: tuple[float, float, float],
    ) -> dict[str, Any]:
        """The iteration's row, the run's totals counted on to its end."""
        self.env_steps += self.config.num_envs * self.config.num_steps
        self.episodes += len(rollout["scores"])
        return progress_row(
            rollout, stats, lr, timing, self.iteration + 1, self.env_steps, self.episodes
        )

    def _behaviour_cloning(self, vec: gym.vector.VectorEnv, logs: ProgressLog) -> None:
        """Oracle episodes on the training split (snapped to the grammar), then supervised
        steps on their (observation, call) pairs."""
        config = self.config
        tasks = [t for t in self.train_tasks if t.tool_calls]
        if not tasks:
            self.log("no training task has tool calls: no behaviour cloning")
            return
        count = config.bc_episodes or len(tasks)
        queue = [tasks[k % len(tasks)].id for k in range(count)]
        oracle = OracleEpisodes(
            self.grammar,
            config.policy,
            tasks,
            config.num_envs,
            self.seeds.oracle_fallback(),
            self.tool_of if self.mix else None,
        )
        started = time.perf_counter()
        with phase(
            "oracle traces",
            count,
            config.progress,
            log=self.log,
            start=f"behaviour cloning: playing {count} oracle episodes for demonstrations",
        ) as advance:
            demonstrations = oracle.play(
                vec, queue, self.seeds.oracle_resets(), config.ppo.gamma, ended=advance
            )
        self.bc_env_steps = demonstrations.env_steps
        score = float(np.mean([r[1] for r in demonstrations.results]))
        self.log(
            f"behaviour cloning: {len(demonstrations.results)} oracle episodes, "
            f"{demonstrations.env_steps} calls and {demonstrations.stops} stops, oracle "
            f"score {score:.3f} (snapped to the grammar), {time.perf_counter() - started:.0f} s"
        )
        with phase("cloning", config.bc_steps, config.progress) as advance:
            losses = self.learner.clone(
                demonstrations,
                config.bc_steps,
                config.bc_batch,
                config.bc_lr,
                config.bc_bin_sigma,
                advance,
            )
        logs.cloning(losses)
        self.log(f"behaviour cloning: NLL {losses[0]:.2f} -> {losses[-1]:.2f} per call")


def train(config: TrainConfig, resume: bool = True) -> dict[str, Any]:
    """Train (or resume) a run; see :class:`TrainConfig`."""
    return Trainer(config).train(resume=resume)
