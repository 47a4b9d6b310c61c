"""One policy over several tools: a grammar over every tool's calls, and the policy that uses it.

The mixed grammar holds each tool's grammar (its suite's ranges and names, as the trainer builds
it for that tool alone) in one vocabulary: tool names are prefixed with the tool
(``"blender.set_location"``) and each tool's operations are contiguous. The policy is the bundled
one (one encoder of pictures and texts, one decoder, shared by every tool); its first token is
masked to the operations of the episode's tool (``obs["tool"]``), so a call is always one the
tool has.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from toolgym.agents.policy import GrammarMasks, Policy, PolicyConfig
from toolgym.envs.domains import get_domain
from toolgym.envs.grammar import Grammar
from toolgym.envs.tools import ToolRegistry
from toolgym.envs.wrappers.mixed import Mix


def mixed_registry(mix: Mix) -> ToolRegistry:
    """Every tool of the mix's registries, named ``"<tool>.<name>"``."""
    from toolgym.agents.train import env_registry

    registry = ToolRegistry("mixed")
    for tool, suite in mix:
        for name, spec in env_registry(get_domain(tool).env_id, suite).tools.items():
            registry.tools[f"{tool}.{name}"] = dataclasses.replace(spec, name=f"{tool}.{name}")
    return registry


def mixed_grammar(mix: Mix, max_bins: int, all_tools: bool = False) -> tuple[Grammar, np.ndarray]:
    """The mixed grammar and ``op_ranges`` ``(tools, 2)``: each tool's operation tokens
    ``[lo, hi)``, in the mix's order."""
    from toolgym.agents.train import build_grammar

    ranges: dict[str, Any] = {}
    ops: list[str] = []
    counts = []
    for tool, suite in mix:
        own = build_grammar(get_domain(tool).env_id, suite, max_bins, all_tools)
        ranges.update({f"{tool}.{key}": value for key, value in own.ranges.items()})
        ops += [f"{tool}.{op}" for op in own.ops]
        counts.append(len(own.ops))
    grammar = Grammar(mixed_registry(mix), ranges, max_bins=max_bins, tools=ops)
    assert list(grammar.ops) == ops  # each tool's operations contiguous, in the mix's order
    ends = np.cumsum(counts) + grammar.op_start
    return grammar, np.stack([ends - np.asarray(counts), ends], axis=1)


class _ToolMasks(GrammarMasks):
    """The grammar's masks, the first token limited to the operations of each row's tool."""

    op_bounds: torch.Tensor | None = None  # (B, 2), set for one decode

    def allowed(self, prefix: torch.Tensor, t: int) -> torch.Tensor:
        allowed = super().allowed(prefix, t)
        if t == 0 and self.op_bounds is not None:
            lo, hi = self.op_bounds[:, :1], self.op_bounds[:, 1:]
            allowed = allowed & (self.tokens >= lo) & (self.tokens < hi)
        return allowed


class MixedPolicy(Policy):
    """The bundled policy over a mixed grammar; observations carry ``tool`` (see the module
    docstring)."""

    def __init__(
        self, grammar: Grammar, op_ranges: np.ndarray, config: PolicyConfig | None = None
    ) -> None:
        super().__init__(grammar, config)
        self.masks = _ToolMasks(grammar)
        self.register_buffer("op_ranges", torch.as_tensor(op_ranges), persistent=False)

    def _decode(self, obs: Mapping[str, torch.Tensor], *args: Any, **kwargs: Any) -> Any:
        self.masks.op_bounds = self.op_ranges[obs["tool"]]
        try:
            return super()._decode(obs, *args, **kwargs)
        finally:
            self.masks.op_bounds = None
