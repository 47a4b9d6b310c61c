"""Cheats on toolgym/GameScene-v0 that once passed, each scored as a submission (a fresh sandbox
session, the trusted simulator, the exact tier) on the real Panda3D and Bullet. The full list,
with more cheats and the borderline layouts, is ``bench/scene_cheats.py``."""

from __future__ import annotations

import dataclasses
import itertools

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.scene.catalogue import ASSETS
from toolgym.envs.scene.families import spec_for
from toolgym.envs.scene.verification import (
    Candidate,
    TrustedSimulator,
    changes,
    merged,
    played,
    sanitize,
    verify_candidate,
    verify_script,
)
from toolgym.envs.tasks.suites import get_task

TABLE = "world.spawn('table', (0, 0.5, 0.375))\n"
CHAIRS = (
    "for dx, dy, h in [(-0.4, -0.75, 0), (0.4, 0.75, 180), (0.4, -0.75, 0), (-0.4, 0.75, 180)]:\n"
    "    world.spawn('chair', (dx, 0.5 + dy, 0.45), (h, 0, 0), body={body!r})\n"
)
DOOR = "scene-curated/door-zone-centre"  # a 1.5 m zone at (0, 0)
OPEN = "world.bind('zone_1', 'enter', 'open', 'door_1', only='player')\n"


def submit(task_id: str, script: str):
    outcome = verify_script(get_task(task_id), script)
    assert outcome.report is not None, outcome.error
    return outcome.report


def messages(report) -> str:
    return " ".join(str(c["message"]) for c in report.checks.values())


@pytest.mark.parametrize(
    ("task_id", "script", "body"),
    [
        (
            "scene-curated/stack-four",  # four crates 20 cm apart in the air
            "for k in range(4):\n"
            "    world.spawn('crate', (1, -1, 0.25 + 0.7 * k), body='static')\n",
            "static",
        ),
        ("scene-curated/dining-four", TABLE + CHAIRS.format(body="kinematic"), "kinematic"),
        ("scene-curated/dining-four", TABLE + CHAIRS.format(body="ghost"), "ghost"),
    ],
)
def test_placed_objects_keep_their_catalogue_body(task_id, script, body):
    report = submit(task_id, script)
    assert not report.passed
    assert report.checks["refused"]["message"].startswith(
        f"refused: {'crate' if 'stack' in task_id else 'chair'}_1 was given a {body} body "
        "(the catalogue's dynamic is kept)"
    )


def test_a_floating_static_stack_scores_below_an_honest_one():
    cheat = submit(
        "scene-curated/stack-four",
        "for k in range(4):\n    world.spawn('crate', (1, -1, 0.25 + 0.7 * k), body='static')\n",
    )
    assert cheat.score < 0.25
    assert "crate_2 starts 0.200 m above crate_1" in cheat.checks["initial"]["message"]


def test_dominoes_placed_lying_down_have_not_fallen():
    report = submit(
        "scene-curated/dominoes-five",
        "for k in range(5):\n    world.spawn('domino', (0, 0.25 * k, 0.1), (0, 0, 90))\n",
    )
    assert not report.passed and report.score == 0.2  # the count of dominoes, nothing more
    assert "domino_1 starts tipped 90°" in report.checks["initial"]["message"]
    assert "not credited" in report.checks["all_fallen:domino"]["message"]


def test_a_crate_inside_the_ball_at_t0_launches_nothing():
    report = submit(
        "scene-curated/roll-east", "world.spawn('crate', (-0.3, 0, 0.25), body='static')\n"
    )
    assert not report.passed and report.score == 0.0
    assert report.checks["initial"]["message"] == "crate_1 starts 0.100 m into ball_1"


def test_the_ball_must_jump_the_wall_not_go_round_it():
    report = submit(
        "scene-curated/ramp-jump-near",
        "world.spawn('wall', (-0.3, 0.3, 0.5), (30, 0, 0))\nworld.spawn('ramp', (-2, 2.5, 0.2))\n",
    )
    assert report.checks["beyond"]["ok"]  # it did end beyond the mark ...
    assert not report.passed  # ... but round the wall's end
    assert "ball_1 went round the wall (at y = " in report.checks["clears"]["message"]


@pytest.mark.parametrize(
    "trigger",
    [
        "world.trigger('zone_1', (-0.725, 0, 0.9), (0.05, 1.5, 1.8))\n",  # a strip, west edge
        "world.trigger('zone_1', (0, 0, 0.9), (0.1, 0.1, 1.8))\n",  # a point at the centre
    ],
)
def test_a_trigger_strip_or_point_fails_the_door(trigger):
    report = submit(DOOR, trigger + OPEN)
    assert not report.passed and report.score <= 0.5
    assert "the door was not open 0.1 s later" in messages(report)


def test_point_triggers_at_the_coins_centres_fail():
    script = (
        "for name in [n for n in world.objects if n.startswith('coin_')]:\n"
        "    zone = 'zone_' + name.split('_')[1]\n"
        "    world.trigger(zone, world.get(name).pos, (0.02, 0.02, 0.3))\n"
        "    world.bind(zone, 'enter', 'destroy', name, only='player')\n"
        "    world.bind(zone, 'enter', 'count', 'coins', only='player')\n"
    )
    report = submit("scene-curated/coins-three", script)
    assert not report.passed
    assert "was touched at" in messages(report) and "is still there" in messages(report)


def test_the_door_paths_cover_every_side_corners_speeds_and_pauses():
    paths = spec_for(get_task(DOOR).parameters).trajectories
    starts = {(round(p["path"][0][0]), round(p["path"][0][1])) for p in paths}
    assert len(paths) == 10 and len(starts) >= 6
    assert sum("waits" in p for p in paths) == 3
    speeds = [p["speed"] for p in paths]
    assert min(speeds) < 1.0 and max(speeds) > 2.4


def test_a_binding_cannot_destroy_the_verifiers_player():
    script = (
        "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8))\n"
        + OPEN
        + "world.bind('zone_1', 'enter', 'destroy', 'other')\n"
    )
    sim = TrustedSimulator()
    try:
        spec = spec_for(get_task(DOOR).parameters)
        plays, why = played(spec, [("code", script)], "cheap", sim)
        assert why is None
        for _, trace in plays:  # the player walks its whole path
            assert all(row is not None for row in trace["samples"]["player"])
        assert plays[0][1]["refused"] == ["destroy player"]
    finally:
        sim.close()
    report = submit(DOOR, script)
    assert not report.passed
    assert "binding to destroy player was skipped" in report.checks["refused"]["message"]


def test_feedback_names_the_changes_the_verifier_ignored():
    env = gym.make("toolgym/GameScene-v0", task="scene-curated/ramp-jump-near", max_steps=2)
    try:
        env.reset(seed=0)
        obs, *_ = env.step(
            "world.get('crate_1').remove()\n"
            "world.get('ball_1').set_velocity((6, 0, 6))\n"
            "world.spawn('ramp', (-2, 2.5, 0.2), body='dynamic')\n"
            "world.trigger('zone_1', (1, 0, 0.5), (1, 1, 1))\n"
            "world.bind('zone_1', 'enter', 'destroy', 'crate_2')\n"
        )
    finally:
        env.close()
    feedback = obs["feedback"]
    assert "\nignored: " in feedback and "crate_1 was removed (the level keeps it)" in feedback
    assert "ball_1's velocity was set (the task does not let it change)" in feedback
    assert "the scene's 1 trigger, 1 binding (a physics task plays objects only)" in feedback
    assert "refused: ramp_1 was given a dynamic body (the catalogue's static is kept)" in feedback


def test_the_trusted_simulator_starts_each_play_from_a_clean_snapshot():
    spec = spec_for(get_task("scene-curated/roll-east").parameters)
    sim = TrustedSimulator()
    try:
        sim.simulate(spec.level, 0.1)
        sim.session.run("left_behind = 1")  # what one play could leave in the worker
        sim.simulate(spec.level, 0.1)
        ran = sim.session.run("print(left_behind)")
    finally:
        sim.close()
    assert not ran.ok and "NameError" in ran.error.message


def test_a_placement_score_falls_smoothly_with_distance_from_the_goal():
    """The dining layout shifted away from where the prompt puts the table."""
    task = get_task("scene-curated/dining-four")
    slots = [(-0.4, -0.75, 0), (0.4, 0.75, 180), (0.4, -0.75, 0), (-0.4, 0.75, 180)]
    sim = TrustedSimulator()
    scores = []
    try:
        for shift in [0.1 * k for k in range(9)]:
            objects = [("table_1", "table", (shift, 0.5, 0.375), 0)]
            objects += [
                (f"chair_{k + 1}", "chair", (shift + dx, 0.5 + dy, 0.45), h)
                for k, (dx, dy, h) in enumerate(slots)
            ]
            rows = [
                {
                    "name": n,
                    "asset": a,
                    "pos": list(p),
                    "hpr": [h, 0, 0],
                    "body": "dynamic",
                    "mass": ASSETS[a].mass,
                    "friction": ASSETS[a].friction,
                    "restitution": ASSETS[a].restitution,
                    "velocity": [0, 0, 0],
                }
                for n, a, p, h in objects
            ]
            candidate = Candidate(sanitize({"objects": rows}), [])
            report, scene = verify_candidate(task, candidate, "cheap", sim)
            assert {o["body"] for o in scene["objects"]} == {"dynamic"}
            scores.append(report.score)
    finally:
        sim.close()
    assert scores[0] == 1.0 and scores[-1] < 0.95
    steps = [a - b for a, b in itertools.pairwise(scores)]
    assert all(-1e-9 <= s <= 0.1 for s in steps), scores


def test_merging_keeps_the_catalogue_body_and_starts_placed_objects_at_rest():
    spec = spec_for(get_task("scene-curated/roll-east").parameters)
    crate = {"name": "crate_1", "asset": "crate", "pos": [2, 2, 0.25], "hpr": [0, 0, 0],
             "body": "kinematic", "mass": 500.0, "friction": 9.0, "restitution": 1.0,
             "velocity": [3, 0, 0], "open": True}  # fmt: skip
    scene = merged(spec, sanitize({"objects": [crate]}))
    placed = next(o for o in scene["objects"] if o["name"] == "crate_1")
    assert (placed["body"], placed["mass"], placed["friction"], placed["restitution"]) == (
        "dynamic",
        10.0,
        0.8,
        0.05,
    )
    assert placed["velocity"] == [0.0, 0.0, 0.0] and placed["open"] is False


def test_a_task_may_let_the_agent_choose_a_body():
    spec = spec_for(get_task("scene-curated/roll-east").parameters)
    crate = {"name": "crate_1", "asset": "crate", "pos": [2, 2, 0.25], "hpr": [0, 0, 0],
             "body": "static", "mass": 10.0, "friction": 0.8, "restitution": 0.05,
             "velocity": [0, 0, 0]}  # fmt: skip
    agent = sanitize({"objects": [crate]})
    chosen = dataclasses.replace(spec, bodies={"crate": ("dynamic", "static")})
    assert merged(chosen, agent)["objects"][-1]["body"] == "static"
    assert changes(chosen, agent)[0] == []  # nothing refused
    assert merged(spec, agent)["objects"][-1]["body"] == "dynamic"
    assert changes(spec, agent)[0] == [
        "crate_1 was given a static body (the catalogue's dynamic is kept)"
    ]
