"""When rollouts are collected against the learner's updates: in turns, or overlapped.

Both runners give the learner rollouts ``start, ..., last - 1`` through one interface (used as a
context manager, which starts and stops what collects):

- :meth:`rollouts` yields each rollout in order;
- :meth:`timing` says, once the learner has updated on it, the iteration's seconds and the
  shares of them the learner waited for the envs and the envs for the learner;
- :meth:`published` takes the weights after each update.

:class:`InTurns` collects rollout ``k`` with the current policy, then the learner updates on it.
:class:`Overlapped` collects on a thread while the learner updates: rollout ``k`` acts with the
weights after update ``k - 1`` (the start's for the first two). PPO's ratio is against the stored
log-probs of the policy that acted, so the lag is corrected for (and clipped); it is fixed, so a
run is the same in any process however fast each side is.
"""

from __future__ import annotations

import contextlib
import copy
import queue
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import torch

from toolgym.agents.trainer.policy import Policy
from toolgym.agents.trainer.rollout import Rollout, RolloutCollector

Timing = tuple[float, float, float]  # seconds, learner waits for the envs, envs wait for it


class InTurns:
    """Collect, then update: the learner blocks in reset/step while the workers run; the workers
    sit idle while the learner decodes calls and updates."""

    def __init__(self, collector: RolloutCollector, policy: Policy, start: int, last: int) -> None:
        self.collector, self.policy = collector, policy
        self.start, self.last = start, last
        self._started = 0.0

    def __enter__(self) -> InTurns:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def rollouts(self) -> Iterator[Rollout]:
        for k in range(self.start, self.last):
            self._started = time.perf_counter()
            yield self.collector.collect(self.policy, k)

    def timing(self, rollout: Rollout) -> Timing:
        seconds = time.perf_counter() - self._started
        busy = rollout["env_busy"] / seconds
        return seconds, busy, 1 - busy

    def published(self, iteration: int, policy: Policy) -> None:
        """Nothing to hand over: the next rollout acts with ``policy`` itself."""


class Overlapped:
    """Collect rollout ``k`` on a thread while the learner updates on rollout ``k - 1``; one
    rollout ahead at most."""

    def __init__(self, collector: RolloutCollector, policy: Policy, start: int, last: int) -> None:
        self.collector = collector
        self.start, self.last = start, last
        self.acting = copy.deepcopy(policy)  # the behaviour policy: the envs act with it
        self.versions = {start: weights(policy)}  # updates done -> the weights then
        self.ready = threading.Condition()
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=1)  # one rollout ahead at most
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._collect, name="toolgym-collect", daemon=True)
        self._finished = self._waited = 0.0

    def __enter__(self) -> Overlapped:
        self.thread.start()
        self._finished = time.perf_counter()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop.set()
        with self.ready:
            self.ready.notify_all()
        self.thread.join(timeout=60)

    def _hand_over(self, item: Any) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(queue.Full):
                self.queue.put(item, timeout=0.2)
                return

    def _collect(self) -> None:
        """The collecting thread: rollout ``k`` with the weights after update ``k - 1``."""
        try:
            for k in range(self.start, self.last):
                need = max(self.start, k - 1)
                with self.ready:
                    self.ready.wait_for(
                        lambda need=need: need in self.versions or self.stop.is_set()
                    )
                    if self.stop.is_set():
                        return
                    self.acting.load_state_dict(self.versions[need])
                self._hand_over(self.collector.collect(self.acting, k))
        except BaseException as exc:  # the learner raises it
            self._hand_over(exc)

    def rollouts(self) -> Iterator[Rollout]:
        for _ in range(self.start, self.last):
            waited = time.perf_counter()
            rollout = self.queue.get()
            if isinstance(rollout, BaseException):
                raise rollout
            self._waited = time.perf_counter() - waited
            yield rollout

    def timing(self, rollout: Rollout) -> Timing:
        seconds, self._finished = time.perf_counter() - self._finished, time.perf_counter()
        busy = min(rollout["env_busy"] / seconds, 1.0)
        return seconds, self._waited / seconds, 1 - busy

    def published(self, iteration: int, policy: Policy) -> None:
        """The weights after update ``iteration``, for the rollout after next."""
        with self.ready:
            self.versions[iteration] = weights(policy)
            self.versions.pop(iteration - 2, None)
            self.ready.notify_all()


def weights(policy: Policy) -> dict[str, torch.Tensor]:
    """A copy of the policy's weights, untouched by its later updates."""
    return {k: v.detach().clone() for k, v in policy.state_dict().items()}


def make_runner(
    overlap: bool, collector: RolloutCollector, policy: Policy, start: int, last: int
) -> InTurns | Overlapped:
    """The run's runner: :class:`Overlapped` with ``overlap``, else :class:`InTurns`."""
    if overlap:
        return Overlapped(collector, policy, start, last)
    return InTurns(collector, policy, start, last)
