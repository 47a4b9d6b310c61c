"""A wheel holds the task files: installed from it (not editable), every suite and env loads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("toolgym", "envs", "agents", "renderers", "verifiers", "assets")

CHECK = """
import json, gymnasium as gym, toolgym
from toolgym.envs.tasks import suites
from toolgym.agents.llm.nemo_gym import verifiers_taskset_dir
envs = {}
for env_id in toolgym.ENVIRONMENTS:
    env = gym.make(env_id)
    envs[env_id] = len(env.unwrapped.tasks)
    env.close()
print(json.dumps({"toolgym": toolgym.__file__, "assets": str(suites.ASSETS),
                  "suites": sorted(suites.suites()), "envs": envs,
                  "taskset": str(verifiers_taskset_dir() / "toolgym_verifiers.py")}))
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_wheel_ships_the_task_files_and_an_install_from_it_finds_them(tmp_path):
    source = tmp_path / "source"  # a copy: the build writes build/ and egg-info where it runs
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("toolgym-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "assets").rglob("*.toml"))
    assert shipped and all(f"toolgym/{p}" in names for p in shipped)
    assert "toolgym/assets/scene/catalogue.json" in names
    # every package is found, not listed: each source module ships under toolgym/
    modules = [p.relative_to(ROOT) for name in SOURCES for p in (ROOT / name).rglob("*.py")]
    installed = [("" if m.parts[0] == "toolgym" else "toolgym/") + m.as_posix() for m in modules]
    assert modules and [m for m in installed if m not in names] == []

    site = tmp_path / "site"  # the wheel unpacked is what pip installs into site-packages
    zipfile.ZipFile(wheel).extractall(site)
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site)},
        check=True,
        capture_output=True,
        text=True,
    )
    found = json.loads(done.stdout)
    assert found["toolgym"].startswith(str(site)) and found["assets"].startswith(str(site))
    assert {"curated", "blender-placement", "scene-curated", "primitives"} <= set(found["suites"])
    assert set(found["envs"]) >= {"toolgym/CadQuery-v0", "toolgym/Blender-v0"}
    assert all(count > 0 for count in found["envs"].values())
    taskset = Path(found["taskset"])  # verifiers 0.4's taskset: a file for verifiers' own venv
    ours = ROOT / "agents/llm/verifiers_v1/toolgym_verifiers.py"
    assert taskset.is_relative_to(site) and taskset.read_bytes() == ours.read_bytes()


def test_no_bench_script_shadows_an_installed_module():
    """`python bench/x.py` puts `bench/` first on the path: a script there named like a library
    (as `bench/verifiers.py` once was) would be imported in its place."""
    from importlib.machinery import PathFinder

    # The path finder, not find_spec: a bench script another test imported is in sys.modules.
    elsewhere = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "bench"]
    shadowing = [
        script.name
        for script in sorted((ROOT / "bench").glob("*.py"))
        if script.stem in sys.builtin_module_names
        or PathFinder.find_spec(script.stem, elsewhere) is not None
    ]
    assert shadowing == []
