"""Rewards that cannot be faked: only the saved scene, read by a process that ran no agent code,
is scored; what a script does to its own Blender is contained."""

from __future__ import annotations

import gymnasium as gym
import pytest

import toolgym  # noqa: F401 - registers the environment
from toolgym.envs.blender.verification import SceneReader
from toolgym.envs.sandbox import Limits, Session

TASK = "blender-placement/two-crates"  # Crate to (1.5, 0.5, 0.5) turned 30°, Box to (-1, -1, 0.5)
SOLVE_CRATE = "tools.set_location('Crate', 1.5, 0.5, 0.5)\ntools.set_rotation('Crate', 0, 0, 30)"
SOLVE_BOX = "tools.set_location('Box', -1, -1, 0.5)\ntools.set_rotation('Box', 0, 0, 45)"
# What the goal wants, as a forged state would claim it.
FORGED = """
import numpy as np
def forged(*args, **kwargs):
    box = np.zeros((8, 3))
    place = lambda x, y, deg: {"type": "MESH", "parent": None, "location": [x, y, 0.5],
        "rotation": [np.cos(np.radians(deg) / 2), 0, 0, np.sin(np.radians(deg) / 2)],
        "scale": [1.0, 1.0, 1.0], "modifiers": [], "materials": [], "shape_keys": {},
        "vertices": box, "faces": np.zeros((0, 3), np.int32)}
    return {"objects": {"Crate": place(1.5, 0.5, 30), "Box": place(-1.0, -1.0, 45)}}
"""
# A text block registered to run when the file loads, and a Python driver: either would move
# Crate in a process that runs them. The driver's value is 0 in the agent's process (its file has
# no path yet) and the length of the path where the file was opened.
TEXT_BLOCK = """
text = bpy.data.texts.new("goal.py")
text.use_module = True
text.write("import bpy\\nc = bpy.data.objects['Crate']\\n")
text.write("c.location = (1.5, 0.5, 0.5)\\nc.rotation_euler.z = 0.5236\\n")
"""
DRIVER = """
fcurve = bpy.data.objects["Crate"].driver_add("location", 0)
fcurve.driver.type = "SCRIPTED"
fcurve.driver.expression = "len(bpy.data.filepath)"
"""
# The positive control: the same file opened with Python auto-execution on.
REOPEN_WITH_SCRIPTS = """
import os
path = os.path.join(os.getcwd(), "check.blend")
bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
bpy.context.preferences.filepaths.use_scripts_auto_execute = True
bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=True)
crate = bpy.data.objects["Crate"].evaluated_get(bpy.context.evaluated_depsgraph_get())
x = crate.matrix_world.translation.x
"""


@pytest.fixture(scope="module")
def env():
    # Ample time for a real step on a busy machine, finite for a script that never returns.
    # A script that never returns uses up its CPU time (5 s); the wall clock is ample.
    environment = gym.make(
        "toolgym/Blender-v0", task=TASK, max_steps=50, limits=Limits(wall_s=60, cpu_s=5)
    )
    yield environment
    environment.close()


def test_monkeypatched_extractor_gains_nothing(env):
    env.reset(seed=0)
    env.step("pass")
    start = env.unwrapped._score
    patch = FORGED + (
        "import toolgym.envs.blender.scene as scene, toolgym.envs.blender.backend as backend\n"
        "scene.scene_state = forged\n"
        "backend.extract_request = forged\n"
        "backend.BlenderBackend.requests = lambda self: {'extract': forged}\n"
    )
    _, reward, terminated, _, info = env.step(patch)
    assert "error" not in info and reward == 0.0 and not terminated
    assert env.unwrapped._score == start < 0.1
    assert "'Crate' is" in info["report"]["checks"]["object Crate"]["message"]


def test_monkeypatched_bpy_save_gains_nothing(env):
    env.reset(seed=0)
    env.step("pass")
    start = env.unwrapped._score
    forge_file = (
        "def fake_save(*args, filepath='', **kwargs):\n"
        "    open(filepath, 'wb').write(b'BLENDER-v500 not a scene')\n"
        "    return {'FINISHED'}\n"
        "import types\n"
        "bpy.ops = types.SimpleNamespace(wm=types.SimpleNamespace(save_as_mainfile=fake_save))\n"
    )
    _, reward, _, _, info = env.step(forge_file)
    assert reward == pytest.approx(-0.1) and "could not be read" in info["error"]
    assert env.unwrapped._score == start
    # The failed step was undone: the real save works again, and a real move is scored.
    _, reward, *_ = env.step(SOLVE_CRATE)
    assert reward > 0.2


@pytest.mark.parametrize(
    ("name", "script", "live_x"), [("text block", TEXT_BLOCK, 1.5), ("driver", DRIVER, None)]
)
def test_scripts_in_the_file_do_not_run_in_the_trusted_loader(name, script, live_x):
    reader = SceneReader()
    try:
        with Session("blender") as session:
            built = session.run("tools.add_primitive('cube', 'Crate', size=1.0)\n" + script)
            assert built.ok, built.feedback()
            scene, why = reader.save_and_read(session)
            assert scene is not None, why
            assert scene.state["objects"]["Crate"]["location"][0] == 0.0  # did not run
            control = session.run(REOPEN_WITH_SCRIPTS, fetch=["x"])
        assert control.ok, control.feedback()
        live = control.results["x"]  # with auto-execution on, the same file moves Crate
        assert live == live_x if live_x is not None else live > 10, (name, live)
    finally:
        reader.close()


def test_a_text_block_that_would_solve_the_task_scores_nothing(env):
    env.reset(seed=0)
    env.step("pass")
    _, reward, terminated, _, info = env.step(TEXT_BLOCK)
    assert "error" not in info and reward == 0.0 and not terminated


@pytest.mark.parametrize(
    ("name", "script"),
    [
        (
            # It spins without allocating: a handler that fills a list ends in a MemoryError,
            # which Blender catches and prints, and then the script goes on (which limit trips
            # first, memory or CPU, depends on the machine's speed).
            "looping depsgraph handler",
            "def spin(*args):\n    while True:\n        pass\n"
            "bpy.app.handlers.depsgraph_update_post.append(spin)\n"
            "bpy.data.objects['Crate'].location.x = 0.25\nbpy.context.evaluated_depsgraph_get()",
        ),
        ("exit from C", "import ctypes\nctypes.CDLL(None).exit(0)"),
        ("os._exit", "import os\nos._exit(0)"),
    ],
)
def test_scripts_that_never_return_or_quit_blender_are_contained(env, name, script):
    env.reset(seed=0)
    _, reward, *_ = env.step(SOLVE_BOX)
    assert reward > 0.2
    good = env.unwrapped._score
    _, reward, _, _, info = env.step(script)
    assert "error" in info and reward == pytest.approx(-0.1), (name, info.get("error"))
    assert env.unwrapped._score == good
    # The session is back at the last good step, without the handler: the episode goes on.
    _, reward, _, _, info = env.step(SOLVE_CRATE)
    assert "error" not in info and reward > 0.2, info.get("error")


def test_quit_blender_neither_ends_the_session_nor_scores(env):
    # As a module, Blender only asks its (absent) event loop to quit: the call returns, and the
    # worker lives on; a process that does exit is the test above.
    env.reset(seed=0)
    env.step("pass")
    _, reward, _, _, info = env.step("bpy.ops.wm.quit_blender()")
    assert "error" not in info and reward == 0.0
    _, reward, _, _, info = env.step(SOLVE_CRATE)
    assert "error" not in info and reward > 0.2


def test_handlers_do_not_run_in_the_environments_save(env):
    env.reset(seed=0)
    env.step("pass")
    # A handler that ran would spin to the CPU limit (one that filled a list would end in a
    # MemoryError that Blender prints, and the step would pass whether it ran or not).
    looping = "def spin(*args):\n    while True:\n        pass\n"
    looping += "bpy.app.handlers.save_pre.append(spin)"
    obs, reward, _, _, info = env.step(looping + "\nprint(len(bpy.app.handlers.save_pre))")
    assert "error" not in info and reward == 0.0 and obs["feedback"].startswith("stdout:\n1\n")
    # The handler is still registered, and each save still leaves it out.
    obs, reward, _, _, info = env.step(SOLVE_CRATE + "\nprint(len(bpy.app.handlers.save_pre))")
    assert "error" not in info and reward > 0.2 and obs["feedback"].startswith("stdout:\n1\n")


def test_save_as_mainfile_outside_the_workspace_is_contained(env, tmp_path):
    env.reset(seed=0)
    target = tmp_path / "escaped.blend"
    _, _, _, _, info = env.step(f"bpy.ops.wm.save_as_mainfile(filepath={str(target)!r})")
    assert not target.exists()  # the session cannot see this machine's files
    assert "error" in info  # the path does not exist in the session
    _, reward, _, _, info = env.step(SOLVE_CRATE)
    assert "error" not in info and reward > 0.2
