"""The run's seed streams, each named: one seed fans out into every random choice a run makes.

A run is reproducible because every stream below is fixed by ``TrainConfig.seed`` (and, for the
rollouts, the iteration): a resumed run repeats an uninterrupted one, and two processes agree.
The offsets are arbitrary but fixed; they only keep the streams apart (changing one changes
every run's numbers).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import torch

SAMPLING_OFFSET = 1  # the policy's sampled calls: apart from the learner's generator
ORACLE_RESETS_OFFSET = 7919  # the oracle episodes that make the demonstrations
# Iteration ``k``'s rollout restarts its envs from ``seed * ROLLOUT_STRIDE + k * num_envs``
# (env ``i`` then takes ``+ i``): a prime stride, so nearby runs' rollouts never share resets.
ROLLOUT_STRIDE = 1_000_003
EVALUATION_RESETS_OFFSET = 104_729  # the evaluation's episodes: none a training rollout's


def seed_everything(seed: int) -> torch.Generator:
    """Python's, numpy's and torch's global generators seeded with ``seed``; and the learner's
    own generator (minibatch order, cloning batches), seeded alike."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


@dataclasses.dataclass(frozen=True)
class SeedStreams:
    """Every stream a run draws from, from its one ``seed``."""

    seed: int

    def learner(self) -> torch.Generator:
        """Minibatch order and cloning batches (and the global generators: see
        :func:`seed_everything`)."""
        return seed_everything(self.seed)

    def sampling(self, device: torch.device) -> torch.Generator:
        """The policy's sampled calls during rollouts, on the policy's device (CUDA's generator
        lives there)."""
        return torch.Generator(device).manual_seed(self.seed + SAMPLING_OFFSET)

    def oracle_fallback(self) -> np.random.Generator:
        """Random calls for an env past the oracle's queue (not recorded)."""
        return np.random.default_rng(self.seed)

    def oracle_resets(self) -> int:
        """The first reset seed of the oracle episodes (behaviour cloning's demonstrations)."""
        return self.seed + ORACLE_RESETS_OFFSET

    def rollout_resets(self, iteration: int, num_envs: int) -> int:
        """The first reset seed of iteration ``iteration``'s rollout: an iteration depends only
        on the state saved at its start."""
        return self.seed * ROLLOUT_STRIDE + iteration * num_envs

    def evaluation_sampling(self, device: torch.device) -> torch.Generator:
        """The evaluated policy's calls when not greedy, on its device."""
        return torch.Generator(device).manual_seed(self.seed)

    def evaluation_resets(self) -> int:
        """The first reset seed of the evaluation's episodes."""
        return self.seed + EVALUATION_RESETS_OFFSET
