"""Re-executing a recorded episode in a fresh environment, to check that it reproduces.

The environment is made again from ``meta.json`` (env id and arguments), reset with the recorded
seed and task, and given the recorded actions one by one. Each step's observation (feedback text,
digests of the views), reward, error and end flags are compared with the record; the first
difference is reported as a :class:`Divergence`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym

from toolgym.envs.recording.log import RecordedEpisode, decode_kwargs
from toolgym.envs.recording.recorder import picture_digests

REWARD_TOLERANCE = 1e-9
CUT_MARK = "more characters cut by the recorder]"


@dataclasses.dataclass(frozen=True)
class Divergence:
    """Where a re-execution first differs from its record (``step`` 0: at reset)."""

    episode: str
    step: int
    field: str
    recorded: Any
    now: Any

    def __str__(self) -> str:
        return (
            f"{self.episode}: step {self.step}, {self.field}: recorded {_short(self.recorded)}, "
            f"now {_short(self.now)}"
        )


def verify_episode(episode: RecordedEpisode) -> Divergence | None:
    """Re-execute ``episode``; the first divergence, or ``None`` when every step reproduces.

    Raises ``ValueError`` when the recording lacks what a re-execution needs (the env id)."""
    env_id, kwargs = episode.meta.get("env_id"), episode.meta.get("env_kwargs")
    if not env_id or not isinstance(kwargs, dict):
        raise ValueError(
            f"{episode.path / 'meta.json'}: no env id and arguments (the env was not made with "
            "gym.make, or meta.json is missing); cannot re-execute"
        )
    seed = episode.meta.get("seed")
    reset_line = episode.reset or {}
    env = gym.make(env_id, **decode_kwargs(kwargs))
    try:
        observation, _ = env.reset(seed=seed, options={"task": episode.task})
        found = _compare(episode, 0, reset_line, {"digests": picture_digests(observation)})
        if found:
            return found
        for number, line in enumerate(episode.steps, start=1):
            if line.get("finish"):  # the agent ended the episode: the final tier settles it
                reward, info = env.unwrapped.finish()
                report = info.get("final_report") or {}
                now = {"reward": reward, "score": report.get("score")}
                recorded = (line.get("final_report") or {}).get("score")
                found = _compare(episode, number, {**line, "score": recorded}, now)
                if found:
                    return found
                continue
            action = line.get("action")
            if isinstance(action, str) and action.endswith(CUT_MARK):
                return Divergence(episode.name, number, "action", "cut by the recorder", None)
            observation, reward, terminated, truncated, info = env.step(action)
            now = {
                "error": info.get("error"),
                "feedback": observation.get("feedback"),
                "digests": picture_digests(observation),
                "reward": float(reward),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
            }
            found = _compare(episode, number, line, now)
            if found:
                return found
    finally:
        env.close()
    return None


def _compare(
    episode: RecordedEpisode, number: int, line: dict[str, Any], now: dict[str, Any]
) -> Divergence | None:
    for field, value in now.items():
        recorded = line.get(field)
        if field == "digests":
            recorded = recorded if isinstance(recorded, dict) else {}
            for view, digest in value.items():
                if recorded.get(view) != digest:
                    return Divergence(episode.name, number, view, recorded.get(view), digest)
            continue
        if field == "reward":
            same = isinstance(recorded, int | float) and abs(recorded - value) <= REWARD_TOLERANCE
        elif isinstance(recorded, str) and recorded.endswith(CUT_MARK) and isinstance(value, str):
            same = value.startswith(recorded[: recorded.rfind("… [")])
        else:
            same = recorded == value
        if not same:
            return Divergence(episode.name, number, field, recorded, value)
    return None


def _short(value: Any, chars: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= chars else text[:chars] + "…"
