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
  mid-rollout costs only its in-flight episodes: they end truncated (no ``episode_score``), a new
  actor takes the lost environments' places, and a task the learner had queued there
  (``task_queue``, as :func:`~toolgym.agents.vector.play_queued` does) is played again.
- :func:`run_episodes` and :func:`verify_batch` hand whole episodes or scripts to a pool of actors;
  an item whose actor died reruns on another, and results come back in the local order.

:func:`start` connects: no address starts a local Ray on 127.0.0.1 (no dashboard) sized to the
machine; an address joins an existing cluster (``ray start --head``, KubeRay), after checking
within :data:`CONNECT_TIMEOUT_S` that something answers there.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import socket
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

LOCAL = "local"  # the address meaning: start a Ray on this machine
CONNECT_TIMEOUT_S = 3.0
# What one CadQuery environment holds (its actor's share, its zygote, a live session and its
# snapshots); measured in bench/ray_rollouts.py, rounded up. Declared so that Ray packs no more
# envs on a node than its memory holds.
MEMORY_PER_ENV = 512 * 1024**2
READY_TIMEOUT_S = 300.0  # actors that cannot be placed in this long: the cluster has no room
START_ATTEMPTS = 3  # a local Ray whose node did not come up in Ray's 30 s is started again
MAX_LOSSES = 3  # an item whose actor died this many times is given up
_started_here = False  # whether this process started the Ray it uses (see start)


class RayAddressError(RuntimeError):
    """No Ray cluster answers at the address given."""


class RayCapacityError(ValueError):
    """The Ray cluster cannot place the env-runner actors asked for."""


# -- connecting -------------------------------------------------------------------------------
def start(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect this process to Ray (once; later calls do nothing).

    ``address`` ``None`` or ``"local"``: start a Ray on this machine, bound to 127.0.0.1, without
    dashboard, with ``num_cpus`` CPUs (default: all). ``"HOST:PORT"`` (a head's GCS, e.g. from
    ``ray start --head``) or ``"auto"``: join that cluster. Raises :class:`RayAddressError` naming
    the address when nothing answers there within :data:`CONNECT_TIMEOUT_S` seconds.
    """
    address = address or LOCAL
    host = "127.0.0.1"
    if address not in (LOCAL, "auto"):
        host, port = _parse_address(address)
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__.replace("Error", "").lower() or str(exc)
            raise RayAddressError(f"no Ray cluster answers at {address}: {reason}") from None
    if _loopback(host):
        # A loopback address must stay loopback: by default Ray rewrites it to the machine's
        # outward IP, which a firewalled or network-less machine cannot reach.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report sent home
    import ray

    if ray.is_initialized():
        return
    if address == LOCAL:
        global _started_here
        _started_here = True
        for attempt in range(START_ATTEMPTS):
            try:
                ray.init(
                    address=LOCAL, num_cpus=num_cpus or os.cpu_count(), include_dashboard=False,
                    _node_ip_address="127.0.0.1", log_to_driver=False, logging_level="WARNING",
                    configure_logging=False,
                )  # fmt: skip
                break
            except Exception as exc:  # Ray's own start-up limit (30 s) trips on a busy machine
                if "timed out during startup" not in str(exc) or attempt == START_ATTEMPTS - 1:
                    raise
    else:
        try:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING")
        except ConnectionError as exc:  # "auto" with no cluster running on this machine
            raise RayAddressError(f"no Ray cluster answers at {address}: {exc}") from None


def _parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayAddressError(f"{address!r} is not a Ray address: give HOST:PORT, auto or local")
    return host.strip("[]"), int(port)


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


# -- the actor --------------------------------------------------------------------------------
class EnvRunner:
    """A Ray actor's body: ``num_envs`` tool-mode environments (``ChosenTasks`` over
    ``gym.make(env_id, action_mode="tool", **env_kwargs)``, as the local workers), plus whole
    episodes and script verification on demand. Every method returns plain data."""

    def __init__(
        self, env_id: str, task_ids: Sequence[str], env_kwargs: dict[str, Any], num_envs: int
    ) -> None:
        from toolgym.agents.vector import _make

        self.envs = [_make(env_id, list(task_ids), env_kwargs) for _ in range(num_envs)]
        self.episode_envs: dict[str, gym.Env] = {}

    def pid(self) -> int:
        """The actor's process id (the tests kill it)."""
        return os.getpid()

    def reset(self, seeds: list[int | None], options: dict[str, Any] | None) -> list[Any]:
        return [env.reset(seed=s, options=options) for env, s in zip(self.envs, seeds, strict=True)]

    def step(self, actions: list[str]) -> list[tuple[Any, ...]]:
        """Each env's ``(obs, reward, terminated, truncated, info, final)``; an episode that ended
        restarts at once (same-step autoreset) and ``final`` is ``(last obs, last info)``."""
        results = []
        for env, action in zip(self.envs, actions, strict=True):
            obs, reward, terminated, truncated, info = env.step(action)
            final = None
            if terminated or truncated:
                final = (obs, info)
                obs, info = env.reset()
            results.append((obs, float(reward), bool(terminated), bool(truncated), info, final))
        return results

    def set_attr(self, name: str, values: list[Any]) -> None:
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def episode(
        self, env_id: str, agent: str, seed: int, k: int, task: str | None, render: bool,
        env_kwargs: dict[str, Any],
    ) -> tuple[dict[str, Any], bytes | None]:  # fmt: skip
        """Episode ``k`` of ``toolgym run`` (see :func:`toolgym.agents.runner.play_episode`):
        its row, and its final render as PNG bytes when asked."""
        from toolgym.agents.runner import play_episode

        key = json.dumps([env_id, env_kwargs], sort_keys=True, default=repr)
        if key not in self.episode_envs:
            self.episode_envs[key] = gym.make(env_id, **env_kwargs)
        env = self.episode_envs[key]
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) if render else None
            episode = play_episode(env, agent, seed, task, out, k)
            png = episode.render.read_bytes() if episode.render else None
        row = episode.to_dict()
        row["render"] = episode.render.name if episode.render else None
        return row, png

    def verify(self, task_id: str, code: str, filename: str, limits: Any) -> dict[str, Any]:
        """One script's verdict (``Outcome.to_dict()``), run in a fresh session here."""
        from toolgym.envs.suites import get_task
        from toolgym.envs.verification import verify_script

        return verify_script(get_task(task_id), code, filename=filename, limits=limits).to_dict()

    def close(self) -> None:
        for env in [*self.envs, *self.episode_envs.values()]:
            env.close()


def _actor_options(num_envs: int, memory_per_env: int) -> dict[str, Any]:
    # SPREAD: a node lost takes as few envs with it as the cluster allows.
    return {
        "num_cpus": max(1, num_envs), "memory": max(1, num_envs) * memory_per_env,
        "scheduling_strategy": "SPREAD", "max_restarts": 0,
    }  # fmt: skip


def _new_actor(
    env_id: str, task_ids: Sequence[str], env_kwargs: dict[str, Any], num_envs: int,
    memory_per_env: int,
) -> Any:  # fmt: skip
    import ray

    remote = ray.remote(EnvRunner).options(**_actor_options(num_envs, memory_per_env))
    return remote.remote(env_id, list(task_ids), env_kwargs, num_envs)


def _wait_ready(actors: list[Any], timeout_s: float = READY_TIMEOUT_S) -> None:
    """Wait until every actor runs, or fail saying what the cluster lacks."""
    import ray

    pings = [a.pid.remote() for a in actors]
    ready, _ = ray.wait(pings, num_returns=len(pings), timeout=timeout_s)
    if len(ready) < len(pings):
        free = ray.available_resources()
        for actor in actors:
            ray.kill(actor)
        raise RayCapacityError(
            f"the Ray cluster placed {len(ready)} of {len(pings)} env-runner actors in "
            f"{timeout_s:.0f} s (free: {free.get('CPU', 0):g} CPUs, "
            f"{free.get('memory', 0) / 1024**3:.1f} GiB); ask for fewer envs or add nodes"
        )
    ray.get(pings)


def _check_capacity(cpus: int, memory: int) -> None:
    """Fail at once when a Ray started here could never hold ``cpus`` CPUs and ``memory``
    bytes of actors (a cluster's autoscaler may add nodes: there, :func:`_wait_ready` waits)."""
    import ray

    if not _started_here:
        return
    total = ray.cluster_resources()
    if cpus > total.get("CPU", 0) or memory > total.get("memory", 0):
        raise RayCapacityError(
            f"the local Ray has {total.get('CPU', 0):g} CPUs and "
            f"{total.get('memory', 0) / 1024**3:.1f} GiB for actors; {cpus} envs need {cpus} "
            f"CPUs and {memory / 1024**3:.1f} GiB (one CPU each): ask for fewer envs, or give a "
            "cluster's address"
        )


def _lost(exc: BaseException) -> bool:
    """Whether an error says an actor (or its node) died, rather than a bug in the call."""
    import ray.exceptions as rex

    return isinstance(exc, rex.RayActorError | rex.ActorUnavailableError)


# -- a vector env over actors -----------------------------------------------------------------
class RayVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` tool-mode environments in Ray actors of ``envs_per_actor`` each.

    Built like :func:`toolgym.agents.vector.make_vector_env` (``env_id``, ``task_ids``,
    environment arguments) and used like it: ``reset(seed=s)`` seeds env ``i`` with ``s + i``,
    ``step(actions)`` autoresets on the same step and reports ``final_obs``/``final_info``,
    ``set_attr(name, values)`` reaches each env's ``ChosenTasks`` wrapper. Connect first
    (:func:`start`).

    Faults: when an actor dies (its process killed, its node lost), its environments' episodes
    in flight end with ``truncated=True``, reward 0 and ``final_info["lost"] = True`` (no
    ``episode_score``: no learner counts them as played); a new actor takes their places with
    the attributes set so far, and the tasks they were playing from ``task_queue`` go back to the
    front of their queues. ``restarts`` counts the actors replaced.
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        env_id: str,
        task_ids: Sequence[str],
        num_envs: int,
        envs_per_actor: int = 1,
        memory_per_env: int = MEMORY_PER_ENV,
        **env_kwargs: Any,
    ) -> None:
        from toolgym.agents.vector import _make

        probe = _make(env_id, list(task_ids), env_kwargs)  # spaces only: no session starts
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        probe.close()
        self.num_envs = num_envs
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._spec = (env_id, list(task_ids), dict(env_kwargs))
        self._memory_per_env = memory_per_env
        starts = range(0, num_envs, envs_per_actor)
        self._slices = [slice(a, min(a + envs_per_actor, num_envs)) for a in starts]
        _check_capacity(num_envs, num_envs * memory_per_env)
        self._actors = [self._spawn(s) for s in self._slices]
        _wait_ready(self._actors)
        self._attrs: dict[str, list[Any]] = {}
        self._queues: list[list[str]] = [[] for _ in range(num_envs)]
        self._tasks: list[str | None] = [None] * num_envs
        self._queued = [False] * num_envs  # whether env i's episode is a task from its queue
        self._seeds: list[int | None] = [None] * num_envs
        self._obs: list[Any] = [None] * num_envs
        self._pending: list[Any] | None = None
        self.restarts = 0

    def _spawn(self, part: slice) -> Any:
        env_id, task_ids, env_kwargs = self._spec
        count = part.stop - part.start
        return _new_actor(env_id, task_ids, env_kwargs, count, self._memory_per_env)

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
        self._seeds = seeds
        results: list[Any] = [None] * self.num_envs
        for a, part in enumerate(self._slices):
            results[part] = self._call(a, "reset", seeds[part], options)
        infos: dict[str, Any] = {}
        for i, (obs, info) in enumerate(results):
            self._started(i, obs, info)
            infos = self._add_info(infos, info, i)
        return self._batch(), infos

    def step_async(self, actions: Sequence[str]) -> None:
        """Send the actions; :meth:`step_wait` collects what they gave."""
        actions = list(actions)
        self._pending = [
            self._actors[a].step.remote(actions[part]) for a, part in enumerate(self._slices)
        ]
        self._actions = actions

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        import ray

        assert self._pending is not None, "step_wait without step_async"
        pending, self._pending = self._pending, None
        results: list[Any] = [None] * self.num_envs
        for a, (part, ref) in enumerate(zip(self._slices, pending, strict=True)):
            try:
                results[part] = ray.get(ref)
            except Exception as exc:
                if not _lost(exc):
                    raise
                results[part] = self._replace(a)
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        infos: dict[str, Any] = {}
        for i, (obs, reward, term, trunc, info, final) in enumerate(results):
            rewards[i], terminated[i], truncated[i] = reward, term, trunc
            if final is not None:
                infos = self._add_info(infos, {"final_obs": final[0], "final_info": final[1]}, i)
                self._started(i, obs, info)
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
        self._attrs[name] = values
        if name == "task_queue":
            self._queues = [list(q) for q in values]
        for a, part in enumerate(self._slices):
            self._call(a, "set_attr", name, values[part])

    def close_extras(self, **kwargs: Any) -> None:
        import ray

        for actor in self._actors:
            with contextlib.suppress(Exception):  # a dead actor has nothing left to close
                ray.get(actor.close.remote(), timeout=30)
            ray.kill(actor)

    # -- bookkeeping --------------------------------------------------------------------------
    def _batch(self) -> Any:
        empty = create_empty_array(self.single_observation_space, self.num_envs)
        return concatenate(self.single_observation_space, self._obs, empty)

    def _started(self, i: int, obs: Any, info: dict[str, Any]) -> None:
        """Env ``i`` began an episode: mirror the pop from its task queue."""
        self._obs[i] = obs
        self._tasks[i] = info.get("task")
        self._queued[i] = bool(self._queues[i]) and self._queues[i][0] == self._tasks[i]
        if self._queued[i]:
            self._queues[i].pop(0)

    def _call(self, a: int, method: str, *args: Any) -> Any:
        """Call actor ``a`` (reset, set_attr: calls that can simply be redone on a new one)."""
        import ray

        for _ in range(MAX_LOSSES):
            try:
                return ray.get(getattr(self._actors[a], method).remote(*args))
            except Exception as exc:
                if not _lost(exc):
                    raise
                self._respawn(a)
        raise RuntimeError(f"env-runner actor {a} died {MAX_LOSSES} times in {method}")

    def _respawn(self, a: int) -> Any:
        """A new actor in place of actor ``a``, with every attribute set so far; the task each
        of its envs was playing from a queue goes back to the queue's front."""
        import ray

        part = self._slices[a]
        ray.kill(self._actors[a])
        self._actors[a] = self._spawn(part)
        _wait_ready([self._actors[a]])
        self.restarts += 1
        for name, values in self._attrs.items():
            if name == "task_queue":
                for i in range(part.start, part.stop):
                    if self._queued[i]:
                        self._queues[i].insert(0, self._tasks[i])
                values = self._queues
            ray.get(self._actors[a].set_attr.remote(name, list(values[part])))
        return self._actors[a]

    def _replace(self, a: int) -> list[tuple[Any, ...]]:
        """Actor ``a`` died mid-step: its episodes end truncated; new ones start on a new actor
        (seeded from the lost envs' seeds and the restart count, so reruns repeat)."""
        part = self._slices[a]
        self._respawn(a)
        seeds = [None if s is None else s + 7_919 * self.restarts for s in self._seeds[part]]
        fresh = self._call(a, "reset", seeds, None)
        lost = []
        for i, (obs, info) in zip(range(part.start, part.stop), fresh, strict=True):
            final = (self._obs[i], {"lost": True, "task": self._tasks[i]})
            lost.append((obs, 0.0, False, True, info, final))
        return lost


def make_ray_vector_env(
    env_id: str, task_ids: Sequence[str], num_envs: int, address: str | None = None,
    **env_kwargs: Any,
) -> RayVectorEnv:  # fmt: skip
    """Connect to Ray at ``address`` (see :func:`start`) and build a :class:`RayVectorEnv`."""
    start(address)
    return RayVectorEnv(env_id, task_ids, num_envs, **env_kwargs)


# -- pools of whole episodes ------------------------------------------------------------------
class ActorPool:
    """``size`` env-runner actors (no vector envs) that take whole items: one in flight per
    actor; an item whose actor died goes to a new actor (:data:`MAX_LOSSES` times at most)."""

    def __init__(self, size: int, memory_per_env: int = MEMORY_PER_ENV) -> None:
        self.size, self.memory_per_env = size, memory_per_env
        _check_capacity(size, size * memory_per_env)
        self.actors = [self._spawn() for _ in range(size)]
        _wait_ready(self.actors)
        self.restarts = 0

    def _spawn(self) -> Any:
        return _new_actor("", [], {}, 0, self.memory_per_env)

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
                if not _lost(exc):
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
    env_id: str, agent: str, *, episodes: int | None = None, seed: int = 0,
    out: Path | None = None, record: Path | None = None, actors: int | None = None,
    **env_kwargs: Any,
) -> Iterator[Any]:  # fmt: skip
    """:func:`toolgym.agents.runner.run_episodes` with each episode played by an env-runner
    actor (``actors`` of them; default: one per free CPU): the same episodes, in the same
    order, with the same scores. Renders are written here from the PNG bytes the actor sent.
    Recording (``record``) is not supported: it would land on the actors' nodes."""
    from toolgym.agents.runner import Episode, episode_tasks

    if record is not None:
        raise ValueError(
            "--record is not supported with --ray: recordings would land on the "
            "nodes that played the episodes"
        )

    probe = gym.make(env_id, **env_kwargs)
    tasks = [t.id for t in probe.unwrapped.tasks]
    probe.close()
    order = episode_tasks(tasks, episodes, seed)
    count = len(order)
    items = [
        (env_id, agent, seed + k, k, order[k], out is not None, env_kwargs) for k in range(count)
    ]
    pool = ActorPool(min(count, actors or _free_cpus()))
    try:
        ready: dict[int, Any] = {}
        following = 0
        for index, (row, png) in pool.imap("episode", items):
            if png is not None and out is not None:
                out.mkdir(parents=True, exist_ok=True)
                (out / row["render"]).write_bytes(png)
                row["render"] = out / row["render"]
            ready[index] = Episode(**row)
            while following in ready:  # in the local order
                yield ready.pop(following)
                following += 1
    finally:
        pool.close()


def verify_batch(
    tasks: Iterable[Any], scripts: Path, out: Path, *, jobs: int | None = None,
    limits: Any = None, on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """:func:`toolgym.envs.verification.verify_batch` across env-runner actors (``jobs`` of
    them, each verifying one script at a time; default: one per free CPU): scripts are read
    here, verified in the actors, and each result line is appended to ``out`` here as it
    arrives, so an interrupted batch keeps every finished result and resumes where it stopped.
    Returns this run's results (``Outcome.to_dict()``)."""
    from toolgym.envs.verification import append_result, done_tasks, read_results, read_script

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
    pool = ActorPool(min(len(items), jobs or _free_cpus()))
    try:
        for _, result in pool.imap("verify", items):
            finished(result)
    finally:
        pool.close()
    return outcomes


def _free_cpus() -> int:
    import ray

    return max(1, int(ray.available_resources().get("CPU", 1)))
