"""Every snippet in README.md, run: Python blocks as doctests, commands in a scratch folder.

A command that is not run is listed in SKIPPED with the reason; a README command that is in
neither RUN nor SKIPPED fails the test, so a new snippet cannot go untested by accident.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import cadquery as cq
import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV_BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)

# Commands run as written (from a scratch folder, `.venv/` meaning this venv), with the exit code
# each must give.
RUN = {
    "source .venv/bin/activate": 0,
    ".venv/bin/toolgym run --agent random --suite primitives --episodes 4 --out renders/": 0,
    ".venv/bin/toolgym run --agent random --task curated/plate-four-holes --max-steps 4 "
    "--wall-s 10 --json": 0,
    ".venv/bin/toolgym show curated/plate-four-holes --image target.png --export target.step": 0,
    ".venv/bin/toolgym verify --candidate part.stl --reference target.step": 1,  # a box: a fail
    ".venv/bin/toolgym verify --task procedural/plate_holes/train-0 --script my.py": 0,
    # One solution in the folder: the other tasks have none, so the batch fails.
    ".venv/bin/toolgym verify --suite curated --scripts solutions/ --jobs 2 --out results.jsonl": 1,
    ".venv/bin/toolgym run --agent random --suite primitives --episodes 2 --max-steps 3 "
    "--record runs/random": 0,
    ".venv/bin/toolgym replay runs/random --out report.html": 0,
    ".venv/bin/toolgym replay runs/random --gif random.gif": 0,
    ".venv/bin/toolgym replay runs/random --verify": 0,
    ".venv/bin/toolgym tasks": 0,
    ".venv/bin/toolgym tasks curated": 0,
    ".venv/bin/toolgym tasks --difficulty 1 --split test --json": 0,
    ".venv/bin/toolgym run --env toolgym/Blender-v0 --agent oracle --suite blender-placement": 0,
    ".venv/bin/toolgym show blender-material/gold --image gold.png --export gold.blend": 0,
    ".venv/bin/toolgym verify --task blender-placement/two-crates --script crates.py": 0,
    ".venv/bin/toolgym run --env toolgym/GameScene-v0 --agent oracle --task "
    "scene-curated/roll-east --json": 0,
    # The README's own suite file (written into the scratch folder from its toml block).
    ".venv/bin/toolgym tasks mine.toml": 0,
    ".venv/bin/toolgym run --agent oracle --suite mine.toml": 0,
    ".venv/bin/toolgym verify --task mine/spacer --script spacer.py --suite mine.toml": 0,
    ".venv/bin/toolgym show scene-curated/dining-four --image dining.png --export dining.glb": 0,
    ".venv/bin/toolgym run --agent oracle --suite primitives --episodes 4 --action-mode tool "
    "--max-steps 2 --record runs/oracle": 0,
    ".venv/bin/toolgym sft runs/oracle --out warm-start.jsonl": 0,
    ".venv/bin/toolgym fuzz --task procedural/plate_holes/test-0": 0,
    ".venv/bin/toolgym tasks --families": 0,
    ".venv/bin/toolgym tasks cad-edits --split test --family flange": 0,
    # From the checkout's tests/ (linked into the scratch folder).
    ".venv/bin/python tests/cad_families.py flange --seeds 3": 0,
    ".venv/bin/python tests/cad_families.py --readme": 0,
    ".venv/bin/python tests/family_checks.py blender bookshelf --seeds 1": 0,
    ".venv/bin/python tests/family_checks.py scene office_desks --seeds 1": 0,
    ".venv/bin/python tests/family_checks.py scene --readme": 0,
    ".venv/bin/toolgym bench list": 0,
    ".venv/bin/toolgym bench run all-lite-v1 --agent oracle --limit 18 --out runs/bench/oracle": 0,
    ".venv/bin/toolgym bench run all-lite-v1 --agent keyword --limit 18 "
    "--out runs/bench/keyword": 0,
    ".venv/bin/toolgym bench compare runs/bench/oracle runs/bench/keyword": 0,
}
SKIPPED = {
    ".venv/bin/toolgym bench run all-lite-v1 --agent openai --base-url http://127.0.0.1:8000/v1 "
    "--model my-model --api-key-env OPENAI_API_KEY --samples 4 --jobs 8 --price-in 0.15 "
    "--price-out 0.60 --out runs/bench/my-model": "needs a model behind an endpoint; "
    "test_benchmark runs the command against a scripted one",
    ".venv/bin/toolgym run --agent openai --base-url http://127.0.0.1:8000/v1 --model my-model "
    "--api-key-env OPENAI_API_KEY --suite primitives --episodes 8 --jobs 4 --record runs/model": (
        "needs a model behind an endpoint; test_llm_runner runs the command against a scripted one"
    ),
    ".venv/bin/toolgym serve --host 127.0.0.1 --port 8100 --token-env TOOLGYM_TOKEN": "serves "
    "until stopped; test_server starts it with a token and checks /health, /envs and a wrong one",
    ".venv/bin/toolgym train --env toolgym/CadQuery-v0 --suite primitives --steps 1024 "
    "--bc-steps 200 --max-steps 1 --out runs/prims": "a training run, minutes; test_trainer "
    "runs the trainer end to end and test_cli the command",
    ".venv/bin/toolgym eval --checkpoint runs/prims/checkpoints/latest.pt --split test "
    "--episodes 50": "needs the run above; test_cli evaluates a checkpoint",
    ".venv/bin/toolgym plot runs/prims": "needs the run above; test_first_hour plots a run's "
    "progress.csv",
    "make demo": "the set-up and the demo take minutes; test_make_demo_ends_with_what_to_look_at "
    "checks its recipe, and its steps are the doctor transcript and `run --out`, run here",
    "make test": "this is the test suite",
    ".venv/bin/toolgym fuzz --domain scene --per-family 2 --json fuzz.json": "every scene family "
    "twice, minutes; tests/test_scene_red_team.py fuzzes a sample and (slow) every family",
    ".venv/bin/toolgym train --suite primitives --steps 1024 --max-steps 1 --num-envs 2 --ray "
    "--out runs/ray": "a training run on Ray, minutes; test_ray runs the trainer on a two-node "
    "cluster and checks that every command reads a bare --ray as a local Ray",
    "ray start --head --port 6379 --num-cpus 0": "starts a cluster's head; test_ray starts a "
    "two-node cluster on loopback",
    "ray start --address HEAD:6379": "joins a cluster on another machine",
    ".venv/bin/toolgym train --mix cadquery:primitives,scene:scene-layout --num-envs 64 "
    "--num-steps 32 --ray HEAD:6379 --out runs/cluster": "needs a cluster of 64 CPUs; test_ray "
    "plays mixed tools on actors",
    ".venv/bin/toolgym eval --checkpoint runs/cluster/checkpoints/latest.pt --ray HEAD:6379 "
    "--record runs/cluster-eval": "needs the cluster and the run above; test_ray records a "
    "vector env's episodes on actors",
    ".venv/bin/toolgym verify --suite curated --scripts solutions/ --jobs 64 --ray HEAD:6379 "
    "--out results.jsonl": "needs a cluster; test_ray verifies a batch across actors",
    ".venv/bin/toolgym run --agent random --suite primitives --episodes 64 --ray HEAD:6379 "
    "--out renders/ --record runs/random-ray": "needs a cluster; test_ray compares run_episodes "
    "on actors with local ones, renders and recordings",
    'python3.13 -m venv vf && vf/bin/pip install "verifiers[openenv]==0.4.0"': "installs "
    "verifiers 0.4 in a venv of its own (hundreds of MB); test_verifiers_v1 builds one and "
    "plays rows in it",
    ".venv/bin/toolgym run --agent oracle --suite curated": "every curated task, minutes; "
    "test_cadquery_env's oracle sweep runs the same episodes",
}


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README) if lang == language]


def commands() -> list[str]:
    found = []
    for body in blocks("sh"):
        for line in body.splitlines():
            command = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
            if command:
                found.append(command)
    return found


def test_every_readme_command_is_run_or_skipped_with_a_reason():
    listed = commands()
    assert listed, "no sh blocks found"
    unknown = [c for c in listed if c not in RUN and c not in SKIPPED]
    assert not unknown, f"README commands that no test runs: {unknown}"
    stale = [c for c in [*RUN, *SKIPPED] if c not in listed]
    assert not stale, f"commands listed here but gone from the README: {stale}"


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_snippets_are_true(index):
    block = blocks("python")[index]
    assert ">>>" in block, "a README Python block without doctest prompts is never run"
    test = doctest.DocTestParser().get_doctest(block, {}, f"README python {index}", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A folder with what the README's commands read: part.stl, target.step, my.py, solutions/."""
    from toolgym.envs.tasks.suites import get_task

    folder = tmp_path_factory.mktemp("readme")
    cq.exporters.export(cq.Workplane().box(60, 40, 12), str(folder / "part.stl"))
    (folder / "my.py").write_text(get_task("procedural/plate_holes/train-0").reference)
    (folder / "solutions").mkdir()
    plate = get_task("curated/plate-four-holes").reference
    (folder / "solutions" / "plate-four-holes.py").write_text(plate)
    (folder / "crates.py").write_text(get_task("blender-placement/two-crates").reference)
    (mine,) = blocks("toml")  # the README's suite file, and its reference as a solution
    (folder / "mine.toml").write_text(mine)
    (folder / "spacer.py").write_text(tomllib.loads(mine)["task"][0]["reference"])
    (folder / "tests").symlink_to(ROOT / "tests")  # the family checker the README runs
    return folder


def run_command(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    venv = str(VENV_BIN.parent)
    line = command.replace(".venv/", f"{venv}/")
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run(
        ["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=600, env=env
    )


@pytest.mark.slow
@pytest.mark.timeout(2400)  # every README command in turn: minutes each on a busy machine
def test_readme_commands_run(scratch):
    for command in commands():
        if command in SKIPPED:
            continue
        done = run_command(command, scratch)
        assert done.returncode == RUN[command], (command, done.stdout[-2000:], done.stderr[-2000:])
        check = CHECKS.get(command)
        if check:
            check(scratch, done)


def _renders(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    pngs = sorted((folder / "renders").glob("*.png"))
    assert len(pngs) == 4
    for png in pngs:
        image = np.asarray(Image.open(png))
        # Two captioned 2 × 2 grids of 64 px views: a caption strip, a divider between.
        assert image.shape == (16 + 128, 128 + 1 + 128, 3)
        assert (image[:16] < 128).any()  # caption text
    assert "agent | target" in done.stdout


def _one_task_json(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    episodes = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(episodes) == 1 and episodes[0]["task"] == "curated/plate-four-holes"
    assert 1 <= episodes[0]["steps"] <= 4


def _shown(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    from toolgym.envs.cadquery.artifacts import load_part

    assert "A 60 × 40 × 6 mm plate" in done.stdout
    assert Image.open(folder / "target.png").size == (512, 16 + 512)
    volume = 60 * 40 * 6 - 4 * np.pi * 2.5**2 * 6
    assert load_part(folder / "target.step").mesh.volume == pytest.approx(volume, rel=1e-3)


def _activated(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    venv = str(VENV_BIN.parent)
    again = subprocess.run(
        ["bash", "-c", f"source {venv}/bin/activate && command -v toolgym && toolgym -h"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and again.stdout.startswith(f"{venv}/bin/toolgym"), again.stderr


def _blender_oracle(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.stdout.count("│ blender-placement/") == 6 and "mean score 1.000" in done.stdout


def _blender_shown(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert "Make Ball gold" in done.stdout
    assert (folder / "gold.blend").read_bytes()[:7] == b"BLENDER"
    assert Image.open(folder / "gold.png").size == (512, 16 + 512)


def _scene_episode(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    episode = json.loads(done.stdout)
    assert episode["task"] == "scene-curated/roll-east" and episode["score"] == 1.0


def _scene_shown(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert "Furnish a dining room" in done.stdout
    assert (folder / "dining.glb").read_bytes()[:4] == b"glTF"
    assert np.asarray(Image.open(folder / "dining.png")).ndim == 3


def _replay_report(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    index = (folder / "report.html").read_text()
    assert index.count("href='report-episodes/") == 2
    assert len(list((folder / "report-episodes").glob("*.html"))) == 2


def _replay_gif(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    with Image.open(folder / "random.gif") as gif:
        assert gif.n_frames == 8  # two episodes: a start frame and three steps each


def _replay_verified(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.stdout.count("3 steps reproduce") == 2


def _warm_start(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    chats = [json.loads(line) for line in (folder / "warm-start.jsonl").read_text().splitlines()]
    assert len(chats) == 4 and "4 conversations" in done.stdout
    for chat in chats:
        assert chat["score"] >= 0.99 and chat["messages"][2]["tool_calls"]
        assert [t["function"]["name"] for t in chat["tools"]][:3] == [
            "add_box",
            "add_cylinder",
            "add_sphere",
        ]


def _own_suite_oracle(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert "mine/spacer" in done.stdout and "mean score 1.000" in done.stdout


def _own_task_verified(folder: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.stderr.startswith("PASS mine/spacer: score 1.000")
    assert json.loads(done.stdout)["task"] == "mine/spacer"


CHECKS = {
    ".venv/bin/toolgym sft runs/oracle --out warm-start.jsonl": _warm_start,
    ".venv/bin/toolgym run --agent oracle --suite mine.toml": _own_suite_oracle,
    ".venv/bin/toolgym verify --task mine/spacer --script spacer.py --suite mine.toml": (
        _own_task_verified
    ),
    ".venv/bin/toolgym run --env toolgym/Blender-v0 --agent oracle --suite blender-placement": (
        _blender_oracle
    ),
    ".venv/bin/toolgym show blender-material/gold --image gold.png --export gold.blend": (
        _blender_shown
    ),
    ".venv/bin/toolgym replay runs/random --out report.html": _replay_report,
    ".venv/bin/toolgym replay runs/random --gif random.gif": _replay_gif,
    ".venv/bin/toolgym replay runs/random --verify": _replay_verified,
    "source .venv/bin/activate": _activated,
    ".venv/bin/toolgym run --env toolgym/GameScene-v0 --agent oracle --task "
    "scene-curated/roll-east --json": _scene_episode,
    ".venv/bin/toolgym show scene-curated/dining-four --image dining.png --export dining.glb": (
        _scene_shown
    ),
    ".venv/bin/toolgym run --agent random --suite primitives --episodes 4 --out renders/": _renders,
    ".venv/bin/toolgym run --agent random --task curated/plate-four-holes --max-steps 4 "
    "--wall-s 10 --json": _one_task_json,
    ".venv/bin/toolgym show curated/plate-four-holes --image target.png --export target.step": (
        _shown
    ),
}


def _doctor_rows(text: str) -> list[tuple[str, str]]:
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if line.lstrip().startswith("│") and len(cells) == 3 and cells[0]:
            rows.append((cells[0], cells[1]))
    return rows


@pytest.mark.slow
def test_the_doctor_transcript_is_what_doctor_prints():
    transcript = next(b for b in blocks("") if b.startswith("$ .venv/bin/toolgym doctor"))
    done = run_command(".venv/bin/toolgym doctor", ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _doctor_rows(transcript) == _doctor_rows(done.stdout)
    verdict = [line for line in transcript.splitlines() if line.startswith("Verdict")]
    assert verdict and verdict[0] in done.stdout


def test_make_demo_ends_with_what_to_look_at():
    done = subprocess.run(
        ["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    last_run = max(k for k, line in enumerate(lines) if line.startswith(".venv/bin/toolgym run"))
    closing = "\n".join(lines[last_run + 1 :])
    needles = ("demo-out/oracle/", "demo-out/random/", "(left)", "target (right)")
    needles += ("iso, front, right, top", "source .venv/bin/activate", "toolgym show")
    for needle in needles:
        assert needle in closing, needle
    # The commands it suggests exist and take the options given (-h checks them, runs nothing).
    suggested = [
        match[1]
        for line in lines[last_run + 1 :]
        if (match := re.match(r'echo "  (toolgym [^#"]*?)\s*(#.*)?"$', line))
    ]
    assert len(suggested) == 5, suggested
    # After training: the run plotted, the trained policy scored.
    assert suggested[-2:] == [
        "toolgym plot demo-out/train",
        "toolgym eval --checkpoint demo-out/train --split train",
    ]
    for command in suggested:
        checked = run_command(command.replace("toolgym ", ".venv/bin/toolgym ", 1) + " -h", ROOT)
        assert checked.returncode == 0, (command, checked.stderr)
