"""An episode as a chat: the messages a language model sees and how its tool calls become actions.

The same pieces serve the OpenAI-compatible runner (``agents/llm/openai_runner.py``), the SFT export
of recorded episodes (``agents/llm/sft.py``) and the trainer adapters, so a model is trained on the
conversation it is later evaluated in.

- **Tool mode**: the env's registry schemas are the tools; each call is one env step.
- **Code mode**: one tool, ``run_code(code)``; each call runs a script, one env step.
- **Messages**: a system message (what to do, how the episode goes), then the task's prompt with
  the target's views; after each call a ``tool`` message with the env's feedback, and after each
  turn a ``user`` message with the part's current views. Pictures are PNG data URLs
  (``image_url`` content parts) scaled to ``image_size`` pixels on their longer side (0: none).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import sys
from typing import Any

import numpy as np

from toolgym.envs.episode.calls import named_call
from toolgym.envs.episode.look import LOOK_CALL
from toolgym.envs.episode.loop import RUN_CODE

VIEWS = "four views of it, tiled: iso, front, right, top"
PICTURE = "<picture>"  # what stands for a data URL in recordings and logs


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """One call from an assistant message, as sent (``arguments`` is the raw JSON text)."""

    id: str
    name: str
    arguments: str


def tools_for(env: Any) -> list[dict[str, Any]]:
    """The tools offered to the model: the registry's schemas, or ``run_code`` in code mode."""
    return env.unwrapped.agent_tools()


def system_message(env: Any) -> dict[str, Any]:
    unwrapped = env.unwrapped
    how = (
        "Call the tools to build it, one operation per call"
        if unwrapped.action_mode == "tool"
        else f"Call {RUN_CODE} with scripts that build it"
    )
    text = (
        f"You operate {unwrapped.backend} in a sandbox to reach the goal the user describes. "
        f"{how}. Each call runs at once: you get "
        "the tool's output and the verifier's score (1.0: the goal is met), and a failed call "
        f"changes nothing. You have at most {unwrapped.max_steps} calls. When you are done, "
        "reply without a tool call."
    )
    return {"role": "system", "content": text}


def first_messages(env: Any, observation: dict[str, Any], image_size: int) -> list[dict[str, Any]]:
    """The system message and the task: its prompt and, with pictures, the target's views."""
    user: list[dict[str, Any]] = [{"type": "text", "text": str(observation["prompt"])}]
    if image_size > 0:
        user += [{"type": "text", "text": f"The target, {VIEWS}:"}]
        user += [image_part(observation["target"], image_size)]
    return [system_message(env), {"role": "user", "content": user}]


def result_message(call: ToolCall, feedback: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.id, "content": feedback}


def views_message(
    observation: dict[str, Any], image_size: int, with_target: bool = False
) -> dict[str, Any]:
    """The part's views after a turn; ``with_target``: the target's too (a look reframed
    both, so the target shown at the start no longer lines up)."""
    content = [{"type": "text", "text": f"Your part now, {VIEWS}:"}]
    content.append(image_part(observation["image"], image_size))
    if with_target:
        content.append({"type": "text", "text": f"The target now, {VIEWS}:"})
        content.append(image_part(observation["target"], image_size))
    return {"role": "user", "content": content}


def scaled_picture(array: np.ndarray, size: int) -> Any:
    """``array`` (H, W, 3 uint8) as a ``PIL.Image``, its longer side scaled to ``size`` pixels."""
    from PIL import Image

    picture = Image.fromarray(np.ascontiguousarray(array[..., :3]))
    scale = size / max(picture.size)
    if scale != 1:
        shape = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
        picture = picture.resize(shape, Image.Resampling.LANCZOS)
    return picture


def image_part(array: np.ndarray, size: int) -> dict[str, Any]:
    """An ``image_url`` content part: ``array`` (H, W, 3 uint8) as a PNG data URL, its longer
    side scaled to ``size`` pixels."""
    picture = scaled_picture(array, size)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    return {"type": "image_url", "image_url": {"url": url}}


def assistant_message(message: dict[str, Any]) -> tuple[dict[str, Any], list[ToolCall]]:
    """The reply as it goes back into the conversation, and its tool calls. Never raises: a
    malformed call keeps what can be read of it (the env or :func:`action_of` says what is
    wrong), and a call without an id gets one."""
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    content = content if isinstance(content, str) else None
    raw_calls = message.get("tool_calls")
    calls: list[ToolCall] = []
    for k, raw in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        raw = raw if isinstance(raw, dict) else {}
        function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):  # some servers send an object
            arguments = json.dumps(arguments, default=str)
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else None
        calls.append(ToolCall(call_id or f"call_{k}", str(function.get("name", "")), arguments))
    reply: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        reply["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return reply, calls


def action_of(call: ToolCall, action_mode: str) -> tuple[Any, str | None]:
    """The env action for ``call`` and ``None``, or ``None`` and why the call cannot be one.

    In tool mode every call is an action (the env itself reports bad JSON, unknown tools and bad
    parameters, with its usual penalty). In code mode a call must be ``run_code`` with a
    ``code`` string, or ``look`` (which the env checks as in tool mode)."""
    if action_mode == "tool" or call.name == LOOK_CALL:
        return {"name": call.name, "arguments": call.arguments}, None
    if call.name != RUN_CODE:
        return None, f"unknown tool {call.name!r}; the tools are {RUN_CODE} and {LOOK_CALL}"
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return None, f"{RUN_CODE}: arguments are not valid JSON: {exc}"
    code = arguments.get("code") if isinstance(arguments, dict) else None
    if not isinstance(code, str):
        return None, f'{RUN_CODE}: arguments must be {{"code": "<script>"}}'
    return code, None


def is_look(action: Any) -> bool:
    """Whether an env action is the look call (its views then show the target anew)."""
    return named_call(action, LOOK_CALL, sys.maxsize) is not None


def call_of(action: Any, action_mode: str, call_id: str) -> ToolCall:
    """The tool call that stands for an env action (to write episodes as chats)."""
    if action_mode == "code" and not is_look(action):
        return ToolCall(call_id, RUN_CODE, json.dumps({"code": str(action)}))
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError:
            return ToolCall(call_id, "", action)
    action = action if isinstance(action, dict) else {}
    arguments = action.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return ToolCall(call_id, str(action.get("name", "")), arguments)


def without_pictures(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each data URL replaced by :data:`PICTURE` (for recordings and logs)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [
                {"type": "image_url", "image_url": {"url": PICTURE}}
                if isinstance(p, dict) and p.get("type") == "image_url"
                else p
                for p in content
            ]
            message = {**message, "content": content}
        out.append(message)
    return out
