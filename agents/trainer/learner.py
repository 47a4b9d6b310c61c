"""The learner: the policy's updates, PPO's on rollouts and behaviour cloning's on demonstrations.

It holds the optimiser and the learner's generator (minibatch order, cloning batches); the math
is ``toolgym.agents.trainer.ppo``'s (after CleanRL).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from toolgym.agents.trainer.demonstrations import Demonstrations
from toolgym.agents.trainer.policy import Policy, to_torch
from toolgym.agents.trainer.ppo import PPOConfig, annealed_lr, behaviour_cloning, gae, update
from toolgym.agents.trainer.rollout import Rollout


def adam(policy: Policy, learning_rate: float) -> torch.optim.Adam:
    """The optimiser, with CleanRL's ``eps``."""
    return torch.optim.Adam(policy.parameters(), lr=learning_rate, eps=1e-5)


class Learner:
    """Updates ``policy`` on ``device`` with ``ppo``'s settings over a run of ``iterations``."""

    def __init__(
        self,
        policy: Policy,
        ppo: PPOConfig,
        iterations: int,
        generator: torch.Generator,
        device: torch.device,
    ) -> None:
        self.policy, self.ppo, self.iterations = policy, ppo, iterations
        self.generator, self.device = generator, device
        self.optimizer = adam(policy, ppo.learning_rate)

    def update(self, rollout: Rollout, iteration: int) -> tuple[dict[str, float], float]:
        """GAE and PPO's update on a rollout. The ratio is taken against the stored log-probs
        of the policy that acted, so a rollout one update old is corrected for (and clipped).
        Returns the update's figures and its learning rate."""
        ppo, device = self.ppo, self.device
        lr = annealed_lr(ppo, iteration, self.iterations)  # linear LR annealing
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        stored, values = rollout["stored"], rollout["values"]
        advantages, returns = gae(  # GAE
            rollout["rewards"],
            values,
            rollout["dones"],
            rollout["next_value"],
            ppo.gamma,
            ppo.gae_lambda,
        )
        obs = {k: np.concatenate([b[k] for b in stored]) for k in stored[0]}
        flat = {
            "obs": to_torch(obs, device),
            "tokens": torch.as_tensor(np.concatenate(rollout["tokens"]), device=device),
            "log_probs": torch.as_tensor(rollout["log_probs"].reshape(-1), device=device),
            "advantages": _floats(advantages.reshape(-1), device),
            "returns": _floats(returns.reshape(-1), device),
            "values": torch.as_tensor(values.reshape(-1), device=device),
        }
        return update(self.policy, self.optimizer, flat, ppo, self.generator), lr

    def clone(
        self,
        demonstrations: Demonstrations,
        steps: int,
        batch_size: int,
        learning_rate: float,
        bin_sigma: float = 0.0,
        advance: Callable[..., None] = lambda n, status="": None,
    ) -> list[float]:
        """``steps`` supervised steps on the demonstrations (calls and, for the value head,
        their returns-to-go); ``advance(n, status=...)`` hears each chunk. Returns the negative
        log-likelihood per step. PPO then starts with a fresh optimiser state: Adam's moments
        from the supervised steps would push the first updates along the cloning loss."""
        observations, device = demonstrations.observations, self.device
        obs = to_torch({k: np.stack([o[k] for o in observations]) for k in observations[0]}, device)
        tokens = torch.as_tensor(np.array(demonstrations.tokens), device=device)
        returns = torch.as_tensor(demonstrations.returns, device=device)
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate
        losses: list[float] = []
        # In chunks, for the bar: the same steps, minibatches and result as one call.
        chunk = max(1, steps // 100)
        while len(losses) < steps:
            n = min(chunk, steps - len(losses))
            losses += behaviour_cloning(
                self.policy,
                self.optimizer,
                obs,
                tokens,
                n,
                batch_size,
                self.generator,
                self.ppo.max_grad_norm,
                returns,
                self.ppo.vf_coef,
                bin_sigma,
            )
            advance(n, status=f"NLL {losses[-1]:.2f}")
        self.optimizer = adam(self.policy, self.ppo.learning_rate)
        return losses


def _floats(values: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.as_tensor(values, dtype=torch.float32, device=device)
