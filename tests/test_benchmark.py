"""``toolgym bench``: evaluation sets pinned by hash, runs that resume, pass@k, reports and
comparisons, every agent kind, and bad input as one line and exit 2; and ``toolgym eval --suite``,
a checkpoint scored elsewhere than it trained. Real tools throughout."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from bench_scripts import bench_script

from toolgym.agents.benchmark import sets as set_module
from toolgym.agents.benchmark.players import AgentSpec
from toolgym.agents.benchmark.report import compare, pass_at_k, summarize
from toolgym.agents.benchmark.runner import Plan, read_run, run_plan
from toolgym.agents.benchmark.sets import TOOLS, get_set, set_hash, set_names

TOOLGYM = str(Path(sys.executable).with_name("toolgym"))
TIMING = ("seconds",)  # the one field of a results line a seed does not fix


def toolgym(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLGYM, *args], capture_output=True, text=True, timeout=900, cwd=cwd,
        env={"COLUMNS": "200", "PATH": str(Path(sys.executable).parent), **(env or {})},
    )  # fmt: skip


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_pass_at_k_is_the_unbiased_estimator_on_a_hand_computed_case():
    # 5 samples, 2 passed: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10;
    # pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10; pass@4: any 4 of 5 hold a pass.
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_at_k(5, 2, 4) == 1.0
    assert pass_at_k(5, 0, 5) == 0.0 and pass_at_k(1, 1, 1) == 1.0
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)


def test_every_set_is_built_from_test_splits_and_pinned_by_a_hash():
    names = set_names()
    assert names == [
        "cadquery-v1", "cadquery-lite-v1", "blender-v1", "blender-lite-v1",
        "scene-v1", "scene-lite-v1", "all-v1", "all-lite-v1",
    ]  # fmt: skip
    from toolgym.envs.tasks.suites import get_task

    whole = get_set("all-v1")
    assert len(whole.entries) == sum(len(get_set(f"{t}-v1").entries) for t in TOOLS)
    assert len({e.id for e in whole.entries}) == len(whole.entries)
    for entry in get_set("all-lite-v1").entries:
        assert get_task(entry.task).split == "test", entry.id
    # Every tool has every part, the lite sets at most 8 tasks per part.
    for tool in TOOLS:
        counts = get_set(f"{tool}-lite-v1").summary()["counts"][tool]
        assert set(counts) == {"seen", "styles", "families", "edits", "image", "curated"}
        assert max(counts.values()) <= 8
    # The lite set's first 18 entries touch every tool and part.
    head = get_set("all-lite-v1").head(18)
    assert {(e.tool, e.part) for e in head} == {
        (t, p) for t in TOOLS for p in ("seen", "styles", "families", "edits", "image", "curated")
    }
    image = [e for e in whole.entries if e.part == "image"]
    assert image and all(e.prompt_form == "image" and e.id.endswith("@image") for e in image)
    assert len({s.hash for s in map(get_set, names)}) == len(names)
    # The same set in another process has the same hash.
    code = "from toolgym.agents.benchmark.sets import get_set; print(get_set('scene-lite-v1').hash)"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == get_set("scene-lite-v1").hash


def test_the_hash_changes_when_a_task_or_a_verifier_version_changes(monkeypatch):
    lite = get_set("cadquery-lite-v1")
    entries, versions = lite.entries[:5], lite.verifier_versions
    before = set_hash(entries, versions)
    assert set_hash(entries, versions) == before
    assert set_hash(entries, {"cadquery": "another"}) != before
    # A task whose prompt, or whose verification, changed.
    from toolgym.envs.tasks import suites

    real = suites.get_task
    target = entries[2].task

    def edited(task_id: str, **change):
        task = real(task_id)
        return dataclasses.replace(task, **change) if task_id == target else task

    monkeypatch.setattr(suites, "get_task", lambda t: edited(t, prompt="another prompt"))
    assert set_hash(entries, versions) != before
    task = real(target)
    looser = dataclasses.replace(task.verification, thresholds={"iou": 0.5})
    monkeypatch.setattr(suites, "get_task", lambda t: edited(t, verification=looser))
    assert set_hash(entries, versions) != before
    monkeypatch.setattr(suites, "get_task", real)
    # A domain's verifier version, end to end through the set.
    from toolgym.envs.domains import get_domain

    domain = get_domain("cadquery")
    bumped = dataclasses.replace(domain, verifier_version=domain.verifier_version + ".1")
    monkeypatch.setattr(set_module, "get_domain", lambda name: bumped)
    set_module._build.cache_clear()
    try:
        assert get_set("cadquery-lite-v1").hash != lite.hash
    finally:
        monkeypatch.undo()
        set_module._build.cache_clear()
    assert get_set("cadquery-lite-v1").hash == lite.hash


def test_the_oracle_scores_at_least_099_on_every_tool_and_part(tmp_path):
    plan = Plan(get_set("all-lite-v1"), AgentSpec("oracle"), limit=18)
    rows = run_plan(plan, tmp_path / "oracle", jobs=2)
    assert len(rows) == 18
    failed = [(r["entry"], r["score"], r["error"]) for r in rows if (r["score"] or 0) < 0.99]
    assert not failed
    assert all(r["executed"] == r["steps"] == 1 and r["invalid"] == 0 for r in rows)
    header, episodes = read_run(tmp_path / "oracle")
    report = summarize(header, episodes, plan.entries)
    assert report["complete"] and report["overall"]["pass@1"] == 1.0
    assert set(report["by"]["tool"]) == set(TOOLS)
    assert report["overall"]["execution_rate"] == 1.0


def strip(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def test_a_resumed_run_equals_an_uninterrupted_one(tmp_path):
    plan = Plan(get_set("cadquery-lite-v1"), AgentSpec("random", "tool"), samples=2, limit=3)
    whole = run_plan(plan, tmp_path / "whole", jobs=2)
    seen = []

    def interrupt(row):
        seen.append(row)
        if len(seen) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_plan(plan, tmp_path / "cut", on_episode=interrupt)
    _, kept = read_run(tmp_path / "cut")
    assert len(kept) == 4  # the finished episodes were written before the interruption
    # A line cut short by a crash is played again, not read.
    with (tmp_path / "cut" / "episodes.jsonl").open("a") as results:
        results.write('{"entry": "cadquery/se')
    resumed = run_plan(plan, tmp_path / "cut", on_episode=lambda row: seen.append(row))
    assert len(seen) == 6  # only the two unfinished episodes were played
    assert strip(resumed) == strip(whole)
    assert len({r["seed"] for r in whole}) == 6
    # The report's figures are the episodes' own: pass@2 per task by hand, rates over calls.
    report = summarize(*read_run(tmp_path / "whole"), plan.entries)
    overall = report["overall"]
    assert overall["episodes"] == 6 and overall["tasks"] == 3
    passes = [sum(r["passed"] for r in whole if r["entry"] == e.id) for e in plan.entries]
    assert overall["pass@2"] == pytest.approx(sum(c > 0 for c in passes) / 3)
    assert overall["pass@1"] == pytest.approx(sum(passes) / 6)
    calls = sum(r["calls"] for r in whole)
    assert calls == sum(r["steps"] for r in whole) > 0
    assert overall["execution_rate"] == pytest.approx(sum(r["executed"] for r in whole) / calls)
    assert overall["score"] == pytest.approx(
        sum(r["score"] for r in whole) / 6
    )  # every task has two samples, so the mean of tasks is the mean of episodes


def test_a_folder_of_another_plan_is_refused(tmp_path):
    run_plan(Plan(get_set("scene-lite-v1"), AgentSpec("oracle"), limit=1), tmp_path / "run")
    other = Plan(get_set("cadquery-lite-v1"), AgentSpec("oracle"), limit=1)
    with pytest.raises(ValueError, match="another set"):
        run_plan(other, tmp_path / "run")
    more = Plan(get_set("scene-lite-v1"), AgentSpec("oracle"), samples=2, limit=1)
    with pytest.raises(ValueError, match="another samples"):
        run_plan(more, tmp_path / "run")
    # Two runs at once on one folder would play the same episodes twice: the second is refused.
    same = Plan(get_set("scene-lite-v1"), AgentSpec("oracle"), limit=1)
    from toolgym.agents.benchmark.runner import _lock

    with _lock(tmp_path / "run"), pytest.raises(ValueError, match="another run"):
        run_plan(same, tmp_path / "run")
    # A line written twice (two runs that raced before the lock, a copy) counts once.
    results = tmp_path / "run" / "episodes.jsonl"
    results.write_text(results.read_text() * 2)
    report = summarize(*read_run(tmp_path / "run"), same.entries)
    assert report["overall"]["episodes"] == 1 and report["overall"]["stops"] == {"passed": 1}


def test_compare_two_runs_with_bootstrap_intervals_and_refuse_other_sets(tmp_path):
    lite = get_set("cadquery-lite-v1")
    reports = {}
    for kind, mode in (("oracle", "code"), ("keyword", "tool")):
        folder = tmp_path / kind
        plan = Plan(lite, AgentSpec(kind, mode), limit=6)
        run_plan(plan, folder, jobs=2)
        reports[kind] = summarize(*read_run(folder), plan.entries)
    result = compare(reports["oracle"], reports["keyword"])
    overall = next(r for r in result["rows"] if r["group"] == "overall" and r["metric"] == "score")
    assert overall["a"] == pytest.approx(1.0, abs=0.01) and overall["b"] < overall["a"]
    assert overall["difference"] == pytest.approx(overall["b"] - overall["a"])
    low, high = overall["ci95"]
    assert low <= overall["difference"] <= high <= 0.0 + 1e-9
    assert {r["value"] for r in result["rows"] if r["group"] == "part"} == {
        "seen", "styles", "families", "edits", "image", "curated",
    }  # fmt: skip
    shorter = Plan(lite, AgentSpec("oracle"), limit=2)
    run_plan(shorter, tmp_path / "short")
    short = summarize(*read_run(tmp_path / "short"), shorter.entries)
    with pytest.raises(ValueError, match="different entries"):
        compare(reports["oracle"], short)
    other = dict(short, run=dict(short["run"], set_hash="0" * 16))
    with pytest.raises(ValueError, match="different set"):
        compare(short, other)


def test_the_cli_runs_reports_and_compares(tmp_path):
    listed = toolgym("bench", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["name"] for s in json.loads(listed.stdout)] == set_names()
    a, b, recording = tmp_path / "a", tmp_path / "b", tmp_path / "recording"
    done = toolgym("bench", "run", "scene-lite-v1", "--agent", "oracle", "--limit", "3",
                   "--out", str(a), "--record", str(recording))  # fmt: skip
    assert done.returncode == 0, done.stderr
    replayed = toolgym("replay", str(recording), "--verify")  # every number can be replayed
    assert replayed.returncode == 0 and replayed.stdout.count("1 steps reproduce") == 3
    assert "| oracle | 3 | 1.000 | 1.000 |" in done.stdout
    for name in ("run.json", "episodes.jsonl", "report.json", "report.md", "report.png"):
        assert (a / name).is_file(), name
    done = toolgym("bench", "run", "scene-lite-v1", "--agent", "random", "--limit", "3",
                   "--samples", "2", "--out", str(b), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["overall"]["episodes"] == 6
    # Again: nothing left to play, the same report.
    again = toolgym("bench", "run", "scene-lite-v1", "--agent", "random", "--limit", "3",
                    "--samples", "2", "--out", str(b), "--json")  # fmt: skip
    assert json.loads(again.stdout)["overall"] == json.loads(done.stdout)["overall"]
    compared = toolgym("bench", "compare", str(a), str(b), "--json")
    assert compared.returncode == 0, compared.stderr
    rows = json.loads(compared.stdout)["rows"]
    assert rows[0]["group"] == "overall" and rows[0]["a"] == 1.0
    shown = toolgym("bench", "compare", str(a), str(b))
    assert "95 % interval" in shown.stdout and "random" in shown.stdout
    priced = toolgym("bench", "report", str(b), "--price-in", "3", "--price-out", "15", "--json")
    assert json.loads(priced.stdout)["overall"]["cost"] == 0.0  # no tokens: no cost


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    one_line_error(toolgym("bench", "run", "cadquery-v9"), "unknown set", "cadquery-lite-v1")
    one_line_error(
        toolgym("bench", "run", "scene-lite-v1", "--price-in", "cheap", "--out", str(tmp_path)),
        "--price-in", "number",
    )  # fmt: skip
    one_line_error(toolgym("bench", "run", "scene-lite-v1", "--agent", "wizard"), "unknown agent")
    one_line_error(
        toolgym("bench", "run", "scene-lite-v1", "--agent", "copy", "--action-mode", "code"),
        "tool calls",
    )
    one_line_error(toolgym("bench", "run", "scene-lite-v1", "--agent", "openai"), "--base-url")
    run = tmp_path / "run"
    assert (
        toolgym("bench", "run", "scene-lite-v1", "--limit", "1", "--out", str(run)).returncode == 0
    )
    one_line_error(
        toolgym("bench", "run", "blender-lite-v1", "--limit", "1", "--out", str(run)),
        "another set",
    )
    other = tmp_path / "other"
    assert (
        toolgym("bench", "run", "blender-lite-v1", "--limit", "1", "--out", str(other)).returncode
        == 0
    )
    one_line_error(toolgym("bench", "compare", str(run), str(other)), "different set")
    header = json.loads((other / "run.json").read_text())
    (other / "run.json").write_text(json.dumps(dict(header, set_hash="0" * 16)))
    one_line_error(toolgym("bench", "report", str(other)), "0000000000000000", header["set_hash"])
    (tmp_path / "junk.json").write_text("{}")
    one_line_error(toolgym("bench", "compare", str(run), str(tmp_path / "junk.json")), "not a")
    one_line_error(toolgym("bench", "report", str(tmp_path)), "not a benchmark run")


def test_a_model_through_the_openai_runner_counts_tokens_and_cost(tmp_path):
    from toolgym.agents.llm.endpoint import ScriptedEndpoint, tool_call

    KeywordModel = bench_script("leaderboard").KeywordModel
    with ScriptedEndpoint(KeywordModel()) as endpoint:
        done = toolgym(
            "bench", "run", "cadquery-lite-v1", "--agent", "openai", "--base-url", endpoint.url,
            "--model", "keyword-script", "--action-mode", "tool", "--limit", "3",
            "--price-in", "2", "--price-out", "10", "--out", str(tmp_path / "model"), "--json",
            "--api-key-env", "BENCH_KEY", env={"BENCH_KEY": "sk-secret-4242"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        requests = len(endpoint.requests)
        assert endpoint.headers[0]["authorization"] == "Bearer sk-secret-4242"
    overall = json.loads(done.stdout)["overall"]
    _, episodes = read_run(tmp_path / "model")
    # A call per episode, then "done" where the part did not pass (a passing part ends it).
    asked_again = sum(not e["passed"] for e in episodes)
    assert requests == 3 + asked_again and overall["turns"] == pytest.approx(requests / 3)
    assert overall["tasks"] == 3 and overall["errors"] == 0
    assert overall["tokens_in"] > 0 and overall["tokens_out"] > 0
    expected = (overall["tokens_in"] * 2 + overall["tokens_out"] * 10) / 1e6
    assert math.isclose(overall["cost"], expected)
    assert all(e["calls"] == e["steps"] == 1 for e in episodes)  # tool mode: each call a step
    invalid = sum(e["invalid"] for e in episodes)  # arguments the tool refused
    assert overall["invalid_call_rate"] == pytest.approx(invalid / 3)
    for name in ("run.json", "episodes.jsonl", "report.json"):  # the key is never written
        assert "sk-secret-4242" not in (tmp_path / "model" / name).read_text()
    # Code mode: a call that is not run_code is refused without a step, and counted invalid.
    wrong = [tool_call("add_box", {"length": 1}), {"content": "Done."}]

    def code_mode(url: str, model: str = "wrong-tool") -> subprocess.CompletedProcess[str]:
        return toolgym(
            "bench", "run", "cadquery-lite-v1", "--agent", "openai", "--base-url", url,
            "--model", model, "--limit", "1", "--out", str(tmp_path / "code"), "--json",
        )  # fmt: skip

    with ScriptedEndpoint(wrong) as endpoint:
        done = code_mode(endpoint.url)
    assert done.returncode == 0, done.stderr
    overall = json.loads(done.stdout)["overall"]
    assert overall["steps"] == 0 and overall["invalid_call_rate"] == 1.0
    assert overall["execution_rate"] == 0.0 and overall["errors"] == 0
    # The same model served again on another port resumes the run (nothing is left to play).
    with ScriptedEndpoint(wrong) as endpoint:
        again = code_mode(endpoint.url)
        assert again.returncode == 0, again.stderr
        assert not endpoint.requests
        other = code_mode(endpoint.url, "another-model")
    one_line_error(other, "another agent")


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A few seconds' `toolgym train` run on three CAD primitives: a real checkpoint."""
    run = tmp_path_factory.mktemp("trained")
    done = toolgym(
        "train", "--suite", "assets/cadquery/demo/first-tools.toml", "--steps", "4",
        "--num-steps", "4", "--max-steps", "1", "--num-envs", "1", "--out", str(run),
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return run


def test_a_trainer_checkpoint_plays_its_own_tool_and_says_so_elsewhere(tmp_path, trained):
    run = trained
    done = toolgym("bench", "run", "all-lite-v1", "--agent", "checkpoint", "--checkpoint",
                   str(run), "--limit", "3", "--out", str(tmp_path / "bench"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    _, rows = read_run(tmp_path / "bench")
    by_tool = {r["entry"].split("/")[0]: r for r in rows}
    cad = by_tool["cadquery"]
    assert cad["error"] is None and 0.0 <= cad["score"] <= 1.0 and cad["steps"] >= 1
    for tool in ("blender", "scene"):
        assert by_tool[tool]["error"] == "the checkpoint plays toolgym/CadQuery-v0 only"
        assert by_tool[tool]["score"] is None


def test_the_keyword_rule_reads_words_units_and_radii():
    from toolgym.agents.baselines import KeywordAgent, OneCall
    from toolgym.envs.domains import get_domain
    from toolgym.envs.tasks.suites import get_suite

    rule = OneCall(KeywordAgent(get_domain("cadquery").registry()))  # as the benchmark plays it

    def call(prompt: str, step: int = 0) -> dict:
        return json.loads(rule.act({"prompt": prompt, "step": step}))

    for task in get_suite("primitives").split("test"):  # as written: every call exact
        expected = json.loads(task.tool_calls[0])
        got = call(task.prompt)
        assert got["name"] == expected["name"], task.prompt
        written = {k: got["arguments"][k] for k in expected["arguments"]}
        assert written == pytest.approx(expected["arguments"]), task.prompt
        assert got["arguments"].get("axis", "Z") == expected["arguments"].get("axis", "Z")
    sphere = call("A sphere of radius 1.5 cm, centred at (2, 3, 4) mm.")
    assert sphere == {
        "name": "add_sphere",
        "arguments": {"diameter": 30.0, "x": 2.0, "y": 3.0, "z": 4.0},
    }
    post = call("A cylinder 2 in tall and 1 in across along X, at (0, 0, 0) mm.")
    assert post["name"] == "add_cylinder" and post["arguments"]["axis"] == "X"
    assert post["arguments"]["height"] == pytest.approx(50.8)
    assert post["arguments"]["diameter"] == pytest.approx(25.4)
    assert call("anything", step=1) == {"name": "stop"}  # one call, then it is done


def test_eval_scores_a_checkpoint_on_another_suite_of_its_tool(trained):
    run = trained
    scored = toolgym("eval", "--checkpoint", str(run), "--suite", "cad-styles", "--episodes", "3",
                     "--prompt-form", "image", "--json")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["episodes"] == 3 and 0.0 <= report["score"] <= 1.0
    assert all(r["task"].startswith("cad-styles/") for r in report["results"])
    one_line_error(
        toolgym("eval", "--checkpoint", str(run), "--suite", "scene-layout"),
        "toolgym/GameScene-v0's", "plays toolgym/CadQuery-v0",
    )  # fmt: skip
    one_line_error(toolgym("eval", "--checkpoint", str(run), "--suite", "nope"), "unknown suite")
    one_line_error(
        toolgym("eval", "--checkpoint", str(run), "--prompt-form", "sketch"), "--prompt-form"
    )


def test_the_template_rule_plays_each_entry_from_its_suites_worked_examples(tmp_path):
    """`--agent template`: each entry answered from its own suite's training split (the
    held-out families' entries from the training families'); a suite it cannot find is one
    clear error, never a zero."""
    from toolgym.agents.benchmark.players import RulePlayer

    lite = get_set("cadquery-lite-v1")
    plan = Plan(lite, AgentSpec("template", "tool"), limit=3)  # seen, styles, families
    run_plan(plan, tmp_path / "run", jobs=2)
    report = summarize(*read_run(tmp_path / "run"), plan.entries)
    assert [e.part for e in plan.entries] == ["seen", "styles", "families"]
    assert report["overall"]["episodes"] == 3 and report["overall"]["errors"] == 0
    assert 0.0 < report["overall"]["score"] < 1.0
    player = RulePlayer(AgentSpec("template", "tool"))
    with pytest.raises(ValueError, match="unknown suite 'no-such-suite'"):
        player.template("no-such-suite", "cadquery")
    assert player.template("cad-families", "cadquery").examples  # the training families'
    with pytest.raises(ValueError, match="use --action-mode tool"):
        AgentSpec("template", "code")
