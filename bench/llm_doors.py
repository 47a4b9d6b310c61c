"""What the language-model doors add to a step: the env server over HTTP against the same env in
process, and the runner's own work per turn (a chat round trip to a loopback endpoint, a picture
encoded as a data URL).

    .venv/bin/python bench/llm_doors.py --steps 12

Each step adds a box of another size to a CadQuery primitive task in tool mode (a real sandbox
call, tessellation, per-step verification and views), so local and remote steps do the same work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import gymnasium as gym

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.llm.chat import ChatClient
from toolgym.agents.llm.endpoint import ScriptedEndpoint
from toolgym.agents.llm.messages import image_part
from toolgym.envs.serving.remote import RemoteEnv
from toolgym.envs.serving.server import EnvServer

KWARGS = {"task": "primitives/primitive/train-0", "action_mode": "tool", "max_steps": 1000}


def calls(count: int) -> list[str]:
    return [
        json.dumps({"name": "add_box", "arguments": {"length": 5 + k, "width": 6, "height": 7}})
        for k in range(count)
    ]


def step_times(env: gym.Env, count: int) -> list[float]:
    env.reset(seed=0)
    env.step(calls(1)[0])  # warm: the first step builds caches
    times = []
    for action in calls(count):
        started = time.perf_counter()
        env.step(action)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    local = gym.make("toolgym/CadQuery-v0", **KWARGS)
    try:
        local_s = statistics.median(step_times(local, args.steps))
    finally:
        local.close()
    with EnvServer() as server:
        remote = RemoteEnv(server.url, **KWARGS)
        try:
            remote_s = statistics.median(step_times(remote, args.steps))
        finally:
            remote.close()
    print(f"step, in process          {local_s * 1000:8.1f} ms")
    print(f"step, over HTTP           {remote_s * 1000:8.1f} ms")
    print(f"server's overhead         {(remote_s - local_s) * 1000:8.1f} ms per step")
    observation = gym.make("toolgym/CadQuery-v0", **KWARGS).observation_space.sample()
    for size in (128, 256, 512):
        started = time.perf_counter()
        for _ in range(20):
            image_part(observation["image"], size)
        print(
            f"picture as a data URL     {(time.perf_counter() - started) / 20 * 1000:8.2f} ms"
            f" at {size} px"
        )
    messages = [{"role": "user", "content": "x" * 20_000}]
    with ScriptedEndpoint([{"content": "ok"}]) as endpoint:
        client = ChatClient(endpoint.url, "m")
        times = []
        for _ in range(50):
            started = time.perf_counter()
            client.complete(messages, [])
            times.append(time.perf_counter() - started)
        client.close()
    print(f"chat round trip, loopback {statistics.median(times) * 1000:8.2f} ms (20 kB request)")


if __name__ == "__main__":
    main()
