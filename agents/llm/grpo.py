"""TRL's ``GRPOTrainer`` on toolgym: rewards are episodes' exact scores.

Two doors, after what TRL offers (``pip install trl``; optional):

- **A reward function** (``reward_funcs=[EpisodeReward(...)]``) with :func:`grpo_dataset`: each
  completion is played as one episode of its task (tool mode: one JSON tool call per line; code
  mode: the script), the env ends it, and the reward is the exact verifier's final score. The
  dataset's ``task`` column tells which task each prompt is.
- **An environment** (``environment_factory=environment(...)``): a multi-turn episode in code
  mode, where a tool-calling model calls ``run_code`` as often as the env allows and
  ``get_reward`` is the episode's exact final score (TRL calls it once the rollout ends); with
  ``image_size``, the target's and the part's views as TRL's image content parts.

A score the verifier could not give is ``None`` (TRL leaves that sample out), never a silent 0.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from toolgym.agents.llm.messages import VIEWS, scaled_picture, system_message, tools_for
from toolgym.envs.episode.look import LOOK_CALL
from toolgym.envs.tasks.suites import get_suite

FENCE = re.compile(r"```(?:\w+)?\n(.*?)```", re.S)


def grpo_dataset(
    suite: str,
    split: str = "train",
    *,
    env_id: str = "toolgym/CadQuery-v0",
    conversational: bool = True,
    **env_kwargs: Any,
) -> Any:
    """A ``datasets.Dataset`` with ``prompt`` (the system message and the task's prompt) and
    ``task`` (its id) for every task of ``suite``'s ``split``. Plain-text prompts with
    ``conversational=False`` (a model without a chat template)."""
    from datasets import Dataset

    env = gym.make(env_id, suite=suite, split=split, **env_kwargs)
    try:
        system = system_message(env)["content"] + " " + _answer_format(env)
    finally:
        env.close()
    rows = []
    for task in get_suite(suite).split(split):
        if conversational:
            prompt: Any = [
                {"role": "system", "content": system},
                {"role": "user", "content": task.prompt},
            ]
        else:
            prompt = f"{system}\n\n{task.prompt}\n"
        rows.append({"prompt": prompt, "task": task.id})
    return Dataset.from_list(rows)


def _answer_format(env: gym.Env) -> str:
    if env.unwrapped.action_mode == "code":
        return "Answer with one Python script."
    names = ", ".join(t["function"]["name"] for t in tools_for(env))
    return (
        'Answer with the tool calls, one JSON object per line: {"name": ..., "arguments": '
        f"{{...}}}}. Tools: {names}."
    )


def actions_of(text: str, action_mode: str) -> list[Any]:
    """The actions a completion's text holds: a script (code in a fence, or the whole text),
    or one tool call per line (lines that are not JSON objects are skipped)."""
    if action_mode == "code":
        fenced = FENCE.findall(text)
        return ["\n".join(fenced) if fenced else text]
    actions = []
    for line in text.splitlines():
        line = line.strip().strip("`")
        if line.startswith("{"):
            try:
                call = json.loads(line)
            except ValueError:
                continue
            if isinstance(call, dict):
                actions.append(call)
    return actions


class EpisodeReward:
    """``reward_funcs`` entry: plays each completion as one episode of its row's ``task``.

    Args:
        env_id: the env; ``env_kwargs`` its arguments (``action_mode``, ``max_steps``, ...).
    Each call returns one reward per completion: the exact final score in [0, 1], or ``None``
    where the verifier could not score. ``scores`` keeps every reward given, in order.
    """

    __name__ = "toolgym_score"  # TRL logs a reward under its function's name

    def __init__(self, env_id: str = "toolgym/CadQuery-v0", **env_kwargs: Any) -> None:
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self._env: gym.Env | None = None
        self.scores: list[float | None] = []

    def __call__(
        self, prompts: list[Any], completions: list[Any], task: list[str], **kwargs: Any
    ) -> list[float | None]:
        if self._env is None:
            first = {"task": task[0]} if "suite" not in self.env_kwargs else {}
            self._env = gym.make(self.env_id, **first, **self.env_kwargs)
        rewards = [self.play(_text(c), t) for c, t in zip(completions, task, strict=True)]
        self.scores += rewards
        return rewards

    def play(self, text: str, task: str) -> float | None:
        """One episode of ``task`` with the actions ``text`` holds; its exact final score."""
        assert self._env is not None
        env = self._env
        env.reset(seed=0, options={"task": task})
        info: dict[str, Any] = {}
        for action in actions_of(text, env.unwrapped.action_mode)[: env.unwrapped.max_steps]:
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        else:
            _, info = env.unwrapped.finish()
        score = (info.get("final_report") or {}).get("score")
        return None if score is None else float(score)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def _text(completion: Any) -> str:
    if isinstance(completion, list):  # conversational: the assistant's messages
        return "\n".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


class ToolgymEnvironment:
    """For ``GRPOTrainer(environment_factory=environment(...))``: one code-mode episode per
    rollout; the model calls ``run_code``; ``get_reward`` is the exact final score.

    With ``image_size`` > 0 (for a vision-language model), the views travel as TRL's image
    content parts (``{"type": "image", "image": PIL.Image}``, the longer side ``image_size``
    pixels): ``reset`` adds the target's four views to the prompt, and each ``run_code`` answers
    with the part's views as they are after the script, then the feedback text; ``look``
    (a closer view: ``toolgym.envs.episode.look``) answers with the part's and the target's."""

    def __init__(
        self, env_id: str = "toolgym/CadQuery-v0", image_size: int = 0, **env_kwargs: Any
    ) -> None:
        self.env = gym.make(env_id, **{**env_kwargs, "action_mode": "code"})
        self.image_size = image_size
        self.done, self.report = False, {}

    def reset(self, task: str | None = None, **row: Any) -> str | list[dict[str, Any]]:
        """Start the episode of the row's ``task``; with pictures, the target's views to add
        to the prompt (else nothing)."""
        observation, _ = self.env.reset(seed=0, options={"task": task} if task else None)
        self.done, self.report = False, {}
        if not self.image_size:
            return ""
        return [
            {"type": "text", "text": f"The target, {VIEWS}:"},
            {"type": "image", "image": scaled_picture(observation["target"], self.image_size)},
        ]

    def run_code(self, code: str) -> str | list[dict[str, Any]]:
        """Run a Python script in the tool's sandbox session; variables persist between calls.

        Args:
            code: The script (CadQuery: `cq` and `tools` are in scope; bind the part to `result`).

        Returns:
            The tool's output and the verifier's score of the part.
        """
        if self.done:
            return "error: the episode is over"
        observation = self._step(code)
        if not self.image_size:
            return str(observation["feedback"])
        return [
            {"type": "image", "image": scaled_picture(observation["image"], self.image_size)},
            {"type": "text", "text": f"Your part now ({VIEWS}).\n{observation['feedback']}"},
        ]

    def look(self, center: list[float], zoom: float = 1.0) -> str | list[dict[str, Any]]:
        """Frame every view, yours and the target's, on a point at a zoom until the next look.
        Changes nothing, costs a step.

        Args:
            center: The point to look at, in the tool's unit (CadQuery: x, y, z in mm;
                Blender: x, y, z in m; GameScene: x, y on the floor in m).
            zoom: The magnification, 1 to 16 (1: the task's own frame).

        Returns:
            The part's and the target's views so framed, and what the views show.
        """
        if self.done:
            return "error: the episode is over"
        observation = self._step({"name": LOOK_CALL, "arguments": {"center": center, "zoom": zoom}})
        if not self.image_size:
            return str(observation["feedback"])
        return [
            {"type": "image", "image": scaled_picture(observation["image"], self.image_size)},
            {"type": "image", "image": scaled_picture(observation["target"], self.image_size)},
            {
                "type": "text",
                "text": f"Your part, then the target ({VIEWS}).\n{observation['feedback']}",
            },
        ]

    def _step(self, action: Any) -> dict[str, Any]:
        observation, _, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.done, self.report = True, info.get("final_report") or {}
        return observation

    def get_reward(self) -> float | None:
        """The episode's exact final score (the episode ends here if it has not)."""
        if not self.done:
            _, info = self.env.unwrapped.finish()
            self.done, self.report = True, info.get("final_report") or {}
        score = self.report.get("score")
        return None if score is None else float(score)


def environment(env_id: str = "toolgym/CadQuery-v0", **env_kwargs: Any) -> Callable[[], Any]:
    """An ``environment_factory`` for TRL: makes a :class:`ToolgymEnvironment` per rollout."""
    return functools.partial(ToolgymEnvironment, env_id, **env_kwargs)
