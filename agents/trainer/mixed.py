"""One policy over several tools: the bundled policy over a mixed grammar, each call's tool fixed.

The mixed grammar (``toolgym.agents.trainer.build.mixed_grammar``) holds each tool's grammar in one
vocabulary: tool names are prefixed with the tool (``"blender.set_location"``) and each tool's
operations are contiguous. The policy is the bundled one (one encoder of pictures and texts, one
decoder, shared by every tool); its first token is masked to the operations of the episode's
tool (``obs["tool"]``), so a call is always one the tool has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from toolgym.agents.trainer.policy import GrammarMasks, Policy, PolicyConfig
from toolgym.envs.grammar import Grammar


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
