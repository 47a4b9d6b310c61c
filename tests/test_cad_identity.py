"""Identical parts score 1 through every path (the env's steps and end, ``verify --task``,
``verify --candidate/--reference``, STEP or BREP), and part files holding closed shells rather
than solids are measured, saying so; an open shell is a clear error."""

from __future__ import annotations

import subprocess
import sys

import cadquery as cq
import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.cadquery.verification import verify_files, verify_script
from toolgym.envs.tasks.suites import get_task
from toolgym.verifiers.parts import PartError

IDENTICAL = 0.999
FLANGE = (
    cq.Workplane("XY")
    .circle(40)
    .extrude(8)
    .faces(">Z")
    .workplane()
    .circle(15)
    .extrude(12)
    .faces(">Z")
    .workplane()
    .hole(12)
    .cut(cq.Workplane("XY").polarArray(30, 0, 360, 6).circle(3).extrude(8))
)
LOFT = cq.Workplane("XY").rect(40, 30).workplane(offset=50).circle(15).loft()
# CadQuery's own export of a shelled box reads back as a closed shell, not a solid.
SHELLED = cq.Workplane().box(50, 30, 25).faces(">Z").shell(-2)


@pytest.mark.parametrize(
    ("name", "shape", "fmt"), [("flange", FLANGE, "step"), ("loft", LOFT, "brep")]
)
def test_a_part_file_scored_against_itself_reads_one(tmp_path, name, shape, fmt):
    path = tmp_path / f"{name}.{fmt}"
    cq.exporters.export(shape, str(path))
    report = verify_files(path, path)
    assert report.score >= IDENTICAL and report.passed, report.summary()
    assert "read_as_solid" not in report.checks


def test_the_reference_program_scores_one_in_the_env_and_in_verify_task():
    task = get_task("procedural/transition/train-0")  # a loft: its mesh moves in a BREP round trip
    env = gym.make("toolgym/CadQuery-v0", task=task.id, final_tier="exact")
    try:
        env.reset(seed=0)
        _, _, terminated, _, info = env.step(task.reference)
    finally:
        env.close()
    assert info["report"]["score"] >= IDENTICAL, info["report"]["metrics"]
    assert terminated and info["final_report"]["score"] >= IDENTICAL
    outcome = verify_script(task, task.reference)
    assert outcome.report.score >= IDENTICAL


@pytest.mark.parametrize("fmt", ["step", "brep"])
def test_closed_shells_are_sewn_into_solids_and_the_report_says_so(tmp_path, fmt):
    path = tmp_path / f"shelled.{fmt}"
    cq.exporters.export(SHELLED, str(path))
    report = verify_files(path, path)
    assert report.score >= IDENTICAL and report.passed, report.summary()
    assert report.metrics["volume_error"] < 1e-6  # a solid of the shell's volume (10 312 mm³)
    assert "closed shell" in report.checks["read_as_solid"]["message"]


def test_an_open_shell_is_a_clear_error(tmp_path):
    box = cq.Workplane().box(20, 20, 20).val()
    open_shell = cq.Shell.makeShell([f for f in box.Faces() if f.normalAt().z < 0.5])
    candidate, reference = tmp_path / "open.step", tmp_path / "box.step"
    cq.exporters.export(cq.Workplane().add(open_shell), str(candidate))
    cq.exporters.export(cq.Workplane().add(box), str(reference))
    with pytest.raises(PartError, match="not a closed solid") as caught:
        verify_files(candidate, reference)
    assert "Traceback" not in str(caught.value) and "\n" not in str(caught.value)
    command = [sys.executable, "-m", "toolgym", "verify"]
    command += ["--candidate", str(candidate), "--reference", str(reference)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 2 and "not a closed solid" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout
