"""What a new user meets in the first hour: Ctrl-C, checked options, messages, progress."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TOOLGYM = str(Path(sys.executable).with_name("toolgym"))
DEMO_SUITE = str(Path(__file__).resolve().parents[1] / "assets/cadquery/demo/first-tools.toml")


def interrupt(args: list[str], marker: str, cwd: Path, timeout: float = 600) -> tuple[int, str]:
    """Run ``toolgym ARGS`` in a pseudo-terminal, press Ctrl-C once ``marker`` is printed, and
    return the exit code and everything printed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal's foreground process, Ctrl-C raising KeyboardInterrupt
        os.chdir(cwd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(TOOLGYM, [TOOLGYM, *args], {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
    output, sent = b"", False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        if not sent and marker in ANSI.sub("", output.decode("utf-8", "replace")):
            os.write(fd, b"\x03")
            sent = True
    else:
        os.kill(pid, signal.SIGKILL)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    text = ANSI.sub("", output.decode("utf-8", "replace").replace("\r\n", "\n"))
    assert sent, f"{marker!r} never appeared:\n{text}"
    return os.waitstatus_to_exitcode(status), text


def test_ctrl_c_during_run_prints_the_finished_episodes(tmp_path: Path) -> None:
    code, text = interrupt(
        ["run", "--agent", "oracle", "--suite", "curated", "--episodes", "6", "--json"],
        '"task": ',
        tmp_path,
    )
    assert code == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    finished = text.count('"task": ')
    assert 1 <= finished < 6
    assert f"interrupted after {finished} finished episode" in text, text


def test_ctrl_c_during_train_says_how_to_resume(tmp_path: Path) -> None:
    args = [
        "train",
        "--suite",
        DEMO_SUITE,
        "--steps",
        "160",
        "--num-steps",
        "8",
        "--max-steps",
        "1",
        "--out",
        "run",
        "--no-resume",
    ]
    # The workers are running once PPO starts: each also receives the terminal's SIGINT.
    code, text = interrupt(args, "PPO: 10 iterations", tmp_path)
    assert code == 130, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    resume = [line for line in text.splitlines() if "resume with" in line]
    assert len(resume) == 1, text
    assert resume[0].endswith(
        f"toolgym train --suite {DEMO_SUITE} --steps 160 --num-steps 8 --max-steps 1 --out run"
    ), resume


def toolgym(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLGYM, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )


SEED = "Invalid value for '--seed': Input should be greater than or equal to 0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--task", "curated/disc", "--seed", "-5"), SEED),
        (("train", "--seed", "-1"), SEED),
        (("show", "curated/plate-four-hole"), "did you mean curated/plate-four-holes"),
        (("run", "--task", "curated/disk"), "did you mean curated/disc"),
        (("tasks", "curatd"), "did you mean curated?"),
        (("train", "--out", "README.md"), "--out README.md is a file; give a folder for the run"),
        (("eval", "--checkpoint", "tests"), "--checkpoint tests is a folder without"),
        (("run", "--action-mode", "banana", "--task", "curated/disc"), "got 'banana'\n"),
        (("replay", "README.md"), "README.md is a file; give the folder written by --record"),
    ],
)
def test_a_users_mistake_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    done = toolgym(*args, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2, done.stderr
    assert message.strip() in " ".join(done.stderr.split()), done.stderr
    assert not message.endswith("\n") or done.stderr.endswith(message), done.stderr
    assert "Traceback" not in done.stderr and not done.stdout.strip()


def test_a_file_that_is_not_a_checkpoint_says_so(tmp_path: Path) -> None:
    empty, garbage, other = tmp_path / "empty.pt", tmp_path / "garbage.pt", tmp_path / "other.pt"
    empty.write_bytes(b"")
    garbage.write_bytes(bytes(range(256)) * 4)
    import torch

    torch.save({"weights": torch.zeros(3)}, other)  # a torch file, not the trainer's
    from toolgym.agents.trainer.checkpoints import read_checkpoint

    for path in (empty, garbage, other):
        with pytest.raises(ValueError, match=f"{path}: not a toolgym checkpoint"):
            read_checkpoint(path, "cpu")
    done = toolgym("eval", "--checkpoint", str(garbage))  # as the user sees it
    assert done.returncode == 2, done.stderr
    assert f"{garbage}: not a toolgym checkpoint" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_cuda_that_is_not_usable_is_one_line(tmp_path: Path) -> None:
    import torch

    try:
        torch.zeros(1, device="cuda")
        pytest.skip("CUDA works on this machine")
    except (RuntimeError, AssertionError):
        pass
    done = toolgym("train", "--device", "cuda", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "CUDA not usable here" in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith("use --device cpu") and "Traceback" not in done.stderr


def test_tools_lists_each_parameters_range_unit_and_default() -> None:
    cad = " ".join(toolgym("tools").stdout.split())
    assert "length 0.1..500 mm" in cad and "x? -500..500 mm [0]" in cad and "axis? X|Y|Z [Z]" in cad
    scene = " ".join(toolgym("tools", "--env", "toolgym/GameScene-v0").stdout.split())
    assert "count 1..20 whole" in scene


@pytest.mark.parametrize(
    "env_id", ["toolgym/CadQuery-v0", "toolgym/Blender-v0", "toolgym/GameScene-v0"]
)
def test_random_values_have_each_parameters_type_and_grid(env_id: str) -> None:
    from toolgym.agents.baselines import RandomAgent
    from toolgym.envs.domains import domain_of_env
    from toolgym.envs.tools import ToolCallError

    registry = domain_of_env(env_id).registry()
    grammar = registry.grammar()
    agent = RandomAgent(registry, "tool", seed=3)
    for _ in range(400):
        call = json.loads(agent.act({"prompt": "Move the Crate"}))
        try:
            registry.parse_call(call)  # each value in its range, of its kind
        except ToolCallError as exc:  # only a check across parameters may fail
            across = registry.tools[call["name"]].check is not None  # a hole has no length
            assert across or (call["name"] == "set_modifier" and "out of range" in str(exc)), exc
        for name, value in call["arguments"].items():
            spec = grammar[call["name"]]["params"][name]
            if spec["kind"] == "integer":
                assert type(value) is int, (call, name)
            elif spec["kind"] == "number" and spec["step"]:
                steps = value / spec["step"]
                on_grid = abs(steps - round(steps)) < 1e-6
                assert on_grid or value in (spec["min"], spec["max"]), (call, name)
    # Blender's set_modifier takes whole numbers for count and segments (a value step of 1).
    assert (
        grammar.get("set_modifier", {"params": {"value": {"step": 1.0}}})["params"]["value"]["step"]
        == 1.0
    )


def test_the_random_agent_writes_game_scene_scripts_that_run() -> None:
    import gymnasium as gym

    import toolgym  # noqa: F401
    from toolgym.agents.runner import make_agent

    env = gym.make("toolgym/GameScene-v0", max_steps=8)
    try:
        agent = make_agent("random", env, 0)
        observation, _ = env.reset(seed=0, options={"task": "scene-curated/dining-four"})
        errors = []
        for _ in range(8):
            observation, _, terminated, truncated, info = env.step(agent.act(observation))
            errors.append(str(info.get("error", "")))
            if terminated or truncated:
                break
    finally:
        env.close()
    assert not any("missing a required argument" in e for e in errors), errors
    assert errors.count("") >= 3, errors  # most calls of the random agent run (spawn always)


@pytest.mark.slow
def test_two_runs_into_one_folder_keep_both_renders(tmp_path: Path) -> None:
    out = tmp_path / "renders"
    for _ in range(2):
        done = toolgym("run", "--agent", "oracle", "--task", "curated/disc", "--out", str(out))
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "000-curated_disc-2.png",
        "000-curated_disc.png",
    ]


@pytest.mark.slow
def test_a_checkpoint_evaluates_from_any_folder(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    run = tmp_path / "run"
    trained = toolgym(
        "train",
        "--suite",
        "assets/cadquery/demo/first-tools.toml",
        "--steps",
        "4",
        "--num-steps",
        "4",
        "--max-steps",
        "1",
        "--num-envs",
        "1",
        "--out",
        str(run),
        cwd=repo,
    )
    assert trained.returncode == 0, trained.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    scored = toolgym(
        "eval",
        "--checkpoint",
        "../run",
        "--split",
        "train",
        "--episodes",
        "1",
        "--json",
        cwd=elsewhere,
    )
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["episodes"] == 1


def test_plot_draws_a_runs_progress(tmp_path: Path) -> None:
    from toolgym.agents.trainer.logs import CSV_FIELDS

    run = tmp_path / "run"
    run.mkdir()
    rows = [",".join(CSV_FIELDS)]
    for k in range(1, 6):
        values = {field: 0.1 * k for field in CSV_FIELDS}
        values.update(iteration=k, env_steps=16 * k, score=0.2 * k, success_rate="nan")
        rows.append(",".join(str(values[field]) for field in CSV_FIELDS))
    (run / "progress.csv").write_text("\n".join(rows) + "\n")
    done = toolgym("plot", str(run))
    assert done.returncode == 0, done.stderr
    assert f"5 iterations: {run / 'progress.png'}" in done.stdout
    from PIL import Image

    with Image.open(run / "progress.png") as image:
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.shape[1] >= 800 and (pixels < 100).any() and (pixels == 255).any()
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = toolgym("plot", str(empty))
    assert missing.returncode == 2 and "no progress.csv in it" in missing.stderr


@pytest.mark.slow
def test_drawn_tasks_are_distinct_until_the_suite_is_used_up(tmp_path: Path) -> None:
    suite = tmp_path / "two.toml"
    suite.write_text(
        '[suite]\nname = "two"\ndomain = "cadquery"\n\n'
        '[[task]]\nname = "cube"\nprompt = "A 10 mm cube."\ndifficulty = 1\n'
        'reference = "result = cq.Workplane().box(10, 10, 10)"\n\n'
        '[[task]]\nname = "slab"\nprompt = "A 20 x 20 x 2 mm slab."\ndifficulty = 1\n'
        'reference = "result = cq.Workplane().box(20, 20, 2)"\n'
    )
    done = toolgym(
        "run",
        "--agent",
        "oracle",
        "--suite",
        str(suite),
        "--episodes",
        "4",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    drawn = [json.loads(line)["task"] for line in done.stdout.splitlines()]
    assert sorted(drawn[:2]) == sorted(drawn[2:]) == ["two/cube", "two/slab"]


def test_the_agents_trigger_zones_are_drawn_as_the_targets_are() -> None:
    import gymnasium as gym

    import toolgym  # noqa: F401

    def zone(image: np.ndarray) -> np.ndarray:  # the trigger colour, in the top view (right)
        top = image[:, image.shape[1] // 2 :].astype(int)
        return (top[..., 0] > 200) & (top[..., 1] < 140) & (top[..., 2] < 60)

    env = gym.make("toolgym/GameScene-v0", action_mode="tool", max_steps=3)
    try:
        observation, _ = env.reset(seed=0, options={"task": "scene-curated/door-zone-centre"})
        assert not zone(observation["image"]).any() and zone(observation["target"]).any()
        call = {
            "name": "add_trigger",
            "arguments": {"name": "zone_1", "x": 0, "y": 0, "size_x": 1.5, "size_y": 1.5},
        }
        observation, *_ = env.step(json.dumps(call))
    finally:
        env.close()
    # The same zone where the target has it: the same pixels in the top views.
    assert np.array_equal(zone(observation["image"]), zone(observation["target"]))


def test_a_cut_that_misses_the_part_says_where_the_part_is() -> None:
    import gymnasium as gym

    import toolgym  # noqa: F401

    env = gym.make("toolgym/CadQuery-v0", action_mode="tool", max_steps=4)
    try:
        env.reset(seed=0, options={"task": "curated/plate-four-holes"})
        plate = {"name": "add_box", "arguments": {"length": 60, "width": 40, "height": 6}}
        env.step(json.dumps(plate))
        miss = {"name": "cut_hole", "arguments": {"diameter": 5, "x": 400}}
        observation, reward, *_, info = env.step(json.dumps(miss))
    finally:
        env.close()
    expected = (
        "cut_hole: the hole at (400, 0) misses the part, which spans x -30..30, y -20..20, "
        "z -3..3 mm; nothing was cut"
    )
    assert info["error"] == expected and expected in observation["feedback"]
    assert reward < 0
