"""`toolgym verify` as a user runs it: exit codes, JSON reports, batches that resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import cadquery as cq
import pytest
import trimesh

REPORT_KEYS = {"metrics", "score", "passed", "tier", "errors", "validity", "checks"}
PLATE = "result = cq.Workplane().box(40, 30, 5).faces('>Z').workplane().hole(6)\n"
SUITE = """
[suite]
name = "tiny"
domain = "cadquery"

[[task]]
name = "plate"
prompt = "A 40 × 30 × 5 mm plate centred on the origin with a 6 mm hole in the middle."
difficulty = 1
reference = "{plate}"

[[task]]
name = "block"
prompt = "A 10 mm cube centred on the origin."
difficulty = 1
reference = "result = cq.Workplane().box(10, 10, 10)"

[[task]]
name = "slow"
prompt = "A 12 mm cube centred on the origin."
difficulty = 1
reference = "result = cq.Workplane().box(12, 12, 12)"

[[task]]
name = "rod"
prompt = "A rod 4 mm across and 30 mm long along Z, centred on the origin."
difficulty = 1
reference = "result = cq.Workplane().cylinder(30, 2)"
"""


def toolgym(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "toolgym", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def part_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("parts")
    plate = cq.Workplane().box(40, 30, 5).faces(">Z").workplane().hole(6)
    solid_plate = cq.Workplane().box(40, 30, 3)  # thinner and without the hole
    files = {
        "plate.step": plate,
        "plate.brep": plate,
        "solid.stl": solid_plate,
    }
    for name, shape in files.items():
        cq.exporters.export(shape, str(folder / name))
    mesh = trimesh.load(folder / "solid.stl")
    mesh.export(folder / "solid.glb")
    mesh.export(folder / "solid.obj")
    (folder / "garbage.stl").write_bytes(b"solid nothing\nthis is not an stl file\n")
    (folder / "part.dwg").write_bytes(b"\0")
    (folder / "mismatched.stl").write_bytes((folder / "plate.step").read_bytes())
    return {
        name: folder / name
        for name in [*files, "solid.glb", "solid.obj", "garbage.stl", "part.dwg", "mismatched.stl"]
    }


@pytest.mark.slow
def test_files_mode_exit_codes_and_report_schema(part_files):
    same = toolgym(
        "verify",
        "--candidate",
        str(part_files["plate.brep"]),
        "--reference",
        str(part_files["plate.step"]),
    )
    assert same.returncode == 0, same.stderr
    outcome = json.loads(same.stdout)
    # One layout for every single verdict, the verdict's line first (also alone on stderr).
    assert list(outcome)[:2] == ["verdict", "task"] and outcome["task"] is None
    assert outcome["candidate"] == str(part_files["plate.brep"]) and outcome["passed"]
    assert same.stderr.splitlines()[0] == outcome["verdict"]
    assert outcome["verdict"].startswith(f"PASS {part_files['plate.brep']}: score ")
    report = outcome["report"]
    assert set(report) == REPORT_KEYS and report["passed"] and report["tier"] == "exact"
    assert report["checks"]["valid"] == {"ok": True, "message": "a sound closed solid"}
    assert all(check["message"] for check in report["checks"].values())
    # The same solid through STEP and through BREP: meshed alike to within the tolerance.
    assert report["metrics"]["iou"] == pytest.approx(1.0, abs=1e-3)
    assert report["score"] == pytest.approx(1.0, abs=1e-3)
    for fmt in ("solid.stl", "solid.glb", "solid.obj"):
        differs = toolgym(
            "verify",
            "--candidate",
            str(part_files[fmt]),
            "--reference",
            str(part_files["plate.step"]),
        )
        assert differs.returncode == 1, (fmt, differs.stderr)
        metrics = json.loads(differs.stdout)["report"]["metrics"]
        assert differs.stderr.startswith(f"FAIL {part_files[fmt]}: score ")
        hole_area = 3.141592653589793 * 3**2
        inter = 40 * 30 * 3 - hole_area * 3
        union = (40 * 30 * 5 - hole_area * 5) + hole_area * 3
        assert metrics["iou"] == pytest.approx(inter / union, abs=2e-3)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        ("garbage.stl", "no triangles in the file"),
        ("mismatched.stl", "mismatched.stl:"),
        ("part.dwg", "unsupported format"),
        ("missing.step", "no such file"),
    ],
)
def test_bad_files_exit_2_with_a_clear_message(part_files, candidate, message):
    path = part_files.get(candidate, part_files["plate.step"].with_name(candidate))
    done = toolgym("verify", "--candidate", str(path), "--reference", str(part_files["plate.step"]))
    assert done.returncode == 2 and message in done.stderr and not done.stdout


@pytest.mark.slow
def test_task_mode_scores_the_oracle_and_a_wrong_part(tmp_path):
    from toolgym.envs.tasks.suites import get_task

    task = get_task("procedural/plate_holes/train-0")
    oracle, wrong = tmp_path / "oracle.py", tmp_path / "wrong.py"
    oracle.write_text(task.reference)
    wrong.write_text("result = cq.Workplane().box(10, 10, 10)\n")
    good = toolgym("verify", "--task", task.id, "--script", str(oracle))
    assert good.returncode == 0 and json.loads(good.stdout)["score"] == pytest.approx(1.0, abs=1e-6)
    assert list(json.loads(good.stdout))[:2] == ["verdict", "task"]
    assert good.stderr.startswith(f"PASS {task.id}: score 1.000")
    bad = toolgym("verify", "--task", task.id, "--script", str(wrong))
    assert bad.returncode == 1 and json.loads(bad.stdout)["score"] < 0.2
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    nothing = toolgym("verify", "--task", task.id, "--script", str(empty))
    outcome = json.loads(nothing.stdout)
    assert (
        nothing.returncode == 1 and outcome["score"] == 0.0 and outcome["error_kind"] == "no_part"
    )
    assert outcome["error"] == "NameError: the script bound no 'result' (and showed no object)"
    assert set(outcome["report"]) == REPORT_KEYS
    not_solid = tmp_path / "number.py"
    not_solid.write_text("result = 5\n")
    outcome = json.loads(toolgym("verify", "--task", task.id, "--script", str(not_solid)).stdout)
    assert outcome["error_kind"] == "no_part" and outcome["score"] == 0.0
    assert outcome["error"] == (
        "TypeError: expected a CadQuery Workplane, Shape or Assembly, got int"
    )
    crash = tmp_path / "crash.py"
    crash.write_text("import ctypes\nctypes.string_at(0)\n")
    crashed = toolgym("verify", "--task", task.id, "--script", str(crash))
    outcome = json.loads(crashed.stdout)
    assert (
        crashed.returncode == 2 and outcome["error_kind"] == "script" and outcome["score"] is None
    )
    assert "SIGSEGV" in outcome["error"]
    unknown = toolgym("verify", "--task", "nope/nothing", "--script", str(oracle))
    assert unknown.returncode == 2 and "unknown task" in unknown.stderr
    no_script = toolgym("verify", "--task", task.id, "--script", str(tmp_path / "absent.py"))
    assert no_script.returncode == 2 and "no such script" in no_script.stderr


@pytest.mark.timing
def test_batch_summarises_and_resumes_after_an_interruption(tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.replace("{plate}", PLATE.strip()))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "plate.py").write_text(PLATE)
    (scripts / "block.py").write_text("result = cq.Workplane().box(10, 10, 10)\n")
    (scripts / "slow.py").write_text(
        "import time\ntime.sleep(25)\nresult = cq.Workplane().box(12, 12, 12)\n"
    )
    # rod.py is missing on purpose.
    out = tmp_path / "results.jsonl"
    command = [
        sys.executable,
        "-m",
        "toolgym",
        "verify",
        "--suite",
        str(suite),
        "--scripts",
        str(scripts),
        "--out",
        str(out),
    ]
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = time.monotonic()
    deadline = started + 120
    while time.monotonic() < deadline and (
        not out.exists() or len(out.read_text().splitlines()) < 2
    ):
        time.sleep(0.2)
    written = len(out.read_text().splitlines()) if out.exists() else 0
    waited = time.monotonic() - started
    running.send_signal(signal.SIGINT)  # interrupted while the slow script runs
    try:
        _, stderr = running.communicate(timeout=60)  # promptly when quiet: a busy machine's margin
    except subprocess.TimeoutExpired:
        running.kill()
        pytest.fail(f"no exit 60 s after Ctrl-C, sent after {waited:.0f} s and {written} lines")
    assert running.returncode == 130 and b"rerun to resume" in stderr
    first = out.read_text().splitlines()
    assert [json.loads(line)["task"] for line in first] == ["tiny/plate", "tiny/block"]

    (scripts / "slow.py").write_text("result = cq.Workplane().box(12, 12, 12)\n")
    done = toolgym("verify", "--suite", str(suite), "--scripts", str(scripts), "--out", str(out))
    assert done.returncode == 1  # rod has no script
    lines = out.read_text().splitlines()
    assert lines[:2] == first  # finished items were not redone
    results = {json.loads(line)["task"]: json.loads(line) for line in lines}
    assert len(lines) == 4 and set(results) == {"tiny/plate", "tiny/block", "tiny/slow", "tiny/rod"}
    assert results["tiny/slow"]["passed"] and results["tiny/rod"]["error_kind"] == "missing_script"
    assert "75.0%" in done.stdout and "missing_script 1" in done.stdout
    again = toolgym("verify", "--suite", str(suite), "--scripts", str(scripts), "--out", str(out))
    assert out.read_text().splitlines() == lines and again.returncode == 1


def test_batch_bad_input_exits_2(tmp_path):
    missing_suite = toolgym("verify", "--suite", "no-such-suite", "--scripts", str(tmp_path))
    assert missing_suite.returncode == 2 and "unknown suite" in missing_suite.stderr
    missing_dir = toolgym("verify", "--suite", "primitives", "--scripts", str(tmp_path / "nope"))
    assert missing_dir.returncode == 2 and "no such folder" in missing_dir.stderr
    both = toolgym("verify", "--suite", "primitives", "--candidate", "a.stl")
    assert both.returncode == 2 and "exactly one of" in both.stderr


@pytest.mark.slow
def test_verify_on_a_folder_says_so(tmp_path, part_files):
    task = toolgym("verify", "--task", "curated/plate-four-holes", "--script", str(tmp_path))
    assert task.returncode == 2
    assert f"{tmp_path} is a folder; --script takes one file" in task.stderr
    files = toolgym(
        "verify", "--candidate", str(tmp_path), "--reference", str(part_files["plate.step"])
    )
    assert files.returncode == 2 and f"{tmp_path} is a folder" in files.stderr
    a_file = part_files["plate.step"]
    batch = toolgym("verify", "--suite", "primitives", "--scripts", str(a_file))
    assert batch.returncode == 2 and f"{a_file} is a file; --scripts takes a folder" in batch.stderr


def test_jobs_are_bounded(tmp_path):
    out = str(tmp_path / "results.jsonl")
    for jobs in ("0", "65", "99999999999999999999"):
        done = toolgym(
            "verify",
            "--suite",
            "primitives",
            "--scripts",
            str(tmp_path),
            "--jobs",
            jobs,
            "--out",
            out,
            cwd=tmp_path,
        )
        assert done.returncode == 2 and "--jobs" in done.stderr, done.stderr
    assert not (tmp_path / "results.jsonl").exists()  # refused before any work


@pytest.mark.slow
def test_time_limit_from_the_command_line(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(5)\nresult = cq.Workplane().box(1, 1, 1)\n")
    done = toolgym(
        "verify", "--task", "curated/plate-four-holes", "--script", str(slow), "--wall-s", "1"
    )
    outcome = json.loads(done.stdout)
    assert done.returncode == 2 and outcome["error_kind"] == "script"
    assert outcome["error"] == "the call ran past 1 s (limit wall_s)"


def tiny_batch(tmp_path: Path) -> tuple[Path, Path]:
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.replace("{plate}", PLATE.strip()))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "plate.py").write_text(PLATE)
    return suite, scripts


@pytest.mark.slow
def test_batch_redoes_missing_scripts_and_force_starts_afresh(tmp_path):
    suite, scripts = tiny_batch(tmp_path)
    out = tmp_path / "results.jsonl"
    batch = ("verify", "--suite", str(suite), "--scripts", str(scripts), "--out", str(out))
    first = toolgym(*batch)
    assert first.returncode == 1 and "missing_script 3" in first.stdout
    for name, size in (("block", 10), ("slow", 12)):
        (scripts / f"{name}.py").write_text(
            f"result = cq.Workplane().box({size}, {size}, {size})\n"
        )
    second = toolgym(*batch)  # block and slow are redone; rod, still missing, is on record
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 6 and sorted(r["task"] for r in lines[4:]) == ["tiny/block", "tiny/slow"]
    assert all(r["passed"] for r in lines[4:])
    assert (
        second.returncode == 1 and "75.0%" in second.stdout and "missing_script 1" in second.stdout
    )
    forced = toolgym(*batch, "--force")
    assert forced.returncode == 1 and "75.0%" in forced.stdout
    assert sorted(json.loads(line)["task"] for line in out.read_text().splitlines()) == [
        "tiny/block",
        "tiny/plate",
        "tiny/rod",
        "tiny/slow",
    ]


def test_batch_refuses_an_out_that_is_not_a_results_file(tmp_path):
    suite, scripts = tiny_batch(tmp_path)
    notes, other = tmp_path / "notes.txt", tmp_path / "other.jsonl"
    notes.write_text("my notes\n")
    other.write_text('{"not": "a result"}\n')
    for out, message in (
        (notes, f"{notes}: results go to a .jsonl file (one JSON line per task)"),
        (other, f"{other} is not a toolgym results file (line 1 is not a result)"),
        (tmp_path / "absent" / "r.jsonl", "cannot write: No such file or directory"),
    ):
        done = toolgym(
            "verify", "--suite", str(suite), "--scripts", str(scripts), "--out", str(out)
        )
        assert done.returncode == 2 and message in done.stderr, done.stderr
    assert notes.read_text() == "my notes\n" and other.read_text() == '{"not": "a result"}\n'


@pytest.mark.parametrize(
    ("suite", "solved"),
    [("blender-placement", "two-crates"), ("scene-curated", "roll-east")],
)
def test_batches_verify_other_tools_tasks_as_cad_ones(tmp_path, suite, solved):
    from toolgym.envs.tasks.suites import get_suite, get_task

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    task = get_task(f"{suite}/{solved}")
    (scripts / f"{solved}.py").write_text(task.reference)
    (scripts / "broken.py").write_text("this is not python\n")  # names no task: ignored
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgym",
            "verify",
            "--suite",
            suite,
            "--scripts",
            str(scripts),
            "--out",
            str(out),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # the other tasks have no script: not all pass
    results = {r["task"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(results) == {t.id for t in get_suite(suite).tasks}
    assert results[task.id]["passed"] and results[task.id]["score"] >= 0.99
    others = [r for t, r in results.items() if t != task.id]
    assert {r["error_kind"] for r in others} == {"missing_script"}


@pytest.mark.slow
def test_a_task_of_a_suite_file_is_verified_with_suite(tmp_path):
    suite, scripts = tiny_batch(tmp_path)
    plate = str(scripts / "plate.py")
    unknown = toolgym("verify", "--task", "tiny/plate", "--script", plate)
    assert unknown.returncode == 2 and "needs --suite FILE" in unknown.stderr
    for name in ("tiny/plate", "plate"):
        done = toolgym("verify", "--task", name, "--script", plate, "--suite", str(suite))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["task"] == "tiny/plate"
    absent = toolgym("verify", "--task", "tiny/disc", "--script", plate, "--suite", str(suite))
    assert absent.returncode == 2 and "suite tiny has no task 'tiny/disc'" in absent.stderr


def test_a_results_file_another_batch_is_writing_is_refused(tmp_path):
    import fcntl

    suite, scripts = tiny_batch(tmp_path)
    out = tmp_path / "same.jsonl"
    with out.open("a") as other:  # what a running batch holds on its --out
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = toolgym(
            "verify", "--suite", str(suite), "--scripts", str(scripts), "--out", str(out)
        )
    assert done.returncode == 2 and "another `toolgym verify` is writing it" in done.stderr
    assert out.read_text() == ""  # no task was verified, or written twice


def test_ctrl_c_works_when_started_with_sigint_ignored(tmp_path):
    """`nohup toolgym ... &` (or a parent that ignores SIGINT) starts the command with SIGINT
    ignored; the command still stops on Ctrl-C, as a batch does: exit 130."""
    from conftest import descendants, in_syscall, wait_until

    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.replace("{plate}", PLATE.strip()))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "plate.py").write_text("import time\ntime.sleep(120)\n" + PLATE)
    command = [sys.executable, "-m", "toolgym", "verify", "--suite", str(suite)]
    command += ["--scripts", str(scripts), "--out", str(tmp_path / "results.jsonl")]
    running = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        wait_until(
            lambda: any(in_syscall(p, "nanosleep") for p in descendants(running.pid)),
            timeout_s=120,
            what="the script to sleep",
        )
        running.send_signal(signal.SIGINT)
        _, stderr = running.communicate(timeout=60)
    finally:
        running.kill()
    assert running.returncode == 130, stderr[-2000:]
