"""Episodes played by a language model behind an OpenAI-compatible chat endpoint.

Each turn the model gets the conversation so far (``agents/llm/messages.py``: the prompt, the
target's views, the env's feedback after each call, the part's views after each turn) and answers
with tool calls; each call is one env step. The episode ends when the env ends it (the part passes,
or ``max_steps``), when the model answers without a tool call (the final tier then scores the
part as it is), after ``max_turns`` replies, or when the endpoint fails for good.

Nothing the model sends stops the run: bad JSON, unknown tools, missing calls and huge replies
are the env's usual failed steps (or a ``tool`` message saying what is wrong, in code mode), and
an endpoint that fails after its retries ends that episode with one line in ``error``, recorded
as failed, while the other episodes go on. With ``record``, every step's line carries the turns
that led to it under ``agent``: the messages sent (pictures as ``<picture>``), the reply, token
counts, latency and attempts (``toolgym.envs.RecordEpisodes``).
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolgym.agents.llm.chat import ChatClient, ChatError
from toolgym.agents.llm.messages import (
    action_of,
    assistant_message,
    first_messages,
    is_look,
    result_message,
    tools_for,
    views_message,
    without_pictures,
)
from toolgym.agents.runner import Episode

MAX_JOBS = 64


@dataclasses.dataclass
class ChatEpisode(Episode):
    """An :class:`~toolgym.agents.runner.Episode` with what the model did.

    Attributes (besides ``Episode``'s): ``index`` (the episode's place in the run), ``seed``,
    ``turns`` (replies asked for), ``stop`` (why it ended: ``passed``, ``max steps``,
    ``no tool call``, ``turn limit``, ``endpoint error``, ``runner error``), token counts
    summed over the episode, and ``error`` (one line; ``None`` when the episode ran to its end).
    ``score`` is ``None`` when ``error`` is set.
    """

    index: int = 0
    seed: int | None = None
    turns: int = 0
    stop: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


def play_episode(
    env: gym.Env,
    client: ChatClient,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    image_size: int = 256,
    max_turns: int | None = None,
    index: int = 0,
) -> ChatEpisode:
    """Play one episode of ``env`` (made with ``gym.make``, optionally in ``RecordEpisodes``).

    Args:
        image_size: pixels of the longer side of each picture sent (0: no pictures).
        max_turns: replies asked for at most; default twice the env's ``max_steps``.
    Never raises for what the model or the endpoint does; see :class:`ChatEpisode`.
    """
    started = time.perf_counter()
    observation, _ = env.reset(seed=seed, options=options)
    unwrapped = env.unwrapped
    task, mode = unwrapped.task.id, unwrapped.action_mode
    max_turns = max_turns or 2 * unwrapped.max_steps
    tools, messages = tools_for(env), first_messages(env, observation, image_size)
    result = ChatEpisode(task, 0, None, False, 0.0, 0, index=index, seed=seed)
    pending: list[dict[str, Any]] = []  # turns not yet written into a recorded line
    recorded = 0  # messages already in a recorded turn
    final: dict[str, Any] | None = None
    try:
        while final is None:
            if result.turns >= max_turns:
                result.stop = "turn limit"
                break
            result.turns += 1
            completion = client.complete(messages, tools)
            result.prompt_tokens += completion.prompt_tokens
            result.completion_tokens += completion.completion_tokens
            reply, calls = assistant_message(completion.message)
            messages.append(reply)
            pending.append(
                {
                    "turn": result.turns,
                    "messages": without_pictures(messages[recorded:]),
                    "finish_reason": completion.finish_reason,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "latency_s": round(completion.latency_s, 4),
                    "attempts": completion.attempts,
                }
            )
            recorded = len(messages)
            if not calls:
                result.stop = "no tool call"
                break
            stepped = looked = False
            for k, call in enumerate(calls):
                action, problem = action_of(call, mode)
                if problem is not None:  # code mode: not a script; no step, one line back
                    result.errors += 1
                    messages.append(result_message(call, f"error: {problem}"))
                    continue
                _annotate(env, agent={"turns": pending, "call": k})
                pending = []
                observation, _, terminated, truncated, info = env.step(action)
                result.steps, stepped, looked = result.steps + 1, True, looked or is_look(action)
                result.errors += "error" in info
                messages.append(result_message(call, str(observation["feedback"])))
                if terminated or truncated:
                    final = info.get("final_report") or {}
                    result.stop = "passed" if terminated else "max steps"
                    break
            if final is None and stepped and image_size > 0:
                messages.append(views_message(observation, image_size, with_target=looked))
    except ChatError as exc:
        result.stop, result.error = "endpoint error", str(exc)
    except Exception as exc:  # a bug here must not stop the other episodes
        result.stop, result.error = "runner error", f"{type(exc).__name__}: {exc}"
    if final is None:
        final = _finish(env, pending, result)
    result.score = None if result.error else final.get("score")
    result.passed = bool(final.get("passed")) and result.error is None
    result.seconds = time.perf_counter() - started
    return result


def run_chat_episodes(
    env_id: str,
    client: ChatClient,
    *,
    episodes: int | None = None,
    seed: int = 0,
    jobs: int = 1,
    image_size: int = 256,
    max_turns: int | None = None,
    record: Path | None = None,
    **env_kwargs: Any,
) -> Iterator[ChatEpisode]:
    """Yield a :class:`ChatEpisode` per episode as each finishes, ``jobs`` at a time (one env
    and sandbox session per job, one thread each). With ``episodes=None``, every task of the
    suite's split once; otherwise ``episodes`` tasks drawn with seeds ``seed, seed + 1, ...``
    (as ``toolgym.agents.runner.run_episodes``). With ``record``, every episode is recorded
    there with its turns. Raises ``ValueError`` for bad env arguments before any episode."""
    if not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs must be from 1 to {MAX_JOBS}, got {jobs}")
    if record is not None:
        env_kwargs.setdefault("timings_in_info", True)
    envs = [_make(env_id, record, env_kwargs)]
    tasks = envs[0].unwrapped.tasks
    count = len(tasks) if episodes is None else episodes
    work: queue.SimpleQueue[tuple[int, int, dict[str, Any] | None]] = queue.SimpleQueue()
    for k in range(count):
        work.put((k, seed + k, {"task": tasks[k].id} if episodes is None else None))
    try:
        envs += [_make(env_id, record, env_kwargs) for _ in range(min(jobs, count) - 1)]
        done: queue.SimpleQueue[ChatEpisode] = queue.SimpleQueue()

        def worker(env: gym.Env) -> None:
            while True:
                try:
                    k, episode_seed, options = work.get_nowait()
                except queue.Empty:
                    return
                done.put(
                    play_episode(
                        env,
                        client,
                        seed=episode_seed,
                        options=options,
                        image_size=image_size,
                        max_turns=max_turns,
                        index=k,
                    )
                )

        threads = [threading.Thread(target=worker, args=(env,), daemon=True) for env in envs]
        for thread in threads:
            thread.start()
        for _ in range(count):
            yield done.get()
        for thread in threads:
            thread.join()
    finally:
        for env in envs:
            env.close()


def _make(env_id: str, record: Path | None, env_kwargs: dict[str, Any]) -> gym.Env:
    env = gym.make(env_id, **env_kwargs)
    if record is not None:
        from toolgym.envs.recording.recorder import RecordEpisodes

        env = RecordEpisodes(env, record)
    return env


def _annotate(env: gym.Env, **fields: Any) -> None:
    annotate = getattr(env, "annotate", None)  # a RecordEpisodes wrapper
    if annotate is not None:
        annotate(**fields)


def _finish(env: gym.Env, pending: list[dict[str, Any]], result: ChatEpisode) -> dict[str, Any]:
    """End an episode the env did not end: the final tier scores the part as it is."""
    _annotate(env, agent={"turns": pending, "stop": result.stop, "error": result.error})
    finish = getattr(env, "finish", None) or env.unwrapped.finish
    try:
        _, info = finish()
    except Exception as exc:
        result.error = result.error or f"finish: {type(exc).__name__}: {exc}"
        return {}
    return info.get("final_report") or {}
