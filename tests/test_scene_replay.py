"""The logic session a logic task's steps are replayed in (``envs/scene/replay.py``): kept
between verifications of one level, it starts each from the longest run of the same steps it
replayed before (a snapshot taken before any play) and must answer as a fresh session would:
nothing a play or an earlier replay left reaches the next one, and a killed snapshot gives a
fresh session. Real sandbox, Panda3D and Bullet."""

from __future__ import annotations

from toolgym.envs.scene.families import Spec, spec_for
from toolgym.envs.scene.replay import LogicReplay
from toolgym.envs.scene.verification import VERIFY_LIMITS, TrustedSimulator, played
from toolgym.envs.tasks.suites import get_task

DOOR = "scene-curated/door-zone-centre"
ZONE = "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8))\n"
BIND = "world.bind('zone_1', 'enter', 'open', 'door_1')\n"
# Binds the door only the first time the script runs in its process: a replay that kept
# anything of an earlier one would leave the door shut.
FIRST_RUN_ONLY = (
    "import builtins\n"
    "builtins.runs = getattr(builtins, 'runs', 0) + 1\n"
    f"{ZONE}"
    "if builtins.runs == 1:\n"
    "    world.bind('zone_1', 'enter', 'open', 'door_1')\n"
)
# Opens the door on the first entry its process ever sees: a play that started from anything
# an earlier play left would find it used up.
FIRST_ENTRY_EVER = (
    "import builtins\n"
    "def enter(world, trigger, other):\n"
    "    builtins.entries = getattr(builtins, 'entries', 0) + 1\n"
    "    if builtins.entries == 1:\n"
    "        world.open('door_1')\n"
    "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=enter)\n"
)
CLEAR = "world.clear_logic()\n"  # a later step that removes all logic: the door stays shut
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


def doors(spec: Spec, steps: list[str], tier: str, simulator, replay=None) -> list[bool]:
    plays, why = played(spec, [("code", s) for s in steps], tier, simulator, None, replay)
    assert why is None, why
    return door_opened(plays)


def test_a_kept_logic_session_answers_as_a_fresh_one_and_replays_only_new_steps():
    spec = spec_for(get_task(DOOR).parameters)
    simulator, replay = TrustedSimulator(), LogicReplay(VERIFY_LIMITS)
    try:
        # What the door does at each tier with stateless logic: it opens on the paths that
        # enter the zone (some do, some do not), and with no logic on none.
        opens = {tier: doors(spec, [ZONE + BIND], tier, simulator) for tier in ("cheap", "exact")}
        assert all(True in o and False in o for o in opens.values())
        shut = {tier: [False] * len(o) for tier, o in opens.items()}
        # An episode as an env verifies it: steps accepted one after another, each checked at
        # the cheap tier and some at the exact one, a step that failed and one instead of it.
        runs = [
            ([FIRST_ENTRY_EVER], "cheap", opens),
            ([FIRST_ENTRY_EVER], "exact", opens),
            ([FIRST_ENTRY_EVER, "x = 1\n"], "cheap", opens),
            ([FIRST_ENTRY_EVER, "x = 1\n", CLEAR], "cheap", shut),
            ([FIRST_ENTRY_EVER, "x = 1\n", "y = 2\n"], "exact", opens),
            ([FIRST_ENTRY_EVER, "x = 1\n", CLEAR], "exact", shut),
            ([FIRST_ENTRY_EVER, "x = 1\n", "y = 2\n"], "cheap", opens),
        ]
        for steps, tier, expected in runs:
            assert doors(spec, steps, tier, simulator) == expected[tier]  # a fresh session
            assert doors(spec, steps, tier, simulator, replay) == expected[tier], steps
        session = replay.session
        # One session, the level loaded once, each step replayed once: the first, "x", CLEAR
        # and "y" (the other runs start from the state their steps left, kept before any play).
        assert session.calls["load"] == 1 and session.calls["exec"] == 4
    finally:
        simulator.close()
        replay.close()


def test_a_replay_that_kills_the_kept_snapshots_gets_a_fresh_session_next_time():
    spec = spec_for(get_task(DOOR).parameters)
    simulator, replay = TrustedSimulator(), LogicReplay(VERIFY_LIMITS)
    try:
        door = doors(spec, [f"{ZONE}{BIND}"], "cheap", simulator)
        assert door == doors(spec, [KILL_OTHERS + FIRST_RUN_ONLY], "cheap", simulator, replay)
        first = replay.session
        assert first is not None and first.calls["load"] == 1
        # Steps that do not start with that one start from the level, whose snapshot it killed.
        assert door == doors(spec, [FIRST_RUN_ONLY], "cheap", simulator, replay)
        assert replay.session is not first and replay.session.calls["load"] == 1
    finally:
        simulator.close()
        replay.close()
