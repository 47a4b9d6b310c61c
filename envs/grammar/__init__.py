"""The discrete action grammar of tool calls: the tables a registry's ranges make, the values
derived from a step's context, and the vocabulary a suite's reference calls span."""

from toolgym.envs.grammar.tables import (
    CATALOGUE,
    DEFAULT_MAX_BINS,
    PAD,
    STOP,
    STOP_TOOL,
    CallContext,
    Derived,
    DerivedValueError,
    EpisodeContexts,
    Grammar,
    Slot,
    derivation,
    suite_derived,
    suite_ranges,
    suite_tools,
    text_choices,
    usable_tools,
)

__all__ = [
    "CATALOGUE",
    "DEFAULT_MAX_BINS",
    "PAD",
    "STOP",
    "STOP_TOOL",
    "CallContext",
    "Derived",
    "DerivedValueError",
    "EpisodeContexts",
    "Grammar",
    "Slot",
    "derivation",
    "suite_derived",
    "suite_ranges",
    "suite_tools",
    "text_choices",
    "usable_tools",
]
