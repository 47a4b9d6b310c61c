"""The standard-spaces wrapper: MultiDiscrete calls, token-id texts; SB3's PPO trains on it."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.wrappers import StandardSpaces


def make(view_size: int = 16) -> StandardSpaces:
    inner = gym.make(
        "toolgym/CadQuery-v0", suite="primitives", action_mode="tool", max_steps=2,
        view_size=view_size,
    )  # fmt: skip
    return StandardSpaces(inner, max_bins=16, prompt_tokens=64, feedback_tokens=32)


@pytest.fixture
def env():
    wrapped = make()
    yield wrapped
    wrapped.close()


def test_spaces_and_repair(env):
    grammar = env.grammar
    assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
    assert env.action_space.nvec[0] == len(grammar.ops) and len(env.action_space.nvec) == 21
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    prompt = bytes(int(b) - 1 for b in observation["prompt"] if b).decode()
    assert prompt == env.unwrapped.task.prompt[: len(prompt)] and len(prompt) > 20
    # add_box with every index past its slot's end: clipped to each slot's last bin.
    action = np.full(len(env.action_space.nvec), 10**6)
    action[0] = grammar.ops.index("add_box")
    call = json.loads(grammar.decode_json(env.tokens(action)))
    assert call == {
        "name": "add_box",
        "arguments": {
            p: s.values[-1]
            for p, s in zip(
                ("length", "width", "height", "x", "y", "z"), grammar.slots["add_box"], strict=True
            )
        },
    }
    # A polygon of 3 points: the other points' entries are ignored.
    action = np.zeros(len(env.action_space.nvec), int)
    action[0] = grammar.ops.index("extrude_polygon")
    assert len(json.loads(grammar.decode_json(env.tokens(action)))["arguments"]["points"]) == 3
    # What repair cannot fix (a cut before any part) is the env's failed step, not an exception.
    action = np.zeros(len(env.action_space.nvec), int)
    action[0] = grammar.ops.index("cut_box")
    observation, reward, _, _, info = env.step(action)
    assert reward == pytest.approx(-0.1) and "needs an existing part" in info["error"]
    assert env.observation_space.contains(observation)


@pytest.mark.slow
def test_stable_baselines3_ppo_trains_on_it():
    from stable_baselines3 import PPO

    env = make(view_size=32)  # SB3's CNN needs images of 36 px or more: 64 px tiles
    model = PPO("MultiInputPolicy", env, n_steps=8, batch_size=8, n_epochs=1, seed=0, device="cpu")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=16)
    assert model.num_timesteps >= 16
    changed = [
        not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True)
    ]
    assert any(changed)  # the update ran
    env.close()


def test_native_text_observations_flatten_as_code_points():
    from gymnasium.spaces import utils
    from gymnasium.wrappers import FlattenObservation

    from toolgym.envs.spaces import CODE_POINTS, UnicodeText

    space = UnicodeText(8)
    flat = utils.flatten(space, "40 × 3°")
    assert flat.tolist() == [ord(c) for c in "40 × 3°"] + [CODE_POINTS]
    assert utils.unflatten(space, flat) == "40 × 3°" and utils.flatdim(space) == 8
    env = FlattenObservation(gym.make("toolgym/CadQuery-v0", view_size=8))
    observation, _ = env.reset(seed=0)  # the first curated prompt has "×"
    assert env.observation_space.contains(observation)
    prompt = utils.unflatten(env.env.observation_space, observation)["prompt"]
    assert prompt == env.unwrapped.task.prompt and "×" in prompt
    env.close()
