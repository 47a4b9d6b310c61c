"""Recorded episodes as chat-format SFT data (``toolgym sft``).

Each episode (``toolgym.envs.RecordEpisodes``: the oracle's, a model's, any agent's) becomes one
conversation in the language-model runner's own format (``agents/llm/messages.py``): the system
message, the task's prompt (and the target's views), then per step the assistant's tool call and the
env's feedback as a ``tool`` message (and the part's views). A line of the output is
``{"messages": [...], "tools": [...], "task": ..., "score": ...}``, the conversational format
with tools that TRL's ``SFTTrainer`` reads. The oracle's passing episodes make a warm-start set.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from toolgym.agents.llm.messages import (
    call_of,
    first_messages,
    result_message,
    tools_for,
    views_message,
)
from toolgym.envs.recording.log import RecordedEpisode, decode_kwargs, read_run


def episode_chat(episode: RecordedEpisode, image_size: int = 0) -> dict[str, Any]:
    """One recorded episode as ``{"messages", "tools", "task", "score", "outcome"}``.

    ``image_size`` > 0 puts the recorded views in, as the runner sends them. Raises
    ``ValueError`` when the recording lacks what the conversation needs (meta.json's env)."""

    env_id, kwargs = episode.meta.get("env_id"), episode.meta.get("env_kwargs")
    if not env_id or not isinstance(kwargs, dict):
        raise ValueError(f"{episode.path}: meta.json names no env; cannot write the chat")
    env = gym.make(env_id, **decode_kwargs(kwargs))  # no session: reset is never called
    try:
        mode = env.unwrapped.action_mode
        reset = episode.reset or {}
        observation = {"prompt": episode.prompt, "target": _picture(episode, reset, "target")}
        if image_size > 0 and observation["target"] is None:
            raise ValueError(f"{episode.path}: the target's views were not recorded")
        messages = first_messages(env, observation, image_size)
        tools = tools_for(env)
    finally:
        env.close()
    for number, line in enumerate(episode.steps):
        if line.get("finish") or line.get("kind") != "step":
            continue
        call = call_of(line.get("action"), mode, f"call_{number}")
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                ],
            }
        )
        messages.append(result_message(call, str(line.get("feedback") or "")))
        done = line.get("terminated") or line.get("truncated")
        view = _picture(episode, line, "image") if image_size > 0 and not done else None
        if view is not None:
            messages.append(views_message({"image": view}, image_size))
    return {
        "messages": messages,
        "tools": tools,
        "task": episode.task,
        "score": episode.score,
        "outcome": episode.outcome,
    }


def sft_records(
    run: str | Path, *, min_score: float | None = 0.99, image_size: int = 0
) -> Iterator[dict[str, Any]]:
    """The chats of a run folder's episodes scoring at least ``min_score`` (``None``: all)."""
    for episode in read_run(Path(run)):
        score = episode.score
        if min_score is not None and (score is None or score < min_score):
            continue
        yield episode_chat(episode, image_size)


def write_sft(
    run: str | Path, out: str | Path, *, min_score: float | None = 0.99, image_size: int = 0
) -> int:
    """Write :func:`sft_records` as JSON lines to ``out``; returns how many."""
    count = 0
    with open(out, "w", encoding="utf-8") as file:
        for record in sft_records(run, min_score=min_score, image_size=image_size):
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def _picture(episode: RecordedEpisode, line: dict[str, Any], key: str) -> np.ndarray | None:
    images = line.get("images") if isinstance(line.get("images"), dict) else {}
    path = episode.file(images.get(key))
    if path is None:
        return None
    from PIL import Image

    with Image.open(path) as picture:
        return np.asarray(picture.convert("RGB"))
