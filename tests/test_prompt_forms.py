"""Image-only prompts: the prompt names the kind of task, the target exists only as pictures."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environments

PRIMITIVE = "primitives/primitive/test-0"


def test_cadquery_image_prompt_has_no_numbers_and_the_same_target():
    described = gym.make("toolgym/CadQuery-v0", task=PRIMITIVE, action_mode="tool")
    image = gym.make("toolgym/CadQuery-v0", task=PRIMITIVE, action_mode="tool", prompt_form="image")
    try:
        said, _ = described.reset(seed=0)
        shown, _ = image.reset(seed=0)
        assert re.search(r"\d", said["prompt"]) and not re.search(r"\d", shown["prompt"])
        assert "primitive" in shown["prompt"]
        assert np.array_equal(said["target"], shown["target"]) and shown["target"].any()
        after, *_ = image.step(
            '{"name": "add_box", "arguments": {"length": 5, "width": 5, "height": 5}}'
        )
        assert not re.search(r"\d", after["prompt"])  # every step, not only the first
    finally:
        described.close()
        image.close()
    with pytest.raises(ValueError, match="prompt_form"):
        gym.make("toolgym/CadQuery-v0", prompt_form="sketch")


def test_an_image_only_edit_names_no_change_and_shows_where_it_starts():
    """An edit asked by pictures: the program the part starts from, but not the change (its
    numbers are the start's, never the target's)."""
    from toolgym.envs.cadquery.env import image_prompt
    from toolgym.envs.cadquery.families import FAMILIES

    for name in ("flange", "plate_holes", "spur_gear"):
        edit = FAMILIES[name].edit_task(0, "test")
        prompt = image_prompt(edit)
        assert edit.start in prompt and "target views" in prompt
        request = edit.prompt.split("\n\n", 1)[0].split(": ", 1)[1]  # the change, as said
        assert request not in prompt


def test_game_scene_image_prompt_has_no_numbers():
    env = gym.make("toolgym/GameScene-v0", prompt_form="image")
    try:
        obs, _ = env.reset(seed=0)
        assert obs["prompt"] and not re.search(r"\d", obs["prompt"]), obs["prompt"]
        assert obs["target"].any()
    finally:
        env.close()
    with pytest.raises(ValueError, match="prompt_form"):
        gym.make("toolgym/GameScene-v0", prompt_form="sketch")


def test_the_stop_call_ends_the_episode_with_the_part_as_it_stands():
    """Tool mode's ``{"name": "stop"}``: no sandbox call, no penalty; the episode ends
    (terminated) and the exact tier scores the part built so far."""
    env = gym.make("toolgym/CadQuery-v0", task=PRIMITIVE, action_mode="tool", error_penalty=0.1)
    try:
        env.reset(seed=0)
        box = '{"name": "add_box", "arguments": {"length": 10, "width": 10, "height": 10}}'
        _, _, terminated, _, built = env.step(box)
        assert not terminated
        obs, reward, terminated, truncated, info = env.step('{"name": "stop"}')
        assert terminated and not truncated and info["final_report"]["tier"] == "exact"
        assert "error" not in info and obs["feedback"].startswith("stopped")
        final = info["final_report"]["score"]
        # The reward settles the difference between the step's score and the exact one.
        assert reward == pytest.approx(final - built["report"]["score"], abs=1e-9)
        assert final == pytest.approx(built["report"]["score"], abs=0.05)
        with pytest.raises(RuntimeError, match="over"):
            env.step('{"name": "stop"}')
    finally:
        env.close()
