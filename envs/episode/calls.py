"""Recognising the calls the episode loop answers itself (``stop``, ``look``) in an action."""

from __future__ import annotations

import json
from typing import Any


def named_call(action: Any, name: str, max_chars: int) -> dict[str, Any] | None:
    """``action`` as a call named ``name`` (a dict, or JSON text of one), else ``None``. Text
    longer than ``max_chars`` is never one (the loop refuses it as too long), nor is text
    nested too deep to parse."""
    if isinstance(action, str | bytes):
        if len(action) > max_chars:
            return None
        raw = action.encode("utf-8", "replace") if isinstance(action, str) else action
        if name.encode() not in raw and b"\\u" not in raw:  # cheap: most actions never say it
            return None
        try:
            action = json.loads(raw)
        except (ValueError, RecursionError):
            return None
    if not isinstance(action, dict) or action.get("name") != name:
        return None
    return action
