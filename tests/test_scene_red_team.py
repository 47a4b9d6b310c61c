"""Issue 33's red team on toolgym/GameScene-v0, and the mechanisms that contain it: every frame
of the trusted simulation checked, support as contact with the surface the prompt names, a
domino chain read piece by piece, a door open when the player's held-out passages through it
are clear, every relation a prompt states mapped to a rule, each tolerance held at both sides;
then the reward fuzzer on a sample of the scene families (every family in the slow sweep).
Real sandbox, Panda3D and Bullet where a script is scored; plain data where a rule is."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.scene import verifier as rules
from toolgym.envs.scene.families import FAMILIES, spec_for
from toolgym.envs.scene.verification import verify_script
from toolgym.envs.tasks.suites import get_suite, get_task

if TYPE_CHECKING:
    from toolgym.envs.verification.fuzzing import FuzzReport

DOMINOES = "scene-curated/dominoes-five"  # 5 dominoes from (0, 0) to (0, 1); the ball at (0, -1)
DOOR = "scene-curated/door-zone-centre"  # a 1.5 m zone at (0, 0); door_1 at (0, 3), 2 m tall
PLATFORM = "scene-curated/platform-short"  # (0, 0, 0.5) to (2, 0, 0.5) at 1 m/s
STORE = "scene-curated/storage-north"  # the shelf centred at -1 m along the north wall
DT = 1 / 60
MM = 0.001

# Dominoes on balls (every other one 0.3 m aside, so the balls are apart), turned across the
# chain: each falls off its ball, none knocks the next.
ON_BALLS = (
    "for k in range(5):\n"
    "    x = 0.3 * (k % 2)\n"
    "    world.spawn('ball', (x, 0.25 * k, 0.15))\n"
    "    world.spawn('domino', (x + 0.02, 0.25 * k, 0.5), (90, 0, 0))\n"
)
LIFTED = (
    "def lift(world, trigger, other):\n"
    "    if other == 'player':\n"
    "        world.get('door_1').set_pos((0, 3, 1.51))\n"  # 0.51 m above its closed place
    "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=lift)\n"
)
BETWEEN_FRAMES = (  # on its path on even frames, 1.5 m off on the odd ones a 2nd-frame host skips
    "import math\n"
    "A, B, L = (0.0, 0.0, 0.5), (2.0, 0.0, 0.5), 2.0\n"
    "def update(world, dt):\n"
    "    s = (world.time + dt) % (2 * L)\n"
    "    f = (2 * L - s if s > L else s) / L\n"
    "    x, y, z = [a + (b - a) * f for a, b in zip(A, B)]\n"
    "    world.get('platform_1').set_pos((x, y + (1.5 if (world.frame + 1) % 2 else 0), z))\n"
    "world.on_update(update)\n"
)
SHELF_ELSEWHERE = (  # against the north wall, its front to the room, but at +1.5 m, not -1 m
    "world.spawn('shelf', (1.5, 2.79, 0.9), (180, 0, 0))\n"
    "world.spawn('crate', (0.7, 2.7, 0.25))\nworld.spawn('crate', (2.55, 2.7, 0.25))\n"
)
# The honest near misses of the same tasks: one thing a little off.
NEAR_MISSES = {
    DOMINOES: "world.get('domino_5').set_pos((0.2, 1.0, 0.2))\n",  # the last one 0.2 m aside
    DOOR: "world.bind('zone_1', 'exit', 'close', 'door_1', only='player')\n",  # shuts behind
    PLATFORM: None,  # 1 % too fast: see below
    STORE: "world.get('shelf_1').set_pos((-1.4, 2.79, 0.9))\n",  # 0.4 m along the wall
}


def submit(task_id: str, script: str):
    outcome = verify_script(get_task(task_id), script)
    assert outcome.report is not None, outcome.error
    return outcome.report


def failed(report) -> str:
    return " ".join(str(c["message"]) for c in report.checks.values() if c["ok"] is False)


def near_miss(task_id: str):
    task = get_task(task_id)
    if task_id == PLATFORM:
        script = "world.mover('platform_1', [(0, 0, 0.5), (2, 0, 0.5)], speed=1.01, loop=True)\n"
    else:
        script = task.reference.rstrip() + "\n" + NEAR_MISSES[task_id]
    report = submit(task_id, script)
    assert not report.passed
    return report


# -- the red team's four cheats: each passed with 1.000 before ---------------------------------


def test_dominoes_balanced_on_balls_do_not_stand_on_the_floor():
    report = submit(DOMINOES, ON_BALLS)
    assert not report.passed and report.score == pytest.approx(0.2)  # the count alone
    assert report.score < near_miss(DOMINOES).score
    assert "domino_1 starts on ball_2, not on the floor" in report.checks["initial"]["message"]
    assert "domino_1 is turned 90° from falling along the chain" in failed(report)
    assert "chain not credited: the set-up is wrong at t = 0" in failed(report)


def test_a_door_lifted_half_a_metre_is_not_open():
    report = submit(DOOR, LIFTED)
    assert not report.passed and report.score == 0.0
    assert report.score < near_miss(DOOR).score
    assert (
        "path 1: the player entered the zone at 0.88 s and the door was not open 0.1 s later and "
        "from then on (at 0.98 s door_1 still blocks its doorway: its lowest edge is 0.51 m up, "
        "and a player 1.8 m tall walking through meets it"
    ) in report.checks["door:path_1"]["message"]


def test_a_platform_off_its_path_between_samples_fails():
    report = submit(PLATFORM, BETWEEN_FRAMES)
    assert not report.passed and report.score == pytest.approx(0.25, abs=0.01)
    assert report.score < near_miss(PLATFORM).score
    message = report.checks["platform:path_1"]["message"]
    assert "platform_1 is 1.50 m off its path at " in message and "50% of frames on it" in message


def test_a_relation_the_prompt_states_is_checked_where_no_rule_checked_it():
    report = submit(STORE, SHELF_ELSEWHERE)
    assert not report.passed and report.score < near_miss(STORE).score
    assert report.checks["near:shelf"]["message"] == (
        "shelf_1 is 2.50 m from (-1, 2.79) (at most 0.3 m)"
    )


# -- every frame -----------------------------------------------------------------------------------


def test_the_trusted_simulator_and_host_sample_every_frame():
    from toolgym.envs.scene.verification import TrustedSimulator, played

    task = get_task(PLATFORM)
    spec = spec_for(task.parameters)
    sim = TrustedSimulator()
    try:
        trace = sim.simulate(spec_for(get_task(DOMINOES).parameters).level, 1.0)
        plays, why = played(spec, [("code", task.reference)], "cheap", sim)
    finally:
        sim.close()
    assert why is None
    for times in (trace["times"], plays[0][1]["times"]):
        assert len(times) == round(times[-1] / DT) + 1
        assert np.allclose(np.diff(times), DT)


# -- support: contact with the surface the prompt names --------------------------------------------


def obj(
    name: str, asset: str, pos, hpr=(0.0, 0.0, 0.0), body: str = "dynamic", level: bool = False
) -> dict:
    return {
        "name": name,
        "asset": asset,
        "pos": [float(v) for v in pos],
        "hpr": [float(v) for v in hpr],
        "body": body,
        "level": level,
    }


def scene(*objects: dict, room: dict | None = None) -> rules.Scene:
    return rules.Scene({"objects": list(objects), "room": room})


def still(*objects: dict, frames: int = 2) -> dict:
    """A trace in which nothing moves."""
    rows = {o["name"]: [o["pos"] + [1, 0, 0, 0]] * frames for o in objects}
    return {"times": [k * DT for k in range(frames)], "samples": rows}


def test_a_point_of_a_ball_or_an_edge_is_no_support():
    from toolgym.envs.scene.geometry import Placed, support

    def held(o: dict, *others: dict) -> bool:
        found = support(
            Placed.of(o),
            [Placed.of(b) for b in others],
            lambda _: True,
            rules.SUPPORT_M,
            rules.OVERLAP_M,
        )
        return found.held

    ball = obj("ball_1", "ball", (0, 0, 0.15))
    assert held(ball) and not held(obj("domino_1", "domino", (0, 0, 0.5)), ball)
    crate = obj("crate_1", "crate", (0, 0, 0.25))
    for inside, ok in ((MM, True), (-MM, False)):  # the upper centre just inside / past the edge
        upper = obj("crate_2", "crate", (0.25 - inside, 0, 0.75))
        assert held(upper, crate) is ok
    assert held(obj("table_1", "table", (0, 0, 0.375)))  # on its four legs


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_a_top_tilted_past_flat_is_no_surface(side, ok):
    from toolgym.envs.scene.geometry import FLAT_DEG, Placed, surfaces

    deg = FLAT_DEG + side
    tilted = Placed.of(obj("crate_1", "crate", (0, 0, 0.3), (0, deg, 0)))
    assert any(s.name == "crate_1" for s in surfaces([tilted])) is ok


def test_a_set_up_stands_on_the_surface_its_prompt_names():
    crate = obj("crate_1", "crate", (1, 0, 0.25))
    on_crate = obj("domino_1", "domino", (1, 0, 0.7))
    floor_only = {"on": ("floor",)}
    met, _, message = rules.check_initial(scene(crate, on_crate), floor_only)
    assert not met and message == "domino_1 starts on crate_1, not on the floor"
    assert rules.check_initial(scene(crate, on_crate), {})[0]  # "on the floor or each other"


# -- the chain: each domino knocked over by the one before -----------------------------------------


def _turned(deg: float) -> list[float]:
    """A quaternion (w, x, y, z) tipping a piece ``deg`` towards +Y (about -X)."""
    half = math.radians(deg) / 2
    return [math.cos(half), -math.sin(half), 0.0, 0.0]


def chain_trace(
    knocks: list[int],
    touches: list[int | None],
    gap: float = 0.0,
    lean: float = 0.0,
    frames: int = 60,
) -> tuple[rules.Scene, dict]:
    """Three dominoes at y = 0, 0.25, 0.5 and the level's ball: piece ``i`` leans ``lean``° for
    the 5 frames before ``knocks[i]`` and is tipped 20° from then on, and at frame
    ``touches[i]`` the one before it (the ball for the first) comes ``gap`` m from it."""
    tilt = 20.0  # a knocked piece's tilt
    pieces = [obj(f"domino_{i + 1}", "domino", (0, 0.25 * i, 0.2)) for i in range(3)]
    ball = obj("ball_1", "ball", (0, -1, 0.15), level=True)
    samples = {o["name"]: [] for o in [*pieces, ball]}
    for k in range(frames):
        ball_y = -1.0
        for i, o in enumerate(pieces):
            y, q = 0.25 * i, [1.0, 0.0, 0.0, 0.0]
            if k >= knocks[i]:
                q = _turned(tilt)
            elif k >= knocks[i] - 5 and lean:
                q = _turned(lean)
            samples[o["name"]].append([0.0, y, 0.2, *q])
        for i in range(3):
            if touches[i] == k:
                before = ball if i == 0 else pieces[i - 1]
                row = [0.0, -1.0, 0.15, 1, 0, 0, 0] if i == 0 else samples[before["name"]][k]
                row[1] = _closing(before, row, pieces[i], samples[pieces[i]["name"]][k], gap)
                ball_y = row[1] if i == 0 else ball_y
        samples["ball_1"].append([0.0, ball_y, 0.15, 1.0, 0.0, 0.0, 0.0])
    return scene(*pieces, ball), {"times": [k * DT for k in range(frames)], "samples": samples}


def _closing(mover: dict, row: list, still_one: dict, its_row: list, gap: float) -> float:
    """The y at which ``mover`` (at ``row``, moving along +Y) is ``gap`` m from ``still_one``."""
    from toolgym.envs.scene.geometry import Placed, object_gap

    other = Placed.at(still_one, its_row)
    low, high = row[1] - 1.0, its_row[1]
    for _ in range(60):  # bisection: the gap shrinks as it comes closer
        mid = (low + high) / 2
        here = Placed.at(mover, [row[0], mid, *row[2:]])
        low, high = (mid, high) if object_gap(here, other) > gap else (low, mid)
    return low


CHAIN = {"asset": "domino", "x": 0.0, "y0": 0.0, "y1": 0.5, "by": "ball_1"}


def test_a_chain_falls_piece_by_piece_each_knocked_by_the_one_before():
    the_scene, trace = chain_trace([10, 20, 30], [9, 19, 29])
    assert rules.check_chain(the_scene, trace, CHAIN) == (
        True,
        1.0,
        "each of the 3 dominos was knocked over in turn",
    )


def test_a_piece_that_tips_without_the_one_before_touching_it_breaks_the_chain():
    the_scene, trace = chain_trace([10, 20, 30], [9, None, 29])  # domino_2 tips by itself
    met, shaping, message = rules.check_chain(the_scene, trace, CHAIN)
    assert not met and shaping == pytest.approx(2 / 3)
    assert message == "domino_2 tipped at 0.33 s without domino_1 touching it first"
    the_scene, trace = chain_trace([10, 30, 20], [9, 29, 19])  # the 3rd tips before the 2nd
    assert (
        "domino_3 tipped at 0.33 s, before domino_2"
        in rules.check_chain(the_scene, trace, CHAIN)[2]
    )


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_a_touch_is_a_gap_of_at_most_touch_m(side, ok):
    gap = rules.TOUCH_M + side * MM
    the_scene, trace = chain_trace([10, 20, 30], [9, 19, 29], gap=gap)
    assert rules.check_chain(the_scene, trace, CHAIN)[0] is ok


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_the_touch_must_come_before_the_piece_tilts_past_knocked_deg(side, ok):
    tilt = rules.KNOCKED_DEG + side  # each piece leans so far for 5 frames before it is touched
    the_scene, trace = chain_trace([10, 20, 30], [9, 19, 29], lean=tilt)
    assert rules.check_chain(the_scene, trace, CHAIN)[0] is ok


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_the_chain_runs_between_the_marks(side, ok):
    off = rules.CHAIN_M + side * 0.01
    the_scene, trace = chain_trace([10, 20, 30], [9, 19, 29])
    moved = dict(CHAIN, y1=0.5 + off)  # the last piece ``off`` short of the mark
    met, _, message = rules.check_chain(the_scene, trace, moved)
    assert met is ok, message


@pytest.mark.parametrize(("side", "ok"), [(1, True), (-1, False)])
def test_a_piece_has_fallen_past_fallen_deg(side, ok):
    deg = rules.FALLEN_DEG + side
    piece = obj("domino_1", "domino", (0, 0, 0.2))
    rows = [[0, 0, 0.2, 1, 0, 0, 0], [0, 0, 0.2, *_turned(deg)]]
    trace = {"times": [0.0, 1.0], "samples": {"domino_1": rows}}
    assert rules.check_all_fallen(scene(piece), trace, {"asset": "domino", "n": 1})[0] is ok


# -- a door is open when the player can walk through it --------------------------------------------

PASSAGES = [[[off, 2.0, 0.9], [off, 4.0, 0.9]] for off in (-0.2, 0.0, 0.2)]  # through (0, 3)
T0 = 61 * DT  # the first frame after 1.0 s: the walking player's box overlaps the 1 m zone


def door_check(dz: float = 0.0, dx: float = 0.0, walk_past: bool = False) -> rules.Check:
    """A player walking +X through a 1 m zone at the origin (or 2 m beside it), and door_1
    (closed at (0, 3, 1)) moved by (``dx``, 0, ``dz``) from ``T0`` on."""
    door = obj("door_1", "door", (0, 3, 1.0), body="kinematic", level=True)
    y = 2.0 if walk_past else 0.0
    trajectory = {"path": [[-1.75, y, 0.9], [1.75, y, 0.9]], "speed": 1.0}
    times = [k * DT for k in range(361)]
    rows = [
        [dx if t >= T0 - 1e-9 else 0, 3, 1.0 + (dz if t >= T0 - 1e-9 else 0), 1, 0, 0, 0]
        for t in times
    ]
    constraint = {"door": "door_1", "zone": [0, 0, 0.9, 1.0, 1.0, 1.8], "passages": PASSAGES}
    plays = [(trajectory, {"times": times, "samples": {"door_1": rows}})]
    if walk_past:  # and a player who enters, so that staying closed is credited
        plays.append(door_check_play_entering())
    ((_, result), *_) = rules.check_door(scene(door), plays, constraint, DT, 6.0)
    return result


def door_check_play_entering() -> tuple[dict, dict]:
    trajectory = {"path": [[-1.75, 0, 0.9], [1.75, 0, 0.9]], "speed": 1.0}
    times = [k * DT for k in range(361)]
    rows = [[0, 3, 3.0 if t >= T0 - 1e-9 else 1.0, 1, 0, 0, 0] for t in times]
    return trajectory, {"times": times, "samples": {"door_1": rows}}


def test_a_door_lifted_above_the_player_is_open_and_one_lifted_less_is_not():
    clear = 2 * rules.PLAYER_HALF[2] - rules.OVERLAP_M  # its lowest edge at the player's top
    assert door_check(dz=2.0)[0]
    assert door_check(dz=clear + MM)[0]
    met, _, message = door_check(dz=clear - MM)
    assert not met and "door_1 still blocks its doorway: its lowest edge is 1.80 m up" in message
    assert not door_check(dz=0.51)[0]


def test_a_door_slid_aside_is_open_once_its_doorway_is_clear():
    # The passages run 0.2 m either side of the middle; the player is 0.5 m wide.
    clear = 0.5 + 0.2 + rules.PLAYER_HALF[0] - rules.OVERLAP_M
    assert door_check(dx=clear + MM)[0]
    assert not door_check(dx=clear - MM)[0]


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_a_door_the_player_walks_past_must_stay_in_its_place(side, ok):
    met, _, message = door_check(dz=rules.DOOR_CLOSED_M + side * MM, walk_past=True)
    assert met is ok, message
    if not ok:
        assert message == "path 1: the player walked past the zone and the door moved at 1.02 s"


@pytest.mark.parametrize(("side", "ok"), [(-0.5, True), (0.5, False)])
def test_a_door_may_open_at_most_early_frames_before_the_player_enters(side, ok):
    frames = rules.EARLY_FRAMES + side  # 1 frame early: on time; 2 frames: before the player
    door = obj("door_1", "door", (0, 3, 1.0), body="kinematic", level=True)
    trajectory, trace = door_check_play_entering()
    opened = T0 - frames * DT
    trace["samples"]["door_1"] = [
        [0, 3, 3.0 if t >= opened - 1e-9 else 1.0, 1, 0, 0, 0] for t in trace["times"]
    ]
    constraint = {"door": "door_1", "zone": [0, 0, 0.9, 1.0, 1.0, 1.8], "passages": PASSAGES}
    ((_, (met, _, message)),) = rules.check_door(
        scene(door), [(trajectory, trace)], constraint, DT, 6.0
    )
    assert met is ok, message


def test_a_door_removed_at_the_start_was_open_from_the_start():
    outcome = verify_script(get_task(DOOR), "world.remove('door_1')\n")
    assert outcome.report.score == 0.0
    assert "the door opened at 0.00 s" in failed(outcome.report)


# -- platforms, coins and spawners: every frame, named tolerances ----------------------------------


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_a_platform_is_on_its_path_at_every_frame(side, ok):
    off = rules.MOVER_TOL_M + side * MM
    points = [[0.0, 0.0, 0.5], [2.0, 0.0, 0.5]]
    times = [k * DT for k in range(481)]
    rows = [[*rules._mover_position(np.asarray(points), 1.0, t), 1, 0, 0, 0] for t in times]
    rows[241][1] += off  # one frame off
    trace = {"times": times, "samples": {"platform_1": [list(map(float, r)) for r in rows]}}
    constraint = {"name": "platform_1", "points": points, "speed": 1.0}
    ((_, (met, _, message)),) = rules.check_platform(scene(), [({}, trace)], constraint, DT, 8.0)
    assert met is ok, message


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_a_coin_stays_where_the_level_has_it(side, ok):
    off = rules.LEVEL_STILL_M + side * MM
    coin = obj("coin_1", "coin", (0, 0, 0.5), body="ghost", level=True)
    trajectory = {"path": [[-3, 2, 0.9], [3, 2, 0.9]], "speed": 1.0}  # well beside it
    times = [k * DT for k in range(481)]
    rows = [[0, off if k % 2 else 0, 0.5, 1, 0, 0, 0] for k in range(481)]  # every other frame
    trace = {"times": times, "samples": {"coin_1": rows}, "counters": {}}
    results = rules.check_coins(scene(coin), [(trajectory, trace)], {"counter": "coins"}, DT, 8.0)
    message = results[0][1][2]
    assert ("was 0.01 m from its place" not in message) is ok, message


def test_coins_removed_before_the_play_vanished_untouched():
    # Removing the level's coins at t = 0 and counting on zones once passed every coin check.
    script = (
        "for k in (1, 2, 3):\n"
        "    world.trigger(f'zone_{k}', world.get(f'coin_{k}').pos, (0.3, 0.05, 0.3))\n"
        "    world.bind(f'zone_{k}', 'enter', 'count', 'coins', only='player')\n"
        "    world.remove(f'coin_{k}')\n"
    )
    report = submit("scene-curated/coins-three", script)
    assert not report.passed and report.score < 0.25
    assert "coin_1 vanished at 0.00 s, before the player touched it" in failed(report)


def spawner_check(late_frames: int = 0, off: float = 0.0) -> rules.Check:
    times = [k * DT for k in range(241)]
    samples = {}
    for n in range(3):  # one every 1 s from 1 s on
        first = round(60 * (n + 1)) + late_frames
        samples[f"ball_{n + 1}"] = [
            None if k < first else [off, 0, 2, 1, 0, 0, 0] for k in range(241)
        ]
    trace = {"times": times, "samples": samples, "assets": dict.fromkeys(samples, "ball")}
    c = {"asset": "ball", "pos": [0, 0, 2], "interval": 1.0, "count": 3}
    ((_, result),) = rules.check_spawner(scene(), [({}, trace)], c, DT, 4.0)
    return result


def test_a_spawner_may_land_within_its_slack_and_its_reach():
    slack = math.floor(rules.SPAWN_SLACK_S / DT + 0.5)  # 3 frames: the first judged frame
    assert spawner_check(late_frames=slack)[0]
    assert not spawner_check(late_frames=slack + 1)[0]
    assert spawner_check(off=rules.SPAWN_NEAR_M - 0.01)[0]
    met, shaping, message = spawner_check(off=rules.SPAWN_NEAR_M + 0.01)
    assert not met and shaping == 0.0 and "ball_1 appeared away from the spawner" in message


# -- layout relations a designer signs -------------------------------------------------------------

TABLE = obj("table_1", "table", (0, 0, 0.375))
ON_TABLE = {"asset": "crate", "other": "table"}


def test_an_object_that_settles_onto_the_top_is_on_it():
    above = obj("crate_1", "crate", (0, 0, 0.75 + 0.25 + 0.02))  # placed 2 cm above the top
    settled = {
        "times": [0.0, 0.5],
        "samples": {
            "table_1": [TABLE["pos"] + [1, 0, 0, 0]] * 2,
            "crate_1": [above["pos"] + [1, 0, 0, 0], [0, 0, 1.0, 1, 0, 0, 0]],
        },
    }
    assert rules.check_on(scene(TABLE, above), settled, ON_TABLE) == (
        True,
        1.0,
        "every crate is on a table",
    )
    met, _, message = rules.check_on(scene(TABLE, above), still(TABLE, above), ON_TABLE)
    assert not met and message == "crate_1 floats 0.020 m above table_1's top"  # never settled


def test_an_object_placed_on_something_else_is_not_on_the_top():
    ball = obj("ball_1", "ball", (0, 0, 0.75 + 0.15))
    crate = obj("crate_1", "crate", (0.05, 0, 0.75 + 0.3 + 0.25))  # on the ball on the table
    met, _, message = rules.check_on(scene(TABLE, ball, crate), still(TABLE, ball, crate), ON_TABLE)
    assert not met and message == "crate_1 is placed on ball_1, not on table_1"


def test_a_settling_crate_on_the_table_is_on_it_in_the_real_simulation():
    report = submit(
        "scene-curated/desk-one-crate",
        "world.spawn('table', (0, 0.5, 0.375))\nworld.spawn('crate', (0, 0.5, 1.02))\n"
        "world.spawn('chair', (0, -0.25, 0.45))\n",
    )
    assert report.passed, failed(report)  # it falls 2 cm onto the top: on it, and resting


SHELF = obj("shelf_1", "shelf", (0, 2.79, 0.9), (180, 0, 0))  # against the north wall
BESIDE = {"asset": "crate", "other": "shelf", "gap": 2.0}


@pytest.mark.parametrize(("y", "ok"), [(2.79 - 0.2 - 0.01, True), (2.79 - 0.2 + 0.01, False)])
def test_beside_the_shelf_is_not_inside_it(y, ok):
    crate = obj("crate_1", "crate", (0, y, 0.28))  # its centre 1 cm out of / into the shelf
    met, _, message = rules.check_next_to(scene(SHELF, crate), BESIDE)
    assert met is ok, message
    if not ok:
        assert message == "crate_1 is inside shelf_1, not beside it"


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False), (180, False)])
def test_a_shelf_against_the_wall_stands_upright(side, ok):
    pitch = 180 if side == 180 else rules.UPRIGHT_DEG + side
    shelf = obj("shelf_1", "shelf", (0, 2.79, 0.9), (180, 0, pitch))
    room = {"width": 6.0, "depth": 6.0, "door_x": 0.0}
    constraint = {"asset": "shelf", "wall": "north", "gap": 0.1}
    met, _, message = rules.check_against_wall(scene(shelf, room=room), constraint)
    assert met is ok, message


def test_dominoes_turned_across_their_chain_are_not_as_the_prompt_states():
    spec = spec_for(get_task(DOMINOES).parameters)
    (along,) = [c for c in spec.constraints if c["kind"] == "aligned"]  # "each turned to fall ..."
    assert (along["asset"], along["heading"], along["period"]) == ("domino", 0.0, 180.0)
    for heading, ok in ((rules.ALIGN_DEG - 1, True), (rules.ALIGN_DEG + 1, False), (90, False)):
        piece = obj("domino_1", "domino", (0, 0, 0.2), (heading, 0, 0))
        assert rules.check_aligned(scene(piece), along)[0] is ok


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_near_is_within_near_m(side, ok):
    table = obj("table_1", "table", (rules.NEAR_M + side * 0.01, 0, 0.375))
    assert rules.check_near(scene(table), {"asset": "table", "x": 0.0, "y": 0.0})[0] is ok


@pytest.mark.parametrize(("side", "ok"), [(-1, True), (1, False)])
def test_resting_allows_a_few_degrees_of_turning(side, ok):
    crate = obj("crate_1", "crate", (0, 0, 0.25))
    half = math.radians(rules.RESTING_TURN_DEG + side) / 2
    trace = {
        "times": [0.0, 2.0],
        "samples": {
            "crate_1": [
                [0, 0, 0.25, 1, 0, 0, 0],
                [0, 0, 0.25, math.cos(half), 0, 0, math.sin(half)],
            ]
        },
    }
    assert rules.check_resting(scene(crate), trace, {})[0] is ok


STACK = {"asset": "crate", "n": 2, "x": 0.0, "y": 0.0, "overhang": 0.1}


@pytest.mark.parametrize(
    ("which", "side", "ok"),
    [("pad", -1, True), ("pad", 1, False), ("step", -1, True), ("step", 1, False)],
)
def test_a_stack_is_built_on_its_pad_and_stepped_as_asked(which, side, ok):
    base_x = rules.STACK_PAD_M + side * 0.01 if which == "pad" else 0.0
    step_y = rules.STACK_STEP_M + side * MM if which == "step" else 0.0
    low = obj("crate_1", "crate", (base_x, 0, 0.25))
    high = obj("crate_2", "crate", (base_x + 0.1, step_y, 0.75))
    met, shaping, message = rules.check_stands(scene(low, high), still(low, high), STACK)
    assert met is ok, message
    if not ok:  # the share placed as asked: none off the pad, the bottom one when stepped wrong
        assert shaping == (0.0 if base_x > rules.STACK_PAD_M else 0.5)


def test_a_refusal_weighs_as_much_as_every_other_rule():
    chairs = (
        "world.spawn('table', (0, 0.5, 0.375))\n"
        "for dx, dy, h in [(-0.4, -0.75, 0), (0.4, 0.75, 180), (0.4, -0.75, 0), "
        "(-0.4, 0.75, 180)]:\n    world.spawn('chair', (dx, 0.5 + dy, 0.45), (h, 0, 0), "
        "body='kinematic')\n"
    )
    report = submit("scene-curated/dining-four", chairs)  # kept dynamic, the rest all met
    assert not report.passed and report.score == pytest.approx(0.5)


# -- every relation a prompt states has a rule -----------------------------------------------------


def _every_scene_task():
    yield from get_suite("scene-curated").tasks
    for family in FAMILIES.values():
        for seed in range(12):
            yield family.task(seed, "train")
            yield family.task(seed, "test")


def test_every_relation_a_scene_prompt_states_has_a_rule():
    from toolgym.envs.scene.relations import unchecked

    problems = {}
    for task in _every_scene_task():
        own = FAMILIES[task.family].relations if task.family in FAMILIES else ()  # its phrases
        found = unchecked(task.prompt, spec_for(task.parameters).constraints, own)
        if found:
            problems[task.id] = found
    assert not problems


def test_every_kind_of_rule_a_task_has_is_one_its_prompt_states():
    from toolgym.envs.scene.relations import unchecked

    for family in FAMILIES.values():
        spec = spec_for(family.task(0).parameters)
        for kind in {c["kind"] for c in spec.constraints}:
            rest = [c for c in spec.constraints if c["kind"] != kind]
            # its phrase needs it
            assert unchecked(spec.prompt, rest, family.relations), (family.name, kind)


def test_a_prompt_stating_a_relation_no_rule_checks_does_not_load():
    from toolgym.envs.scene.families import task_spec
    from toolgym.envs.scene.relations import UncheckedRelation

    task = get_task("scene-curated/storage-east")
    beside = dataclasses.replace(task, prompt=task.prompt + " Put a plant beside the window.")
    with pytest.raises(UncheckedRelation, match=r"'beside' in '.*a plant beside the window"):
        task_spec(beside)
    with pytest.raises(UncheckedRelation, match="needs a near rule"):  # a rule taken away
        from toolgym.envs.scene.relations import require_checked

        spec = spec_for(task.parameters)
        require_checked(spec.prompt, [c for c in spec.constraints if c["kind"] != "near"], "x")
    assert task_spec(task) == spec_for(task.parameters)


def test_curated_prompts_are_their_templates_prompts():
    stale = [
        t.id for t in get_suite("scene-curated").tasks if t.prompt != spec_for(t.parameters).prompt
    ]
    assert not stale


# -- a designer's judgements of borderline layouts -------------------------------------------------


def _bench():
    path = Path(__file__).resolve().parents[1] / "bench" / "scene_cheats.py"
    spec = importlib.util.spec_from_file_location("bench_scene_cheats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _verdict(task_id: str, script: str, check: str) -> bool:
    report = submit(task_id, script)
    found = report.checks.get(check)
    return bool(found["ok"]) if found else True  # a verifier without the check holds it


def test_the_new_borderline_layouts_are_judged_as_a_designer_judges_them():
    rows = [
        r
        for r in _bench().BORDERLINE
        if "settling" in r[0]
        or "inside the shelf" in r[0]
        or "across the chain" in r[0]
        or "balls" in r[0]
        or "8 mm above" in r[0]
    ]
    assert len(rows) == 5
    assert {what: _verdict(task_id, script, check) for what, task_id, script, check, _ in rows} == {
        what: expected for what, _, _, _, expected in rows
    }


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_every_borderline_layout_is_judged_as_a_designer_judges_it():
    rows = _bench().BORDERLINE
    assert len(rows) == 27
    wrong = [
        what
        for what, task_id, script, check, expected in rows
        if _verdict(task_id, script, check) is not expected
    ]
    assert not wrong


# -- the reward fuzzer -----------------------------------------------------------------------------

SAMPLE = ("table_top", "dominoes", "door")  # a layout, a physics and a logic family


def _fuzzed(tasks: list) -> FuzzReport:
    from toolgym.envs.verification.fuzzing import fuzz

    report = fuzz(tasks)
    assert not report.broken, report.markdown()
    assert not report.escaped, report.markdown()
    return report


@pytest.mark.timeout(600)
def test_the_reward_fuzzer_catches_every_scene_cheat_on_a_sample_of_families():
    from toolgym.envs.verification.fuzzing import family_sample

    tasks = [t for t in family_sample("scene") if t.family in SAMPLE]
    assert len(tasks) == len(SAMPLE)
    report = _fuzzed(tasks)
    assert {family: tried for family, (tried, _) in report.by("family").items()} == {
        "table_top": 5,
        "dominoes": 5,
        "door": 4,
    }


PARTS = 3  # the slow sweep in parts, so that parallel test workers share it


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("part", range(PARTS))
def test_the_reward_fuzzer_catches_every_scene_cheat_on_every_family(part):
    from toolgym.envs.scene.domain import FAMILIES_BY_SUITE
    from toolgym.envs.verification.fuzzing import family_of, family_sample

    tasks = family_sample("scene", per_family=2) + family_sample("scene", split="train")
    every = {family_of(t) for t in tasks}
    assert every == {*FAMILIES_BY_SUITE["scene-procedural"], "scene-curated"}
    families = set(sorted(every)[part::PARTS])
    report = _fuzzed([t for t in tasks if family_of(t) in families])
    # These references only send a ball (a velocity): no generic cheat has a placement to bend;
    # their own near misses fail in the family sweep.
    launched = {"knock_off", "launch_to_goal"}
    assert families - launched <= set(report.by("family")) <= families
    assert all(tried >= 2 for tried, _ in report.by("family").values())


# -- no honest solution starts failing -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_reference_scores_at_least_099_in_code_and_tool_mode():
    import gymnasium as gym

    tasks = list(get_suite("scene-curated").tasks)
    tasks += [
        family.task(seed, split)
        for family in FAMILIES.values()
        for seed, split in ((0, "train"), (1, "test"))
    ]
    low = []
    for mode in ("code", "tool"):
        env = gym.make("toolgym/GameScene-v0", action_mode=mode, max_steps=40, view_size=16)
        try:
            for task in tasks:
                if mode == "tool" and not task.tool_calls:
                    continue  # a script only: the tools cannot say a timer or a counter
                env.reset(seed=0, options={"task": task.id})
                actions = [task.reference] if mode == "code" else list(task.tool_calls)
                info = {}
                for action in actions:
                    *_, terminated, truncated, info = env.step(action)
                    if terminated or truncated:
                        break
                if not terminated:
                    info = env.unwrapped.finish() if hasattr(env.unwrapped, "finish") else info
                score = (info.get("final_report") or {}).get("score")
                if score is None or score < 0.99:
                    low.append((mode, task.id, score))
        finally:
            env.close()
    assert not low
