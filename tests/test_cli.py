"""The `toolgym` command line, run as a user would."""

from __future__ import annotations

import os
import subprocess
import sys

import toolgym
from toolgym.envs.sandbox import Session


def toolgym_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgym", *args], capture_output=True, text=True, timeout=300
    )


def test_version():
    result = toolgym_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"toolgym {toolgym.__version__}"


def test_doctor_reports_tools_layers_and_rendering():
    result = toolgym_cli("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for needle in (
        "cadquery 2.",
        "bpy 5.3",
        "panda3d 1.10",
        "netns",
        "pidns",
        "mountns",
        "Workbench render",
        "Verdict: READY",
    ):
        assert needle in out, f"{needle!r} missing from:\n{out}"


def test_blender_leaves_no_temp_folder():
    """Blender's session folder (<tmp>/blender_XXXXXX) is gone once the zygote has imported it:
    a zygote is killed, never exits cleanly, so Blender would never remove it (`toolgym doctor`
    left one per run)."""
    with Session("blender", snapshot_on_start=False) as session:
        result = session.run("folder = bpy.app.tempdir", fetch=["folder"])
    folder = result.results["folder"]
    assert os.path.basename(os.path.normpath(folder)).startswith("blender_"), folder
    assert not os.path.exists(folder)
