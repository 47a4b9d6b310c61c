"""The reward fuzzer's harness (``toolgym.envs.verification.fuzzing``) and ``toolgym fuzz``: a
cheat that scores as well as an honest near miss escapes, one below it is caught, one whose script
fails is broken, and a near miss that passes cannot anchor a run. The domains' own cheats are
fuzzed in ``tests/test_*_red_team.py``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from toolgym.cli import app
from toolgym.envs.tasks.suites import get_task
from toolgym.envs.verification.fuzzing import (
    Cheat,
    FuzzReport,
    FuzzSetupError,
    Scored,
    Trial,
    family_sample,
    fuzz_task,
)

PLATE = "procedural/plate_holes/test-0"  # a 50 x 53 x 11.5 mm plate with four 6 mm holes
MOVED = "\nresult = result.translate((1, 0, 0))\n"  # 1 mm off: fails, and scores about 0.75


def scored(step: float, final: float, passed: bool = False, error: str | None = None) -> Scored:
    return Scored(step, passed, final, passed, error, "")


@pytest.mark.parametrize(
    ("cheat", "near_miss", "verdict"),
    [
        (scored(0.2, 0.2), scored(0.7, 0.7), "caught"),
        (scored(0.8, 0.2), scored(0.7, 0.7), "escaped"),  # the trainer's tier pays it more
        (scored(0.2, 0.8), scored(0.7, 0.7), "escaped"),  # the exact tier pays it more
        (scored(0.1, 0.1, passed=True), scored(0.7, 0.7), "escaped"),  # it passes
        (scored(0.0, 0.0), scored(0.0, 0.0), "caught"),  # nothing to be below: a 0 is caught
        (scored(0.0, 0.0, error="script: ValueError: x"), scored(0.7, 0.7), "broken"),
        (scored(0.0, 0.0, error="invalid solid: not watertight"), scored(0.7, 0.7), "caught"),
    ],
)
def test_a_cheat_is_caught_only_below_the_near_miss_on_both_tiers(cheat, near_miss, verdict):
    trial = Trial("t/x", "x", "c", cheat, near_miss)
    assert ("broken" if trial.broken else "caught" if trial.caught else "escaped") == verdict
    report = FuzzReport([trial])
    assert report.by("family") == ({} if verdict == "broken" else {"x": (1, verdict == "caught")})
    assert (trial in report.escaped) == (verdict == "escaped")


def test_the_harness_plays_scripts_as_episodes_and_tells_escapes_from_catches():
    cheats = [
        Cheat("moved-2mm", "the part 2 mm off", lambda t: t.reference + MOVED.replace("1", "2")),
        Cheat("the-answer", "the reference itself", lambda t: t.reference),
        Cheat("broken", "a script that raises", lambda t: "raise ValueError('no')"),
        Cheat("not-here", "applies nowhere", lambda t: None),
    ]
    trials = fuzz_task(PLATE, cheats, near_miss=lambda t: t.reference + MOVED)
    by_name = {t.cheat: t for t in trials}
    assert set(by_name) == {"moved-2mm", "the-answer", "broken"}
    near = by_name["moved-2mm"].near_miss
    assert 0.6 < near.final_score < 0.9 and not near.passed
    moved = by_name["moved-2mm"]
    assert moved.caught and moved.scored.final_score < near.final_score
    answer = by_name["the-answer"]
    assert not answer.caught and answer.scored.passed and answer.scored.final_score > 0.99
    assert by_name["broken"].broken and "ValueError: no" in by_name["broken"].scored.error
    report = FuzzReport(trials)
    assert report.escaped == [answer] and report.broken == [by_name["broken"]]
    assert "1 of 2 caught; 1 broken" in report.markdown()


def test_a_near_miss_that_passes_cannot_anchor_a_run():
    cheat = Cheat("x", "x", lambda t: t.reference)
    with pytest.raises(FuzzSetupError, match="the near miss passes"):
        fuzz_task(PLATE, [cheat], near_miss=lambda t: t.reference)


def test_family_sample_takes_each_family_once_in_a_fixed_order():
    tasks = family_sample("cadquery")
    families = [t.family or t.id.split("/")[0] for t in tasks]
    assert len(families) == len(set(families)) and "plate_holes" in families
    assert "curated" in families  # a hand-written suite is fuzzed as a family of its own
    assert [t.id for t in family_sample("cadquery")] == [t.id for t in tasks]
    assert all(t.split == "test" for t in tasks)


def test_fuzz_cli_refuses_bad_input_in_one_line(tmp_path):
    runner = CliRunner()
    for args, words in (
        (["--domain", "nope"], "unknown domain 'nope'"),
        (["--split", "val"], "--split must be train or test"),
        (["--task", "curated/nope"], "curated/nope"),
        (["--task", PLATE, "--domain", "cadquery"], "not both"),
        (["--task", PLATE, "--cheat", "no-such-cheat"], "no-such-cheat"),
        (["--task", PLATE, "--json", str(tmp_path)], "is a folder"),
    ):
        result = runner.invoke(app, ["fuzz", *args])
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output, (args, result.output)


def test_fuzz_cli_reports_every_trial_and_exits_by_the_verdict(tmp_path):
    out = tmp_path / "fuzz.json"
    result = CliRunner().invoke(app, ["fuzz", "--task", PLATE, "--json", str(out)])
    assert result.exit_code in (0, 1), result.output
    data = json.loads(out.read_text())
    assert data["trials"] and all(t["task"] == PLATE for t in data["trials"])
    escaped = [t for t in data["trials"] if not t["caught"] and not t["broken"]]
    assert result.exit_code == (1 if escaped else 0)
    assert "cheats by family" in result.output and "plate_holes" in result.output
    assert get_task(PLATE).family == "plate_holes"
