"""The grammar's ceiling: the oracle's tool calls expressed in the policy's action space.

For each test task of a procedural family, every reference call is encoded as the trainer's
grammar says it (bins over the family's training references; derived tokens where those
references use them: values computed exactly from the prompt's numbers and the previous call)
and decoded back in the same context, as the trainer decodes its policy's calls. The calls are
played in tool mode, then the grammar's ``stop`` ends the episode, and the task's (exact) tier
scores it. The ceiling is the mean final score; ``exact`` counts the tasks whose every call came
back unchanged. Target: ≥ 0.99 on every family the learning benchmark reports.

    .venv/bin/python bench/grammar_ceiling.py                   # derived tokens and stop
    .venv/bin/python bench/grammar_ceiling.py --no-derived      # bins only
    .venv/bin/python bench/grammar_ceiling.py --families enclosure --tasks 10
    .venv/bin/python bench/grammar_ceiling.py --suite blender-moves  # a suite's test split

``--suite``: every test task of a suite of any tool, in the grammar a mixed run builds for it
(bins over its training references, no derived tokens, no stop).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import gymnasium as gym
import numpy as np

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.trainer.build import calls_grammar, reference_derived
from toolgym.agents.trainer.observations import prompt_numbers
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.envs.cadquery.families import family as get_family
from toolgym.envs.grammar import STOP_TOOL, CallContext, Grammar

FAMILIES = ("primitive", "finished_block", "enclosure", "plate_holes", "stepped_shaft")


def family_grammar(registry: Any, name: str, train: int, max_bins: int, derived: bool) -> Grammar:
    """The grammar the trainer builds for a suite of ``train`` training seeds of a family."""
    tasks = [get_family(name).task(seed, "train") for seed in range(train)]
    grammar = calls_grammar(registry, [c for t in tasks for c in t.tool_calls], max_bins)
    if not derived:
        return grammar
    options = {"derived": reference_derived(grammar, tasks), "stop": True}
    return Grammar.from_description(registry, {**grammar.describe(), **options})


def expressed(
    grammar: Grammar, prompt: str, calls: list[str], policy: PolicyConfig | None = None
) -> list[str]:
    """The calls as the grammar says them, each in the context the trainer decodes it in (the
    prompt's numbers read as ``policy`` reads them)."""
    config = policy or PolicyConfig()
    numbers, at = prompt_numbers([prompt], config.prompt_bytes, config.max_numbers)
    found = tuple(float(n) for n, i in zip(numbers[0], at[0], strict=True) if i >= 0)
    out, previous = [], None
    for call in calls:
        context = CallContext(found, previous)
        decoded = grammar.decode(grammar.encode(call, context), context)
        out.append(json.dumps(decoded))
        previous = decoded
    return out


def ceiling(name: str, tasks: int, train: int, max_bins: int, derived: bool) -> dict[str, Any]:
    env = gym.make("toolgym/CadQuery-v0", action_mode="tool", max_steps=16, suite="procedural")
    registry = env.unwrapped.registry
    grammar = family_grammar(registry, name, train, max_bins, derived)
    scores, exact = [], 0
    try:
        for seed in range(tasks):
            task = get_family(name).task(seed, "test", suite="procedural")
            calls = expressed(grammar, task.prompt, list(task.tool_calls))
            originals = [registry.parse_call(c)[1] for c in task.tool_calls]
            exact += all(
                json.loads(c)["arguments"] == o for c, o in zip(calls, originals, strict=True)
            )
            # All calls played, the part not passed: stop (or, without stop, repeat the last).
            end = json.dumps({"name": STOP_TOOL}) if grammar.stop else calls[-1]
            scores.append(played_score(env, task.id, calls, end))
    finally:
        env.close()
    return {
        "family": name,
        "tasks": len(scores),
        "mean": float(np.mean(scores)),
        "min": float(np.min(scores)),
        "exact": exact,
        "vocab": grammar.vocab_size,
    }


def played_score(env: gym.Env, task_id: str, calls: list[str], end: str) -> float:
    """The final score of ``task_id`` after ``calls``, then ``end`` until the episode ends."""
    env.reset(seed=0, options={"task": task_id})
    info: dict[str, Any] = {}
    for call in calls:
        _, _, terminated, truncated, info = env.step(call)
        if terminated or truncated:
            break
    while "final_report" not in info:
        _, _, _, _, info = env.step(end)
    return info["final_report"]["score"]


def suite_ceiling(
    suite: str,
    max_bins: int,
    derived: bool = False,
    policy: PolicyConfig | None = None,
    grammar_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ceiling over a suite's test split, in the grammar ``toolgym train --mix`` builds for
    the suite's tool (``toolgym.agents.trainer.mixed.mixed_grammar``), or with ``derived`` the
    one ``toolgym train --suite`` builds (derived values read as ``policy`` reads the prompts'
    numbers, and stop where a reference has several calls), with each task's family's mean
    under ``"families"``; ``grammar_options``: the grammar's other options
    (``TrainConfig.grammar_options``)."""
    from toolgym.agents.trainer.build import build_grammar
    from toolgym.envs.domains import get_domain
    from toolgym.envs.tasks.suites import get_suite

    found = get_suite(suite)
    env_id = get_domain(found.domain).env_id
    stop = None if derived else False
    grammar = build_grammar(env_id, suite, max_bins, False, derived, stop, policy, grammar_options)
    tasks = found.split("test")
    longest = max(len(t.tool_calls or ()) for t in tasks) + bool(grammar.stop)
    env = gym.make(env_id, suite=suite, split="test", action_mode="tool", max_steps=longest)
    scores, exact = [], 0
    by_family: dict[str, list[float]] = {}
    try:
        for task in tasks:
            calls = expressed(grammar, task.prompt, list(task.tool_calls), policy)
            exact += [json.loads(c) for c in calls] == [json.loads(c) for c in task.tool_calls]
            # Then stop, or without stop the last call again.
            end = json.dumps({"name": STOP_TOOL}) if grammar.stop else calls[-1]
            scores.append(played_score(env, task.id, calls, end))
            by_family.setdefault(task.family or suite, []).append(scores[-1])
    finally:
        env.close()
    return {
        "family": suite,
        "tasks": len(scores),
        "mean": float(np.mean(scores)),
        "min": float(np.min(scores)),
        "exact": exact,
        "vocab": grammar.vocab_size,
        "families": {name: float(np.mean(v)) for name, v in sorted(by_family.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    parser.add_argument("--tasks", type=int, default=20, help="test seeds per family")
    parser.add_argument("--train", type=int, default=100, help="training seeds for the bins")
    parser.add_argument("--max-bins", type=int, default=256)
    parser.add_argument("--no-derived", dest="derived", action="store_false")
    parser.add_argument("--suite", help="a suite's test split instead of CAD families")
    args = parser.parse_args()
    if args.suite:
        r = suite_ceiling(args.suite, args.max_bins)
        print(json.dumps(r))
        return
    print(f"derived tokens and stop: {args.derived}; bins ≤ {args.max_bins}; exact tier")
    print("| family | vocabulary | tasks | calls exactly expressed | mean score | min | target |")
    print("|---|---|---|---|---|---|---|")
    for name in args.families:
        r = ceiling(name, args.tasks, args.train, args.max_bins, args.derived)
        verdict = "PASS" if r["mean"] >= 0.99 else "MISS"
        print(
            f"| {name} | {r['vocab']} | {r['tasks']} | {r['exact']}/{r['tasks']} "
            f"| {r['mean']:.4f} | {r['min']:.4f} | ≥ 0.99: {verdict} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
