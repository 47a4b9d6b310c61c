"""toolgym as a verifiers 0.4 taskset (``id = "toolgym_verifiers"``), over ``toolgym serve
--nemo-gym``. This module runs in verifiers' own venv and imports nothing of toolgym: put this
folder on ``PYTHONPATH`` there (verifiers finds a taskset by its module's name, and starts the
toolset below as ``python -m toolgym_verifiers``).

It is verifiers' own NeMo Gym taskset (``dataset``: the JSONL of ``nemo_gym_rows``;
``task.resources_url``: the server), with two changes:

- **Pictures**: each tool's answer is the feedback and the part's views after the step, as an
  MCP image (the chat harness hands it to the model as an ``image_url`` part).
- **No silent 0**: the reward, ``toolgym``, is the episode's exact final score; where toolgym's
  verifier could not score the part, the rollout fails with the reason (verifiers' task error,
  ``trace.ok`` false) instead of a reward of 0. ``toolgym_passed``, ``toolgym_steps`` and
  ``toolgym_score`` are metrics.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ImageContent, TextContent
from verifiers.v1.tasksets.nemo_gym import NeMoGymTask, NeMoGymTaskset
from verifiers.v1.tasksets.nemo_gym.toolset import NeMoGymToolset
from verifiers.v1.trace import Trace
from verifiers.v1.utils.decorators import reward


class ToolgymToolset(NeMoGymToolset):
    """The rows' tools, each call one env step; the answer carries the part's views."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult:
        if name not in self.state.direct_tools:
            known = ", ".join(sorted(self.state.direct_tools))
            raise ValueError(f"unknown tool {name!r}; this task's: {known}")
        response = await self.state.post(f"{name}?views=1", arguments)
        if not response.is_success:  # a refusal, in one line: the model reads it
            return CallToolResult(
                content=[TextContent(type="text", text=response.text)], is_error=True
            )
        answer = response.json()
        content: list[Any] = [TextContent(type="text", text=answer["feedback"])]
        views = answer["views"]["png"]
        content.append(ImageContent(type="image", data=views, mime_type="image/png"))
        return CallToolResult(content=content, is_error=answer["error"] is not None)


class ToolgymTask(NeMoGymTask):
    async def nemo_gym(self, trace: Trace) -> float:  # undecorated: ``toolgym`` is the reward
        return await super().nemo_gym(trace)

    @reward(weight=1.0)
    async def toolgym(self, trace: Trace) -> float:
        score = await self.nemo_gym(trace)  # toolgym's /verify: the exact final score
        verified = trace.info["nemo_gym"]
        if verified.get("mask_sample"):
            raise RuntimeError(f"toolgym could not score the part: {verified['failure_reason']}")
        return score


class ToolgymTaskset(NeMoGymTaskset):
    @classmethod
    def toolsets(cls, config: Any) -> list[Any]:
        return [ToolgymToolset(config.tools)]

    def load(self) -> Any:
        for task in super().load():
            yield ToolgymTask(task.data, task.config)


__all__ = ["ToolgymTaskset"]

if __name__ == "__main__":
    ToolgymToolset.run()
