"""Scripted stand-ins for a language model, served by ``toolgym.agents.llm.endpoint``: no
weights."""

from __future__ import annotations

import json
from typing import Any

from toolgym.agents.llm.endpoint import tool_call
from toolgym.agents.llm.messages import RUN_CODE
from toolgym.envs.tasks.suites import get_suite


def prompt_of(body: dict[str, Any]) -> str:
    """The task's prompt: the first text part of the first user message."""
    user = next(m for m in body["messages"] if m["role"] == "user")
    content = user["content"]
    return content if isinstance(content, str) else content[0]["text"]


class OracleModel:
    """Answers with the task's reference: its tool calls one per turn (tool mode) or its program
    through ``run_code`` (code mode); then a reply without a tool call."""

    def __init__(self, suite: str = "primitives", action_mode: str = "tool") -> None:
        suite_ = get_suite(suite)
        self.tasks = {t.prompt: t for split in ("train", "test") for t in suite_.split(split)}
        self.action_mode = action_mode

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        task = self.tasks[prompt_of(body)]
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if self.action_mode == "code":
            if done:
                return {"content": "The part is built."}
            return tool_call(RUN_CODE, {"code": task.reference})
        if done >= len(task.tool_calls):
            return {"content": "The part is built."}
        call = json.loads(task.tool_calls[done])
        return tool_call(call["name"], call["arguments"], f"call_{done}")
