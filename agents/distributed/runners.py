"""Rollouts and verification on Ray: env-runner actors, a vector env over them, resilient pools.

An :class:`EnvRunner` is a Ray actor holding a few toolgym environments (each with its own
sandbox zygote and sessions, started inside the actor's process on whichever node Ray placed it),
declaring one CPU and :data:`MEMORY_PER_ENV` bytes per environment. What it sends back is plain
data: observations as numpy arrays (``uint8`` images, strings, ints), rewards, flags, and the
env's ``info`` dicts (plain data by the env's contract: reports are ``to_dict()``-ed); never a
sandbox object.

- :class:`RayVectorEnv` is a Gymnasium ``VectorEnv`` over such actors (same-step autoreset, the
  ``info`` layout of ``SyncVectorEnv``), a drop-in for ``make_vector_env`` (``ray=ADDRESS``):
  for the same seeds it returns the same observations and rewards as local workers. An actor lost
  mid-rollout costs only the time of its in-flight episodes: a new actor replays them from their
  last reset, then takes the step in flight, so no episode is cut and the results are the same.
- :func:`run_episodes` and :func:`verify_batch` hand whole episodes or scripts to a pool of actors;
  an item whose actor died reruns on another, and results come back in the local order.

The actor itself is ``toolgym.agents.distributed.actor.EnvRunner``; connecting (:func:`start`, from
``toolgym.agents.distributed.cluster``) and placing actors are
``toolgym.agents.distributed.cluster``'s.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from toolgym.agents.distributed.actor import Shipment, new_actor, write_recordings
from toolgym.agents.distributed.cluster import (
    LOCAL,
    MAX_LOSSES,
    MEMORY_PER_ENV,
    RayAddressError,
    RayCapacityError,
    check_capacity,
    free_cpus,
    lost,
    start,
    wait_ready,
)
from toolgym.agents.trainer.task_env import make_env

# Connecting is part of this module's face: ``ray_runners.start(address)`` comes first.
__all__ = [
    "LOCAL",
    "MEMORY_PER_ENV",
    "ActorPool",
    "RayAddressError",
    "RayCapacityError",
    "RayVectorEnv",
    "make_ray_vector_env",
    "run_episodes",
    "start",
    "verify_batch",
]


# -- a vector env over actors -----------------------------------------------------------------
class RayVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` tool-mode environments in Ray actors of ``envs_per_actor`` each.

    Built like :func:`toolgym.agents.trainer.vector.make_vector_env` (``env_id``, ``task_ids``,
    environment arguments) and used like it: ``reset(seed=s)`` seeds env ``i`` with ``s + i``,
    ``set_attr(name, values)`` reaches each env's ``ChosenTasks`` wrapper. ``step(actions)``
    autoresets as Gymnasium's vector envs do in ``autoreset_mode`` (also in ``metadata``):
    same-step (the default here, as the trainer reads it: the env restarts in the step that
    ended its episode, which ``final_obs``/``final_info`` report), next-step (Gymnasium's
    default: the step after an end resets that env, reward 0, its action ignored) or disabled
    (the caller resets ended envs with ``reset(options={"reset_mask": mask})``; stepping one
    before is refused). Connect first
    (:func:`start`). ``reset(seed=None)`` seeds the envs with fresh random seeds drawn here, so
    that what they do can be replayed. With ``record`` (a folder here), every episode is
    recorded on its actor's node and written into that folder as it ends (``RecordEpisodes``'
    layout, numbered in the order the episodes ended; the episodes in flight when the vector env
    closes are written then, cut short, as a local recorder leaves them).

    Faults: when an actor dies (its process killed, its node lost), a new actor takes its
    environments and replays, from their last ``reset``, the attributes set and the actions
    taken since (at most one iteration of the trainer, which resets every iteration), then
    takes the step that was in flight. The environments being deterministic for a seed, the
    episodes in flight go on where they were: the caller sees the step it asked for, never a
    cut episode, and the same observations, rewards and scores as without the fault (a step
    whose outcome depends on time, one that ran into its wall-clock limit, may differ).
    ``restarts`` counts the actors replaced, ``replayed_steps`` the steps taken again.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        env_id: str,
        task_ids: Sequence[str],
        num_envs: int,
        envs_per_actor: int = 1,
        memory_per_env: int = MEMORY_PER_ENV,
        record: str | os.PathLike[str] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        **env_kwargs: Any,
    ) -> None:
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        probe = make_env(env_id, list(task_ids), env_kwargs)  # spaces only: no session starts
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        probe.close()
        self.num_envs = num_envs
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._spec = (env_id, list(task_ids), dict(env_kwargs))
        self._memory_per_env = memory_per_env
        self._record = None if record is None else Path(record)
        self._recorded = 0  # episodes written into the recording
        starts = range(0, num_envs, envs_per_actor)
        self._slices = [slice(a, min(a + envs_per_actor, num_envs)) for a in starts]
        check_capacity(num_envs, num_envs * memory_per_env)
        self._actors = [self._spawn(s) for s in self._slices]
        wait_ready(self._actors)
        self._attrs: dict[str, list[Any]] = {}  # every attribute set so far, as set
        # What a new actor replays: the attributes as they were at the last reset, then that
        # reset and every call since (("reset", seeds, options), ("set_attr", name, values),
        # ("step", actions)), each with one entry per env.
        self._replay_attrs: dict[str, list[Any]] = {}
        self._log: list[tuple[Any, ...]] = []
        self._seeds = np.random.default_rng()  # for reset(seed=None)
        self._obs: list[Any] = [None] * num_envs
        self._ended = np.zeros(num_envs, bool)  # each env's episode ended on its last step
        self._pending: list[Any] | None = None
        self._actions: list[str] = []
        self.restarts = 0
        self.replayed_steps = 0

    def _spawn(self, part: slice) -> Any:
        env_id, task_ids, env_kwargs = self._spec
        count = part.stop - part.start
        record = self._record is not None
        return new_actor(
            env_id, task_ids, env_kwargs, count, self._memory_per_env, record,
            self.autoreset_mode.value,
        )  # fmt: skip

    def actor_pids(self) -> list[int]:
        """The actors' process ids, one per actor, in env order."""
        import ray

        return ray.get([a.pid.remote() for a in self._actors])

    # -- the Gymnasium API ----------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} envs")
        options = dict(options) if options is not None else None
        mask = _reset_mask(options.pop("reset_mask", None), self.num_envs) if options else None
        if mask is None:  # a whole reset starts what a new actor replays (see _everywhere)
            seeds = [int(self._seeds.integers(2**31)) if s is None else s for s in seeds]
            self._replay_attrs, self._log = dict(self._attrs), []
        # A masked reset's unseeded envs go on from their own generators, as Gymnasium's do:
        # replayed from the last whole reset, they draw the same again.
        results = self._everywhere(("reset", seeds, options, mask))
        infos: dict[str, Any] = {}
        for i, result in enumerate(results):
            if result is not None:
                self._obs[i], info = result
                self._ended[i] = False
                infos = self._add_info(infos, info, i)
        return self._batch(), infos

    def step_async(self, actions: Sequence[str]) -> None:
        """Send the actions; :meth:`step_wait` collects what they gave."""
        if self.autoreset_mode is AutoresetMode.DISABLED and self._ended.any():
            ended = [int(i) for i in np.flatnonzero(self._ended)]
            raise ValueError(
                f"env(s) {ended} ended their episodes and autoreset is disabled: reset them "
                "first, reset(options={'reset_mask': mask})"
            )
        self._actions = list(actions)
        self._pending = [actor.step.remote(self._actions[part]) for actor, part in self._each()]

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        import ray

        assert self._pending is not None, "step_wait without step_async"
        pending, self._pending = self._pending, None
        call = ("step", self._actions)
        results: list[Any] = [None] * self.num_envs
        for a, (part, ref) in enumerate(zip(self._slices, pending, strict=True)):
            try:
                results[part] = self._unpack(ray.get(ref))
            except Exception as exc:
                if not lost(exc):
                    raise
                results[part] = self._recover(a, call)
        self._log.append(call)
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        infos: dict[str, Any] = {}
        for i, (obs, reward, term, trunc, info, final) in enumerate(results):
            rewards[i], terminated[i], truncated[i] = reward, term, trunc
            self._ended[i] = (term or trunc) and final is None
            if final is not None:
                infos = self._add_info(infos, {"final_obs": final[0], "final_info": final[1]}, i)
            self._obs[i] = obs
            infos = self._add_info(infos, info, i)
        return self._batch(), rewards, terminated, truncated, infos

    def step(self, actions: Sequence[str]) -> tuple[Any, ...]:
        self.step_async(actions)
        return self.step_wait()

    def set_attr(self, name: str, values: Any) -> None:
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        values = list(values)
        self._everywhere(("set_attr", name, values))
        self._attrs[name] = values

    def close_extras(self, **kwargs: Any) -> None:
        import ray

        for actor in self._actors:
            with contextlib.suppress(Exception):  # a dead actor has nothing left to close
                self._unpack(([], ray.get(actor.close.remote(), timeout=30)))
            ray.kill(actor)

    # -- faults -------------------------------------------------------------------------------
    def _batch(self) -> Any:
        empty = create_empty_array(self.single_observation_space, self.num_envs)
        return concatenate(self.single_observation_space, self._obs, empty)

    def _unpack(self, shipment: Shipment) -> list[Any]:
        """An actor's reply: its recordings written here, its results returned."""
        results, recordings = shipment
        if recordings and self._record is not None:
            self._recorded = write_recordings(self._record, recordings, self._recorded)
        return results

    def _everywhere(self, call: tuple[Any, ...]) -> list[Any]:
        """``call`` (``("reset", seeds, options, mask)`` or ``("set_attr", name, values)``) on every
        actor, each with its envs' part; the results, one per env. Logged for replays."""
        import ray

        refs = [self._send(actor, _part(call, part)) for actor, part in self._each()]
        results: list[Any] = [None] * self.num_envs
        for a, (part, ref) in enumerate(zip(self._slices, refs, strict=True)):
            try:
                results[part] = self._unpack(ray.get(ref))
            except Exception as exc:
                if not lost(exc):
                    raise
                results[part] = self._recover(a, call)
        if _whole_reset(call):  # a whole reset starts the log (see reset)
            self._log = [call]
        else:
            self._log.append(call)
        return results

    def _each(self) -> Iterator[tuple[Any, slice]]:
        return zip(self._actors, self._slices, strict=True)

    @staticmethod
    def _send(actor: Any, call: tuple[Any, ...]) -> Any:
        kind, *args = call
        return getattr(actor, kind).remote(*args)

    def _recover(self, a: int, call: tuple[Any, ...]) -> list[Any]:
        """Actor ``a`` died during ``call``: a new one replays its envs' log, then ``call``;
        what ``call`` gave, one entry per env of the actor."""
        import ray

        part = self._slices[a]
        attrs = {name: values[part] for name, values in self._replay_attrs.items()}
        log = [] if _whole_reset(call) else self._log
        calls = [_part(c, part) for c in [*log, call]]
        for _ in range(MAX_LOSSES):
            ray.kill(self._actors[a])
            self._actors[a] = self._spawn(part)
            self.restarts += 1
            try:
                wait_ready([self._actors[a]])
                result = self._unpack(ray.get(self._actors[a].replay.remote(attrs, calls)))
            except Exception as exc:
                if not lost(exc):
                    raise
                continue
            self.replayed_steps += sum(c[0] == "step" for c in log) * (part.stop - part.start)
            return result
        raise RuntimeError(f"env-runner actor {a} died {MAX_LOSSES} times in a row")


def _part(call: tuple[Any, ...], part: slice) -> tuple[Any, ...]:
    """``call`` for the envs of ``part`` only: its per-env list cut to them."""
    kind, *args = call
    if kind == "reset":
        seeds, options, mask = args
        return (kind, seeds[part], options, None if mask is None else mask[part])
    if kind == "set_attr":
        name, values = args
        return (kind, name, values[part])
    (actions,) = args
    return (kind, actions[part])


def _whole_reset(call: tuple[Any, ...]) -> bool:
    """Whether ``call`` resets every env (not only a mask's)."""
    return call[0] == "reset" and call[3] is None


def _reset_mask(mask: Any, num_envs: int) -> list[bool] | None:
    """``options["reset_mask"]`` checked as Gymnasium's vector envs check it: a bool array of
    one entry per env, at least one true."""
    if mask is None:
        return None
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (num_envs,):
        raise ValueError(f"reset_mask must be a numpy bool array of shape ({num_envs},)")
    if not mask.any():
        raise ValueError("reset_mask marks no env to reset")
    return [bool(m) for m in mask]


def make_ray_vector_env(
    env_id: str,
    task_ids: Sequence[str],
    num_envs: int,
    address: str | None = None,
    **env_kwargs: Any,
) -> RayVectorEnv:
    """Connect to Ray at ``address`` (see :func:`start`) and build a :class:`RayVectorEnv`.
    A mixed env (``mix=`` in ``env_kwargs``) holds one env per tool: it declares the memory of
    as many."""
    start(address)
    if "mix" in env_kwargs and "memory_per_env" not in env_kwargs:
        from toolgym.envs.wrappers.mixed import parse_mix

        env_kwargs["memory_per_env"] = MEMORY_PER_ENV * len(parse_mix(env_kwargs["mix"]))
    return RayVectorEnv(env_id, task_ids, num_envs, **env_kwargs)


# -- pools of whole episodes ------------------------------------------------------------------
class ActorPool:
    """``size`` env-runner actors (no vector envs) that take whole items: one in flight per
    actor; an item whose actor died goes to a new actor (:data:`MAX_LOSSES` times at most)."""

    def __init__(self, size: int, memory_per_env: int = MEMORY_PER_ENV) -> None:
        self.size, self.memory_per_env = size, memory_per_env
        check_capacity(size, size * memory_per_env)
        self.actors = [self._spawn() for _ in range(size)]
        wait_ready(self.actors)
        self.restarts = 0

    def _spawn(self) -> Any:
        return new_actor("", [], {}, 0, self.memory_per_env)

    def imap(self, method: str, items: Iterable[tuple[Any, ...]]) -> Iterator[tuple[int, Any]]:
        """``(index, result)`` of ``actor.method(*item)`` per item, as they finish."""
        import ray

        todo = collections.deque(enumerate(items))
        losses: collections.Counter[int] = collections.Counter()
        running: dict[Any, tuple[int, int, tuple[Any, ...]]] = {}  # ref -> (actor, index, item)
        idle = list(range(self.size))
        while todo or running:
            while idle and todo:
                a, (index, item) = idle.pop(), todo.popleft()
                running[getattr(self.actors[a], method).remote(*item)] = (a, index, item)
            (ref,), _ = ray.wait(list(running), num_returns=1)
            a, index, item = running.pop(ref)
            try:
                result = ray.get(ref)
            except Exception as exc:
                if not lost(exc):
                    raise
                losses[index] += 1
                if losses[index] >= MAX_LOSSES:
                    raise RuntimeError(
                        f"item {index} lost its env-runner actor {MAX_LOSSES} times"
                    ) from exc
                ray.kill(self.actors[a])
                self.actors[a] = self._spawn()
                self.restarts += 1
                todo.appendleft((index, item))
                idle.append(a)
                continue
            idle.append(a)
            yield index, result

    def actor_pids(self) -> list[int]:
        import ray

        return ray.get([a.pid.remote() for a in self.actors])

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)


def run_episodes(
    env_id: str,
    agent: str,
    *,
    episodes: int | None = None,
    seed: int = 0,
    out: Path | None = None,
    record: Path | None = None,
    actors: int | None = None,
    **env_kwargs: Any,
) -> Iterator[Any]:
    """:func:`toolgym.agents.runner.run_episodes` with each episode played by an env-runner
    actor (``actors`` of them; default: one per free CPU): the same episodes, in the same
    order, with the same scores. Renders are written here from the PNG bytes the actor sent;
    so are recordings (``record``), episode ``k`` in the folder numbered ``k``."""
    from toolgym.agents.runner import Episode, episode_tasks

    if record is not None:
        env_kwargs.setdefault("timings_in_info", True)  # as a local recording has them
    probe = gym.make(env_id, **env_kwargs)
    tasks = [t.id for t in probe.unwrapped.tasks]
    probe.close()
    order = episode_tasks(tasks, episodes, seed)
    count = len(order)
    items = [
        (env_id, agent, seed + k, k, order[k], out is not None, env_kwargs, record is not None)
        for k in range(count)
    ]
    pool = ActorPool(min(count, actors or free_cpus()))
    try:
        ready: dict[int, Any] = {}
        following = 0
        for index, (row, png, recorded) in pool.imap("episode", items):
            if png is not None and out is not None:
                out.mkdir(parents=True, exist_ok=True)
                (out / row["render"]).write_bytes(png)
                row["render"] = out / row["render"]
            if record is not None:
                write_recordings(record, recorded, index)
            ready[index] = Episode(**row)
            while following in ready:  # in the local order
                yield ready.pop(following)
                following += 1
    finally:
        pool.close()


def verify_batch(
    tasks: Iterable[Any],
    scripts: Path,
    out: Path,
    *,
    jobs: int | None = None,
    limits: Any = None,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`toolgym.envs.verification.batch.verify_batch` across env-runner actors (``jobs`` of
    them, each verifying one script at a time; default: one per free CPU): scripts are read
    here, verified in the actors, and each result line is appended to ``out`` here as it
    arrives, so an interrupted batch keeps every finished result and resumes where it stopped.
    Returns this run's results (``Outcome.to_dict()``)."""
    from toolgym.envs.verification.batch import append_result, done_tasks, read_results, read_script

    previous, done = read_results(out), done_tasks(out)
    outcomes: list[dict[str, Any]] = []

    def finished(result: dict[str, Any]) -> None:
        append_result(out, result, previous)
        outcomes.append(result)
        if on_done:
            on_done(result)

    items = []
    for task in tasks:
        if task.id in done:
            continue
        path, code = read_script(scripts, task)
        if isinstance(code, str):
            items.append((task.id, code, str(path), limits))
        else:  # no script to send: its verdict is known here
            finished(code.to_dict())
    if not items:
        return outcomes
    pool = ActorPool(min(len(items), jobs or free_cpus()))
    try:
        for _, result in pool.imap("verify", items):
            finished(result)
    finally:
        pool.close()
    return outcomes
