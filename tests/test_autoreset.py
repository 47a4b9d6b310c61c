"""Gymnasium's three autoreset modes on toolgym's vector envs, local and Ray, against Gymnasium's
own vector envs (``SyncVectorEnv`` and ``AsyncVectorEnv``, which agree) over the same environments
and seeds: the same episodes, rewards, ends and final observations, step for step; ``reset_mask``
where autoreset is disabled; Gymnasium's vector wrappers on top."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

from toolgym.agents.trainer.task_env import make_env
from toolgym.agents.trainer.vector import make_vector_env
from toolgym.envs.tasks.suites import get_suite

ENV = "toolgym/CadQuery-v0"
ENV_KWARGS = {"suite": "primitives", "max_steps": 2, "view_size": 16, "final_tier": "cheap"}
TRAIN = [t.id for t in get_suite("primitives").split("train")]
WRONG = '{"name": "no_such_tool", "arguments": {}}'  # a failed step: every episode runs 2 steps
MODES = list(AutoresetMode)


def gymnasiums(mode: AutoresetMode, kind: type = SyncVectorEnv) -> gym.vector.VectorEnv:
    """Gymnasium's own vector env (``SyncVectorEnv`` or ``AsyncVectorEnv``) over the same two
    environments."""
    factory = functools.partial(make_env, ENV, TRAIN, ENV_KWARGS)
    # Not forked from this process, which holds threads (Ray's, an env's snapshotter): forked,
    # a child can inherit a lock held by one of them and die before it answers.
    context = {"context": "forkserver"} if kind is AsyncVectorEnv else {}
    return kind([factory] * 2, autoreset_mode=mode, **context)


def trace(vec: gym.vector.VectorEnv, steps: int = 5, before_step=None) -> list[tuple]:
    """What ``vec`` shows over ``steps`` steps from seed 7 (every env fails every call, so each
    episode runs to its ``max_steps`` of 2), under its episode statistics wrapper; with autoreset
    disabled, the ended envs reset by mask after each step. ``before_step(k)`` runs before
    step ``k``."""
    vec = gym.wrappers.vector.RecordEpisodeStatistics(vec)
    observations, info = vec.reset(seed=7)
    seen = [("reset", list(observations["prompt"]), list(observations["step"]))]
    for k in range(steps):
        if before_step is not None:
            before_step(k)
        observations, rewards, terminated, truncated, info = vec.step([WRONG] * 2)
        finals = info.get("final_obs")
        seen.append((
            list(observations["prompt"]), list(observations["step"]), rewards.tolist(),
            terminated.tolist(), truncated.tolist(),
            None if finals is None else [f and (f["prompt"], f["step"]) for f in finals],
            None if "episode" not in info else info["episode"]["l"].tolist(),
        ))  # fmt: skip
        ended = terminated | truncated
        if vec.metadata["autoreset_mode"] is AutoresetMode.DISABLED and ended.any():
            observations, info = vec.reset(options={"reset_mask": ended})
            seen.append(("masked", list(observations["prompt"]), list(observations["step"])))
    return seen


@pytest.fixture(scope="module")
def reference() -> dict[AutoresetMode, list[tuple]]:
    """Gymnasium's traces of each mode; its synchronous and asynchronous vector envs agree."""
    out = {}
    for mode in MODES:
        traces = []
        for kind in (SyncVectorEnv, AsyncVectorEnv):
            vec = gymnasiums(mode, kind)
            try:
                traces.append(trace(vec))
            finally:
                vec.close()
        assert traces[0] == traces[1], mode
        out[mode] = traces[0]
    return out


def test_the_modes_differ_where_gymnasium_says(reference):
    """Same-step restarts in the ending step (final obs reported); next-step resets on the step
    after (reward 0); disabled waits for the mask's reset."""
    same, following = reference[AutoresetMode.SAME_STEP], reference[AutoresetMode.NEXT_STEP]
    disabled = reference[AutoresetMode.DISABLED]
    assert same[2][1] == [0, 0] and same[2][5] is not None  # step 2 ended: a fresh episode
    assert following[2][1] == [2, 2] and following[3][1] == [0, 0] and following[3][2] == [0, 0]
    assert disabled[2][1] == [2, 2] and disabled[3][0] == "masked" and disabled[3][2] == [0, 0]
    assert same[2][6] == [2, 2]  # the wrapper counted each episode's length


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
def test_local_workers_take_each_mode_as_gymnasium(mode, reference):
    vec = make_vector_env(ENV, TRAIN, 2, asynchronous=True, autoreset_mode=mode, **ENV_KWARGS)
    try:
        assert vec.metadata["autoreset_mode"] is mode
        assert trace(vec) == reference[mode]
    finally:
        vec.close()


@pytest.mark.slow  # a local Ray: tens of seconds to start
def test_ray_actors_take_each_mode_as_gymnasium(reference):
    from test_ray import kill

    from toolgym.agents.distributed import runners

    runners.start("local")
    try:
        for mode in MODES:
            vec = make_vector_env(ENV, TRAIN, 2, ray="local", autoreset_mode=mode, **ENV_KWARGS)
            try:
                assert vec.metadata["autoreset_mode"] is mode
                assert trace(vec) == reference[mode], mode
                if mode is AutoresetMode.DISABLED:
                    # An actor lost after a masked reset: its replacement replays the whole
                    # reset, the steps and the masked reset, then takes the step in flight.
                    def lose_an_actor(k: int, vec=vec) -> None:
                        if k == 3:
                            kill(vec.actor_pids()[0])

                    assert trace(vec, before_step=lose_an_actor) == reference[mode]
                    assert vec.restarts == 1
                    # An ended env is not stepped unreset.
                    vec.reset(seed=1)
                    vec.step([WRONG] * 2)
                    vec.step([WRONG] * 2)
                    with pytest.raises(ValueError, match=r"env\(s\) \[0, 1\] ended"):
                        vec.step([WRONG] * 2)
                    with pytest.raises(ValueError, match="reset_mask"):
                        vec.reset(options={"reset_mask": [True, False]})
            finally:
                vec.close()
    finally:
        import ray

        ray.shutdown()
