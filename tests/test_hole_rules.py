"""The plate-and-holes rule: a plate and its through-holes read off image-only plate_holes
targets (64-pixel RGB views, 2.84 mm a pixel in the family's frame), with and without looks."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from bench_scripts import bench_script

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery.families import family
from toolgym.envs.cadquery.framing import family_framing
from toolgym.envs.cadquery.hole_rules import PlateHoleRule

# Test seeds of plate_holes: 2 mm holes (under a pixel of the task's views), 7 mm and 12 mm.
SMALL, MIDDLE, LARGE = 1, 2, 17
FRAMING = family_framing("plate_holes")
PITCH = 2 * FRAMING.half_width / 64  # mm a pixel of the task's own 64-pixel views


@pytest.fixture(scope="module")
def plates():
    bench = bench_script("learn_cadquery")
    folder = Path(tempfile.mkdtemp(prefix="toolgym-holes-"))
    env = gym.make(
        "toolgym/CadQuery-v0",
        suite=bench.family_suite("plate_holes", 0, LARGE + 1, folder, framed=True),
        split="test",
        action_mode="tool",
        prompt_form="image",
        view_size=64,
        max_steps=bench.LOOKING_STEPS,
    )
    yield env
    env.close()


def _episode(
    env, rule: PlateHoleRule, seed: int, name: str = "plate_holes"
) -> tuple[list[dict], dict, list[float]]:
    """The rule's whole episode on test seed ``seed`` of family ``name``: its actions, the last
    info, the rewards."""
    obs, _ = env.reset(seed=0, options={"task": f"bench-{name}-0/test-{seed}"})
    actions, rewards = [], []
    while not actions or actions[-1]["name"] != "stop":
        actions.append(json.loads(rule.act(obs)))
        obs, reward, terminated, truncated, info = env.step(json.dumps(actions[-1]))
        rewards.append(reward)
        assert "error" not in info, info["error"]
        if terminated or truncated:
            break
    return actions, info, rewards


def _calls(actions: list[dict]) -> Counter:
    made = [a for a in actions if a["name"] not in ("look", "stop")]
    return Counter(json.dumps(a, sort_keys=True) for a in made)


@pytest.mark.parametrize("seed", [SMALL, MIDDLE, LARGE])
def test_with_looks_the_rule_writes_the_reference_calls_of_each_plate(plates, seed):
    """Its box, then a search of the top face and a look at each hole: the reference's five
    calls exactly (in its own order), a passing part, and looks that earn nothing."""
    actions, info, rewards = _episode(plates, PlateHoleRule(FRAMING), seed)
    reference = [json.loads(c) for c in family("plate_holes").task(seed, "test").tool_calls]
    assert _calls(actions) == _calls(reference)
    report = info.get("final_report") or info["report"]
    assert report["passed"] and report["score"] == pytest.approx(1.0, abs=1e-3)
    looks = [r for a, r in zip(actions, rewards, strict=True) if a["name"] == "look"]
    assert len(looks) >= 8 and not any(looks)  # overview, six edges, a window, a hole at least


def test_without_looks_the_rule_reads_the_plate_to_a_pixel_and_misses_holes_under_one(plates):
    """The task's own views (what a policy that cannot look reads): the plate's sides within a
    pixel; 2 mm holes (under a pixel) not seen at all, 12 mm holes each found within a pixel."""
    rule = PlateHoleRule(FRAMING, looks=False)
    for seed, holes in ((SMALL, 0), (LARGE, 4)):
        actions, _, _ = _episode(plates, rule, seed)
        box, *cuts = [a for a in actions if a["name"] != "stop"]
        reference = [json.loads(c) for c in family("plate_holes").task(seed, "test").tool_calls]
        for key in ("length", "width", "height"):
            assert abs(box["arguments"][key] - reference[0]["arguments"][key]) <= PITCH
        assert len(cuts) == holes and all(c["name"] == "cut_hole" for c in cuts)
        for cut in cuts:
            nearest = min(
                reference[1:],
                key=lambda r: np.hypot(
                    r["arguments"]["x"] - cut["arguments"]["x"],
                    r["arguments"]["y"] - cut["arguments"]["y"],
                ),
            )
            for key in ("x", "y", "diameter"):
                assert abs(cut["arguments"][key] - nearest["arguments"][key]) <= PITCH


def test_one_look_measures_every_hole_it_holds_so_a_grid_takes_few(tmp_path):
    """plate_grid_holes (a pattern of holes in the reference): the same rule, one ``cut_hole`` a
    hole, a passing part; its looks at the holes measure a 2 x 2 block each where they fit."""
    bench = bench_script("learn_cadquery")
    suite = bench.family_suite("plate_grid_holes", 0, 4, tmp_path, framed=True)
    env = gym.make(
        "toolgym/CadQuery-v0",
        suite=suite,
        split="test",
        action_mode="tool",
        prompt_form="image",
        view_size=64,
        max_steps=80,
    )
    rule = PlateHoleRule(family_framing("plate_grid_holes"))
    try:
        actions, info, _ = _episode(
            env, rule, 3, "plate_grid_holes"
        )  # a 6 x 5 grid of 4.5 mm holes
    finally:
        env.close()
    pattern = json.loads(family("plate_grid_holes").task(3, "test").tool_calls[1])["arguments"]
    holes = pattern["count_x"] * pattern["count_y"]
    assert sum(a["name"] == "cut_hole" for a in actions) == holes == 30
    assert (info.get("final_report") or info["report"])["passed"]
    assert len(rule._measured) == holes and len(actions) <= 13 + holes // 3 + holes + 1


def test_a_blank_target_gets_an_empty_box_then_stop():
    """No part in the views: nothing to read, so the default box and the stop, no exception."""
    rule = PlateHoleRule(FRAMING)
    blank = {"target": np.full((128, 128, 3), 255, np.uint8), "step": 0}
    assert json.loads(rule.act(blank)) == {"name": "add_box", "arguments": {}}
    assert json.loads(rule.act(blank | {"step": 1}))["name"] == "stop"


def test_the_bench_plays_a_copy_of_the_rule_in_each_env(tmp_path):
    """Two envs play interleaved episodes, each with its own copy of the rule (what one plate's
    looks found would otherwise land in the other's): every plate built with looks, and the
    rule's figure on the task's own views is far below."""
    from toolgym.agents.trainer.train import TrainConfig

    bench = bench_script("learn_cadquery")
    suite = bench.family_suite("plate_holes", 0, 4, tmp_path, framed=True)
    config = TrainConfig(
        suite=suite,
        max_steps=6,
        num_envs=2,
        progress=False,
        out=str(tmp_path),
        prompt_form="image",
        view_size=64,
    )
    looking = bench.run_hole_rule(config, None, looks=True)
    plain = bench.run_hole_rule(config, None)
    assert looking["test"]["episodes"] == plain["test"]["episodes"] == 4
    assert looking["test"]["success_rate"] == 1.0 and looking["fixed_rule"]
    assert plain["test"]["score"] < 0.5
