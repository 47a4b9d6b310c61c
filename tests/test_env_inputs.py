"""toolgym/CadQuery-v0 with default arguments, bad arguments and actions that used to escape."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import numpy as np
import pytest
import trimesh
from gymnasium.utils.env_checker import check_env

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.tasks.suites import get_task
from toolgym.verifiers import geometry
from toolgym.verifiers.report import describe_invalid

PLATE_TASK = "procedural/plate_holes/train-0"
BOX = "result = cq.Workplane().box(20, 20, 5)"


@pytest.fixture
def code_env():
    environment = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, max_steps=6)
    yield environment
    environment.close()


@pytest.fixture
def tool_env():
    environment = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, action_mode="tool")
    yield environment
    environment.close()


def assert_undone_to_the_box(environment: gym.Env) -> None:
    """The failed step changed nothing: the part is still the 20 × 20 × 5 box."""
    info = environment.step(
        "result = result.faces('>Z').workplane().hole(4)"
        if environment.unwrapped.action_mode == "code"
        else json.dumps({"name": "cut_hole", "arguments": {"diameter": 4}})
    )[4]
    assert "error" not in info, info.get("error")
    assert info["report"]["validity"]["volume"] == pytest.approx(2000 - np.pi * 4 * 5, rel=1e-3)


def test_check_env_passes_with_default_arguments():
    environment = gym.make("toolgym/CadQuery-v0")
    try:
        check_env(environment.unwrapped)
    finally:
        environment.close()


def test_timings_are_opt_in():
    environment = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, timings_in_info=True)
    try:
        environment.reset(seed=0)
        info = environment.step(BOX)[4]
        assert set(info["timings"]) == {"exec", "tessellate", "verify", "render", "snapshot"}
        assert info["sandbox_wall_s"] > 0
        info = environment.step("raise ValueError('no')")[4]  # a failed step rolls back
        assert set(info["timings"]) == {"exec", "rollback"}
    finally:
        environment.close()


@pytest.mark.parametrize("mode", ["code", "tool"])
def test_a_lone_surrogate_is_a_failed_step(mode):
    environment = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, action_mode=mode)
    try:
        environment.reset(seed=0)
        box = {"name": "add_box", "arguments": {"length": 20, "width": 20, "height": 5}}
        environment.step(BOX if mode == "code" else box)
        action = "x = '\ud800'" if mode == "code" else '{"name": "add_box\ud800"}'
        obs, reward, terminated, truncated, info = environment.step(action)
        assert info["error"] == (
            f"the action is not valid Unicode text: character {action.index(chr(0xD800))} is "
            "\\ud800 (surrogates not allowed)"
        )
        assert reward == pytest.approx(-0.1) and not (terminated or truncated)
        assert obs["step"] == 2 and environment.observation_space.contains(obs)
        assert_undone_to_the_box(environment)
    finally:
        environment.close()


# Calls OpenCASCADE cannot build, and calls outside the schema: one line in the tool's terms.
TOOL_FAILURES = {
    "fillet too large": (
        {"name": "fillet_edges", "arguments": {"radius": 99}},
        "fillet_edges: radius 99 mm is too large for this part's edges",
    ),
    "chamfer too large": (
        {"name": "chamfer_edges", "arguments": {"length": 60}},
        "chamfer_edges: length 60 mm is too large for this part's edges",
    ),
    "negative revolve radius": (
        {"name": "revolve_profile", "arguments": {"points": [[-3, 0], [5, 0], [5, 5]]}},
        "revolve_profile: point 0 has radius -3 mm; every profile point needs radius >= 0",
    ),
    "shell thicker than the part": (
        {"name": "shell", "arguments": {"thickness": 50}},
        "shell: thickness 50 mm is too thick for this part: no room inside",
    ),
    "zero-area polygon": (
        {"name": "extrude_polygon", "arguments": {"points": [[0, 0], [1, 1], [2, 2]], "height": 5}},
        "extrude_polygon: the points enclose no area (they lie on one line or repeat); "
        "a solid needs a face",
    ),
    "self-crossing profile": (
        {"name": "revolve_profile", "arguments": {"points": [[1, 0], [6, 5], [6, 0], [1, 8]]}},
        "invalid solid: ",  # OpenCASCADE builds it, inside out
    ),
}


@pytest.mark.parametrize("name", list(TOOL_FAILURES))
def test_tool_failures_are_one_line_in_the_tools_terms(tool_env, name):
    call, message = TOOL_FAILURES[name]
    tool_env.reset(seed=0)
    box = {"name": "add_box", "arguments": {"length": 20, "width": 20, "height": 5}}
    assert "error" not in tool_env.step(box)[4]
    obs, reward, _, _, info = tool_env.step(call)
    assert info["error"].startswith(message)
    assert obs["feedback"] == f"error: {info['error']}"  # one line: no traceback, no frames
    assert reward == pytest.approx(-0.1)
    assert_undone_to_the_box(tool_env)


def test_a_selector_that_matches_no_edge_says_so(tool_env):
    tool_env.reset(seed=0)
    tool_env.step({"name": "add_sphere", "arguments": {"diameter": 10}})
    info = tool_env.step({"name": "fillet_edges", "arguments": {"radius": 1, "edges": "|X"}})[4]
    assert info["error"] == "fillet_edges: no edge of the part matches '|X'"


def test_tools_check_their_arguments_in_scripts_too(code_env):
    code_env.reset(seed=0)
    code_env.step(BOX)
    info = code_env.step("result = tools.fillet_edges(result, -1)")[4]
    assert info["error"] == (
        "fillet_edges: parameter 'radius' = -1 mm is out of range [0.05, 100.0] mm"
    )
    info = code_env.step("result = tools.fillet_edges(result, 99)")[4]
    assert info["error"].endswith("fillet_edges: radius 99 mm is too large for this part's edges")
    assert "Standard_" not in code_env.step("result = tools.shell(5, 1)")[0]["feedback"]
    assert_undone_to_the_box(code_env)


INVALID_SOLIDS = {
    "zero-area extrude": (
        "result = cq.Workplane().polyline([(0, 0), (1, 1), (2, 2)]).close().extrude(5)",
        "invalid solid: not watertight (open or non-manifold edges)",
    ),
    "two overlapping solids": (
        "a = cq.Workplane().box(10, 10, 10).val()\n"
        "b = cq.Workplane().box(10, 10, 10).translate((5, 0, 0)).val()\n"
        "result = cq.Workplane().add(cq.Compound.makeCompound([a, b]))",
        "invalid solid: self-intersecting",
    ),
}


@pytest.mark.parametrize("name", list(INVALID_SOLIDS))
def test_an_invalid_solid_is_a_failed_step(code_env, name):
    script, message = INVALID_SOLIDS[name]
    code_env.reset(seed=0)
    code_env.step(BOX)
    obs, reward, terminated, _, info = code_env.step(script)
    assert info["error"] == message and obs["feedback"].endswith(f"error: {message}")
    assert reward == pytest.approx(-0.1) and not terminated
    assert_undone_to_the_box(code_env)


def test_describe_invalid_names_each_failed_check():
    box = trimesh.creation.box((1, 1, 1))
    open_box = trimesh.Trimesh(box.vertices, box.faces[:-2])
    inside_out = box.copy()
    inside_out.invert()
    nan = trimesh.Trimesh(box.vertices * np.nan, box.faces, process=False)
    empty = trimesh.Trimesh()
    assert geometry.validity(box)["valid"]
    assert describe_invalid(geometry.validity(open_box)).startswith("not watertight")
    assert "inside-out or zero volume" in describe_invalid(geometry.validity(inside_out))
    assert describe_invalid(geometry.validity(nan)).startswith("not finite")
    assert describe_invalid(geometry.validity(empty)).startswith("empty")


BAD_ARGUMENTS = {
    "view_size": ([0, 7, 513, 10_000, 64.5], "view_size must be an integer from 8 to 512"),
    "max_steps": ([0, -1, 1001, 2.5], "max_steps must be an integer from 1 to 1000"),
    "error_penalty": ([-0.1, 1.5, float("nan"), "x"], "error_penalty must be a number from 0"),
    "success_iou": ([0, 1.01, -1, float("inf")], "success_iou must be a number from 0.01 to 1"),
    "max_action_chars": ([0, -5, 10**7], "max_action_chars must be an integer from 1 to"),
    "split": (["validation"], "split must be one of"),
}


@pytest.mark.parametrize("name", list(BAD_ARGUMENTS))
def test_constructor_arguments_are_checked_with_clear_messages(name):
    values, message = BAD_ARGUMENTS[name]
    for value in values:
        with pytest.raises(ValueError, match=message):
            gym.make("toolgym/CadQuery-v0", **{name: value})
    with pytest.raises(TypeError, match="limits must be a sandbox Limits"):
        gym.make("toolgym/CadQuery-v0", limits={"wall_s": 5})


def test_the_edges_of_each_range_are_accepted():
    environment = gym.make(
        "toolgym/CadQuery-v0",
        task=PLATE_TASK,
        view_size=8,
        max_steps=1,
        error_penalty=0.0,
        success_iou=1.0,
        max_action_chars=1,
    )
    try:
        obs, _ = environment.reset(seed=0)
        assert obs["image"].shape == (16, 16, 3)
        obs, reward, _, truncated, info = environment.step("xx")
        assert "the limit is 1" in info["error"] and reward == 0.0 and truncated
    finally:
        environment.close()


def test_max_steps_truncation_settles_with_the_exact_tier():
    """The documented way to cap an episode; gym.make adds no TimeLimit of its own."""
    from toolgym.envs.cadquery.env import CadQueryEnv

    assert gym.spec("toolgym/CadQuery-v0").max_episode_steps is None
    documented = " ".join((CadQueryEnv.__doc__ or "").split())
    assert "Cap an episode's length with ``max_steps``, not with a ``TimeLimit``" in documented
    environment = gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, max_steps=2)
    try:
        assert not isinstance(environment, gym.wrappers.TimeLimit)
        environment.reset(seed=0)
        _, _, _, truncated, info = environment.step(BOX)
        assert not truncated and "final_report" not in info
        _, _, terminated, truncated, info = environment.step("x = 1")
        assert truncated and not terminated
        assert info["final_report"]["tier"] == "exact"
    finally:
        environment.close()


def make_plate_env() -> gym.Env:
    """Module level, so that forkserver workers can unpickle it."""
    return gym.make("toolgym/CadQuery-v0", task=PLATE_TASK, max_steps=2)


def test_async_vector_env_with_default_shared_memory():
    prompt = get_task(PLATE_TASK).prompt
    assert "×" in prompt  # outside Gymnasium's Text charset: the case that used to fail
    envs = gym.vector.AsyncVectorEnv([make_plate_env, make_plate_env])
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["prompt"] == (prompt, prompt)
        obs, _, _, _, infos = envs.step(("result = cq.Workplane().box(5, 5, 5)", "x = '°'\n1/0"))
        assert obs["feedback"][0].startswith("verifier: score")
        assert "ZeroDivisionError" in obs["feedback"][1] and "error" in infos
        assert obs["image"].shape == (2, 128, 128, 3) and obs["step"].tolist() == [1, 1]
    finally:
        envs.close()


def test_shared_texts_read_the_buffer_on_access():
    from gymnasium.vector.utils import shared_memory

    from toolgym.envs.episode.spaces import UnicodeText

    space = UnicodeText(8)
    memory = shared_memory.create_shared_memory(space, n=2)
    view = shared_memory.read_from_shared_memory(space, memory, n=2)
    shared_memory.write_to_shared_memory(space, 1, "a×\ud800°", memory)
    assert view == ("", "a×\ud800°") and view[1] == "a×\ud800°" and len(view) == 2
    shared_memory.write_to_shared_memory(space, 1, "0123456789", memory)  # cut at max_length
    assert copy.deepcopy(view) == ("", "01234567") and type(copy.deepcopy(view)) is tuple
