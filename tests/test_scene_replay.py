"""The logic session a logic task's steps are replayed in (``envs/scene/replay.py``): kept
between verifications of one level and rolled back to it each time, it must be as clean as a
fresh session: nothing an earlier replay left (module state, a killed snapshot) reaches the next
one. Real sandbox, Panda3D and Bullet."""

from __future__ import annotations

from toolgym.envs.scene.families import spec_for
from toolgym.envs.scene.replay import LogicReplay
from toolgym.envs.scene.verification import VERIFY_LIMITS, TrustedSimulator, played
from toolgym.envs.tasks.suites import get_task

DOOR = "scene-curated/door-zone-centre"
ZONE = "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8))\n"
BIND = "world.bind('zone_1', 'enter', 'open', 'door_1')\n"
# Opens the door only the first time the script runs in its process: a session that kept
# anything from an earlier replay would leave the door shut.
FIRST_RUN_ONLY = (
    "import builtins\n"
    "builtins.runs = getattr(builtins, 'runs', 0) + 1\n"
    f"{ZONE}"
    "if builtins.runs == 1:\n"
    "    world.bind('zone_1', 'enter', 'open', 'door_1')\n"
)
# Kills every other process the script can see: the parked snapshots among them.
KILL_OTHERS = (
    "import os, signal\n"
    "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
    "    if pid not in (1, os.getpid()):\n"
    "        try:\n"
    "            os.kill(pid, signal.SIGKILL)\n"
    "        except OSError:\n"
    "            pass\n"
)


def door_opened(plays: list[tuple[dict, dict]]) -> list[bool]:
    """Whether the door rose on each play (its centre starts at 1.0 m)."""
    return [max(row[2] for row in trace["samples"]["door_1"] if row) > 1.5 for _, trace in plays]


def expected(spec, simulator: TrustedSimulator) -> list[bool]:
    """The door on each cheap path when it is always bound, in a fresh session: it opens on a
    path that enters the zone, not on one that passes by."""
    plays, why = played(spec, [("code", f"{ZONE}{BIND}")], "cheap", simulator)
    assert why is None and True in door_opened(plays) and False in door_opened(plays)
    return door_opened(plays)


def test_a_kept_logic_session_replays_each_step_from_its_clean_level():
    spec = spec_for(get_task(DOOR).parameters)
    simulator, replay = TrustedSimulator(), LogicReplay(VERIFY_LIMITS)
    try:
        door, results = expected(spec, simulator), []
        for _ in range(3):
            plays, why = played(spec, [("code", FIRST_RUN_ONLY)], "cheap", simulator, None, replay)
            assert why is None
            results.append(door_opened(plays))
        first = replay.session
        assert results == [door] * 3  # the same door on every path, every time
        assert replay.session is first  # one session, rolled back: not started again
        # Loaded once; rolled back to the replayed state once a run, and to the level after it.
        assert first.calls["load"] == 1 and first.calls["rollback"] == 3 + 3
        # Without a kept session the answer is the same.
        plays, why = played(spec, [("code", FIRST_RUN_ONLY)], "cheap", simulator)
        assert why is None and door_opened(plays) == door
    finally:
        simulator.close()
        replay.close()


def test_a_replay_that_kills_the_clean_snapshot_gets_a_fresh_session_next_time():
    spec = spec_for(get_task(DOOR).parameters)
    simulator, replay = TrustedSimulator(), LogicReplay(VERIFY_LIMITS)
    script = KILL_OTHERS + FIRST_RUN_ONLY
    try:
        door = expected(spec, simulator)
        plays, why = played(spec, [("code", script)], "cheap", simulator, None, replay)
        assert why is None and door_opened(plays) == door
        first = replay.session
        assert first is not None and first.calls["load"] == 1
        plays, why = played(spec, [("code", script)], "cheap", simulator, None, replay)
        assert why is None and door_opened(plays) == door
        assert replay.session is not first and replay.session.calls["load"] == 1
    finally:
        simulator.close()
        replay.close()
