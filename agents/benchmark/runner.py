"""Run an agent on an evaluation set: every entry ``samples`` times, resumable, recordable.

A run is a folder: ``run.json`` (what was run: the set's name and hash, the entries' hash, the
agent, samples, seed, toolgym's version) and ``episodes.jsonl`` (one line per finished episode,
appended and flushed as each ends). Started again on the same folder with the same plan, a run
plays only the episodes the file does not hold, so an interrupted run loses at most the episodes
under way, and a resumed run's results equal an uninterrupted one's (each episode's seed depends
only on its entry and sample). A folder holding another plan's results is refused.

Episodes run ``jobs`` at a time, one env per job and kind of entry (local threads: the tools
run in sandbox processes), or in Ray actors (``ray``: an address, or ``"local"``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolgym._version import __version__
from toolgym.agents.benchmark.players import AgentSpec, Outcome, StepTally, make_player
from toolgym.agents.benchmark.sets import Entry, EvalSet, set_hash

HEADER, EPISODES, LOCK = "run.json", "episodes.jsonl", ".lock"
MAX_JOBS = 64


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a run plays: ``limit`` first entries of ``eval_set`` (all: ``None``), each
    ``samples`` times, by ``agent``; episode seeds from ``seed``; ``wall_s``: the sandbox's
    wall-clock and CPU limit per step (``None``: the env's default)."""

    eval_set: EvalSet
    agent: AgentSpec
    samples: int = 1
    seed: int = 0
    limit: int | None = None
    wall_s: float | None = None

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")

    @property
    def entries(self) -> tuple[Entry, ...]:
        return self.eval_set.head(self.limit)

    def header(self) -> dict[str, Any]:
        """``run.json``: enough to know what the results measured, and to resume."""
        return {
            "set": self.eval_set.name,
            "set_hash": self.eval_set.hash,
            "limit": self.limit,
            "entries": len(self.entries),
            "entries_hash": self.eval_set.hash
            if self.limit is None
            else set_hash(self.entries, self.eval_set.verifier_versions),
            "verifier_versions": self.eval_set.verifier_versions,
            "agent": self.agent.public(),
            "samples": self.samples,
            "seed": self.seed,
            "wall_s": self.wall_s,
            "toolgym": __version__,
        }

    def episode_seed(self, index: int, sample: int) -> int:
        """The seed of entry ``index``'s ``sample``-th episode (the set's order, not the run's)."""
        return self.seed + sample * len(self.eval_set.entries) + index


# Fields of run.json that must match to add to a folder's results (the version may differ).
RESUME_KEYS = ("set", "set_hash", "limit", "entries_hash", "agent", "samples", "seed", "wall_s")


def read_run(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run folder's header and finished episodes (a line cut short by an interruption is
    left out: that episode is played again). Raises ``ValueError`` for a folder that is not a
    run, or whose header cannot be read."""
    header_file = folder / HEADER
    if not header_file.is_file():
        raise ValueError(f"{folder}: not a benchmark run (no {HEADER}); see `toolgym bench run`")
    try:
        header = json.loads(header_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{header_file}: unreadable ({exc})") from None
    if not isinstance(header, dict) or "set_hash" not in header:
        raise ValueError(f"{header_file}: not a benchmark run's header")
    rows = []
    episodes = folder / EPISODES
    if episodes.is_file():
        for line in episodes.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and {"entry", "sample"} <= set(row):
                rows.append(row)
    return header, rows


def prepare(folder: Path, plan: Plan) -> dict[tuple[str, int], dict[str, Any]]:
    """Make ``folder`` a run of ``plan``, or check that it is one; its finished episodes by
    ``(entry id, sample)``. Raises ``ValueError`` naming the first field that differs."""
    header = plan.header()
    if not (folder / HEADER).exists():
        (folder / HEADER).write_text(json.dumps(header, indent=2) + "\n", encoding="utf-8")
        return {}
    found, rows = read_run(folder)
    for key in RESUME_KEYS:
        if _resumable(found.get(key), key) != _resumable(header[key], key):
            raise ValueError(
                f"{folder} holds a run with another {key} ({found.get(key)!r}, this run "
                f"{header[key]!r}); give another --out to start a new run"
            )
    wanted = {(e.id, s) for e in plan.entries for s in range(plan.samples)}
    return {(r["entry"], r["sample"]): r for r in rows if (r["entry"], r["sample"]) in wanted}


def _resumable(value: Any, key: str) -> Any:
    """What of a header field must match to resume: all of it, but where a model is served
    (the same model behind a restarted server, on another port, is the same agent)."""
    if key != "agent" or not isinstance(value, dict):
        return value
    options = {k: v for k, v in value.get("options", {}).items() if k != "base_url"}
    return {**value, "options": options}


class BenchWorker:
    """Plays episodes for one job: one env per kind of entry, made on first use, kept."""

    def __init__(self, agent: AgentSpec, wall_s: float | None, record: str | None) -> None:
        self.agent, self.wall_s, self.record = agent, wall_s, record
        self.player = make_player(agent)
        self.envs: dict[tuple[str, str, int], tuple[gym.Env, StepTally]] = {}

    def _env(self, entry: Entry) -> tuple[gym.Env, StepTally]:
        key = _env_key(entry)
        if key not in self.envs:
            from toolgym.envs.sandbox import Limits

            kwargs: dict[str, Any] = {
                "task": entry.task,
                "action_mode": self.agent.action_mode,
                "max_steps": entry.max_steps,
                "prompt_form": entry.prompt_form,
                "timings_in_info": self.record is not None,
            }
            if self.wall_s is not None:
                kwargs["limits"] = Limits(wall_s=self.wall_s, cpu_s=self.wall_s)
            kwargs.update(getattr(self.player, "env_kwargs", dict)())
            tally = StepTally(gym.make(entry.env_id, **kwargs))
            env: gym.Env = tally
            if self.record is not None:
                from toolgym.envs.recording.recorder import RecordEpisodes

                env = RecordEpisodes(tally, self.record)
            self.envs[key] = (env, tally)
        return self.envs[key]

    def play(self, entry: Entry, sample: int, seed: int) -> dict[str, Any]:
        """One episode as a results line; never raises for what the agent or a tool did."""
        try:
            env, tally = self._env(entry)
            outcome = self.player.play(env, tally, entry, seed)
        except Exception as exc:  # one broken episode must not stop the run
            outcome = Outcome(error=f"{type(exc).__name__}: {exc}".splitlines()[0], stop="error")
            self._drop(entry)
        return {"entry": entry.id, "sample": sample, "seed": seed, **dataclasses.asdict(outcome)}

    def _drop(self, entry: Entry) -> None:
        """Close and forget the env an episode failed in (the next one starts afresh)."""
        pair = self.envs.pop(_env_key(entry), None)
        if pair is not None:
            with contextlib.suppress(Exception):  # closing a broken env is best effort
                pair[0].close()

    def close(self) -> None:
        for env, _ in self.envs.values():
            env.close()
        self.envs.clear()
        close = getattr(self.player, "close", None)
        if close is not None:
            close()


def _env_key(entry: Entry) -> tuple[str, str, int]:
    """What an env is made for: entries alike in these share one."""
    return entry.env_id, entry.prompt_form, entry.max_steps


def run_plan(
    plan: Plan,
    folder: Path,
    *,
    jobs: int = 1,
    ray: str | None = None,
    record: Path | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play ``plan``'s unfinished episodes into ``folder`` (see the module's docstring) and
    return every episode of the plan, finished before or now, in the set's order. Raises
    ``ValueError`` before any episode when the folder holds another plan."""
    if not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    folder.mkdir(parents=True, exist_ok=True)
    lock = _lock(folder)  # before the header is read or written: one run per folder at a time
    try:
        done = prepare(folder, plan)
    except ValueError:
        lock.close()
        raise
    index = {e.id: k for k, e in enumerate(plan.eval_set.entries)}
    todo = [
        (entry, sample, plan.episode_seed(index[entry.id], sample))
        for sample in range(plan.samples)
        for entry in plan.entries
        if (entry.id, sample) not in done
    ]
    writing = threading.Lock()
    with lock, (folder / EPISODES).open("a", encoding="utf-8") as results:

        def keep(row: dict[str, Any]) -> None:
            with writing:
                results.write(json.dumps(row) + "\n")
                results.flush()
                os.fsync(results.fileno())
                done[(row["entry"], row["sample"])] = row
            if on_episode is not None:
                on_episode(row)

        recording = str(record) if record is not None else None
        if todo and ray is not None:
            _on_ray(plan, todo, jobs, ray, recording, keep)
        elif todo:
            _in_threads(plan, todo, jobs, recording, keep)
    return [done[(e.id, s)] for s in range(plan.samples) for e in plan.entries]


def _lock(folder: Path) -> Any:
    """An exclusive lock on ``folder`` for this run (released when the returned file closes).
    Raises ``ValueError`` while another run writes there: two would play the same episodes."""
    handle = (folder / LOCK).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ValueError(
            f"{folder} is being written by another run; wait for it, or give another --out"
        ) from None
    return handle


def _in_threads(
    plan: Plan, todo: list[Any], jobs: int, record: str | None, keep: Callable[..., None]
) -> None:
    work: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for item in todo:
        work.put(item)
    finished: queue.SimpleQueue[dict[str, Any] | BaseException] = queue.SimpleQueue()
    stopping = threading.Event()

    def job() -> None:
        try:
            worker = BenchWorker(plan.agent, plan.wall_s, record)
        except Exception as exc:  # the agent cannot be made (a checkpoint that will not load)
            finished.put(exc)
            return
        try:
            while not stopping.is_set():
                try:
                    item = work.get_nowait()
                except queue.Empty:
                    return
                finished.put(worker.play(*item))
        finally:
            worker.close()

    threads = [threading.Thread(target=job, daemon=True) for _ in range(min(jobs, len(todo)))]
    for thread in threads:
        thread.start()
    try:
        for _ in range(len(todo)):
            row = finished.get()
            if isinstance(row, BaseException):
                raise ValueError(f"the agent could not start: {row}") from row
            keep(row)
    finally:
        stopping.set()  # the episodes under way end with the process; the finished are kept


def _on_ray(
    plan: Plan, todo: list[Any], jobs: int, ray_address: str, record: str | None, keep: Any
) -> None:
    import ray

    from toolgym.agents.distributed.cluster import start

    start(ray_address)
    remote = ray.remote(num_cpus=1)(BenchWorker)
    actors = [remote.remote(plan.agent, plan.wall_s, record) for _ in range(min(jobs, len(todo)))]
    pending: dict[Any, Any] = {}
    items = list(todo)
    try:
        for actor in actors:
            if items:
                pending[actor.play.remote(*items.pop(0))] = actor
        while pending:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            actor = pending.pop(ready)
            keep(ray.get(ready))
            if items:
                pending[actor.play.remote(*items.pop(0))] = actor
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):  # an actor already gone has nothing to close
                ray.get(actor.close.remote(), timeout=60)
            ray.kill(actor)
