"""The trainer's policy: it looks at the part and the target, reads the task and the feedback, and
writes one tool call as grammar tokens.

- Vision: a small CNN over the current and the target image, stacked as 6 channels, resized
  to ``image_size`` pixels square and scaled to [-1, 1]; orthogonal initial weights, so that
  the views' differences reach the state and carry gradient. For small parts in a fixed frame
  (image-only prompts), three options, off by default: the target less the current view as
  three more channels (``difference``), each pixel's coordinates as two more (``coords``,
  CoordConv), and max- as well as average-pooled features (``peak_pool``). With ``depth``, the
  env's depth views too (``CadQuery-v0(depth=True)``): as channels, and as readings (each
  view's extents, whether it shows a part, how much of its box the silhouette fills) that reach
  the state and, through a linear read, every token's logits.
- Text: a byte-level encoder (embedding, positions, dilated 1-D convolutions, a LayerNorm) over
  the prompt's first ``prompt_bytes`` UTF-8 bytes and the feedback's last ``feedback_bytes``
  (where the verifier's summary is). Nothing is downloaded; there is no vocabulary to train.
- Fusion: image features, mean- and max-pooled text features and the step count, through an MLP
  and a LayerNorm, into one state vector; the value head reads it.
- Decoder: autoregressive over the grammar's tokens (``toolgym.envs.grammar``). A GRU cell
  starts from the state; each step's input is the previous token and the slot being filled, so
  each token is conditioned on the ones before it (as AlphaStar's action heads are). Each step
  attends over the text before its logits. Tokens the grammar forbids after the prefix get the
  logit :data:`MASKED`. Log-probabilities and masked entropies are summed over the call's tokens.
- Copying numbers (a pointer-generator, See et al. 2017): the numbers written in the prompt are
  read out (``toolgym.agents.trainer.observations.number_spans``), each keyed by the text features
  where it starts and where it ends (the words before and after it: "x =", "tall", "cm") and by its
  rank. At a numeric slot the token distribution is a mixture: with probability ``1 - g``, the
  generator's softmax over the slot's bins; with ``g``, a pointer over the prompt's numbers, each
  snapped to the slot's nearest bin, or where the grammar has copy tokens (``Grammar.copies``)
  put on its exact copy. The gate ``g`` is learnt (it starts at
  ``PolicyConfig.copy_gate_bias``). A request's numbers are mostly its call's numbers, so the
  policy learns *which* number goes where instead of reading digits into 256 bins; the generator
  still writes the numbers the text does not hold (a half height, an offset). The pointer is
  location-aware (as Chorowski et al. 2015's attention is): each number's offset from the one
  copied last in this call is a learnt feature of its score, so "the next number" is one shared
  thing to learn, not one per slot. It starts with a prior for copying in order
  (``PolicyConfig.copy_next_bias``). Sampled from an untrained policy on the primitives' 200
  training requests, a call was exactly right once in 10,000 with a uniform pointer, and 8 times
  in 100 with the prior: enough right calls for PPO from scratch to learn from.
- Measuring (``measure``): the pointer also copies numbers measured off the depth views (each
  view's extent along its axis and its centre's coordinate, for the part and the target; see
  ``toolgym.agents.trainer.depth.depth_measures``), keyed by which measure each is. Pixels show an
  edge to a pixel (3.45 mm in the primitives' frame at 64 px); the depth's maxima give a box's faces
  exactly, so an image-only prompt's sizes and places can be written to the 0.5 mm the exact
  tier pays for.

The defaults are sized to train on a 2-core CPU.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from toolgym.agents.trainer.depth import (
    DEPTH_CHANNELS,
    MEASURES,
    READINGS,
    depth_inputs,
    depth_measures,
)
from toolgym.envs.grammar import Grammar

MASKED = -1e9  # the logit of a token the grammar forbids
# Below it a float32 exp is subnormal (under 1.2e-38), which the CPU's exp computes about 50x
# slower: on a 13,878-token grammar, most of a call's tokens are forbidden and sat there.
EXP_FLOOR = -87.0
# The readings' linear read into the logits learns at this many times the optimiser's rate: a
# fill of 1 against pi / 4 wants logit weights of tens, a logistic regression's rate (at 1x,
# cloning left the tool at chance for 300 steps).
LOGIT_GAIN = 100.0
# What every decoder step reads: text features, their mask, the pointer's keys, which keys
# hold a number, the depth readings (or None), and the numbers.
Memory = tuple[torch.Tensor | None, ...]
COPY_REACH = 4  # the pointer's offsets from the number copied last, told apart up to this far


@dataclasses.dataclass
class PolicyConfig:
    """Sizes. ``image_size``: pixels square the views are resized to; ``hidden``: the state and
    decoder width; ``embed``: byte embedding width; ``max_step``: steps told apart."""

    image_size: int = 64
    channels: tuple[int, int, int] = (16, 32, 32)
    prompt_bytes: int = 256
    feedback_bytes: int = 96
    embed: int = 32
    hidden: int = 128
    max_step: int = 16
    max_numbers: int = 16  # numbers of the prompt the decoder may copy
    copy: bool = True  # the pointer over the prompt's numbers (off: the generator alone)
    # The pointer's starting preference, in logits, for the number after the one copied last
    # (0: none). Requests mostly spell a call's numbers in its parameters' order; the prior only
    # sets where exploration starts, and training moves it.
    copy_next_bias: float = 3.0
    copy_gate_bias: float = 2.0  # the copy gate starts at sigmoid(2) = 0.88
    # Key each prompt number by the text where it starts too, not only where it ends (a number
    # in words is long: "x = twenty-six mm"); on for the paraphrased benchmark (RESULTS.md).
    number_starts: bool = False
    # Two more input channels holding each pixel's x and y in [-1, 1] (CoordConv, Liu et al.
    # 2018): a convolution alone is blind to where it is, and sizes and places read from a
    # fixed frame are where a part's edges fall.
    coords: bool = False
    # Max- as well as average-pooled image features: a part a few pixels wide in a fixed frame
    # is a thirtieth of an average-pooled cell, and its features were lost among the ground's.
    peak_pool: bool = False
    # Three more input channels: the target less the current view (zero where they agree). The
    # fixed frame's ground and grid are the same in every task; what tells tasks apart is a few
    # pixels, about 1 % of the state's spread across tasks without this.
    difference: bool = False
    # The env's depth (CadQuery-v0's ``depth=True``: where each pixel's ray meets the part, in
    # mm along the view's axis) as six more input channels (each view's surfaces facing towards
    # and away from the camera, and where the part is, for the current part and the target),
    # and as 32 *readings*: per view, the largest value of each surface channel (mm / 100),
    # whether each image shows a part there, and each silhouette's fill (box or round).
    # Max-pooling a depth view gives the part's extent along its axis exactly, which pixels
    # give to one pixel (3.45 mm at 64 px). The readings reach the state and, through a linear
    # read, every token's logits.
    depth: bool = False
    # The pointer copies numbers measured off the depth views as well as the prompt's (needs
    # ``depth``): per image (current part, target) and view, the part's extent along the view's
    # axis and its centre's coordinate, either sign (see ``toolgym.agents.trainer.depth``). As the
    # prompt's numbers are read by a fixed parser, these are read by fixed max-pooling; what
    # is learnt is which one goes into which slot (each keyed by which measure it is).
    measure: bool = False


def probabilities(log_p: torch.Tensor) -> torch.Tensor:
    """``log_p.exp()``, with probabilities under ``e ** EXP_FLOOR`` (subnormal) as 0."""
    return log_p.clamp(min=EXP_FLOOR).exp().masked_fill(log_p < EXP_FLOOR, 0.0)


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
        bins = torch.as_tensor(grammar.bin_values, dtype=torch.float32)
        self.register_buffer("bin_values", bins, persistent=False)
        copies = torch.as_tensor(grammar.copy_token)
        self.register_buffer("copy_token", copies, persistent=False)

    def slot_start(self, prefix: torch.Tensor, t: int) -> torch.Tensor:
        """``(B,)``: the first token of the slot at position ``t`` (it names the slot)."""
        if t == 0:
            return torch.full((prefix.shape[0],), self.op_lo, device=prefix.device)
        return self.slot_lo[prefix[:, 0] - self.op_lo, t]

    def snap(
        self, prefix: torch.Tensor, t: int, numbers: torch.Tensor, prompt: int | None = None
    ) -> tuple[torch.Tensor, ...]:
        """Each number ``(B, K)`` as the nearest token of the numeric slot at position ``t``, or
        for the prompt's (the first ``prompt``; all by default) where the grammar has one
        (``Grammar.copies``) its exact copy token: ``(tokens (B, K), numeric (B,))``, where
        ``numeric`` says whether the slot holds numbers at all (its tokens are meaningless
        where not). Numbers measured off the views come after the prompt's and always snap."""
        op = prefix[:, 0] - self.op_lo
        bins = self.bin_values[op, t]  # (B, W), NaN past the slot's bins
        distance = (bins.unsqueeze(1) - numbers.unsqueeze(2)).abs()
        index = torch.nan_to_num(distance, nan=float("inf")).argmin(dim=-1)
        tokens = self.slot_lo[op, t].unsqueeze(1) + index
        reach = min(self.copy_token.shape[-1], numbers.shape[1] if prompt is None else prompt)
        if reach:  # a prompt number copied exactly, not snapped
            exact = self.copy_token[op, t, :reach]
            head = torch.where(exact >= 0, exact, tokens[:, :reach])
            tokens = torch.cat([head, tokens[:, reach:]], dim=1)
        return tokens, ~torch.isnan(bins[:, 0])

    def soft_targets(self, tokens: torch.Tensor, sigma: float) -> torch.Tensor:
        """Soft-binned targets for cloning ``tokens`` ``(B, L)``: ``(B, L, vocab)``, each row a
        distribution. At a numeric slot whose token is one of its bins, a Gaussian over the
        distance in bins (``sigma`` bins), cut to the slot's bins: a call 20.5 mm wide teaches
        that 20 and 21 are nearly as good, so the number head learns an order where one-hot
        targets treat every other bin as equally wrong. Elsewhere (tools, choices, derived
        values, padding), the token itself."""
        batch, length = tokens.shape
        targets = F.one_hot(tokens, self.tokens.shape[0]).float()
        if sigma <= 0:
            return targets
        op = (tokens[:, 0] - self.op_lo).clamp(0, self.bin_values.shape[0] - 1)
        for t in range(1, length):
            bins = self.bin_values[op, t]  # (B, W), NaN past the slot's bins
            real = ~torch.isnan(bins)
            index = tokens[:, t] - self.slot_lo[op, t]
            soft = real[:, 0] & (index >= 0) & (index < real.sum(dim=1))
            if not soft.any():
                continue
            distance = torch.arange(bins.shape[1], device=tokens.device) - index.unsqueeze(1)
            weights = torch.exp(-0.5 * (distance / sigma) ** 2) * real.float()
            weights = weights / weights.sum(dim=1, keepdim=True).clamp(min=1e-12)
            where = (
                self.slot_lo[op, t].unsqueeze(1) + torch.arange(bins.shape[1], device=tokens.device)
            ).clamp(max=targets.shape[-1] - 1)
            spread = torch.zeros(batch, targets.shape[-1], device=tokens.device)
            spread.scatter_add_(1, where, weights)
            targets[:, t] = torch.where(soft.unsqueeze(1), spread, targets[:, t])
        return targets

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


class Pooled(nn.Module):
    """The CNN's feature maps pooled to 4 x 4 cells: averaged, and (``peak``) their maxima
    too, as more channels."""

    def __init__(self, peak: bool) -> None:
        super().__init__()
        self.peak = peak

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        pooled = F.adaptive_avg_pool2d(maps, 4)
        if not self.peak:
            return pooled
        return torch.cat([pooled, F.adaptive_max_pool2d(maps, 4)], dim=1)


class Policy(nn.Module):
    """Actor-critic over grammar tokens; see the module docstring."""

    def __init__(self, grammar: Grammar, config: PolicyConfig | None = None) -> None:
        super().__init__()
        self.grammar, self.config = grammar, config or PolicyConfig()
        c, h, e = self.config.channels, self.config.hidden, self.config.embed
        self.length, vocab = grammar.length, grammar.vocab_size
        self.masks = GrammarMasks(grammar)
        pools = 2 if self.config.peak_pool else 1
        # The views (current and target, 3 each), then the options' channels.
        extra = 2 * self.config.coords + 3 * self.config.difference
        channels = 6 + extra + DEPTH_CHANNELS * self.config.depth
        self.cnn = nn.Sequential(
            nn.Conv2d(channels, c[0], 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv2d(c[0], c[1], 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(c[1], c[2], 3, stride=2, padding=1),
            nn.GELU(),
            Pooled(self.config.peak_pool),
            nn.Flatten(),
            nn.Linear(pools * 16 * c[2], h),
            nn.GELU(),
        )
        # Orthogonal weights with ReLU's gain (as CleanRL's Atari agents): under PyTorch's
        # default init the features of mostly white views shrank layer by layer until their
        # differences were a thousandth of the text's, and a cloned image-only policy wrote the
        # same call for a cube, a ball and a rod.
        for layer in self.cnn:
            if isinstance(layer, nn.Conv2d | nn.Linear):
                nn.init.orthogonal_(layer.weight, gain=2**0.5)
                nn.init.zeros_(layer.bias)
        text_len = self.config.prompt_bytes + self.config.feedback_bytes
        self.byte_embed = nn.Embedding(257, e)
        self.byte_position = nn.Embedding(text_len, e)
        self.text_convs = nn.ModuleList(
            [nn.Conv1d(e, h, 5, padding=2)]
            + [nn.Conv1d(h, h, 5, padding=2 * d, dilation=d) for d in (2, 4)]
        )
        # Text features are normalised: without it, cloning a two-call family (a block, then
        # its fillet on "vertical" or "top face" edges) left the edge choice at chance for 400
        # steps; the copy slots' gradients grew the features until the words' were lost.
        self.text_norm = nn.LayerNorm(h)
        self.step_embed = nn.Embedding(self.config.max_step, 16)
        # LayerNorm, not a tanh, at the end: during cloning the inputs grew until the tanh
        # saturated and every task got the same state (the call's tool was then a coin toss).
        readings = READINGS * self.config.depth
        self.fuse = nn.Sequential(
            nn.Linear(3 * h + 16 + readings, h), nn.GELU(), nn.Linear(h, h), nn.LayerNorm(h)
        )
        self.value_head = nn.Linear(h, 1)
        self.token_embed = nn.Embedding(vocab, h)
        self.token_position = nn.Embedding(self.length, h)
        self.slot_embed = nn.Embedding(vocab, h)  # by the slot's first token: which parameter
        self.cell = nn.GRUCell(h, h)
        self.query = nn.Linear(h, h)
        self.logits_head = nn.Sequential(nn.Linear(2 * h, h), nn.GELU(), nn.Linear(h, vocab))
        # The pointer over the prompt's numbers: keys from the text where a number stands, its
        # rank, its value and sign; a query and a gate from the decoder.
        self.number_rank = nn.Embedding(self.config.max_numbers, h)
        self.number_key = nn.Linear((2 if self.config.number_starts else 1) * h + 2, h)
        self.copy_query = nn.Linear(h, h)
        self.copy_offset = nn.Embedding(2 * COPY_REACH + 1, h)  # offset from the last copied
        self.copy_offset_bias = nn.Embedding(2 * COPY_REACH + 1, 1)
        self.copy_gate = nn.Linear(2 * h, 1)
        nn.init.zeros_(self.value_head.bias)
        nn.init.normal_(self.logits_head[-1].weight, std=0.01)  # near-uniform first calls
        nn.init.zeros_(self.logits_head[-1].bias)
        nn.init.zeros_(self.copy_gate.weight)
        nn.init.zeros_(self.copy_offset.weight)
        with torch.no_grad():  # a prior on copying the numbers in order (see PolicyConfig)
            self.copy_offset_bias.weight.zero_()[COPY_REACH] = self.config.copy_next_bias
        nn.init.constant_(self.copy_gate.bias, self.config.copy_gate_bias)
        if self.config.measure and not self.config.depth:
            raise ValueError("PolicyConfig.measure reads the depth views: set depth=True too")
        if self.config.measure:  # keys of the measured numbers: which measure, and its value
            self.measure_embed = nn.Embedding(MEASURES, h)
            self.measure_value = nn.Linear(2, h)
        if self.config.depth:  # the readings straight into every token's logits, as well
            self.reading_logits = nn.Linear(readings, vocab)
            nn.init.zeros_(self.reading_logits.weight)
            nn.init.zeros_(self.reading_logits.bias)

    # -- encoders -----------------------------------------------------------------------------
    def encode(self, obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """``(state (B, h), text features (B, T, h), text padding mask (B, T), depth readings
        (B, READINGS) or None)``."""
        images = obs["images"].float() / 127.5 - 1.0  # in [-1, 1]: white is not all zeros
        size = self.config.image_size
        readings = None
        if self.config.depth:
            maps, readings = depth_inputs(obs["depths"])
            images = torch.cat([images, maps], dim=1)
        if images.shape[-2:] != (size, size):
            images = F.interpolate(images, size=(size, size), mode="area")
        if self.config.difference:  # what is still to build: target less current
            images = torch.cat([images, images[:, 3:6] - images[:, :3]], dim=1)
        if self.config.coords:  # CoordConv: where each pixel is
            ramp = torch.linspace(-1.0, 1.0, size, device=images.device)
            grid = torch.stack(torch.meshgrid(ramp, ramp, indexing="ij"))
            images = torch.cat([images, grid.expand(images.shape[0], -1, -1, -1)], dim=1)
        seeing = self.cnn(images)
        text = obs["text"]
        present = text > 0
        positions = torch.arange(text.shape[1], device=text.device)
        x = (self.byte_embed(text) + self.byte_position(positions)).transpose(1, 2)
        for k, conv in enumerate(self.text_convs):
            y = F.gelu(conv(x))
            x = y if k == 0 else x + y  # residual past the first layer
        features = self.text_norm(x.transpose(1, 2))  # (B, T, h)
        weights = present.float().unsqueeze(-1)
        pooled = (features * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        # Max-pooling too: a mean over the whole text dilutes the one word that decides the call
        # ("chamfered" or "rounded").
        peak = features.masked_fill(~present.unsqueeze(-1), MASKED).amax(dim=1)
        peak = torch.where(present.any(dim=1, keepdim=True), peak, torch.zeros_like(peak))
        parts = [seeing, pooled, peak, self.step_embed(obs["step"])]
        state = self.fuse(torch.cat(parts + ([readings] if readings is not None else []), dim=1))
        return state, features, present, readings

    def number_keys(
        self, obs: Mapping[str, torch.Tensor], features: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(keys (B, K, h), present (B, K))`` of the prompt's numbers, for the pointer."""
        at, numbers = obs["number_at"], obs["numbers"]
        start = obs.get("number_from", at)  # where a number starts (as it ends, if not given)

        def around(index: torch.Tensor) -> torch.Tensor:
            where = index.clamp(min=0).unsqueeze(-1).expand(-1, -1, features.shape[-1])
            return features.gather(1, where)

        # The text at both ends: the words before a number ("radius", "x =") and after it
        # ("tall", "across", its unit) are what say which parameter it is.
        context = around(at) + self.number_rank.weight[: at.shape[1]]
        if self.config.number_starts:
            context = torch.cat(
                [around(start) + self.number_rank.weight[: at.shape[1]], around(at)], dim=-1
            )
        # Clamped: a task's text may hold any number (a part number, "1" followed by 40 zeros).
        value = torch.stack([(numbers / 100.0).clamp(-10, 10), (numbers < 0).float()], dim=-1)
        return self.number_key(torch.cat([context, value], dim=-1)), at >= 0

    def value(self, obs: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return self.value_head(self.encode(obs)[0]).squeeze(-1)

    # -- decoder ------------------------------------------------------------------------------
    def _memory(self, obs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, Memory]:
        """The state the decoder starts from, and what each of its steps reads: ``(features,
        present, keys, numbered, readings, numbers)``, the pointer's numbers the prompt's then
        (``measure``) those measured off the views."""
        state, features, present, readings = self.encode(obs)
        keys, numbered = self.number_keys(obs, features)
        numbers = obs["numbers"]
        if self.config.measure:  # the measured numbers after the prompt's
            values, shown = depth_measures(obs["depths"])
            scaled = torch.stack([(values / 100.0).clamp(-10, 10), (values < 0).float()], dim=-1)
            measure_keys = self.measure_embed.weight + self.measure_value(scaled)
            keys = torch.cat([keys, measure_keys], dim=1)
            numbered = torch.cat([numbered, shown], dim=1)
            numbers = torch.cat([numbers, values], dim=1)
        return state, (features, present, keys, numbered, readings, numbers)

    def _cell(
        self, hidden: torch.Tensor, chosen: torch.Tensor, previous: torch.Tensor, t: int
    ) -> torch.Tensor:
        """The GRU's step to position ``t``: its input is the previous token and the slot being
        filled, never the attention's context, so given the tokens every step can run first."""
        slot = self.masks.slot_start(chosen, t)
        inputs = self.token_embed(previous) + self.token_position.weight[t] + self.slot_embed(slot)
        return self.cell(inputs, hidden)

    def _read(self, hidden: torch.Tensor, memory: Memory) -> torch.Tensor:
        """The hidden state beside its attention over the text: ``(B, 2h)`` for ``(B, h)``, or
        ``(B, L, 2h)`` for every position at once ``(B, L, h)``."""
        features, present = memory[0], memory[1]
        queries = self.query(hidden if hidden.dim() == 3 else hidden.unsqueeze(1))
        scores = torch.einsum("blh,bth->blt", queries, features) / features.shape[-1] ** 0.5
        attention = scores.masked_fill(~present.unsqueeze(1), MASKED).softmax(dim=-1)
        context = torch.einsum("blt,bth->blh", attention, features)
        return torch.cat([hidden, context.view(hidden.shape)], dim=-1)

    def _token_log_probs(
        self,
        both: torch.Tensor,
        chosen: torch.Tensor,
        t: int,
        memory: Memory,
        obs: Mapping[str, torch.Tensor],
        last: torch.Tensor,
        token: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor] | None]:
        """The masked log-probabilities ``(B, vocab)`` of the token at position ``t`` (forbidden
        tokens: :data:`MASKED`) from ``both`` (:meth:`_read`), or given ``token`` ``(B,)`` its
        log-probability alone ``(B,)``; and where copying ``(the numbers' tokens (B, K), the
        pointer (B, K))``, else ``None``. ``last`` ``(B,)``: the rank of the number copied last
        in this call (-1: none yet)."""
        _, _, keys, numbered, readings, numbers = memory
        allowed = self.masks.allowed(chosen, t)
        # Invalid-token masking: forbidden tokens get a large negative logit.
        logits = self.logits_head(both)
        if readings is not None:
            # A shortcut past the fused state, whose LayerNorm keeps a few numbers that change
            # from task to task at about 1 % of its spread: the tool is a linear read of the
            # silhouettes' fills (a box 1, a sphere pi / 4 in every view).
            logits = logits + self.reading_logits(readings) * LOGIT_GAIN
        generated = logits.masked_fill(~allowed, MASKED).log_softmax(dim=-1)
        if token is not None:  # the one token's: no mixture over the whole vocabulary
            generated = generated.gather(1, token.unsqueeze(1)).squeeze(1)
        if t == 0 or not self.config.copy:
            return generated, None
        # Pointer-generator: mix the generator with a pointer over the prompt's numbers, each
        # snapped to this slot's nearest bin; only at a numeric slot whose tokens are allowed.
        tokens, numeric = self.masks.snap(chosen, t, numbers, obs["numbers"].shape[1])
        # Location-aware pointer: each number's offset from the one copied last. A measured
        # number (past the prompt's) is never "the next one": it has the farthest offset.
        ranks = torch.arange(keys.shape[1], device=keys.device)
        offset = (ranks - last.unsqueeze(1) - 1).clamp(-COPY_REACH, COPY_REACH) + COPY_REACH
        measured = ranks >= obs["numbers"].shape[1]
        offset = torch.where(measured, torch.full_like(offset, 2 * COPY_REACH), offset)
        located = keys + self.copy_offset(offset)
        scale = keys.shape[-1] ** 0.5
        hidden = both[:, : self.config.hidden]
        pointer = torch.einsum("bh,bkh->bk", self.copy_query(hidden), located) / scale
        pointer = pointer + self.copy_offset_bias(offset).squeeze(-1)
        pointer = pointer.masked_fill(~numbered, MASKED).softmax(dim=1)
        usable = numeric & numbered.any(dim=1) & allowed.gather(1, tokens[:, :1]).squeeze(1)
        gate = torch.sigmoid(self.copy_gate(both)).squeeze(1) * usable.float()
        if token is None:
            copied = torch.zeros_like(generated).scatter_add(1, tokens, pointer)
            gate = gate.unsqueeze(1)
        else:
            copied = (pointer * (tokens == token.unsqueeze(1))).sum(dim=1)
            allowed = allowed.gather(1, token.unsqueeze(1)).squeeze(1)
        mixed = (1 - gate) * probabilities(generated) + gate * copied
        log_p = mixed.clamp(min=1e-30).log().masked_fill(~allowed, MASKED)
        return log_p, (tokens, pointer.masked_fill(~(numbered & usable.unsqueeze(1)), -1))

    def _decode(
        self,
        obs: Mapping[str, torch.Tensor],
        tokens: torch.Tensor | None,
        generator: torch.Generator | None = None,
        greedy: bool = False,
        every: list[torch.Tensor] | None = None,
        entropy: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher-forced over ``tokens``, or sampling when ``tokens`` is ``None``.

        Returns ``(tokens (B, L), log-prob (B,), entropy (B,), value (B,))``; log-prob and entropy
        are summed over the call's tokens, each with the grammar's mask applied. ``every``: a
        list that gets each position's masked log-probabilities ``(B, vocab)``. Teacher-forced
        without ``entropy`` or ``every``, only the given tokens' probabilities are mixed (the
        entropy returned is 0): what cloning needs.

        Teacher-forced, the GRU runs over the given tokens first and one attention serves every
        position: the same numbers as sampling them one by one, without a pass over the text
        per position (on a 1,120-byte text that pass was most of a cloning step)."""
        state, memory = self._memory(obs)
        prompt_numbers = obs["numbers"].shape[1]
        batch = state.shape[0]
        zeros = torch.zeros(batch, device=state.device)
        previous = torch.zeros(batch, dtype=torch.long, device=state.device)
        if tokens is not None:
            chosen, hidden, hiddens = tokens, state, []
            for t in range(self.length):
                hidden = self._cell(hidden, chosen, previous, t)
                hiddens.append(hidden)
                previous = tokens[:, t]
            # Unbound once: a slice per position would fill a zero gradient of the whole.
            read = self._read(torch.stack(hiddens, dim=1), memory).unbind(dim=1)
        else:
            chosen = torch.zeros(batch, self.length, dtype=torch.long, device=state.device)
            hidden = state
        lean = tokens is not None and every is None and not entropy
        log_prob, spread = zeros, zeros
        last = torch.full((batch,), -1, dtype=torch.long, device=state.device)
        for t in range(self.length):
            if tokens is not None:
                both = read[t]
            else:
                hidden = self._cell(hidden, chosen, previous, t)
                both = self._read(hidden, memory)
            if lean:
                token = tokens[:, t]
                at, copy = self._token_log_probs(both, chosen, t, memory, obs, last, token)
                log_prob = log_prob + at
            else:
                log_p, copy = self._token_log_probs(both, chosen, t, memory, obs, last)
                if every is not None:
                    every.append(log_p)
                if tokens is not None:
                    token = tokens[:, t]
                elif greedy:
                    token = log_p.argmax(dim=-1)
                else:
                    p = probabilities(log_p)
                    token = torch.multinomial(p, 1, generator=generator).squeeze(1)
                if tokens is None:
                    chosen[:, t] = token
                log_prob = log_prob + log_p.gather(1, token.unsqueeze(1)).squeeze(1)
                # Masked entropy: forbidden tokens have probability 0 and add nothing.
                spread = spread - (probabilities(log_p) * log_p).sum(dim=-1)
            previous = token
            if copy is not None:  # the number copied: the likeliest one that spells the token
                snapped, pointer = copy
                hit = (snapped == token.unsqueeze(1)) & (pointer >= 0)
                hit = hit[:, :prompt_numbers]  # a measured number is not a place in the prompt
                best = torch.where(hit, pointer[:, :prompt_numbers], -1.0).argmax(dim=1)
                last = torch.where(hit.any(dim=1), best, last)
        return chosen, log_prob, spread, self.value_head(state).squeeze(-1)

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

    def log_likelihood(
        self, obs: Mapping[str, torch.Tensor], tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log-prob (B,), value (B,))`` of given calls, for cloning: :meth:`evaluate` without
        the entropy, and cheaper (only the given tokens' probabilities are mixed)."""
        _, log_prob, _, value = self._decode(obs, tokens, entropy=False)
        return log_prob, value

    def token_log_probs(
        self, obs: Mapping[str, torch.Tensor], tokens: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced over given calls: ``(log-probs (B, L, vocab) of every token at every
        position, masked; value (B,))``, for losses on more than the chosen token."""
        every: list[torch.Tensor] = []
        _, _, _, value = self._decode(obs, tokens, every=every)
        return torch.stack(every, dim=1), value


def pick_device(name: str = "auto") -> torch.device:
    """CUDA when present (``"auto"``), else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
