"""Behaviour cloning's demonstrations: the oracle's reference calls played on the training split.

Each reference call is snapped to the grammar (in the episode's context, so a derived value stays
exact) and played; each played step's observation and tokens are recorded, with the step's
reward for the discounted returns-to-go the value head learns alongside the calls. Where the
grammar has the stop operation, an oracle episode that ended by itself (its part passed) also
records stop on its last observation: played, such an episode ends before the oracle could say
so, and the policy must learn to stop where its part is done.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from toolgym.agents.trainer.observations import observe
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.agents.trainer.vector import play_queued
from toolgym.envs.grammar import STOP_TOOL, EpisodeContexts, Grammar


@dataclasses.dataclass
class Demonstrations:
    """(observation, call) pairs: ``observations`` (the policy's inputs, one per pair),
    ``tokens`` (the call's), ``returns`` (each pair's discounted return-to-go), the calls played
    (``env_steps``; the stops were not), the stops, and the oracle episodes' ``results``
    (``(task, score, passed, steps)``)."""

    observations: list[dict[str, np.ndarray]]
    tokens: list[list[int]]
    returns: np.ndarray
    env_steps: int
    stops: int
    results: list[tuple[str, float, bool, int]]


class OracleEpisodes:
    """Plays the reference calls of ``tasks`` (each ``(id, tool_calls)``-bearing) and records the
    demonstrations; ``tool_of`` (mixed) prefixes each call's name with its task's tool, as the
    mixed grammar names it."""

    def __init__(
        self,
        grammar: Grammar,
        policy_config: PolicyConfig,
        tasks: Sequence[Any],
        num_envs: int,
        fallback: np.random.Generator,
        tool_of: dict[str, str] | None = None,
    ) -> None:
        self.grammar, self.policy_config = grammar, policy_config
        self.by_id = {t.id: t for t in tasks}
        self.tool_of = tool_of
        self.fallback = fallback  # random calls for an env past its queue (not recorded)
        self.contexts = EpisodeContexts(num_envs)
        self.chosen: list[list[int]] = []  # this step's tokens, per env
        self.observations: list[dict[str, np.ndarray]] = []
        self.tokens: list[list[int]] = []
        # Per env, its recorded steps (indices into ``tokens``), rewards and episode ends, for
        # the returns-to-go that the value head learns alongside the calls.
        self.steps_of: dict[int, list[tuple[int, float, bool]]] = {}
        self.pending: dict[int, int] = {}
        self.stop_tokens = grammar.encode({"name": STOP_TOOL}) if grammar.stop else None
        self.stops: list[int] = []  # the demonstrations' stop calls (not played: no env step)
        self.ended: Callable[[int], None] = lambda count: None  # hears episodes ending

    def play(
        self,
        vec: gym.vector.VectorEnv,
        queue: Sequence[str],
        seed: int,
        gamma: float,
        ended: Callable[[int], None] = lambda count: None,
    ) -> Demonstrations:
        """Play each task of ``queue`` once on ``vec`` from ``seed``; ``ended(count)`` hears how
        many recorded episodes each step ended. Returns the demonstrations, their returns-to-go
        discounted by ``gamma``."""
        self.ended = ended
        results = play_queued(
            vec, queue, self.oracle, seed, self.record, self.outcome, self.finished
        )
        return Demonstrations(
            observations=self.observations,
            tokens=self.tokens,
            returns=self.returns(gamma),
            env_steps=len(self.tokens) - len(self.stops),
            stops=len(self.stops),
            results=results,
        )

    def oracle(self, obs: dict[str, Any], current: list[str]) -> list[str]:
        """Each env's next reference call (snapped to the grammar in its context); stop past a
        task's last call where the grammar can say it."""
        batch = observe(obs, self.policy_config)
        where = self.contexts.contexts(obs, batch["numbers"], batch["number_at"])
        self.chosen.clear()
        for i, task_id in enumerate(current):
            task = self.by_id.get(task_id)
            step = int(obs["step"][i])
            if task is None:  # an env past its queue, on a task without calls: not recorded
                self.chosen.append(self.grammar.sample(self.fallback))
                continue
            if step >= len(task.tool_calls) and self.grammar.stop:
                self.chosen.append(self.grammar.encode({"name": STOP_TOOL}))  # done: say so
                continue
            call = task.tool_calls[min(step, len(task.tool_calls) - 1)]
            if self.tool_of is not None:  # the mixed grammar's names carry the tool
                call = json.loads(call) if isinstance(call, str | bytes) else dict(call)
                call["name"] = f"{self.tool_of[task_id]}.{call['name']}"
            self.chosen.append(self.grammar.encode(call, where[i]))
        calls = [self.grammar.decode_json(t, c) for t, c in zip(self.chosen, where, strict=True)]
        self.contexts.sent(calls)
        return calls

    def record(self, obs: dict[str, Any], calls: list[str], recording: np.ndarray) -> None:
        """Before a step: the observation and tokens of each env playing a queued task."""
        batch = observe(obs, self.policy_config)
        for i in np.flatnonzero(recording):
            self.observations.append({k: v[i] for k, v in batch.items()})
            self.tokens.append(self.chosen[i])
            self.pending[int(i)] = len(self.tokens) - 1

    def outcome(self, rewards: np.ndarray, dones: np.ndarray, recording: np.ndarray) -> None:
        """After a step: each recorded step's reward and whether its episode ended."""
        for i in np.flatnonzero(recording):
            self.steps_of.setdefault(int(i), []).append(
                (self.pending.pop(int(i)), float(rewards[i]), bool(dones[i]))
            )
        self.ended(int(np.sum(dones & recording)))

    def finished(self, i: int, final: dict[str, Any]) -> None:
        """An oracle episode that ended by itself (its part passed): the demonstrations end
        with stop there, so the policy learns to stop where its part is done (played, such an
        episode ends before the oracle could say so)."""
        if self.stop_tokens is None:
            return
        one = {k: np.asarray([v]) for k, v in final.items()}
        self.observations.append({k: v[0] for k, v in observe(one, self.policy_config).items()})
        self.tokens.append(self.stop_tokens)
        self.stops.append(len(self.tokens) - 1)
        self.steps_of.setdefault(i, []).append((len(self.tokens) - 1, 0.0, True))

    def returns(self, gamma: float) -> np.ndarray:
        """Discounted returns-to-go, episode by episode."""
        returns = np.zeros(len(self.tokens), np.float32)
        for steps in self.steps_of.values():
            following = 0.0
            for index, reward, done in reversed(steps):
                following = reward + gamma * following * (not done)
                returns[index] = following
        return returns
