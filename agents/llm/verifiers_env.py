"""toolgym as a Prime Intellect ``verifiers`` environment: a suite's tasks, played turn by turn.

``load_environment(suite=...)`` returns a ``vf.MultiTurnEnv`` (``pip install 'toolgym[verifiers]'``;
the classic API of ``verifiers`` 0.3, ``verifiers.legacy`` there):

- **Dataset**: one row per task of the suite's split: ``prompt`` (the system message and the
  task's prompt, as ``agents/llm/messages.py`` writes them for every LLM door) and
  ``info["toolgym_task"]`` (its id; verifiers keeps ``task`` for its own routing).
  The eval dataset is the ``eval_split``.
- **Turns**: each rollout opens its own env (one sandbox session) and resets it to the row's task;
  with ``image_size > 0`` the first user message also carries the target's views, and the part's
  views follow each turn (``image_url`` data URLs). The tools are the registry's schemas (tool
  mode) or ``run_code`` (code mode); each call is one env step whose feedback is the ``tool``
  message. The rollout ends when the env ends the episode (the part passes, or ``max_steps``)
  or when the model replies without a tool call (the final tier then scores the part as is).
- **Rubric**: ``toolgym_score``, the episode's exact final score from toolgym's verifier (weight
  1); ``toolgym_passed`` and ``toolgym_steps`` are metrics (weight 0). A rollout toolgym could
  not start, step or score has ``error`` set (verifiers' mark of a failed rollout; its reward
  reads 0), never a plain 0, and the other rollouts go on.

Env steps run in worker threads, so rollouts of one ``evaluate`` run side by side.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolgym.agents.llm.messages import (
    ToolCall,
    action_of,
    first_messages,
    is_look,
    system_message,
    tools_for,
    views_message,
)
from toolgym.envs.tasks.suites import get_suite

# Top-level names of the framework's packages that the checkout's own folders share.
SHADOWED = ("verifiers", "renderers")


@functools.cache
def framework() -> Any:
    """The ``verifiers`` package, its classic API loaded. A checkout's own ``verifiers/`` and
    ``renderers/`` folders (the sources of ``toolgym.verifiers`` and ``toolgym.renderers``)
    shadow the framework's packages of those names when the checkout's root is on
    ``sys.path`` (``python -m pytest`` there), so the root is left out while they load."""
    root = Path(__file__).resolve().parents[2]  # the checkout
    for name in SHADOWED:
        module = sys.modules.get(name)
        if (
            module is not None
            and Path(getattr(module, "__file__", None) or "/").parent.parent == root
        ):
            del sys.modules[name]  # the checkout's folder, imported under that name
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != root]
    try:
        import verifiers

        verifiers.MultiTurnEnv  # noqa: B018 - loads the classic API (and renderers) now
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            f"the verifiers adapter needs `pip install 'toolgym[verifiers]'` ({exc})"
        ) from None
    finally:
        sys.path[:] = saved
    return verifiers


def load_environment(
    suite: str = "primitives",
    split: str = "train",
    *,
    eval_split: str | None = "test",
    env_id: str = "toolgym/CadQuery-v0",
    image_size: int = 0,
    max_envs: int | None = None,
    **env_kwargs: Any,
) -> Any:
    """A ``vf.MultiTurnEnv`` over ``suite``'s ``split`` (``eval_split``: its eval dataset).

    Args:
        suite: a toolgym suite (``toolgym suites`` lists them).
        env_id: the toolgym env; ``env_kwargs`` its arguments (``action_mode``, ``max_steps``...).
        image_size: pixels of the longer side of each picture in the messages (0: text only).
        max_envs: envs (sandbox sessions) open at once, whatever verifiers' concurrency; further
            rollouts wait for one to close. Default: the machine's CPU count.
    Raises ``KeyError`` for an unknown suite, ``ValueError`` for other bad arguments (one line).
    """
    if image_size < 0 or (max_envs is not None and max_envs < 1):
        raise ValueError(f"image_size must be ≥ 0 and max_envs ≥ 1, got {image_size}, {max_envs}")
    vf = framework()
    from datasets import Dataset

    probe = gym.make(env_id, suite=suite, split=split, **env_kwargs)
    try:
        system = system_message(probe)["content"]
        tools = [_tool(vf, t) for t in tools_for(probe)]
    finally:
        probe.close()

    def rows(name: str) -> Any:
        return Dataset.from_list(
            [
                {
                    "prompt": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": task.prompt},
                    ],
                    "answer": "",
                    "info": {"toolgym_task": task.id},
                }
                for task in get_suite(suite).split(name)
            ]
        )

    return _environment_class(vf)(
        env_id=env_id,
        toolgym_kwargs={"suite": suite, "split": split, **env_kwargs},
        image_size=image_size,
        max_envs=max_envs or os.cpu_count() or 1,
        dataset=rows(split),
        eval_dataset=rows(eval_split) if eval_split else None,
        tool_defs=tools,
    )


def _tool(vf: Any, schema: dict[str, Any]) -> Any:
    function = schema["function"]
    return vf.Tool(
        name=function["name"],
        description=function.get("description", ""),
        parameters=function.get("parameters", {"type": "object", "properties": {}}),
    )


@functools.cache
def _environment_class(vf: Any) -> type:
    """The environment class, made once ``verifiers`` is imported (it subclasses its API)."""

    class ToolgymEnv(vf.MultiTurnEnv):
        """A toolgym episode per rollout; see this module's docstring."""

        def __init__(
            self,
            *,
            env_id: str,
            toolgym_kwargs: dict[str, Any],
            image_size: int = 0,
            max_envs: int = 1,
            **kwargs: Any,
        ) -> None:
            super().__init__(rubric=_rubric(vf), **kwargs)
            self.toolgym_id, self.toolgym_kwargs = env_id, toolgym_kwargs
            self.image_size = image_size
            self.max_envs = max_envs  # bounds the sandboxes, not the model's concurrency
            self._slots: dict[int, asyncio.Semaphore] = {}  # one per event loop

        def env_slots(self) -> asyncio.Semaphore:
            loop = id(asyncio.get_running_loop())  # evaluate_sync runs a loop per call
            return self._slots.setdefault(loop, asyncio.Semaphore(self.max_envs))

        async def setup_state(self, state: Any) -> Any:
            task = state["info"]["toolgym_task"]
            state["toolgym"] = {"task": task, "steps": 0, "final": None}
            await self.env_slots().acquire()  # released by finish_episode, which always runs
            state["toolgym_slot"] = True
            try:
                env = await asyncio.to_thread(gym.make, self.toolgym_id, **self.toolgym_kwargs)
                state["toolgym_env"] = env
                observation, _ = await asyncio.to_thread(env.reset, seed=0, options={"task": task})
            except Exception as exc:  # the rollout fails; the others go on
                raise vf.InfraError(f"toolgym: {task!r} did not start: {_line(exc)}") from None
            if self.image_size > 0:  # the same two messages, the target's views added
                system, user = first_messages(env, observation, self.image_size)
                state["prompt"] = [vf.SystemMessage(**system), vf.UserMessage(**user)]
            return state

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            env, record = state["toolgym_env"], state["toolgym"]
            mode = env.unwrapped.action_mode
            replies: list[Any] = []
            observation, stepped, looked = None, False, False
            for k, raw in enumerate(getattr(messages[-1], "tool_calls", None) or []):
                call = ToolCall(raw.id or f"call_{k}", str(raw.name), str(raw.arguments))
                action, problem = action_of(call, mode)
                if problem is not None:  # code mode: not a script; no step
                    replies.append(
                        vf.ToolMessage(content=f"error: {problem}", tool_call_id=call.id)
                    )
                    continue
                try:  # step() never raises for what the model sent; this is a broken env
                    observation, _, terminated, truncated, info = await asyncio.to_thread(
                        env.step, action
                    )
                except Exception as exc:
                    raise vf.InfraError(f"toolgym: a step failed: {_line(exc)}") from None
                record["steps"], stepped = record["steps"] + 1, True
                looked = looked or is_look(action)
                feedback = str(observation["feedback"])
                replies.append(vf.ToolMessage(content=feedback, tool_call_id=call.id))
                if terminated or truncated:
                    record["final"] = info.get("final_report") or {}
                    state["final_env_response"] = replies
                    return replies
            if stepped and self.image_size > 0:
                views = views_message(observation, self.image_size, with_target=looked)
                replies.append(vf.UserMessage(**views))
            return replies

        @vf.stop
        async def no_tool_call(self, state: Any) -> bool:
            """The model replied without a tool call: it says it is done."""
            if not state["trajectory"]:
                return False
            last = state["trajectory"][-1]["completion"][-1]
            return last.role == "assistant" and not getattr(last, "tool_calls", None)

        @vf.cleanup
        async def finish_episode(self, state: Any) -> None:
            """Score a part the env did not end (final tier), close the env, and mark the
            rollout failed (``state["error"]``) where toolgym could not score it."""
            try:
                await self._finish(state)
            finally:
                if state.pop("toolgym_slot", False):
                    self.env_slots().release()

        async def _finish(self, state: Any) -> None:
            env, record = state.pop("toolgym_env", None), state.get("toolgym")
            if env is None or record is None:
                return
            try:
                if record["final"] is None and state.get("error") is None:
                    _, info = await asyncio.to_thread(env.unwrapped.finish)
                    record["final"] = info.get("final_report") or {}
            except Exception as exc:
                state["error"] = vf.InfraError(f"toolgym: finish failed: {_line(exc)}")
            finally:
                await asyncio.to_thread(env.close)
            score = (record["final"] or {}).get("score")
            if score is None and state.get("error") is None:
                why = (record["final"] or {}).get("error") or "no final score"
                state["error"] = vf.InfraError(f"toolgym could not score {record['task']!r}: {why}")

    return ToolgymEnv


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _rubric(vf: Any) -> Any:
    async def toolgym_score(state: Any) -> float:
        """The episode's exact final score from toolgym's verifier, in [0, 1]; 0 only beside
        the rollout's ``error`` (``finish_episode``) when there is none."""
        score = ((state.get("toolgym") or {}).get("final") or {}).get("score")
        return 0.0 if score is None else float(score)

    async def toolgym_passed(state: Any) -> float:
        return float(bool(((state.get("toolgym") or {}).get("final") or {}).get("passed")))

    async def toolgym_steps(state: Any) -> float:
        return float((state.get("toolgym") or {}).get("steps", 0))

    rubric = vf.Rubric(funcs=[toolgym_score], weights=[1.0])
    rubric.add_metric(toolgym_passed)
    rubric.add_metric(toolgym_steps)
    return rubric
