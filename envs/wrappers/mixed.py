"""Several tools in one environment, for training one policy across them.

A *mix* names a suite per tool (:func:`parse_mix`):
``"cadquery:primitives,blender:blender-placement,scene:scene-layout"``. :class:`MixedEnv` holds
one environment per tool of the mix, in tool mode, and plays each episode on the tool of its
task, so a vector env's worker can play any tool and a sampler over every task of every tool
decides how often each tool is played.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from toolgym.envs.domains import get_domain
from toolgym.envs.registration import domain_names
from toolgym.envs.tasks.suites import get_suite, suites

Mix = tuple[tuple[str, str], ...]  # (tool, suite) pairs


def parse_mix(mix: str | Sequence[tuple[str, str]]) -> Mix:
    """``"tool:suite,tool:suite"`` (or pairs) as ``((tool, suite), ...)``. Raises ``ValueError``
    in one line naming the known tools, or the tool's suites, for an empty mix, an unknown tool,
    a suite of another tool, or a tool named twice."""
    tools = ", ".join(domain_names())
    if isinstance(mix, str):
        items = [item.strip() for item in mix.split(",") if item.strip()]
        pairs = [tuple(part.strip() for part in item.partition(":")[::2]) for item in items]
    else:
        pairs = [tuple(pair) for pair in mix]
    if not pairs:
        raise ValueError(f"the mix is empty; give tool:suite pairs; known tools: {tools}")
    seen = set()
    for tool, suite in pairs:
        if tool not in domain_names():
            raise ValueError(f"unknown tool {tool!r} in the mix; known tools: {tools}")
        own = sorted(name for name, s in suites().items() if s.domain == tool)
        if suite not in own:
            raise ValueError(f"unknown {tool} suite {suite!r} in the mix; known: {', '.join(own)}")
        if tool in seen:
            raise ValueError(f"{tool} is named twice in the mix; give one suite per tool")
        seen.add(tool)
    return tuple(pairs)  # type: ignore[return-value]


def mix_text(mix: Mix) -> str:
    return ",".join(f"{tool}:{suite}" for tool, suite in mix)


def tool_of_task(mix: Mix) -> dict[str, str]:
    """Each suite of the mix to its tool (a task's suite is the first part of its id)."""
    return {suite: tool for tool, suite in mix}


class MixedEnv(gym.Env[dict[str, Any], str]):
    """One environment per tool of a mix, in tool mode; each episode on its task's tool.

    - **Actions**: a tool call, as the tool's own env takes it; the tool's name may carry the
      tool as a prefix (``"blender.set_location"``), as the mixed grammar writes it. A prefix of
      another tool is sent as it is, and the env answers with its failed step.
    - **Observations**: the tools' own (``prompt``, ``feedback``, ``step``), with ``image`` and
      ``target`` resized (nearest pixel) to ``2·view_size`` square, and ``tool``: the index of the
      episode's tool in the mix.
    - **Reset**: ``options={"task": id}`` plays that task (on its tool); without it a tool is
      drawn uniformly and its env draws the task.
    - **info**: the tool's env's, with ``tool``.

    Args:
        mix: see :func:`parse_mix`.
        view_size: pixels per view of each tool's env.
        max_steps: calls per episode: one number for every tool, or one per tool (a mapping
            from tool to calls; a tool it leaves out gets its env's default).
        **env_kwargs: for every tool's env (``split``, ``final_tier`` ...).
    """

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium API

    def __init__(
        self,
        mix: str | Sequence[tuple[str, str]],
        view_size: int = 32,
        max_steps: int | Mapping[str, int] | None = None,
        **env_kwargs: Any,
    ) -> None:
        self.mix = parse_mix(mix)
        self.tools = [tool for tool, _ in self.mix]
        self.suite_tool = tool_of_task(self.mix)
        if not isinstance(max_steps, Mapping):
            max_steps = dict.fromkeys(self.tools, max_steps)
        self.envs = {
            tool: gym.make(
                get_domain(tool).env_id,
                suite=suite,
                action_mode="tool",
                view_size=view_size,
                **env_kwargs,
                **({"max_steps": max_steps[tool]} if max_steps.get(tool) else {}),
            )
            for tool, suite in self.mix
        }
        first = next(iter(self.envs.values()))
        self.size = 2 * view_size
        image = spaces.Box(0, 255, (self.size, self.size, 3), np.uint8)
        inner = first.observation_space
        self.observation_space = spaces.Dict(
            {
                "image": image,
                "target": image,
                "prompt": inner["prompt"],
                "feedback": inner["feedback"],
                "step": max(
                    (env.observation_space["step"] for env in self.envs.values()),
                    key=lambda space: space.n,
                ),
                "tool": spaces.Discrete(len(self.tools)),
            }
        )
        self.action_space = first.action_space
        self.tool = self.tools[0]

    @property
    def current(self) -> gym.Env:
        return self.envs[self.tool]

    @property
    def task(self) -> Any:
        return self.current.unwrapped.task

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if "task" in options:
            suite = str(options["task"]).split("/", 1)[0]
            if suite not in self.suite_tool:
                known = ", ".join(self.suite_tool)
                raise ValueError(
                    f"task {options['task']!r} is in none of the mix's suites: {known}"
                )
            self.tool = self.suite_tool[suite]
        else:
            self.tool = self.tools[int(self.np_random.integers(len(self.tools)))]
        observation, info = self.current.reset(seed=seed, options=options)
        return self._observe(observation), {**info, "tool": self.tool}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.current.step(self._own(action))
        return (
            self._observe(observation),
            reward,
            terminated,
            truncated,
            {**info, "tool": self.tool},
        )

    def _own(self, action: Any) -> Any:
        """The call with this tool's prefix taken off its name."""
        call = action
        if isinstance(call, str):
            try:
                call = json.loads(call)
            except ValueError:
                return action
        prefix = f"{self.tool}."
        if isinstance(call, dict) and str(call.get("name", "")).startswith(prefix):
            return {**call, "name": call["name"][len(prefix) :]}
        return action

    def _observe(self, observation: dict[str, Any]) -> dict[str, Any]:
        return {
            **observation,
            "image": self._resize(observation["image"]),
            "target": self._resize(observation["target"]),
            "tool": self.tools.index(self.tool),
        }

    def _resize(self, image: np.ndarray) -> np.ndarray:
        rows = np.arange(self.size) * image.shape[0] // self.size
        columns = np.arange(self.size) * image.shape[1] // self.size
        return np.ascontiguousarray(image[rows][:, columns])

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


def mixed_tasks(mix: Mix, split: str) -> list[Any]:
    """The tasks of a split of every suite of the mix, taking turns between the tools (so the
    first few tasks, as a demonstration or evaluation queue takes them, span every tool)."""
    per_tool = [get_suite(suite).split(split) for _, suite in mix]
    turns = itertools.zip_longest(*per_tool)
    return [task for turn in turns for task in turn if task is not None]
