"""The ``look`` call: every view reframed on a region, the agent's and the target's alike, in
every environment with views; nothing else changes (``toolgym.envs.episode.look``)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from toolgym.agents.llm.messages import ToolCall, action_of, call_of
from toolgym.envs import RecordEpisodes
from toolgym.envs.episode.look import MAX_ZOOM, LookError, ViewBox, look_arguments, read_view
from toolgym.envs.recording.log import read_run
from toolgym.envs.recording.replay import verify_episode
from toolgym.envs.tasks.suites import get_task

CAD_TASK = "primitives/primitive/test-4"  # a cylinder 50 mm across, 26 mm tall (Z), at
# (-15.5, -28.5, 9.5) mm
BOX = ViewBox((-10.0, -10.0, -10.0), (10.0, 10.0, 10.0), "mm")


def look(center=None, zoom=None) -> str:
    arguments = {k: v for k, v in (("center", center), ("zoom", zoom)) if v is not None}
    return json.dumps({"name": "look", "arguments": arguments})


def frame_middle(env: gym.Env) -> list[float]:
    """The centre of the task's frame, where a look at zoom 1 shows the task's own views."""
    box = env.unwrapped._view_box()
    return [(lo + hi) / 2 for lo, hi in zip(box.low, box.high, strict=True)]


def views(image: np.ndarray, size: int) -> list[np.ndarray]:
    return [image[r : r + size, c : c + size] for r in (0, size) for c in (0, size)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"center": [0, 0]}, "look: center must be 3 numbers (x, y, z, in mm)"),
        ({"center": [0, 0, "1"]}, "look: center must be 3 numbers"),
        ({"center": [0, 0, float("nan")]}, "look: center must be 3 numbers"),
        ({"center": [0, 11, 0]}, "look: center y = 11 mm is outside the task's frame (-10 to 10"),
        ({"zoom": 0.5}, f"look: zoom must be a number from 1 to {MAX_ZOOM:g}"),
        ({"zoom": True}, "look: zoom must be a number"),
        ({"zoom": 17}, "look: zoom must be a number"),
        ({"zoom": 10**400}, "look: zoom must be a number"),
        ({"center": [10**400, 0, 0]}, "look: center must be 3 numbers"),
        ({"angle": 3}, "look: unknown argument 'angle'; it takes center and zoom"),
        ([1, 2], "look: the arguments must be an object"),
        ("{oops", "look: the arguments are not valid JSON"),
    ],
)
def test_a_bad_look_is_one_line_naming_what_is_wrong(arguments, message):
    with pytest.raises(LookError) as raised:
        read_view(arguments, BOX)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_a_look_is_read_from_dicts_json_text_and_json_arguments():
    assert read_view({}, BOX) is None and read_view("", BOX) is None  # the task's frame
    view = read_view('{"center": [1, 2, 3], "zoom": 4}', BOX)
    assert view is not None and (view.center, view.zoom) == ((1.0, 2.0, 3.0), 4.0)
    assert read_view({"zoom": 2}, BOX).center == (0.0, 0.0, 0.0)  # the frame's centre
    limit = 20_000
    assert look_arguments(look([1, 2, 3], 2), limit) == (True, {"center": [1, 2, 3], "zoom": 2})
    assert look_arguments({"name": "look"}, limit) == (True, {})
    assert look_arguments('{"name": "\\u006cook"}', limit) == (True, {})  # an escaped name
    script = "look = 1\nresult = cq.Workplane().box(1, 1, 1)"
    assert look_arguments(script, limit) == (False, None)
    assert look_arguments('{"name": "add_box", "arguments": {"look": 1}}', limit) == (False, None)
    deep = '{"name": "look", "arguments": ' + "[" * 50_000  # too deep to parse: no call
    assert look_arguments(deep, 10**6) == (False, None)


def test_a_cad_look_magnifies_both_views_and_a_step_after_it_is_drawn_in_its_frame():
    task = get_task(CAD_TASK)
    env = gym.make("toolgym/CadQuery-v0", task=CAD_TASK, depth=True, view_size=128)
    try:
        start, info = env.reset(seed=0)
        size = env.unwrapped.view_size
        assert "look" in {t["function"]["name"] for t in env.unwrapped.agent_tools()}

        # zoom 1 on the frame's centre is the task's frame, pixel for pixel
        middle = frame_middle(env)
        same, reward, terminated, truncated, info = env.step(look(middle, 1))
        assert (reward, terminated, truncated, same["step"]) == (0.0, False, False, 1)
        assert "error" not in info and not info["sandbox"]["ran"]
        for key in ("image", "target", "target_depth"):
            assert np.array_equal(same[key], start[key]), key

        # zoom 2 on the cylinder: each view covers four times the pixels, and the top view
        # still reads the flat top's height exactly (26 / 2 + 9.5 = 22.5 mm)
        centre = [-15.5, -28.5, 9.5]
        near, reward, _, _, info = env.step(look(centre, 2))
        assert reward == 0.0
        assert "views centred on (-15.5, -28.5, 9.5) mm, zoom 2" in near["feedback"]
        pairs = zip(
            views(start["target_depth"][..., 0], size),
            views(near["target_depth"][..., 0], size),
            strict=True,
        )
        for before, after in pairs:
            assert 3.8 < np.isfinite(after).sum() / np.isfinite(before).sum() < 4.2
        top = views(near["target_depth"][..., 0], size)[3]
        assert top[np.isfinite(top)].max() == pytest.approx(22.5, abs=1e-4)

        # at zoom 16 on the cylinder's -x edge, each camera stands outside the part: the right
        # view (from +x) is all part, and its middle is the same lit point of the near side as
        # at zoom 2 (a camera inside the part would see the far wall from within, darker)
        edge, *_ = env.step(look([-40.5, -28.5, 9.5], 16))
        tinted = [v[..., 2].astype(int) - v[..., 0] > 8 for v in views(edge["target"], size)]
        assert tinted[2].all() and 0.4 < tinted[1].mean() < 0.6  # the front view: half of it
        middle = size // 2
        right_near, right_edge = views(near["target"], size)[2], views(edge["target"], size)[2]
        assert np.array_equal(right_edge[middle, middle], right_near[middle, middle])
        near, *_ = env.step(look(centre, 2))

        # the view lasts: the right part, built now, is drawn in it, pixel for pixel as the target
        built, reward, terminated, _, info = env.step(task.reference)
        assert terminated and info["report"]["passed"] and reward == pytest.approx(1.0)
        assert np.array_equal(built["image"], near["target"])
        assert np.array_equal(built["depth"], near["target_depth"])
        assert "views centred on (-15.5, -28.5, 9.5) mm, zoom 2" in built["feedback"]
    finally:
        env.close()


def test_a_bad_look_costs_the_penalty_and_changes_nothing_and_the_last_step_ends_it():
    env = gym.make("toolgym/CadQuery-v0", task=CAD_TASK, action_mode="tool", max_steps=5)
    try:
        start, _ = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(look([0, 0, 5000], 2))
        assert reward == pytest.approx(-0.1) and not (terminated or truncated)
        assert info["error"].startswith("look: center z = 5000 mm is outside the task's frame")
        assert np.array_equal(obs["image"], start["image"])
        assert np.array_equal(obs["target"], start["target"])
        # a look longer than max_action_chars is refused as any action is; a huge number is
        # one line too
        _, reward, _, _, info = env.step(look([0, 0, 0], 2)[:-1] + " " * 20_000 + "}")
        assert info["error"] == "the tool call has 20063 characters; the limit is 20000"
        _, reward, _, _, info = env.step(
            '{"name": "look", "arguments": {"zoom": 1%s}}' % ("0" * 400)
        )
        assert info["error"] == "look: zoom must be a number from 1 to 16"
        obs, reward, *_ = env.step({"name": "look", "arguments": {"zoom": 3}})
        assert reward == 0.0 and not np.array_equal(obs["target"], start["target"])
        obs, reward, terminated, truncated, info = env.step('{"name": "look"}')  # back
        assert np.array_equal(obs["target"], start["target"]) and truncated and not terminated
        assert info["final_report"]["score"] == 0.0 and reward == 0.0  # nothing was built
    finally:
        env.close()


def test_a_hidden_target_stays_hidden_in_a_look():
    env = gym.make("toolgym/CadQuery-v0", task=CAD_TASK, show_target=False, depth=True)
    try:
        env.reset(seed=0)
        near, reward, *_ = env.step(look([-15.5, -28.5, 9.5], 4))
        assert reward == 0.0 and not near["target"].any()
        assert np.isneginf(near["target_depth"]).all()
    finally:
        env.close()


def test_a_blender_look_reframes_mesh_kinds_and_is_refused_on_cycles_renders():
    task = get_task("blender-placement/two-crates")
    env = gym.make("toolgym/Blender-v0", task=task.id, view_size=32)
    try:
        start, _ = env.reset(seed=0)
        middle = frame_middle(env)
        same, reward, *_ = env.step(look(middle))
        assert reward == 0.0 and np.array_equal(same["image"], start["image"])
        assert np.array_equal(same["target"], start["target"])
        near, reward, *_ = env.step(look(middle, 4))
        assert reward == 0.0 and not np.array_equal(near["target"], start["target"])
        assert not np.array_equal(near["image"], start["image"])  # the start scene, magnified
        built, reward, terminated, _, info = env.step(task.reference)
        assert terminated and np.array_equal(built["image"], near["target"])
    finally:
        env.close()
    env = gym.make("toolgym/Blender-v0", task="blender-material/gold", view_size=32)
    try:
        start, _ = env.reset(seed=0)
        obs, reward, _, _, info = env.step(look([0, 0, 0], 2))
        assert reward == pytest.approx(-0.1)
        assert info["error"] == (
            "look: a material task's views are Cycles renders from fixed cameras; look works "
            "on modelling, placement, shape-key and procedural tasks"
        )
        assert np.array_equal(obs["target"], start["target"])
    finally:
        env.close()


def test_a_scene_look_centres_on_the_floor():
    env = gym.make("toolgym/GameScene-v0", task="scene-curated/platform-slow", view_size=32)
    try:
        start, _ = env.reset(seed=0)
        box = env.unwrapped._view_box()
        assert box.unit == "m" and len(box.low) == 2
        middle = frame_middle(env)
        same, reward, *_ = env.step(look(middle, 1))
        assert reward == 0.0 and np.array_equal(same["target"], start["target"])
        near, reward, *_ = env.step(look(middle, 3))
        assert reward == 0.0 and not np.array_equal(near["target"], start["target"])
        _, reward, _, _, info = env.step(look([*middle, 0], 3))
        assert info["error"].startswith("look: center must be 2 numbers (x, y, in m)")
    finally:
        env.close()


def test_a_language_model_calls_look_in_code_mode():
    call = ToolCall("call_1", "look", '{"center": [1, 2, 3], "zoom": 2}')
    action, why = action_of(call, "code")
    assert why is None and action == {"name": "look", "arguments": call.arguments}
    assert call_of(action, "code", "call_1") == call  # written back as the call it was
    assert call_of("result = 1", "code", "c").name == "run_code"


def test_an_episode_with_looks_is_recorded_and_replays_step_for_step(tmp_path):
    env = RecordEpisodes(gym.make("toolgym/CadQuery-v0", task=CAD_TASK, view_size=32), tmp_path)
    try:
        env.reset(seed=0)
        for action in (look([-15.5, -28.5, 9.5], 4), look(zoom=99), get_task(CAD_TASK).reference):
            *_, terminated, _, _ = env.step(action)
        assert terminated
    finally:
        env.close()
    (episode,) = read_run(tmp_path)
    assert len(episode.steps) == 3 and verify_episode(episode) is None


@pytest.mark.parametrize(
    ("env_id", "task"),
    [("toolgym/CadQuery-v0", CAD_TASK), ("toolgym/GameScene-v0", "scene-curated/platform-slow")],
)
def test_looks_at_ever_new_points_leave_the_renderers_state_cache_as_it_was(env_id, task):
    """Panda3D caches every transform it made until a frame loop empties it; each look at a
    new point makes new ones, so an agent looking about would grow the host's memory for good
    unless each render frees those no node holds (counted, not timed)."""
    from panda3d.core import TransformState

    env = gym.make(env_id, task=task, view_size=16, max_steps=1000)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        box = env.unwrapped._view_box()

        def looks(count: int) -> int:
            for _ in range(count):
                center = [
                    float(rng.uniform(lo, hi)) for lo, hi in zip(box.low, box.high, strict=True)
                ]
                env.step(look(center, float(rng.uniform(1, 16))))
            return TransformState.get_num_states()

        settled = looks(20)
        assert looks(200) - settled < 50  # about 25 new states a look without the clean-up
    finally:
        env.close()


def test_a_scene_look_keeps_what_stands_on_the_point_in_both_views():
    """At zoom 16 on a ball's place, the perspective camera (which keeps its height, so it
    never dips into the scene) aims at the point: the ball is whole in both views."""
    from toolgym.envs.scene.views import SceneRenderer

    ball = {"asset": "ball", "pos": [0.0, -1.0, 0.15], "hpr": [0.0, 0.0, 0.0]}
    bounds, renderer = (-2.0, -2.0, 2.0, 2.0), SceneRenderer(64)
    try:
        empty = renderer.render({"objects": []}, bounds, (0.0, -1.0, 16.0))
        shown = renderer.render({"objects": [ball]}, bounds, (0.0, -1.0, 16.0))
    finally:
        renderer.close()
    ball_pixels = np.abs(shown.astype(int) - empty.astype(int)).sum(-1) > 0
    for view in (ball_pixels[:, :64], ball_pixels[:, 64:]):
        rows, columns = np.flatnonzero(view.any(1)), np.flatnonzero(view.any(0))
        assert rows[0] <= 32 <= rows[-1] and columns[0] <= 32 <= columns[-1]  # on the centre
    perspective = ball_pixels[:, :64]
    assert not perspective[-1].any()  # not cut off at the bottom edge


def test_trls_environment_offers_look_and_answers_with_both_views():
    from toolgym.agents.llm.grpo import ToolgymEnvironment

    env = ToolgymEnvironment(image_size=32, task=CAD_TASK)
    try:
        target = env.reset(task=CAD_TASK)[1]["image"]
        part, closer, text = env.look([-15.5, -28.5, 9.5], 4)
        assert part["type"] == closer["type"] == "image" and closer["image"] != target
        assert text["text"].endswith("views centred on (-15.5, -28.5, 9.5) mm, zoom 4")
        *_, refused = env.look([0, 0, 0], 99)
        assert "error: look: zoom must be a number from 1 to 16" in refused["text"]
    finally:
        env.env.close()
