"""The discrete grammar: round trips, masks, and the policy's masked log-probs and entropies."""

from __future__ import annotations

import json
from typing import Annotated, Any

import numpy as np
import pytest
import torch

from toolgym.agents.grammar import PAD, STOP, Grammar, suite_ranges, suite_tools
from toolgym.agents.policy import Policy, PolicyConfig, prompt_numbers
from toolgym.envs.cadquery.tools import registry
from toolgym.envs.suites import get_suite
from toolgym.envs.tools import Param, ToolRegistry

tiny = ToolRegistry("tiny")


@tiny.tool
def pick(part: Any, colour: Annotated[str, Param(choices=("red", "blue"))]) -> Any:
    """Pick a colour."""


@tiny.tool
def move(
    part: Any,
    dx: Annotated[float, Param("mm", 0.0, 1.0, 0.5)],
    flip: Annotated[str, Param(choices=("yes", "no"))] = "no",
) -> Any:
    """Move."""


@tiny.tool
def poly(part: Any, points: Annotated[list[list[float]], Param("mm", 0.0, 1.0, 1.0)]) -> Any:
    """A polygon."""


def every_sequence(grammar: Grammar, prefix: list[int] | None = None) -> list[list[int]]:
    prefix = prefix or []
    if len(prefix) == grammar.length:
        return [prefix]
    lo, hi = grammar.allowed(prefix)
    return [s for token in range(lo, hi) for s in every_sequence(grammar, [*prefix, token])]


def test_tiny_grammar_layout():
    grammar = Grammar(tiny, max_points=4)
    sequences = every_sequence(grammar)
    # pick: 2 colours; move: 3 bins x 2 flips; poly: 3 points (2^6) or 4 (2^8), bins 0 and 1.
    assert len(sequences) == 2 + 6 + 2**6 + 2**8
    assert grammar.length == 2 + 1 + 2 * 4  # op, count, 4 points x 2, stop
    pick_red = grammar.encode({"name": "pick", "arguments": {"colour": "red"}})
    assert pick_red == [grammar.op_start, grammar.slots["pick"][0].start, STOP] + [PAD] * 8
    assert grammar.decode(pick_red) == {"name": "pick", "arguments": {"colour": "red"}}
    triangle = {"name": "poly", "arguments": {"points": [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]}}
    tokens = grammar.encode(triangle)
    assert tokens[-3:] == [PAD, PAD, STOP] and grammar.decode(tokens) == triangle


def test_round_trips_on_the_cadquery_registry():
    grammar = Grammar(registry, max_bins=64)
    rng = np.random.default_rng(0)
    for _ in range(300):
        tokens = grammar.sample(rng)
        call = grammar.decode(tokens)
        assert grammar.encode(call) == tokens
        assert grammar.encode(json.dumps(call)) == tokens


def test_a_valid_call_comes_back_unchanged():
    calls = [c for t in get_suite("primitives").split("train") for c in t.tool_calls]
    grammar = Grammar(registry, suite_ranges(registry, calls), tools=suite_tools(registry, calls))
    assert grammar.ops == ("add_box", "add_cylinder", "add_sphere")
    for task in get_suite("primitives").tasks:  # test tasks too: the ranges' margin holds them
        (call,) = task.tool_calls
        _, arguments = registry.parse_call(call)
        assert grammar.snap(call) == {"name": json.loads(call)["name"], "arguments": arguments}


def test_masks_allow_exactly_the_valid_tokens():
    grammar = Grammar(registry, max_bins=32)
    rng = np.random.default_rng(1)
    masks = Policy(grammar, PolicyConfig(hidden=16, embed=8)).masks
    for _ in range(40):
        tokens = grammar.sample(rng)
        batch = torch.as_tensor([tokens])
        for t in range(grammar.length):
            allowed = grammar.mask(tokens[:t])
            assert np.array_equal(masks.allowed(batch, t)[0].numpy(), allowed)
            for token in rng.choice(grammar.vocab_size, 30, replace=False):
                changed = [*tokens[:t], int(token)]
                completes = _complete(grammar, changed, rng)
                assert grammar.valid(completes) == bool(allowed[token])
    # Every allowed value is in the parameter's range; every grid value of it is allowed.
    for tool, slots in grammar.slots.items():
        for slot in slots:
            spec = registry.grammar()[tool]["params"][slot.param]
            if slot.kind == "value" and spec["kind"] == "number":
                assert slot.values[0] == spec["min"] and slot.values[-1] == spec["max"]
                assert all(spec["min"] <= v <= spec["max"] for v in slot.values)


def _complete(grammar: Grammar, prefix: list[int], rng: np.random.Generator) -> list[int]:
    """``prefix`` followed by allowed tokens (past an invalid token, the grammar's own walk)."""
    tokens = list(prefix)
    while len(tokens) < grammar.length:
        try:
            lo, hi = grammar.allowed(tokens)
        except IndexError:  # an operation token that is no operation
            return tokens + [PAD] * (grammar.length - len(tokens))
        tokens.append(int(rng.integers(lo, hi)))
    return tokens


def test_masked_log_prob_and_entropy_match_enumeration():
    torch.manual_seed(0)
    grammar = Grammar(tiny, max_points=4)
    policy = Policy(grammar, PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=16,
                                          feedback_bytes=8))  # fmt: skip
    with torch.no_grad():  # sharper, uneven logits and copy gates than at initialisation
        policy.logits_head[-1].weight.normal_(0, 1.0)
        policy.copy_gate.weight.normal_(0, 1.0)
        policy.copy_offset_bias.weight.normal_(0, 2.0)  # the pointer depends on what it copied
    sequences = torch.as_tensor(every_sequence(grammar))
    # Three numbers to copy (one between two bins, one out of range) and one empty place: the
    # pointer's share of each numeric slot lands on real tokens, and the sums still hold.
    numbers = torch.zeros(1, policy.config.max_numbers)
    numbers[0, :3] = torch.tensor([0.5, 0.7, -3.0])
    number_at = torch.full((1, policy.config.max_numbers), -1)
    number_at[0, :3] = torch.tensor([2, 5, 9])
    obs = {
        "images": torch.randint(0, 255, (1, 6, 16, 16), dtype=torch.uint8),
        "text": torch.randint(1, 257, (1, 24)),
        "step": torch.zeros(1, dtype=torch.long),
        "numbers": numbers,
        "number_at": number_at,
    }
    batch = {k: v.expand(len(sequences), *v.shape[1:]) for k, v in obs.items()}
    with torch.no_grad():
        log_prob, entropy, _ = policy.evaluate(batch, sequences)
    p = log_prob.double().exp()
    assert p.sum().item() == pytest.approx(1.0, abs=1e-5)  # the masks normalise over valid calls
    # Summed per-token masked entropies average to the calls' joint entropy (the chain rule).
    joint = -(p * log_prob.double()).sum().item()
    assert (p * entropy.double()).sum().item() == pytest.approx(joint, abs=1e-4)
    # A sampled call's log-prob is the teacher-forced one.
    with torch.no_grad():
        tokens, sampled, _, _ = policy.act(obs, torch.Generator().manual_seed(3))
        again, _, _ = policy.evaluate(obs, tokens)
    assert grammar.valid(tokens[0].tolist())
    assert sampled.item() == pytest.approx(again.item(), abs=1e-5)
    # A forbidden token makes a call impossible.
    bad = sequences[:1].clone()
    bad[0, -1] = STOP + 5
    with torch.no_grad():
        assert policy.evaluate(obs, bad)[0].item() < -1e8


def test_prompt_numbers_are_read_where_the_encoder_sees_them():
    prompt = "A 22 × 33.5 mm block at (-27.5, 0, 11) mm; M6 bolts, v2.1.3"
    numbers, number_at = prompt_numbers([prompt, "none"], prompt_bytes=64, max_numbers=6)
    assert numbers[0].tolist()[:5] == [22.0, 33.5, -27.5, 0.0, 11.0]
    assert number_at[0].tolist() == [3, 11, 30, 33, 37, -1]  # byte of each last digit ("×": 2)
    assert number_at[1].tolist() == [-1] * 6
    data = prompt.encode()
    assert [chr(data[i]) for i in number_at[0][:5]] == ["2", "5", "5", "0", "1"]


def test_the_pointer_copies_a_prompt_number_into_its_nearest_bin():
    grammar = Grammar(tiny, max_points=4)
    policy = Policy(grammar, PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=16,
                                          feedback_bytes=8))  # fmt: skip
    with torch.no_grad():
        policy.copy_gate.bias.fill_(30.0)  # copy only
    numbers = torch.zeros(1, policy.config.max_numbers)
    numbers[0, 0] = 0.7  # nearest bin of move.dx (0, 0.5, 1): 0.5
    number_at = torch.full((1, policy.config.max_numbers), -1)
    number_at[0, 0] = 4
    obs = {
        "images": torch.zeros((1, 6, 16, 16), dtype=torch.uint8),
        "text": torch.randint(1, 257, (1, 24)),
        "step": torch.zeros(1, dtype=torch.long),
        "numbers": numbers,
        "number_at": number_at,
    }
    sequences = torch.as_tensor(
        [s for s in every_sequence(grammar) if grammar.ops[s[0] - grammar.op_start] == "move"]
    )
    batch = {k: v.expand(len(sequences), *v.shape[1:]) for k, v in obs.items()}
    with torch.no_grad():
        p = policy.evaluate(batch, sequences)[0].double().exp()
    dx = [grammar.decode(s.tolist())["arguments"]["dx"] for s in sequences]
    share = sum(pi for pi, d in zip(p.tolist(), dx, strict=True) if d == 0.5) / p.sum().item()
    assert share > 0.999
    huge = dict(batch, numbers=torch.full_like(batch["numbers"], float("inf")))  # "1" + 40 zeros
    with torch.no_grad():
        assert torch.isfinite(policy.evaluate(huge, sequences)[0]).all()
    policy.config.copy = False  # the generator alone spreads over the three bins
    with torch.no_grad():
        p = policy.evaluate(batch, sequences)[0].double().exp()
    share = sum(pi for pi, d in zip(p.tolist(), dx, strict=True) if d == 0.5) / p.sum().item()
    assert 0.2 < share < 0.5
