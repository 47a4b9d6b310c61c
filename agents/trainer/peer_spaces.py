"""The bundled trainer's observation and action decomposition as standard spaces: what a
like-for-like peer (sb3-contrib's ``MaskablePPO``) learns from, next to the trainer's own policy.

It is :class:`toolgym.envs.wrappers.standard.StandardSpaces` with the trainer's observation arrays
and token vocabulary (copying a prompt number, derived values, stop), one ``MultiDiscrete`` entry
per parameter slot. It lives with the trainer because those arrays are the policy's inputs
(``toolgym.agents.trainer.observations``, ``toolgym.agents.trainer.depth``); the env layer's
wrapper needs spaces only.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from toolgym.agents.trainer.depth import MEASURES, READINGS, depth_inputs, depth_measures
from toolgym.agents.trainer.observations import batch_observations
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.envs.grammar import PAD, STOP, EpisodeContexts, Grammar
from toolgym.envs.wrappers.standard import LARGEST, StandardSpaces


class TrainerSpaces(StandardSpaces, gym.utils.RecordConstructorArgs):
    """The bundled trainer's observation and action decomposition as standard spaces: what a
    like-for-like peer (sb3-contrib's ``MaskablePPO("MultiInputPolicy", env)`` with
    :meth:`action_masks`) learns from, next to ``toolgym.agents.trainer.train``'s policy.

    ## Action space

    ``MultiDiscrete``: entry 0 picks the operation (the grammar's tools, and ``stop`` where the
    grammar has it); then one entry per parameter slot of every operation, in the grammar's
    order (``entries`` lists them as ``(tool, slot)``). An entry's index ``i`` below the slot's
    token count is the slot's ``i``-th grammar token: its bins, then its derived values (a
    prompt number halved, a sum, the previous call's top, ... :class:`toolgym.envs.grammar.
    Derived`), computed in the episode's context as the trainer computes them. A numeric slot
    has ``max_numbers`` more indices: index ``count + k`` copies the prompt's ``k``-th number
    (0-based, in reading order, as the trainer's policy reads them) onto the slot's nearest bin,
    as the trainer's pointer does; with ``policy.measure``, ``MEASURES`` more copy the numbers
    measured off the depth views (``toolgym.agents.trainer.depth.depth_measures``), as the trainer's
    pointer can. Only the chosen operation's entries are read; coordinates of
    points past a polygon's count are ``PAD``. An index past an entry's end is clipped to its
    last; a copy of a number the prompt lacks takes the slot's first token.

    One entry per slot, not per position of the call: a factorised ``MultiDiscrete`` policy
    cannot condition a position on the operation chosen in the same action (the trainer's
    decoder does), so each entry keeps one meaning (``add_box.height``), never one per tool.

    ## Observation space

    A ``Dict`` of the arrays the trainer's policy receives
    (``toolgym.agents.trainer.observations.batch_observations``, one env): ``images`` uint8 ``(6,
    H, W)`` (the current view, then the target's, channels first), ``text`` int64 ``(prompt_bytes +
    feedback_bytes,)`` (UTF-8 bytes plus one, 0 for padding: the prompt's head, the feedback's
    tail), ``step`` ``Discrete(max_step)``, and the prompt's numbers: ``numbers`` float32
    ``(max_numbers,)`` (a length in cm read in mm), ``number_from`` and ``number_at`` int64
    (the byte where each starts and ends; -1 where there is none). With ``policy.depth`` (the
    env made with ``depth=True``), ``readings`` float32 ``(READINGS,)``: what the trainer's
    policy reads off the depth views (``toolgym.agents.trainer.depth.depth_inputs``: extents, part
    flags, silhouette fills); the depth maps themselves, ``-inf`` off the part, are not passed
    on (a network fed ``-inf`` gives NaN).

    ## Masks

    :meth:`action_masks` (flat over the entries): the grammar's masks as far as a factorised
    action can carry them (every token of a slot's own range; operations that work on an
    existing part masked until a step of the episode has made one, as in
    :class:`StandardSpaces`), and a copy index only where the prompt has that number (the
    trainer's pointer covers the same numbers), and a measured one only where its view shows the
    part.

    Rewards, episode end and ``info`` are the env's; ``info["tool_call"]`` holds the JSON call
    sent. A derived value that refers to nothing (no previous call) makes the env's failed step.

    Args:
        env: a toolgym env made with ``action_mode="tool"``.
        grammar: the grammar (the trainer's: ``toolgym.agents.trainer.build.run_grammar``; default:
            the env's registry, ``max_bins`` bins per parameter, names from its suite).
        policy: the trainer's ``PolicyConfig`` (text lengths, numbers read, steps told apart).
    """

    def __init__(
        self,
        env: gym.Env,
        grammar: Grammar | None = None,
        policy: Any = None,
        max_bins: int = 64,
    ) -> None:
        # (recorded so that gym.make can rebuild the env from its spec, as check_env does)
        gym.utils.RecordConstructorArgs.__init__(
            self, grammar=grammar, policy=policy, max_bins=max_bins
        )
        self.policy = policy or PolicyConfig()
        super().__init__(
            env, grammar, max_bins, self.policy.prompt_bytes, self.policy.feedback_bytes
        )
        if self.policy.depth and "depth" not in env.observation_space.spaces:
            raise ValueError("policy.depth reads the env's depth: make it with depth=True")
        grammar = self.grammar
        numbers = self.policy.max_numbers + (MEASURES if self.policy.measure else 0)
        self.entries = [(tool, slot) for tool in grammar.ops for slot in grammar.slots[tool]]
        self._first = {}  # each operation's first entry
        sizes, copies = [len(grammar.ops)], []
        for tool, slot in self.entries:
            self._first.setdefault(tool, len(sizes))
            # A numeric slot has bin values (NaN for choices and counts): it can copy numbers.
            o, t = grammar.ops.index(tool), grammar.slots[tool].index(slot) + 1
            numeric = not np.isnan(grammar.bin_values[o, t, 0])
            if numeric:
                copies.append(sum(sizes) + slot.stop - slot.start)
            sizes.append(slot.stop - slot.start + (numbers if numeric else 0))
        self.action_space = spaces.MultiDiscrete(sizes)
        self._copy_index = np.asarray(copies, np.int64)[:, None] + np.arange(numbers)
        height, width, _ = env.observation_space["image"].shape
        text = self.policy.prompt_bytes + self.policy.feedback_bytes
        written = self.policy.max_numbers
        place = spaces.Box(-1, self.policy.prompt_bytes - 1, (written,), np.int64)
        reading = {"readings": spaces.Box(-LARGEST, LARGEST, (READINGS,), np.float32)}
        self.observation_space = spaces.Dict(
            {
                "images": spaces.Box(0, 255, (6, height, width), np.uint8),
                "text": spaces.Box(0, 256, (text,), np.int64),
                "step": spaces.Discrete(self.policy.max_step),
                "numbers": spaces.Box(-LARGEST, LARGEST, (written,), np.float32),
                "number_from": place,
                "number_at": place,
                **(reading if self.policy.depth else {}),
            }
        )
        self._contexts = EpisodeContexts(1)  # the trainer's: derived values' context
        # (rows, the policy's arrays, the numbers a copy may take, which of them are present)
        self._seen: tuple[dict[str, Any], dict[str, Any], np.ndarray, np.ndarray] | None = None

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        import torch

        rows = {k: [observation[k]] for k in ("prompt", "feedback", "step")}
        rows |= {
            k: observation[k][None]
            for k in ("image", "target", "depth", "target_depth")
            if k in observation
        }
        batch = batch_observations(rows, self.policy)
        # The numbers a copy may take: the prompt's, then (measure) those measured off depth.
        copyable = [batch["numbers"][0]], [batch["number_at"][0] >= 0]
        seen = {k: v[0] for k, v in batch.items() if k != "depths"}
        if self.policy.depth:
            depths = torch.as_tensor(batch["depths"])
            seen["readings"] = depth_inputs(depths)[1][0].numpy()
            if self.policy.measure:
                values, shown = depth_measures(depths)
                copyable[0].append(values[0].numpy())
                copyable[1].append(shown[0].numpy())
        self._seen = rows, batch, np.concatenate(copyable[0]), np.concatenate(copyable[1])
        # A number past float32's range ("1" and 40 zeros) reads as infinity: the largest.
        return seen | {"numbers": np.clip(batch["numbers"][0], -LARGEST, LARGEST)}

    def action_masks(self) -> np.ndarray:
        """Flat boolean mask over the ``MultiDiscrete`` entries (see the class docstring)."""
        mask = super().action_masks()
        if self._seen is not None and len(self._copy_index):
            mask[self._copy_index] = self._seen[3]
        return mask

    def tokens(self, action: np.ndarray) -> list[int]:
        """The grammar tokens an action means (copies snapped onto bins; see the class
        docstring)."""
        action = np.asarray(action, np.int64).reshape(-1)
        grammar = self.grammar
        op = int(np.clip(action[0], 0, len(grammar.ops) - 1))
        tool = grammar.ops[op]
        tokens, count = [grammar.op_start + op], 0
        numbers, present = (
            (np.zeros(0), np.zeros(0, bool))
            if self._seen is None
            else (self._seen[2], self._seen[3])
        )
        for k, slot in enumerate(grammar.slots[tool]):
            entry = self._first[tool] + k
            index = int(np.clip(action[entry], 0, self.action_space.nvec[entry] - 1))
            if slot.kind == "coord" and slot.point >= count:
                tokens.append(PAD)
                continue
            copy = index - (slot.stop - slot.start)
            if copy >= 0:  # a number (the prompt's, or measured), on the slot's nearest bin
                bins = grammar.bin_values[op, k + 1, : len(slot.values)]
                index = int(np.abs(bins - numbers[copy]).argmin()) if present[copy] else 0
            if slot.kind == "count":
                count = slot.values[index]
            tokens.append(slot.start + index)
        tokens.append(STOP)
        return tokens + [PAD] * (grammar.length - len(tokens))

    def call(self, action: Any) -> str:
        """The JSON call an action sends, its derived values computed in the episode's context
        (the prompt's numbers, the previous applied call), as the trainer computes them."""
        rows, batch = self._seen[:2] if self._seen is not None else ({}, {})
        tokens = np.asarray([self.tokens(action)])
        return self._contexts.decode(
            self.grammar, tokens, rows, batch["numbers"], batch["number_at"]
        )[0]
