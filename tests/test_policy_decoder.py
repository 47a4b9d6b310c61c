"""The policy's decoder: teacher forcing (PPO's update, cloning) scores a call exactly as sampling
it did, though it reads the text once for every position; probabilities skip subnormal floats."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from tests.test_trainer import family_calls
from toolgym.agents.trainer.build import calls_grammar, env_registry
from toolgym.agents.trainer.observations import batch_observations
from toolgym.agents.trainer.policy import EXP_FLOOR, Policy, PolicyConfig, probabilities, to_torch

SMALL = PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=160, feedback_bytes=16)
DEPTH = dataclasses.replace(SMALL, depth=True, measure=True)


def observed(config: PolicyConfig) -> tuple[dict[str, torch.Tensor], list[str], Policy]:
    """Twelve steps of ``plate_holes`` (a plate, then its holes: numbers to copy at most
    positions), a random policy over their calls' grammar, and, for ``depth``, a 20 mm box's
    depth views in place of the blank ones."""
    torch.manual_seed(0)
    obs, calls = family_calls("plate_holes", "train", range(4))
    if config.depth:
        depth = np.full((len(calls), 16, 16, 2), -np.inf, np.float32)
        depth[:, 4:12, 4:12] = (10.0, -10.0)
        obs = obs | {"depth": depth, "target_depth": depth}
    grammar = calls_grammar(env_registry("toolgym/CadQuery-v0"), calls)
    return to_torch(batch_observations(obs, config), "cpu"), calls, Policy(grammar, config)


@pytest.mark.parametrize("config", [SMALL, DEPTH], ids=["text", "depth-measures"])
def test_teacher_forcing_scores_a_sampled_call_as_sampling_did(config):
    inputs, _, policy = observed(config)
    with torch.no_grad():
        sampled: list[torch.Tensor] = []
        generator = torch.Generator().manual_seed(1)
        tokens, log_prob, entropy, value = policy._decode(inputs, None, generator, every=sampled)
        forced_log_prob, forced_entropy, forced_value = policy.evaluate(inputs, tokens)
        lean_log_prob, _ = policy.log_likelihood(inputs, tokens)
        every, _ = policy.token_log_probs(inputs, tokens)
    assert log_prob.min() < -5  # an untrained policy's calls: far from certain
    torch.testing.assert_close(forced_log_prob, log_prob, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(lean_log_prob, log_prob, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(forced_entropy, entropy, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(forced_value, value)
    torch.testing.assert_close(every, torch.stack(sampled, dim=1), atol=1e-4, rtol=1e-5)


def test_cloning_scores_the_demonstrated_calls_as_the_full_mixture_does():
    """The lean path mixes only the given token's probability; the pointer copies most of
    ``plate_holes``' numbers, so the mixture is what is compared."""
    inputs, calls, policy = observed(SMALL)
    tokens = torch.as_tensor(np.array([policy.grammar.encode(c) for c in calls]))
    log_prob, entropy, _ = policy.evaluate(inputs, tokens)
    lean, _ = policy.log_likelihood(inputs, tokens)
    torch.testing.assert_close(lean, log_prob.detach(), atol=1e-4, rtol=1e-5)
    assert (entropy > 0).all()
    lean.sum().backward()  # and it carries gradient to the pointer and the generator
    assert policy.copy_query.weight.grad.abs().sum() > 0
    assert policy.logits_head[-1].weight.grad.abs().sum() > 0


def test_probabilities_are_exp_with_subnormals_as_zero():
    log_p = torch.tensor([-1e9, -100.0, EXP_FLOOR - 0.5, EXP_FLOOR, -3.0, 0.0])
    expected = [0.0, 0.0, 0.0, math.exp(EXP_FLOOR), math.exp(-3.0), 1.0]
    torch.testing.assert_close(probabilities(log_p), torch.tensor(expected))
    assert torch.finfo(torch.float32).tiny <= math.exp(EXP_FLOOR)  # a normal float
