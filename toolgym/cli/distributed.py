"""``--ray [ADDRESS]``: what ``run``, ``eval``, ``verify`` and ``train`` share to run on Ray."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from toolgym.cli.common import fail

RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Run the envs in Ray actors. Alone (or local): a Ray started on this machine "
        "(127.0.0.1, no dashboard, all its CPUs); HOST:PORT of a cluster's head "
        "(`ray start --head`); auto: the cluster this machine is in.",
    ),
]


def connect(address: str | None) -> None:
    """Connect to Ray at ``address`` (nothing when ``None``), or exit 2 naming it."""
    if address is None:
        return
    from toolgym.agents.distributed.runners import RayAddressError, start

    try:
        start(address)
    except RayAddressError as exc:
        fail(str(exc))


def episode_runner(address: str | None) -> Callable[..., Any]:
    """``run_episodes``: local, or (with an address) across Ray actors, connected first."""
    if address is None:
        from toolgym.agents.runner import run_episodes

        return run_episodes
    connect(address)
    from toolgym.agents.distributed.runners import run_episodes

    return run_episodes


def batch_verifier(address: str | None) -> Callable[..., Any]:
    """``verify_batch``: local threads, or (with an address) Ray actors, connected first."""
    if address is None:
        from toolgym.envs.verification.batch import verify_batch

        return verify_batch
    connect(address)
    from toolgym.agents.distributed.runners import verify_batch

    return verify_batch
