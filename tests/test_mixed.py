"""Cross-tool training: a mix of suites, one env per worker for every tool, one policy."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from toolgym.agents.trainer.observations import observe
from toolgym.agents.trainer.policy import PolicyConfig, to_torch
from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.sampler import WeaknessSampler
from toolgym.agents.trainer.train import TrainConfig, Trainer
from toolgym.envs.wrappers.mixed import MixedEnv, parse_mix

MIX = "cadquery:primitives,blender:blender-placement,scene:scene-layout"
# The mix the cross-tool benchmark trains on: Blender's procedural moves (one to three calls).
MOVES = "cadquery:primitives,blender:blender-moves,scene:scene-layout"
TOOLS = ("cadquery", "blender", "scene")
SMALL = PolicyConfig(image_size=32, hidden=64, embed=16, prompt_bytes=64, feedback_bytes=32)


@pytest.mark.parametrize(
    "mix, message",
    [
        ("", "the mix is empty; give tool:suite pairs; known tools: cadquery, blender, scene"),
        (" , ", "the mix is empty"),
        ("cad:primitives", "unknown tool 'cad' in the mix; known tools: cadquery, blender, scene"),
        (
            "cadquery:scene-layout",
            "unknown cadquery suite 'scene-layout' in the mix; known: "
            "cad-edits, cad-families, cad-styles, curated, primitives, procedural",
        ),
        (
            "blender:blender-move",
            "unknown blender suite 'blender-move' in the mix; known: "
            "blender-edits, blender-families, blender-lighting, blender-material, "
            "blender-modelling, blender-moves, blender-placement",
        ),
        ("scene:scene-layout,scene:scene-logic", "scene is named twice in the mix"),
    ],
)
def test_a_bad_mix_is_one_line_naming_what_is_known(mix, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_mix(mix)
    assert parse_mix(MIX) == (
        ("cadquery", "primitives"),
        ("blender", "blender-placement"),
        ("scene", "scene-layout"),
    )


@pytest.mark.slow
def test_the_cli_exits_2_on_a_bad_mix(tmp_path):
    for mix in ("", "cad:primitives", "blender:blender-move"):
        done = subprocess.run(
            [sys.executable, "-m", "toolgym", "train", "--mix", mix, "--out", str(tmp_path / "r")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "known" in lines[0]
        assert "Traceback" not in done.stderr and not (tmp_path / "r").exists()


def test_the_sampler_spans_tools_and_the_weakest_tools_share_rises():
    levels = [f"cad/{k}" for k in range(200)] + ["blender/a", "blender/b", "scene/a"]
    groups = ["cadquery"] * 200 + ["blender"] * 2 + ["scene"]
    sampler = WeaknessSampler(levels, groups=groups)
    start = sampler.group_shares()
    assert start == pytest.approx({"cadquery": 1 / 3, "blender": 1 / 3, "scene": 1 / 3})
    for level, group in zip(levels, groups, strict=True):  # CAD and scenes easy, Blender hard
        sampler.update(level, 0.1 if group == "blender" else 0.9)
    shares = sampler.group_shares()
    assert shares["blender"] > 0.45 and shares["blender"] > max(shares["cadquery"], shares["scene"])
    assert sampler.weights().sum() == pytest.approx(1.0)
    sampler.update("blender/a", 1.0)
    sampler.update("blender/b", 1.0)  # Blender is learnt: its share falls back
    assert sampler.group_shares()["blender"] < shares["blender"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_one_policy_trains_on_all_three_tools(tmp_path):
    env = MixedEnv(MIX, view_size=16, max_steps=1)
    observation, info = env.reset(seed=0, options={"task": "scene-layout/dining/train-0"})
    assert info["tool"] == "scene" and observation["tool"] == 2
    assert env.observation_space.contains(observation)  # scene views resized to the common size
    call = env.task.tool_calls[0]
    call = json.loads(call) if isinstance(call, str) else dict(call)
    call["name"] = f"scene.{call['name']}"  # as the mixed grammar writes it
    observation, _, _, _, info = env.step(json.dumps(call))
    assert "error" not in info
    env.close()

    config = TrainConfig(
        mix=MIX,
        steps=6,
        num_envs=1,
        num_steps=6,
        max_steps=1,
        view_size=16,
        out=str(tmp_path),
        progress=False,
        policy=SMALL,
        asynchronous=False,
        bc_steps=3,
        bc_episodes=3,
        ppo=PPOConfig(num_minibatches=1, update_epochs=1),
    )
    trainer = Trainer(config)
    grammar, policy = trainer.grammar, trainer.policy
    assert {op.split(".")[0] for op in grammar.ops} == {"cadquery", "blender", "scene"}
    # The first token is one of the episode's tool's operations, whatever the weights say.
    obs = {
        "image": np.zeros((3, 32, 32, 3), np.uint8),
        "target": np.zeros((3, 32, 32, 3), np.uint8),
        "prompt": ["a"] * 3,
        "feedback": [""] * 3,
        "step": [0] * 3,
        "tool": [0, 1, 2],
    }
    with torch.no_grad():
        tokens, *_ = policy.act(to_torch(observe(obs, SMALL), "cpu"))
    for row, tool in zip(tokens.numpy(), ("cadquery", "blender", "scene"), strict=True):
        assert grammar.decode(row)["name"].startswith(f"{tool}.")
    trainer.train(resume=False)
    with (tmp_path / "progress.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    weights = [float(row[f"weight_{tool}"]) for tool in ("cadquery", "blender", "scene")]
    assert sum(weights) == pytest.approx(1.0) and all(0.0 <= w <= 1.0 for w in weights)
    shares = [float(row[f"share_{tool}"]) for tool in ("cadquery", "blender", "scene")]
    assert sum(shares) == pytest.approx(1.0)  # (a Blender or scene episode may take all six)


@pytest.mark.timeout(300)
def test_each_tool_plays_as_many_calls_as_its_longest_reference(tmp_path):
    """One ``max_steps`` for every tool cut Blender's placements (four to six calls) after two:
    their demonstrations were halves and no episode could place every object. Each tool now
    gets at least its suite's longest reference."""
    config = TrainConfig(mix=MIX, max_steps=2, view_size=16, out=str(tmp_path))
    assert config.tool_max_steps() == {"cadquery": 2, "blender": 6, "scene": 6}
    kwargs = config.env_kwargs()
    env = MixedEnv(kwargs.pop("mix"), **kwargs)
    assert env.observation_space["step"].n == 7
    observation, _ = env.reset(seed=0, options={"task": "blender-placement/two-crates"})
    calls = [json.loads(c) for c in env.task.tool_calls]
    assert len(calls) == 4
    for k, call in enumerate(calls):
        call["name"] = f"blender.{call['name']}"
        observation, _, terminated, truncated, info = env.step(json.dumps(call))
        assert env.observation_space.contains(observation)
        assert terminated == (k == 3) and not truncated  # passed on the fourth call
    assert info["final_report"]["passed"] and info["final_report"]["score"] > 0.99
    env.close()


@pytest.mark.timeout(300)
def test_a_short_mixed_run_with_blender_moves_steps_every_tool_and_logs_each(tmp_path):
    """Three iterations of one env: the sampler plays a tool not yet played once it has played
    one, so every tool's env steps and ends an episode, and each iteration's row has every
    tool's score (``nan`` where none ended), share of the steps and share of the weight."""
    config = TrainConfig(
        mix=MOVES,
        steps=18,
        num_envs=1,
        num_steps=6,
        max_steps=1,
        view_size=16,
        out=str(tmp_path),
        progress=False,
        policy=SMALL,
        asynchronous=False,
        ppo=PPOConfig(num_minibatches=1, update_epochs=1),
    )
    assert config.tool_max_steps() == {"cadquery": 1, "blender": 3, "scene": 6}
    Trainer(config).train(resume=False)
    with (tmp_path / "progress.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 and int(float(rows[0]["env_steps"])) == 6
    steps = {t: sum(float(r[f"share_{t}"]) * 6 for r in rows) for t in TOOLS}
    scores = {t: [float(r[f"score_{t}"]) for r in rows] for t in TOOLS}
    assert all(steps[t] >= 1 for t in TOOLS), steps  # every tool's env stepped
    assert all(np.isfinite(scores[t]).any() for t in TOOLS), scores  # and ended an episode
    for row in rows:
        shares = [float(row[f"share_{t}"]) for t in TOOLS]
        weights = [float(row[f"weight_{t}"]) for t in TOOLS]
        assert sum(shares) == pytest.approx(1.0) and sum(weights) == pytest.approx(1.0)
        assert all(0.0 <= s <= 1.0 for s in [*scores_in(row), *weights])


def scores_in(row: dict[str, str]) -> list[float]:
    return [v for t in TOOLS if np.isfinite(v := float(row[f"score_{t}"]))]
