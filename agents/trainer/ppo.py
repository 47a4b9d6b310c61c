"""Proximal Policy Optimisation, after CleanRL's ``ppo.py`` and its implementation details.

Each detail is named where it happens (CleanRL's list, "The 37 Implementation Details of PPO"):
GAE; the clipped surrogate objective; the clipped value loss; the entropy bonus; global gradient
clipping; linear learning-rate annealing (in the trainer's loop, :func:`annealed_lr`);
per-minibatch advantage normalisation; the optional approximate-KL early stop. Two additions,
named where they happen: the advantages' scale has a floor (``norm_adv_floor``), and behaviour
cloning also fits the value head to the demonstrations' returns.

One action is one tool call (a whole token sequence); its log-probability is the sum over its
tokens, so the ratio and the KL are per call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import torch
from torch import nn

from toolgym.agents.trainer.policy import Policy


@dataclasses.dataclass
class PPOConfig:
    """Hyper-parameters; the names are CleanRL's."""

    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    # The least standard deviation advantages are divided by, in reward units (scores are in
    # [0, 1]). When every call of a minibatch scores alike (a cloned policy that succeeds), the
    # plain normalisation turns the critic's small errors into unit advantages, and the updates
    # walk the policy away from what works.
    norm_adv_floor: float = 0.05
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    # The approximate-KL early stop: the update ends before a minibatch step once the policy is
    # 1.5 x this far from the one that acted (as SB3 checks it; None: every epoch runs). After
    # cloning, every call of a rollout scores alike and the advantages are noise, yet Adam's
    # steps stay learning-rate sized: one unchecked update of 4 x 4 steps moved a cloned
    # enclosure policy 0.54 nats per call and its third call from shell to a second fillet.
    target_kl: float | None = None


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    next_value: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Generalised Advantage Estimation over a ``(T, N)`` rollout.

    ``dones[t]`` is 1 where the episode ended with step ``t`` (nothing after it is bootstrapped);
    ``next_value`` ``(N,)`` is the value of the observation after the last step. Returns
    ``(advantages, returns)``, both ``(T, N)``; returns = advantages + values.
    """
    steps = rewards.shape[0]
    advantages = np.zeros_like(rewards, dtype=np.float64)
    last = np.zeros(rewards.shape[1:], np.float64)
    for t in reversed(range(steps)):
        following = next_value if t == steps - 1 else values[t + 1]
        alive = 1.0 - dones[t]
        delta = rewards[t] + gamma * following * alive - values[t]
        last = delta + gamma * gae_lambda * alive * last
        advantages[t] = last
    return advantages, advantages + values


def annealed_lr(config: PPOConfig, iteration: int, iterations: int) -> float:
    """Linear learning-rate annealing: from the full rate at iteration 0 to 0 after the last."""
    if not config.anneal_lr:
        return config.learning_rate
    return config.learning_rate * (1.0 - iteration / iterations)


def normalised(advantages: torch.Tensor, floor: float) -> torch.Tensor:
    """Advantages less their mean, over their standard deviation or ``floor``, the larger."""
    return (advantages - advantages.mean()) / advantages.std().clamp(min=floor)


def update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    batch: Mapping[str, torch.Tensor],
    config: PPOConfig,
    generator: torch.Generator,
) -> dict[str, float]:
    """PPO epochs over one rollout (flattened: ``obs`` entries, ``tokens``, ``log_probs``,
    ``advantages``, ``returns``, ``values``). Returns the losses and diagnostics CleanRL logs."""
    size = batch["tokens"].shape[0]
    minibatch = max(1, size // config.num_minibatches)
    clip_fractions, approx_kl, old_approx_kl = [], torch.zeros(()), torch.zeros(())
    pg_loss = v_loss = entropy_loss = torch.zeros(())
    stopped_at = config.update_epochs
    for epoch in range(config.update_epochs):
        order = torch.randperm(size, generator=generator)
        for start in range(0, size, minibatch):
            index = order[start : start + minibatch]
            obs = {k: v[index] for k, v in batch["obs"].items()}
            new_log_prob, entropy, new_value = policy.evaluate(obs, batch["tokens"][index])
            log_ratio = new_log_prob - batch["log_probs"][index]
            ratio = log_ratio.exp()
            with torch.no_grad():
                old_approx_kl = (-log_ratio).mean()
                approx_kl = ((ratio - 1) - log_ratio).mean()  # Schulman's k3 estimator
                clip_fractions.append(((ratio - 1.0).abs() > config.clip_coef).float().mean())
            if config.target_kl is not None and approx_kl > 1.5 * config.target_kl:
                stopped_at = epoch  # approx-KL early stop, before this minibatch's step
                break
            advantages = batch["advantages"][index]
            if config.norm_adv and len(index) > 1:  # per-minibatch advantage normalisation
                advantages = normalised(advantages, config.norm_adv_floor)
            # Clipped surrogate objective.
            pg_loss1 = -advantages * ratio
            pg_loss2 = -advantages * torch.clamp(ratio, 1 - config.clip_coef, 1 + config.clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            returns, old_values = batch["returns"][index], batch["values"][index]
            if config.clip_vloss:  # clipped value loss
                v_unclipped = (new_value - returns) ** 2
                v_clipped = old_values + torch.clamp(
                    new_value - old_values, -config.clip_coef, config.clip_coef
                )
                v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - returns) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - returns) ** 2).mean()
            entropy_loss = entropy.mean()  # entropy bonus (masked entropy, summed per call)
            loss = pg_loss - config.ent_coef * entropy_loss + config.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)  # global clip
            optimizer.step()
        if stopped_at < config.update_epochs:
            break
    values, returns = batch["values"].cpu().numpy(), batch["returns"].cpu().numpy()
    variance = np.var(returns)
    explained = np.nan if variance == 0 else 1 - np.var(returns - values) / variance
    return {
        "policy_loss": pg_loss.item(),
        "value_loss": v_loss.item(),
        "entropy": entropy_loss.item(),
        "old_approx_kl": float(old_approx_kl),
        "approx_kl": float(approx_kl),
        "clipfrac": float(torch.stack(clip_fractions).mean()) if clip_fractions else 0.0,
        "explained_variance": float(explained),
        "epochs": float(stopped_at),
    }


def behaviour_cloning(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    obs: Mapping[str, torch.Tensor],
    tokens: torch.Tensor,
    steps: int,
    batch_size: int,
    generator: torch.Generator,
    max_grad_norm: float = 0.5,
    returns: torch.Tensor | None = None,
    vf_coef: float = 0.5,
    bin_sigma: float = 0.0,
) -> list[float]:
    """Supervised warm start: ``steps`` gradient steps of the demonstrations' negative
    log-likelihood (per call, summed over tokens), plus, given the demonstrations' ``returns``,
    ``vf_coef`` times the value head's squared error on them. PPO then starts with a critic that
    expects what the cloned policy earns: an untrained one makes every advantage of a policy
    that already succeeds a large, noisy number, and the first updates undo the cloning.
    ``bin_sigma`` > 0: a numeric slot's target is soft-binned, a Gaussian of that many bins
    about the demonstrated one (``GrammarMasks.soft_targets``), so near misses cost less than
    far ones. Returns the negative log-likelihood (of the demonstrated tokens) per step."""
    losses = []
    size = tokens.shape[0]
    for _ in range(steps):
        index = torch.randint(size, (min(batch_size, size),), generator=generator)
        batch = {k: v[index] for k, v in obs.items()}
        if bin_sigma > 0:  # soft-binned targets: cross-entropy against the spread target
            log_p, value = policy.token_log_probs(batch, tokens[index])
            nll = -log_p.gather(2, tokens[index].unsqueeze(2)).sum(dim=(1, 2)).mean()
            targets = policy.masks.soft_targets(tokens[index], bin_sigma)
            loss = -(targets * log_p).sum(dim=(1, 2)).mean()
        else:
            log_prob, value = policy.log_likelihood(batch, tokens[index])
            nll = -log_prob.mean()
            loss = nll
        if returns is not None:
            loss = loss + vf_coef * 0.5 * ((value - returns[index]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
        optimizer.step()
        losses.append(nll.item())
    return losses
