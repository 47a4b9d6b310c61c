"""The episode-log format: writing its plain data (what the recorder and the env server share)
and reading recordings back, the episodes of a run folder, whatever state they were left in.

A recording cut short (a crash mid-line, a kill, a full disk) or damaged by hand still reads:
every line that parses is kept, and each problem is one message naming the file and the line.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "toolgym-episode/1"
EPISODE_FILE = "episode.jsonl"
META_FILE = "meta.json"


def encode_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Constructor arguments as JSON: a dataclass (sandbox ``Limits``) becomes
    ``{"__dataclass__": "module:Class", "fields": {...}}`` so ``decode_kwargs`` rebuilds it."""
    return {key: _encode(value) for key, value in kwargs.items()}


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {
            "__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
            "fields": {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return plain(value)


def decode_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`encode_kwargs`; rebuilds only toolgym's own dataclasses."""
    return {key: _decode(value) for key, value in kwargs.items()}


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "__dataclass__" in value:
        module, _, name = str(value["__dataclass__"]).partition(":")
        if not module.startswith("toolgym."):
            raise ValueError(f"a recorded argument names {value['__dataclass__']}, not toolgym's")
        cls = getattr(importlib.import_module(module), name)
        return cls(**{k: _decode(v) for k, v in value["fields"].items()})
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A JSON-encodable stand-in for what ``json`` cannot encode (numpy, bytes, objects)."""
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 64 else f"<array {value.dtype} {value.shape}>"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str | int | float | bool | type(None)):
        return value
    return repr(value)


def to_json(data: Any) -> str:
    """One line of the log: JSON, what it cannot encode as :func:`plain` stand-ins."""
    return json.dumps(data, default=plain, ensure_ascii=False, allow_nan=False)


@dataclasses.dataclass
class RecordedEpisode:
    """One episode folder as read.

    Attributes:
        path: the episode folder.
        meta: ``meta.json`` (empty if missing or unreadable).
        reset: the reset line (task, prompt, seed, first views), or ``None``.
        steps: the step lines that parsed, in order.
        problems: what could not be read, one message each, naming the file and the line.
    """

    path: Path
    meta: dict[str, Any]
    reset: dict[str, Any] | None
    steps: list[dict[str, Any]]
    problems: list[str]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def task(self) -> str:
        return self._first("task") or "?"

    @property
    def prompt(self) -> str:
        return self._first("prompt")

    def _first(self, key: str) -> str:
        """The first line's value of ``key`` (lines may be missing: read from any that has it)."""
        return next(
            (str(line[key]) for line in (self.reset, *self.steps) if line and line.get(key)), ""
        )

    @property
    def final_report(self) -> dict[str, Any] | None:
        last = self.steps[-1] if self.steps else {}
        return last.get("final_report") if isinstance(last.get("final_report"), dict) else None

    @property
    def score(self) -> float | None:
        """The exact verifier's final score, or else the last per-step score."""
        if self.final_report is not None:
            return _number(self.final_report.get("score"))
        return self.scores()[-1] if self.steps else None

    @property
    def outcome(self) -> str:
        """``passed``, ``failed`` (ended without passing) or ``incomplete`` (cut short)."""
        last = self.steps[-1] if self.steps else {}
        if not (last.get("terminated") or last.get("truncated")):
            return "incomplete"
        return "passed" if (self.final_report or {}).get("passed") else "failed"

    def scores(self) -> list[float | None]:
        """The per-step verifier score after each step (the last known one after a failed step)."""
        scores: list[float | None] = []
        current: float | None = None
        for line in self.steps:
            report = line.get("report")
            if isinstance(report, dict) and _number(report.get("score")) is not None:
                current = _number(report.get("score"))
            scores.append(current)
        return scores

    def rewards(self) -> list[float]:
        return [_number(line.get("reward")) or 0.0 for line in self.steps]

    def file(self, relative: str | None) -> Path | None:
        """A file the recording names, if it lies inside the episode folder and exists."""
        if not relative:
            return None
        path = (self.path / relative).resolve()
        if self.path.resolve() not in path.parents or not path.is_file():
            return None
        return path


def read_episode(folder: Path) -> RecordedEpisode:
    """Read one episode folder; never raises for what is in it."""
    problems: list[str] = []
    meta: dict[str, Any] = {}
    meta_path = folder / META_FILE
    try:
        loaded = json.loads(meta_path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            meta = loaded
        else:
            problems.append(f"{meta_path}: not a JSON object; ignored")
    except FileNotFoundError:
        problems.append(f"{meta_path}: missing")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{meta_path}: unreadable ({exc}); ignored")
    reset, steps = None, []
    path = folder / EPISODE_FILE
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        raw = b""
    lines = raw.split(b"\n")
    for number, data in enumerate(lines, start=1):
        if not data.strip():
            continue
        last = number == len(lines)  # no newline after it: the write was cut off
        try:
            line = json.loads(data.decode("utf-8"))
            if not isinstance(line, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as exc:
            why = "cut off mid-line (the recording stopped there)" if last else f"invalid: {exc}"
            problems.append(f"{path} line {number}: {why}; skipped, the other lines replay")
            continue
        if line.get("kind") == "reset":
            reset = line
        elif line.get("kind") == "step":
            steps.append(line)
    if not steps and reset is None and not problems:
        problems.append(f"{path}: no steps recorded")
    return RecordedEpisode(folder, meta, reset, steps, problems)


def read_run(folder: Path) -> list[RecordedEpisode]:
    """The episodes of a run folder (or the one episode, given an episode folder), oldest first.

    Raises ``FileNotFoundError`` when ``folder`` holds no recording at all."""
    folder = Path(folder)
    if (folder / EPISODE_FILE).exists() or (folder / META_FILE).exists():
        return [read_episode(folder)]
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    found = [
        read_episode(child)
        for child in sorted(folder.iterdir())
        if child.is_dir() and ((child / EPISODE_FILE).exists() or (child / META_FILE).exists())
    ]
    if not found:
        raise FileNotFoundError(f"{folder}: no recorded episodes (no */{EPISODE_FILE})")
    found.sort(key=lambda e: (_number(e.meta.get("started")) or 0.0, e.name))
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
