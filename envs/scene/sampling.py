"""What the verifier watches while a world runs: every object's pose at every frame.

A :class:`Recorder` samples a world at its start and after every frame it runs, right after the
frame's physics and trigger tests (``World.step``), before anything else may change it: every
state that took part in the simulation is in the trace, so there is no frame between samples in
which a body could be somewhere else. Its :meth:`Recorder.trace` is the plain-data trace the
scene verifier reads: ``times`` (s), ``samples`` ({name: [[x, y, z, qw, qx, qy, qz] or None, ...]},
None while the object is absent or not finite), ``assets``, ``final`` (``World.state``),
``events``, ``counters`` and ``counters_t`` (the counters at each sample).
"""

from __future__ import annotations

import math
from typing import Any


class Recorder:
    """Samples ``world`` (a ``World``) as it is stepped; call :meth:`after_frame` after each
    frame's ``World.step``."""

    def __init__(self, world: Any, frames: int) -> None:
        self.world, self.frames = world, frames
        self.times: list[float] = []
        self.samples: dict[str, list[Any]] = {}
        self.counters_t: list[dict[str, int]] = []
        self.assets: dict[str, str] = {}
        self.sample()

    def sample(self) -> None:
        world, samples = self.world, self.samples
        self.times.append(world.time)
        for name in list(samples) + [n for n in world.objects if n not in samples]:
            if name not in samples:
                samples[name] = [None] * (len(self.times) - 1)
            obj = world.objects.get(name)
            if obj is None:
                samples[name].append(None)
                continue
            self.assets.setdefault(name, obj.asset)
            p, q = obj.node.get_pos(), obj.node.get_quat()
            row = [p.x, p.y, p.z, q.get_r(), q.get_i(), q.get_j(), q.get_k()]
            samples[name].append(row if all(map(math.isfinite, row)) else None)
        self.counters_t.append(dict(world.counters))

    def after_frame(self) -> None:
        """Sample the frame that has just run."""
        self.sample()

    def trace(self) -> dict[str, Any]:
        world = self.world
        return {
            "times": self.times,
            "samples": self.samples,
            "assets": self.assets,
            "final": world.state(),
            "events": world.events[:2000],
            "counters": dict(world.counters),
            "counters_t": self.counters_t,
        }


def sampled(world: Any, seconds: float) -> dict[str, Any]:
    """Run ``world`` for ``seconds`` and return its trace, one sample a frame (see the module
    docstring)."""
    frames = round(seconds / world.dt)
    recorder = Recorder(world, frames)
    for _ in range(frames):
        world.step()
        recorder.after_frame()
    return recorder.trace()
