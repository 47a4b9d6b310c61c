"""The abacus's one tool."""

from __future__ import annotations

from typing import Annotated, Any

from toolgym.envs.tools import Param, ToolRegistry

RODS = 4
BEADS = 9  # the most beads on a rod

registry = ToolRegistry("abacus")


@registry.tool
def slide(
    rods: Any,
    rod: Annotated[int, Param(None, 0, RODS - 1, 1)],
    beads: Annotated[int, Param(None, 0, BEADS, 1)],
) -> Any:
    """Slide beads up on one rod, so that ``beads`` of them are up.

    Args:
        rod: which rod, from the left.
        beads: how many beads are up afterwards.
    """
    rods = list(rods)
    rods[rod] = beads
    return rods


class Tools:
    """The registry's functions as attributes, for scripts: ``tools.slide(rods, 0, 3)``."""

    def __init__(self) -> None:
        for name, tool in registry.tools.items():
            setattr(self, name, tool.function)
