"""One rollout: ``num_steps`` tool calls per env with a behaviour policy, for PPO to learn from.

Every env restarts from the iteration's seed (``SeedStreams.rollout_resets``), so an iteration
depends only on the state saved at its start. The envs are any ``VectorEnv`` in tool mode with
``ChosenTasks`` inside (``toolgym.agents.trainer.vector.make_vector_env``): local workers, or Ray
actors (``ray=``), one interface. The sampler picks each episode's task; its weights go to the envs
at the rollout's start and the episodes that end update it as they end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TypedDict

import gymnasium as gym
import numpy as np
import torch

from toolgym.agents.trainer.observations import observe
from toolgym.agents.trainer.policy import Policy, PolicyConfig, to_torch
from toolgym.agents.trainer.sampler import WeaknessSampler
from toolgym.agents.trainer.seeds import SeedStreams
from toolgym.agents.trainer.vector import finished_episodes
from toolgym.envs.grammar import EpisodeContexts, Grammar


class Rollout(TypedDict):
    """What a rollout collected: per step ``t`` and env, the policy's inputs (``stored``), the
    call's tokens, its log-prob and value under the behaviour policy, the reward and whether the
    episode ended; the value of the observation after the last step (``next_value``, for
    bootstrapping an episode cut by the rollout's end); the episodes that ended; the sampler as
    the rollout left it; and how long the envs were busy (``env_busy``) in its ``seconds``."""

    sampler_weights: np.ndarray
    group_shares: dict[str, float]
    stored: list[dict[str, np.ndarray]]
    tokens: list[np.ndarray]
    log_probs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    next_value: np.ndarray
    episode_returns: list[float]
    scores: list[float]
    passes: list[bool]
    tool_scores: dict[str, list[float]]
    tool_steps: np.ndarray
    env_busy: float
    seconds: float


class RolloutCollector:
    """Collects rollouts from ``envs`` (``num_envs`` of them) with whichever policy is given,
    decoding its tokens with ``grammar``; ``sampler`` (guarded by ``lock``: an overlapped run
    collects on another thread) picks the tasks. Mixed: ``tools`` in the mix's order and
    ``tool_of`` each task's tool, for the per-tool figures."""

    def __init__(
        self,
        envs: gym.vector.VectorEnv,
        grammar: Grammar,
        policy_config: PolicyConfig,
        num_steps: int,
        sampler: WeaknessSampler,
        lock: threading.Lock,
        seeds: SeedStreams,
        sampling: torch.Generator,
        device: torch.device,
        tools: Sequence[str] = (),
        tool_of: dict[str, str] | None = None,
    ) -> None:
        self.envs, self.grammar, self.policy_config = envs, grammar, policy_config
        self.num_envs, self.num_steps = envs.num_envs, num_steps
        self.sampler, self.lock = sampler, lock
        self.seeds, self.sampling, self.device = seeds, sampling, device
        self.tools, self.tool_of = list(tools), tool_of or {}

    def collect(self, policy: Policy, iteration: int) -> Rollout:
        """``num_steps`` calls per env with ``policy`` (the behaviour policy: its log-probs and
        values are stored), from envs restarted with the iteration's seed."""
        vec, n, steps = self.envs, self.num_envs, self.num_steps
        started = time.perf_counter()
        with self.lock:
            weights = self.sampler.weights().tolist()
        vec.set_attr("task_weights", [weights] * n)
        env_busy = time.perf_counter()
        obs, _ = vec.reset(seed=self.seeds.rollout_resets(iteration, n))
        env_busy = time.perf_counter() - env_busy
        stored: list[dict[str, np.ndarray]] = []
        all_tokens, log_probs, values = [], [], []
        rewards, dones = np.zeros((steps, n)), np.zeros((steps, n))
        returns_so_far, episode_returns, scores, passes = np.zeros(n), [], [], []
        tool_scores: dict[str, list[float]] = {tool: [] for tool in self.tools}
        tool_steps = np.zeros(len(self.tools))
        contexts = EpisodeContexts(n)  # what derived values are computed from
        for t in range(steps):
            batch = observe(obs, self.policy_config)
            stored.append(batch)
            with torch.no_grad():
                tokens, log_prob, _, value = policy.act(to_torch(batch, self.device), self.sampling)
            tokens_np = tokens.cpu().numpy()
            calls = contexts.decode(
                self.grammar, tokens_np, obs, batch["numbers"], batch["number_at"]
            )
            all_tokens.append(tokens_np)
            log_probs.append(log_prob.cpu().numpy())
            values.append(value.cpu().numpy())
            if self.tools:
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
                with self.lock:
                    self.sampler.update(task, score)
                if self.tools:
                    tool_scores[self.tool_of[task]].append(score)
                episode_returns.append(returns_so_far[i])
                scores.append(score)
                passes.append(passed)
                returns_so_far[i] = 0.0
        with torch.no_grad():
            next_value = policy.value(to_torch(observe(obs, self.policy_config), self.device))
        with self.lock:  # the sampler after this rollout's episodes, for its row
            sampler_weights, group_shares = self.sampler.weights(), self.sampler.group_shares()
        return Rollout(
            sampler_weights=sampler_weights,
            group_shares=group_shares,
            stored=stored,
            tokens=all_tokens,
            log_probs=np.stack(log_probs),
            values=np.stack(values),
            rewards=rewards,
            dones=dones,
            next_value=next_value.cpu().numpy(),
            episode_returns=episode_returns,
            scores=scores,
            passes=passes,
            tool_scores=tool_scores,
            tool_steps=tool_steps,
            env_busy=env_busy,
            seconds=time.perf_counter() - started,
        )
