"""The standard-spaces wrapper: MultiDiscrete calls, token-id texts; SB3's PPO trains on it."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.wrappers.standard import StandardSpaces


def make(view_size: int = 16) -> StandardSpaces:
    inner = gym.make(
        "toolgym/CadQuery-v0",
        suite="primitives",
        action_mode="tool",
        max_steps=2,
        view_size=view_size,
    )
    return StandardSpaces(inner, max_bins=16, prompt_tokens=64, feedback_tokens=32)


@pytest.fixture
def env():
    wrapped = make()
    yield wrapped
    wrapped.close()


def test_spaces_and_repair(env):
    grammar = env.grammar
    assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
    # one token for the operation, then the widest tool's (sweep's) 22 parameter slots and a stop
    assert env.action_space.nvec[0] == len(grammar.ops) and len(env.action_space.nvec) == 24
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

    from toolgym.envs.episode.spaces import CODE_POINTS, UnicodeText

    space = UnicodeText(8)
    flat = utils.flatten(space, "40 × 3°")
    assert flat.tolist() == [ord(c) for c in "40 × 3°"] + [CODE_POINTS]
    assert utils.unflatten(space, flat) == "40 × 3°" and utils.flatdim(space) == 8
    env = FlattenObservation(gym.make("toolgym/CadQuery-v0", view_size=8))
    observation, _ = env.reset(seed=0, options={"task": "curated/block-centred"})  # has "×"
    assert env.observation_space.contains(observation)
    prompt = utils.unflatten(env.env.observation_space, observation)["prompt"]
    assert prompt == env.unwrapped.task.prompt and "×" in prompt
    env.close()


def test_trainer_spaces_give_the_trainers_inputs_copies_derived_values_and_stop():
    """The like-for-like peer's spaces: the trainer's own inputs; one entry per slot whose
    indices are the grammar's tokens and copies of the prompt's numbers; the masks; derived
    values computed in the episode's context; stop."""
    from conftest import trainer_spaces
    from toolgym.agents.trainer.observations import batch_observations

    env = trainer_spaces()
    grammar, nvec = env.grammar, env.action_space.nvec
    try:
        raw, _ = env.env.reset(seed=0)
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        rows = {k: [raw[k]] for k in ("prompt", "feedback", "step")}
        rows |= {k: raw[k][None] for k in ("image", "target")}
        expected = batch_observations(rows, env.policy)  # what the trainer's policy receives
        assert set(obs) == set(expected)
        assert all(np.array_equal(obs[k], expected[k][0]) for k in obs)
        assert obs["numbers"][:4].tolist() == [38.0, 24.0, 18.0, -16.5]
        # One entry per slot: the tool, then add_sphere's four, fillet_edges' two.
        assert [f"{t}.{s.param}" for t, s in env.entries] == [
            "add_sphere.diameter",
            "add_sphere.x",
            "add_sphere.y",
            "add_sphere.z",
            "fillet_edges.radius",
            "fillet_edges.edges",
        ]
        size = [s.stop - s.start for _, s in env.entries]
        assert nvec.tolist() == [3, *(n + 8 for n in size[:5]), size[5]]
        # Masks: no fillet before a part; a copy only of the prompt's four numbers.
        masks = np.split(env.action_masks(), np.cumsum(nvec)[:-1])
        assert masks[0].tolist() == [True, False, True]  # add_sphere, fillet_edges, stop
        for mask, n in zip(masks[1:6], size[:5], strict=True):
            assert mask[:n].all() and mask[n:].tolist() == [True] * 4 + [False] * 4
        assert masks[6].all()  # the edge choices: no numbers to copy

        def sphere(z: int) -> np.ndarray:
            action = np.zeros(len(nvec), int)  # diameter, x, y: copy the 1st, 2nd, 3rd number
            action[1:4] = [size[k] + k for k in range(3)]
            action[4] = z
            return action

        derived_z = size[3] - 1  # "the previous call's top", z's last grammar token
        # The previous call's top at the first step: the env's failed step, nothing built.
        _, reward, _, _, info = env.step(sphere(derived_z))
        assert "no previous call" in info["error"] and reward < 0
        # Copying the 1st, 2nd, 3rd and 3rd numbers: a sphere at z = 18.
        _, _, _, _, info = env.step(sphere(size[3] + 2))
        assert json.loads(info["tool_call"])["arguments"] == {
            "diameter": 38.0,
            "x": 24.0,
            "y": 18.0,
            "z": 18.0,
        }
        assert "error" not in info and env.action_masks()[1]  # a fillet is allowed now
        # Now "the previous call's top" is computed: 18 + 38 / 2.
        _, _, _, _, info = env.step(sphere(derived_z))
        assert json.loads(info["tool_call"])["arguments"]["z"] == 37.0 and "error" not in info
        stop = np.zeros(len(nvec), int)
        stop[0] = grammar.ops.index("stop")
        _, _, terminated, truncated, info = env.step(stop)
        assert json.loads(info["tool_call"]) == {"name": "stop", "arguments": {}}
        assert terminated and not truncated and not info["final_report"]["passed"]
        # Copying the four numbers in order writes the reference call: the part passes.
        env.reset(seed=0)
        _, _, terminated, _, info = env.step(sphere(size[3] + 3))
        assert json.loads(info["tool_call"]) == json.loads(env.unwrapped.task.tool_calls[0])
        assert terminated and info["final_report"]["passed"]
    finally:
        env.close()
