"""A grammar over many CAD families at once: exact copies of the prompt's numbers, one range of
coordinate tokens for all of a polygon's points, and derived values counted per family."""

from __future__ import annotations

import dataclasses
import json

import torch
from test_grammar import copying_policy, every_sequence, tiny

from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.envs.grammar import CallContext, Derived, Grammar
from toolgym.envs.grammar.vocabulary import suite_derived


def _slot(grammar: Grammar, tool: str, param: str):
    return next(s for s in grammar.slots[tool] if s.param == param)


def test_shared_points_say_the_same_calls_with_one_range_per_axis():
    plain = Grammar(tiny, max_points=4)
    shared = Grammar(tiny, max_points=4, shared_points=True)
    coords = [s for s in shared.slots["poly"] if s.kind == "coord"]
    assert len(coords) == 8 and len({s.start for s in coords}) == 2  # one range per axis
    assert plain.vocab_size - shared.vocab_size == 6 * 2  # 6 of the 8 ranges (2 bins) gone
    said = {json.dumps(plain.decode(s)) for s in every_sequence(plain)}
    assert {json.dumps(shared.decode(s)) for s in every_sequence(shared)} == said
    triangle = {"name": "poly", "arguments": {"points": [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]}}
    assert shared.decode(shared.encode(triangle)) == triangle
    again = Grammar.from_description(tiny, shared.describe())  # a checkpoint's grammar
    assert again.vocab_size == shared.vocab_size and again.shared_points


def test_shared_points_cap_the_count_at_max_points():
    ranges = {"poly.points": {"count": (3, 6)}}
    assert Grammar(tiny, ranges, max_points=4).length == 2 + 1 + 2 * 6
    shared = Grammar(tiny, ranges, max_points=4, shared_points=True)
    assert shared.length == 2 + 1 + 2 * 4
    hexagon = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    call = shared.decode(shared.encode({"name": "poly", "arguments": {"points": hexagon}}))
    assert call["arguments"]["points"] == hexagon[:4]


def test_copies_say_a_prompt_number_exactly_on_a_bin_or_off_it():
    grammar = Grammar(tiny, max_points=4, copies=2)
    plain = Grammar(tiny, max_points=4)
    # dx and the 8 coordinates (real-valued) take 2 copy tokens each; choices and counts none.
    assert grammar.vocab_size - plain.vocab_size == 2 * (1 + 8)
    assert not _slot(grammar, "move", "flip").derived
    context = CallContext((0.7, 0.5))
    move = {"name": "move", "arguments": {"dx": 0.7, "flip": "no"}}
    tokens = grammar.encode(move, context)
    assert grammar.value_of_token[tokens[1]] == Derived("copy", 0)
    assert grammar.decode(tokens, context)["arguments"]["dx"] == 0.7  # no bin holds 0.7
    on_bin = grammar.encode({"name": "move", "arguments": {"dx": 0.5}}, context)
    assert grammar.value_of_token[on_bin[1]] == Derived("copy", 1)  # the pointer's token
    assert grammar.copy_token[grammar.ops.index("move"), 1].tolist() == [tokens[1], on_bin[1]]
    assert grammar.decode(grammar.encode(move))["arguments"]["dx"] == 0.5  # no context: a bin
    points = [[0.0, 0.0], [0.7, 0.0], [0.0, 0.5]]
    triangle = {"name": "poly", "arguments": {"points": points}}
    assert grammar.snap(triangle, context)["arguments"]["points"] == points
    assert plain.snap(triangle)["arguments"]["points"] != points
    again = Grammar.from_description(tiny, grammar.describe())
    assert again.decode(tokens, context) == grammar.decode(tokens, context)


def test_the_pointer_copies_a_prompt_number_exactly_where_the_grammar_has_copies():
    grammar = Grammar(tiny, max_points=4, copies=1)
    policy, batch, sequences = copying_policy(grammar, 0.7)  # between move.dx's bins 0.5 and 1
    with torch.no_grad():
        p = policy.evaluate(batch, sequences)[0].double().exp()
    context = CallContext((0.7,))
    dx = [grammar.decode(s.tolist(), context)["arguments"]["dx"] for s in sequences]
    share = sum(pi for pi, d in zip(p.tolist(), dx, strict=True) if d == 0.7) / p.sum().item()
    assert share > 0.999


def test_a_reading_one_family_always_uses_is_kept_when_counted_per_family():
    """Two episodes of one family place ``dx`` at half the prompt's number; sixty of another copy
    it: across all 62 the half is a coincidence's share (2 < 5 %), within its family it is all."""
    grammar = Grammar(tiny, max_points=4)
    halves = [((1.0,), [{"name": "move", "arguments": {"dx": 0.5}}])] * 2
    copies = [((1.0,), [{"name": "move", "arguments": {"dx": 1.0}}])] * 60
    assert suite_derived(grammar, halves + copies) == {"move.dx": ["copy:0"]}
    grouped = suite_derived(grammar, halves + copies, groups=["a"] * 2 + ["b"] * 60)
    assert grouped == {"move.dx": ["copy:0", "half:0"]}


def test_a_polygons_coordinates_take_derived_values_in_a_shared_grammar():
    """A profile's radius is half the diameter a prompt gives: with shared points, a polygon's
    coordinates are read for derived values as a value's slot is, and said exactly."""
    points = [[0.0, 0.0], [0.5, 0.0], [0.5, 0.25]]  # no bin (0 or 1) holds 0.5 or 0.25
    episodes = [((1.0, 0.5), [{"name": "poly", "arguments": {"points": points}}])] * 3
    assert suite_derived(Grammar(tiny, max_points=4), episodes) == {}
    shared = Grammar(tiny, max_points=4, shared_points=True)
    derived = suite_derived(shared, episodes)
    assert derived == {"poly.points.a": ["copy:1"], "poly.points.b": ["half:1"]}
    grammar = Grammar(tiny, max_points=4, shared_points=True, derived=derived)
    call = {"name": "poly", "arguments": {"points": points}}
    assert grammar.snap(call, CallContext((1.0, 0.5)))["arguments"]["points"] == points
    assert shared.snap(call, CallContext((1.0, 0.5)))["arguments"]["points"] != points


def test_anchored_bins_hold_zero_and_round_numbers_within_max_bins():
    """A range from -50.25 mm, widened to 2 mm steps, counted from its low end holds no 0 (a
    centred part's position); anchored, its bins are multiples of the step and both ends."""
    from toolgym.envs.cadquery.tools import registry

    ranges = {"add_box.x": (-50.25, 60.0)}
    plain = _slot(Grammar(registry, ranges, max_bins=64, tools=["add_box"]), "add_box", "x")
    grammar = Grammar(registry, ranges, max_bins=64, tools=["add_box"], anchored=True)
    anchored = _slot(grammar, "add_box", "x")
    assert 0.0 not in plain.values and 0.0 in anchored.values
    assert len(anchored.values) <= 64 and anchored.values[0] == -50.25
    assert anchored.values[-1] == 60.0
    step = anchored.values[2] - anchored.values[1]
    assert all(abs(v / step - round(v / step)) < 1e-9 for v in anchored.values[1:-1])
    box = {"name": "add_box", "arguments": {"length": 10, "width": 10, "height": 10, "x": 0.0}}
    assert grammar.snap(box)["arguments"]["x"] == 0.0
    assert Grammar.from_description(registry, grammar.describe()).anchored


def test_a_run_over_several_families_builds_the_shared_grammar_and_samples_by_family(tmp_path):
    """``TrainConfig``'s grammar options reach the run's grammar (and its checkpoint's
    description), and the weakness sampler weighs families, not tasks, where a suite has
    several."""
    from bench_scripts import bench_script

    from toolgym.agents.trainer.ppo import PPOConfig
    from toolgym.agents.trainer.train import TrainConfig, Trainer

    family_suite = bench_script("learn_cadquery").family_suite
    names = ["enclosure", "finished_block"]
    suite = family_suite(names, 3, 1, tmp_path, framed=True, tag="two")
    small = PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=64, feedback_bytes=8)
    config = TrainConfig(
        suite=suite, steps=2, num_envs=1, num_steps=2, view_size=16, out=str(tmp_path / "run"),
        progress=False, policy=small, asynchronous=False, ppo=PPOConfig(num_minibatches=1),
        copies=4, shared_points=True, anchored_bins=True,
    )  # fmt: skip
    trainer = Trainer(config)
    grammar = trainer.grammar
    assert (grammar.copies, grammar.shared_points, grammar.anchored) == (4, True, True)
    assert grammar.describe()["copies"] == 4
    assert trainer.sampler.groups == names
    trainer.train(resume=False)  # an iteration's log has no tool columns to fill from families
    assert trainer.env_steps == 2 and (tmp_path / "run" / "progress.csv").exists()
    plain = Trainer(dataclasses.replace(config, suite="primitives", out=str(tmp_path / "plain")))
    assert plain.sampler.groups is None
