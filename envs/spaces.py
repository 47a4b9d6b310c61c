"""Spaces for text actions and observations."""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces

SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"


class UnicodeText(spaces.Text):
    """Any Unicode string of up to ``max_length`` characters.

    Gymnasium's :class:`~gymnasium.spaces.Text` only holds strings over a fixed charset, which
    rejects code (and any prompt with "×" or "°"). This space accepts every character; ``sample``
    draws from printable ASCII. It batches like ``Text`` (a tuple of strings) in vector envs.
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
