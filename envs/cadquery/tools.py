"""The CadQuery tool set: each operation defined once, as a typed function on the current part.

Every tool takes the current part (a ``cq.Workplane``, or ``None`` before the first one) and
returns the new part. Lengths are in mm, angles in degrees; the world is Z-up. Scripts in the
sandbox reach them as ``tools.add_box(part, ...)``; tool calls apply them to ``result``. The
registry and the first tools are in ``base_tools``, the feature tools (holes by callout, slots,
patterns, sweeps, lofts, mirrors) in ``feature_tools``; importing this module registers all.
"""

from __future__ import annotations

from toolgym.envs.cadquery import feature_tools  # noqa: F401 - registers the feature tools
from toolgym.envs.cadquery.base_tools import registry

__all__ = ["Tools", "registry"]


class Tools:
    """The registry's functions as attributes, for scripts: ``tools.add_box(part, 10, 10, 5)``."""

    def __init__(self) -> None:
        for name, tool in registry.tools.items():
            setattr(self, name, tool.function)

    def __repr__(self) -> str:
        return f"<CadQuery tools: {', '.join(registry.tools)}>"


# The feature tools (holes by callout, slots, patterns, sweeps, lofts ...) register on the same
# registry; importing them here makes every tool present wherever this module is imported.
