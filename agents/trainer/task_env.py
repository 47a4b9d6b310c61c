"""One worker's environment: a tool env in tool mode whose episodes' tasks the learner chooses.

:class:`ChosenTasks` picks each episode's task: first from a queue the learner hands it
(demonstrations, evaluation), then by the weights the learner's sampler sets
(``vec.set_attr("task_weights", ...)``), from its own seeded generator. When an episode ends its
result is in ``info``: ``episode_task``, ``episode_score`` (the exact verifier's final score, in
[0, 1]) and ``episode_passed``. :func:`make_env` builds one, in a local worker
(``toolgym.agents.trainer.vector``) or a Ray actor (``toolgym.agents.distributed.runners``) alike.

This module imports no torch: the workers never load it. (The environments are registered by
the package itself: importing any ``toolgym`` module runs ``toolgym/__init__.py`` first.)
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np


class ChosenTasks(gym.Wrapper):
    """Picks each episode's task: the queue's next, else one drawn by ``task_weights``.

    With ``hold_reset`` set, the next unseeded reset (the same-step autoreset after an episode's
    end) starts nothing and returns the ended episode's last observation again; the next seeded
    reset clears it. The learner sets it before a rollout's last step: it restarts every env
    with the next rollout's seed anyway, and a reset (new sandbox sessions, the task's
    reference) costs as much as several steps."""

    def __init__(self, env: gym.Env, task_ids: Sequence[str]) -> None:
        super().__init__(env)
        self.task_ids = list(task_ids)
        self.task_weights: Sequence[float] | None = None
        self.task_queue: list[str] = []
        self.hold_reset = False
        self.last: tuple[Any, dict[str, Any]] | None = None  # an ended episode's last step
        self.rng = np.random.default_rng()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self.hold_reset = False
        elif self.hold_reset and self.last is not None and not options:
            observation, info = self.last
            return observation, {"task": info["task"]}
        self.last = None
        options = dict(options or {})
        if "task" not in options:
            if self.task_queue:
                options["task"] = self.task_queue.pop(0)
            else:
                weights = None if self.task_weights is None else np.asarray(self.task_weights)
                options["task"] = self.task_ids[self.rng.choice(len(self.task_ids), p=weights)]
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            final = info.get("final_report") or {}
            info["episode_task"] = info["task"]
            info["episode_score"] = float(final.get("score") or 0.0)
            info["episode_passed"] = bool(final.get("passed"))
            self.last = (observation, info)
        return observation, reward, terminated, truncated, info


def make_env(env_id: str, task_ids: Sequence[str], env_kwargs: dict[str, Any]) -> gym.Env:
    """One worker's env: ``env_id`` in tool mode (or, with ``mix=`` in ``env_kwargs``, a
    ``MixedEnv`` of one env per tool) inside :class:`ChosenTasks` over ``task_ids``."""
    if multiprocessing.parent_process() is not None:
        # A worker leaves Ctrl-C to the learner, which closes it: a terminal's SIGINT reaches
        # every process of the group, and each worker would print its own traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if "mix" in env_kwargs:  # several tools: one env per tool in each worker
        from toolgym.envs.wrappers.mixed import MixedEnv

        return ChosenTasks(MixedEnv(**env_kwargs), task_ids)
    return ChosenTasks(gym.make(env_id, action_mode="tool", **env_kwargs), task_ids)
