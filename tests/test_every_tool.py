"""One trainer for every tool: grammars, standard spaces and a short training run on each env."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.trainer.build import build_grammar, env_registry, suite_calls
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.train import TrainConfig, Trainer
from toolgym.envs.domains import get_domain
from toolgym.envs.grammar import Grammar, text_choices
from toolgym.envs.tasks.suites import suites
from toolgym.envs.wrappers.standard import StandardSpaces

SMALL = PolicyConfig(image_size=32, hidden=64, embed=16, prompt_bytes=64, feedback_bytes=32)
EVERY_SUITE = sorted(suites())


def test_blender_names_are_choices_drawn_from_the_suite():
    registry = env_registry("toolgym/Blender-v0")
    with pytest.raises(ValueError, match=r"add_primitive\.name: a text parameter with no finite"):
        Grammar(registry)
    choices = text_choices(registry, suite_calls("blender-placement", None))
    assert {"Crate", "Box"} <= set(choices["set_location.name"])  # two-crates' objects
    # An unused tool's ``name`` takes the suite's object names; a parameter no call fills
    # (a new name) leaves its tool out of the grammar.
    assert choices["delete_object.name"] == choices["set_location.name"]
    assert "rename_object.new_name" not in choices
    grammar = build_grammar("toolgym/Blender-v0", "blender-placement", 64, all_tools=True)
    assert "rename_object" not in grammar.ops and "delete_object" in grammar.ops
    call = {"name": "set_location", "arguments": {"name": "Box", "x": -1, "y": -1, "z": 0.5}}
    assert grammar.snap(call) == call


@pytest.mark.parametrize("suite", EVERY_SUITE)
def test_standard_spaces_and_the_trainers_grammar_cover_every_suite(suite):
    env_id = get_domain(suites()[suite].domain).env_id
    env = StandardSpaces(gym.make(env_id, suite=suite, action_mode="tool"), max_bins=16)
    for _ in range(20):  # any action is a call whose every parameter the registry accepts
        call = env.grammar.decode_json(env.tokens(env.action_space.sample()))
        assert env.grammar.encode(call)  # checks each parameter (not cross-parameter rules)
    mask = env.action_masks()
    assert mask.shape == (env.action_space.nvec.sum(),) and mask.any()
    env.close()
    grammar = build_grammar(env_id, suite, 64, all_tools=False)
    for task in suites()[suite].tasks:  # every reference is sayable, names included
        for call in task.tool_calls or ():
            tool, original = env.unwrapped.registry.parse_call(call)
            if tool.name not in grammar.ops:  # a tool the training split never uses
                continue
            snapped = grammar.snap(call)
            for name, value in original.items():
                if isinstance(value, str):
                    assert snapped["arguments"][name] == value, (task.id, name)
    assert json.dumps(grammar.describe())  # checkpoints store it


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "env_id, suite",
    [
        ("toolgym/CadQuery-v0", "primitives"),
        ("toolgym/Blender-v0", "blender-placement"),
        ("toolgym/GameScene-v0", "scene-layout"),
    ],
)
def test_the_trainer_trains_on_every_tool(tmp_path, env_id, suite):
    config = TrainConfig(
        env_id=env_id,
        suite=suite,
        steps=8,
        num_envs=1,
        num_steps=4,
        max_steps=2,
        view_size=16,
        out=str(tmp_path),
        progress=False,
        policy=SMALL,
        asynchronous=False,
        ppo=PPOConfig(num_minibatches=1, update_epochs=1),
    )
    trainer = Trainer(config)
    before = [p.detach().clone() for p in trainer.policy.parameters()]
    row = trainer.train(resume=False)
    assert trainer.iteration == 2 and row["env_steps"] == 8
    assert row["episodes"] >= 2 and 0.0 <= row["score"] <= 1.0  # two-call episodes ended
    assert any(
        not np.array_equal(a.numpy(), b.detach().numpy())
        for a, b in zip(before, trainer.policy.parameters(), strict=True)
    )
