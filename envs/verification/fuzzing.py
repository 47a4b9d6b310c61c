"""Reward fuzzing: every generic cheat a domain knows, applied to a task's reference and scored
as an agent's episode is scored, beside an honest near miss of the same task.

A **cheat** (:class:`Cheat`) turns a task's reference script into a script that tries to score
without doing what the task asks: the same bounding box with the features removed, a sliver that
joins two bodies, geometry mirrored by a negative scale, an object shown to renders but not to
the viewport, motion between the frames a check samples, a value just past a threshold. Each
domain lists its cheats and its **near miss** (the reference with one honest error: a dimension
or a placement a little off, so it fails, but not by much) in its folder
(``envs/<tool>/cheats.py``, exposed as ``Domain.cheats`` and ``Domain.near_miss``); nothing
here knows a tool.

Every script is played as one code step of the domain's environment, so it meets the same
sandbox, per-step verifier (the trainer's ``final_tier="cheap"`` reward) and exact verifier
(the episode's end) an agent meets. A cheat is **caught** on a task when neither tier passes it
and each tier scores it below the near miss. A cheat whose script fails to run is **broken**:
the cheat, not the verifier, is wrong, and the report says so (it is not counted as caught).

    >>> from toolgym.envs.verification.fuzzing import fuzz
    >>> report = fuzz(["primitives/primitive/test-0"])  # doctest: +SKIP
    >>> print(report.markdown())  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym

from toolgym.envs.domains import get_domain
from toolgym.envs.tasks.model import Task
from toolgym.envs.tasks.suites import get_task
from toolgym.verifiers.report import VerifierReport

REFERENCE_FLOOR = 0.99  # a reference that scores less cannot anchor a fuzz run (harness error)


@dataclasses.dataclass(frozen=True)
class Cheat:
    """One generic cheat transform.

    Attributes:
        name: a short id, e.g. ``"bbox-with-sliver"``.
        what: one line saying what the cheat tries.
        build: the cheat's script for a task (usually the task's reference, then a few lines
            that undo what the task asks while keeping what a careless verifier reads), or
            ``None`` when the cheat does not apply to that task.
    """

    name: str
    what: str
    build: Callable[[Task], str | None]


@dataclasses.dataclass(frozen=True)
class Scored:
    """A script played as one code step: the per-step (cheap) verifier's verdict after the
    step, and the exact verifier's at the episode's end. ``error`` is set when the step failed
    (the script raised, a limit tripped, no part, an invalid part)."""

    step_score: float
    step_passed: bool
    final_score: float
    final_passed: bool
    error: str | None
    summary: str

    @property
    def passed(self) -> bool:
        return self.step_passed or self.final_passed


@dataclasses.dataclass(frozen=True)
class Trial:
    """One cheat on one task, beside that task's near miss."""

    task: str
    family: str
    cheat: str
    scored: Scored
    near_miss: Scored

    @property
    def broken(self) -> bool:
        """The cheat's script did not run: a defect of the cheat, not a verdict."""
        return self.scored.error is not None and self.scored.error.startswith("script:")

    @property
    def caught(self) -> bool:
        return (
            not self.broken
            and not self.scored.passed
            and self.scored.step_score < self.near_miss.step_score
            and self.scored.final_score < self.near_miss.final_score
        ) or (
            # A near miss that scores 0 leaves nothing to be below: then only a 0 is caught.
            not self.broken
            and not self.scored.passed
            and self.scored.final_score == 0.0
            and self.scored.step_score == 0.0
        )

    def line(self) -> str:
        verdict = "broken" if self.broken else "caught" if self.caught else "ESCAPED"
        return (
            f"{verdict:8} {self.task} {self.cheat}: step {self.scored.step_score:.3f} "
            f"(near miss {self.near_miss.step_score:.3f}), final {self.scored.final_score:.3f} "
            f"(near miss {self.near_miss.final_score:.3f})"
            + (" PASSED" if self.scored.passed else "")
            + (f" [{self.scored.error}]" if self.scored.error else "")
        )


class FuzzSetupError(RuntimeError):
    """A task cannot anchor a fuzz run: its reference scores under :data:`REFERENCE_FLOOR`, or
    its near miss passes (the domain's near miss is not a miss)."""


@dataclasses.dataclass
class FuzzReport:
    """Every trial of a run, with totals by family and by cheat."""

    trials: list[Trial] = dataclasses.field(default_factory=list)

    @property
    def escaped(self) -> list[Trial]:
        return [t for t in self.trials if not t.broken and not t.caught]

    @property
    def broken(self) -> list[Trial]:
        return [t for t in self.trials if t.broken]

    def by(self, key: str) -> dict[str, tuple[int, int]]:
        """``{family or cheat: (tried, caught)}`` (broken trials are not tried)."""
        totals: dict[str, tuple[int, int]] = {}
        for trial in self.trials:
            if trial.broken:
                continue
            tried, caught = totals.get(getattr(trial, key), (0, 0))
            totals[getattr(trial, key)] = (tried + 1, caught + trial.caught)
        return dict(sorted(totals.items()))

    def markdown(self) -> str:
        """Tables of cheats tried and caught, by family and by cheat, then every escape."""
        lines = ["| family | cheats tried | caught |", "|---|---|---|"]
        lines += [f"| {k} | {t} | {c} |" for k, (t, c) in self.by("family").items()]
        lines += ["", "| cheat | tried | caught |", "|---|---|---|"]
        lines += [f"| {k} | {t} | {c} |" for k, (t, c) in self.by("cheat").items()]
        tried = sum(t for t, _ in self.by("family").values())
        lines += ["", f"{tried - len(self.escaped)} of {tried} caught; {len(self.broken)} broken"]
        lines += [f"- {t.line()}" for t in self.escaped + self.broken]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": [
                {
                    "task": t.task,
                    "family": t.family,
                    "cheat": t.cheat,
                    "caught": t.caught,
                    "broken": t.broken,
                    "cheat_scores": dataclasses.asdict(t.scored),
                    "near_miss_scores": dataclasses.asdict(t.near_miss),
                }
                for t in self.trials
            ],
            "by_family": self.by("family"),
            "by_cheat": self.by("cheat"),
        }


def family_of(task: Task) -> str:
    """The family a task is fuzzed under: its procedural family, or its suite's name."""
    return task.family or task.id.split("/", 1)[0]


class Player:
    """Plays scripts as one-step code episodes of one task's environment (one sandbox session
    for all of them, cleared between episodes as the environment does)."""

    def __init__(self, task: Task, **env_kwargs: Any) -> None:
        domain = get_domain(task.domain)
        kwargs = {"view_size": 16, **env_kwargs}
        self.env = gym.make(domain.env_id, task=task.id, max_steps=1, final_tier="exact", **kwargs)
        self.task = task

    def play(self, script: str) -> Scored:
        self.env.reset(seed=0)
        _, _, _, _, info = self.env.step(script)
        step = info.get("report") or {}
        final = info.get("final_report") or {}
        error = info.get("error")
        if error is not None and info.get("sandbox", {}).get("error_kind"):
            error = f"script: {error}"  # the sandbox refused or the script failed
        return Scored(
            step_score=float(step.get("score") or 0.0),
            step_passed=bool(step.get("passed")),
            final_score=float(final.get("score") or 0.0),
            final_passed=bool(final.get("passed")),
            error=error,
            summary=VerifierReport.from_dict(final).summary() if final else str(error or ""),
        )

    def close(self) -> None:
        self.env.close()

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fuzz_task(
    task: Task | str,
    cheats: Iterable[Cheat] | None = None,
    on_trial: Callable[[Trial], None] | None = None,
    near_miss: Callable[[Task], str | None] | None = None,
) -> list[Trial]:
    """Every cheat of the task's domain (or ``cheats``) that applies to ``task``, played beside
    its near miss (the domain's, or ``near_miss``). Raises :class:`FuzzSetupError` when the
    reference or the near miss cannot anchor the run."""
    task = get_task(task) if isinstance(task, str) else task
    domain = get_domain(task.domain)
    cheats = domain.cheats() if cheats is None else tuple(cheats)
    scripts = {cheat.name: cheat.build(task) for cheat in cheats}
    scripts = {name: script for name, script in scripts.items() if script is not None}
    if not scripts:
        return []
    near_miss = near_miss or domain.near_miss
    near_miss_script = near_miss(task) if near_miss else None
    if near_miss_script is None:
        raise FuzzSetupError(f"{task.id}: the {task.domain} domain has no near miss for it")
    trials: list[Trial] = []
    with Player(task) as player:
        reference = player.play(task.reference)
        if min(reference.step_score, reference.final_score) < REFERENCE_FLOOR:
            raise FuzzSetupError(
                f"{task.id}: the reference scores {reference.step_score:.3f} per step and "
                f"{reference.final_score:.3f} exact (under {REFERENCE_FLOOR}): {reference.summary}"
            )
        missed = player.play(near_miss_script)
        if missed.passed:
            raise FuzzSetupError(f"{task.id}: the near miss passes: {missed.summary}")
        for name, script in scripts.items():
            trial = Trial(task.id, family_of(task), name, player.play(script), missed)
            trials.append(trial)
            if on_trial:
                on_trial(trial)
    return trials


def fuzz(
    tasks: Iterable[Task | str],
    cheats: Iterable[Cheat] | None = None,
    on_trial: Callable[[Trial], None] | None = None,
) -> FuzzReport:
    """:func:`fuzz_task` over ``tasks``, into one report."""
    report = FuzzReport()
    for task in tasks:
        report.trials.extend(fuzz_task(task, cheats, on_trial))
    return report


def family_sample(domain: str, per_family: int = 1, split: str = "test") -> list[Task]:
    """The first ``per_family`` ``split`` tasks of every family of ``domain`` (procedural
    families by name, hand-written suites by suite), in a fixed order."""
    from toolgym.envs.tasks.suites import suites

    picked: dict[str, list[Task]] = {}
    for suite in suites().values():
        if suite.domain != domain:
            continue
        for task in suite.split(split):
            chosen = picked.setdefault(family_of(task), [])
            if len(chosen) < per_family and task.id not in {t.id for t in chosen}:
                chosen.append(task)
    return [task for family in sorted(picked) for task in picked[family]]
