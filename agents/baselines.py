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
from toolgym.envs.episode.loop import STOP_CALL
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


class OneCall:
    """A rule with one thing to say (the copy and keyword rules): its call, then the stop call."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        if int(observation.get("step", 0)) > 0:
            return json.dumps({"name": STOP_CALL})
        return self.agent.act(observation, task)


# Words that name a parameter in a request, by the parameter's name (the name itself, and its
# words split at "_", always count too).
PARAMETER_WORDS = {
    "length": ("long", "length", "len"),
    "width": ("wide", "width", "broad"),
    "height": ("tall", "high", "height"),
    "depth": ("deep", "depth"),
    "thickness": ("thick", "thickness"),
    "diameter": ("diameter", "across", "dia", "ø", "bore"),
    "radius": ("radius",),
    "angle": ("angle", "degrees", "°", "deg"),
    "count": ("count", "number", "times"),
}
# Words that name what a tool makes, by the word in the tool's name.
TOOL_WORDS = {
    "box": ("box", "block", "cube", "cuboid", "brick", "billet", "slab"),
    "cylinder": ("cylinder", "rod", "post", "disc", "disk", "puck", "pin"),
    "sphere": ("sphere", "ball", "globe"),
}
# Lengths in metres per unit word; a tool's lengths are in its domain's unit (CAD: mm).
UNIT_METRES = {
    "mm": 0.001, "millimetres": 0.001, "millimeters": 0.001, "cm": 0.01, "centimetres": 0.01,
    "centimeters": 0.01, "m": 1.0, "metres": 1.0, "meters": 1.0, "in": 0.0254, "inch": 0.0254,
    "inches": 0.0254, '"': 0.0254, "ft": 0.3048, "feet": 0.3048, "foot": 0.3048,
}  # fmt: skip
DOMAIN_UNIT_METRES = {"cadquery": 0.001}  # others: metres
_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[A-Za-zø°\"]+|[(),=]")


class KeywordAgent:
    """The fixed rule a person writes in an afternoon for text requests, with nothing learnt:
    the tool whose name's words the request uses most (ties: the one whose numeric parameters
    the request's numbers fill best), each number parameter from the number whose neighbouring
    words name it (``PARAMETER_WORDS``; "radius" doubles into a diameter), lengths converted to
    the domain's unit, the rest of the numbers in the order written. Played as one call, then
    stop: :class:`OneCall`. ``tools``: the tools it picks among (default: every tool)."""

    def __init__(
        self, registry: ToolRegistry, action_mode: str = "tool", tools: list[str] | None = None
    ) -> None:
        self.registry, self.action_mode = registry, action_mode
        self.tools = sorted(tools or registry.tools)
        self.grammar = registry.grammar()
        self.metres = DOMAIN_UNIT_METRES.get(registry.domain, 1.0)

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        prompt = str(observation.get("prompt", ""))
        numbers = read_numbers(prompt, self.metres)
        name = self._tool(prompt.lower(), len(numbers))
        arguments = self._arguments(name, prompt, numbers)
        if self.action_mode == "tool":
            return json.dumps({"name": name, "arguments": arguments})
        assign, first = _code_call(self.registry.domain)
        args = ([first] if first else []) + [f"{k}={v!r}" for k, v in arguments.items()]
        return f"{assign}tools.{name}({', '.join(args)})\n"

    def _tool(self, prompt: str, count: int) -> str:
        words = set(re.findall(r"[a-z]+", prompt))

        def fit(name: str) -> tuple[int, int]:
            parts = [w for w in name.split("_") if len(w) > 2]
            named = sum(bool(words & set(TOOL_WORDS.get(w, (w,)))) for w in parts)
            numeric = [p for p, s in self.grammar[name]["params"].items() if _numeric(s)]
            return named, -abs(len(numeric) - count)

        return max(self.tools, key=fit)

    def _arguments(
        self, name: str, prompt: str, numbers: list[tuple[float, list[str], bool]]
    ) -> dict[str, Any]:
        params = self.grammar[name]["params"]
        arguments: dict[str, Any] = {}
        left = list(range(len(numbers)))
        for param, spec in params.items():  # first: numbers whose words name the parameter
            if not _numeric(spec):
                continue
            for k in left:
                value, near, _ = numbers[k]
                named = _names_parameter(param, near)
                if named:
                    arguments[param] = value * (2 if named == "radius" else 1)
                    left.remove(k)
                    break
        for param, spec in params.items():  # then the rest, in the order written
            if _numeric(spec) and param not in arguments and left:
                arguments[param] = numbers[left.pop(0)][0]
            elif spec["choices"] and param not in arguments:
                arguments[param] = _choice(spec["choices"], prompt, spec.get("default"))
            elif spec["kind"] == "string" and param not in arguments:
                arguments[param] = _names(prompt)[0]
        for param, spec in params.items():  # within each parameter's range
            if _numeric(spec) and param in arguments:
                value = float(arguments[param])
                low, high = spec["min"], spec["max"]
                value = max(value, low) if low is not None else value
                value = min(value, high) if high is not None else value
                arguments[param] = round(value) if spec["kind"] == "integer" else value
        return arguments


def read_numbers(prompt: str, metres: float = 0.001) -> list[tuple[float, list[str], bool]]:
    """Each number of a request: its value (lengths in a unit of ``metres``: CAD's mm by
    default), the words that may name it (the two after it and its unit, then the two before
    it: "20 mm in diameter", "26 mm tall", "diameter 20", "x = 5"; never across another number
    or a comma), and whether a length unit followed. A unit after a run of numbers ("10 × 14 ×
    11.5 cm", "(18, 6.5, 1.5) cm") is each one's."""
    tokens = [t.lower() for t in _TOKEN.findall(_digits(prompt))]
    found = []
    for k, token in enumerate(tokens):
        if not _NUMBER.fullmatch(token):
            continue
        after = tokens[k + 1] if k + 1 < len(tokens) else ""
        value, unit = float(token), UNIT_METRES.get(after)
        shared = UNIT_METRES.get(_after_run(tokens, k))
        if unit is not None or shared is not None:
            value = value * (unit or shared) / metres
        start = k + 2 if unit is not None else k + 1
        near = _words(tokens[start : start + 2]) + _words(tokens[max(0, k - 2) : k][::-1])
        found.append((round(value, 6), near, unit is not None))
    return found


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _digits(prompt: str) -> str:
    """``prompt`` with each number written in words before a length unit ("twenty-six mm") in
    digits, as the trainer's number reader reads them."""
    from toolgym.agents.trainer.observations import NUMBERS, word_value

    data = prompt.encode("utf-8", "replace")

    def digits(match: re.Match[bytes]) -> bytes:
        word = match.group("word")
        return match.group(0) if word is None else f"{word_value(word):g}".encode()

    return NUMBERS.sub(digits, data).decode("utf-8", "replace")


def _after_run(tokens: list[str], k: int) -> str:
    """The token after the run of numbers that ``tokens[k]`` is in (numbers joined by commas,
    "by" or "x" and closed by a bracket), or "" where the number stands alone."""
    end = k + 1
    while end < len(tokens) and (
        _NUMBER.fullmatch(tokens[end]) or tokens[end] in (",", ")", "by", "x")
    ):
        end += 1
    joined = any(_NUMBER.fullmatch(t) for t in tokens[k + 1 : end]) or ")" in tokens[k + 1 : end]
    return tokens[end] if joined and end < len(tokens) else ""


def _words(tokens: list[str]) -> list[str]:
    """``tokens`` up to the first number or comma, without "=", "(", ")" and "of"."""
    kept = []
    for token in tokens:
        if token == "," or _NUMBER.fullmatch(token):
            break
        if token not in ("=", "(", ")", "of", "in"):
            kept.append(token)
    return kept


def _choice(choices: list[Any], prompt: str, default: Any = None) -> Any:
    """The choice named after "along" or "axis", else the parameter's default, else the first
    named as a word, else the first choice."""
    text = prompt.lower()
    for choice in choices:
        if re.search(rf"\b(?:along|axis)\s+{re.escape(str(choice).lower())}\b", text):
            return choice
    if default is not None:
        return default
    named = [c for c in choices if re.search(rf"\b{re.escape(str(c).lower())}\b", text)]
    return (named or choices)[0]


def _numeric(spec: dict[str, Any]) -> bool:
    return spec["kind"] in ("number", "integer") and not spec["choices"]


def _names_parameter(param: str, near: list[str]) -> str | None:
    """Which word near a number names ``param`` (``"radius"`` for a diameter given as one)."""
    words = set(PARAMETER_WORDS.get(param, ())) | {param, *param.split("_")}
    if param.endswith("diameter") and "radius" in near:
        return "radius"
    return next((w for w in near if w in words and len(w) > 0), None)


AGENTS = {"random": RandomAgent, "oracle": OracleAgent}
