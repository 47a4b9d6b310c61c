"""Run agents for episodes and collect what happened: task, steps, final score, time, renders."""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from toolgym.agents.baselines import AGENTS, OracleAgent, RandomAgent


@dataclasses.dataclass
class Episode:
    task: str
    steps: int
    score: float | None
    passed: bool
    seconds: float
    errors: int
    render: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (``render`` as a string path or ``None``)."""
        data = dataclasses.asdict(self)
        data["render"] = str(self.render) if self.render else None
        return data


def make_agent(name: str, env: gym.Env, seed: int) -> Any:
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    if name == "random":
        return RandomAgent(env.unwrapped.registry, env.unwrapped.action_mode, seed)
    return OracleAgent(env.unwrapped.action_mode)


def run_episodes(
    env_id: str,
    agent_name: str,
    *,
    episodes: int | None = None,
    seed: int = 0,
    out: Path | None = None,
    record: Path | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    **env_kwargs: Any,
) -> Iterator[Episode]:
    """Yield one :class:`Episode` per episode. With ``episodes=None``, every task of the suite's
    split once, in order; otherwise ``episodes`` tasks drawn (by ``seed``) without repeating one
    before every task has run, the episodes seeded ``seed, seed + 1, ...``.
    With ``record``, every episode is recorded there (``toolgym.envs.RecordEpisodes``, with the
    env's timings on)."""
    if record is not None:
        env_kwargs.setdefault("timings_in_info", True)
    env = gym.make(env_id, **env_kwargs)
    if record is not None:
        from toolgym.envs.recording.recorder import RecordEpisodes

        env = RecordEpisodes(env, record)
    try:
        order = episode_tasks([t.id for t in env.unwrapped.tasks], episodes, seed)
        for k in range(len(order)):
            yield play_episode(env, agent_name, seed + k, order[k], out, k)
    finally:
        env.close()


def episode_tasks(tasks: list[str], episodes: int | None, seed: int) -> list[str]:
    """The task of each episode of a run: with ``episodes=None`` every task once, in order;
    otherwise ``episodes`` tasks drawn by ``seed``, distinct until the suite is used up (a seeded
    shuffle, then a fresh one), so a short run never plays one task twice."""
    if episodes is None:
        return list(tasks)
    rng = np.random.default_rng(seed)
    rounds = -(-episodes // len(tasks))
    order = [int(i) for _ in range(rounds) for i in rng.permutation(len(tasks))]
    return [tasks[i] for i in order[:episodes]]


def play_episode(
    env: gym.Env, agent_name: str, seed: int, task: str | None, out: Path | None, k: int
) -> Episode:
    """Episode ``k`` of a run: the env reset with ``seed`` (on ``task`` when given) and the agent
    seeded with it too, so an episode depends on nothing played before it (and any process can
    play it, see ``toolgym.agents.distributed.runners``)."""
    agent = make_agent(agent_name, env, seed)
    return _episode(env, agent, seed, {"task": task} if task else None, out, k)


def _episode(
    env: gym.Env, agent: Any, seed: int, options: Any, out: Path | None, k: int
) -> Episode:
    started = time.perf_counter()
    observation, info = env.reset(seed=seed, options=options)
    task = env.unwrapped.task
    steps, errors, final = 0, 0, {}
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, task))
        steps += 1
        errors += "error" in info
        if terminated or truncated:
            final = info.get("final_report", {})
            break
    render = None
    if out is not None:
        from PIL import Image

        from toolgym.renderers.labels import agent_and_target

        out.mkdir(parents=True, exist_ok=True)
        render = _new_file(out, f"{k:03d}-{task.id.replace('/', '_')}", ".png")
        labelled = agent_and_target(observation["image"], observation["target"])
        Image.fromarray(labelled).save(render)
    return Episode(
        task.id,
        steps,
        final.get("score"),
        bool(final.get("passed")),
        time.perf_counter() - started,
        errors,
        render,
    )


def _new_file(folder: Path, stem: str, suffix: str) -> Path:
    """``folder/stem+suffix``, or ``stem-2``, ``stem-3`` ... when taken: created empty here, so
    two runs writing into one folder never replace each other's files."""
    for n in itertools.count(1):
        path = folder / f"{stem}{'' if n == 1 else f'-{n}'}{suffix}"
        try:
            path.open("xb").close()
            return path
        except FileExistsError:
            continue
    raise AssertionError("unreachable")
