"""Ray, as the env runners use it: connecting, and placing actors where there is room.

:func:`start` connects: no address starts a local Ray on 127.0.0.1 (no dashboard) sized to the
machine; an address joins an existing cluster (``ray start --head``, KubeRay), after checking
within :data:`CONNECT_TIMEOUT_S` that something answers there. The rest is what placing
env-runner actors needs: their resources, waiting until they run, telling a lost actor from a
bug, the CPUs left free.
"""

from __future__ import annotations

import os
import socket
from typing import Any

LOCAL = "local"  # the address meaning: start a Ray on this machine
CONNECT_TIMEOUT_S = 3.0
# What one CadQuery environment holds (its actor's share, its zygote, a live session and its
# snapshots); measured in bench/ray_rollouts.py, rounded up. Declared so that Ray packs no more
# envs on a node than its memory holds.
MEMORY_PER_ENV = 512 * 1024**2
READY_TIMEOUT_S = 300.0  # actors that cannot be placed in this long: the cluster has no room
START_ATTEMPTS = 3  # a local Ray whose node did not come up in Ray's 30 s is started again
MAX_LOSSES = 3  # an item whose actor died this many times is given up
_started_here = False  # whether this process started the Ray it uses (see start)


class RayAddressError(RuntimeError):
    """No Ray cluster answers at the address given."""


class RayCapacityError(ValueError):
    """The Ray cluster cannot place the env-runner actors asked for."""


# -- connecting -------------------------------------------------------------------------------
def start(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect this process to Ray (once; later calls do nothing).

    ``address`` ``None`` or ``"local"``: start a Ray on this machine, bound to 127.0.0.1, without
    dashboard, with ``num_cpus`` CPUs (default: all). ``"HOST:PORT"`` (a head's GCS, e.g. from
    ``ray start --head``) or ``"auto"``: join that cluster. Raises :class:`RayAddressError` naming
    the address when nothing answers there within :data:`CONNECT_TIMEOUT_S` seconds.
    """
    address = address or LOCAL
    host = "127.0.0.1"
    if address not in (LOCAL, "auto"):
        host, port = _parse_address(address)
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__.replace("Error", "").lower() or str(exc)
            raise RayAddressError(f"no Ray cluster answers at {address}: {reason}") from None
    if _loopback(host):
        # A loopback address must stay loopback: by default Ray rewrites it to the machine's
        # outward IP, which a firewalled or network-less machine cannot reach.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report sent home
    import ray

    if ray.is_initialized():
        return
    if address == LOCAL:
        global _started_here
        _started_here = True
        for attempt in range(START_ATTEMPTS):
            try:
                ray.init(
                    address=LOCAL,
                    num_cpus=num_cpus or os.process_cpu_count(),
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    log_to_driver=False,
                    logging_level="WARNING",
                    configure_logging=False,
                )
                break
            except Exception as exc:  # Ray's own start-up limit (30 s) trips on a busy machine
                if "timed out during startup" not in str(exc) or attempt == START_ATTEMPTS - 1:
                    raise
    else:
        try:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING")
        except ConnectionError as exc:  # "auto" with no cluster running on this machine
            raise RayAddressError(f"no Ray cluster answers at {address}: {exc}") from None


def _parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayAddressError(f"{address!r} is not a Ray address: give HOST:PORT, auto or local")
    return host.strip("[]"), int(port)


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def actor_options(num_envs: int, memory_per_env: int) -> dict[str, Any]:
    # SPREAD: a node lost takes as few envs with it as the cluster allows.
    return {
        "num_cpus": max(1, num_envs),
        "memory": max(1, num_envs) * memory_per_env,
        "scheduling_strategy": "SPREAD",
        "max_restarts": 0,
    }


def wait_ready(actors: list[Any], timeout_s: float = READY_TIMEOUT_S) -> None:
    """Wait until every actor runs, or fail saying what the cluster lacks."""
    import ray

    pings = [a.pid.remote() for a in actors]
    ready, _ = ray.wait(pings, num_returns=len(pings), timeout=timeout_s)
    if len(ready) < len(pings):
        free = ray.available_resources()
        for actor in actors:
            ray.kill(actor)
        raise RayCapacityError(
            f"the Ray cluster placed {len(ready)} of {len(pings)} env-runner actors in "
            f"{timeout_s:.0f} s (free: {free.get('CPU', 0):g} CPUs, "
            f"{free.get('memory', 0) / 1024**3:.1f} GiB); ask for fewer envs or add nodes"
        )
    ray.get(pings)


def check_capacity(cpus: int, memory: int) -> None:
    """Fail at once when a Ray started here could never hold ``cpus`` CPUs and ``memory``
    bytes of actors (a cluster's autoscaler may add nodes: there, :func:`wait_ready` waits)."""
    import ray

    if not _started_here:
        return
    total = ray.cluster_resources()
    if cpus > total.get("CPU", 0) or memory > total.get("memory", 0):
        raise RayCapacityError(
            f"the local Ray has {total.get('CPU', 0):g} CPUs and "
            f"{total.get('memory', 0) / 1024**3:.1f} GiB for actors; {cpus} envs need {cpus} "
            f"CPUs and {memory / 1024**3:.1f} GiB (one CPU each): ask for fewer envs, or give a "
            "cluster's address"
        )


def lost(exc: BaseException) -> bool:
    """Whether an error says an actor (or its node) died, rather than a bug in the call."""
    import ray.exceptions as rex

    return isinstance(exc, rex.RayActorError | rex.ActorUnavailableError)


def free_cpus() -> int:
    import ray

    return max(1, int(ray.available_resources().get("CPU", 1)))
