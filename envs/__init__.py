"""toolgym's environments. ``RecordEpisodes`` and ``recorded`` are imported on first use: sandbox
workers import this package too, and must not load gymnasium or Pillow."""

from typing import Any

__all__ = ["RecordEpisodes", "recorded"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from toolgym.envs.recording import recorder

        return getattr(recorder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
