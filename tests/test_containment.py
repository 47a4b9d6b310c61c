"""Containment: hostile or broken scripts end in a clear error or a harmless result, and then the
session works, no process the script started survives, files outside the workspace are unchanged,
and the session never sees the parent's secrets."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from conftest import assert_no_strays, in_syscall, live_processes, outer_pid, wait_until
from toolgym.envs.sandbox import Limits, Session, shutdown_zygotes

REPO = Path(__file__).resolve().parents[1]


SESSION_ENV = {
    "PATH",
    "LANG",
    "LC_ALL",
    "HOME",
    "TMPDIR",
    "USER",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
}


def outside_files() -> dict[str, tuple[int, int]]:
    """Size and mtime of every file a session could try to touch outside its workspace."""
    state = {}
    for root in (REPO, Path("/etc")):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in {".venv", ".git", "__pycache__"}]
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                state[path] = (info.st_size, info.st_mtime_ns)
    return state


def assert_recovered(session: Session) -> None:
    """The next call works, nothing the script started is still running, and the session's
    environment is still the scrubbed one."""
    result = session.run(
        "import os\nanswer = 41 + 1\nenv = dict(os.environ)", fetch=["answer", "env"]
    )
    assert result.ok and result.results["answer"] == 42, result.feedback()
    env = result.results["env"]
    assert set(env) <= SESSION_ENV | {
        k for k in env if k.endswith("_NUM_THREADS") or k.startswith("PYTHON")
    }
    assert_no_strays(session)


CASES = {
    # name: (script, expected error kind or None for a harmless result)
    "sleep": ("import time\ntime.sleep(60)", "timeout"),
    "fork bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        "timeout",
    ),
    "segfault via ctypes": ("import ctypes\nctypes.string_at(0)", "crash"),
    "os._exit": ("import os\nos._exit(7)", "exited"),
    "sys.exit": ("import sys\nsys.exit(0)", "exit"),
    "deep recursion": ("def f(n):\n    return f(n + 1)\nf(0)", "recursion"),
    "detached child": (
        "import subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)",
        None,
    ),
    "daemon forked and orphaned": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1000)",
        None,
    ),
    "ignoring SIGTERM": (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)",
        "timeout",
    ),
    "uninterruptible C hang": (
        "import ctypes, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, range(1, 32))\n"
        "ctypes.CDLL(None).sleep(60)",
        "timeout",
    ),
}


@pytest.fixture
def hostile_session():
    """Only the wall clock can trip among the limits a hostile case may reach (a fork bomb spins
    on failed forks: with a tight CPU limit too, which trips first would depend on the load)."""
    limits = Limits(wall_s=4.0, cpu_s=300.0, memory_mb=512, max_processes=16, file_bytes=32 << 20)
    with Session("cadquery", limits) as session:
        yield session


@pytest.mark.timing
@pytest.mark.parametrize("name", list(CASES))
def test_hostile_script_is_contained(hostile_session, name):
    short_session = hostile_session
    script, kind = CASES[name]
    files_before = outside_files()
    started = time.monotonic()
    result = short_session.run(script)
    assert time.monotonic() - started < 60  # the 4 s limit, and a margin for a busy machine
    if kind is None:
        assert result.error is None or result.error.kind in {"crash", "recursion"}, result.error
    else:
        assert result.error is not None and result.error.kind == kind, (result.error, result.stderr)
        assert result.error.message
    if result.error and result.error.kind in {"timeout", "cpu_time", "crash", "exited"}:
        assert (
            result.restored_to == 0 and not result.state_lost
        )  # back to the snapshot taken at start
    assert_recovered(short_session)
    assert outside_files() == files_before


def test_infinite_loop_is_stopped_by_the_cpu_limit():
    # The wall clock has ample room, so only the CPU limit can trip, however busy the machine.
    limits = Limits(wall_s=300.0, cpu_s=1.0, memory_mb=512, max_processes=16)
    with Session("cadquery", limits) as session:
        result = session.run("while True:\n    pass")
        assert result.error is not None and result.error.kind == "cpu_time", result.error
        assert result.error.limit == "cpu_s" and result.error.message
        assert result.restored_to == 0 and not result.state_lost
        assert_recovered(session)


MEMORY_HOGS = {
    "memory bomb": "blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))",
    "one huge allocation": "x = bytearray(10**11)",
}


@pytest.mark.parametrize("name", list(MEMORY_HOGS))
def test_memory_hogs_are_stopped_by_the_memory_limit(name):
    # CPU and wall clock have ample room, so only the memory limit can trip on a busy machine.
    limits = Limits(wall_s=300.0, cpu_s=300.0, memory_mb=512, max_processes=16)
    with Session("cadquery", limits) as session:
        result = session.run(MEMORY_HOGS[name])
        assert result.error is not None and result.error.kind == "memory", result.error
        assert result.error.message and not result.state_lost
        assert_recovered(session)


def test_c_stack_overflow_is_a_clean_error():
    # CPU and wall clock have ample room, so only the stack can give out, however slow the machine.
    limits = Limits(wall_s=300.0, cpu_s=300.0, memory_mb=512, max_processes=16)
    script = "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1) + 1\nf(0)"
    with Session("cadquery", limits) as session:
        result = session.run(script)
        # A segfault, a RecursionError or the interpreter's own SystemError, depending on which of
        # its guards the deep C stack reaches first: each a clean error, the session recovered.
        kinds = {"crash", "recursion", "exception"}
        assert result.error is not None and result.error.kind in kinds, result.error
        assert result.error.message and not result.state_lost
        assert_recovered(session)


def only(**tight) -> Limits:
    """Limits where only the ``tight`` ones can trip: every other one is far out of reach, so the
    limit that trips never depends on how busy the machine is."""
    far = dict(wall_s=300.0, cpu_s=300.0, memory_mb=4096, max_processes=512)
    return Limits(**{**far, **tight})


def test_process_limit_is_named():
    script = (
        "import os, time\n"
        "for _ in range(1000):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(100)\n"
        "        os._exit(0)\n"
    )
    with Session("cadquery", only(max_processes=16)) as session:
        result = session.run(script)
        assert result.error.kind == "processes" and result.error.limit == "max_processes"
        assert_recovered(session)


FORKS = (
    "import os, time\n"
    "started = 0\n"
    "for _ in range({n}):\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(100)\n"
    "        os._exit(0)\n"
    "    started += 1\n"
)


def test_max_processes_is_exact():
    """The default limit, 32: a script starts 32 processes, and the 33rd fails, naming the limit,
    also once snapshots are parked (they are the sandbox's, not the script's)."""
    with Session("cadquery", only(max_processes=32)) as session:
        for _ in range(3):
            session.snapshot()
        result = session.run(FORKS.format(n=32), fetch=["started"])
        assert result.ok and result.results["started"] == 32, result.feedback()
        assert_no_strays(session)  # the 32 are ended after the call
        result = session.run(FORKS.format(n=33), fetch=["started"])
        assert result.error is not None and result.error.limit == "max_processes", result.error
        assert "limit max_processes" in result.error.message
        assert_recovered(session)
        # An env's reset (clear) ends the worker and the snapshots: the next script still gets
        # exactly 32, none of the ended processes counted against it, none handed to it.
        for _ in range(3):
            session.snapshot()
        session.clear()
        result = session.run(FORKS.format(n=33), fetch=["started"])
        assert result.error is not None and result.error.limit == "max_processes", result.error
        session.clear()
        result = session.run(FORKS.format(n=32), fetch=["started"])
        assert result.ok and result.results["started"] == 32, result.feedback()


def test_worker_killed_from_outside_mid_call():
    with Session("cadquery", only()) as session:
        worker = outer_pid(session, session.worker_pid)

        def kill_once_asleep() -> None:  # mid-call for sure, however slow the machine
            wait_until(lambda: in_syscall(worker, "nanosleep"), timeout_s=120)
            os.kill(worker, signal.SIGKILL)

        killer = threading.Thread(target=kill_once_asleep)
        killer.start()
        result = session.run("import time\ntime.sleep(300)")
        killer.join()
        assert result.error.kind == "crash" and result.error.signal == "SIGKILL"
        assert result.restored_to == 0
        assert_recovered(session)


LIMIT_BREACHES = {
    "wall_s": ("import time\ntime.sleep(60)", {"wall_s": 2.0}),
    "cpu_s": ("while True:\n    pass", {"cpu_s": 1.0}),
    "memory_mb": ("x = bytearray(10**11)", {"memory_mb": 512}),
    "file_bytes": (
        "with open('big.bin', 'wb') as f:\n    f.write(b'x' * (3 << 20))",
        {"file_bytes": 2 << 20},
    ),
    "max_processes": (FORKS.format(n=5), {"max_processes": 4}),
}


@pytest.mark.parametrize("limit", list(LIMIT_BREACHES))
def test_limit_errors_name_the_limit(limit):
    script, tight = LIMIT_BREACHES[limit]
    with Session("cadquery", only(**tight)) as session:
        result = session.run(script)
        assert result.error is not None and result.error.limit == limit, result.error
        assert f"limit {limit}" in result.error.message
        assert_recovered(session)


OPENS = "import socket\nkept = [{kind} for _ in range({n})]\nopened = len(kept)\n"


@pytest.mark.parametrize("backend", ["cadquery", "blender", "scene"])
def test_open_files_is_exact_in_every_tool(backend):
    """The default, 256: a script opens 256 files (or sockets), and the 257th fails, naming the
    limit, in every tool; raising the limit is refused, and files a script keeps open across
    calls count against the session's hard limit, so 5,000 files never open."""
    with Session(backend, only()) as session:
        for kind in ("open('/dev/null')", "socket.socket()"):
            result = session.run(OPENS.format(kind=kind, n=256), fetch=["opened"])
            assert result.ok and result.results["opened"] == 256, result.feedback()
            result = session.run(OPENS.format(kind=kind, n=257))
            assert result.error is not None and result.error.kind == "open_files", result.error
            assert result.error.limit == "open_files"
            assert "limit open_files" in result.error.message
            assert session.run("kept = None").ok  # the 256 close: the next kind gets its 256
        raised = session.run(
            "import resource\nresource.setrlimit(resource.RLIMIT_NOFILE, (100_000, 100_000))"
        )
        assert raised.error is not None and "not allowed" in raised.error.message
        # A script that takes the whole hard limit, in two calls that keep their files.
        grab = (
            "import resource\n_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n"
            "held = globals().setdefault('held', [])\n"
            "for _ in range(2500):\n    held.append(open('/dev/null'))\n"
        )
        first = session.run(grab)
        assert first.error is not None and first.error.limit == "open_files", first.error
        assert session.run("kept = [open('/dev/null') for _ in range(200)]").ok
        second = session.run("kept2 = [open('/dev/null') for _ in range(5000)]")
        assert second.error is not None and second.error.limit == "open_files", second.error
        assert_recovered(session)


def test_oversized_file_names_its_limit():
    """One file past ``file_bytes`` (EFBIG), while the workspace has room: the limit is named."""
    limits = only(file_bytes=4 << 20, workspace_bytes=64 << 20)
    with Session("cadquery", limits) as session:
        result = session.run("open('big.bin', 'wb').write(b'x' * (5 << 20))")
        assert result.error.kind == "file_bytes" and result.error.limit == "file_bytes"
        assert str(4 << 20) in result.error.message
        assert_recovered(session)


def test_breach_restores_the_latest_snapshot(short_session):
    short_session.run("part = cq.Workplane().box(1, 2, 3)")
    snap = short_session.snapshot()
    result = short_session.run("import os\nos._exit(1)")
    assert result.restored_to == snap
    assert short_session.run("v = part.val().Volume()", fetch=["v"]).results["v"] == pytest.approx(
        6.0
    )


def test_killing_the_parent_is_impossible(short_session):
    me = os.getpid()
    zygote_pid = short_session.zygote_pid
    script = (
        "import os, signal\nkilled = []\n"
        f"for pid in (os.getppid(), 1, {me}, {zygote_pid}):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n        killed.append(pid)\n"
        "    except OSError as exc:\n        killed.append(type(exc).__name__)\n"
    )
    result = short_session.run(script, fetch=["killed"])
    assert result.ok
    assert all(isinstance(k, str) for k in result.results["killed"]), result.results
    os.kill(zygote_pid, 0)  # still alive
    assert_recovered(short_session)


def test_writes_outside_the_workspace_do_not_escape(short_session, tmp_path):
    sentinel = tmp_path / "sentinel.txt"
    sentinel.write_text("original")
    repo_target = REPO / "escaped.txt"
    script = (
        "import os\nresults = {}\n"
        f"for path in ({str(sentinel)!r}, {str(repo_target)!r}, '/etc/passwd', "
        "os.path.expanduser('~/../escaped.txt'), '/tmp/in_private_tmp.txt'):\n"
        "    try:\n        with open(path, 'a') as f:\n            f.write('pwned')\n"
        "        results[path] = 'written'\n"
        "    except OSError as exc:\n        results[path] = type(exc).__name__\n"
        "with open('in_workspace.txt', 'w') as f:\n    f.write('ok')\n"
    )
    before_passwd = Path("/etc/passwd").read_bytes()
    result = short_session.run(script, fetch=["results"])
    assert result.ok, result.feedback()
    outcome = result.results["results"]
    assert outcome[str(repo_target)] != "written" and outcome["/etc/passwd"] != "written"
    assert sentinel.read_text() == "original"  # the session's /tmp is private
    assert not repo_target.exists()
    assert Path("/etc/passwd").read_bytes() == before_passwd
    assert not Path("/tmp/in_private_tmp.txt").exists()
    written = short_session.run("text = open('in_workspace.txt').read()", fetch=["text"])
    assert written.results == {"text": "ok"}


def test_task_assets_and_home_are_hidden(short_session):
    assets = REPO / "assets"
    script = (
        "import os\n"
        f"assets = os.listdir({str(assets)!r}) if os.path.isdir({str(assets)!r}) else []\n"
        "home = os.listdir(os.path.expanduser('/root')) if os.path.isdir('/root') else []\n"
    )
    result = short_session.run(script, fetch=["assets", "home"])
    assert result.ok, result.feedback()
    assert result.results["assets"] == []
    assert all(
        not name.startswith(".ssh") and name != ".bash_history" for name in result.results["home"]
    )


def test_no_network_even_to_localhost(short_session):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        script = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    outcome = 'connected'\n"
            "except OSError as exc:\n"
            "    outcome = type(exc).__name__\n"
        )
        result = short_session.run(script, fetch=["outcome"])
        assert result.ok and result.results["outcome"] != "connected"
        with pytest.raises(TimeoutError):
            listener.accept()
    assert_recovered(short_session)


def test_environment_holds_no_parent_secrets(monkeypatch):
    monkeypatch.setenv("TOOLGYM_TEST_SECRET", "hunter2")
    shutdown_zygotes()  # the next zygote starts with the secret in our environment
    with Session("cadquery") as session:
        script = (
            "import os, glob\n"
            "env = dict(os.environ)\n"
            "leaks = []\n"
            "for path in glob.glob('/proc/*/environ'):\n"
            "    try:\n        data = open(path, 'rb').read()\n"
            "    except OSError:\n        continue\n"
            "    if b'hunter2' in data:\n        leaks.append(path)\n"
        )
        result = session.run(script, fetch=["env", "leaks"])
    shutdown_zygotes()
    assert result.ok, result.feedback()
    assert "TOOLGYM_TEST_SECRET" not in result.results["env"]
    assert "hunter2" not in repr(result.results["env"])
    assert result.results["leaks"] == []


def test_stdout_flood_is_truncated_and_counted(short_session):
    result = short_session.run("print('x' * 10_000_000)")
    assert result.ok
    assert len(result.stdout) == short_session.limits.output_bytes
    assert result.stdout_dropped == 10_000_001 - short_session.limits.output_bytes
    endless = short_session.run("while True:\n    print('y' * 100_000)")
    assert endless.error is not None  # the file-size cap (or the CPU limit) stops it
    assert len(endless.stdout) == short_session.limits.output_bytes
    assert_recovered(short_session)


def test_oversized_artifact_is_refused(short_session):
    result = short_session.run("big = b'x' * 70_000_000", fetch=["big"])
    assert result.error is not None and result.error.kind == "artifact_bytes"
    assert result.error.limit == "artifact_bytes"
    assert_recovered(short_session)


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        # CadQuery #1665: a zero-area polygon in a sketch makes OpenCASCADE eat all memory.
        (
            "result = (cq.Workplane().sketch().push([(48.58, -3.37)]).rect(3.0, 87.68)"
            ".rect(3.0, 88.65).polygon([(0, 0), (1, 1), (2, 2)], mode='s').finalize().extrude(1))",
            "memory",
        ),
        # CadQuery #1873: a tapered extrude of a tiny circle segfaults.
        (
            "b = 0.0268 * 0.0268\nresult = cq.Workplane().circle(b / 2).extrude(b * 2, taper=-1)",
            "crash",
        ),
    ],
    ids=["zero-area sketch (#1665)", "tapered extrude (#1873)"],
)
def test_known_cadquery_failure_modes_are_clean_errors(script, kind):
    # Only the memory limit is tight: the CPU and wall-clock limits leave room for a slow or busy
    # machine (the sketch needs about 3 CPU seconds to fill 512 MiB), so which limit trips
    # does not depend on the machine.
    limits = Limits(wall_s=300.0, cpu_s=300.0, memory_mb=512, max_processes=16)
    with Session("cadquery", limits) as session:
        result = session.run(script)
        assert result.error is not None and result.error.kind == kind, result.error
        assert result.error.limit == ("memory_mb" if kind == "memory" else None)
        assert_recovered(session)


@pytest.mark.timing
def test_session_close_leaves_no_process(cq_session):
    cq_session.run("import subprocess\np = subprocess.Popen(['sleep', '1000'])")
    cq_session.snapshot()
    processes = live_processes(cq_session) | {cq_session.init_pid}
    cq_session.close()
    deadline = time.monotonic() + 30  # promptly when quiet; the margin is for a busy machine
    while time.monotonic() < deadline:
        alive = set()
        for pid in processes:
            try:
                state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            alive.add((pid, state))
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, f"left behind: {alive}"


FIND_CHANNEL = (
    "import os, socket, stat, struct\n"
    "fds = [int(fd) for fd in os.listdir('/proc/self/fd')]\n"
    "def is_socket(fd):\n"
    "    try:\n"
    "        return stat.S_ISSOCK(os.fstat(fd).st_mode)\n"
    "    except OSError:\n"  # listdir's own descriptor, closed since
    "        return False\n"
    "channel = next(fd for fd in fds if is_socket(fd))\n"
)


def test_forged_frames_on_the_channel_are_ignored_or_contained(short_session):
    import msgpack

    forged = msgpack.packb({"ok": True, "seq": -5, "results": {"v": 1e9}, "missing": 7})
    script = (
        FIND_CHANNEL + f"os.write(channel, struct.pack('>I', {len(forged)}) + {forged!r})\nv = 1"
    )
    result = short_session.run(script, fetch=["v"])
    assert result.ok and result.results == {"v": 1}  # the stale frame was skipped
    garbage = short_session.run(
        FIND_CHANNEL + "os.write(channel, struct.pack('>I', 3) + b'\\xc1\\xc1\\xc1')"
    )
    assert garbage.error.kind == "protocol" and garbage.restored_to == 0
    huge = short_session.run(FIND_CHANNEL + "os.write(channel, struct.pack('>I', 2**31))")
    assert huge.error.limit == "artifact_bytes"
    assert_recovered(short_session)


def test_no_descriptor_of_the_host_reaches_the_worker(short_session):
    """Only its channel, its output captures and /dev/null: no namespace or process handle of
    the zygote (a pidfd of the owner, the host's PID namespace)."""
    script = (
        "import os\nkinds = []\n"
        "for fd in os.listdir('/proc/self/fd'):\n"
        "    try:\n        kinds.append(os.readlink(f'/proc/self/fd/{fd}'))\n"
        "    except OSError:\n        pass\n"
    )
    kinds = short_session.run(script, fetch=["kinds"]).results["kinds"]
    allowed = ("/dev/null", "/memfd:stdout", "/memfd:stderr", "socket:", "/proc/")
    assert [k for k in kinds if not k.startswith(allowed)] == [], kinds
