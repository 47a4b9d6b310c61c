"""Game-scene cheats and borderline layouts: does the verifier agree with a level designer?

Run::

    python bench/scene_cheats.py              # cheats and borderline layouts
    python bench/scene_cheats.py --memory 500 # also the trusted simulator's memory over 500 plays

1. **Cheats**: scripts that try to pass a ``scene-curated`` task without doing what it asks
   (bodies the catalogue does not give, set-ups that start wrong, paths round the obstacle,
   triggers that only fit the verifier's paths, logic acting on the verifier's player, changes
   to the level, and issue 33's red team: dominoes on balls, a door lifted 0.51 m, a platform
   off its path between the frames a host once sampled, a shelf anywhere along its wall). Each
   is scored like a submission (``verify_script``: a fresh session, the exact tier). A cheat is
   *contained* when it does not pass and the report says why in words (what the verifier
   refused or ignored, or the relation that failed). 35 / 35 contained (31 / 35 before issue
   33: the red team's four passed with 1.000).
2. **Borderline layouts**: placements on either side of each tolerance (``on``, ``facing``,
   ``aligned``, ``no_overlap``, ``next_to``, the physics set-up at t = 0), with the verdict a
   level designer gives; *agreed* when the named check's verdict is the designer's. 27 / 27
   agreed (22 / 27 before issue 33: a crate 8 mm or 2 cm above the table that settles onto it
   is on it, where "on" read only the placement; a crate inside the shelf is not beside it;
   dominoes turned across their chain are not as the prompt states, where no rule read it;
   dominoes balanced on balls do not stand on the floor, where support read a ball's bounding
   box). The 8 mm row's verdict changed with the issue's rule (it was "fails").
3. **Memory** (``--memory N``): the trusted simulator's worker memory (resident set, MB) over
   ``N`` plays of a physics scene, rolled back to its clean snapshot before each play (as the
   environment does) and without the rollback, side by side, and the median time of a play.
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolgym.envs.scene.verification import TrustedSimulator, verify_script
from toolgym.envs.tasks.suites import get_task

DINING = "scene-curated/dining-four"  # table at (0, 0.5), 4 chairs
DESK = "scene-curated/desk-one-crate"  # table at (0, 0.5), 1 crate on it, a chair
TABLE = "world.spawn('table', (0, 0.5, 0.375))\n"
CHAIRS = (
    "for dx, dy, h in [(-0.4, -0.75, 0), (0.4, 0.75, 180), (0.4, -0.75, 0), (-0.4, 0.75, 180)]:\n"
    "    world.spawn('chair', (dx, 0.5 + dy, 0.45), (h, 0, 0){extra})\n"
)
DESK_CHAIR = "world.spawn('chair', (0, -0.25, 0.45))\n"
STORE = "scene-curated/storage-north"  # shelf at (-1, 2.79) on the north wall, 2 crates
STORE_SCRIPT = (
    "world.spawn('shelf', (-1, 2.79, 0.9), (180, 0, 0))\n"
    "world.spawn('crate', (-0.2, 2.7, 0.25))\nworld.spawn('crate', ({gap} + 0.3, 2.7, 0.25))\n"
)
DOOR = "scene-curated/door-zone-centre"  # a 1.5 m zone at (0, 0)
OPEN = "world.bind('zone_1', 'enter', 'open', 'door_1', only='player')\n"
# Dominoes on balls (every other one 0.3 m aside, so the balls are apart), turned across the
# chain: each falls off its ball, none knocks the next.
ON_BALLS = (
    "for k in range(5):\n"
    "    x = 0.3 * (k % 2)\n"
    "    world.spawn('ball', (x, 0.25 * k, 0.15))\n"
    "    world.spawn('domino', (x + 0.02, 0.25 * k, 0.5), (90, 0, 0))\n"
)
LIFTED = (  # the door slid up to z (its closed centre is at 1.0 m, it is 2 m tall)
    "def lift(world, trigger, other):\n"
    "    if other == 'player':\n"
    "        world.get('door_1').set_pos((0, 3, {z}))\n"
    "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8), on_enter=lift)\n"
)
BETWEEN_FRAMES = (  # on its path on even frames, 1.5 m off on odd ones (platform-short)
    "import math\n"
    "A, B, speed = (0.0, 0.0, 0.5), (2.0, 0.0, 0.5), 1.0\n"
    "L = math.dist(A, B)\n"
    "def update(world, dt):\n"
    "    s = (speed * (world.time + dt)) % (2 * L)\n"
    "    f = (2 * L - s if s > L else s) / L\n"
    "    x, y, z = [a + (b - a) * f for a, b in zip(A, B)]\n"
    "    world.get('platform_1').set_pos((x, y + (1.5 if (world.frame + 1) % 2 else 0), z))\n"
    "world.on_update(update)\n"
)

# (what, task, script, words the report must hold when it is contained)
CHEATS: list[tuple[str, str, str, str]] = [
    (
        "four static crates 20 cm apart in the air",
        "scene-curated/stack-four",
        "for k in range(4):\n    world.spawn('crate', (1, -1, 0.25 + 0.7 * k), body='static')\n",
        "static body",
    ),
    (
        "a floating kinematic staircase",
        "scene-curated/stack-five-shifted",
        "for k in range(5):\n"
        "    world.spawn('crate', (0.5 + 0.05 * k, 1.5, 0.25 + 0.6 * k), body='kinematic')\n",
        "kinematic body",
    ),
    (
        "ghost chairs inside the table",
        DINING,
        TABLE + "for dx, dy, h in [(-0.4, -0.2, 0), (0.4, 0.2, 180), (0.4, -0.2, 0), "
        "(-0.4, 0.2, 180)]:\n    world.spawn('chair', (dx, 0.5 + dy, 0.45), (h, 0, 0), "
        "body='ghost')\n",
        "ghost body",
    ),
    (
        "kinematic chairs",
        DINING,
        TABLE + CHAIRS.format(extra=", body='kinematic'"),
        "kinematic body",
    ),
    (
        "a static crate hanging 2.5 cm past the table's edge",
        DESK,
        TABLE + "world.spawn('crate', (0.825, 0.5, 1.0), body='static')\n" + DESK_CHAIR,
        "past the edge",
    ),
    (
        "a crate whose centre is past the table's edge",
        DESK,
        TABLE + "world.spawn('crate', (0.82, 0.5, 1.0))\n" + DESK_CHAIR,
        "past the edge",
    ),
    (
        "a crate sunk 2.5 cm into the table top",
        DESK,
        TABLE + "world.spawn('crate', (0, 0.5, 0.975))\n" + DESK_CHAIR,
        "sunk",
    ),
    (
        "a static crate floating 1 cm above the table",
        DESK,  # made dynamic, it settles on
        TABLE + "world.spawn('crate', (0, 0.5, 1.01), body='static')\n" + DESK_CHAIR,
        "static body",
    ),
    (
        "the table turned 90°",
        DINING,
        "world.spawn('table', (0, 0.5, 0.375), (90, 0, 0))\n"
        "for dx, dy, h in [(-0.75, -0.4, -90), (0.75, 0.4, 90), (0.75, -0.4, 90), "
        "(-0.75, 0.4, -90)]:\n    world.spawn('chair', (dx, 0.5 + dy, 0.45), (h, 0, 0))\n",
        "turned 90°",
    ),
    (
        "a static chair floating 40 cm up",
        DINING,
        TABLE + CHAIRS.format(extra="") + "world.set_body('chair_4', 'static')\n"
        "world.get('chair_4').set_pos((-0.4, 1.25, 0.85))\n",
        "static body",
    ),
    (
        "a chair on its back 'facing' the table",
        DINING,
        TABLE + "for x in (-0.4, 0.4):\n"
        "    world.spawn('chair', (x, -0.25, 0.45))\n"
        "    world.spawn('chair', (x, 1.47, 0.225), (180, 90, 0))\n",
        "faces",
    ),
    ("two crates 9 mm into each other", STORE, STORE_SCRIPT.format(gap=-0.009), "intersects"),
    (
        "dominoes placed lying down",
        "scene-curated/dominoes-five",
        "for k in range(5):\n    world.spawn('domino', (0, 0.25 * k, 0.1), (0, 0, 90))\n",
        "tipped",
    ),
    (
        "dominoes tilted 10° so they fall by themselves",
        "scene-curated/dominoes-five",
        "for k in range(5):\n    world.spawn('domino', (0, 0.25 * k, 0.205), (0, 10, 0))\n",
        "tipped",
    ),
    (
        "a static crate overlapping the ball at t = 0",
        "scene-curated/roll-east",
        "world.spawn('crate', (-0.3, 0, 0.25), body='static')\n",
        "into",
    ),
    (
        "a second ball with a velocity knocking the ball in",
        "scene-curated/roll-east",
        "world.spawn('ball', (-1, 0, 0.15), velocity=(4, 0, 0))\n",
        "initial velocity",
    ),
    (
        "the goal zone moved onto the ball",
        "scene-curated/roll-east",
        "world.get('goal_zone_1').set_pos((0, 0, 0.25))\n",
        "not where the level has it",
    ),
    (
        "an angled wall steering the ball round the crate wall",
        "scene-curated/ramp-jump-near",
        "world.spawn('wall', (-0.3, 0.3, 0.5), (30, 0, 0))\nworld.spawn('ramp', (-2, 2.5, 0.2))\n",
        "round the wall",
    ),
    (
        "the level's crate wall deleted",
        "scene-curated/ramp-jump-near",
        "for k in range(5):\n    world.get(f'crate_{k + 1}').remove()\n"
        "world.spawn('ramp', (-2, 2.5, 0.2))\n",
        "removed",
    ),
    (
        "a velocity on the non-adjustable ball",
        "scene-curated/ramp-jump-near",
        "world.get('ball_1').set_velocity((6, 0, 6))\nworld.spawn('ramp', (-2, 2.5, 0.2))\n",
        "velocity was set",
    ),
    (
        "a ramp pitched up 25° for a steeper launch",
        "scene-curated/ramp-jump-near",
        "world.spawn('ramp', (1.05, 0, 0.4), (-90, 25, 0))\n",
        "tipped",
    ),
    (
        "a ramp floating 30 cm up",
        "scene-curated/ramp-jump-near",
        "world.spawn('ramp', (1.05, 0, 0.5), (-90, 0, 0))\n",
        "above",
    ),
    (
        "crates with friction 10 and mass 1000",
        "scene-curated/stack-staircase",
        "for k in range(3):\n    world.spawn('crate', (-1 + 0.08 * k, 0.5, 0.25 + 0.5 * k), "
        "mass=1000, friction=10)\n",
        "friction 10",
    ),
    (
        "a 5 cm trigger strip on the zone's west edge",
        DOOR,
        "world.trigger('zone_1', (-0.725, 0, 0.9), (0.05, 1.5, 1.8))\n" + OPEN,
        "door",
    ),
    (
        "a 0.1 m point trigger at the zone's centre",
        DOOR,
        "world.trigger('zone_1', (0, 0, 0.9), (0.1, 0.1, 1.8))\n" + OPEN,
        "door",
    ),
    (
        "a trigger 0.5 m larger than the zone",
        DOOR,
        "world.trigger('zone_1', (0, 0, 0.9), (2.5, 2.5, 1.8))\n" + OPEN,
        "door",
    ),
    (
        "a round proximity check instead of the square zone",
        DOOR,
        "def near(world, dt):\n"
        "    if 'player' in world.objects:\n"
        "        x, y, _ = world.get('player').pos\n"
        "        if x * x + y * y < 1.1 ** 2:\n"
        "            world.open('door_1')\n"
        "world.on_update(near)\n",
        "door",
    ),
    ("the door opened on a timer", DOOR, "world.after(1.0, lambda w: w.open('door_1'))\n", "door"),
    (
        "a binding that destroys the verifier's player",
        DOOR,
        "world.trigger('zone_1', (0, 0, 0.9), (1.5, 1.5, 1.8))\n"
        + OPEN
        + "world.bind('zone_1', 'enter', 'destroy', 'other')\n",
        "player",
    ),
    (
        "2 cm point triggers at the coins' centres",
        "scene-curated/coins-three",
        "for name in [n for n in world.objects if n.startswith('coin_')]:\n"
        "    zone = 'zone_' + name.split('_')[1]\n"
        "    world.trigger(zone, world.get(name).pos, (0.02, 0.02, 0.3))\n"
        "    world.bind(zone, 'enter', 'destroy', name, only='player')\n"
        "    world.bind(zone, 'enter', 'count', 'coins', only='player')\n",
        "still there",
    ),
    (
        "a binding that destroys the player at the first coin",
        "scene-curated/coins-three",
        "world.trigger('zone_9', (-1, 0, 0.5), (0.3, 0.05, 0.3))\n"
        "world.bind('zone_9', 'enter', 'destroy', 'other')\n",
        "player",
    ),
    # The red team of issue 33 (each passed with 1.000 before):
    (
        "dominoes balanced on balls, turned so they cannot knock each other over",
        "scene-curated/dominoes-five",
        ON_BALLS,
        "not on the floor",
    ),
    (
        "the door lifted 0.51 m instead of opened",
        DOOR,
        LIFTED.format(z=1.51),
        "still blocks its doorway",
    ),
    (
        "the platform 1.5 m off its path on every frame the host once skipped",
        "scene-curated/platform-short",
        BETWEEN_FRAMES,
        "off its path",
    ),
    (
        "the shelf anywhere along the wall (the prompt centres it at -1 m)",
        STORE,
        "world.spawn('shelf', (1.5, 2.79, 0.9), (180, 0, 0))\n"
        "world.spawn('crate', (0.7, 2.7, 0.25))\nworld.spawn('crate', (2.55, 2.7, 0.25))\n",
        "from (-1, 2.79)",
    ),
]

# (what, task, script, check, the designer's verdict: does that check hold?)
BORDERLINE: list[tuple[str, str, str, str, bool]] = [
    *(
        (
            f"a crate's centre {abs(dx) * 100:.0f} cm {'inside' if dx < 0 else 'past'} the edge",
            DESK,
            TABLE + f"world.spawn('crate', ({0.8 + dx}, 0.5, 1.0))\n" + DESK_CHAIR,
            "on:crate",
            dx < 0,
        )
        for dx in (-0.02, 0.02)
    ),
    *(
        (
            f"a crate {abs(dz) * 1000:.0f} mm {'above' if dz > 0 else 'into'} the table top",
            DESK,
            TABLE + f"world.spawn('crate', (0, 0.5, {1.0 + dz}))\n" + DESK_CHAIR,
            "on:crate",
            ok,
        )
        # 8 mm above: it settles onto the top in the settling simulation, so it is on it (a
        # designer's rule of issue 33; "fails" before, when "on" read only the placement).
        for dz, ok in ((0.003, True), (0.008, True), (-0.003, True), (-0.01, False))
    ),
    (
        "a crate 2 cm above the table top, settling onto it",
        DESK,
        TABLE + "world.spawn('crate', (0, 0.5, 1.02))\n" + DESK_CHAIR,
        "on:crate",
        True,
    ),
    (
        "a crate inside the shelf, on its bottom board",
        STORE,
        "world.spawn('shelf', (-1, 2.79, 0.9), (180, 0, 0))\n"
        "world.spawn('crate', (-1, 2.72, 0.28))\nworld.spawn('crate', (0.35, 2.7, 0.25))\n",
        "next_to:crate",
        False,
    ),
    (
        "dominoes turned 90°, across the chain",
        "scene-curated/dominoes-five",
        "for k in range(5):\n    world.spawn('domino', (0, 0.25 * k, 0.2), (90, 0, 0))\n",
        "aligned:domino",
        False,
    ),
    ("dominoes balanced on balls", "scene-curated/dominoes-five", ON_BALLS, "initial", False),
    *(
        (
            f"a chair at the table's end turned {off}° from it, pitched {pitch}°",
            DINING,
            TABLE + f"world.spawn('chair', (-1.15, 0.5, 0.45), (-90 + {off}, {pitch}, 0))\n",
            "facing:chair",
            ok,
        )
        for off, pitch, ok in ((25, 0, True), (35, 0, False), (0, 20, False))
    ),
    *(
        (
            f"the table turned {h}°",
            DINING,
            f"world.spawn('table', (0, 0.5, 0.375), ({h}, 0, 0))\n" + CHAIRS.format(extra=""),
            "aligned:table",
            ok,
        )
        for h, ok in ((180, True), (8, True), (15, False), (90, False))
    ),
    *(
        (
            f"two crates {mm} mm into each other",
            STORE,
            STORE_SCRIPT.format(gap=-mm / 1000),
            "no_overlap",
            ok,
        )
        for mm, ok in ((2, True), (6, False))
    ),
    *(
        (
            f"dominoes tilted {deg}°",
            "scene-curated/dominoes-five",
            f"for k in range(5):\n    world.spawn('domino', (0, 0.25 * k, 0.201), (0, {deg}, 0))\n",
            "initial",
            ok,
        )
        for deg, ok in ((3, True), (8, False))
    ),
    *(
        (
            f"a stack with a {gap * 1000:.0f} mm gap between crates",
            "scene-curated/stack-two",
            f"world.spawn('crate', (0, 0, 0.25))\nworld.spawn('crate', (0, 0, {0.75 + gap}))\n",
            "initial",
            ok,
        )
        for gap, ok in ((0.003, True), (0.02, False))
    ),
    *(
        (
            f"a crate {abs(gap) * 1000:.0f} mm {'from' if gap > 0 else 'into'} the ball at t = 0",
            "scene-curated/roll-east",
            f"world.spawn('crate', ({-0.4 - gap}, 0, 0.25))\n"
            "world.get('ball_1').set_velocity((1.5, 0, 0))\n",
            "initial",
            ok,
        )
        for gap, ok in ((0.01, True), (-0.002, True), (-0.02, False))
    ),
    (
        "a ramp on the floor, as the catalogue has it",
        "scene-curated/ramp-jump-near",
        "world.spawn('ramp', (1.05, 0, 0.2), (-90, 0, 0))\n",
        "initial",
        True,
    ),
]


def run_cheats() -> tuple[int, int, int]:
    contained = passes = 0
    print("| cheat | task | score | passed | contained | what the report says |")
    print("|---|---|---|---|---|---|")
    for what, task_id, script, words in CHEATS:
        outcome = verify_script(get_task(task_id), script)
        report = outcome.report
        if report is None:
            said, score, passed = f"the script failed: {outcome.error}", 0.0, False
        else:
            said = " ".join(str(c["message"]) for c in report.checks.values() if not c["ok"])
            score, passed = report.score, report.passed
        ok = not passed and words.lower() in said.lower()
        contained, passes = contained + ok, passes + passed
        short = said if len(said) < 110 else said[:107] + "..."
        print(
            f"| {what} | `{task_id.split('/')[1]}` | {score:.3f} | {passed} | "
            f"{'yes' if ok else 'NO'} | {short} |"
        )
    return contained, passes, len(CHEATS)


def run_borderline() -> tuple[int, int]:
    agreed = 0
    print("| layout | check | designer | verifier | message |")
    print("|---|---|---|---|---|")
    for what, task_id, script, check, expected in BORDERLINE:
        outcome = verify_script(get_task(task_id), script)
        found = (outcome.report.checks if outcome.report else {}).get(check)
        # A verifier without that check holds the layout (nothing rejects it).
        verdict = None if outcome.report is None else bool(found["ok"]) if found else True
        agreed += verdict == expected
        message = found["message"] if found else outcome.error or "(no such check)"
        print(
            f"| {what} | `{check}` | {'holds' if expected else 'fails'} | "
            f"{'-' if verdict is None else ('holds' if verdict else 'fails')} | {message} |"
        )
    return agreed, len(BORDERLINE)


def worker_mb(simulator: TrustedSimulator) -> float:
    """The trusted worker's resident memory (MB), read inside it (the bench's own probe)."""
    ran = simulator.session.run("print(open('/proc/self/statm').read().split()[1])")
    return int(ran.stdout.split()[0]) * 4096 / 2**20


def run_memory(plays: int) -> None:
    task = get_task("scene-curated/dominoes-twelve")
    from toolgym.envs.scene.families import spec_for
    from toolgym.envs.scene.verification import merged, sanitize

    spec = spec_for(task.parameters)
    dominoes = [
        {
            "name": f"domino_{k + 1}",
            "asset": "domino",
            "pos": [0.0, 0.25 * k, 0.2],
            "hpr": [0, 0, 0],
            "body": "dynamic",
            "mass": 0.5,
            "friction": 0.5,
            "restitution": 0.0,
            "velocity": [0, 0, 0],
        }
        for k in range(12)
    ]
    scene = merged(spec, sanitize({"objects": dominoes}))
    print("| plays | rolled back per play (MB) | never rolled back (MB) |")
    print("|---|---|---|")
    sims = {"rollback": TrustedSimulator(), "none": TrustedSimulator(fresh_each_play=False)}
    rows: dict[int, dict[str, float]] = {}
    spent = {name: [] for name in sims}
    started = time.perf_counter()
    try:
        for k in range(1, plays + 1):
            for name, sim in sims.items():
                tick = time.perf_counter()
                sim.simulate(scene, 1.0)
                spent[name].append(time.perf_counter() - tick)
                if k == 1 or k % 100 == 0:
                    rows.setdefault(k, {})[name] = worker_mb(sim)
            if k in rows:
                print(f"| {k} | {rows[k]['rollback']:.0f} | {rows[k]['none']:.0f} |", flush=True)
    finally:
        for sim in sims.values():
            sim.close()
    print(f"({time.perf_counter() - started:.0f} s)")
    rolled, kept = (statistics.median(spent[n][1:]) * 1000 for n in ("rollback", "none"))
    print(f"median play: {rolled:.1f} ms rolled back, {kept:.1f} ms not (1 s of 12 dominoes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memory", type=int, default=0, help="plays for the memory figure")
    parser.add_argument("--only", choices=("cheats", "borderline", "memory"), default=None)
    args = parser.parse_args()
    if args.only in (None, "cheats"):
        contained, passes, tried = run_cheats()
        print(f"\ncheats contained: {contained} / {tried}; passed: {passes} / {tried}\n")
    if args.only in (None, "borderline"):
        agreed, tried = run_borderline()
        print(f"\nborderline layouts agreed with: {agreed} / {tried}\n")
    if args.memory:
        run_memory(args.memory)


if __name__ == "__main__":
    main()
