"""A scripted OpenAI-compatible endpoint on loopback, to try a pipeline without a model.

``ScriptedEndpoint(script)`` serves ``POST /v1/chat/completions`` on ``127.0.0.1`` from a thread.
``script`` is a list of replies, one per request in order (the last one repeats), or a function
of the request body that returns one. A reply is an assistant message (a dict with ``content``
and/or ``tool_calls``), a :class:`Reply` (a status, a raw body, a delay: what a failing server
does), or a transcript's assistant messages replayed in turn. ``requests`` keeps every body
received (``headers``: their headers). Tests use it as a fake model; it never loads one.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_REQUEST_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass
class Reply:
    """A raw answer: ``status``, ``body`` (bytes, or data sent as JSON), ``headers``, and
    ``delay_s`` to wait before answering (a server that times out)."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    delay_s: float = 0.0


def tool_call(name: str, arguments: Any, call_id: str = "call_0") -> dict[str, Any]:
    """An assistant message with one tool call (``arguments``: an object, or raw JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        ],
    }


def completion(message: dict[str, Any], model: str = "scripted") -> dict[str, Any]:
    """A chat-completion body around an assistant ``message`` (usage counted in characters/4)."""
    words = len(json.dumps(message)) // 4
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": words, "total_tokens": words},
    }


Script = list[Any] | Callable[[dict[str, Any]], Any]


class ScriptedEndpoint:
    """``with ScriptedEndpoint(script) as endpoint:`` serves at ``endpoint.url`` (``.../v1``)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, lower-case names
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if not self.path.endswith("/chat/completions") or length > MAX_REQUEST_BYTES:
                    self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))
                    return
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    self._send(Reply(400, {"error": {"message": "the body is not JSON"}}))
                    return
                self._send(endpoint._answer(body, {k.lower(): v for k, v in self.headers.items()}))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
                data = data.encode() if isinstance(data, str) else data
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _answer(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            count = len(self.requests)
        if callable(self.script):
            answer = self.script(body)
        else:
            answer = self.script[min(count, len(self.script)) - 1]
        if isinstance(answer, Reply):
            return answer
        return Reply(200, completion(answer, str(body.get("model", "scripted"))))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
