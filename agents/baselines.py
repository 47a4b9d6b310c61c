"""Baseline agents: random actions, and the oracle that replays the reference.

Both see only the observation and the action space, except the oracle, which is handed the task
(it exists to prove that tasks, sandbox and verifier agree: it must score ≥ 0.99 everywhere).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from toolgym.envs.tools import ToolRegistry


class RandomAgent:
    """Uniformly random tool calls within each parameter's range (code mode: the same call
    written as a script)."""

    def __init__(self, registry: ToolRegistry, action_mode: str, seed: int = 0) -> None:
        self.registry, self.action_mode = registry, action_mode
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        name = sorted(self.registry.tools)[int(self.rng.integers(len(self.registry.tools)))]
        grammar = self.registry.grammar()[name]["params"]
        arguments = {}
        for param, spec in grammar.items():
            if spec["choices"]:
                arguments[param] = spec["choices"][int(self.rng.integers(len(spec["choices"])))]
            elif spec["kind"] == "points":
                arguments[param] = self.rng.uniform(0, 20, (4, 2)).round(1).tolist()
            else:
                low, high = max(spec["min"], -30.0), min(spec["max"], 30.0)
                arguments[param] = float(np.round(self.rng.uniform(low, high), 1))
        if self.action_mode == "tool":
            return json.dumps({"name": name, "arguments": arguments})
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return f"result = tools.{name}(globals().get('result'), {args})\n"


class OracleAgent:
    """Replays the task's reference: in code mode its program in one step; in tool mode its tool
    calls, one per step (the observation's ``step`` says which; past the last, the last again).

    In tool mode a task whose reference the registry cannot express (``task.tool_calls`` is
    ``None``) raises ``ValueError``.
    """

    def __init__(self, action_mode: str = "code") -> None:
        self.action_mode = action_mode

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        if task is None:
            raise ValueError("the oracle needs the task")
        if self.action_mode == "code":
            return task.reference
        if not task.tool_calls:
            raise ValueError(f"{task.id}: the reference has no tool calls; use code mode")
        return task.tool_calls[min(int(observation["step"]), len(task.tool_calls) - 1)]


AGENTS = {"random": RandomAgent, "oracle": OracleAgent}
