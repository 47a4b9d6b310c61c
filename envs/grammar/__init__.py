"""The discrete action grammar of tool calls: the tables a registry's ranges make (``tables``), the
values derived from a step's context (``derived``), and the vocabulary a suite's reference calls
span (``vocabulary``)."""

from toolgym.envs.grammar.derived import (
    CATALOGUE,
    CallContext,
    Derived,
    DerivedValueError,
    EpisodeContexts,
    derivation,
)
from toolgym.envs.grammar.tables import (
    DEFAULT_MAX_BINS,
    DEFAULT_MAX_POINTS,
    PAD,
    STOP,
    STOP_TOOL,
    Grammar,
    Slot,
)
from toolgym.envs.grammar.vocabulary import (
    ParsedCall,
    SuiteVocabulary,
    parse_calls,
    suite_derived,
    suite_ranges,
    suite_tools,
    text_choices,
    usable_tools,
)

__all__ = [
    "CATALOGUE",
    "DEFAULT_MAX_BINS",
    "DEFAULT_MAX_POINTS",
    "PAD",
    "STOP",
    "STOP_TOOL",
    "CallContext",
    "Derived",
    "DerivedValueError",
    "EpisodeContexts",
    "Grammar",
    "ParsedCall",
    "Slot",
    "SuiteVocabulary",
    "derivation",
    "parse_calls",
    "suite_derived",
    "suite_ranges",
    "suite_tools",
    "text_choices",
    "usable_tools",
]
