"""The session's file system is an allow-list: agent code can neither import, read, nor find in
memory anything that decides a task's answer, nor see other checkouts or home directories."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

from toolgym.envs.cadquery import families
from toolgym.envs.doctor import check_isolation
from toolgym.envs.sandbox import Limits, Session

REPO = Path(__file__).resolve().parents[1]
CURATED = REPO / "assets" / "cadquery" / "curated.toml"


@pytest.fixture(scope="module")
def session():
    with Session("cadquery", Limits(wall_s=60)) as sandbox:
        assert "mountns" in sandbox.layers, sandbox.warnings
        yield sandbox


def run(session: Session, script: str, *names: str) -> dict:
    result = session.run(script, fetch=list(names))
    assert result.ok, result.feedback()
    return result.results


#: Every module of the CAD families' package (generators, phrase bank, classic families...).
FAMILY_MODULES = tuple(
    f"toolgym.envs.cadquery.families.{m.name}" for m in pkgutil.iter_modules(families.__path__)
)


def test_task_generators_and_verifiers_cannot_be_imported(session):
    assert len(FAMILY_MODULES) >= 4
    script = (
        "outcomes = {}\n"
        f"for name in {FAMILY_MODULES!r} + ('toolgym.envs.cadquery.families',\n"
        "             'toolgym.envs.tasks.suites',\n"
        "             'toolgym.envs.tasks.model', 'toolgym.verifiers', 'toolgym.agents'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "        outcomes[name] = 'imported'\n"
        "    except ImportError as exc:\n"
        "        outcomes[name] = type(exc).__name__\n"
    )
    outcomes = run(session, script, "outcomes")["outcomes"]
    assert set(outcomes.values()) == {"ModuleNotFoundError"}, outcomes


def test_no_task_file_or_git_directory_exists_anywhere(session):
    script = (
        "import os\nfound = []\n"
        "for top in sorted(os.listdir('/')):\n"
        "    if top in ('proc', 'sys', 'dev'):\n"
        "        continue\n"
        "    for dirpath, dirnames, filenames in os.walk('/' + top):\n"
        "        found += [os.path.join(dirpath, d) for d in dirnames if d == '.git']\n"
        "        found += [os.path.join(dirpath, f) for f in filenames\n"
        "                  if f.endswith('.toml') or f == 'curated.toml']\n"
    )
    found = run(session, script, "found")["found"]
    assert not [p for p in found if p.endswith(".git") or "/.git/" in p], found
    assert not [p for p in found if p.endswith("curated.toml")], found
    # What is left are TOML files shipped inside third-party packages, none of the project's.
    site = [p for p in session.allowed_paths if p.endswith("site-packages")]
    ours = [p for p in found if p.startswith(f"{REPO}/")]
    assert all(any(p.startswith(s + "/") for s in site) for p in ours), ours


def test_the_project_tree_is_not_readable_through_the_package(session):
    script = (
        "import os, toolgym\n"
        "root = os.path.dirname(os.path.dirname(toolgym.__file__))\n"
        "listing = sorted(os.listdir(root))\n"
        "envs = sorted(os.listdir(os.path.join(root, 'envs')))\n"
        "cadquery = sorted(os.listdir(os.path.join(root, 'envs', 'cadquery')))\n"
        "reads = {}\n"
        "for rel in ('assets/cadquery/curated.toml', 'envs/cadquery/families/__init__.py',\n"
        "            'envs/cadquery/families/model.py', 'envs/cadquery/families/phrases.py',\n"
        "            'envs/cadquery/families/classic.py', '.git/HEAD',\n"
        "            'pyproject.toml', 'verifiers/cad.py', 'tests/conftest.py'):\n"
        "    try:\n"
        "        open(os.path.join(root, rel)).read()\n"
        "        reads[rel] = 'read'\n"
        "    except OSError as exc:\n"
        "        reads[rel] = type(exc).__name__\n"
    )
    out = run(session, script, "listing", "envs", "cadquery", "reads")
    assert set(out["reads"].values()) == {"FileNotFoundError"}, out["reads"]
    assert set(out["listing"]) <= {"toolgym", "envs", "renderers", ".venv"}, out["listing"]
    assert "assets" not in out["listing"] and ".git" not in out["listing"]
    assert "families" not in out["cadquery"] and "env.py" not in out["cadquery"]
    tools = {
        "__init__.py",
        "backend.py",
        "measure.py",
        "tools.py",
        "base_tools.py",
        "feature_tools.py",
    }
    assert set(out["cadquery"]) <= tools, out["cadquery"]
    assert "suites.py" not in out["envs"] and "tasks.py" not in out["envs"]


def test_no_reference_text_in_the_workers_memory(session):
    reference = families.family("plate_holes").task(0, "test").reference
    needles = [line.strip() for line in reference.splitlines() if len(line.strip()) > 20][:3]
    needles.append(next(line for line in CURATED.read_text().splitlines() if "reference" in line))
    # Sent reversed, so that the script's own code holds no copy of the text it looks for.
    script = (
        "import gc, sys\n"
        f"needles = [n[::-1] for n in {[n[::-1] for n in needles]!r}]\n"
        "answer_modules = [m for m in sys.modules if any(k in m for k in\n"
        "    ('families', 'suites', 'tasks', 'verifiers', 'agents', 'cadquery.env'))]\n"
        "hits = []\n"
        "mine = {id(needles), id(hits)}\n"
        "def look(text):\n"
        "    if isinstance(text, str) and any(n in text for n in needles):\n"
        "        hits.append(text[:80])\n"
        "for obj in gc.get_objects():\n"
        "    if id(obj) in mine:\n"
        "        continue\n"
        "    if isinstance(obj, dict):\n"
        "        for k, v in list(obj.items()):\n"
        "            if v is not needles:\n"
        "                look(k); look(v)\n"
        "    elif isinstance(obj, (list, tuple)):\n"
        "        for v in obj:\n"
        "            look(v)\n"
        "    elif isinstance(getattr(obj, '__code__', None), type(look.__code__)):\n"
        "        for v in obj.__code__.co_consts:\n"
        "            look(v)\n"
    )
    out = run(session, script, "answer_modules", "hits")
    assert out["answer_modules"] == []
    assert out["hits"] == []


def test_other_checkouts_and_home_directories_are_invisible(session, tmp_path):
    other = tmp_path / "other-clone" / "assets" / "cadquery"
    other.mkdir(parents=True)
    (other / "curated.toml").write_text('[[task]]\nreference = "secret"\n')
    script = (
        "import os\nseen = {}\n"
        f"for path in ({str(other / 'curated.toml')!r}, {str(REPO.parent)!r}, '/home', '/root',\n"
        "             '/srv', '/opt', '/mnt', '/var', os.path.expanduser('~')):\n"
        "    try:\n"
        "        isdir = os.path.isdir(path)\n"
        "        seen[path] = sorted(os.listdir(path)) if isdir else open(path).read()\n"
        "    except OSError as exc:\n"
        "        seen[path] = type(exc).__name__\n"
    )
    seen = run(session, script, "seen")["seen"]
    assert seen[str(other / "curated.toml")] == "FileNotFoundError"
    # The checkout's parent holds only the path to this checkout's own allowed files.
    assert seen[str(REPO.parent)] in ([REPO.name], "FileNotFoundError"), seen[str(REPO.parent)]
    for path in ("/home", "/srv", "/opt", "/mnt", "/var"):
        assert seen[path] == "FileNotFoundError", (path, seen[path])
    assert seen["/root"] in ("FileNotFoundError", [".pyenv"]), seen["/root"]  # the interpreter
    assert seen["/workspace"] == []  # the session's home


def test_the_workspace_is_the_only_writable_place(session):
    script = (
        "import os\nwritable = []\n"
        "for path in ('/workspace/f', '/tmp/f', '/dev/shm/f', '/usr/lib/f', '/etc/f', '/f',\n"
        "             os.path.join(os.path.dirname(os.__file__), 'f')):\n"
        "    try:\n"
        "        open(path, 'w').close()\n"
        "        writable.append(path)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    writable = run(session, script, "writable")["writable"]
    assert writable == ["/workspace/f", "/tmp/f", "/dev/shm/f"]


def test_doctor_shows_the_allow_list():
    checks = {check.name: check for check in check_isolation()}
    filesystem = checks["filesystem"]
    assert filesystem.ok and "allow-list" in filesystem.detail, filesystem.detail
    assert "/usr/lib" in filesystem.detail and "site-packages" in filesystem.detail
    assert "/workspace" in filesystem.detail


def test_without_a_mount_namespace_the_session_says_nothing_is_hidden():
    with Session("cadquery", isolation=("netns", "pidns", "uid")) as session:
        assert "mountns" not in session.layers and session.allowed_paths == []
        seen = session.run(f"import os\nseen = os.path.exists({str(CURATED)!r})", fetch=["seen"])
        assert seen.results == {"seen": True}  # and that is the truth: nothing is hidden
