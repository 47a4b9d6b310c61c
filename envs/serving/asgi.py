"""``toolgym serve`` as a module-level ASGI app, for servers that import one (``uvicorn
toolgym.envs.serving.asgi:app``; ``openenv.yaml``'s ``app``). Settings from the environment:
``TOOLGYM_TOKEN`` (the bearer token clients must send; none by default: bind to loopback then),
``TOOLGYM_MAX_SESSIONS`` (8) and ``TOOLGYM_IDLE_S`` (600 s). Serve it with a keep-alive past the
clients' (``uvicorn ... --timeout-keep-alive 75``, as ``toolgym serve`` does; see
``server.KEEP_ALIVE_S``)."""

from __future__ import annotations

import os

from toolgym.envs.serving.server import create_app

app = create_app(
    token=os.environ.get("TOOLGYM_TOKEN") or None,
    max_sessions=int(os.environ.get("TOOLGYM_MAX_SESSIONS", "8")),
    idle_s=float(os.environ.get("TOOLGYM_IDLE_S", "600")),
)
