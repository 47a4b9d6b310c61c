"""``toolgym serve``: every env over HTTP and WebSocket (``envs/serving/server.py``)."""

from __future__ import annotations

import ipaddress
import os
from typing import Annotated

import typer

from toolgym.cli.common import WallSeconds, app, err_console, fail, limits_for


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    token_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the bearer token clients must send."),
    ] = None,
    max_sessions: Annotated[
        int, typer.Option(min=1, max=1024, help="Sessions (sandboxed envs) at once.")
    ] = 8,
    idle_s: Annotated[
        float, typer.Option(min=1, help="Seconds unused after which a session is closed.")
    ] = 600.0,
    max_request_kib: Annotated[
        int, typer.Option(min=1, max=1024 * 1024, help="Largest request body or message, KiB.")
    ] = 1024,
    wall_s: WallSeconds = None,
    nemo_gym: Annotated[
        bool, typer.Option(help="Serve NeMo Gym's resources-server routes too.")
    ] = False,
) -> None:
    """Serve reset/step/state of every toolgym env over HTTP and WebSocket (OpenEnv's shape)."""
    import uvicorn

    from toolgym.envs.serving.server import KEEP_ALIVE_S, create_app

    token = None
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            fail(f"--token-env {token_env}: the variable is not set")
    if token is None and not _loopback(host):
        fail(f"serving on {host}, beyond this machine, needs a bearer token: --token-env VAR")
    app_ = create_app(
        token=token,
        max_sessions=max_sessions,
        idle_s=idle_s,
        max_request_bytes=max_request_kib * 1024,
        limits=limits_for(wall_s),
        nemo_gym=nemo_gym,
    )
    err_console.print(
        f"toolgym env server on http://{host}:{port} (up to {max_sessions} sessions, "
        f"{'a bearer token' if token else 'no token'}); Ctrl-C stops it"
    )
    try:
        uvicorn.run(
            app_,
            host=host,
            port=port,
            log_level="warning",
            ws_max_size=max_request_kib * 1024 + 1024,
            timeout_keep_alive=KEEP_ALIVE_S,
        )
    except OSError as exc:  # the port is taken, say
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
