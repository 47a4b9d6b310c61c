"""Agents that play benchmark entries: each plays one episode in an env and says what happened.

A player is made from an :class:`AgentSpec` (plain data, so a Ray actor can make its own):
``oracle`` (the task's reference: the ceiling, and a check on the set), ``random``, ``copy``
(the copy-in-order rule), ``keyword`` (the keyword rule), ``template`` (the template rule: the
nearest worked example of the entry's suite's training split, refilled), ``checkpoint`` (a
``toolgym train`` checkpoint, greedy calls) and ``openai`` (a model behind an
OpenAI-compatible endpoint, through ``toolgym.agents.llm.openai_runner``: the path a real model
takes).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from toolgym.agents.benchmark.sets import Entry
from toolgym.envs.episode.options import ACTION_MODES

AGENT_KINDS = ("oracle", "random", "copy", "keyword", "template", "checkpoint", "openai")
# Agents that write tool calls only; the others play in code mode unless told otherwise.
TOOL_ONLY = ("copy", "keyword", "template", "checkpoint")


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """What agent plays, as plain data: ``kind`` (one of :data:`AGENT_KINDS`), its
    ``action_mode``, and its options (``checkpoint``: a path; ``openai``: ``base_url``,
    ``model``, ``api_key``, ``image_size``)."""

    kind: str
    action_mode: str = "code"
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in AGENT_KINDS:
            raise ValueError(f"unknown agent {self.kind!r}; known: {', '.join(AGENT_KINDS)}")
        if self.action_mode not in ACTION_MODES:
            raise ValueError(f"--action-mode must be code or tool, not {self.action_mode!r}")
        if self.kind in TOOL_ONLY and self.action_mode != "tool":
            raise ValueError(f"the {self.kind} agent writes tool calls: use --action-mode tool")

    def label(self) -> str:
        return agent_label(self.public())

    def public(self) -> dict[str, Any]:
        """The spec as a results file keeps it (never the API key)."""
        options = {k: v for k, v in self.options.items() if k != "api_key"}
        return {"kind": self.kind, "action_mode": self.action_mode, "options": options}


def agent_label(agent: dict[str, Any]) -> str:
    """How reports name an agent (:meth:`AgentSpec.public`'s data): ``oracle``,
    ``checkpoint:PATH``, ``openai:MODEL``."""
    detail = agent["options"].get("model") or agent["options"].get("checkpoint")
    return f"{agent['kind']}:{detail}" if detail else agent["kind"]


@dataclasses.dataclass
class Outcome:
    """One episode: ``score`` (exact final score; ``None`` when it could not be played),
    ``passed``, ``steps`` (env steps), ``calls`` (actions sent: the steps, and a model's calls
    refused before a step, a code-mode call that is not a script), ``turns`` (model replies; 0
    for other agents), ``executed`` (calls whose script or tool call ran without error),
    ``invalid`` (calls that never reached the tool: not JSON, an unknown tool, bad arguments,
    refused before a step), tokens in and
    out, ``seconds`` (wall), ``stop`` (why it ended) and ``error`` (one line, or ``None``)."""

    score: float | None = None
    passed: bool = False
    steps: int = 0
    calls: int = 0
    turns: int = 0
    executed: int = 0
    invalid: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    stop: str = ""
    error: str | None = None


class StepTally(gym.Wrapper):
    """Counts an episode's steps, failed steps, executed steps and invalid calls from ``info``
    (a stop call, which reaches no tool and is no error, is none of the last three)."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.steps = self.failed = self.executed = self.invalid = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        sandbox = info.get("sandbox") or {}
        self.steps += 1
        self.failed += "error" in info
        if "error" not in info and sandbox.get("ran"):
            self.executed += 1
        elif "error" in info and not sandbox.get("ran", True):
            self.invalid += 1
        return observation, reward, terminated, truncated, info


def make_player(spec: AgentSpec) -> Any:
    """A player for ``spec``: ``play(env, tally, entry, seed) -> Outcome``."""
    if spec.kind == "openai":
        return ChatPlayer(spec)
    if spec.kind == "checkpoint":
        return CheckpointPlayer(spec)
    return RulePlayer(spec)


class NoExamples(ValueError):
    """The template rule has no worked examples for an entry's suite."""


class RulePlayer:
    """Oracle, random and the fixed rules: ``agent.act(observation, task)`` until the end."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self.templates: dict[str, Any] = {}  # per suite: its worked examples, read once

    def agent(self, env: gym.Env, seed: int) -> Any:
        from toolgym.agents.baselines import (
            CopyInOrderAgent,
            KeywordAgent,
            OneCall,
            OracleAgent,
            RandomAgent,
        )

        registry, mode = env.unwrapped.registry, self.spec.action_mode
        if self.spec.kind == "oracle":
            return OracleAgent(mode)
        if self.spec.kind == "random":
            return RandomAgent(registry, mode, seed)
        if self.spec.kind == "copy":
            return OneCall(CopyInOrderAgent(registry))
        if self.spec.kind == "template":
            return self.template(env.unwrapped.task.id.split("/")[0], registry.domain)
        return OneCall(KeywordAgent(registry, mode))

    def template(self, suite: str, domain: str) -> Any:
        """The template rule on ``suite``'s training split (:class:`NoExamples` where it has
        none, or the suite is not known)."""
        from toolgym.agents.baselines import DOMAIN_UNIT_METRES
        from toolgym.agents.template_rule import TemplateAgent
        from toolgym.envs.tasks.suites import get_suite

        if suite not in self.templates:
            try:
                found = get_suite(suite)
            except KeyError as error:
                raise NoExamples(error.args[0]) from None
            examples = [(t.prompt, t.tool_calls or ()) for t in found.split("train")]
            if not examples:
                raise NoExamples(f"suite {suite!r} has no training split to take examples from")
            self.templates[suite] = TemplateAgent(examples, DOMAIN_UNIT_METRES.get(domain, 1.0))
        return self.templates[suite]

    def play(self, env: gym.Env, tally: StepTally, entry: Entry, seed: int) -> Outcome:
        started = time.perf_counter()
        observation, _ = env.reset(seed=seed, options={"task": entry.task})
        try:
            agent = self.agent(env, seed)
        except NoExamples as error:
            return Outcome(error=f"the template rule: {error}", stop="no examples")
        return _play_out(
            env, tally, observation, lambda o: agent.act(o, env.unwrapped.task), started
        )


def _play_out(
    env: gym.Env,
    tally: StepTally,
    observation: dict[str, Any],
    choose: Callable[[dict[str, Any]], str],
    started: float,
) -> Outcome:
    """Step ``env`` (just reset to ``observation``) with ``choose``'s actions until the episode
    ends, and say how it went."""
    while True:
        observation, _, terminated, truncated, info = env.step(choose(observation))
        if terminated or truncated:
            break
    final = info.get("final_report") or {}
    score = final.get("score")
    return Outcome(
        score=score,
        passed=bool(final.get("passed")),
        steps=tally.steps,
        calls=tally.steps,
        executed=tally.executed,
        invalid=tally.invalid,
        seconds=time.perf_counter() - started,
        stop="passed" if final.get("passed") else "stop" if terminated else "max steps",
        error=None if score is not None else "the final check gave no score",
    )


class ChatPlayer:
    """A model behind an OpenAI-compatible endpoint (``openai_runner.play_episode``)."""

    def __init__(self, spec: AgentSpec) -> None:
        from toolgym.agents.llm.chat import ChatClient

        options = spec.options
        self.client = ChatClient(
            options["base_url"], options["model"], api_key=options.get("api_key")
        )
        self.image_size = int(options.get("image_size", 256))

    def play(self, env: gym.Env, tally: StepTally, entry: Entry, seed: int) -> Outcome:
        from toolgym.agents.llm.openai_runner import play_episode

        episode = play_episode(
            env, self.client, seed=seed, options={"task": entry.task}, image_size=self.image_size
        )
        refused = episode.errors - tally.failed  # calls answered without a step
        return Outcome(
            score=episode.score,
            passed=episode.passed,
            steps=tally.steps,
            calls=tally.steps + refused,
            turns=episode.turns,
            executed=tally.executed,
            invalid=tally.invalid + refused,
            prompt_tokens=episode.prompt_tokens,
            completion_tokens=episode.completion_tokens,
            seconds=episode.seconds,
            stop=episode.stop,
            error=episode.error,
        )

    def close(self) -> None:
        self.client.close()


class CheckpointPlayer:
    """A ``toolgym train`` checkpoint, greedy: the policy reads each observation as the
    trainer's evaluation does (``toolgym.agents.trainer.evaluate``), one env at a time. It
    plays only the environment it was trained in; other tools' entries are errors."""

    def __init__(self, spec: AgentSpec) -> None:
        from toolgym.agents.trainer.checkpoints import load_checkpoint

        self.policy, self.grammar, self.config = load_checkpoint(
            spec.options["checkpoint"], spec.options.get("device", "cpu")
        )
        self.policy.eval()

    def env_kwargs(self) -> dict[str, Any]:
        """What the policy needs of its env beyond the entry's: its view size (and depth)."""
        kwargs = {"view_size": self.config.view_size}
        if self.config.policy.depth:
            kwargs["depth"] = True
        return kwargs

    def play(self, env: gym.Env, tally: StepTally, entry: Entry, seed: int) -> Outcome:
        import torch

        from toolgym.agents.trainer.observations import observe
        from toolgym.agents.trainer.policy import to_torch
        from toolgym.envs.grammar import EpisodeContexts

        started = time.perf_counter()
        if self.config.mix or entry.env_id != self.config.env_id:
            where = self.config.mix or self.config.env_id
            return Outcome(error=f"the checkpoint plays {where} only", stop="not its tool")
        observation, _ = env.reset(seed=seed, options={"task": entry.task})
        device = next(self.policy.parameters()).device
        generator = torch.Generator(device=device).manual_seed(seed)
        contexts = EpisodeContexts(1)

        def choose(observation: dict[str, Any]) -> str:
            batch = {k: _batched(v) for k, v in observation.items()}
            inputs = observe(batch, self.config.policy)
            with torch.no_grad():
                tokens, *_ = self.policy.act(to_torch(inputs, device), generator, greedy=True)
            (call,) = contexts.decode(
                self.grammar, tokens.cpu().numpy(), batch, inputs["numbers"], inputs["number_at"]
            )
            return call

        return _play_out(env, tally, observation, choose, started)


def _batched(value: Any) -> Any:
    """One observation's field as a batch of one (text as a tuple, as vector envs give it)."""
    return (value,) if isinstance(value, str) else np.asarray(value)[None]
