"""SkyRL-Gym's door: a toolgym episode as a ``skyrl_gym`` text environment.

SkyRL's generator makes one env per trajectory (``skyrl_gym.make("toolgym", env_config=...,
extras=row)``), calls ``init(prompt)``, then ``step(text)`` with each model turn until ``done``,
and reads ``get_metrics()``. Here each turn is one env step: in code mode the turn's script (a
fenced block, or the whole text), in tool mode its first JSON tool call; a turn with none ends
the episode, as the system message says (a model that is done replies without a call). Until
the episode ends
the observation is the env's feedback as a ``user`` message; the reward is 0 on every turn but
the last, whose reward is the exact verifier's final score (in [0, 1]): the trajectory's return
is the episode's score. A score the verifier could not give is reported in ``metadata`` and
``get_metrics`` (``score_error``), never passed off as a 0 without saying so.

    pip install 'toolgym[skyrl]'
    import toolgym.agents.llm.skyrl_env  # registers "toolgym" with skyrl_gym
    rows = skyrl_dataset("primitives", action_mode="tool")  # prompt, env_class, extra_info

``env_config`` (a mapping; SkyRL passes its env section) may name ``env_id`` (default
CadQuery) and ``env_kwargs``; a row's ``extra_info["task"]`` (or ``task``) is the task's id.
Nothing a row carries is an answer: only the id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import skyrl_gym
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from toolgym.agents.llm.grpo import actions_of
from toolgym.agents.llm.messages import system_message, tools_for
from toolgym.envs.registration import DEFAULT_ENV
from toolgym.envs.tasks.suites import get_suite

ENV_CLASS = "toolgym"


class ToolgymTextEnv(BaseTextEnv):
    """One toolgym episode per trajectory; see the module docstring.

    Args:
        env_config: ``env_id`` and ``env_kwargs`` (``suite``, ``action_mode``, ``max_steps``...).
        extras: the dataset row: ``extra_info["task"]`` or ``task``, the task's id.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(env_config or {})
        extras = dict(extras or {})
        self.task = (extras.get("extra_info") or {}).get("task") or extras.get("task")
        if not self.task:
            raise ValueError("a toolgym row names its task: extra_info = {'task': <task id>}")
        kwargs = dict(config.get("env_kwargs") or {})
        self.env = gym.make(config.get("env_id", DEFAULT_ENV), **kwargs)
        self.max_turns = self.env.unwrapped.max_steps
        self.report: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start the row's task; the prompt goes to the model unchanged."""
        self.env.reset(seed=0, options={"task": self.task})
        self.turns, self.report = 0, {}
        return prompt, {"task": self.task}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        unwrapped = self.env.unwrapped
        found = actions_of(action, unwrapped.action_mode)
        if found:
            observation, _, terminated, truncated, info = self.env.step(found[0])
            done, feedback = terminated or truncated, str(observation["feedback"])
        else:  # no call: the model is done
            (_, info), done = unwrapped.finish(), True
        if not done:
            step = {"task": self.task, "feedback": feedback}
            return BaseTextEnvStepOutput(
                observations=[{"role": "user", "content": feedback}],
                reward=0.0,
                done=False,
                metadata=step,
            )
        self.report = info.get("final_report") or {}
        return BaseTextEnvStepOutput(
            observations=[], reward=self._score(), done=True, metadata=self.get_metrics()
        )

    def _score(self) -> float:
        score = self.report.get("score")
        return 0.0 if score is None else float(score)

    def get_metrics(self) -> dict[str, Any]:
        """The episode's exact ``score`` and ``passed``, its ``turns``; ``score_error`` (1) where
        the verifier gave no score (the reward's 0 is then that, not a part scored 0)."""
        metrics = {"score": self._score(), "passed": float(bool(self.report.get("passed")))}
        metrics["turns"] = self.turns
        if self.report and self.report.get("score") is None:
            metrics["score_error"] = 1.0
        return metrics

    def close(self) -> None:
        self.env.close()


def skyrl_dataset(
    suite: str, split: str = "train", *, env_id: str = DEFAULT_ENV, **env_kwargs: Any
) -> list[dict[str, Any]]:
    """SkyRL's dataset rows for a suite's split: ``prompt`` (the env's system message and the
    task's prompt), ``env_class`` (``"toolgym"``), ``extra_info`` (the task's id)."""
    env = gym.make(env_id, suite=suite, split=split, **env_kwargs)
    try:
        system = system_message(env)
        code = env.unwrapped.action_mode == "code"
        names = ", ".join(t["function"]["name"] for t in tools_for(env))
    finally:
        env.close()
    turn = (
        "Each turn, answer with one Python script."
        if code
        else 'Each turn, answer with one tool call as JSON: {"name": ..., "arguments": {...}}. '
        f"Tools: {names}."
    )
    system = {**system, "content": f"{system['content']} {turn}"}
    return [
        {
            "data_source": f"toolgym/{suite}",
            "prompt": [system, {"role": "user", "content": task.prompt}],
            "env_class": ENV_CLASS,
            "extra_info": {"task": task.id},
        }
        for task in get_suite(suite).split(split)
    ]


if ENV_CLASS not in skyrl_gym.envs.registration.registry:
    skyrl_gym.register(id=ENV_CLASS, entry_point=ToolgymTextEnv)
