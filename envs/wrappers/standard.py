"""Standard spaces for other RL libraries: any toolgym env in tool mode, as numbers.

:class:`StandardSpaces` turns

- the action into a ``MultiDiscrete`` over the grammar of ``toolgym.envs.grammar`` (the same
  one the bundled trainer uses): entry 0 picks the tool, entry ``t`` the bin of the tool's
  ``t``-th parameter slot. Entries have one size for all tools (the largest slot at that
  position), so some combinations mean nothing. They are **repaired**, never rejected: an index
  past the end of the tool's slot is clipped to its last bin; entries past the tool's last slot,
  and coordinates of points past a polygon's count, are ignored. What repair cannot fix (a
  polygon with no area, a cut before any part exists, a fillet too large for the part) goes to
  the environment as it is, which answers with its usual failed step: ``-error_penalty`` reward,
  the step undone, the error in the feedback and in ``info["error"]``.
- the text observations (``prompt``, ``feedback``) into fixed-length arrays of token ids: UTF-8
  bytes plus one, 0 for padding (``prompt_tokens`` bytes of the prompt's head,
  ``feedback_tokens`` of the feedback's tail, where the verifier's summary is). Images and
  ``step`` pass through.

The default grammar spans the registry's ranges; text parameters the registry leaves open
(Blender's object, modifier and material names) take the names the env's suite's tool calls
use, and tools with an open parameter the suite never fills are left out.

``action_masks()`` gives a flat boolean array over the ``MultiDiscrete`` entries, as
sb3-contrib's ``MaskablePPO`` and TorchRL take them: tools that work on an existing part
(``cut_box``, ``fillet_edges``, ...) are masked until a step of the episode has made one; every
other entry is allowed (entries past a tool's own slots are repaired as above).

``info["tool_call"]`` holds the JSON call that was sent. Stable-Baselines3's
``PPO("MultiInputPolicy", env)`` runs on the result unmodified; so do clients that take an env
id, through the registered ``toolgym/CadQuery-Std-v0``, ``toolgym/Blender-Std-v0`` and
``toolgym/GameScene-Std-v0`` (this wrapper over the env in tool mode).

``toolgym.agents.trainer.peer_spaces.TrainerSpaces`` is its sibling for a like-for-like comparison
with the bundled trainer (it needs the trainer's observation arrays, so it lives beside the
trainer).
"""

from __future__ import annotations

import contextlib
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from toolgym.envs.episode.spaces import text_bytes
from toolgym.envs.grammar import (
    PAD,
    STOP,
    Grammar,
    text_choices,
    usable_tools,
)
from toolgym.envs.tasks.suites import get_suite

LARGEST = float(np.finfo(np.float32).max)  # the bound of a Box of any float32


class StandardSpaces(gym.Wrapper):
    """``MultiDiscrete`` tool calls and token-id texts; see the module docstring.

    Args:
        env: a toolgym env made with ``action_mode="tool"``.
        grammar: the grammar (default: the env's registry, ``max_bins`` bins per parameter,
            names from its suite).
        prompt_tokens, feedback_tokens: lengths of the token-id arrays.
    """

    def __init__(
        self,
        env: gym.Env,
        grammar: Grammar | None = None,
        max_bins: int = 64,
        prompt_tokens: int = 256,
        feedback_tokens: int = 128,
    ) -> None:
        super().__init__(env)
        if getattr(env.unwrapped, "action_mode", None) != "tool":
            raise ValueError("StandardSpaces needs an env made with action_mode='tool'")
        self.grammar = grammar or suite_grammar(env.unwrapped, max_bins)
        self.prompt_tokens, self.feedback_tokens = prompt_tokens, feedback_tokens
        sizes = [len(self.grammar.ops)] + [1] * (self.grammar.length - 1)
        for slots in self.grammar.slots.values():
            for k, slot in enumerate(slots):
                sizes[k + 1] = max(sizes[k + 1], len(slot.values))
        self.action_space = spaces.MultiDiscrete(sizes)
        spec = env.unwrapped.registry.grammar()
        # (the grammar's stop operation is no tool of the registry: it needs nothing)
        self._needs_part = np.array(
            [op in spec and spec[op]["needs_part"] for op in self.grammar.ops]
        )
        self._has_part = False
        inner = env.observation_space
        self.observation_space = spaces.Dict(
            {
                "image": inner["image"],
                "target": inner["target"],
                "prompt": spaces.Box(0, 256, (prompt_tokens,), np.int64),
                "feedback": spaces.Box(0, 256, (feedback_tokens,), np.int64),
                "step": inner["step"],
            }
        )

    def action_masks(self) -> np.ndarray:
        """Flat boolean mask over the ``MultiDiscrete`` entries (see the module docstring)."""
        mask = np.ones(int(self.action_space.nvec.sum()), bool)
        if not self._has_part:
            mask[: len(self.grammar.ops)] = ~self._needs_part
        return mask

    def tokens(self, action: np.ndarray) -> list[int]:
        """The grammar tokens an action means, after repair (see the module docstring)."""
        action = np.asarray(action, np.int64).reshape(-1)
        op = int(np.clip(action[0], 0, len(self.grammar.ops) - 1))
        tokens = [self.grammar.op_start + op]
        count = 0
        for k, slot in enumerate(self.grammar.slots[self.grammar.ops[op]]):
            index = int(np.clip(action[k + 1], 0, len(slot.values) - 1))
            if slot.kind == "coord" and slot.point >= count:
                tokens.append(PAD)
                continue
            if slot.kind == "count":
                count = slot.values[index]
            tokens.append(slot.start + index)
        tokens.append(STOP)
        return tokens + [PAD] * (self.grammar.length - len(tokens))

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        return {
            "image": observation["image"],
            "target": observation["target"],
            "prompt": text_bytes([observation["prompt"]], self.prompt_tokens)[0],
            "feedback": text_bytes([observation["feedback"]], self.feedback_tokens, "tail")[0],
            "step": observation["step"],
        }

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self._has_part = False  # episodes start with no part of the agent's
        return self.observation(observation), info

    def call(self, action: Any) -> str:
        """The JSON tool call an action sends."""
        return self.grammar.decode_json(self.tokens(action))

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        call = self.call(action)
        observation, reward, terminated, truncated, info = self.env.step(call)
        info["tool_call"] = call
        self._has_part = self._has_part or "error" not in info
        return self.observation(observation), reward, terminated, truncated, info


def standard_env(
    env_id: str,
    max_bins: int = 64,
    prompt_tokens: int = 256,
    feedback_tokens: int = 128,
    **env_kwargs: Any,
) -> StandardSpaces:
    """``env_id`` in tool mode under :class:`StandardSpaces`: the entry point of the registered
    ``toolgym/*-Std-v0`` ids (other arguments go to the env: ``suite``, ``max_steps`` ...)."""
    env = gym.make(env_id, action_mode="tool", **env_kwargs)
    return StandardSpaces(env, None, max_bins, prompt_tokens, feedback_tokens)


def suite_grammar(env: Any, max_bins: int) -> Grammar:
    """The registry's grammar with names for its open text parameters from the env's suite
    (every split: names are what the prompts give, not answers)."""
    registry, tasks = env.registry, list(env.tasks)
    with contextlib.suppress(KeyError):  # a suite from a task file: its tasks are the env's
        tasks = list(get_suite(tasks[0].suite).tasks)
    choices = text_choices(registry, [c for t in tasks for c in t.tool_calls or ()])
    tools = usable_tools(registry, choices)
    return Grammar(
        registry,
        choices,
        max_bins=max_bins,
        tools=None if len(tools) == len(registry.tools) else tools,
    )
