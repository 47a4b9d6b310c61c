"""Task files: valid ones load; broken ones name the file, the task and the field."""

from __future__ import annotations

import pytest

from toolgym.envs.tasks.model import TaskFileError, load_task_file
from toolgym.envs.tasks.suites import get_suite, get_task, suites

GOOD = """
[suite]
name = "mine"
domain = "cadquery"

[[task]]
name = "cube"
prompt = "A 10 mm cube centred on the origin."
difficulty = 1
parameters = { size = 10 }
reference = "result = cq.Workplane().box(10, 10, 10)"
"""


def write(tmp_path, text: str):
    path = tmp_path / "suite.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_loads_with_defaults(tmp_path):
    suite = load_task_file(write(tmp_path, GOOD))
    (task,) = suite.tasks
    assert task.id == "mine/cube" and task.split == "train" and task.difficulty == 1
    assert task.verification.thresholds == {"iou": 0.95} and task.verification.alignment == "none"
    assert task.parameters == {"size": 10} and task.reference.endswith("\n")


BROKEN = {
    "not TOML": ("[suite\nname=", "not valid TOML"),
    "missing prompt": (
        GOOD.replace('prompt = "A 10 mm cube centred on the origin."\n', ""),
        "'prompt': missing",
    ),
    "difficulty out of range": (
        GOOD.replace("difficulty = 1", "difficulty = 9"),
        "'difficulty': expected one of",
    ),
    "difficulty wrong type": (
        GOOD.replace("difficulty = 1", 'difficulty = "easy"'),
        "'difficulty': expected int",
    ),
    "boolean as int": (
        GOOD.replace("difficulty = 1", "difficulty = true"),
        "'difficulty': expected int",
    ),
    "unknown field": (
        GOOD.replace("difficulty = 1", "difficulty = 1\ncolour = 'red'"),
        "unknown field(s) ['colour']",
    ),
    "bad split": (
        GOOD.replace("difficulty = 1", 'difficulty = 1\nsplit = "val"'),
        "'split': expected one of",
    ),
    "bad domain": (
        GOOD.replace('domain = "cadquery"', 'domain = "maya"'),
        "'domain': expected one of",
    ),
    "no tasks": (GOOD.split("[[task]]")[0], "at least one [[task]]"),
    "empty reference": (
        GOOD.replace('reference = "result = cq.Workplane().box(10, 10, 10)"', 'reference = " "'),
        "'reference': must not be empty",
    ),
    "bad threshold": (
        GOOD + "[task.verification]\nthresholds = { iou = -1 }\n",
        "'thresholds': 'iou' must be a non-negative number",
    ),
    "bad weight": (
        GOOD + "[task.verification]\nweights = { colour = 1 }\n",
        "'weights': unknown key 'colour'",
    ),
    "unknown family": (
        GOOD.replace("difficulty = 1", 'difficulty = 1\nfamily = "gearbox"'),
        "'family': expected one of ['primitive'",
    ),
    "family of another tool": (
        GOOD.replace('domain = "cadquery"', 'domain = "scene"').replace(
            "difficulty = 1", 'difficulty = 1\nfamily = "primitive"'
        ),
        "'family': expected one of ['",
    ),
    "duplicate": (GOOD + GOOD.split("\n", 4)[4].replace("[suite]", ""), "appears twice"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_files_name_the_file_and_field(tmp_path, name):
    text, message = BROKEN[name]
    path = write(tmp_path, text)
    with pytest.raises(TaskFileError) as caught:
        load_task_file(path)
    assert str(path) in str(caught.value) and message in str(caught.value), str(caught.value)


def test_missing_file(tmp_path):
    with pytest.raises(TaskFileError, match="no such file"):
        load_task_file(tmp_path / "absent.toml")


def test_shipped_suites():
    found = suites()
    assert len(found["curated"].tasks) >= 50 and found["curated"].split("test")
    primitives = found["primitives"].tasks
    assert {t.difficulty for t in primitives} == {1} and len(primitives) >= 200
    assert {t.family for t in found["procedural"].tasks} >= {"primitive", "flange", "bent_tube"}
    assert len({t.family for t in found["procedural"].tasks}) >= 10
    assert get_task("procedural/flange/test-12").seed == 12  # any seed, not only the listed ones
    with pytest.raises(KeyError, match="unknown task"):
        get_task("curated/no-such-part")
    with pytest.raises(KeyError, match="unknown suite"):
        get_suite("everything")


def test_a_task_files_family_gives_its_views_the_familys_fixed_frame(tmp_path):
    """A file task naming its procedural family is seen through the family's fixed frame: its
    target views are the generated task's, pixel for pixel; without the family it is framed by
    its own size (a rung of the ladder) and looks different."""
    import json

    import gymnasium as gym
    import numpy as np

    generated = get_task("primitives/primitive/test-0")
    table = (
        f'[[task]]\nname = "copy"\nprompt = "p"\ndifficulty = 1\nsplit = "test"\n'
        f"reference = '''\n{generated.reference}'''\n"
        f"tool_calls = [{json.dumps(generated.tool_calls[0])}]\n"
    )
    head = '[suite]\nname = "framed"\ndomain = "cadquery"\n'
    framed = write(tmp_path, head + table + 'family = "primitive"\n')
    assert load_task_file(framed).tasks[0].family == "primitive"
    plain = tmp_path / "plain.toml"
    plain.write_text(head.replace("framed", "plain") + table, encoding="utf-8")

    def target(suite: str, task: str) -> np.ndarray:
        env = gym.make("toolgym/CadQuery-v0", suite=suite, view_size=32, split="test")
        try:
            return env.reset(seed=0, options={"task": task})[0]["target"]
        finally:
            env.close()

    reference = target("primitives", generated.id)
    assert np.array_equal(target(str(framed), "framed/copy"), reference)
    assert not np.array_equal(target(str(plain), "plain/copy"), reference)
