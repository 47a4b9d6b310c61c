"""The `toolgym` command line, run as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import toolgym
from toolgym.envs.sandbox import Session
from toolgym.envs.tasks.suites import get_suite, get_task


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


def test_short_help_flag():
    for args in (("-h",), ("run", "-h"), ("verify", "-h")):
        done = toolgym_cli(*args)
        assert done.returncode == 0 and "Usage: toolgym" in done.stdout, args


def test_unknown_environment_lists_toolgym_environments():
    for command in ("run", "tools"):
        done = toolgym_cli(command, "--env", "nope")
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip() == (
            "error: unknown environment 'nope'; toolgym environments: toolgym/CadQuery-v0, "
            "toolgym/Blender-v0, toolgym/GameScene-v0"
        )


def test_run_checks_out_before_any_episode(tmp_path):
    a_file = tmp_path / "renders.png"
    a_file.write_bytes(b"not a folder")
    for out, message in (
        (a_file, f"--out {a_file} is a file; give a folder for the renders"),
        (a_file / "sub", f"--out {a_file / 'sub'}: cannot make the folder: Not a directory"),
    ):
        done = toolgym_cli("run", "--agent", "random", "--episodes", "1", "--out", str(out))
        assert done.returncode == 2 and done.stderr.strip() == f"error: {message}"
        assert done.stdout == ""  # no episode ran, no table
    assert a_file.read_bytes() == b"not a folder"


def test_run_one_task_as_json_with_a_step_cap_and_time_limit(tmp_path):
    done = toolgym_cli(
        "run",
        "--agent",
        "random",
        "--task",
        "curated/plate-four-holes",
        "--max-steps",
        "2",
        "--wall-s",
        "5",
        "--json",
        "--out",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    (episode,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert episode["task"] == "curated/plate-four-holes" and episode["steps"] == 2
    assert set(episode) == {"task", "steps", "score", "passed", "seconds", "errors", "render"}
    assert Path(episode["render"]).parent == tmp_path
    too_short = toolgym_cli("run", "--wall-s", "0", "--task", "curated/plate-four-holes")
    assert too_short.returncode == 2 and "--wall-s" in too_short.stderr


@pytest.mark.slow
def test_saved_renders_label_agent_target_and_views(tmp_path):
    """The PNG: captions "agent" and "target" over the two panels, view names in each tile."""
    from toolgym.renderers.labels import CAPTION_HEIGHT

    done = toolgym_cli(
        "run", "--agent", "oracle", "--task", "curated/plate-four-holes", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "agent | target, views iso, front, right, top" in done.stdout
    (png,) = tmp_path.glob("*.png")
    image = np.asarray(Image.open(png))
    assert image.shape == (CAPTION_HEIGHT + 128, 257, 3)
    agent, target = image[CAPTION_HEIGHT:, :128], image[CAPTION_HEIGHT:, 129:]
    assert np.array_equal(agent, target)  # the oracle built the target
    ink = image[:CAPTION_HEIGHT] < 100  # dark caption text over each panel, nowhere else
    assert ink[:, :40].any() and ink[:, 129:169].any() and not ink[:, 60:128].any()
    for top, left in ((0, 0), (0, 64), (64, 0), (64, 64)):  # a name in each view's corner
        corner = image[CAPTION_HEIGHT + top + 1 : CAPTION_HEIGHT + top + 12, left + 2 : left + 20]
        assert (corner < 100).all(axis=-1).any()


@pytest.mark.slow
def test_tasks_json_with_filters():
    done = toolgym_cli("tasks", "--json", "--difficulty", "1", "--split", "test")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found and all(t["difficulty"] == 1 and t["split"] == "test" for t in found)
    assert {t["id"].split("/")[0] for t in found} >= {"curated", "primitives"}
    assert all("reference" not in t for t in found)  # the answer is not listed
    curated = json.loads(toolgym_cli("tasks", "curated", "--json").stdout)
    assert len(curated) == len(get_suite("curated").tasks)
    suites = json.loads(toolgym_cli("tasks", "--json").stdout)
    assert {s["suite"] for s in suites} >= {"curated", "primitives", "procedural"}
    bad = toolgym_cli("tasks", "--split", "validation")
    assert bad.returncode == 2 and "--split must be train or test" in bad.stderr


def test_task_ids_are_never_wrapped():
    done = subprocess.run(
        [sys.executable, "-m", "toolgym", "tasks", "procedural"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COLUMNS="80"),
    )
    assert done.returncode == 0
    assert all(len(line) <= 80 for line in done.stdout.splitlines())
    for task in get_suite("procedural").tasks:
        assert f"│ {task.id} " in done.stdout, task.id


def test_tools_table_keeps_square_brackets():
    done = subprocess.run(
        [sys.executable, "-m", "toolgym", "tools"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COLUMNS="250"),
    )
    assert done.returncode == 0 and "drawn as [radius, z] points" in done.stdout
    assert '{"name": "look", "arguments": {"center": [x, y, z], "zoom": 1..16}} (mm)' in done.stdout


@pytest.mark.slow
def test_show_prints_the_prompt_and_writes_target_image_and_part(tmp_path):
    from toolgym.verifiers.parts import Part

    task = get_task("curated/plate-four-holes")
    image, part = tmp_path / "target.png", tmp_path / "target.stl"
    done = toolgym_cli("show", task.id, "--image", str(image), "--export", str(part))
    assert done.returncode == 0, done.stderr
    assert task.prompt in " ".join(done.stdout.split()) and task.reference not in done.stdout
    assert Image.open(image).size == (512, 528)
    volume = 60 * 40 * 6 - 4 * np.pi * 2.5**2 * 6
    assert Part.from_file(part).mesh.volume == pytest.approx(volume, rel=1e-3)
    for args, message in (
        (("nope/task",), "unknown task 'nope/task'"),
        ((task.id, "--export", str(tmp_path / "t.dwg")), "export as .step, .stl, .brep, .glb"),
        ((task.id, "--image", str(tmp_path / "no" / "t.png")), "does not exist"),
    ):
        bad = toolgym_cli("show", *args)
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr


def test_train_refuses_depth_where_there_is_none_and_an_unknown_prompt_form(tmp_path):
    for args, said in (
        (("--env", "toolgym/Blender-v0", "--depth"), "toolgym/Blender-v0 has none"),
        (("--mix", "cadquery:primitives", "--depth"), "cadquery:primitives has none"),
        (("--prompt-form", "sketch"), "--prompt-form must be described or image"),
    ):
        refused = toolgym_cli("train", *args, "--out", str(tmp_path / "run"))
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
        assert not (tmp_path / "run").exists()  # refused before anything is written


@pytest.mark.slow
def test_train_writes_a_checkpoint_that_eval_scores(tmp_path):
    suite = Path(__file__).resolve().parents[1] / "assets/cadquery/demo/first-tools.toml"
    out = tmp_path / "run"
    trained = toolgym_cli(
        "train",
        "--suite",
        str(suite),
        "--steps",
        "8",
        "--num-steps",
        "4",
        "--max-steps",
        "1",
        "--out",
        str(out),
    )
    assert trained.returncode == 0, trained.stdout + trained.stderr
    assert "iteration    1" in trained.stdout and (out / "progress.csv").is_file()
    checkpoint = out / "checkpoints" / "latest.pt"
    recording = tmp_path / "eval-record"
    scored = toolgym_cli(
        "eval",
        "--checkpoint",
        str(checkpoint),
        "--split",
        "train",
        "--episodes",
        "3",
        "--json",
        "--record",
        str(recording),
    )
    assert scored.returncode == 0, scored.stdout + scored.stderr
    report = json.loads(scored.stdout)
    assert report["episodes"] == 3 and 0.0 <= report["score"] <= 1.0
    logs = sorted(recording.rglob("episode.jsonl"))  # evaluation episodes, recorded
    assert len(logs) >= 3, logs
    recorded_tasks = {
        json.loads(line).get("task") for log in logs for line in log.read_text().splitlines()
    }
    assert recorded_tasks >= {r["task"] for r in report["results"]}
    # Training settles episodes at the per-step tier; evaluation at the task's exact one.
    assert json.loads((out / "config.json").read_text())["final_tier"] == "cheap"
    finals = [
        json.loads(line)["final_report"]
        for log in logs
        for line in log.read_text().splitlines()
        if json.loads(line).get("final_report")
    ]
    assert len(finals) >= 3 and {f["tier"] for f in finals} == {"exact"}
    assert {r["task"] for r in report["results"]} == {
        "first-tools/cube",
        "first-tools/ball",
        "first-tools/rod",
    }
    # Image-only prompts, the policy reading the depth views: the run says so in its config.
    looking = tmp_path / "image-run"
    trained = toolgym_cli(
        "train",
        "--suite",
        str(suite),
        "--steps",
        "4",
        "--num-steps",
        "2",
        "--max-steps",
        "1",
        "--prompt-form",
        "image",
        "--depth",
        "--out",
        str(looking),
    )
    assert trained.returncode == 0, trained.stdout + trained.stderr
    saved = json.loads((looking / "config.json").read_text())
    assert saved["prompt_form"] == "image" and saved["policy"]["measure"] is True
    table = toolgym_cli("eval", "--checkpoint", str(checkpoint), "--split", "test")
    assert table.returncode == 2 and "no 'test' tasks" in table.stderr
    wrong = toolgym_cli("train", "--suite", str(suite), "--final-tier", "fast", "--out", str(out))
    assert wrong.returncode == 2 and "--final-tier must be cheap or exact" in wrong.stderr
