"""References built once per machine: the on-disk cache (``toolgym.envs.episode.cache``) is shared
by processes, rebuilt when broken, hidden from the sandbox, and changes no observation or reward."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery import artifacts, verification
from toolgym.envs.episode import cache
from toolgym.envs.sandbox import Session
from toolgym.envs.tasks.suites import get_suite, get_task

TASK = get_suite("primitives").split("train")[0]


class CountedSession(Session):
    """A real session that counts how many were started."""

    started = 0

    def __init__(self, *args, **kwargs) -> None:
        CountedSession.started += 1
        super().__init__(*args, **kwargs)


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    """An empty cache, no reference in this process yet, and sandbox sessions counted."""
    monkeypatch.setenv("TOOLGYM_CACHE_DIR", str(tmp_path))
    forget_references(monkeypatch)
    monkeypatch.setattr(verification, "Session", CountedSession)
    monkeypatch.setattr(artifacts, "Session", CountedSession)
    CountedSession.started = 0
    return tmp_path


def forget_references(monkeypatch) -> None:
    """What a new process knows: no reference built (the disk cache stays)."""
    monkeypatch.setattr(verification, "_references", {})
    monkeypatch.setattr(verification, "_step_references", {})


def arrays(part) -> list:
    return [part.mesh.vertices, part.mesh.faces, part.features, part.brep, part.tolerance]


def assert_same_part(a, b) -> None:
    for x, y in zip(arrays(a), arrays(b), strict=True):
        assert np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y


def test_another_process_loads_the_reference_without_a_sandbox(cache_folder):
    reference = verification.reference_part(TASK)
    step = verification.step_reference(TASK, reference)
    assert CountedSession.started == 3  # build, measure, step mesh
    assert len(list(cache_folder.glob("*.npz"))) == 2

    # Another process, where starting any sandbox session fails: both come from the disk.
    script = f"""
import json, sys
from toolgym.envs.sandbox import client
def refuse(*args, **kwargs):
    raise SystemExit("a sandbox session was started")
client.Session.__init__ = refuse
from toolgym.envs.cadquery import verification
from toolgym.envs.tasks.suites import get_task
task = get_task({TASK.id!r})
reference = verification.reference_part(task)
step = verification.step_reference(task, reference)
json.dump([reference.mesh.vertices.tolist(), step.mesh.faces.tolist(), len(reference.brep),
           reference.tolerance, step.tolerance], sys.stdout)
"""
    env = {**os.environ, "TOOLGYM_CACHE_DIR": str(cache_folder)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    vertices, faces, brep_bytes, tolerance, step_tolerance = json.loads(done.stdout)
    assert np.array_equal(vertices, reference.mesh.vertices)
    assert np.array_equal(faces, step.mesh.faces)
    assert (brep_bytes, tolerance, step_tolerance) == (
        len(reference.brep),
        reference.tolerance,
        step.tolerance,
    )


def test_a_corrupt_or_foreign_entry_is_rebuilt_without_error(cache_folder, monkeypatch):
    reference = verification.reference_part(TASK)
    step = verification.step_reference(TASK, reference)
    first, second = sorted(cache_folder.glob("*.npz"))
    first.write_bytes(first.read_bytes()[: first.stat().st_size // 2])  # cut short
    np.savez(second, vertices=np.zeros((3, 2)))  # readable, but not a part
    forget_references(monkeypatch)
    CountedSession.started = 0

    again = verification.reference_part(TASK)
    assert_same_part(again, reference)
    assert_same_part(verification.step_reference(TASK, again), step)
    assert CountedSession.started == 3  # both rebuilt
    for path in (first, second):  # and stored again, whole
        with np.load(path, allow_pickle=False) as data:
            assert {"vertices", "faces", "tolerance"} <= set(data.files)


def test_warm_cache_episode_equals_cold_cache_episode(cache_folder, monkeypatch):
    """Same seed, same observations, rewards and final report (exact tier: the cached BREP
    cross-checks the candidate), whether the references were built or loaded."""

    def episode():
        env = gym.make(
            "toolgym/CadQuery-v0", suite="primitives", action_mode="tool", max_steps=2, view_size=32
        )
        try:
            obs, _ = env.reset(seed=5)
            task = env.unwrapped.task
            trace = [obs]
            for call in task.tool_calls[:2]:
                obs, reward, terminated, truncated, info = env.step(call)
                trace += [obs, reward, terminated, truncated, info.get("final_report")]
            return task.id, trace
        finally:
            env.close()

    cold = episode()
    built = CountedSession.started
    forget_references(monkeypatch)
    CountedSession.started = 0
    warm = episode()
    assert built > 0 and CountedSession.started < built  # the references were not built again
    assert cold[0] == warm[0]
    for a, b in zip(cold[1], warm[1], strict=True):
        if isinstance(a, dict) and "image" in a:
            for name in a:
                assert np.array_equal(a[name], b[name]), name
        else:
            assert a == b


def test_the_cache_is_off_or_unwritten_where_a_session_could_see_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLGYM_CACHE_DIR", str(tmp_path / "cache"))
    layers = ["pidns", "netns", "mountns", "uid", "rlimits", "env"]
    with Session("cadquery") as session:
        assert cache.hidden_from(session.allowed_paths, session.layers)
    assert not cache.hidden_from([str(tmp_path)], layers)  # an allowed folder holds it
    assert not cache.hidden_from([str(tmp_path / "cache" / "x")], layers)
    assert not cache.hidden_from([], [x for x in layers if x != "mountns"])  # sees every file
    monkeypatch.setenv("TOOLGYM_CACHE_DIR", "off")
    assert cache.cache_dir() is None and not cache.store("k", {"a": np.zeros(1)})


def test_the_cache_keeps_under_its_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLGYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TOOLGYM_CACHE_MAX_MB", str(3 * 8 * 1000 / 2**20))  # about 3 entries
    for i in range(6):
        assert cache.store(f"entry-{i}", {"a": np.full(1000, i, dtype=np.float64)})
        os.utime(tmp_path / f"entry-{i}.npz", (i, i))  # oldest first, whatever the clock
    left = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert 1 <= len(left) <= 3 and "entry-5.npz" in left
    assert cache.load("entry-5")["a"][0] == 5


BLENDER_TASK = "blender-moves/move/test-2"
BLENDER_GOAL = f"""
import json, sys
from toolgym.envs.sandbox import client
def refuse(*args, **kwargs):
    raise SystemExit("a sandbox session was started")
client.Session.__init__ = refuse
from toolgym.envs.blender.verification import SceneReader
from toolgym.envs.tasks.suites import get_task
json.dump(summary(SceneReader(32).target(get_task({BLENDER_TASK!r}))), sys.stdout)
"""


def summary(target) -> list:
    """What a Blender goal is: its views, state and ``.blend`` (hashed), framing and prompt."""
    import hashlib

    from toolgym.envs.sandbox import protocol

    digest = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    return [
        digest(target.image.tobytes()),
        digest(protocol.pack({"s": target.goal.state})),
        digest(target.blend),
        list(target.framing.center),
        target.framing.half_width,
        target.prompt,
        target.goal.size,
    ]


def test_a_blender_goal_is_cached_on_disk_and_rebuilt_when_broken(cache_folder, monkeypatch):
    """The goal (state, views, framing) of a Blender task: built and stored by this process;
    another, where starting a sandbox session fails, loads the very same goal; an entry cut
    short is removed, rebuilt to the same goal and stored whole again."""
    from toolgym.envs.blender import verification as blender

    monkeypatch.setattr(blender, "Session", CountedSession)
    task = get_task(BLENDER_TASK)

    def goal() -> list:
        reader = blender.SceneReader(32)
        try:
            return summary(reader.target(task))
        finally:
            reader.close()

    built = goal()
    assert CountedSession.started == 2  # the programs' session and the trusted reader's
    (entry,) = cache_folder.glob("blender-target-*.npz")
    source = "import sys; sys.path.insert(0, {!r}); from test_reference_cache import summary\n"
    done = subprocess.run(
        [sys.executable, "-c", source.format(os.path.dirname(__file__)) + BLENDER_GOAL],
        env={**os.environ, "TOOLGYM_CACHE_DIR": str(cache_folder)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == built
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])  # cut short
    CountedSession.started = 0
    rebuilt = goal()
    assert CountedSession.started == 2  # built again
    assert rebuilt[:2] + rebuilt[3:] == built[:2] + built[3:]  # (a .blend differs each save)
    with np.load(entry, allow_pickle=False) as data:  # and stored whole
        assert {"state", "framing", "image", "blend"} <= set(data.files)


SCENE_TASK = "scene-layout/dining/test-0"
SCENE_REFERENCE = f"""
import json, sys
from toolgym.envs.sandbox import client
def refuse(*args, **kwargs):
    raise SystemExit("a sandbox session was started")
client.Session.__init__ = refuse
from toolgym.envs.scene.verification import reference_scene
from toolgym.envs.tasks.suites import get_task
json.dump(reference_scene(get_task({SCENE_TASK!r})), sys.stdout)
"""


def test_a_scene_reference_is_cached_on_disk_and_rebuilt_when_broken(cache_folder, monkeypatch):
    """As a Blender goal: another process loads the scene this one built; a broken entry is
    rebuilt to the same scene (plain lists and numbers either way)."""
    from toolgym.envs.scene import verification as scene

    monkeypatch.setattr(scene, "Session", CountedSession)
    monkeypatch.setattr(scene, "_references", {})
    task = get_task(SCENE_TASK)
    built = scene.reference_scene(task)
    assert CountedSession.started == 1
    (entry,) = cache_folder.glob("scene-reference-*.npz")
    done = subprocess.run(
        [sys.executable, "-c", SCENE_REFERENCE],
        capture_output=True,
        env={**os.environ, "TOOLGYM_CACHE_DIR": str(cache_folder)},
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == built and built["objects"]
    np.savez(entry, scene=np.zeros(3, np.float64))  # readable, but not a scene
    monkeypatch.setattr(scene, "_references", {})
    CountedSession.started = 0
    assert scene.reference_scene(task) == built
    assert CountedSession.started == 1  # built again, and stored again
    assert cache.load(entry.stem)["scene"].dtype == np.uint8
