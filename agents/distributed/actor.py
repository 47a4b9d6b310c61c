"""The env-runner actor: a Ray actor's body holding a few toolgym environments, and what it ships.

An :class:`EnvRunner` holds its environments (each with its own sandbox zygote and sessions,
started inside the actor's process on whichever node Ray placed it), declaring one CPU and
``MEMORY_PER_ENV`` bytes per environment (:func:`new_actor`). What it sends back is plain data:
observations as numpy arrays (``uint8`` images, strings, ints), rewards, flags, and the env's
``info`` dicts (plain data by the env's contract: reports are ``to_dict()``-ed); never a sandbox
object. Recorded episodes cross as their folders' bytes (:data:`Recording`) and are written on
the learner's side by :func:`write_recordings`.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolgym.agents.distributed.cluster import actor_options
from toolgym.agents.trainer.task_env import make_env


class EnvRunner:
    """A Ray actor's body: ``num_envs`` tool-mode environments (``ChosenTasks`` over
    ``gym.make(env_id, action_mode="tool", **env_kwargs)``, as the local workers), plus whole
    episodes and script verification on demand. Every method returns plain data.

    With ``record``, every episode of the envs is recorded (``RecordEpisodes``) into a folder of
    the actor's node, and each episode's folder is sent back, as ``(name, {path: bytes})``, with
    the reply to the call that finished it (see :func:`write_recordings`), then removed here.
    The env calls (``reset``, ``step``, ``set_attr``) reply ``(one result per env, folders)``.
    """

    def __init__(
        self,
        env_id: str,
        task_ids: Sequence[str],
        env_kwargs: dict[str, Any],
        num_envs: int,
        record: bool = False,
        autoreset: str = "SameStep",
    ) -> None:
        from toolgym.envs.recording.recorder import RecordEpisodes

        self.autoreset = gym.vector.AutoresetMode(autoreset)
        self.ended = [False] * num_envs  # each env's episode ended on its last step

        self.recordings = _temporary_folder() if record else None
        self.envs = [make_env(env_id, list(task_ids), env_kwargs) for _ in range(num_envs)]
        if self.recordings is not None:
            self.envs = [RecordEpisodes(env, self.recordings) for env in self.envs]
        self.episode_envs: dict[str, gym.Env] = {}

    def pid(self) -> int:
        """The actor's process id (the tests kill it)."""
        return os.getpid()

    def reset(
        self,
        seeds: list[int | None],
        options: dict[str, Any] | None,
        mask: list[bool] | None = None,
    ) -> Shipment:
        """Each env's ``(obs, info)`` after its reset; with ``mask``, only the envs it marks
        reset (the others' entries are ``None``)."""
        results: list[Any] = []
        for i, (env, seed) in enumerate(zip(self.envs, seeds, strict=True)):
            if mask is not None and not mask[i]:
                results.append(None)
                continue
            self.ended[i] = False
            results.append(env.reset(seed=seed, options=options))
        return results, self._finished()

    def step(self, actions: list[str]) -> Shipment:
        """Each env's ``(obs, reward, terminated, truncated, info, final)``, autoreset as
        Gymnasium's vector envs do in the actor's mode: same-step, an episode that ended
        restarts at once and ``final`` is ``(last obs, last info)``; next-step, an env whose
        episode ended on its last step resets instead of stepping (reward 0, its action
        ignored); disabled, it is not stepped until reset (``RayVectorEnv`` refuses that step
        first). ``final`` is ``None`` but for same-step ends."""
        results = []
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            final = None
            if self.ended[i] and self.autoreset is gym.vector.AutoresetMode.NEXT_STEP:
                obs, info = env.reset()
                reward, terminated, truncated = 0.0, False, False
            else:
                obs, reward, terminated, truncated, info = env.step(action)
            self.ended[i] = bool(terminated or truncated)
            if self.ended[i] and self.autoreset is gym.vector.AutoresetMode.SAME_STEP:
                final = (obs, info)
                obs, info = env.reset()
                self.ended[i] = False
            results.append((obs, float(reward), bool(terminated), bool(truncated), info, final))
        return results, self._finished()

    def set_attr(self, name: str, values: list[Any]) -> Shipment:
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)
        return [None] * len(self.envs), []

    def replay(self, attrs: dict[str, list[Any]], calls: list[tuple[Any, ...]]) -> Shipment:
        """Set ``attrs``, then make each ``(method, *args)`` call in turn (what the envs of a
        lost actor did since their last reset, then the call in flight); the last one's reply.
        The episodes the replayed calls finished were sent before: their recordings are not."""
        for name, values in attrs.items():
            self.set_attr(name, values)
        reply: Shipment = ([], [])
        for method, *args in calls:
            reply = getattr(self, method)(*args)
        return reply

    def _finished(self, every: bool = False) -> list[Recording]:
        """The recorded episodes' folders that no env writes to any more (``every``: all), read
        and removed."""
        if self.recordings is None:
            return []
        current = set() if every else {env.get_wrapper_attr("episode_dir") for env in self.envs}
        return take_folders(self.recordings, current)

    def episode(
        self,
        env_id: str,
        agent: str,
        seed: int,
        k: int,
        task: str | None,
        render: bool,
        env_kwargs: dict[str, Any],
        record: bool = False,
    ) -> tuple[dict[str, Any], bytes | None, list[Recording]]:
        """Episode ``k`` of ``toolgym run`` (see :func:`toolgym.agents.runner.play_episode`):
        its row, its final render as PNG bytes when asked, and its recording when asked."""
        from toolgym.agents.runner import play_episode
        from toolgym.envs.recording.recorder import RecordEpisodes

        key = json.dumps([env_id, env_kwargs, record], sort_keys=True, default=repr)
        if key not in self.episode_envs:
            self.episode_envs[key] = gym.make(env_id, **env_kwargs)
            if record:
                self.episode_envs[key] = RecordEpisodes(self.episode_envs[key], _temporary_folder())
        env = self.episode_envs[key]
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) if render else None
            episode = play_episode(env, agent, seed, task, out, k)
            png = episode.render.read_bytes() if episode.render else None
        row = episode.to_dict()
        row["render"] = episode.render.name if episode.render else None
        recorded = take_folders(env.directory, set()) if isinstance(env, RecordEpisodes) else []
        return row, png, recorded

    def verify(self, task_id: str, code: str, filename: str, limits: Any) -> dict[str, Any]:
        """One script's verdict (``Outcome.to_dict()``), run in a fresh session here."""
        from toolgym.envs.tasks.suites import get_task
        from toolgym.envs.verification.batch import verify_script

        return verify_script(get_task(task_id), code, filename=filename, limits=limits).to_dict()

    def close(self) -> list[Recording]:
        """Close every env; the recordings of the episodes they were playing (cut short)."""
        for env in [*self.envs, *self.episode_envs.values()]:
            env.close()
        from toolgym.envs.recording.recorder import RecordEpisodes

        finished = self._finished(every=True)
        for env in [*self.envs, *self.episode_envs.values()]:
            if isinstance(env, RecordEpisodes):  # its folder here, empty by now
                shutil.rmtree(env.directory, ignore_errors=True)
        return finished


# An episode's recording as it crosses: its folder's name and its files' bytes by relative path.
Recording = tuple[str, dict[str, bytes]]


Shipment = tuple[list[Any], list[Recording]]  # one result per env, finished recordings


def _temporary_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="toolgym-recordings-"))


def take_folders(root: Path, keep: set[Path | None]) -> list[Recording]:
    """Each folder of ``root`` but ``keep``, read into memory and removed, by name."""
    taken = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p not in keep):
        files = {
            path.relative_to(folder).as_posix(): path.read_bytes()
            for path in folder.rglob("*")
            if path.is_file()
        }
        shutil.rmtree(folder, ignore_errors=True)
        taken.append((folder.name, files))
    return taken


def write_recordings(root: Path, recordings: Iterable[Recording], first: int) -> int:
    """Write recorded episodes sent by actors into the run folder ``root``, numbered from
    ``first`` in the order given (the actor's own number is replaced: the folders then sort in
    the order the episodes ended, as a local run's do). Returns the next number."""
    root.mkdir(parents=True, exist_ok=True)
    for number, (name, files) in enumerate(recordings, first):
        stem = f"{number:04d}-{name.split('-', 1)[-1]}"
        folder = root / stem
        for n in itertools.count(2):  # never over a folder of an earlier run
            try:
                folder.mkdir()
                break
            except FileExistsError:
                folder = root / f"{stem}-{n}"
        for relative, data in files.items():
            path = (folder / relative).resolve()
            if not path.is_relative_to(folder.resolve()):
                raise ValueError(f"a recording sent {relative!r}, a path outside its folder")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        first = number + 1
    return first


def new_actor(
    env_id: str,
    task_ids: Sequence[str],
    env_kwargs: dict[str, Any],
    num_envs: int,
    memory_per_env: int,
    record: bool = False,
    autoreset: str = "SameStep",
) -> Any:
    import ray

    remote = ray.remote(EnvRunner).options(**actor_options(num_envs, memory_per_env))
    return remote.remote(env_id, list(task_ids), env_kwargs, num_envs, record, autoreset)
