"""What a run's config builds: its grammar (one tool's, or a mix's) and its policy.

One tool's grammar (:func:`build_grammar`) comes from the env's tool registry and the suite's
reference calls, each parsed once (``toolgym.envs.grammar.SuiteVocabulary``): bins over the
training split's ranges, its tools, names from every split, and (where asked) the derived values
and the stop operation its references need. A mix's grammar (:func:`mixed_grammar`) holds each
tool's, names prefixed with the tool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from toolgym.agents.trainer.config import TrainConfig
from toolgym.agents.trainer.mixed import MixedPolicy
from toolgym.agents.trainer.observations import prompt_numbers
from toolgym.agents.trainer.policy import Policy, PolicyConfig
from toolgym.envs.domains import get_domain
from toolgym.envs.grammar import (
    DEFAULT_MAX_BINS,
    Grammar,
    SuiteVocabulary,
    parse_calls,
    suite_derived,
    suite_ranges,
    suite_tools,
    text_choices,
    usable_tools,
)
from toolgym.envs.tasks.suites import get_suite
from toolgym.envs.tools import ToolRegistry
from toolgym.envs.wrappers.mixed import Mix, parse_mix


def env_registry(env_id: str, suite: str | None = None) -> ToolRegistry:
    """The tool registry of ``env_id`` in tool mode (made and closed; no session starts), on
    ``suite``'s training split or, where it has none (a test-only suite), its first task's."""
    options: dict[str, Any] = {}
    if suite:
        found = get_suite(suite)
        split = "train" if found.split("train") or not found.tasks else found.tasks[0].split
        options = {"suite": suite, "split": split}
    env = gym.make(env_id, action_mode="tool", **options)
    registry = env.unwrapped.registry
    env.close()
    return registry


def suite_calls(suite: str, split: str | None = "train") -> list[Any]:
    """The reference tool calls of a suite's tasks (of one ``split``, or all with ``None``)."""
    found = get_suite(suite)
    tasks = found.tasks if split is None else found.split(split)
    return [c for t in tasks for c in t.tool_calls or ()]


def calls_grammar(
    registry: ToolRegistry,
    calls: Sequence[Any],
    max_bins: int = DEFAULT_MAX_BINS,
    all_tools: bool = False,
    names: Sequence[Any] = (),
) -> Grammar:
    """The registry's grammar with bins over ``calls``' ranges (and only their tools, unless
    ``all_tools``); the registry's widest ranges when there are no calls.

    The registry's open text parameters (object, modifier, material names) take the values that
    ``calls`` and ``names`` (more calls: the suite's other splits, whose names the prompts
    give) use; tools with a text parameter left without choices are left out. Calls may be
    given parsed (``toolgym.envs.grammar.ParsedCall``); raw ones are parsed once here."""
    calls, names = parse_calls(registry, calls), parse_calls(registry, names)
    ranges: dict[str, Any] = suite_ranges(registry, calls) if calls else {}
    # Text values (names, settings) from every call given: a test task's object is named in its
    # prompt, and a grammar that cannot say it could never solve the task.
    words = {k: v for k, v in suite_ranges(registry, names).items() if isinstance(v, list)}
    for key, values in words.items():
        if key in ranges:
            ranges[key] = list(dict.fromkeys([*ranges[key], *values]))
    for key, values in text_choices(registry, [*calls, *names]).items():
        ranges[key] = list(dict.fromkeys([*ranges.get(key, ()), *values]))
    usable = usable_tools(registry, ranges)
    tools = usable if all_tools or not calls else suite_tools(registry, calls)
    if not calls and len(tools) == len(registry.tools):
        tools = None  # every tool: the grammar describes itself as such
    return Grammar(registry, ranges, max_bins=max_bins, tools=tools)


def build_grammar(
    env_id: str,
    suite: str,
    max_bins: int,
    all_tools: bool,
    derived: bool = False,
    stop: bool | None = False,
    policy: PolicyConfig | None = None,
    grammar_options: Mapping[str, Any] | None = None,
) -> Grammar:
    """The grammar of the env's registry, with bins over the suite's training references'
    ranges (and only their tools, unless ``all_tools``), and names from the whole suite;
    ``derived``: with the derived values the training references use (the prompts' numbers read
    as ``policy`` reads them); ``stop``: with the stop operation (``None``: when a training
    reference has several calls); ``grammar_options``: more of ``Grammar``'s options
    (``copies``, ``shared_points``, ``max_points``, ``anchored``;
    ``TrainConfig.grammar_options``)."""
    registry = env_registry(env_id, suite)
    found = get_suite(suite)
    vocabulary = SuiteVocabulary.of(registry, found.tasks, found.split("train"))
    grammar = calls_grammar(registry, vocabulary.train, max_bins, all_tools, vocabulary.every)
    if stop is None:
        stop = any(len(episode.tool_calls) > 1 for episode in vocabulary.episodes)
    if grammar_options:  # before the derived values: they are read in this grammar's slots
        grammar = Grammar.from_description(registry, {**grammar.describe(), **grammar_options})
    found_derived = reference_derived(grammar, vocabulary.episodes, policy) if derived else {}
    options = {"derived": found_derived, "stop": stop}
    if not any(options.values()):
        return grammar
    return Grammar.from_description(registry, {**grammar.describe(), **options})


def reference_derived(
    grammar: Grammar, tasks: Sequence[Any], policy: PolicyConfig | None = None
) -> dict[str, list[str]]:
    """The derived values (``suite_derived``) the tasks' reference calls use (each task: a
    ``prompt`` and its ``tool_calls``), their prompts' numbers read as the policy reads them;
    counted per family where the tasks name theirs."""
    config = policy or PolicyConfig()
    prompts = [t.prompt for t in tasks]
    numbers, at = prompt_numbers(prompts, config.prompt_bytes, config.max_numbers)
    found = [
        tuple(float(n) for n, i in zip(row, where, strict=True) if i >= 0)
        for row, where in zip(numbers, at, strict=True)
    ]
    families = [getattr(t, "family", None) for t in tasks]
    episodes = zip(found, (t.tool_calls for t in tasks), strict=True)
    return suite_derived(grammar, episodes, groups=families)


def mixed_registry(mix: Mix) -> ToolRegistry:
    """Every tool of the mix's registries, named ``"<tool>.<name>"``."""
    registry = ToolRegistry("mixed")
    for tool, suite in mix:
        for name, spec in env_registry(get_domain(tool).env_id, suite).tools.items():
            registry.tools[f"{tool}.{name}"] = dataclasses.replace(spec, name=f"{tool}.{name}")
    return registry


def mixed_grammar(mix: Mix, max_bins: int, all_tools: bool = False) -> tuple[Grammar, np.ndarray]:
    """The mixed grammar (each tool's grammar, as :func:`build_grammar` builds it for that tool
    alone, in one vocabulary: names prefixed with the tool, each tool's operations contiguous)
    and ``op_ranges`` ``(tools, 2)``: each tool's operation tokens ``[lo, hi)``, in the mix's
    order."""
    ranges: dict[str, Any] = {}
    ops: list[str] = []
    counts = []
    for tool, suite in mix:
        own = build_grammar(get_domain(tool).env_id, suite, max_bins, all_tools)
        ranges.update({f"{tool}.{key}": value for key, value in own.ranges.items()})
        ops += [f"{tool}.{op}" for op in own.ops]
        counts.append(len(own.ops))
    grammar = Grammar(mixed_registry(mix), ranges, max_bins=max_bins, tools=ops)
    assert list(grammar.ops) == ops  # each tool's operations contiguous, in the mix's order
    ends = np.cumsum(counts) + grammar.op_start
    return grammar, np.stack([ends - np.asarray(counts), ends], axis=1)


def run_grammar(config: TrainConfig) -> tuple[Grammar, np.ndarray | None]:
    """The run's grammar (and, mixed, each tool's operation tokens)."""
    if config.mix:
        return mixed_grammar(parse_mix(config.mix), config.max_bins, config.all_tools)
    grammar = build_grammar(
        config.env_id,
        config.suite,
        config.max_bins,
        config.all_tools,
        config.derived,
        config.stop,
        config.policy,
        config.grammar_options(),
    )
    return grammar, None


def make_policy(
    config: TrainConfig, grammar: Grammar, op_ranges: np.ndarray | None = None
) -> Policy:
    """The bundled policy, or (mixed) its form masked to each row's tool."""
    if config.mix:
        return MixedPolicy(grammar, op_ranges, config.policy)
    return Policy(grammar, config.policy)
