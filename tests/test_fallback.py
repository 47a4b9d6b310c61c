"""Fewer isolation layers: the sandbox still contains scripts, and says what it could not do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import assert_no_strays
from toolgym.envs.sandbox import Limits, Session


def test_without_namespaces_the_session_still_contains_scripts():
    with Session("cadquery", Limits(wall_s=3), isolation=()) as session:
        assert session.layers == ["rlimits", "env"]
        detached = session.run(
            "import subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)"
        )
        assert detached.ok
        assert_no_strays(session)  # the init, a subreaper here, swept the detached child
        hang = session.run("import time\ntime.sleep(60)")
        assert hang.error.kind == "timeout" and hang.restored_to == 0
        crash = session.run("import os\nos._exit(9)")
        assert crash.error.kind == "exited" and crash.error.exit_code == 9
        assert session.run("x = 1", fetch=["x"]).results == {"x": 1}
        assert_no_strays(session)


def test_unknown_layer_is_rejected():
    with pytest.raises(ValueError, match="unknown isolation layers"):
        Session("cadquery", isolation=("seccomp",))


NON_ROOT_SCRIPT = textwrap.dedent(
    """
    import warnings
    from toolgym.envs.sandbox import Limits, Session

    CONNECT = (
        "import socket\\n"
        "try:\\n"
        "    socket.socket().connect(('127.0.0.1', 9))\\n"
        "    out = 'connected'\\n"
        "except OSError as exc:\\n"
        "    out = type(exc).__name__\\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Session("cadquery", Limits(wall_s=3)) as a, Session("cadquery") as b:
            layers = a.layers
            net = a.run(CONNECT, fetch=["out"]).results["out"]
            hang = a.run("import time\\ntime.sleep(60)").error.kind
            assert b.run("x = 1").ok
    warned = [w for w in caught if "toolgym sandbox" in str(w.message)]
    print(repr((layers, net, hang, len(warned))))
    """
)


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
def test_as_an_unprivileged_user_namespaces_come_from_a_user_namespace(request):
    """Run the sandbox as uid 65534: namespaces then need a user namespace, and a layer that fails
    is a warning, given once per process however many sessions start."""
    run_dir = tempfile.mkdtemp(prefix="toolgym-nonroot-")  # pytest's tmp dirs are root-only
    os.chown(run_dir, 65534, 65534)
    request.addfinalizer(lambda: shutil.rmtree(run_dir, ignore_errors=True))
    # The interpreter may live in root's home: keep the right to read it, nothing else of root.
    # (Inside the user namespace that right is gone, so scripts here avoid lazy stdlib imports.)
    command = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
        sys.executable,
        "-c",
        NON_ROOT_SCRIPT,
    ]
    env = {**os.environ, "TOOLGYM_RUN_DIR": run_dir, "HOME": run_dir}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    layers, net, hang, warnings_given = eval(done.stdout.strip().splitlines()[-1])
    assert {"userns", "netns", "pidns"} <= set(layers) and "uid" not in layers
    assert net != "connected" and hang == "timeout"
    # Where mountns fails (root's home is not ours here) both sessions hit it: one warning only.
    assert warnings_given == (0 if "mountns" in layers else 1)
