"""verifiers 0.4's door: its v1 API's own tasksets, chat program (the ``null`` harness's) and
interception, playing toolgym tasks: its NeMo Gym taskset against ``toolgym serve --nemo-gym``,
its OpenEnv taskset against ``toolgym serve``.

verifiers 0.4 pins mcp 2.0 and openai < 3 (this venv: mcp 1.30 for OpenEnv 0.10, openai 3), so
it runs in a venv of its own that the test builds (``tests/door_venvs.py``; its ``openenv``
extra brings OpenEnv 0.4's client), driven by ``tests/verifiers_v1_driver.py`` with a scripted
chat model on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from door_venvs import door_venv

from toolgym.agents.llm.nemo_gym import nemo_gym_rows, verifiers_taskset_dir
from toolgym.envs.serving.server import EnvServer
from toolgym.envs.tasks.suites import get_task

WRONG_SCRIPT = "result = cq.Workplane().box(1, 1, 1)"
TASKSET = verifiers_taskset_dir()  # toolgym_verifiers
WRONG_CALL = {"name": "add_box", "arguments": {"length": 1, "width": 1, "height": 1}}


def play(config: dict, script: dict, tmp_path: Path, server: EnvServer) -> list[dict]:
    """verifiers' rollouts of ``config``'s taskset with the scripted model, one line each."""
    bin_dir = door_venv("verifiers", ["verifiers[openenv]==0.4.0"])
    (config_file := tmp_path / "config.json").write_text(json.dumps(config))
    (script_file := tmp_path / "script.json").write_text(json.dumps(script))
    tests = Path(__file__).parent
    path = f"{tests}:{TASKSET}"  # the driver's harness, toolgym's taskset
    env = dict(os.environ, PYTHONPATH=path, HOME=str(tmp_path), NO_KEY="-")
    driver = [bin_dir / "python", tests / "verifiers_v1_driver.py", config_file, script_file]
    done = subprocess.run(
        driver, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert httpx.get(server.url + "/health").json()["sessions"] == 0  # every session closed
    return [json.loads(line) for line in done.stdout.splitlines()]


def nemo_gym_rollouts(taskset: str, tmp_path: Path) -> tuple[dict, dict, object, object]:
    """Two rows played through ``taskset`` (a NeMo Gym taskset's id): the reference, and a
    failed script then a wrong part; ``(first line, second line, right task, wrong task)``."""
    rows = nemo_gym_rows("primitives", "test", action_mode="code", max_steps=3)[:2]
    (rows_file := tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    right, wrong = (get_task(row["toolgym_task"]) for row in rows)
    script = {  # the scripted model's run_code calls, by prompt; then it says it is done
        right.prompt: [{"run_code": right.reference}],
        wrong.prompt: [{"run_code": "raise ValueError('oops')"}, {"run_code": WRONG_SCRIPT}],
    }
    with EnvServer(nemo_gym=True) as server:
        config = {"taskset": {"id": taskset, "dataset": str(rows_file)}}
        config["taskset"]["task"] = {"resources_url": server.url}
        first, second = play(config, script, tmp_path, server)
    assert first["task"] == right.id and first["ok"] and first["errors"] == []
    assert first["metrics"]["toolgym_passed"] == 1.0 and first["metrics"]["toolgym_steps"] == 1
    assert second["ok"] and second["metrics"]["toolgym_steps"] == 2
    return first, second, right, wrong


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first run installs verifiers 0.4 (about 800 MB) in its venv
def test_verifiers_nemo_gym_taskset_plays_toolgym(tmp_path):
    first, second, _, _ = nemo_gym_rollouts("nemo_gym", tmp_path)
    assert first["rewards"]["nemo_gym"] == pytest.approx(1.0) and first["pictures"] == 0
    assert 0.0 <= second["rewards"]["nemo_gym"] < 0.3 and second["metrics"]["mask_sample"] == 0.0


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_toolgyms_taskset_shows_the_model_the_parts_views(tmp_path):
    """``agents/llm/verifiers_v1/toolgym_verifiers.py``: verifiers' NeMo Gym taskset whose tool
    answers carry the part's views as images, and whose reward is ``toolgym``."""
    first, second, _, _ = nemo_gym_rollouts("toolgym_verifiers", tmp_path)
    assert first["rewards"] == {"toolgym": pytest.approx(1.0)}
    assert 0.0 <= second["rewards"]["toolgym"] < 0.3
    # the model read one picture with each tool answer
    assert first["pictures"] == 1 and second["pictures"] == 2


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_verifiers_openenv_taskset_plays_toolgym_serve(tmp_path):
    right, wrong = get_task("primitives/primitive/test-0"), get_task("primitives/primitive/test-1")
    env_kwargs = {"action_mode": "tool", "max_steps": 2}
    resets = [{"seed": 0, "env_kwargs": env_kwargs | {"task": t.id}} for t in (right, wrong)]
    script = {  # the model's replies: tool calls as JSON text, as OpenEnv's taskset parses them
        right.prompt: [{"text": right.tool_calls[0]}],
        wrong.prompt: [
            {"text": '{"name": "add_box", "arguments": {}}'},
            {"text": json.dumps(WRONG_CALL)},
        ],
    }
    with EnvServer() as server:
        config = {"taskset": {"id": "openenv", "base_url": server.url, "resets": resets}}
        config["player"] = {"max_turns": 4}  # OpenEnv's env names its seat "player"
        first, second = play(config, script, tmp_path, server)
    assert first["task"] == right.id and first["ok"] and first["errors"] == []
    assert first["rewards"]["openenv_reward"] == pytest.approx(1.0)
    # the return: the exact final score less the failed step's 0.1
    assert second["ok"] and -0.1 <= second["rewards"]["openenv_reward"] < 0.2
    assert second["turns"] == 2
