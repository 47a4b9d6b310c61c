"""The registered numeric ids: clients that take only an env id (CleanRL, SB3, MaskablePPO) run."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from torch import nn

import toolgym

STD_IDS = sorted(toolgym.STANDARD_ENVIRONMENTS)


def test_each_tool_has_a_numeric_id_with_masks():
    assert STD_IDS == [
        "toolgym/Blender-Std-v0",
        "toolgym/CadQuery-Std-v0",
        "toolgym/GameScene-Std-v0",
    ]
    for env_id in STD_IDS:
        env = gym.make(f"toolgym:{env_id}")  # what a client that imports by id writes
        assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
        numeric = (gym.spaces.Box, gym.spaces.Discrete)
        assert all(isinstance(s, numeric) for s in env.observation_space.spaces.values())
        masks = env.get_wrapper_attr("action_masks")()
        assert masks.dtype == bool and masks.shape == (env.action_space.nvec.sum(),)
        env.close()


@pytest.mark.slow
def test_cadquery_std_masks_part_tools_until_a_part_exists_and_passes_check_env():
    env = gym.make("toolgym/CadQuery-Std-v0", suite="primitives", max_steps=2, view_size=16)
    check_env(env)  # Gymnasium warns that it is wrapped: StandardSpaces is the env here
    wrapper = env.get_wrapper_attr("grammar"), env.get_wrapper_attr("action_masks")
    grammar, masks = wrapper
    env.reset(seed=0)
    ops = masks()[: len(grammar.ops)]
    assert not ops[grammar.ops.index("fillet_edges")] and ops[grammar.ops.index("add_box")]
    action = np.zeros(len(env.action_space.nvec), int)
    action[0] = grammar.ops.index("add_box")
    _, _, _, _, info = env.step(action)
    assert "error" not in info and masks()[: len(grammar.ops)].all()
    env.close()


class Agent(nn.Module):
    """CleanRL's ppo_multidiscrete agent shape: an MLP over the flat observation, one categorical
    per action dimension."""

    def __init__(self, envs: gym.vector.VectorEnv) -> None:
        super().__init__()
        size = int(np.prod(envs.single_observation_space.shape))
        self.nvec = envs.single_action_space.nvec.tolist()
        self.critic = nn.Sequential(nn.Linear(size, 32), nn.Tanh(), nn.Linear(32, 1))
        self.actor = nn.Sequential(nn.Linear(size, 32), nn.Tanh(), nn.Linear(32, sum(self.nvec)))

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        x = x.float() / 255.0
        split = torch.split(self.actor(x), self.nvec, dim=1)
        dists = [torch.distributions.Categorical(logits=logits) for logits in split]
        if action is None:
            action = torch.stack([d.sample() for d in dists], dim=1)
        log_prob = torch.stack([d.log_prob(a) for d, a in zip(dists, action.T, strict=True)])
        entropy = torch.stack([d.entropy() for d in dists])
        return action, log_prob.sum(0), entropy.sum(0), self.critic(x)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("env_id", STD_IDS)
def test_a_cleanrl_style_loop_and_sb3_run_on_the_id_alone(env_id):
    """CleanRL's loop, the env id its only toolgym-specific line (vector env, flattened
    observations, a rollout, one clipped-surrogate update); then SB3's PPO (MaskablePPO, which
    reads ``action_masks()``, on CAD) on the same id."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    kwargs = {"max_steps": 2, "view_size": 40}  # SB3's CNN needs 36 px or more

    def make_env():
        return gym.wrappers.FlattenObservation(gym.make(env_id, **kwargs))

    envs = gym.vector.SyncVectorEnv([make_env])
    agent = Agent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs, _ = envs.reset(seed=0)
    stored, actions, log_probs, rewards = [], [], [], []
    for _ in range(3):
        x = torch.as_tensor(obs)
        with torch.no_grad():
            action, log_prob, _, _ = agent.get_action_and_value(x)
        obs, reward, *_ = envs.step(action.numpy())
        stored.append(x), actions.append(action), log_probs.append(log_prob)
        rewards.append(torch.as_tensor(reward, dtype=torch.float32))
    x, action = torch.cat(stored), torch.cat(actions)
    returns = torch.cat(rewards).flip(0).cumsum(0).flip(0)
    _, new_log_prob, entropy, value = agent.get_action_and_value(x, action)
    ratio = (new_log_prob - torch.cat(log_probs)).exp()
    advantage = returns - value.squeeze(1).detach()
    loss = -torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean()
    loss = loss + 0.5 * ((value.squeeze(1) - returns) ** 2).mean() - 0.01 * entropy.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss) and all(r.abs().max() <= 1.5 for r in rewards)
    envs.close()

    env = gym.make(env_id, **kwargs)
    learner = MaskablePPO if env_id == "toolgym/CadQuery-Std-v0" else PPO
    model = learner("MultiInputPolicy", env, n_steps=4, batch_size=4, n_epochs=1, seed=0)
    model.learn(total_timesteps=4)
    assert model.num_timesteps >= 4
    env.close()


def test_trainer_spaces_pass_check_env_and_maskable_ppo_learns_on_them():
    """The like-for-like peer's spaces (``TrainerSpaces``): Gymnasium's checker passes, and
    sb3-contrib's MaskablePPO runs a rollout and an update with the grammar's masks."""
    from sb3_contrib import MaskablePPO

    from conftest import trainer_spaces

    env = trainer_spaces(view_size=20, max_steps=2)  # SB3's CNN needs 36 px or more: 40 px
    try:
        check_env(env)
        model = MaskablePPO(
            "MultiInputPolicy", env, n_steps=4, batch_size=4, n_epochs=1, seed=0, device="cpu"
        )
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(total_timesteps=4)
        assert model.num_timesteps >= 4
        after = model.policy.parameters()
        assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    finally:
        env.close()


def test_the_peer_copies_a_number_measured_off_the_depth_as_the_trainer_can():
    """With the trainer's depth and measured numbers: the peer sees the depth readings (finite),
    and a copy index past the prompt's numbers takes a measure, though the prompt has no number
    at all: the target's centre along the top view's axis is the sphere's z, -16.5 mm exactly;
    its extent there is the 38 mm diameter to the depth's sampling (pixel centres 12 mm apart
    miss the sphere's pole by up to 8 mm: 37.5 on the grid)."""
    from conftest import trainer_spaces
    from toolgym.agents.trainer.depth import MEASURES, READINGS

    env = trainer_spaces(view_size=20, max_steps=2, depth=True)
    try:
        check_env(env)
        obs, _ = env.reset(seed=0)
        assert obs["readings"].shape == (READINGS,) and np.isfinite(obs["readings"]).all()
        assert not (obs["number_at"] >= 0).any()  # an image-only prompt: nothing to copy
        tool = env.grammar.ops.index("add_sphere")
        entry = env._first["add_sphere"]  # the diameter, the sphere's first slot
        slot = env.grammar.slots["add_sphere"][0]
        first_copy = slot.stop - slot.start + env.policy.max_numbers
        assert env.action_space.nvec[entry] == first_copy + MEASURES
        masks = env.action_masks()[sum(env.action_space.nvec[:entry]) :][: first_copy + MEASURES]
        assert masks[first_copy : first_copy + 12].sum() == 0  # no part yet: its measures off
        assert masks[first_copy + 12 :].all()  # the target shows in every view
        action = np.zeros(len(env.action_space.nvec), np.int64)
        action[0], action[entry] = tool, first_copy + 12 + 3 * 3  # target, top view, extent
        z = env.grammar.slots["add_sphere"][3]  # its centre along that axis
        action[entry + 3] = z.stop - z.start + env.policy.max_numbers + 12 + 3 * 3 + 1
        arguments = json.loads(env.call(action))["arguments"]
        assert arguments["z"] == -16.5 and 37 <= arguments["diameter"] <= 38
    finally:
        env.close()
