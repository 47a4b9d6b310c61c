"""Many sessions at once, sessions inside vector-env workers, and a zygote killed mid-run."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import pytest

from toolgym.envs.sandbox import Session, get_zygote


def test_many_sessions_at_once():
    def work(i: int) -> float:
        with Session("cadquery", snapshot_on_start=False) as session:
            result = session.run(
                f"v = cq.Workplane().box({i + 1}, 2, 3).val().Volume()", fetch=["v"]
            )
            assert result.ok, result.feedback()
            return result.results["v"]

    with ThreadPoolExecutor(6) as pool:
        volumes = list(pool.map(work, range(12)))
    assert volumes == pytest.approx([(i + 1) * 6.0 for i in range(12)])


def test_sessions_are_isolated_from_each_other():
    with Session("cadquery") as a, Session("cadquery") as b:
        a.run("secret = 'only in a'")
        probe = b.run(
            "import os\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
            fetch=["pids"],
        )
        assert b.run("secret").error.kind == "exception"
        # b sees only its own PID namespace: its init, its worker and its snapshot.
        assert len(probe.results["pids"]) == 3


class BoxEnv(gym.Env):
    """A minimal env whose every step runs a CadQuery script in its own sandbox session."""

    observation_space = gym.spaces.Box(0, 1e6, (1,), np.float64)
    action_space = gym.spaces.Discrete(4)

    def __init__(self) -> None:
        self.session: Session | None = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if self.session is not None:
            self.session.close()
        self.session = Session("cadquery")
        return np.zeros(1), {}

    def step(self, action):
        result = self.session.run(
            f"v = cq.Workplane().box({int(action) + 1}, 2, 5).val().Volume()", fetch=["v"]
        )
        return np.array([result.results["v"]]), 1.0, False, False, {"pid": os.getpid()}

    def close(self):
        if self.session is not None:
            self.session.close()


@pytest.mark.parametrize("daemon", [False, True])
def test_async_vector_env_workers_run_their_own_sessions(daemon):
    envs = gym.vector.AsyncVectorEnv([BoxEnv, BoxEnv], daemon=daemon)
    try:
        envs.reset(seed=0)
        observations, _rewards, *_, infos = envs.step(np.array([0, 3]))
        assert observations[:, 0].tolist() == pytest.approx([10.0, 40.0])
        assert len(set(infos["pid"])) == 2 and os.getpid() not in infos["pid"]
    finally:
        envs.close()


def test_zygote_killed_mid_run_recovers():
    zygote = get_zygote("cadquery")
    starts = zygote.starts
    with Session("cadquery") as session:
        outcome = {}
        runner = threading.Thread(
            target=lambda: outcome.update(
                r=session.run("import time\ntime.sleep(0.5)\ndone = True", fetch=["done"])
            )
        )
        runner.start()
        os.kill(zygote.pid, signal.SIGKILL)
        runner.join()
        assert outcome["r"].ok and outcome["r"].results == {
            "done": True
        }  # running sessions live on
        assert session.run("x = 1", fetch=["x"]).results == {"x": 1}
    with Session("cadquery") as fresh:  # the zygote is restarted on demand
        assert fresh.run("v = cq.Workplane().sphere(1).val().Volume()", fetch=["v"]).ok
    assert zygote.starts == starts + 1 and zygote.alive()
