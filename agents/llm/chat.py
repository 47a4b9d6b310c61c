"""A client for OpenAI-compatible chat-completions endpoints: timeouts, retries, bounded replies.

Plain HTTP (``httpx``), so any server that speaks ``POST {base_url}/chat/completions`` works:
vLLM, SGLang, llama.cpp, Ollama, TGI, hosted APIs. A reply is read as a stream and cut off past
``max_reply_bytes``, so a runaway server cannot fill the runner's memory.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from typing import Any

import httpx

# Worth another try: rate limits, overloaded or restarting servers, gateways.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class ChatError(RuntimeError):
    """The endpoint could not give a usable reply (after the retries); one line saying why."""


@dataclasses.dataclass
class Completion:
    """One reply.

    Attributes:
        message: the assistant message as the server sent it (``role``, ``content``,
            ``tool_calls``).
        finish_reason: the server's ``finish_reason`` (``"tool_calls"``, ``"stop"``, ...).
        prompt_tokens, completion_tokens: the server's ``usage`` (0 when it sends none).
        latency_s: seconds from the first request to the reply, retries and waits included.
        attempts: requests made (1 when the first one answered).
    """

    message: dict[str, Any]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int


class ChatClient:
    """Chat completions from ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) for ``model``.

    Args:
        base_url: the API root; ``/chat/completions`` is appended.
        model: the model name the server knows.
        api_key: sent as ``Authorization: Bearer``; ``None`` sends none.
        timeout_s: per request: seconds to connect, and between bytes of the reply.
        retries: further attempts after a timeout, a dropped connection or a status in
            ``RETRY_STATUSES``; other errors (400, 401, 404) fail at once.
        backoff_s: the first wait; each retry waits twice as long (with up to 25 % jitter),
            at most ``max_backoff_s``; a ``Retry-After`` header within that bound is obeyed.
        max_reply_bytes: a longer reply is an error (bytes, before JSON decoding).
        params: extra body fields for every request (``temperature``, ``max_tokens``, ...).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        retries: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        max_reply_bytes: int = 16 * 1024 * 1024,
        params: dict[str, Any] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if retries < 0 or backoff_s < 0 or timeout_s <= 0:
            raise ValueError("retries and backoff_s must be ≥ 0 and timeout_s > 0")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.retries = model, retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.max_reply_bytes, self.params = max_reply_bytes, dict(params or {})
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s))

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        """One assistant reply to ``messages``, ``tools`` on offer. Raises :class:`ChatError`."""
        body = {"model": self.model, "messages": messages, **self.params}
        if tools:
            body["tools"] = tools
        started, attempt, why = time.perf_counter(), 0, ""
        while True:
            attempt += 1
            wait = None
            try:
                status, raw, retry_after = self._post(body)
            except httpx.TimeoutException:
                why = f"no reply within {self._http.timeout.read:g} s"
            except httpx.TransportError as exc:
                why = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                if status == 200:
                    return self._completion(raw, started, attempt)
                why = f"HTTP {status}: {_first_line(raw)}"
                if status not in RETRY_STATUSES:
                    raise ChatError(f"{self.url}: {why}")
                wait = retry_after
            if attempt > self.retries:
                tries = f"{attempt} attempt{'s' * (attempt > 1)}"
                raise ChatError(f"{self.url}: {why} (gave up after {tries})")
            time.sleep(self._backoff(attempt, wait))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------
    def _post(self, body: dict[str, Any]) -> tuple[int, bytes, float | None]:
        with self._http.stream("POST", self.url, json=body) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    raise ChatError(
                        f"{self.url}: the reply is over max_reply_bytes={self.max_reply_bytes}"
                    )
                chunks.append(chunk)
            return response.status_code, b"".join(chunks), _retry_after(response.headers)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_backoff_s:
            return retry_after
        wait = min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)
        return wait * (1 + 0.25 * random.random())

    def _completion(self, raw: bytes, started: float, attempts: int) -> Completion:
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(
                f"{self.url}: the reply is not a chat completion ({type(exc).__name__}: "
                f"{exc}): {_first_line(raw)}"
            ) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            message=message,
            finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            latency_s=time.perf_counter() - started,
            attempts=attempts,
        )


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        return float(headers.get("retry-after", ""))
    except ValueError:
        return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _first_line(raw: bytes, chars: int = 200) -> str:
    text = raw.decode("utf-8", "replace").strip()
    line = text.splitlines()[0] if text else "(empty body)"
    return line[:chars] + ("…" if len(line) > chars else "")
