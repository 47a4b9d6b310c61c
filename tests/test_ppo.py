"""PPO's pieces: GAE against a hand-computed example; the advantages' floor; the approx-KL early
stop; the sampler."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from toolgym.agents.trainer.ppo import PPOConfig, annealed_lr, gae, normalised
from toolgym.agents.trainer.sampler import SamplerConfig, WeaknessSampler


def test_gae_matches_a_hand_computed_example():
    # One env, three steps; the episode ends with step 1, so step 0 does not see step 2.
    rewards = np.array([[1.0], [0.0], [1.0]])
    values = np.array([[0.5], [0.4], [0.3]])
    dones = np.array([[0.0], [1.0], [0.0]])
    advantages, returns = gae(rewards, values, dones, np.array([0.2]), gamma=0.9, gae_lambda=0.8)
    # t=2: 1 + 0.9·0.2 − 0.3 = 0.88
    # t=1: 0 − 0.4 = −0.4 (ended: no bootstrap, no later advantage)
    # t=0: (1 + 0.9·0.4 − 0.5) + 0.9·0.8·(−0.4) = 0.86 − 0.288 = 0.572
    assert advantages[:, 0] == pytest.approx([0.572, -0.4, 0.88])
    assert returns[:, 0] == pytest.approx([1.072, 0.0, 1.18])


def test_learning_rate_anneals_linearly_to_zero():
    config = PPOConfig(learning_rate=1e-3)
    assert [annealed_lr(config, i, 4) for i in range(4)] == pytest.approx(
        [1e-3, 7.5e-4, 5e-4, 2.5e-4]
    )
    assert annealed_lr(PPOConfig(anneal_lr=False), 3, 4) == PPOConfig().learning_rate


def test_the_sampler_draws_weak_levels_more_often():
    sampler = WeaknessSampler(["a", "b", "c"], SamplerConfig(staleness=0.0))
    assert sampler.weights().tolist() == pytest.approx([1 / 3] * 3)  # unseen first, in turn
    sampler.update("a", 1.0)
    assert sampler.weights()[0] == 0.0
    for level, score in (("b", 0.1), ("c", 0.6), ("a", 1.0), ("b", 0.1), ("c", 0.6)):
        sampler.update(level, score)
    weights = sampler.weights()
    assert weights.sum() == pytest.approx(1.0)
    assert weights[1] > weights[2] > weights[0] > 0  # weakest most, the solved one still drawn
    off = WeaknessSampler(["a", "b", "c"], SamplerConfig(enabled=False))
    off.update("a", 1.0)
    assert off.weights().tolist() == pytest.approx([1 / 3] * 3)
    # Staleness lifts the level played longest ago: "a" (2 episodes ago) above "c" (just now).
    stale = WeaknessSampler(["a", "b", "c"], SamplerConfig(staleness=0.5))
    for level, score in (("a", 1.0), ("b", 0.1), ("c", 0.6), ("a", 1.0), ("b", 0.1), ("c", 0.6)):
        stale.update(level, score)
    assert stale.weights()[0] > stale.weights()[2]
    restored = WeaknessSampler(["a", "b", "c"], SamplerConfig(staleness=0.0))
    restored.load_state_dict(sampler.state_dict())
    assert np.array_equal(restored.weights(), weights)


def test_advantages_of_calls_that_score_alike_stay_small():
    """The normalisation's floor: a minibatch whose calls all earned the same (critic noise of
    0.001) keeps advantages near 0 instead of blowing the noise up to unit size."""
    noise = torch.tensor([0.001, -0.001, 0.0005, -0.0005])
    assert normalised(noise, 0.05).abs().max().item() < 0.03
    assert normalised(noise, 0.0).std().item() == pytest.approx(1.0)
    spread = torch.tensor([1.0, 0.0, 0.5, 0.2])  # real differences: the usual unit scale
    assert normalised(spread, 0.05).std().item() == pytest.approx(1.0)


def _rollout(policy, size: int) -> dict:
    """A flattened rollout of ``size`` calls the policy itself sampled (so the first
    minibatch's ratio is 1), with uneven advantages and returns."""
    torch.manual_seed(0)
    config = policy.config
    obs = {
        "images": torch.randint(0, 255, (size, 6, 16, 16), dtype=torch.uint8),
        "text": torch.randint(1, 257, (size, config.prompt_bytes + config.feedback_bytes)),
        "step": torch.zeros(size, dtype=torch.long),
        "numbers": torch.rand(size, config.max_numbers) * 40,
        "number_at": torch.arange(config.max_numbers).repeat(size, 1),
    }
    with torch.no_grad():
        tokens, log_probs, _, values = policy.act(obs, torch.Generator().manual_seed(1))
    return {
        "obs": obs,
        "tokens": tokens,
        "log_probs": log_probs,
        "values": values,
        "advantages": torch.randn(size),
        "returns": torch.rand(size),
    }


@pytest.fixture
def one_thread():
    """One torch thread, as the trainer runs: OpenMP threads spin against a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("target_kl", [1e-8, None])
def test_the_approx_kl_early_stop_ends_the_update_after_one_step(target_kl, one_thread):
    """With a tiny ``target_kl`` the first minibatch steps (its policy is the one that acted:
    KL 0) and the second finds the policy moved, so the update stops after exactly one
    optimizer step; with ``None`` every epoch runs every minibatch."""
    from toolgym.agents.trainer.policy import Policy, PolicyConfig
    from toolgym.agents.trainer.ppo import update
    from toolgym.envs.cadquery.tools import registry
    from toolgym.envs.grammar import Grammar

    torch.manual_seed(0)
    policy = Policy(
        Grammar(registry, max_bins=8, tools=["add_box", "add_sphere"]),
        PolicyConfig(
            image_size=16, hidden=16, embed=8, prompt_bytes=16, feedback_bytes=8, max_numbers=4
        ),
    )
    batch = _rollout(policy, 16)
    config = PPOConfig(num_minibatches=4, update_epochs=3, target_kl=target_kl)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    start = [p.detach().clone() for p in policy.parameters()]
    after_steps: list[list[torch.Tensor]] = []
    optimizer.register_step_post_hook(
        lambda *_: after_steps.append([p.detach().clone() for p in policy.parameters()])
    )
    stats = update(policy, optimizer, batch, config, torch.Generator().manual_seed(2))
    final = list(policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(start, final, strict=True))
    if target_kl is None:
        assert len(after_steps) == 3 * 4 and stats["epochs"] == 3
        return
    assert len(after_steps) == 1 and stats["epochs"] == 0  # stopped in the first epoch
    assert stats["approx_kl"] > 1.5 * target_kl  # the KL that stopped it
    # The parameters changed once: they are what the one step left.
    assert all(torch.equal(a, b) for a, b in zip(after_steps[0], final, strict=True))
