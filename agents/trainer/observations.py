"""What the policy reads off an observation, as numpy arrays: the views, the texts' bytes, the step,
and the numbers written in the prompt (in digits or in words, a length in cm read in mm, a run
of numbers before "cm" too).

The network (``toolgym.agents.trainer.policy``) takes these batches as tensors; the grammar's
derived values (``toolgym.envs.grammar``) are computed from the same numbers, read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.envs.episode.spaces import text_bytes

# A number as written: an optional minus, digits, an optional decimal part; not inside a word
# or a longer number ("M6" and "v2.1.3" hold none).
NUMBER = rb"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]\d)"
# Or in words, up to ninety-nine ("twenty-seven", "four"); a length followed by "cm" is read in
# mm (the registries' unit), so "2.5 cm" and "25 mm" read alike.
_ONES_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
ONES = tuple(_ONES_TEXT.split())
TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# "twenty", "twenty-seven"; else "zero" to "nineteen", longest first ("seventeen" not "seven").
_TENS = b"|".join(w.encode() for w in TENS)
_UNITS = b"|".join(w.encode() for w in ONES[1:10])
_ONES = b"|".join(w.encode() for w in sorted(ONES, key=len, reverse=True))
WORD = rb"\b(?:(?:" + _TENS + rb")(?:-(?:" + _UNITS + rb"))?|" + _ONES + rb")\b"
# A number in words counts only as a length ("twenty mm"): "the four edges", "all twelve" name
# edges, and reading them as numbers would move the pointer off the sizes.
LENGTH_UNIT = rb"(?=\s*(?:mm|cm|millimet|centimet))"
NUMBERS = re.compile(
    rb"(?P<digits>" + NUMBER + rb")|(?P<word>" + WORD + rb")" + LENGTH_UNIT, re.IGNORECASE
)
CENTIMETRES = re.compile(rb"\s*cm\b", re.IGNORECASE)
# Numbers in a run ("1.5 × 2 × 0.5 cm", "(18, 6.5, 1.5) cm") share the unit written after the
# last: between two of a run only a comma, "×", "x" or "by"; after the last, maybe a bracket.
RUN_JOIN = re.compile(rb"\s*(?:,|\xc3\x97|x|by)\s*", re.IGNORECASE)
RUN_CENTIMETRES = re.compile(rb"\s*\)\s*cm\b", re.IGNORECASE)


def word_value(word: bytes) -> float:
    """ "twenty-seven" -> 27.0 (a word :data:`WORD` matched)."""
    tens, _, ones = word.decode().lower().partition("-")
    if tens in TENS:
        return float(20 + 10 * TENS.index(tens) + (ONES.index(ones) if ones else 0))
    return float(ONES.index(tens))


def batch_observations(observations: Mapping[str, Any], config: PolicyConfig) -> dict[str, Any]:
    """A batch of environment observations (vector-env layout) as the policy's numpy inputs:
    ``images`` uint8 ``(B, 6, H, W)`` (current, then target), ``text`` int64 bytes
    ``(B, prompt_bytes + feedback_bytes)``, ``step`` int64 ``(B,)``, the prompt's numbers
    (see :func:`prompt_numbers`), and with ``config.depth`` ``depths`` float32 ``(B, 4, H, W)``
    (the observations' ``depth`` then ``target_depth`` channels, mm, ``-inf`` off the part)."""
    images = np.concatenate([observations["image"], observations["target"]], axis=-1)
    prompts = list(observations["prompt"])
    prompt = text_bytes(prompts, config.prompt_bytes)
    feedback = text_bytes(list(observations["feedback"]), config.feedback_bytes, keep="tail")
    numbers, number_from, number_at = number_spans(prompts, config.prompt_bytes, config.max_numbers)
    depth = {}
    if config.depth:  # (B, 4, H, W): the current part's two surfaces, then the target's
        both = np.concatenate([observations["depth"], observations["target_depth"]], axis=-1)
        depth["depths"] = np.ascontiguousarray(both.transpose(0, 3, 1, 2), dtype=np.float32)
    return {
        **depth,
        "images": np.ascontiguousarray(images.transpose(0, 3, 1, 2)),
        "text": np.concatenate([prompt, feedback], axis=1),
        "step": np.minimum(np.asarray(observations["step"], np.int64), config.max_step - 1),
        "numbers": numbers,
        "number_from": number_from,
        "number_at": number_at,
    }


def prompt_numbers(
    prompts: Sequence[str], prompt_bytes: int, max_numbers: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``max_numbers`` numbers written in each prompt's first ``prompt_bytes`` UTF-8
    bytes (the bytes the text encoder sees): ``numbers`` float32 ``(B, max_numbers)`` and
    ``number_at`` int64 ``(B, max_numbers)``, the byte index of each number's last character in
    the text, -1 where there is none. Numbers are written in digits or in words (up to
    ninety-nine); one followed by ``cm`` is read in mm (times 10), others as written."""
    numbers, _, number_at = number_spans(prompts, prompt_bytes, max_numbers)
    return numbers, number_at


def number_spans(
    prompts: Sequence[str], prompt_bytes: int, max_numbers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`prompt_numbers` with where each number starts: ``(numbers, number_from,
    number_at)``, ``number_from`` the byte index of its first character (-1 where none). The
    pointer keys a number by the text at both ends: a number in words is long ("twenty-six"),
    and the word before it ("x = ") can be out of reach of its last letter's features."""
    numbers = np.zeros((len(prompts), max_numbers), np.float32)
    number_from = np.full((len(prompts), max_numbers), -1, np.int64)
    number_at = np.full((len(prompts), max_numbers), -1, np.int64)
    for i, prompt in enumerate(prompts):
        data = prompt.encode("utf-8", "replace")[:prompt_bytes]
        matches = list(NUMBERS.finditer(data))[:max_numbers]
        in_cm = _centimetres(data, matches)
        for k, match in enumerate(matches):
            digits = match.group("digits")
            value = float(digits) if digits else word_value(match.group("word"))
            numbers[i, k] = value * 10.0 if in_cm[k] else value
            number_at[i, k], number_from[i, k] = match.end() - 1, match.start()
    return numbers, number_from, number_at


def _centimetres(data: bytes, matches: list[re.Match[bytes]]) -> list[bool]:
    """Which of the numbers ``matches`` found are lengths in cm: followed by "cm", or in a run
    (:data:`RUN_JOIN`) whose last is followed by "cm" or ") cm"."""
    in_cm = [False] * len(matches)
    start = 0  # the run's first number
    for k, match in enumerate(matches):
        follows = k + 1 < len(matches)
        if follows and RUN_JOIN.fullmatch(data, match.end(), matches[k + 1].start()):
            continue  # the run goes on
        if CENTIMETRES.match(data, match.end()) or RUN_CENTIMETRES.match(data, match.end()):
            in_cm[start : k + 1] = [True] * (k + 1 - start)
        start = k + 1
    return in_cm


def observe(observations: Mapping[str, Any], config: PolicyConfig) -> dict[str, np.ndarray]:
    """The policy's inputs (:func:`batch_observations`), with each row's tool when mixed."""
    batch = batch_observations(observations, config)
    if "tool" in observations:
        batch["tool"] = np.asarray(observations["tool"], np.int64)
    return batch
