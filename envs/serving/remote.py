"""A toolgym env served by ``toolgym serve`` (``envs/serving/server.py``), as a local Gymnasium env.

``RemoteEnv(url, env_id, **env_kwargs)`` opens a session on the server and has the same spaces,
``reset``, ``step``, ``close``, ``tool_schemas()``, ``agent_tools()`` and ``finish()`` as the
env it stands for (pictures come back as ``uint8`` arrays), so a trainer, a vector env or the
language-model runner drives it unchanged. A refusal from the server (a bad argument, an expired
session) raises :class:`RemoteError` with the server's one-line message.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any

import gymnasium as gym
import httpx
from gymnasium import spaces

from toolgym.envs.episode.spaces import UnicodeText
from toolgym.envs.serving.sessions import DEFAULT_ENV, decode_observation


class RemoteError(RuntimeError):
    """The server refused a request: ``status`` (HTTP) and the server's message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class RemoteEnv(gym.Env[dict[str, Any], Any]):
    """A session on a toolgym env server.

    Args:
        base_url: the server, e.g. ``http://127.0.0.1:8000``.
        env_id: the env to make there.
        token: the server's bearer token, if it has one.
        timeout_s: seconds a request may take (a step runs the sandbox and the verifier).
        env_kwargs: the env's arguments (``suite``, ``task``, ``action_mode``, ...).
    """

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium API

    def __init__(
        self,
        base_url: str,
        env_id: str = DEFAULT_ENV,
        *,
        token: str | None = None,
        timeout_s: float = 300.0,
        **env_kwargs: Any,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)
        self.session_id: str | None = None
        described = self._call("POST", "/sessions", {"env": env_id, "env_kwargs": env_kwargs})
        self.session_id = described["session_id"]
        self.env_id = env_id
        self.action_mode, self.max_steps = described["action_mode"], described["max_steps"]
        self.backend, self._tools = described["backend"], described["tools"]
        self._agent_tools = described["agent_tools"]
        shape = described["spaces"]
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, tuple(shape["image"]), "uint8"),
                "target": spaces.Box(0, 255, tuple(shape["target"]), "uint8"),
                "prompt": UnicodeText(shape["prompt"]),
                "feedback": UnicodeText(shape["feedback"]),
                "step": spaces.Discrete(shape["step"]),
            }
        )
        self.action_space = UnicodeText(shape["action"])
        self.task: Any = None  # id and prompt of the episode's task, after reset

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        body = {"session_id": self.session_id, "seed": seed, "options": options}
        reply = self._call("POST", "/reset", body)
        observation = decode_observation(reply["observation"])
        self.task = types.SimpleNamespace(
            id=reply["info"].get("task"), prompt=observation["prompt"]
        )
        return observation, reply["info"]

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not isinstance(action, str | dict):  # JSON carries text and objects only
            action = str(action)
        reply = self._call("POST", "/step", {"session_id": self.session_id, "action": action})
        return (
            decode_observation(reply["observation"]),
            float(reply["reward"]),
            bool(reply["terminated"]),
            bool(reply["truncated"]),
            reply["info"],
        )

    def finish(self) -> tuple[float, dict[str, Any]]:
        """End the episode now; the final tier scores the part (see ``ToolEnv.finish``)."""
        reply = self._call("POST", "/finish", {"session_id": self.session_id})
        return float(reply["reward"]), reply["info"]

    def state(self) -> dict[str, Any]:
        """The server's ``/state`` of this session (episode id, step count, task, done)."""
        return self._call("GET", f"/state?session_id={self.session_id}")

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self._tools

    def agent_tools(self) -> list[dict[str, Any]]:
        return self._agent_tools

    def close(self) -> None:
        if self.session_id is not None:
            with contextlib.suppress(httpx.HTTPError):  # a server gone has nothing to close
                self._http.delete(f"/sessions/{self.session_id}")
            self.session_id = None
        self._http.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise RemoteError(
                0, f"{self._http.base_url}{path}: {type(exc).__name__}: {exc}"
            ) from None
        try:
            data = response.json()
        except ValueError:
            data = {"error": response.text[:200]}
        if response.status_code != 200:
            raise RemoteError(response.status_code, str(data.get("error", data)))
        return data
