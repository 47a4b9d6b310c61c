"""The ``look`` call: a closer view of a region, in every environment whose views can be
reframed.

A task's views share one fixed frame, so a small feature is a few pixels: 3.45 mm a pixel in
the CadQuery primitives' frame at 64 px, where the exact tier pays for 0.5 mm. The call

    {"name": "look", "arguments": {"center": [x, y, z], "zoom": 4}}

frames every view, the agent's and the target's alike, on ``center`` (in the tool's unit; by
default the frame's centre) at ``zoom`` times the task's magnification (1 to :data:`MAX_ZOOM`,
by default 1), from that step until the next look; ``{"name": "look"}`` goes back to the
task's own frame. It is accepted in both action modes (as a dict or JSON text; a script that
is only this JSON would do nothing). A look runs nothing in the sandbox and changes nothing:
it costs a step (it counts against ``max_steps``) and earns no reward. A malformed look is a
failed step, with the usual penalty; so is a look in a task whose views cannot be reframed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from toolgym.envs.episode.calls import named_call

LOOK_CALL = "look"
MAX_ZOOM = 16.0  # a 64-px view then shows a sixteenth of the task's frame at the same pixels
AXES = "xyz"


class LookError(ValueError):
    """A look that cannot be made: one line, in the tool's terms."""


@dataclass(frozen=True)
class ViewBox:
    """Where a look may centre: the task's frame, ``low`` to ``high`` per axis, in ``unit``."""

    low: tuple[float, ...]
    high: tuple[float, ...]
    unit: str


@dataclass(frozen=True)
class View:
    """A reframing of every view: its centre (the box's unit) and its zoom (1: the task's)."""

    center: tuple[float, ...]
    zoom: float

    def describe(self, unit: str) -> str:
        where = ", ".join(f"{c:g}" for c in self.center)
        return f"views centred on ({where}) {unit}, zoom {self.zoom:g}"


def look_arguments(action: Any, max_chars: int) -> tuple[bool, Any]:
    """``(True, arguments)`` when ``action`` is a look call (a dict, or JSON text of at most
    ``max_chars`` characters, named ``look``; arguments ``{}`` when it has none), else
    ``(False, None)``."""
    call = named_call(action, LOOK_CALL, max_chars)
    if call is None:
        return False, None
    arguments = call.get("arguments")
    return True, {} if arguments is None else arguments


def read_view(arguments: Any, box: ViewBox) -> View | None:
    """The view a look's ``arguments`` ask for (``None``: the task's own frame), checked against
    ``box``; :class:`LookError` says what is wrong."""
    if isinstance(arguments, str | bytes):  # function-calling APIs send arguments as JSON text
        try:
            arguments = json.loads(arguments or "{}")
        except RecursionError:
            raise LookError("look: the arguments are nested too deep") from None
        except ValueError as exc:
            raise LookError(f"look: the arguments are not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise LookError('look: the arguments must be an object, {"center": [...], "zoom": 4}')
    unknown = sorted(set(arguments) - {"center", "zoom"})
    if unknown:
        raise LookError(f"look: unknown argument {unknown[0]!r}; it takes center and zoom")
    if not arguments:
        return None
    axes = len(box.low)
    names = ", ".join(AXES[:axes])
    middle = [(low + high) / 2 for low, high in zip(box.low, box.high, strict=True)]
    center = arguments.get("center", middle)  # no centre: the task's frame's
    if (
        not isinstance(center, list | tuple)
        or len(center) != axes
        or not all(_is_number(c) for c in center)
    ):
        raise LookError(f"look: center must be {axes} numbers ({names}, in {box.unit})")
    for axis, (c, low, high) in enumerate(zip(center, box.low, box.high, strict=True)):
        if not low <= c <= high:
            raise LookError(
                f"look: center {AXES[axis]} = {c:g} {box.unit} is outside the task's frame "
                f"({low:g} to {high:g} {box.unit})"
            )
    zoom = arguments.get("zoom", 1)
    if not _is_number(zoom) or not 1 <= zoom <= MAX_ZOOM:
        raise LookError(f"look: zoom must be a number from 1 to {MAX_ZOOM:g}")
    return View(tuple(float(c) for c in center), float(zoom))


def look_schema(axes: int, unit: str) -> dict[str, Any]:
    """The look call as an OpenAI-style function: a centre of ``axes`` numbers in ``unit``."""
    center = {
        "type": "array",
        "items": {"type": "number"},
        "minItems": axes,
        "maxItems": axes,
        "description": f"the point to look at: {', '.join(AXES[:axes])} in {unit}",
    }
    zoom = {"type": "number", "minimum": 1, "maximum": MAX_ZOOM, "description": "magnification"}
    return {
        "type": "function",
        "function": {
            "name": LOOK_CALL,
            "description": "Frame every view, yours and the target's, on a point at a zoom "
            "until the next look; no arguments: back to the task's frame. Changes nothing, "
            "costs a step.",
            "parameters": {
                "type": "object",
                "properties": {"center": center, "zoom": zoom},
                "additionalProperties": False,
            },
        },
    }


def _is_number(value: Any) -> bool:
    """A real number: a finite float, or an int a float can hold (JSON's 400-digit ints are
    neither); not a bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 1e300  # exact: an int compares with a float without converting
    return isinstance(value, float) and math.isfinite(value)
