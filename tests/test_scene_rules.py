"""The game-scene verifier's relations and tolerances, each held at both sides of its named
constant, on plain scene descriptions (exact geometry, no simulation)."""

from __future__ import annotations

import pytest

from toolgym.envs.scene.verifier import (
    ALIGN_DEG,
    COIN_DELAY_S,
    DOOR_DELAY_S,
    ON_CONTACT_M,
    OVERLAP_M,
    RESTING_MOVE_M,
    STAND_MOVE_M,
    SUPPORT_M,
    UPRIGHT_DEG,
    WALL_DEG,
    WALL_SLACK_M,
    Scene,
    check_against_wall,
    check_aligned,
    check_coins,
    check_door,
    check_facing,
    check_initial,
    check_no_overlap,
    check_on,
    check_resting,
    check_stands,
    verify_scene,
)

TOP = 0.75  # the table's top (its centre at 0.375)
MM = 0.001


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


def scene(*objects: dict) -> Scene:
    return Scene({"objects": list(objects)})


def table(heading: float = 0.0) -> dict:
    return obj("table_1", "table", (0, 0, 0.375), (heading, 0, 0))


ON = {"asset": "crate", "other": "table"}


@pytest.mark.parametrize(
    ("x", "dz", "ok"),
    [
        (0.8 - 0.01, 0.0, True),  # centre 1 cm inside the top's edge
        (0.8 + 0.01, 0.0, False),  # 1 cm past it: it would tip
        (0.0, ON_CONTACT_M - MM, True),
        (0.0, ON_CONTACT_M + MM, False),  # floating
        (0.0, -ON_CONTACT_M + MM, True),
        (0.0, -ON_CONTACT_M - MM, False),  # sunk into the top
    ],
)
def test_on_needs_the_centre_over_the_top_and_contact_within_a_few_mm(x, dz, ok):
    # Nothing moves in the trace: the settled state is the placed one (a static crate).
    crate = obj("crate_1", "crate", (x, 0, TOP + 0.25 + dz))
    met, _, message = check_on(scene(table(), crate), still(table(), crate), ON)
    assert met is ok, message


def test_on_says_how_far_past_the_edge_or_into_the_top():
    past = obj("crate_1", "crate", (0.825, 0, TOP + 0.25))
    assert check_on(scene(table(), past), still(table(), past), ON)[2] == (
        "crate_1's centre is 0.025 m past the edge of table_1's top"
    )
    sunk = obj("crate_1", "crate", (0, 0, TOP + 0.225))
    assert check_on(scene(table(), sunk), still(table(), sunk), ON)[2] == (
        "crate_1 is sunk 0.025 m into table_1's top"
    )
    floating = obj("crate_1", "crate", (0, 0, TOP + 0.25 + 0.008))
    assert check_on(scene(table(), floating), still(table(), floating), ON)[2] == (
        "crate_1 floats 0.008 m above table_1's top"
    )


@pytest.mark.parametrize(
    ("depth", "ok"), [(OVERLAP_M - MM, True), (OVERLAP_M + MM, False), (0.009, False)]
)
def test_no_overlap_tolerates_contact_only(depth, ok):
    a = obj("crate_1", "crate", (0, 0, 0.25))
    b = obj("crate_2", "crate", (0.5 - depth, 0, 0.25))
    met, _, message = check_no_overlap(scene(a, b), {})
    assert met is ok, message
    if depth == 0.009:
        assert message == "crate_1 intersects crate_2 by 9 mm"


def test_a_ghost_body_does_not_hide_an_overlap_once_the_catalogue_body_is_kept():
    # The verifier keeps the catalogue's body (dynamic) for placed chairs: see test_scene_cheats.
    ghost = obj("chair_1", "chair", (0, 0, 0.45), body="ghost")
    assert check_no_overlap(scene(table(), ghost), {})[0]  # as a ghost it would slip through
    solid = dict(ghost, body="dynamic")
    assert not check_no_overlap(scene(table(), solid), {})[0]


ALONG_X = {"asset": "table", "heading": 0.0, "period": 180.0, "what": "its long side along X"}


@pytest.mark.parametrize(
    ("heading", "ok"),
    [
        (0.0, True),
        (180.0, True),
        (-180.0 + ALIGN_DEG - 1, True),
        (ALIGN_DEG - 1, True),
        (ALIGN_DEG + 1, False),
        (90.0, False),
        (270.0, False),
    ],
)
def test_the_table_lies_as_the_prompt_says(heading, ok):
    met, _, message = check_aligned(scene(table(heading)), ALONG_X)
    assert met is ok, message
    if heading == 90.0:
        assert message == "table_1 is turned 90° from its long side along X"


def test_an_upside_down_table_is_not_aligned():
    flipped = obj("table_1", "table", (0, 0, 0.375), (0, 180, 0))
    met, _, message = check_aligned(scene(flipped), ALONG_X)
    assert not met and "tipped 180°" in message


FACING = {"asset": "chair", "other": "table", "tol_deg": 30}


@pytest.mark.parametrize(
    ("hpr", "ok"),
    [
        ((-90 + 29, 0, 0), True),
        ((-90 + 31, 0, 0), False),
        ((-90, UPRIGHT_DEG - 1, 0), True),
        ((-90, UPRIGHT_DEG + 1, 0), False),
        ((-90, 0, UPRIGHT_DEG - 1), True),
        ((-90, 0, UPRIGHT_DEG + 1), False),
        ((-90, 90, 0), False),
    ],
)
def test_facing_uses_the_full_orientation(hpr, ok):
    chair = obj("chair_1", "chair", (-1.15, 0, 0.45), hpr)  # at the table's west end
    met, _, message = check_facing(scene(table(), chair), FACING)
    assert met is ok, message


def test_a_chair_on_its_back_does_not_face_the_table():
    chair = obj("chair_1", "chair", (-1.3, 0, 0.225), (-90, 90, 0))
    met, _, message = check_facing(scene(table(), chair), FACING)
    assert not met and message == "chair_1 faces 90° away from table_1"


def still(*objects: dict) -> dict:
    """A trace in which nothing moves."""
    return {
        "times": [0.0, 2.0],
        "samples": {o["name"]: [o["pos"] + [1, 0, 0, 0]] * 2 for o in objects},
    }


@pytest.mark.parametrize(
    ("dz", "ok"), [(SUPPORT_M - MM, True), (SUPPORT_M + MM, False), (0.4, False)]
)
def test_resting_needs_support_for_bodies_the_simulation_cannot_drop(dz, ok):
    chair = obj("chair_1", "chair", (0, -1, 0.45 + dz), body="static")
    met, _, message = check_resting(scene(chair), still(chair), {})
    assert met is ok, message
    if dz == 0.4:
        assert message == "chair_1 (static) is 0.40 m above the floor"


def test_a_static_crate_rests_on_a_table_only_with_its_centre_over_the_top():
    over = obj("crate_1", "crate", (0.78, 0, TOP + 0.25), body="static")
    assert check_resting(scene(table(), over), still(table(), over), {})[0]
    past = obj("crate_1", "crate", (0.825, 0, TOP + 0.25), body="static")
    met, _, message = check_resting(scene(table(), past), still(table(), past), {})
    assert not met and message == (
        "crate_1 (static) is with its centre 0.025 m past the edge of what holds it (table_1; "
        "it would tip)"
    )


def domino(k: int, hpr=(0, 0, 0), dz: float = 0.0) -> dict:
    return obj(f"domino_{k}", "domino", (0, 0.25 * k, 0.2 + dz), hpr)


@pytest.mark.parametrize(
    ("pieces", "ok", "words"),
    [
        ([domino(1), domino(2)], True, "starts at rest"),
        ([domino(1, (0, UPRIGHT_DEG - 1, 0))], True, "starts at rest"),
        ([domino(1, (0, UPRIGHT_DEG + 1, 0))], False, "starts tipped 6°"),
        ([obj("domino_1", "domino", (0, 0, 0.1), (0, 0, 90))], False, "starts tipped 90°"),
        ([domino(1, dz=SUPPORT_M - MM)], True, "starts at rest"),
        ([domino(1, dz=SUPPORT_M + MM)], False, "0.006 m above the floor"),
        ([domino(1, dz=-OVERLAP_M + MM)], True, "starts at rest"),
        ([domino(1, dz=-OVERLAP_M - MM)], False, "0.004 m into the floor"),
        (
            [obj("crate_1", "crate", (0, 0, 0.25)), obj("crate_2", "crate", (0, 0, 0.75 + 0.02))],
            False,
            "crate_2 starts 0.020 m above crate_1",
        ),
        (
            [obj("crate_1", "crate", (0, 0, 0.25)), obj("crate_2", "crate", (0.3, 0, 0.75))],
            False,
            "crate_2 starts with its centre 0.050 m past the edge of what holds it",
        ),
    ],
)
def test_a_physics_set_up_must_start_upright_supported_and_apart(pieces, ok, words):
    met, _, message = check_initial(scene(*pieces), {})
    assert met is ok and words in message, message


@pytest.mark.parametrize("depth", [OVERLAP_M - MM, OVERLAP_M + MM])
def test_nothing_may_start_inside_a_level_object(depth):
    ball = obj("ball_1", "ball", (0, 0, 0.15), level=True)
    crate = obj("crate_1", "crate", (-0.4 + depth, 0, 0.25))
    met, _, message = check_initial(scene(ball, crate), {})
    assert met is (depth < OVERLAP_M), message


def test_simulated_checks_earn_nothing_until_the_set_up_starts_right():
    ball = obj("ball_1", "ball", (0, 0, 0.15), level=True)
    zone = obj("goal_zone_1", "goal_zone", (3, 0, 0.25), body="ghost", level=True)
    crate = obj("crate_1", "crate", (-0.3, 0, 0.25))  # 10 cm into the ball
    description = {"objects": [ball, zone, crate]}
    trace = {
        "times": [0.0, 1.0],
        "samples": {"ball_1": [[0, 0, 0.15, 1, 0, 0, 0], [3, 0, 0.15, 1, 0, 0, 0]]},
    }
    constraints = [
        {"kind": "reaches", "name": "ball_1", "zone": "goal_zone_1"},
        {"kind": "initial"},
    ]
    report = verify_scene(description, constraints, "cheap", traces=[trace])
    assert not report.passed and report.score == 0.0
    assert "not credited" in report.checks["reaches"]["message"]
    crate["pos"][0] = -0.5  # clear of the ball: now the same trace counts
    assert verify_scene(description, constraints, "cheap", traces=[trace]).passed


DT = 1 / 60
PASSAGES = [[[off, 2.0, 0.9], [off, 4.0, 0.9]] for off in (-0.2, 0.0, 0.2)]  # door_1's doorway


T0 = 61 * DT  # the first frame after 1.0 s: the player's box then overlaps the zone's


def door_play(opened_at: float | None) -> tuple[dict, dict]:
    """A player walking +X through a 1 m zone at the origin (entering at ``T0``), and a door
    that opens at ``opened_at``; sampled every frame."""
    trajectory = {"path": [[-1.75, 0, 0.9], [1.75, 0, 0.9]], "speed": 1.0}
    times = [k * DT for k in range(361)]
    rows = [
        [0, 3, 3.0 if opened_at is not None and t >= opened_at - 1e-9 else 1.0, 1, 0, 0, 0]
        for t in times
    ]
    return trajectory, {"times": times, "samples": {"door_1": rows}}


@pytest.mark.parametrize(
    ("opened_at", "ok"),
    [
        (T0, True),
        (T0 + DOOR_DELAY_S - DT, True),
        (T0 + DOOR_DELAY_S + DT, False),
        (T0 - 2 * DT, False),
        (T0 + 0.5, False),
        (None, False),
    ],
)
def test_the_door_may_lag_the_player_by_at_most_its_delay(opened_at, ok):
    door = obj("door_1", "door", (0, 3, 1.0), body="kinematic", level=True)
    constraint = {"door": "door_1", "zone": [0, 0, 0.9, 1.0, 1.0, 1.8], "passages": PASSAGES}
    plays = [door_play(opened_at)]
    ((_, (met, _, message)),) = check_door(scene(door), plays, constraint, DT, 6.0)
    assert met is ok, message


TOUCH = 64 * DT  # the first frame after 1.06 s: the player's box then overlaps the coin's


@pytest.mark.parametrize(
    ("gone_at", "ok"),
    [
        (TOUCH + COIN_DELAY_S - DT, True),
        (TOUCH + COIN_DELAY_S + DT, False),
        (TOUCH - 2 * DT, False),
    ],
)
def test_a_touched_coin_must_vanish_within_its_delay(gone_at, ok):
    coin = obj("coin_1", "coin", (0, 0, 0.5), body="ghost", level=True)
    trajectory = {"path": [[-1.46, 0, 0.9], [1.46, 0, 0.9]], "speed": 1.0}
    times = [k * DT for k in range(481)]
    rows = [None if t >= gone_at - 1e-9 else [0, 0, 0.5, 1, 0, 0, 0] for t in times]
    trace = {"times": times, "samples": {"coin_1": rows}, "counters": {"coins": 1}}
    constraint = {"counter": "coins"}
    ((_, (met, _, message)),) = check_coins(scene(coin), [(trajectory, trace)], constraint, DT, 8.0)
    assert met is ok, message


def moved_by(o: dict, distance: float) -> dict:
    end = [o["pos"][0] + distance, o["pos"][1], o["pos"][2], 1, 0, 0, 0]
    return {"times": [0.0, 2.0], "samples": {o["name"]: [o["pos"] + [1, 0, 0, 0], end]}}


@pytest.mark.parametrize(
    ("distance", "ok"), [(RESTING_MOVE_M - MM, True), (RESTING_MOVE_M + MM, False)]
)
def test_resting_allows_a_few_cm_of_settling(distance, ok):
    crate = obj("crate_1", "crate", (0, 0, 0.25))
    assert check_resting(scene(crate), moved_by(crate, distance), {})[0] is ok


@pytest.mark.parametrize(
    ("distance", "ok"), [(STAND_MOVE_M - MM, True), (STAND_MOVE_M + MM, False)]
)
def test_a_stack_stands_while_each_crate_stays_within_5_cm(distance, ok):
    crate = obj("crate_1", "crate", (0, 0, 0.25))
    constraint = {"asset": "crate", "n": 1, "x": 0, "y": 0, "overhang": 0.0}
    assert check_stands(scene(crate), moved_by(crate, distance), constraint)[0] is ok


ROOM = {"width": 6.0, "depth": 6.0, "door_x": 0.0}
SHELF_Y = 3.0 - 0.2  # its back against the north wall's face


@pytest.mark.parametrize(
    ("dy", "heading", "ok"),
    [
        (0.0, 180.0, True),
        (WALL_SLACK_M - MM, 180.0, True),
        (WALL_SLACK_M + MM, 180.0, False),
        (-0.09, 180.0 + WALL_DEG - 1, True),
        (-0.09, 180.0 + WALL_DEG + 1, False),
    ],
)
def test_against_the_wall_within_its_slack_and_facing_the_room(dy, heading, ok):
    shelf = obj("shelf_1", "shelf", (0, SHELF_Y + dy, 0.9), (heading, 0, 0))
    constraint = {"asset": "shelf", "wall": "north", "gap": 0.1}
    met, _, message = check_against_wall(Scene({"room": ROOM, "objects": [shelf]}), constraint)
    assert met is ok, message
