"""Spaces for text actions and observations."""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import utils as space_utils
from gymnasium.vector.utils import shared_memory

SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"
CODE_POINTS = 0x110000  # Unicode's code points are 0 ... 0x10FFFF; this one marks padding


class UnicodeText(spaces.Text):
    """Any Unicode string of up to ``max_length`` characters.

    Gymnasium's :class:`~gymnasium.spaces.Text` only holds strings over a fixed charset, which
    rejects code (and any prompt with "×" or "°"). This space accepts every character; ``sample``
    draws from printable ASCII. It batches like ``Text`` (a tuple of strings) in vector envs.

    Flattened (``gymnasium.spaces.flatten``, ``FlattenObservation``) a text is its code points,
    ``max_length`` int32 padded with :data:`CODE_POINTS`, as ``Text`` pads with its charset's size.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )


def text_bytes(texts: Sequence[str], size: int, keep: str = "head") -> np.ndarray:
    """Texts as fixed-length token ids for numeric learners: ``(len(texts), size)`` int64, each
    text's UTF-8 bytes plus one (0 is padding). ``keep="tail"`` keeps the last ``size`` bytes of
    a longer text (``"head"``, the first)."""
    out = np.zeros((len(texts), size), np.int64)
    for i, text in enumerate(texts):
        data = text.encode("utf-8", "replace")
        data = (
            data[:size]
            if keep == "head"
            else data[len(data) - size :]
            if len(data) > size
            else data
        )
        out[i, : len(data)] = np.frombuffer(data, np.uint8).astype(np.int64) + 1
    return out


# AsyncVectorEnv's shared memory. Gymnasium stores a Text as indices into its charset, which holds
# no "×" or "°", and reads it back once, as a tuple that never changes. A UnicodeText is stored as
# code points plus one (0 marks the unused tail) and read through a live view.


class SharedTexts(Sequence[str]):
    """The strings of a batch of UnicodeText observations in shared memory, read on access.

    ``copy.deepcopy`` (which ``AsyncVectorEnv`` applies with ``copy=True``, its default) gives a
    plain tuple of the current strings.
    """

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows  # (n, max_length) int32, a view of the shared buffer

    def texts(self) -> tuple[str, ...]:
        return tuple("".join(map(chr, row[row > 0] - 1)) for row in self._rows)

    def __getitem__(self, index: Any) -> Any:
        return self.texts()[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.texts() == tuple(other)

    __hash__ = None  # type: ignore[assignment] - mutable, like a list

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.texts()

    def __repr__(self) -> str:
        return repr(self.texts())


@shared_memory.create_shared_memory.register(UnicodeText)
def _create(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


@shared_memory.write_to_shared_memory.register(UnicodeText)
def _write(space: UnicodeText, index: int, value: str, memory: Any) -> None:
    size = space.max_length
    codes = np.zeros(size, np.int32)
    text = value[:size]
    codes[: len(text)] = np.fromiter(map(ord, text), np.int32, len(text)) + 1
    np.copyto(np.frombuffer(memory.get_obj(), np.int32)[index * size : (index + 1) * size], codes)


@shared_memory.read_from_shared_memory.register(UnicodeText)
def _read(space: UnicodeText, memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(memory.get_obj(), np.int32).reshape(n, space.max_length))


# Flattening. ``Text``'s own functions index into the 96-character charset, so a prompt with "×"
# raised KeyError; these use code points instead.


@space_utils.flatdim.register(UnicodeText)
def _flatdim(space: UnicodeText) -> int:
    return space.max_length


@space_utils.flatten_space.register(UnicodeText)
def _flatten_space(space: UnicodeText) -> spaces.Box:
    return spaces.Box(0, CODE_POINTS, (space.max_length,), np.int32)


@space_utils.flatten.register(UnicodeText)
def _flatten(space: UnicodeText, x: str) -> np.ndarray:
    codes = np.full(space.max_length, CODE_POINTS, np.int32)
    text = x[: space.max_length]
    codes[: len(text)] = np.fromiter(map(ord, text), np.int32, len(text))
    return codes


@space_utils.unflatten.register(UnicodeText)
def _unflatten(space: UnicodeText, x: np.ndarray) -> str:
    return "".join(map(chr, x[(x >= 0) & (x < CODE_POINTS)].tolist()))
