"""CadQuery-v0's ``depth`` observations: where each pixel's ray meets the part, in mm."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery.families import family

VIEW = 32  # px per view; the 2 x 2 tile is (64, 64)


def extents(tile: np.ndarray) -> dict[str, float]:
    """The part's extents read off a depth tile (iso, front / right, top), as the policy can."""

    def view(row: int, column: int) -> np.ndarray:
        return tile[row * VIEW : (row + 1) * VIEW, column * VIEW : (column + 1) * VIEW]

    front, right, top = view(0, 1), view(1, 0), view(1, 1)
    return {
        "x_min": -right[..., 1].max(),
        "x_max": right[..., 0].max(),
        "y_min": -front[..., 0].max(),
        "y_max": front[..., 1].max(),
        "z_min": -top[..., 1].max(),
        "z_max": top[..., 0].max(),
    }


def box_task(split: str = "test") -> str:
    """A primitives task whose part is a box (seed found by its parameters, not hard-coded)."""
    fam = family("primitive")
    seed = next(s for s in range(50) if fam.task(s, split).parameters["kind"] == "box")
    return fam.task(seed, split).id


def test_depth_views_give_the_targets_and_the_parts_extents_to_the_micrometre():
    task = box_task()
    p = family("primitive").task(int(task.rsplit("-", 1)[1]), "test").parameters
    env = gym.make(
        "toolgym/CadQuery-v0",
        task=task,
        action_mode="tool",
        view_size=VIEW,
        max_steps=3,
        depth=True,
        prompt_form="image",
    )
    try:
        obs, _ = env.reset(seed=0)
        assert obs in env.observation_space
        assert obs["depth"].shape == obs["target_depth"].shape == (2 * VIEW, 2 * VIEW, 2)
        assert np.isneginf(obs["depth"]).all()  # nothing built yet
        want = {
            "x_min": p["x"] - p["length"] / 2,
            "x_max": p["x"] + p["length"] / 2,
            "y_min": p["y"] - p["width"] / 2,
            "y_max": p["y"] + p["width"] / 2,
            "z_min": p["z"] - p["height"] / 2,
            "z_max": p["z"] + p["height"] / 2,
        }
        got = extents(obs["target_depth"])
        assert all(abs(got[k] - want[k]) < 1e-3 for k in want), (got, want)
        # The pixels are 7 mm wide here; the depth still tells 0.5 mm apart.
        call = '{"name": "add_box", "arguments": {"length": 20.5, "width": 10, "height": 4}}'
        obs, *_ = env.step(call)
        built = extents(obs["depth"])
        assert abs(built["x_max"] - built["x_min"] - 20.5) < 1e-3
        assert abs(built["z_max"] - 2.0) < 1e-3 and abs(built["y_min"] + 5.0) < 1e-3
        before = obs["depth"]
        obs, reward, *_ = env.step('{"name": "add_box", "arguments": {"length": -1}}')
        assert reward < 0 and np.array_equal(obs["depth"], before)  # a failed step: unchanged
    finally:
        env.close()


def test_without_the_target_its_depth_is_empty_and_without_depth_there_is_none():
    hidden = gym.make(
        "toolgym/CadQuery-v0",
        task=box_task(),
        action_mode="tool",
        view_size=VIEW,
        depth=True,
        show_target=False,
    )
    plain = gym.make("toolgym/CadQuery-v0", task=box_task(), action_mode="tool", view_size=VIEW)
    try:
        obs, _ = hidden.reset(seed=0)
        assert np.isneginf(obs["target_depth"]).all() and not obs["target"].any()
        assert "depth" not in plain.reset(seed=0)[0] and "depth" not in plain.observation_space
    finally:
        hidden.close()
        plain.close()


@pytest.mark.timeout(600)
def test_check_env_passes_with_depth():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("toolgym/CadQuery-v0", suite="primitives", max_steps=2, depth=True)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_a_trainer_reading_depth_needs_cadquery_and_measuring_needs_depth():
    from toolgym.agents.trainer.policy import Policy, PolicyConfig
    from toolgym.agents.trainer.train import TrainConfig
    from toolgym.envs.cadquery.tools import registry
    from toolgym.envs.grammar import Grammar

    reading = PolicyConfig(depth=True, measure=True)
    assert TrainConfig(policy=reading).env_kwargs()["depth"] is True
    assert "depth" not in TrainConfig().env_kwargs()
    with pytest.raises(ValueError, match="toolgym/GameScene-v0 has none"):
        TrainConfig(env_id="toolgym/GameScene-v0", policy=reading)
    with pytest.raises(ValueError, match="set depth=True too"):
        Policy(Grammar(registry), PolicyConfig(measure=True))
