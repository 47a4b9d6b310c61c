"""Replay: `toolgym run --record`, the HTML report and index, GIF and MP4, --verify."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from toolgym.envs.recording.html import write_report
from toolgym.envs.recording.log import read_run
from toolgym.envs.recording.replay import Divergence, verify_episode
from toolgym.envs.recording.video import run_frames

TOOLGYM = str(Path(sys.executable).parent / "toolgym")
TASK = "curated/plate-four-holes"


def toolgym(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLGYM, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="200"),
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """Two random episodes of three steps, recorded by `toolgym run --record`."""
    folder = tmp_path_factory.mktemp("replay") / "run"
    done = toolgym(
        "run",
        "--agent",
        "random",
        "--suite",
        "primitives",
        "--episodes",
        "2",
        "--max-steps",
        "3",
        "--record",
        str(folder),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    return folder


@pytest.fixture(scope="module")
def oracle_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("oracle") / "run"
    done = toolgym("run", "--agent", "oracle", "--task", TASK, "--record", str(folder))
    assert done.returncode == 0, done.stderr
    return folder


def test_run_record_writes_one_folder_per_episode(run_dir):
    episodes = read_run(run_dir)
    assert len(episodes) == 2
    for episode in episodes:
        assert len(episode.steps) == 3 and episode.problems == []
        assert episode.meta["env_kwargs"]["timings_in_info"] is True
        stages = {"exec", "tessellate", "verify", "render", "snapshot"}
        for step in episode.steps:
            timed = set(step["timings"])
            if step["error"]:  # it stops where it failed, then rolls back
                assert {"exec", "rollback"} <= timed <= {"exec", "tessellate", "verify", "rollback"}
            else:
                assert timed == stages
        assert episode.steps[0]["sandbox"]["duration_s"] > 0
        assert (episode.path / episode.steps[-1]["artifact"]).is_file()
    assert any(not step["error"] for e in episodes for step in e.steps)
    assert [e.meta["seed"] for e in episodes] == [0, 1]


def test_html_index_and_episode_pages(run_dir, tmp_path):
    out = tmp_path / "report.html"
    done = toolgym("replay", str(run_dir), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "2 episodes, 6 steps" in done.stdout
    index = out.read_text()
    links = re.findall(r"<a href='(report-episodes/[^']+\.html)'>", index)
    assert len(links) == 2 and index.count("<th data-sort>") == 7
    for link in links:
        page = (tmp_path / link).read_text()
        assert page.count("<section class='step'") == 3
        # The agent's and the target's views per step, and the start's beside step 1.
        assert page.count("<img ") == 7 and page.count("src='data:image/png;base64,") == 7
        assert page.count("<figcaption>agent</figcaption>") == 3 and "start (before step 1)" in page
        assert "id='step-total'>3<" in page and "href='../report.html'" in page
        assert "class='diff'" in page  # steps 2 and 3 against the one before
        assert not re.search(r"(src|href)=['\"]?(https?:)?//", page)  # nothing to fetch


def test_gif_and_mp4_frames_show_step_reward_and_score(run_dir, tmp_path):
    frames = run_frames(read_run(run_dir))
    assert len(frames) == 8  # per episode, the start and three steps
    assert len({f.shape for f in frames}) == 1
    assert (frames[0][:28] < 100).any()  # the caption's text
    gif, mp4 = tmp_path / "run.gif", tmp_path / "run.mp4"
    done = toolgym("replay", str(run_dir), "--gif", str(gif), "--mp4", str(mp4))
    assert done.returncode == 0, done.stderr
    with Image.open(gif) as image:
        assert image.n_frames == 8
        image.seek(1)
        decoded = np.asarray(image.convert("RGB")).astype(int)
        assert np.abs(decoded - frames[1]).mean() < 4  # a GIF's palette shifts colours a little
    import imageio_ffmpeg

    assert imageio_ffmpeg.count_frames_and_secs(str(mp4))[0] == 8


@pytest.mark.slow
def test_a_one_step_episode_animates_from_its_start_with_labelled_panels(oracle_dir):
    from toolgym.envs.recording.video import CAPTION_HEIGHT
    from toolgym.renderers.labels import CAPTION_HEIGHT as PANEL_CAPTION

    start, step = run_frames(read_run(oracle_dir))
    panels = [f[CAPTION_HEIGHT:] for f in (start, step)]
    # Scaled 2x: the "agent" and "target" captions over the panels, then two 128 px tiles.
    top, side = 2 * PANEL_CAPTION, (panels[0].shape[1] - 2) // 2  # a 2 px divider between
    agent = [p[top:, :side] for p in panels]
    target = [p[top:, side + 2 :] for p in panels]
    assert not np.array_equal(agent[0], agent[1])  # nothing built at the start; the part after
    assert np.array_equal(target[0], target[1])  # the same target throughout
    assert np.array_equal(agent[1], target[1])  # the oracle built the target
    ink = panels[0][:top] < 100  # the captions' text over each panel
    assert ink[:, : side // 2].any() and ink[:, side + 2 : side + 2 + side // 2].any()
    for frame in (start, step):  # the view names: ink in each view's corner
        views = frame[CAPTION_HEIGHT + top :, :side]
        half = views.shape[0] // 2
        for y, x in ((0, 0), (0, half), (half, 0), (half, half)):
            assert (views[y + 2 : y + 20, x + 2 : x + 40] < 100).any()


def test_verify_passes_and_finds_a_tampered_reward(oracle_dir, tmp_path):
    (episode,) = read_run(oracle_dir)
    assert episode.outcome == "passed" and len(episode.steps) == 1
    assert verify_episode(episode) is None
    done = toolgym("replay", str(oracle_dir), "--verify")
    assert done.returncode == 0 and "1 steps reproduce" in done.stdout
    tampered = tmp_path / "run"
    shutil.copytree(oracle_dir, tampered)
    (folder,) = tampered.iterdir()
    log = folder / "episode.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    recorded = lines[1]["reward"]
    lines[1]["reward"] = 0.5
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (changed,) = read_run(tampered)
    divergence = verify_episode(changed)
    assert divergence == Divergence(folder.name, 1, "reward", 0.5, pytest.approx(recorded))
    done = toolgym("replay", str(tampered), "--verify")
    assert done.returncode == 1
    assert f"diverged {folder.name}: step 1, reward: recorded 0.5, now " in done.stdout


def test_a_cut_recording_still_replays_with_a_message(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    first = sorted(copy.iterdir())[0]
    log = first / "episode.jsonl"
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - 100])  # the last line loses its end
    (first / "meta.json").write_text("{")
    out = tmp_path / "report.html"
    done = toolgym("replay", str(copy), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert f"{log} line 4: cut off mid-line" in done.stderr.replace("\n", "")
    assert f"{first / 'meta.json'}: unreadable" in done.stderr.replace("\n", "")
    page = (out.parent / "report-episodes" / f"{first.name}.html").read_text()
    assert page.count("<section class='step'") == 2 and "Problems reading this recording" in page


def test_replay_of_a_folder_without_recordings_fails_clearly(tmp_path):
    done = toolgym("replay", str(tmp_path))
    assert done.returncode == 2
    assert f"{tmp_path}: no recorded episodes" in done.stderr.replace("\n", "")


def test_report_of_one_episode_is_the_episode_page(oracle_dir, tmp_path):
    written = write_report(read_run(oracle_dir), tmp_path / "one.html")
    assert written == [tmp_path / "one.html"]
    assert "id='step-total'>1<" in written[0].read_text()


def test_verify_names_an_env_it_cannot_make(oracle_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(oracle_dir, copy)
    (folder,) = copy.iterdir()
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "env_id": "toolgym/Nope-v0"}))
    done = toolgym("replay", str(copy), "--verify")
    assert done.returncode == 2
    assert "Nope" in done.stderr and "Traceback" not in done.stderr
