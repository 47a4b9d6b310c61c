"""RecordEpisodes on the real CadQuery environment: files, lines, vector envs, caps, errors."""

from __future__ import annotations

import functools
import json
import os
import platform
import warnings

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

import toolgym
from toolgym.agents.baselines import RandomAgent
from toolgym.envs import RecordEpisodes, recorded
from toolgym.envs.recording.log import read_episode, read_run
from toolgym.envs.recording.recorder import RecordingWarning

TASK = "curated/plate-four-holes"
BOX = "result = cq.Workplane().box(60, 40, 6)"


@pytest.fixture(scope="module")
def cad_env():
    env = gym.make("toolgym/CadQuery-v0", task=TASK, max_steps=3)
    yield env
    env.close()


def play(env: gym.Env, actions: list, seed: int = 0) -> list[tuple]:
    env.reset(seed=seed)
    results = []
    for action in actions:
        results.append(env.step(action))
        if results[-1][2] or results[-1][3]:
            break
    return results


def test_oracle_episode_is_recorded_in_full(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path)
    reference = cad_env.unwrapped.tasks[0].reference
    results = play(
        env, [f"print('building')\n{BOX}", "result = cq.Workplane().nosuch()", reference]
    )
    assert [r[2] for r in results] == [False, False, True]  # the reference passes at step 3
    (folder,) = tmp_path.iterdir()
    assert folder == env.episode_dir and folder.name.startswith("0000-curated_plate-four-holes-p")
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["env_id"] == "toolgym/CadQuery-v0"
    assert meta["env_kwargs"] == {"task": TASK, "max_steps": 3}
    assert meta["seed"] == 0 and meta["toolgym"] == toolgym.__version__
    assert meta["tool"]["name"] == "cadquery" and meta["tool"]["version"]
    assert meta["python"] == platform.python_version()
    lines = [json.loads(line) for line in (folder / "episode.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["reset", "step", "step", "step"]
    first, failed, last = lines[1:]
    assert first["task"] == TASK and first["prompt"].startswith("A 60 × 40 × 6 mm plate")
    assert first["action"].endswith(BOX) and first["step"] == 1
    assert first["sandbox"]["stdout"] == "building\n" and first["sandbox"]["ok"] is True
    assert first["reward"] == pytest.approx(results[0][1])
    assert set(first["report"]["metrics"]) >= {"iou", "chamfer", "deviation", "score"}
    assert failed["sandbox"]["error_kind"] == "exception" and failed["sandbox"]["limit"] == ""
    assert "AttributeError" in failed["sandbox"]["traceback"] and failed["error"]
    assert failed["reward"] == pytest.approx(-0.1)
    assert last["terminated"] is True and last["truncated"] is False
    assert last["final_report"]["tier"] == "exact" and last["final_report"]["passed"] is True
    assert (folder / last["artifact"]).read_bytes().startswith(b"ISO-10303-21")
    # Every view named exists and decodes to the observation's shape.
    for line in lines:
        for key in ("image", "target"):
            with Image.open(folder / line["images"][key]) as image:
                assert image.size == (128, 128)
    final_image = np.asarray(Image.open(folder / last["images"]["image"]))
    assert np.array_equal(final_image, results[-1][0]["image"])
    # A view that did not change is stored once: the target, and the part of the failed step.
    assert failed["images"]["image"] == first["images"]["image"]
    assert len(list((folder / "images").iterdir())) == 3  # empty, box, plate; target = plate


def test_random_episode_has_one_line_per_step(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path, artifacts="every")
    agent = RandomAgent(cad_env.unwrapped.registry, "code", seed=3)
    results = play(env, [agent.act({}) for _ in range(3)])
    episode = read_episode(env.episode_dir)
    assert len(episode.steps) == len(results) == 3 and episode.problems == []
    assert episode.steps[-1]["truncated"] is True and episode.outcome == "failed"
    for line in episode.steps[:-1]:  # every step's part, or why there is none
        assert line.get("artifact") or line.get("artifact_error")


def test_recording_inside_async_vector_env(tmp_path):
    make = recorded(
        functools.partial(gym.make, "toolgym/CadQuery-v0", task=TASK, max_steps=2), tmp_path
    )
    # forkserver: this process holds a live env (threads), which a fork may deadlock on.
    envs = gym.vector.AsyncVectorEnv([make, make], context="forkserver")
    try:
        envs.reset(seed=[5, 6])
        for _ in range(2):
            _, _, terminated, truncated, _ = envs.step([BOX, "result = cq.Workplane().nosuch()"])
        assert truncated.all() and not terminated.any()
    finally:
        envs.close()
    episodes = read_run(tmp_path)
    assert len(episodes) == 2
    assert {e.meta["seed"] for e in episodes} == {5, 6}
    assert len({e.meta["pid"] for e in episodes}) == 2  # one per worker process
    for episode in episodes:
        assert len(episode.steps) == 2 and episode.problems == []
        assert episode.steps[-1]["final_report"] is not None
    errors = sorted(bool(e.steps[0]["error"]) for e in episodes)
    assert errors == [False, True]


def test_fields_are_cut_at_the_field_cap(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path, max_field_chars=100)
    play(env, [f"print('x' * 500)\n{BOX}"])
    step = read_episode(env.episode_dir).steps[0]
    assert step["sandbox"]["stdout"] == "x" * 100 + "… [401 more characters cut by the recorder]"


def test_episode_cap_drops_parts_first_then_lines(cad_env, tmp_path):
    # Sizes in this episode: about 3 kB before the first part, 15.5 kB per STEP part, 2 kB per
    # view and 2.7 kB per step line, 4.3 kB for the last one: about 28 kB up to the second
    # step's line, 32.5 kB in all without the second and third parts.
    env = RecordEpisodes(cad_env, tmp_path / "a", max_episode_bytes=36_000, artifacts="every")
    with pytest.warns(RecordingWarning) as caught:
        play(env, [BOX, BOX, BOX])
    assert [str(w.message).endswith("are not written") for w in caught] == [True]
    episode = read_episode(env.episode_dir)
    assert [bool(s.get("artifact")) for s in episode.steps] == [True, False, False]
    assert episode.steps[1]["artifact_error"] == "dropped: over max_episode_bytes"
    assert episode.problems == [] and episode.outcome == "failed"
    # A smaller cap: the last line does not fit either, and the recording stops there.
    env = RecordEpisodes(cad_env, tmp_path / "b", max_episode_bytes=30_000, artifacts="every")
    with pytest.warns(RecordingWarning) as caught:
        play(env, [BOX, BOX, BOX])
    assert len(caught) == 2 and "stopped at max_episode_bytes=30000" in str(caught[1].message)
    (folder,) = (tmp_path / "b").iterdir()
    assert len(read_episode(folder).steps) == 2
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= 30_000


def test_run_cap_skips_episodes_beyond_it(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path, max_run_bytes=1)
    play(env, [BOX])  # the folder is empty at the first reset: recorded
    with pytest.warns(RecordingWarning, match="max_run_bytes=1"):
        play(env, [BOX])
    assert env.episode_dir is None and len(list(tmp_path.iterdir())) == 1


def test_unwritable_folder_warns_once_and_the_env_goes_on(cad_env, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = RecordEpisodes(cad_env, blocker / "run")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = play(env, [BOX])
        second = play(env, [BOX])
    messages = [str(w.message) for w in caught if w.category is RecordingWarning]
    assert len(messages) == 1 and "Not a directory" in messages[0]
    assert first[0][1] == pytest.approx(second[0][1]) and first[0][1] > 0


def test_full_disk_warns_once_and_the_env_goes_on(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path)
    env.reset(seed=0)
    log = env.episode_dir / "episode.jsonl"
    log.unlink()
    log.symlink_to("/dev/full")  # every write there fails with ENOSPC
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            _, reward, *_ = env.step(BOX)
    messages = [str(w.message) for w in caught if w.category is RecordingWarning]
    assert len(messages) == 1 and "No space left on device" in messages[0]
    assert reward == 0.0  # the second box changes nothing; the episode went on


def test_a_crash_mid_line_reads_up_to_the_step_before(cad_env, tmp_path):
    env = RecordEpisodes(cad_env, tmp_path)
    play(env, [BOX, "result = cq.Workplane().nosuch()", BOX])
    log = env.episode_dir / "episode.jsonl"
    data = log.read_bytes()
    cut = data[: data.rstrip(b"\n").rfind(b"\n") + 40]  # the last line, 39 bytes of it
    log.write_bytes(cut)
    episode = read_episode(env.episode_dir)
    assert [s["step"] for s in episode.steps] == [1, 2]
    assert episode.problems == [
        f"{log} line 4: cut off mid-line (the recording stopped there); skipped, the other "
        "lines replay"
    ]
    assert episode.outcome == "incomplete"
    # A damaged line in the middle: named, skipped, the lines after it still read.
    lines = data.splitlines(keepends=True)
    log.write_bytes(b"".join([lines[0], lines[1], b"{not json\n", lines[3]]))
    episode = read_episode(env.episode_dir)
    assert [s["step"] for s in episode.steps] == [1, 3]
    assert len(episode.problems) == 1 and episode.problems[0].startswith(f"{log} line 3: invalid")


def test_wrapper_arguments_are_checked(cad_env, tmp_path):
    with pytest.raises(ValueError, match="artifacts must be one of"):
        RecordEpisodes(cad_env, tmp_path, artifacts="some")
    with pytest.raises(ValueError, match="max_episode_bytes must be a positive integer"):
        RecordEpisodes(cad_env, tmp_path, max_episode_bytes=0)
    assert not os.listdir(tmp_path)
