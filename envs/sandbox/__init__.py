"""The sandbox that runs agent-written tool scripts: warm, isolated, crash-proof.

Quick use::

    from toolgym.envs.sandbox import Session

    with Session("cadquery") as session:
        result = session.run("result = cq.Workplane().box(10, 20, 30)", fetch=["result"])
        result.results["result"]["volume_mm3"]  # 6000.0
        mesh = session.request("tessellate").value

See ``client.Session`` for snapshots, rollback and limits.
"""

from toolgym.envs.sandbox.client import Session, SnapshotLost
from toolgym.envs.sandbox.limits import Limits
from toolgym.envs.sandbox.results import CallError, CallResult, SandboxError
from toolgym.envs.sandbox.zygotes import get_zygote, shutdown_zygotes

__all__ = [
    "CallError",
    "CallResult",
    "Limits",
    "SandboxError",
    "Session",
    "SnapshotLost",
    "get_zygote",
    "shutdown_zygotes",
]
