"""NeMo Gym's door: ``toolgym serve --nemo-gym`` (``envs/serving/nemo_gym.py``) and its dataset
rows (``agents/llm/nemo_gym.py``), on 127.0.0.1.

make test sends the requests NeMo Gym's agents send (its documented shapes, the session in a
cookie) with httpx; the slow test plays rows with NeMo Gym's own ``simple_agent`` and client, in
a venv of their own (nemo-gym 0.7 pins openai 2.44; this venv has openai 3), built by the test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import cadquery as cq
import httpx
import pytest
import trimesh
from door_venvs import door_venv

from toolgym.agents.llm.nemo_gym import nemo_gym_rows
from toolgym.envs.cadquery.artifacts import part_from_shape
from toolgym.envs.serving.nemo_gym import verified
from toolgym.envs.serving.server import EnvServer
from toolgym.envs.tasks.suites import get_task
from toolgym.verifiers.cad import verify_part
from toolgym.verifiers.parts import Part

ROWS = nemo_gym_rows("primitives", "test", action_mode="code", max_steps=3)[:2]
WRONG_PART = "result = cq.Workplane().box(1, 1, 1)"


@pytest.fixture(scope="module")
def server():
    with EnvServer(nemo_gym=True) as server:
        yield server


def sessions(server) -> int:
    return httpx.get(server.url + "/health").json()["sessions"]


def test_rows_carry_the_prompt_the_tools_and_the_task_id_but_no_answer():
    row = ROWS[0]
    task = get_task(row["toolgym_task"])
    system, user = row["responses_create_params"]["input"]
    assert system["role"] == "system" and user == {"role": "user", "content": task.prompt}
    tool, look = row["responses_create_params"]["tools"]
    assert tool["type"] == "function" and tool["name"] == "run_code" and look["name"] == "look"
    assert tool["parameters"]["required"] == ["code"]
    assert task.reference not in json.dumps(row) and task.tool_calls[0] not in json.dumps(row)
    (tool_mode,) = nemo_gym_rows("primitives", "test", action_mode="tool")[:1]
    assert "add_box" in {t["name"] for t in tool_mode["responses_create_params"]["tools"]}


def test_a_rollout_as_nemo_gyms_agent_plays_it(server):
    row = ROWS[0]
    task = get_task(row["toolgym_task"])
    with httpx.Client(base_url=server.url, timeout=120) as agent:  # keeps the cookie
        assert agent.post("/seed_session", json=row).json() == {}
        assert "toolgym_session" in agent.cookies
        failed = agent.post("/run_code", json={"code": "raise ValueError('not yet')"})
        assert failed.status_code == 200 and failed.json()["error"] == "ValueError: not yet"
        assert failed.json()["reward"] == pytest.approx(-0.1) and not failed.json()["done"]
        refused = agent.post("/add_box", json={"length": 1})  # a tool of tool mode only
        assert refused.status_code == 400
        assert refused.json()["error"] == "unknown tool 'add_box'; this session's: look, run_code"
        looked = agent.post("/look?views=1", json={"zoom": 2}).json()  # closer, nothing built
        assert looked["reward"] == 0.0 and "zoom 2" in looked["feedback"]
        assert looked["views"]["png"] != looked["target_views"]["png"]  # the part, the target
        passed = agent.post("/run_code?views=1", json={"code": task.reference}).json()
        assert passed["done"] and "score 1.000 (pass)" in passed["feedback"]
        assert passed["views"]["shape"] == [128, 128, 3] and passed["views"]["png"]
        assert "views" not in failed.json()  # only when asked
        answer = agent.post("/verify", json=row | {"response": {"id": "resp_1"}}).json()
        assert answer["toolgym_task"] == task.id and answer["response"] == {"id": "resp_1"}
        assert answer["reward"] == pytest.approx(1.0) and answer["toolgym_passed"]
        assert answer["toolgym_steps"] == 3 and not answer["mask_sample"]
        assert sessions(server) == 0  # verify ends the rollout
        late = agent.post("/run_code", json={"code": "x = 1"})
        assert late.status_code == 404 and "(verified)" in late.json()["error"]


def test_verify_scores_an_unfinished_episode_and_rollouts_keep_apart(server):
    first, second = (httpx.Client(base_url=server.url, timeout=120) for _ in range(2))
    with first, second:
        no_cookie = first.post("/run_code", json={"code": "x = 1"})
        assert no_cookie.status_code == 400 and "POST /seed_session first" in no_cookie.text
        unknown = first.post("/seed_session", json=ROWS[0] | {"toolgym_task": "primitives/nope"})
        assert unknown.status_code == 400 and unknown.json()["code"] == "bad_reset"
        for client, row in ((first, ROWS[0]), (second, ROWS[1])):
            assert client.post("/seed_session", json=row).status_code == 200
        assert first.cookies["toolgym_session"] != second.cookies["toolgym_session"]
        assert first.post("/run_code", json={"code": WRONG_PART}).json()["error"] is None
        assert first.post("/run_code", content=b"{oops").json()["code"] == "malformed_request"
        reference = get_task(ROWS[1]["toolgym_task"]).reference
        assert second.post("/run_code", json={"code": reference}).json()["done"]
        wrong = first.post("/verify", json=ROWS[0] | {"response": {}}).json()
        assert 0.0 <= wrong["reward"] < 0.3 and not wrong["toolgym_passed"]
        assert wrong["toolgym_steps"] == 1 and not wrong["mask_sample"]
        right = second.post("/verify", json=ROWS[1] | {"response": {}}).json()
        assert right["reward"] == pytest.approx(1.0)
    assert sessions(server) == 0


def test_a_score_the_verifier_could_not_give_is_a_masked_sample_not_a_zero():
    dense = trimesh.creation.icosphere(subdivisions=8)  # over the verifier's triangle budget
    report = verify_part(Part(dense), part_from_shape(cq.Workplane().sphere(1).val()))
    answer = verified(json.loads(json.dumps(report.to_dict(), default=float)), steps=3)
    assert answer["mask_sample"] and answer["failure_kind"] == "verifier"
    assert "budget" in answer["failure_reason"] and answer["toolgym_score"] is None
    assert answer["reward"] == 0.0 and not answer["toolgym_passed"]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first run installs nemo-gym (about 1.4 GB) in its venv
def test_nemo_gyms_own_simple_agent_plays_rows(server, tmp_path):
    bin_dir = door_venv("nemo-gym", ["nemo-gym==0.7.0"], ("--ignore-requires-python",))
    (rows_file := tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    right, wrong = (get_task(row["toolgym_task"]) for row in ROWS)
    script = {  # the scripted model: the right part, then done; a wrong part, then done
        right.prompt: [
            {"name": "run_code", "arguments": {"code": right.reference}},
            {"text": "Done."},
        ],
        wrong.prompt: [
            {"name": "run_code", "arguments": {"code": "raise ValueError('oops')"}},
            {"name": "run_code", "arguments": {"code": WRONG_PART}},
            {"text": "Done."},
        ],
    }
    (script_file := tmp_path / "script.json").write_text(json.dumps(script))
    driver = Path(__file__).with_name("nemo_gym_driver.py")
    done = subprocess.run(
        [bin_dir / "python", driver, server.url, rows_file, script_file],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["reward"] == pytest.approx(1.0) and first["toolgym_steps"] == 1
    assert "score 1.000 (pass)" in first["response"]["tool_outputs"][0]
    assert second["toolgym_steps"] == 2 and 0.0 <= second["reward"] < 0.3
    assert "ValueError: oops" in second["response"]["tool_outputs"][0]
    assert not first["mask_sample"] and not second["mask_sample"]
    assert sessions(server) == 0
