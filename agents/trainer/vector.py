"""Vectorised tool environments for the trainer: sandboxed workers, tasks chosen by the learner.

Each worker process runs one environment (``gym.make(env_id, ...)`` in tool mode: every episode
runs in that environment's own sandbox sessions) inside
``toolgym.agents.trainer.task_env.ChosenTasks``, which picks each episode's task: first from a
queue the learner hands it (demonstrations, evaluation), then by the weights the learner's sampler
sets (``vec.set_attr("task_weights", ...)``), from its own seeded generator. Episodes restart in
the worker as soon as they end (Gymnasium's same-step autoreset, the trainer's; any of
Gymnasium's three modes on request), and the episode's result comes back in
``info["final_info"]``: ``episode_task``, ``episode_score`` (the exact verifier's final
score, in [0, 1]) and ``episode_passed``. Local workers and Ray actors (``ray=``) are alike behind
the ``VectorEnv`` interface: the same seeds give the same observations and rewards.

This module imports no torch: the workers never load it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.async_vector_env import AsyncState, _async_worker

from toolgym.agents.trainer.task_env import make_env


def make_vector_env(
    env_id: str,
    task_ids: Sequence[str],
    num_envs: int,
    asynchronous: bool = True,
    record: str | None = None,
    ray: str | None = None,
    autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
    **env_kwargs: Any,
) -> gym.vector.VectorEnv:
    """``num_envs`` environments in tool mode (``AsyncVectorEnv`` workers, started with
    ``forkserver`` so they never inherit the learner's threads; or in-process with
    ``asynchronous=False``), each episode's task one of ``task_ids``. With ``mix=`` in
    ``env_kwargs``, each is a ``toolgym.envs.wrappers.mixed.MixedEnv`` (``env_id`` unused). With
    ``record``, every episode is recorded into that folder (``toolgym.envs.RecordEpisodes``).
    With ``ray`` (an address, or ``"local"``), the envs run in Ray actors instead
    (``toolgym.agents.distributed.runners.RayVectorEnv``; recordings are written here all the
    same). ``autoreset_mode``: Gymnasium's (``"SameStep"``, the trainer's, which reads each
    episode's result from ``final_info``; ``"NextStep"``; ``"Disabled"``, resetting ended envs
    by ``reset(options={"reset_mask": mask})``), alike for local workers and Ray actors."""
    if ray is not None:
        from toolgym.agents.distributed.runners import make_ray_vector_env

        return make_ray_vector_env(
            env_id, task_ids, num_envs, ray, record=record, autoreset_mode=autoreset_mode,
            **env_kwargs,
        )  # fmt: skip
    factory = functools.partial(make_env, env_id, list(task_ids), env_kwargs)
    if record is not None:
        from toolgym.envs.recording.recorder import recorded

        factory = recorded(factory, record)
    mode = AutoresetMode(autoreset_mode)
    if asynchronous:
        return Workers(
            [factory] * num_envs, context="forkserver", autoreset_mode=mode, worker=quiet_worker
        )
    return SyncVectorEnv([factory] * num_envs, autoreset_mode=mode)


def finished_episodes(info: dict[str, Any]) -> list[tuple[int, str, float, bool]]:
    """``(env index, task id, final score, passed)`` of the episodes that ended this step."""
    final = info.get("final_info")
    if not final or "_episode_score" not in final:
        return []
    return [
        (
            i,
            str(final["episode_task"][i]),
            float(final["episode_score"][i]),
            bool(final["episode_passed"][i]),
        )
        for i in np.flatnonzero(final["_episode_score"])
    ]


def quiet_worker(
    index: int,
    env_fn: Callable[[], gym.Env],
    pipe: Any,
    parent_pipe: Any,
    shared_memory: Any,
    error_queue: Any,
    autoreset_mode: AutoresetMode,
    semaphore: Any,
) -> None:
    """Gymnasium's worker, silent when the learner has closed its end of the pipe before the
    worker could answer: the learner is shutting down (a Ctrl-C), the worker's env is closed
    either way (the worker's own ``finally``), and a traceback from each worker would bury the
    learner's one-line message."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        _async_worker(
            index, env_fn, pipe, parent_pipe, shared_memory, error_queue, autoreset_mode, semaphore
        )


class Workers(AsyncVectorEnv):
    """``AsyncVectorEnv`` whose ``close`` after a call that raised (its state still waiting)
    stops the workers: Gymnasium's would wait for ever for replies the failed call already
    read, and an evaluation's ``finally: vec.close()`` then hung instead of raising."""

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        super().close_extras(timeout, terminate or self._state is not AsyncState.DEFAULT)


def play_queued(
    vec: gym.vector.VectorEnv,
    task_ids: Sequence[str],
    choose: Callable[[dict[str, Any], Sequence[str]], list[str]],
    seed: int,
    on_step: Callable[[dict[str, Any], list[str], np.ndarray], None] | None = None,
    on_outcome: Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None = None,
    on_final: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[tuple[str, float, bool, int]]:
    """Play each of ``task_ids`` once, spread over the envs; ``choose(observations, current task
    ids)`` gives the actions. ``on_step(observations, actions, recording)`` sees every step
    before it is taken (``recording``: which envs are playing a queued task), and
    ``on_outcome(rewards, dones, recording)`` what it gave; ``on_final(env index, observation)``
    the last observation of each queued episode that ended by itself (terminated, not cut at
    ``max_steps``), before the env restarts. Returns ``(task, score, passed, steps)`` per
    episode, in the order they finished."""
    n = vec.num_envs
    queues = [list(task_ids[i::n]) for i in range(n)]
    remaining = [len(q) for q in queues]
    vec.set_attr("task_queue", queues)
    observations, info = vec.reset(seed=seed)
    current = list(info["task"])
    steps = np.zeros(n, int)
    results = []
    while any(r > 0 for r in remaining):
        recording = np.array([r > 0 for r in remaining])
        actions = choose(observations, current)
        if on_step is not None:
            on_step(observations, actions, recording)
        observations, rewards, terminated, truncated, info = vec.step(actions)
        if on_outcome is not None:
            on_outcome(rewards, terminated | truncated, recording)
        steps += recording
        if on_final is not None:
            finals = info.get("final_obs")
            for i in np.flatnonzero(terminated & recording):
                if finals is not None and finals[i] is not None:
                    on_final(int(i), finals[i])
        for i, task, score, passed in finished_episodes(info):
            if remaining[i] > 0:
                results.append((task, score, passed, int(steps[i])))
                remaining[i] -= 1
                steps[i] = 0
        current = list(info["task"])
    vec.set_attr("task_queue", [[] for _ in range(n)])
    return results
