"""One tool registry, three faces: sandbox callables, function-calling schemas, grammar metadata.

A tool is a typed Python function ``fn(part, **params) -> part`` with a docstring. Parameters are
annotated with :class:`Param` for units, ranges, step sizes and choices::

    @registry.tool
    def add_box(
        part: Any,
        length: Annotated[float, Param("mm", 0.5, 500, 0.5)],
        ...
    ) -> Any:
        \"\"\"Add a box centred at (x, y, z), fused with the part.

        Args:
            length: size along X.
        \"\"\"

From that single definition come: the callable itself (inside the sandbox, for code actions and
tool calls); an OpenAI-style function-calling schema (:meth:`ToolRegistry.json_schemas`); and
metadata a trainer can turn into a discrete grammar (:meth:`ToolRegistry.grammar`). Calls are
validated against the same definition (:meth:`ToolRegistry.parse_call`, and the callable itself
for code actions) with errors that say which tool and parameter is wrong. A tool that fails inside
the underlying library raises :class:`ToolCallError` with one line in the tool's terms (its
``failure`` text), never the library's internal traceback.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import numbers
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any

MAX_LIST_LENGTH = 256


class ToolCallError(ValueError):
    """A tool call that cannot be applied: malformed, unknown tool, or bad parameters."""


@dataclasses.dataclass(frozen=True)
class Param:
    """Constraints of one parameter.

    Attributes:
        unit: ``"mm"``, ``"deg"``, or ``None`` for unitless values.
        min, max: inclusive bounds for numbers (and for each number inside a list).
        step: the grid a discrete grammar should use for this parameter.
        choices: allowed values for strings.
    """

    unit: str | None = None
    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str  # "number", "integer", "string", "points" (list of [a, b] pairs)
    required: bool
    default: Any
    constraint: Param
    description: str


@dataclasses.dataclass(frozen=True)
class Tool:
    name: str
    description: str
    function: Callable[..., Any]
    params: tuple[ParamSpec, ...]
    needs_part: bool  # applies to an existing part (fillet, shell) rather than creating one
    # Checks across parameters (``arguments -> message or None``), run before the tool is.
    check: Callable[[dict[str, Any]], str | None] | None = None
    # What it means when the library fails, formatted with the arguments ("radius {radius:g} mm
    # is too large for this part's edges").
    failure: str | None = None


_KINDS = {float: "number", int: "integer", str: "string", list[list[float]]: "points"}


def _arg_docs(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    section = doc.split("Args:", 1)[1] if "Args:" in doc else ""
    for match in re.finditer(r"^\s{4,}(\w+):\s*(.+?)(?=^\s{4,}\w+:|\Z)", section, re.M | re.S):
        found[match[1]] = " ".join(match[2].split())
    return found


class ToolRegistry:
    """Tools of one domain, by name.

    ``check_part(part)`` returns why a value cannot be the part a tool works on, or ``None``.
    """

    def __init__(self, domain: str, check_part: Callable[[Any], str | None] | None = None) -> None:
        self.domain = domain
        self.check_part = check_part
        self.tools: dict[str, Tool] = {}

    def tool(
        self,
        function: Callable[..., Any] | None = None,
        *,
        needs_part: bool = False,
        check: Callable[[dict[str, Any]], str | None] | None = None,
        failure: str | None = None,
    ) -> Any:
        """Decorator that registers ``function`` as a tool; see :class:`Tool` for ``check`` and
        ``failure``. The registered callable validates its arguments as tool calls are."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            doc = inspect.getdoc(fn) or ""
            hints = typing.get_type_hints(fn, include_extras=True)
            docs = _arg_docs(doc)
            params = []
            for name, parameter in list(inspect.signature(fn).parameters.items())[1:]:
                hint = hints[name]
                base, constraint = hint, Param()
                if typing.get_origin(hint) is Annotated:
                    base, *extras = typing.get_args(hint)
                    constraint = next((e for e in extras if isinstance(e, Param)), Param())
                required = parameter.default is inspect.Parameter.empty
                params.append(
                    ParamSpec(
                        name,
                        _KINDS[base],
                        required,
                        None if required else parameter.default,
                        constraint,
                        docs.get(name, ""),
                    )
                )
            summary = doc.split("\n\n", 1)[0].replace("\n", " ")
            tool = Tool(fn.__name__, summary, fn, tuple(params), needs_part, check, failure)
            guarded = self._guarded(tool)
            self.tools[fn.__name__] = dataclasses.replace(tool, function=guarded)
            return guarded

        return register(function) if function is not None else register

    # -- faces ------------------------------------------------------------------------------
    def json_schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style function-calling tool schemas."""
        return [self._schema(tool) for tool in self.tools.values()]

    def _schema(self, tool: Tool) -> dict[str, Any]:
        properties = {}
        for p in tool.params:
            prop: dict[str, Any]
            c = p.constraint
            if p.kind == "points":
                item: dict[str, Any] = {"type": "number"}
                prop = {
                    "type": "array",
                    "items": {"type": "array", "items": item, "minItems": 2, "maxItems": 2},
                }
                prop["minItems"], prop["maxItems"] = 3, MAX_LIST_LENGTH
            else:
                prop = {"type": p.kind}
                item = prop
            if c.min is not None:
                item["minimum"] = c.min
            if c.max is not None:
                item["maximum"] = c.max
            if c.choices:
                prop["enum"] = list(c.choices)
            unit = f" ({c.unit})" if c.unit else ""
            prop["description"] = (p.description.rstrip(".") + unit).strip()
            if not p.required:
                prop["default"] = p.default
            properties[p.name] = prop
        return {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": [p.name for p in tool.params if p.required],
                    "additionalProperties": False,
                },
            },
        }

    def grammar(self) -> dict[str, Any]:
        """Metadata for a discrete action grammar: per tool, which parameters it takes, with type,
        unit, range, step, choices and default; and whether it needs an existing part."""
        return {
            name: {
                "needs_part": tool.needs_part,
                "params": {
                    p.name: {
                        "kind": p.kind,
                        "unit": p.constraint.unit,
                        "min": p.constraint.min,
                        "max": p.constraint.max,
                        "step": p.constraint.step,
                        "choices": list(p.constraint.choices) if p.constraint.choices else None,
                        "required": p.required,
                        "default": p.default,
                    }
                    for p in tool.params
                },
            }
            for name, tool in self.tools.items()
        }

    # -- calls ------------------------------------------------------------------------------
    def parse_call(self, call: Any) -> tuple[Tool, dict[str, Any]]:
        """Validate a call: a dict or JSON text ``{"name": ..., "arguments": {...}}`` (arguments
        may also be JSON text, as function-calling APIs send them). Returns the tool and arguments
        with defaults filled in; raises :class:`ToolCallError` saying what is wrong."""
        if isinstance(call, str | bytes):
            try:
                call = json.loads(call)
            except (ValueError, UnicodeDecodeError) as exc:
                raise ToolCallError(f"the tool call is not valid JSON: {exc}") from None
        if not isinstance(call, dict):
            raise ToolCallError(f"a tool call must be an object, got {type(call).__name__}")
        if "function" in call and isinstance(call["function"], dict):
            call = call["function"]  # the OpenAI envelope
        name, arguments = call.get("name"), call.get("arguments", {})
        if name not in self.tools:
            known = ", ".join(sorted(self.tools))
            raise ToolCallError(f"unknown tool {name!r}; known tools: {known}")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ToolCallError(f"{name}: arguments are not valid JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise ToolCallError(f"{name}: arguments must be an object")
        tool = self.tools[name]
        return tool, self._arguments(tool, arguments)

    def _arguments(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` checked one by one and together, with defaults filled in."""
        unknown = sorted(set(arguments) - {p.name for p in tool.params})
        if unknown:
            takes = [p.name for p in tool.params]
            raise ToolCallError(f"{tool.name}: unknown parameter(s) {unknown}; takes {takes}")
        checked = {p.name: self._check(tool, p, arguments) for p in tool.params}
        problem = tool.check(checked) if tool.check else None
        if problem:
            raise ToolCallError(f"{tool.name}: {problem}")
        return checked

    def _check(self, tool: Tool, p: ParamSpec, arguments: dict[str, Any]) -> Any:
        where = f"{tool.name}: parameter {p.name!r}"
        if p.name not in arguments:
            if p.required:
                raise ToolCallError(f"{where} is missing")
            return p.default
        value, c = arguments[p.name], p.constraint
        if p.kind == "string":
            if not isinstance(value, str) or (c.choices and value not in c.choices):
                raise ToolCallError(
                    f"{where} must be one of {list(c.choices or ())}, got {value!r}"
                )
            return value
        if p.kind == "points":
            ok = isinstance(value, list | tuple) and 3 <= len(value) <= MAX_LIST_LENGTH
            if not ok or not all(isinstance(pt, list | tuple) and len(pt) == 2 for pt in value):
                raise ToolCallError(
                    f"{where} must be a list of 3 to {MAX_LIST_LENGTH} [a, b] pairs"
                )
            return [[self._number(where, v, c) for v in pt] for pt in value]
        number = self._number(where, value, c)
        if p.kind == "integer":
            if number != int(number):
                raise ToolCallError(f"{where} must be an integer, got {value!r}")
            return int(number)
        return number

    @staticmethod
    def _number(where: str, value: Any, c: Param) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)  # numpy numbers too, from scripts
            or not math.isfinite(value)
        ):
            raise ToolCallError(f"{where} must be a finite number, got {value!r}")
        unit = f" {c.unit}" if c.unit else ""
        if (c.min is not None and value < c.min) or (c.max is not None and value > c.max):
            raise ToolCallError(f"{where} = {value}{unit} is out of range [{c.min}, {c.max}]{unit}")
        return float(value)

    def apply(self, part: Any, call: Any) -> Any:
        """Validate ``call`` and apply it to ``part``; returns the new part."""
        tool, arguments = self.parse_call(call)
        return tool.function(part, **arguments)

    def _guarded(self, tool: Tool) -> Callable[..., Any]:
        """``tool.function`` that checks its arguments and part first, and turns the library's
        failures into one-line :class:`ToolCallError` messages."""
        fn, signature = tool.function, inspect.signature(tool.function)

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs).arguments
            except TypeError as exc:
                raise ToolCallError(f"{tool.name}: {exc}") from None
            part = bound.pop(next(iter(signature.parameters)), None)
            arguments = self._arguments(tool, bound)
            if part is None and tool.needs_part:
                raise ToolCallError(f"{tool.name} needs an existing part; add one first")
            problem = self.check_part(part) if self.check_part and part is not None else None
            if problem:
                raise ToolCallError(f"{tool.name}: {problem}")
            try:
                return fn(part, **arguments)
            except (ToolCallError, MemoryError, RecursionError):
                raise  # already clear, or a limit the sandbox reports
            except Exception as exc:
                raise ToolCallError(_failure(tool, arguments, exc)) from None

        return guarded


def _failure(tool: Tool, arguments: dict[str, Any], exc: Exception) -> str:
    """One line: the tool's own account of the failure, else the library's first line."""
    if tool.failure:
        return f"{tool.name}: {tool.failure.format(**arguments)}"
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return f"{tool.name}: the operation failed ({type(exc).__name__}: {first})"
