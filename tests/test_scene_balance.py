"""The ``seesaw`` rule of the scene verifier (``families/balance.py``'s outcome), on hand-made
traces: a plank level or tipped by a known angle, a crate on it, off it or above it. Both sides of
each tolerance (``SEESAW_LEVEL_DEG``, ``SEESAW_TIPPED_DEG``, ``ON_CONTACT_M``) are held."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from toolgym.envs.scene import verifier as rules
from toolgym.envs.scene.families import family
from toolgym.envs.scene.geometry import rotation_quat

PLANK_Z = 0.125  # the plank's centre on the balance family's 0.1 m ridge (m)


def _scene(crate_x: float = 0.5) -> dict[str, Any]:
    """A seesaw at the origin: the plank along X, the level's load on its west half, one placed
    crate on its east half (``crate_x`` m out)."""

    def obj(name: str, asset: str, pos: Any, level: bool) -> dict[str, Any]:
        return {"name": name, "asset": asset, "pos": list(pos), "hpr": [0.0, 0.0, 0.0],
                "body": "dynamic", "level": level}  # fmt: skip

    return {
        "objects": [
            obj("plank_1", "plank", (0.0, 0.0, PLANK_Z), True),
            obj("load_1", "crate", (-0.5, 0.0, 0.4), True),
            obj("crate_1", "crate", (crate_x, 0.0, 0.4), False),
        ]
    }


def _quat(east_down_deg: float) -> list[float]:
    """A turn about +Y that lowers the +X end by ``east_down_deg`` (w, x, y, z)."""
    half = math.radians(east_down_deg) / 2
    return [math.cos(half), 0.0, math.sin(half), 0.0]


def _trace(east_down_deg: float, lift: float = 0.0, slide: float = 0.0) -> dict[str, Any]:
    """The seesaw's last sample with the plank turned ``east_down_deg``, each crate on its top
    where it started (plus ``slide`` m along the plank for the placed one, and ``lift`` m
    above the top)."""
    q = _quat(east_down_deg)
    rot = rotation_quat(q)
    centre = np.array([0.0, 0.0, PLANK_Z])
    rows = {"plank_1": [*centre, *q]}
    for name, x in (("load_1", -0.5), ("crate_1", 0.5 + slide)):
        pos = centre + rot @ np.array([x, 0.0, 0.025 + 0.25 + lift])
        rows[name] = [*pos, *q]
    return {"times": [0.0, 3.0], "samples": {n: [None, r] for n, r in rows.items()}}


def _rule(down: int = 0, side: int = 1) -> dict[str, Any]:
    return {"kind": "seesaw", "name": "plank_1", "axis": 0, "pivot": [0.0, 0.0], "down": down,
            "side": side, "loads": ["load_1"], "carry": "crate"}  # fmt: skip


def _check(rule: dict[str, Any], trace: dict[str, Any], crate_x: float = 0.5) -> tuple:
    return rules.check_seesaw(rules.Scene(_scene(crate_x)), trace, rule)


@pytest.mark.parametrize("sign", [1, -1])
def test_level_within_its_tolerance_and_not_past_it(sign: int) -> None:
    assert _check(_rule(), _trace(sign * (rules.SEESAW_LEVEL_DEG - 0.2)))[0]
    ok, shaping, why = _check(_rule(), _trace(sign * (rules.SEESAW_LEVEL_DEG + 0.5)))
    assert not ok and 0 < shaping < 1 and "from level" in why


def test_tipped_to_the_named_end_only() -> None:
    tipped = _trace(rules.SEESAW_TIPPED_DEG + 0.5)  # the east end lower
    assert _check(_rule(down=1), tipped)[0]
    ok, _, why = _check(_rule(down=-1), tipped)
    assert not ok and "+X end lower" in why
    assert not _check(_rule(down=0), tipped)[0]
    assert not _check(_rule(down=1), _trace(rules.SEESAW_TIPPED_DEG - 0.5))[0]
    assert _check(_rule(down=-1), _trace(-(rules.SEESAW_TIPPED_DEG + 0.5)))[0]
    # Shaping: a level plank earns a quarter towards a tip, one tipped the wrong way nothing.
    assert _check(_rule(down=1), _trace(0.0))[1] == pytest.approx(0.25)
    assert _check(_rule(down=-1), tipped)[1] == 0.0


def test_nothing_may_fall_off() -> None:
    ok, shaping, why = _check(_rule(), _trace(0.0, slide=0.6))  # centre past the plank's end
    assert not ok and shaping == pytest.approx(0.5) and "off plank_1" in why  # halved
    tipped = _trace(rules.SEESAW_TIPPED_DEG + 2, lift=rules.ON_CONTACT_M + 0.005)
    ok, _, why = _check(_rule(down=1), tipped)
    assert not ok and "above plank_1's top" in why
    resting = _trace(rules.SEESAW_TIPPED_DEG + 2, lift=rules.ON_CONTACT_M / 2)
    assert _check(_rule(down=1), resting)[0]
    gone = _trace(0.0)
    gone["samples"]["load_1"][-1] = None
    assert "load_1 vanished" in _check(_rule(), gone)[2]


def test_the_crate_starts_on_the_asked_side() -> None:
    ok, _, why = _check(_rule(side=-1), _trace(0.0))
    assert not ok and "wrong side" in why


def test_the_family_states_the_rule_it_checks() -> None:
    """Every balance task (and edit) carries a seesaw rule matching what its prompt asks."""
    balance = family("balance")
    for seed in range(6):
        task = balance.task(seed)
        goal = task.parameters["goal"]
        (rule,) = [c for c in balance.build(task.parameters).constraints if c["kind"] == "seesaw"]
        assert rule["down"] == {"level": 0, "west": -1, "east": 1}[goal]
        assert rule["side"] == (1 if task.parameters["load_side"] == "west" else -1)
        edit = balance.edit_task(seed)
        changed = ("goal", "mass") if edit.parameters["edit"] == "reload" else ("goal",)
        assert edit.start and any(edit.parameters[k] != task.parameters[k] for k in changed)
