"""verifiers 0.4's door: its v1 API's own NeMo Gym taskset, its own chat program (the ``null``
harness's) and its interception, playing toolgym tasks against ``toolgym serve --nemo-gym``.

verifiers 0.4 pins mcp 2.0 and openai < 3 (this venv: mcp 1.30 for OpenEnv, openai 3), so it
runs in a venv of its own that the test builds (``tests/door_venvs.py``), driven by
``tests/verifiers_v1_driver.py`` with a scripted chat model on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from door_venvs import door_venv

from toolgym.agents.llm.nemo_gym import nemo_gym_rows
from toolgym.envs.serving.server import EnvServer
from toolgym.envs.tasks.suites import get_task


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first run installs verifiers 0.4 (about 550 MB) in its venv
def test_verifiers_v1_plays_toolgym_through_its_own_nemo_gym_taskset(tmp_path):
    bin_dir = door_venv("verifiers", ["verifiers==0.4.0"])
    rows = nemo_gym_rows("primitives", "test", action_mode="code", max_steps=3)[:2]
    (rows_file := tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    right, wrong = (get_task(row["toolgym_task"]) for row in rows)
    script = {  # the scripted model's run_code calls, by prompt; then it says it is done
        right.prompt: [right.reference],
        wrong.prompt: ["raise ValueError('oops')", "result = cq.Workplane().box(1, 1, 1)"],
    }
    (script_file := tmp_path / "script.json").write_text(json.dumps(script))
    tests = Path(__file__).parent
    driver = [bin_dir / "python", tests / "verifiers_v1_driver.py"]
    env = dict(os.environ, PYTHONPATH=str(tests), HOME=str(tmp_path), NO_KEY="-")
    with EnvServer(nemo_gym=True) as server:
        done = subprocess.run(
            [*driver, server.url, rows_file, script_file],
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert httpx.get(server.url + "/health").json()["sessions"] == 0  # verified, closed
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["task"] == right.id and first["ok"] and first["errors"] == []
    assert first["rewards"]["nemo_gym"] == pytest.approx(1.0)
    assert first["metrics"]["toolgym_passed"] == 1.0 and first["metrics"]["toolgym_steps"] == 1
    assert second["ok"] and 0.0 <= second["rewards"]["nemo_gym"] < 0.3
    assert second["metrics"]["toolgym_steps"] == 2 and second["metrics"]["mask_sample"] == 0.0
