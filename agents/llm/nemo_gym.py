"""NeMo Gym's dataset rows for a suite: what its agents send to ``toolgym serve --nemo-gym``.

A row is NeMo's ``responses_create_params`` (the conversation's ``input``: the system message
and the task's prompt, as every LLM door writes them; ``tools``: the ones the env's agent is
offered, as Responses-API function tools) plus the env server's own fields: ``toolgym_task``
(the id: no answer travels), ``env`` and ``env_kwargs``. Write them as JSON lines for NeMo's
``ng_collect_rollouts``; the server (``envs/serving/nemo_gym.py``) plays and scores them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolgym.agents.llm.messages import system_message, tools_for
from toolgym.envs.registration import DEFAULT_ENV
from toolgym.envs.tasks.suites import get_suite


def nemo_gym_rows(
    suite: str, split: str = "train", *, env_id: str = DEFAULT_ENV, **env_kwargs: Any
) -> list[dict[str, Any]]:
    """One row per task of ``suite``'s ``split``; ``env_kwargs`` are the env's (``action_mode``,
    ``max_steps``, ...) and travel in the row to the server."""
    env = gym.make(env_id, suite=suite, split=split, **env_kwargs)
    try:
        system = system_message(env)
        tools = [_responses_tool(tool["function"]) for tool in tools_for(env)]
    finally:
        env.close()
    return [
        {
            "responses_create_params": {
                "input": [system, {"role": "user", "content": task.prompt}],
                "tools": tools,
            },
            "toolgym_task": task.id,
            "env": env_id,
            "env_kwargs": env_kwargs,
        }
        for task in get_suite(suite).split(split)
    ]


def _responses_tool(function: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions function schema as a Responses-API function tool."""
    return {
        "type": "function",
        "name": function["name"],
        "description": function.get("description", ""),
        "parameters": function.get("parameters", {"type": "object"}),
        "strict": False,
    }


def verifiers_taskset_dir() -> Path:
    """The folder holding ``toolgym_verifiers.py``, toolgym's verifiers 0.4 taskset over these
    rows: put it on ``PYTHONPATH`` in verifiers' own venv (it imports nothing of toolgym, so it
    ships as a file, not a module of this package)."""
    return Path(str(files("toolgym.agents.llm") / "verifiers_v1"))
