"""The fixed rules every learned figure stands beside (issue 38): the keyword parser on text in
every style of the phrase bank, the depth measure rule and the RGB silhouette rule on the
primitives' image-only tasks, and the bench's verdict of whether a learned figure counts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from bench_scripts import bench_script

import toolgym  # noqa: F401 - registers the environments
from toolgym.agents.baselines import CopyInOrderAgent, KeywordAgent
from toolgym.envs.cadquery.families import family
from toolgym.envs.cadquery.families.phrases import STYLES
from toolgym.envs.cadquery.framing import family_framing
from toolgym.envs.cadquery.image_rules import LookingRule, MeasureRule, SilhouetteRule
from toolgym.envs.domains import get_domain

PRIMITIVE_TOOLS = ["add_box", "add_cylinder", "add_sphere"]


def _exact(got: str, expected: str) -> bool:
    got_call, want = json.loads(got), json.loads(expected)
    written = {k: got_call["arguments"].get(k) for k in want["arguments"]}
    # Inches are written to 4 decimals: within 0.003 mm of the reference.
    return got_call["name"] == want["name"] and written == pytest.approx(
        want["arguments"], abs=0.01
    )


@pytest.mark.parametrize("style", sorted(STYLES))
def test_the_keyword_rule_writes_every_primitive_in_every_style(style):
    """The phrase bank's every style of the primitives, held-out and recombined ones too, is
    read exactly by the keyword rule; the copy rule, whose numbers are read as the trainer reads
    them (mm, cm), misses every part said in inches."""
    registry = get_domain("cadquery").registry()
    keyword = KeywordAgent(registry, tools=PRIMITIVE_TOOLS)
    copy = CopyInOrderAgent(registry, PRIMITIVE_TOOLS)
    tasks = [family("primitive").task(seed, "test", style=style) for seed in range(12)]
    for task in tasks:
        assert _exact(keyword.act({"prompt": task.prompt}), task.tool_calls[0]), task.prompt
    copied = sum(_exact(copy.act({"prompt": t.prompt}), t.tool_calls[0]) for t in tasks)
    assert copied == (0 if STYLES[style].unit == "in" else len(tasks))


def test_the_keyword_rule_reads_a_paraphrase():
    """Words for the parts ("block", "ball"), numbers in words, units mixed, an upright
    cylinder along the tool's default axis."""
    keyword = KeywordAgent(get_domain("cadquery").registry(), tools=PRIMITIVE_TOOLS)
    prompt = "Centred at x = twenty-six mm, y = 28 mm, z = 2 cm: an upright cylinder 4.35 cm "
    prompt += "across and 3.15 cm tall."
    assert json.loads(keyword.act({"prompt": prompt})) == {
        "name": "add_cylinder",
        "arguments": {
            "x": 26.0,
            "y": 28.0,
            "z": 20.0,
            "diameter": 43.5,
            "height": 31.5,
            "axis": "Z",
        },
    }
    ball = json.loads(keyword.act({"prompt": "A ball 3 cm across, at (1, 2, 3) mm."}))
    assert ball["name"] == "add_sphere" and ball["arguments"]["diameter"] == 30.0


def test_the_keyword_rule_shares_a_unit_along_a_run_of_numbers():
    keyword = KeywordAgent(get_domain("cadquery").registry(), tools=PRIMITIVE_TOOLS)
    box = json.loads(keyword.act({"prompt": "A 1.5 × 2 × 0.5 cm block, at (1, -2, 0.5) cm."}))
    assert box == {
        "name": "add_box",
        "arguments": {
            "length": 15.0,
            "width": 20.0,
            "height": 5.0,
            "x": 10.0,
            "y": -20.0,
            "z": 5.0,
        },
    }


@pytest.fixture(scope="module")
def image_env():
    family_suite = bench_script("learn_cadquery").family_suite
    image_only_env = bench_script("rgb_ceiling").image_only_env
    folder = Path(tempfile.mkdtemp(prefix="toolgym-rules-"))
    env = image_only_env(family_suite("primitive", 0, 8, folder, framed=True), 64)
    yield env
    env.close()


def _targets(env) -> list[tuple[dict, str]]:
    """Each of the eight image-only test primitives: its first observation and reference call."""
    found = []
    for seed in range(8):
        obs, _ = env.reset(seed=0, options={"task": f"bench-primitive-0/test-{seed}"})
        found.append((obs, family("primitive").task(seed, "test").tool_calls[0]))
    return found


def test_the_measure_rule_writes_the_exact_call_from_the_depth_views(image_env):
    rule = MeasureRule(family_framing("primitive"))
    targets = _targets(image_env)
    kinds = {json.loads(call)["name"] for _, call in targets}
    assert kinds == set(PRIMITIVE_TOOLS)  # boxes, cylinders and spheres among them
    for obs, call in targets:
        assert _exact(rule.act(obs), call), call
    obs, _ = image_env.reset(seed=0, options={"task": "bench-primitive-0/test-2"})  # a sphere
    _, reward, *_ = image_env.step(rule.act(obs))
    assert reward == pytest.approx(1.0, abs=1e-9)


def test_the_silhouette_rule_reads_the_tool_and_each_size_to_a_pixel(image_env):
    """From the RGB views alone: the right tool, each number within about a pixel (3.6 mm at
    64 px) and none exact enough for the exact tier's pass on every task."""
    framing = family_framing("primitive")
    rule = SilhouetteRule(framing)
    pitch = 2 * framing.half_width / 64
    errors = []
    for obs, call in _targets(image_env):
        got, want = json.loads(rule.act(obs)), json.loads(call)
        assert got["name"] == want["name"], (got, want)
        errors += [abs(got["arguments"][k] - v) for k, v in want["arguments"].items()]
    assert max(errors) <= 1.5 * pitch and np.mean(errors) <= 0.5 * pitch
    assert max(errors) > 0.25  # the pixels' limit: some number is off the 0.5 mm grid's value


def test_the_looking_rule_reads_the_same_64_px_views_exactly_with_the_look_call(image_env):
    """The silhouette rule with ``look``: an overview, then a zoom-16 look on each face of the
    part's box (a look's cameras stand outside the part: a clipped view would show nothing at
    a big part's edge), then the exact call, within the env's eight steps."""
    rule = LookingRule(family_framing("primitive"))
    for seed in range(8):
        obs, _ = image_env.reset(seed=0, options={"task": f"bench-primitive-0/test-{seed}"})
        call, actions = family("primitive").task(seed, "test").tool_calls[0], []
        while not actions or json.loads(actions[-1])["name"] == "look":
            actions.append(rule.act(obs))
            obs, reward, *_, info = image_env.step(actions[-1])
            looked = json.loads(actions[-1])["name"] == "look"
            assert "error" not in info and (reward == 0.0) == looked  # a look earns nothing
        assert _exact(actions[-1], call), (actions, call)
        assert info["report"]["passed"] and len(actions) <= 8


def test_the_bench_judges_a_learned_figure_against_the_best_fixed_rule_beside_it():
    judged = bench_script("learn_cadquery").judged

    def row(method, score, steps=0, rule=False, group="styles"):
        out = {"method": method, "env_steps": steps, "bc_env_steps": 0, "group": group}
        return out | {"test": {"score": score}} | ({"fixed_rule": True} if rule else {})

    rows = judged(
        [
            row("copy", 0.3, rule=True),
            row("keyword", 0.7, rule=True),
            row("untrained", 0.2),
            row("learned", 0.95, steps=64),
            row("learned elsewhere", 0.5, steps=64, group="image"),
            row("measure", 0.1, rule=True, group="image"),
        ]
    )
    by = {r["method"]: r for r in rows}
    assert by["learned"]["over_fixed_rule"] == pytest.approx(0.25) and by["learned"]["counts"]
    assert by["learned elsewhere"]["over_fixed_rule"] == pytest.approx(0.4)
    assert "over_fixed_rule" not in by["untrained"]  # nothing learnt: not judged


def test_the_bench_rules_run_on_a_suite_without_a_training_split(tmp_path):
    """The copy and keyword rules on a suite of test tasks only pick among every tool."""
    bench = bench_script("learn_cadquery")
    family_suite, run_copy_rule = bench.family_suite, bench.run_copy_rule
    run_keyword_rule = bench.run_keyword_rule

    from toolgym.agents.trainer.train import TrainConfig

    suite = family_suite("primitive", 0, 2, tmp_path, styles={"test": ("imperial",)}, tag="in")
    config = TrainConfig(suite=suite, max_steps=1, num_envs=1, progress=False, out=str(tmp_path))
    keyword, copy = run_keyword_rule(config, None), run_copy_rule(config, None)
    assert keyword["test"]["episodes"] == copy["test"]["episodes"] == 2
    assert keyword["test"]["score"] > 0.999  # inches converted (written to 4 decimals)
    assert copy["test"]["score"] < 0.5 and keyword["fixed_rule"] and copy["fixed_rule"]


def _styled(name: str, seeds: range, split: str):
    from toolgym.envs.cadquery.families.phrases import TRAIN_STYLES

    return [family(name).task(s, split, style=TRAIN_STYLES[s % len(TRAIN_STYLES)]) for s in seeds]


def test_the_template_rule_refills_the_nearest_worked_example():
    """Given ten worked examples of each of three families, the template rule writes unseen
    seeds' calls exactly: each value rebuilt from the request's numbers as the example's came
    from its own (enclosure: the box's z is half its height; plate_holes: a hole's x and y are
    half the side less the inset, a sum of two numbers); then it stops."""
    from toolgym.agents.template_rule import TemplateAgent

    names = ("enclosure", "plate_holes", "finished_block")
    examples = [(t.prompt, t.tool_calls) for n in names for t in _styled(n, range(10), "train")]
    rule = TemplateAgent(examples)
    for name in names:
        for task in _styled(name, range(3), "test"):
            want = [json.loads(c) for c in task.tool_calls]
            assert [json.loads(c) for c in rule.plan(task.prompt)] == want, (name, task.prompt)
    task = _styled("plate_holes", range(1), "test")[0]
    played = [rule.act({"prompt": task.prompt, "step": k}) for k in range(len(task.tool_calls) + 1)]
    assert played[:-1] == rule.plan(task.prompt)
    assert json.loads(played[-1])["name"] == "stop"


def test_the_template_rule_writes_the_nearest_family_for_a_part_it_has_no_example_of():
    """A held-out family (no example of it) gets the calls of the nearest example in words,
    refilled from the request: a collar with a set screw, from flanged bushings, shafts and
    plates, gets one example's sequence of tools with the collar's sizes in it."""
    from toolgym.agents.baselines import read_numbers
    from toolgym.agents.template_rule import TemplateAgent

    names = ("bushing_flanged", "stepped_shaft", "plate_holes")
    examples = [(t.prompt, t.tool_calls) for n in names for t in _styled(n, range(5), "train")]
    task = _styled("collar_set_screw", range(1), "test")[0]
    plan = [json.loads(c) for c in TemplateAgent(examples).plan(task.prompt)]
    sequences = {tuple(json.loads(c)["name"] for c in calls) for _, calls in examples}
    assert tuple(call["name"] for call in plan) in sequences
    written = {value for value, _, _ in read_numbers(task.prompt)}
    numbers = np.ravel(np.asarray(plan[0]["arguments"]["points"], float))
    assert written & set(numbers.tolist())  # the request's sizes, in the example's places
    with pytest.raises(ValueError, match="worked examples"):
        TemplateAgent([])


def test_the_bench_writes_several_families_in_one_suite_and_its_grammar_ceiling(tmp_path):
    """The all-families section's suite: tasks named by family (reports group them), a test
    split of other families where asked; the grammar ceiling of one run over them is exact on
    families its bins and derived values express (enclosure, finished_block)."""
    from toolgym.envs.tasks.suites import get_suite

    family_suite = bench_script("learn_cadquery").family_suite
    suite_ceiling = bench_script("grammar_ceiling").suite_ceiling
    names = ["enclosure", "finished_block"]
    mixed = get_suite(family_suite(names, 30, 1, tmp_path, framed=True, tag="two"))
    assert [t.id for t in mixed.split("test")] == [
        "bench-two/enclosure/test-0", "bench-two/finished_block/test-0",
    ]  # fmt: skip
    assert {t.family for t in mixed.tasks} == set(names)
    held = family_suite(names, 1, 1, tmp_path, tag="held", test_families=["pillow_block"])
    assert [t.id for t in get_suite(held).split("test")] == ["bench-held/pillow_block/test-0"]
    ceiling = suite_ceiling(str(tmp_path / "bench-two.toml"), 256, derived=True)
    assert ceiling["families"] == pytest.approx({"enclosure": 1.0, "finished_block": 1.0})
    assert ceiling["tasks"] == 2 and ceiling["mean"] == pytest.approx(1.0)
