"""The trainer's policy: it looks at the part and the target, reads the task and the feedback, and
writes one tool call as grammar tokens.

- Vision: a small CNN over the current and the target image, stacked as 6 channels and resized
  to ``image_size`` pixels square.
- Text: a byte-level encoder (embedding, positions, dilated 1-D convolutions) over the prompt's
  first ``prompt_bytes`` UTF-8 bytes and the feedback's last ``feedback_bytes`` (where the
  verifier's summary is). Nothing is downloaded; there is no vocabulary to train.
- Fusion: image features, pooled text features and the step count, through an MLP, into one
  state vector; the value head reads it.
- Decoder: autoregressive over the grammar's tokens (``toolgym.agents.grammar``). A GRU cell
  starts from the state; each step's input is the previous token, so each token is conditioned on
  the ones before it (as AlphaStar's action heads are). Each step attends over the text (so
  numbers can be copied from the prompt) before its logits. Tokens the grammar forbids after the
  prefix get the logit :data:`MASKED`. Log-probabilities and masked entropies are summed over the
  call's tokens.

The defaults are sized to train on a 2-core CPU.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from toolgym.agents.grammar import Grammar
from toolgym.envs.spaces import text_bytes

MASKED = -1e9  # the logit of a token the grammar forbids


@dataclasses.dataclass
class PolicyConfig:
    """Sizes. ``image_size``: pixels square the views are resized to; ``hidden``: the state and
    decoder width; ``embed``: byte embedding width; ``max_step``: steps told apart."""

    image_size: int = 64
    channels: tuple[int, int, int] = (16, 32, 32)
    prompt_bytes: int = 192
    feedback_bytes: int = 96
    embed: int = 32
    hidden: int = 128
    max_step: int = 16


def batch_observations(observations: Mapping[str, Any], config: PolicyConfig) -> dict[str, Any]:
    """A batch of environment observations (vector-env layout) as the policy's numpy inputs:
    ``images`` uint8 ``(B, 6, H, W)`` (current, then target), ``text`` int64 bytes
    ``(B, prompt_bytes + feedback_bytes)``, ``step`` int64 ``(B,)``."""
    images = np.concatenate([observations["image"], observations["target"]], axis=-1)
    prompt = text_bytes(list(observations["prompt"]), config.prompt_bytes)
    feedback = text_bytes(list(observations["feedback"]), config.feedback_bytes, keep="tail")
    return {
        "images": np.ascontiguousarray(images.transpose(0, 3, 1, 2)),
        "text": np.concatenate([prompt, feedback], axis=1),
        "step": np.minimum(np.asarray(observations["step"], np.int64), config.max_step - 1),
    }


def to_torch(batch: Mapping[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(v, device=device) for k, v in batch.items()}


class GrammarMasks(nn.Module):
    """The grammar's tables as tensors: the allowed token range for a batch of prefixes."""

    def __init__(self, grammar: Grammar) -> None:
        super().__init__()
        self.op_lo, self.op_hi = grammar.op_start, grammar.op_start + len(grammar.ops)
        for name in ("slot_lo", "slot_hi", "point_of", "count_at", "count_of_token"):
            self.register_buffer(name, torch.as_tensor(getattr(grammar, name)), persistent=False)
        self.register_buffer("tokens", torch.arange(grammar.vocab_size), persistent=False)

    def allowed(self, prefix: torch.Tensor, t: int) -> torch.Tensor:
        """Boolean ``(B, vocab)``: which tokens may come at position ``t`` after ``prefix``
        (``(B, >= t)``; only its first ``t`` columns are read)."""
        batch = prefix.shape[0]
        if t == 0:
            lo = torch.full((batch,), self.op_lo, device=prefix.device)
            hi = torch.full((batch,), self.op_hi, device=prefix.device)
        else:
            op = prefix[:, 0] - self.op_lo
            lo, hi = self.slot_lo[op, t], self.slot_hi[op, t]
            point = self.point_of[op, t]
            count_token = prefix.gather(1, self.count_at[op, t].unsqueeze(1)).squeeze(1)
            past_count = (point >= 0) & (point >= self.count_of_token[count_token])
            lo = torch.where(past_count, torch.zeros_like(lo), lo)  # PAD only
            hi = torch.where(past_count, torch.ones_like(hi), hi)
        return (self.tokens >= lo.unsqueeze(1)) & (self.tokens < hi.unsqueeze(1))


class Policy(nn.Module):
    """Actor-critic over grammar tokens; see the module docstring."""

    def __init__(self, grammar: Grammar, config: PolicyConfig | None = None) -> None:
        super().__init__()
        self.grammar, self.config = grammar, config or PolicyConfig()
        c, h, e = self.config.channels, self.config.hidden, self.config.embed
        self.length, vocab = grammar.length, grammar.vocab_size
        self.masks = GrammarMasks(grammar)
        self.cnn = nn.Sequential(
            nn.Conv2d(6, c[0], 5, stride=2, padding=2), nn.GELU(),
            nn.Conv2d(c[0], c[1], 3, stride=2, padding=1), nn.GELU(),
            nn.Conv2d(c[1], c[2], 3, stride=2, padding=1), nn.GELU(),
            nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(16 * c[2], h), nn.GELU(),
        )  # fmt: skip
        text_len = self.config.prompt_bytes + self.config.feedback_bytes
        self.byte_embed = nn.Embedding(257, e)
        self.byte_position = nn.Embedding(text_len, e)
        self.text_convs = nn.ModuleList(
            [nn.Conv1d(e, h, 5, padding=2)]
            + [nn.Conv1d(h, h, 5, padding=2 * d, dilation=d) for d in (2, 4)]
        )
        self.step_embed = nn.Embedding(self.config.max_step, 16)
        self.fuse = nn.Sequential(nn.Linear(2 * h + 16, h), nn.GELU(), nn.Linear(h, h), nn.Tanh())
        self.value_head = nn.Linear(h, 1)
        self.token_embed = nn.Embedding(vocab, h)
        self.token_position = nn.Embedding(self.length, h)
        self.cell = nn.GRUCell(h, h)
        self.query = nn.Linear(h, h)
        self.logits_head = nn.Sequential(nn.Linear(2 * h, h), nn.GELU(), nn.Linear(h, vocab))
        nn.init.zeros_(self.value_head.bias)
        nn.init.normal_(self.logits_head[-1].weight, std=0.01)  # near-uniform first calls
        nn.init.zeros_(self.logits_head[-1].bias)

    # -- encoders -----------------------------------------------------------------------------
    def encode(self, obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """``(state (B, h), text features (B, T, h), text padding mask (B, T))``."""
        images = obs["images"].float() / 255.0
        size = self.config.image_size
        if images.shape[-2:] != (size, size):
            images = F.interpolate(images, size=(size, size), mode="area")
        seeing = self.cnn(images)
        text = obs["text"]
        present = text > 0
        positions = torch.arange(text.shape[1], device=text.device)
        x = (self.byte_embed(text) + self.byte_position(positions)).transpose(1, 2)
        for k, conv in enumerate(self.text_convs):
            y = F.gelu(conv(x))
            x = y if k == 0 else x + y  # residual past the first layer
        features = x.transpose(1, 2)  # (B, T, h)
        weights = present.float().unsqueeze(-1)
        pooled = (features * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        state = self.fuse(torch.cat([seeing, pooled, self.step_embed(obs["step"])], dim=1))
        return state, features, present

    def value(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.value_head(self.encode(obs)[0]).squeeze(-1)

    # -- decoder ------------------------------------------------------------------------------
    def _step_logits(
        self, hidden: torch.Tensor, previous: torch.Tensor, t: int,
        features: torch.Tensor, present: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """One decoder step: the new hidden state and the raw logits for position ``t``."""
        position = self.token_position.weight[t]
        hidden = self.cell(self.token_embed(previous) + position, hidden)
        scores = torch.einsum("bh,bth->bt", self.query(hidden), features)
        scores = scores / features.shape[-1] ** 0.5
        scores = scores.masked_fill(~present, MASKED)
        context = torch.einsum("bt,bth->bh", scores.softmax(dim=1), features)
        return hidden, self.logits_head(torch.cat([hidden, context], dim=1))

    def _decode(
        self,
        obs: Mapping[str, torch.Tensor],
        tokens: torch.Tensor | None,
        generator: torch.Generator | None = None,
        greedy: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher-forced over ``tokens``, or sampling when ``tokens`` is ``None``.

        Returns ``(tokens (B, L), log-prob (B,), entropy (B,), value (B,))``; log-prob and entropy
        are summed over the call's tokens, each with the grammar's mask applied."""
        state, features, present = self.encode(obs)
        batch = state.shape[0]
        chosen = torch.zeros(batch, self.length, dtype=torch.long, device=state.device)
        log_prob = torch.zeros(batch, device=state.device)
        entropy = torch.zeros(batch, device=state.device)
        hidden, previous = state, torch.zeros(batch, dtype=torch.long, device=state.device)
        for t in range(self.length):
            hidden, logits = self._step_logits(hidden, previous, t, features, present)
            # Invalid-token masking: forbidden tokens get a large negative logit.
            logits = logits.masked_fill(~self.masks.allowed(chosen, t), MASKED)
            log_p = logits.log_softmax(dim=-1)
            if tokens is not None:
                token = tokens[:, t]
            elif greedy:
                token = log_p.argmax(dim=-1)
            else:
                token = torch.multinomial(log_p.exp(), 1, generator=generator).squeeze(1)
            chosen[:, t] = token
            log_prob = log_prob + log_p.gather(1, token.unsqueeze(1)).squeeze(1)
            # Masked entropy: forbidden tokens have probability 0 and add nothing.
            entropy = entropy - (log_p.exp() * log_p).sum(dim=-1)
            previous = token
        return chosen, log_prob, entropy, self.value_head(state).squeeze(-1)

    def act(
        self,
        obs: Mapping[str, torch.Tensor],
        generator: torch.Generator | None = None,
        greedy: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample (or, ``greedy``, take the likeliest token at each position of) one call per
        observation: ``(tokens, log-prob, entropy, value)``."""
        return self._decode(obs, None, generator, greedy)

    def evaluate(
        self, obs: Mapping[str, torch.Tensor], tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(log-prob, entropy, value)`` of given calls, for the PPO update."""
        _, log_prob, entropy, value = self._decode(obs, tokens)
        return log_prob, entropy, value


def pick_device(name: str = "auto") -> torch.device:
    """CUDA when present (``"auto"``), else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
