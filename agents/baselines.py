"""Baseline agents: random actions, the oracle that replays the reference, and a fixed rule
that copies the prompt's numbers in order.

Both see only the observation and the action space, except the oracle, which is handed the task
(it exists to prove that tasks, sandbox and verifier agree: it must score ≥ 0.99 everywhere).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from toolgym.envs.domains import get_domain
from toolgym.envs.tools import ToolRegistry


def _code_call(domain: str) -> tuple[str, str | None]:
    """How a script calls a tool in ``domain`` (``Domain.code_call``): what the result is
    assigned to, and the first argument; a registry of no one tool's (a mix) calls plainly."""
    try:
        return get_domain(domain).code_call or ("", None)
    except KeyError:
        return "", None


class RandomAgent:
    """Uniformly random tool calls within each parameter's range, on its grid (``step``;
    whole numbers for integer parameters); code mode: the same call written as a script."""

    def __init__(self, registry: ToolRegistry, action_mode: str, seed: int = 0) -> None:
        self.registry, self.action_mode = registry, action_mode
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        name = sorted(self.registry.tools)[int(self.rng.integers(len(self.registry.tools)))]
        grammar = self.registry.grammar()[name]["params"]
        arguments: dict[str, Any] = {}
        names = _names(str(observation.get("prompt", "")))
        for param, spec in grammar.items():
            if spec["choices"]:
                arguments[param] = spec["choices"][int(self.rng.integers(len(spec["choices"])))]
            elif spec["kind"] == "string":  # a name: one the prompt mentions, or a new one
                arguments[param] = names[int(self.rng.integers(len(names)))]
            elif spec["kind"] == "points":
                arguments[param] = self.rng.uniform(0, 20, (4, 2)).round(1).tolist()
            else:
                arguments[param] = self._number(spec)
        if self.action_mode == "tool":
            return json.dumps({"name": name, "arguments": arguments})
        assign, first = _code_call(self.registry.domain)
        args = [first] if first else []
        args += [f"{k}={v!r}" for k, v in arguments.items()]
        return f"{assign}tools.{name}({', '.join(args)})\n"

    def _number(self, spec: dict[str, Any]) -> float | int:
        """A uniform value in the range (clipped to +-30 where it reaches past, as a length's
        does; a range wholly outside it, kelvin say, as it is), snapped to the parameter's grid."""
        low = -30.0 if spec["min"] is None else float(spec["min"])
        high = 30.0 if spec["max"] is None else float(spec["max"])
        if max(low, -30.0) <= min(high, 30.0):
            low, high = max(low, -30.0), min(high, 30.0)
        step = spec["step"] or 0.1
        snapped = min(max(round(self.rng.uniform(low, high) / step) * step, low), high)
        if spec["kind"] == "integer":
            return int(np.clip(round(snapped), math.ceil(low), math.floor(high)))
        return round(float(snapped), 6)


def _names(prompt: str) -> list[str]:
    """Capitalised words of a prompt (object names, mostly), and one new name."""
    return [*sorted(set(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", prompt))), "Thing"]


class OracleAgent:
    """Replays the task's reference: in code mode its program in one step; in tool mode its
    tool calls (``Task.tool_calls``), one per step."""

    def __init__(self, action_mode: str = "code") -> None:
        self.action_mode = action_mode
        self._task: Any = None
        self._next = 0

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        if task is None:
            raise ValueError("the oracle needs the task")
        if self.action_mode == "code":
            return task.reference
        if not task.tool_calls:
            raise ValueError(f"{task.id} has no tool calls; run the oracle in code mode")
        if task is not self._task or int(observation.get("step", 0)) == 0:
            self._task, self._next = task, 0
        call = task.tool_calls[min(self._next, len(task.tool_calls) - 1)]
        self._next += 1
        return call


class CopyInOrderAgent:
    """A fixed rule with nothing learnt, the floor a learner must clear: the tool whose number
    of numeric parameters is the count of numbers in the prompt (else the one with the most the
    prompt can fill), its parameters filled with the prompt's numbers in the order they are
    written (read as the bundled policy reads them: digits or words, cm in mm). Tool mode only.
    On the primitives' described prompts it writes the reference call for every task."""

    def __init__(self, registry: ToolRegistry, tools: list[str] | None = None) -> None:
        grammar = registry.grammar()
        self.numeric = {
            name: [
                p
                for p, spec in grammar[name]["params"].items()
                if spec["kind"] in ("number", "integer")
            ]
            for name in (tools or list(registry.tools))
        }

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        from toolgym.agents.trainer.observations import prompt_numbers

        numbers, at = prompt_numbers([str(observation.get("prompt", ""))], 4096, 64)
        found = [float(n) for n, i in zip(numbers[0], at[0], strict=True) if i >= 0]
        name = next((n for n, ps in self.numeric.items() if len(ps) == len(found)), None)
        fits = [n for n, ps in self.numeric.items() if len(ps) <= len(found)]
        name = name or max(fits or self.numeric, key=lambda n: len(self.numeric[n]))
        arguments = dict(zip(self.numeric[name], found, strict=False))
        return json.dumps({"name": name, "arguments": arguments})


AGENTS = {"random": RandomAgent, "oracle": OracleAgent}
