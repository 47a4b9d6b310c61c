"""Learning on toolgym/CadQuery-v0 in tool mode, beside the baselines that cannot be fooled.

At equal environment-step budgets (tool calls; behaviour cloning's oracle episodes are counted
apart), each method trains on the primitives suite's training split and is scored on its test
split (every test task once, greedy calls for the learners). In the same run (``--sections``):

Every section stands its learned figures beside **the fixed rules on the same inputs** its policy
gets, nothing learnt: the copy-in-order rule and the keyword rule (``KeywordAgent``: the tool from
the words, each number from the words beside it, units converted) on text; the depth measure
rule (``toolgym.envs.cadquery.image_rules.MeasureRule``) on depth views and the RGB silhouette
rule (``SilhouetteRule``) on the pictures. Each learned row's last column is its margin over the
best of them: **a learned figure counts only at +0.2 or more** (:data:`COUNTS`).

- ``primitives``: random calls, the untrained start (the bundled policy before any update), the
  copy and keyword rules, PPO from scratch, BC + PPO with its
  ablations (images zeroed, target images swapped between tasks, prompt blanked), SB3's PPO and
  sb3-contrib's MaskablePPO on the grammar's bins (``StandardSpaces``), and the like-for-like
  peer (``sb3-peer``): MaskablePPO on ``TrainerSpaces``, the trainer's own observation arrays
  and tokens (a copy of any prompt number in every numeric slot, derived values, stop) with the
  grammar's masks.
- ``paraphrased``: the primitives reworded (sizes in another order, cm and mm mixed, numbers in
  words): random calls, the untrained start, the copy and keyword rules, the like-for-like peer,
  and BC + PPO with its ablations.
- ``styles``: the primitives in the phrase bank's training styles (``--style-train-seeds``), one
  BC + PPO policy scored on unseen seeds in the **recombined** styles (the training styles' words
  and forms in combinations no training prompt uses) and in the **held-out** styles (words,
  radii and inches no training prompt uses), each beside random calls, the untrained start, the
  copy and keyword rules and the like-for-like peer.
- ``image``: image-only primitives (``prompt_form="image"``): random calls, the untrained start,
  the copy rule (the prompt has no number to copy), the measure rule (with depth) and the
  silhouette rule, the like-for-like peer and PPO from scratch
  at equal env steps, BC + PPO with its ablations (images zeroed, target images swapped, the
  depth with them); 64-pixel views with the env's depth (``--image-inputs depth``, the
  default): the policy reads the depth views and its pointer copies numbers measured off them
  (``PolicyConfig.depth``, ``measure``); ``--image-inputs rgb``: the pictures alone (the CNN
  given the target less the current view, CoordConv channels, max-pooled features,
  soft-binned cloning targets; ``--image-view-size``, ``--image-size``, ``--image-bin-sigma``).
- ``image-holes``: image-only plate_holes (a plate and four through-holes, 2 to 20 mm across,
  seen only as 64-pixel RGB views: 2.84 mm a pixel; no depth, no hand-written measures; or
  another family of plates with ``--holes-family``, plate_angled_slots' tilted slots): random
  calls, the untrained start, the plate-and-holes rule (``toolgym.envs.cadquery.hole_rules``) on
  the task's own views and with looks (closer views asked for with the env's ``look`` call, up
  to :data:`HOLE_STEPS` steps; the trainer's grammar cannot say ``look``), the like-for-like
  peer, and BC + PPO from the pictures (``--holes-train-seeds``, ``--holes-bc-steps``,
  ``--holes-steps``, ``--holes-image-size``) with its images zeroed.
- ``families``: BC + PPO on enclosure, plate_holes and stepped_shaft (derived values, stop),
  beside random calls, the untrained start, the copy and keyword rules (one call, then stop)
  and the like-for-like peer on the same grammar. Each table row gives the test mean score,
  the success rate, the mean calls per episode (a stop counts as one) and, in brackets, how
  many episodes the policy ended with stop (a part that passes ends its episode by itself).
  The template rule (``TemplateAgent``: the nearest training prompt's calls, refilled from the
  request's numbers) is this section's fair fixed rule: a per-family template filled by
  keywords, where the copy and keyword rules make one call.
- ``all-families``: the 51 training families at once (``--all-train-seeds`` each, in the
  training styles), scored on unseen seeds of each (``--all-test-seeds``) said in the training
  styles, in recombined wording and in held-out words, and on the 10 held-out families: random
  calls, the untrained start and the copy, keyword and template rules, beside the grammar's
  ceiling (the oracle's calls in the grammar the run builds: the most any policy acting in it
  can score); with ``bc``, one BC + PPO run over them (``--all-bc-steps`` at
  ``--all-bc-batch``, then ``--all-steps`` of PPO), scored on all four test splits. Its grammar
  (:data:`ALL_FAMILIES_GRAMMAR`) copies prompt numbers exactly, says every point of a polygon
  with one range of tokens per axis (16 points at most: gear, sprocket and pulley profiles of
  26 to 255 points cannot be said) and anchors its bins on their step: 13,878 tokens and a
  ceiling of 0.755 on the unseen seeds, where the registry's own layout gave 146,432 tokens
  and 0.600. bench/RESULTS.md has the figures.

Writes the learning curves (training score against steps) to ``--plot`` and every figure to
``--json``; prints Markdown tables for bench/RESULTS.md.

Targets (full budget, 2-core machine, ≤ 30 min): PPO from scratch ≥ 0.7 mean test score; BC + PPO
≥ 0.9; both clearly above random and at least the like-for-like peer + 0.2 at equal env steps;
trainer SPS ≥ SB3's; on each of the
families BC + PPO ≥ 0.7, its episodes ended by stop (or by a passing part). PPO after cloning
(every BC + PPO row) runs at learning rate 1e-4 without an entropy bonus (``--tune-lr``,
``--tune-ent-coef``) and within ``--tune-target-kl`` (0.02), so that it keeps what cloning
learnt: at PPO's defaults one update of a cloned enclosure policy turned its shell into a
second fillet on every test seed (0.099 against 0.981), and 1024 calls took the paraphrased
primitives from 1.00 to about 0.5. PPO from scratch runs at PPO's defaults (``--lr``,
``--ent-coef``).

    .venv/bin/python bench/learn_cadquery.py                      # every section: hours
    .venv/bin/python bench/learn_cadquery.py --sections image-holes   # ~35 min
    .venv/bin/python bench/learn_cadquery.py --steps 256 --bc-steps 100 --family-steps 64
    .venv/bin/python bench/learn_cadquery.py --sections paraphrased image --steps 128

A primitive is one call, so the primitives' episodes are one call long (``max_steps=1``): every
step is a fresh task. The multi-step family (``finished_block`` by default: a block, then its
fillet or chamfer, two calls) gets up to four calls per episode.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolgym.agents.trainer.evaluate import evaluate_policy, summarize
from toolgym.agents.trainer.policy import PolicyConfig
from toolgym.agents.trainer.ppo import PPOConfig
from toolgym.agents.trainer.train import TrainConfig, Trainer
from toolgym.envs.cadquery.families import FAMILIES, HELD_OUT_FAMILIES
from toolgym.envs.cadquery.families import family as get_family
from toolgym.envs.cadquery.families.phrases import (
    HELD_OUT_STYLES,
    RECOMBINED_STYLES,
    TRAIN_STYLES,
)
from toolgym.envs.tasks.suites import get_suite

HERE = Path(__file__).resolve().parent


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


def family_suite(
    name: str | Sequence[str],
    train: int,
    test: int,
    folder: Path,
    reword: Callable[[dict[str, Any], int], str] | None = None,
    framed: bool = False,
    styles: dict[str, tuple[str, ...]] | None = None,
    tag: str | None = None,
    test_families: Sequence[str] | None = None,
) -> str:
    """A suite file holding ``train`` and ``test`` seeds of a procedural family (or of each of
    several: tasks named ``<family>/<split>-<seed>``, so reports group them by family);
    ``test_families``: other families for the test split (held-out families); ``reword``:
    each prompt rewritten from the task's parameters (and a seed); ``framed``: the tasks name
    their family, so their views share its fixed frame (as the generated suites' do);
    ``styles``: per split, the phrase bank's styles its prompts are said in (seed ``s`` takes
    ``styles[split][s % len]``, as the generated suites do); ``tag``: the suite's name after
    ``bench-`` (default: from the family and options)."""
    names = [name] if isinstance(name, str) else list(name)
    several = len(names) > 1 or test_families is not None
    if tag is None:
        tag = "paraphrased" if reword else f"{names[0]}-{train}" if framed else names[0]
    lines = [f'[suite]\nname = "bench-{tag}"\ndomain = "cadquery"\n']
    for split, count, families in (
        ("train", train, names),
        ("test", test, names if test_families is None else list(test_families)),
    ):
        for family_name, seed in itertools.product(families, range(count)):
            style = styles[split][seed % len(styles[split])] if styles else "spec"
            task = get_family(family_name).task(seed, split, style=style)
            calls = [json.loads(c) for c in task.tool_calls or ()]
            prompt = (
                reword(dict(task.parameters), 2 * seed + (split == "test"))
                if reword
                else (task.prompt)
            )
            task_name = f"{family_name}/{split}-{seed}" if several else f"{split}-{seed}"
            lines.append(
                f'[[task]]\nname = "{task_name}"\nprompt = {json.dumps(prompt)}\n'
                f'difficulty = {task.difficulty}\nsplit = "{split}"\n'
                + (f'family = "{family_name}"\n' if framed else "")
                + f"parameters = {_toml_value(dict(task.parameters))}\n"
                f"reference = '''\n{task.reference}'''\ntool_calls = {_toml_value(calls)}\n"
            )
    path = folder / f"bench-{tag}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return str(path)


def run_trainer(
    label: str,
    config: TrainConfig,
    eval_episodes: int | None,
    ablations: tuple[str, ...] = (),
    also: dict[str, TrainConfig] | None = None,
) -> dict[str, Any]:
    """Train, then score on the test split; each of ``ablations`` (:data:`ABLATIONS`) scores the
    same policy again on what it names; ``also``: rows (in ``"also"``) of the same policy on
    other configs' test splits (the same training split, other test tasks)."""
    started = time.perf_counter()
    trainer = Trainer(config, log=lambda line: print(f"  [{label}] {line}", flush=True))
    trainer.train(resume=False)
    seconds = time.perf_counter() - started
    curve = _curve(Path(config.out) / "progress.csv")
    report = evaluate_policy(trainer.policy, trainer.grammar, config, "test", eval_episodes)
    sps = float(np.mean([row["sps"] for row in curve])) if curve else math.nan
    ablated = {
        name: _short(
            evaluate_policy(
                trainer.policy,
                trainer.grammar,
                config,
                "test",
                eval_episodes,
                transform=ABLATIONS[name],
            )
        )
        for name in ablations
    }
    row = {
        "method": label,
        "env_steps": trainer.env_steps,
        "bc_env_steps": trainer.bc_env_steps,
        "train_seconds": seconds,
        "sps": sps,
        "curve": curve,
        "test": _short(report),
        "ablations": ablated,
        "grammar_vocab": trainer.grammar.vocab_size,
    }
    base = dict(row)  # each other row: this one's training, another test split
    for name, other in (also or {}).items():
        other_report = evaluate_policy(
            trainer.policy, trainer.grammar, other, "test", eval_episodes
        )
        kind = name.split(", ")[-1]
        extra = {"method": name, "curve": [], "ablations": {}, "kind": kind}
        row.setdefault("also", []).append(base | extra | {"test": _short(other_report)})
    return row


def _zero_images(obs: dict[str, Any]) -> dict[str, Any]:
    """The views black and, where there is depth, no part in it (``-inf`` everywhere)."""
    depth = {k: np.full_like(obs[k], -np.inf) for k in ("depth", "target_depth") if k in obs}
    return obs | {k: np.zeros_like(obs[k]) for k in ("image", "target")} | depth


def _swap_targets(obs: dict[str, Any]) -> dict[str, Any]:
    """Each env sees the next env's target (another task's); one env: the target upside down.
    The target's depth goes with its image."""

    def swapped(target: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(
            np.roll(target, 1, axis=0) if len(target) > 1 else target[:, ::-1]
        )

    return obs | {k: swapped(obs[k]) for k in ("target", "target_depth") if k in obs}


def _blank_prompt(obs: dict[str, Any]) -> dict[str, Any]:
    return obs | {"prompt": np.asarray([""] * len(obs["prompt"]), dtype=object)}


ABLATIONS = {
    "images zeroed": _zero_images,
    "targets swapped": _swap_targets,
    "prompt blanked": _blank_prompt,
}


def run_untrained(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """The bundled policy before any update (its copy prior and all), greedy."""
    trainer = Trainer(config, log=lambda line: None)
    report = evaluate_policy(trainer.policy, trainer.grammar, config, "test", eval_episodes)
    return _baseline("untrained start", report)


def rule_tools(config: TrainConfig) -> tuple[Any, list[str]]:
    """The env's registry and the tools a fixed rule picks among: those of the suite's training
    references (the grammar's), or on a suite with no training split every tool."""
    from toolgym.agents.trainer.build import build_grammar, env_registry
    from toolgym.envs.grammar import STOP_TOOL

    registry = env_registry(config.env_id, config.suite)
    if not config.tasks("train"):
        return registry, sorted(registry.tools)
    grammar = build_grammar(config.env_id, config.suite, config.max_bins, config.all_tools)
    return registry, [op for op in grammar.ops if op != STOP_TOOL]


def run_rule(
    label: str, agent: Any, config: TrainConfig, eval_episodes: int | None, one_call: bool = True
) -> dict:
    """A fixed rule (``agent.act(observation)``, one env's observation) on the test split, as
    the learners are scored: every test task once (or ``eval_episodes``), same env options.
    ``one_call``: it makes its one call, then stops (``OneCall``); else it says when to stop.
    Each env plays its own copy of the rule, so a rule may keep what it read in an episode."""
    from toolgym.agents.baselines import OneCall
    from toolgym.agents.trainer.vector import make_vector_env, play_queued

    played = [copy.deepcopy(OneCall(agent) if one_call else agent) for _ in range(config.num_envs)]
    tasks = [t.id for t in config.tasks("test")]
    queue = [tasks[k % len(tasks)] for k in range(eval_episodes or len(tasks))]
    vec = make_vector_env(
        config.env_id,
        tasks,
        config.num_envs,
        True,
        **dict(config.env_kwargs(evaluation=True), split="test"),
    )

    def act(obs: dict[str, Any], current: list[str]) -> list[str]:
        return [played[i].act({k: v[i] for k, v in obs.items()}) for i in range(len(current))]

    try:
        results = play_queued(vec, queue, act, seed=config.seed)
    finally:
        vec.close()
    return _baseline(label, summarize(results, "test")) | {"fixed_rule": True}


def run_copy_rule(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """``CopyInOrderAgent``: the prompt's numbers in order, nothing learnt."""
    from toolgym.agents.baselines import CopyInOrderAgent

    registry, tools = rule_tools(config)
    return run_rule("copy-in-order rule", CopyInOrderAgent(registry, tools), config, eval_episodes)


def run_keyword_rule(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """``KeywordAgent`` over the same tools: each number from the words beside it, units
    converted, a radius doubled; nothing learnt."""
    from toolgym.agents.baselines import KeywordAgent

    registry, tools = rule_tools(config)
    return run_rule("keyword rule", KeywordAgent(registry, tools=tools), config, eval_episodes)


def run_template_rule(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """``TemplateAgent``: the nearest training prompt's reference calls, their numbers
    rewritten from the request's as they came from the example's; nothing learnt."""
    from toolgym.agents.baselines import DOMAIN_UNIT_METRES
    from toolgym.agents.template_rule import TemplateAgent

    examples = [(t.prompt, t.tool_calls or ()) for t in config.tasks("train")]
    domain = get_suite(config.suite).domain
    rule = TemplateAgent(examples, DOMAIN_UNIT_METRES.get(domain, 1.0))
    return run_rule("template rule", rule, config, eval_episodes, one_call=False)


def run_measure_rule(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """``MeasureRule``: the target's depth tile read for a primitive, nothing learnt."""
    from toolgym.envs.cadquery.framing import family_framing
    from toolgym.envs.cadquery.image_rules import MeasureRule

    rule = MeasureRule(family_framing("primitive"))
    return run_rule("depth measure rule", rule, config, eval_episodes)


def run_silhouette_rule(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """``SilhouetteRule``: the target's RGB tile read for a primitive, nothing learnt."""
    from toolgym.envs.cadquery.framing import family_framing
    from toolgym.envs.cadquery.image_rules import SilhouetteRule

    rule = SilhouetteRule(family_framing("primitive"))
    return run_rule("RGB silhouette rule", rule, config, eval_episodes)


def run_hole_rule(
    config: TrainConfig, eval_episodes: int | None, looks: bool = False
) -> dict[str, Any]:
    """``PlateHoleRule``: a plate and its through-holes and slots read off the target's RGB
    tile, nothing learnt; with ``looks``, closer views asked for first (up to
    :data:`HOLE_STEPS` steps). The frame and the steps are those of the family the suite's
    tasks name."""
    from toolgym.envs.cadquery.framing import family_framing
    from toolgym.envs.cadquery.hole_rules import PlateHoleRule

    family_name = get_suite(config.suite).tasks[0].family
    rule = PlateHoleRule(family_framing(family_name), looks=looks)
    if looks:
        config = dataclasses.replace(config, max_steps=HOLE_STEPS[family_name])
    label = "RGB plate-and-holes rule" + (" with looks" if looks else "")
    return run_rule(label, rule, config, eval_episodes, one_call=False)


def _baseline(label: str, report: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": label,
        "env_steps": 0,
        "bc_env_steps": 0,
        "train_seconds": 0.0,
        "sps": math.nan,
        "curve": [],
        "test": _short(report),
    }


def _curve(path: Path) -> list[dict[str, float]]:
    import csv

    with path.open() as handle:
        return [
            {
                "env_steps": float(r["env_steps"]),
                "score": float(r["score"] or "nan"),
                "success_rate": float(r["success_rate"] or "nan"),
                "sps": float(r["sps"]),
            }
            for r in csv.DictReader(handle)
        ]


def _short(report: dict[str, Any]) -> dict[str, Any]:
    """A report's means (and, where it has several families, each family's)."""
    keys = ("episodes", "score", "success_rate", "steps", "stopped")
    several = len(report.get("families", ())) > 1
    return {k: report[k] for k in (*keys, *(("families",) if several else ())) if k in report}


WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")  # fmt: skip
TENS_WORDS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def say(value: float, rng: np.random.Generator) -> str:
    """A length in mm as a person might write it: in mm or cm, in digits or (a whole number of
    mm under 100) in words."""
    if 0 <= value < 100 and value == int(value) and rng.random() < 0.35:
        n = int(value)
        tail = f"-{WORDS[n % 10]}" if n % 10 else ""
        return f"{WORDS[n] if n < 20 else TENS_WORDS[n // 10] + tail} mm"
    if rng.random() < 0.4:
        return f"{value / 10:g} cm"
    return f"{value:g} mm"


def paraphrase(params: dict[str, Any], seed: int) -> str:
    """A primitive's request reworded: the place before or after the size, the sizes named in
    another order, units mixed, some numbers in words; copying in order does not work."""
    rng = np.random.default_rng([seed, 7])
    at = f"x = {say(params['x'], rng)}, y = {say(params['y'], rng)}, z = {say(params['z'], rng)}"
    if params["kind"] == "box":
        sizes = [
            ("tall", params["height"]),
            ("long in X", params["length"]),
            ("wide in Y", params["width"]),
        ]
        order = rng.permutation(3)
        shape = "a block " + ", ".join(f"{say(sizes[i][1], rng)} {sizes[i][0]}" for i in order)
    elif params["kind"] == "cylinder":
        sizes = [("tall", params["height"]), ("across", params["diameter"])]
        order = rng.permutation(2)
        shape = "an upright cylinder " + " and ".join(
            f"{say(sizes[i][1], rng)} {sizes[i][0]}" for i in order
        )
    else:
        shape = f"a ball {say(params['diameter'], rng)} across"
    if rng.random() < 0.5:
        return f"Centred at {at}: {shape}."
    return f"{shape[0].upper()}{shape[1:]}, its centre at {at}."


def paraphrased_suite(train: int, test: int, folder: Path) -> str:
    """The primitives with reworded prompts (:func:`paraphrase`), as a suite file."""
    return family_suite("primitive", train, test, folder, reword=paraphrase)


def run_random(config: TrainConfig, eval_episodes: int | None) -> dict[str, Any]:
    """Uniformly random calls of the trainer's grammar (every token drawn among the allowed
    ones: derived values and stop too, where the grammar has them)."""
    from toolgym.agents.trainer.build import run_grammar
    from toolgym.agents.trainer.observations import observe
    from toolgym.agents.trainer.vector import make_vector_env, play_queued
    from toolgym.envs.grammar import STOP_TOOL, EpisodeContexts

    grammar, _ = run_grammar(config)
    rng = np.random.default_rng(config.seed)
    tasks = [t.id for t in config.tasks("test")]
    queue = (
        tasks if eval_episodes is None else [tasks[k % len(tasks)] for k in range(eval_episodes)]
    )
    vec = make_vector_env(
        config.env_id,
        tasks,
        config.num_envs,
        True,
        **dict(config.env_kwargs(evaluation=True), split="test"),
    )
    contexts = EpisodeContexts(config.num_envs)
    started, calls, stops = time.perf_counter(), 0, 0

    def choose(obs: dict[str, Any], current: list[str]) -> list[str]:
        nonlocal calls
        calls += len(current)
        batch = observe(obs, config.policy)
        tokens = np.array([grammar.sample(rng) for _ in current])
        return contexts.decode(grammar, tokens, obs, batch["numbers"], batch["number_at"])

    def count_stops(obs: dict[str, Any], chosen: list[str], recording: np.ndarray) -> None:
        nonlocal stops
        stops += sum(
            json.loads(chosen[i]).get("name") == STOP_TOOL for i in np.flatnonzero(recording)
        )

    try:
        results = play_queued(vec, queue, choose, seed=config.seed, on_step=count_stops)
    finally:
        vec.close()
    sps = calls / (time.perf_counter() - started)
    report = summarize(results, "test") | ({"stopped": stops} if grammar.stop else {})
    return {
        "method": "random",
        "env_steps": 0,
        "bc_env_steps": 0,
        "train_seconds": 0.0,
        "sps": sps,
        "curve": [],
        "test": _short(report),
    }


def run_sb3(
    config: TrainConfig, eval_episodes: int | None, masked: bool = False, peer: bool = False
) -> dict[str, Any]:
    """SB3's PPO (``MultiInputPolicy``) through ``toolgym.envs.wrappers.standard`` on the same
    grammar's bins (``StandardSpaces``), ``num_envs`` subprocess envs, the same step budget;
    ``masked``: sb3-contrib's MaskablePPO with ``StandardSpaces.action_masks``. ``peer``: the
    like-for-like peer, MaskablePPO on ``TrainerSpaces``: the trainer's own grammar (its derived
    values and stop too), its observation arrays, a copy of any prompt number in every numeric
    slot, and the grammar's masks."""
    import gymnasium as gym
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv

    import toolgym  # noqa: F401
    from toolgym.agents.trainer.build import build_grammar, run_grammar
    from toolgym.agents.trainer.peer_spaces import TrainerSpaces
    from toolgym.envs.tasks.suites import get_suite
    from toolgym.envs.wrappers.standard import StandardSpaces

    if peer:
        grammar, masked = run_grammar(config)[0], True
    else:
        grammar = build_grammar(config.env_id, config.suite, config.max_bins, config.all_tools)

    def make(split: str):
        def thunk():
            inner = gym.make(
                config.env_id,
                action_mode="tool",
                **dict(config.env_kwargs(evaluation=split == "test"), split=split),
            )
            if peer:
                return TrainerSpaces(inner, grammar, config.policy)
            return StandardSpaces(inner, grammar)

        return thunk

    class Curve(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict[str, float]] = []
            self.scores: list[float] = []
            self.passes: list[bool] = []
            self.started = time.perf_counter()

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                if done and "final_report" in info:
                    self.scores.append(float(info["final_report"].get("score") or 0.0))
                    self.passes.append(bool(info["final_report"].get("passed")))
            return True

        def _on_rollout_end(self) -> None:
            seconds = time.perf_counter() - self.started
            self.rows.append(
                {
                    "env_steps": float(self.num_timesteps),
                    "score": float(np.mean(self.scores)) if self.scores else math.nan,
                    "success_rate": float(np.mean(self.passes)) if self.passes else math.nan,
                    "sps": self.num_timesteps / seconds,
                }
            )
            self.scores, self.passes = [], []

    vec = SubprocVecEnv([make("train")] * config.num_envs, start_method="forkserver")
    started = time.perf_counter()
    algorithm = PPO
    if masked:
        from sb3_contrib import MaskablePPO

        algorithm = MaskablePPO
    model = algorithm(
        "MultiInputPolicy",
        vec,
        n_steps=config.num_steps,
        batch_size=32,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    curve = Curve()
    model.learn(total_timesteps=config.steps, callback=curve)
    seconds = time.perf_counter() - started
    vec.close()
    env = make("test")()
    tasks = [t.id for t in get_suite(config.suite).split("test")]
    queue = (
        tasks if eval_episodes is None else [tasks[k % len(tasks)] for k in range(eval_episodes)]
    )
    results, stops, stopping = [], 0, peer and grammar.stop
    for task in queue:
        obs, _ = env.reset(seed=config.seed, options={"task": task})
        steps = 0
        while True:
            masks = {"action_masks": env.action_masks()} if masked else {}
            action, _ = model.predict(obs, deterministic=True, **masks)
            stops += stopping and _is_stop(env.call(action))
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                final = info["final_report"]
                results.append(
                    (task, float(final.get("score") or 0.0), bool(final["passed"]), steps)
                )
                break
    env.close()
    label = "SB3 MaskablePPO (grammar masks)" if masked else "SB3 PPO"
    return {
        "method": "SB3 MaskablePPO, like-for-like peer (TrainerSpaces)" if peer else label,
        "env_steps": model.num_timesteps,
        "bc_env_steps": 0,
        "train_seconds": seconds,
        "sps": model.num_timesteps / seconds,
        "curve": curve.rows,
        "test": _short(summarize(results, "test") | ({"stopped": stops} if stopping else {})),
    }


def _is_stop(call: str) -> bool:
    from toolgym.envs.grammar import STOP_TOOL

    try:
        return json.loads(call).get("name") == STOP_TOOL
    except (ValueError, AttributeError):
        return False


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, result in enumerate(results):
        colour = f"C{k}"
        curve = result["curve"]
        if curve:
            ax.plot(
                [r["env_steps"] for r in curve],
                [r["score"] for r in curve],
                color=colour,
                label=f"{result['method']} (train)",
            )
        end = curve[-1]["env_steps"] if curve else 0
        ax.scatter(
            [end],
            [result["test"]["score"]],
            color=colour,
            marker="*",
            s=120,
            label=f"{result['method']} (test: {result['test']['score']:.2f})",
        )
    ax.set_xlabel("environment steps (tool calls) of PPO")
    ax.set_ylabel("mean final score")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("toolgym/CadQuery-v0, tool mode: training score per iteration, test score (*)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


COUNTS = 0.2  # a learned figure counts only this far above the best fixed rule beside it


def judged(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each learned row (trained for env or cloning steps) with ``over_fixed_rule``: its test
    score less the best fixed rule's in its group (a section, or a family of one), and
    ``counts``: whether that margin reaches :data:`COUNTS`."""
    best: dict[str, float] = {}
    for r in results:
        if r.get("fixed_rule"):
            group = r.get("group", "")
            best[group] = max(best.get(group, -math.inf), r["test"]["score"])
    out = []
    for r in results:
        learned = r["env_steps"] or r["bc_env_steps"]
        group = r.get("group", "")
        if learned and group in best:
            margin = r["test"]["score"] - best[group]
            r = r | {"over_fixed_rule": margin, "counts": bool(margin >= COUNTS)}
        out.append(r)
    return out


def _verdict(r: dict[str, Any]) -> str:
    if r.get("fixed_rule"):
        return "(fixed rule)"
    if "over_fixed_rule" not in r:
        return "-"
    return f"{r['over_fixed_rule']:+.3f} ({'counts' if r['counts'] else 'does not count'})"


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| method | PPO env steps | BC oracle steps | train time | SPS (train) | test mean "
        "score | test success rate | calls per episode (stopped) | over the best fixed rule | "
        "ablations |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in judged(results):
        test = r["test"]
        stopped = f" ({test['stopped']})" if "stopped" in test else ""
        ablated = ", ".join(f"{k}: {v['score']:.3f}" for k, v in r.get("ablations", {}).items())
        cells = (
            r["method"],
            str(r["env_steps"]),
            str(r["bc_env_steps"]),
            f"{r['train_seconds']:.0f} s",
            f"{r['sps']:.2f}",
            f"{test['score']:.3f}",
            f"{test['success_rate']:.2f}",
            f"{test['steps']:.2f}{stopped}",
            _verdict(r),
            ablated or "-",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


RULES: dict[str, Callable[[TrainConfig, int | None], dict[str, Any]]] = {
    "copy": run_copy_rule,
    "keyword": run_keyword_rule,
    "template": run_template_rule,
    "measure": run_measure_rule,
    "silhouette": run_silhouette_rule,
    "holes": run_hole_rule,
    "holes-looking": lambda config, episodes: run_hole_rule(config, episodes, looks=True),
}
TEXT_RULES = ("copy", "keyword", "template")
SECTIONS = (
    *("primitives", "paraphrased", "styles", "image", "image-holes", "families"),
    "all-families",
)
IMAGE_RULES = ("measure", "silhouette", "holes", "holes-looking")
# Steps the plate-and-holes rule may take with looks, per family of plates: its box, its edges,
# a search of the top face, its looks at the cut-outs (two a slot), then a call per cut-out
# (28 at most on plate_holes' 50 test plates, 70 on a 35-hole grid, about 35 on slotted_plate's
# biggest plates: 12 windows and 4 slots).
HOLE_STEPS = {
    "plate_holes": 40,
    "plate_grid_holes": 80,
    "plate_angled_slots": 40,
    "slotted_plate": 48,
}
# The grammar of one run over every CAD family (TrainConfig's options; toolgym.envs.grammar):
# exact copies of the prompt's first 24 numbers in every real-valued slot, one range of
# coordinate tokens for all of a polygon's points (16 at most), bins anchored on their step.
ALL_FAMILIES_GRAMMAR = {
    "copies": 24,
    "shared_points": True,
    "max_points": 16,
    "anchored_bins": True,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1024, help="PPO env steps per method")
    parser.add_argument("--bc-steps", type=int, default=200)
    parser.add_argument("--bc-batch", type=int, default=TrainConfig.bc_batch)
    parser.add_argument(
        "--bc-episodes", type=int, default=None, help="oracle episodes; default: every train task"
    )
    parser.add_argument(
        "--sections",
        nargs="+",
        default=[*SECTIONS],
        choices=[*SECTIONS],
    )
    parser.add_argument(
        "--families",
        nargs="+",
        default=["enclosure", "plate_holes", "stepped_shaft"],
        help="the multi-step families (BC + PPO, stop)",
    )
    parser.add_argument("--family-steps", type=int, default=256)
    parser.add_argument(
        "--all-train-seeds",
        type=int,
        default=10,
        help="all-families section: training seeds per family (the generated suites' count)",
    )
    parser.add_argument(
        "--all-test-seeds", type=int, default=2, help="all-families section: test seeds per family"
    )
    parser.add_argument(
        "--all-bc-steps",
        type=int,
        default=1800,
        help="all-families section: cloning steps (1,800: about 25 minutes on one core)",
    )
    parser.add_argument(
        "--all-bc-batch", type=int, default=32, help="all-families section: cloning batch"
    )
    parser.add_argument(
        "--all-steps", type=int, default=512, help="all-families section: PPO env steps"
    )
    parser.add_argument(
        "--tune-target-kl",
        "--family-target-kl",
        type=float,
        default=0.02,
        help="PPO's approx-KL early stop after cloning (keeps the cloned policy)",
    )
    parser.add_argument(
        "--tune-lr", "--family-lr", type=float, default=1e-4, help="PPO's, after cloning"
    )
    parser.add_argument(
        "--tune-ent-coef",
        "--family-ent-coef",
        type=float,
        default=0.0,
        help="PPO's entropy bonus after cloning (it pushes every step one way)",
    )
    parser.add_argument(
        "--image-view-size",
        type=int,
        default=64,
        help="image section: pixels per view (32 px is 6.9 mm of the primitives' frame)",
    )
    parser.add_argument("--image-train-seeds", type=int, default=600, help="image section")
    parser.add_argument(
        "--image-inputs",
        choices=["depth", "rgb"],
        default="depth",
        help="image section: the RGB views and their depth (the pointer copies numbers "
        "measured off it), or the RGB views alone",
    )
    parser.add_argument(
        "--image-size",
        type=int,
        default=None,
        help="image section: pixels square the CNN sees the tile of four views at (default: "
        "32 with depth, whose readings come from the full tile; 64 with RGB alone)",
    )
    parser.add_argument(
        "--image-bin-sigma",
        type=float,
        default=None,
        help="image section: soft-binned cloning targets, a Gaussian of this many bins "
        "(default: 0 with depth, 6 with RGB alone)",
    )
    parser.add_argument(
        "--holes-family",
        choices=list(HOLE_STEPS),
        default="plate_holes",
        help="image-holes section: the family of plates (holes, or round-ended slots)",
    )
    parser.add_argument(
        "--holes-train-seeds", type=int, default=800, help="image-holes section: plates"
    )
    parser.add_argument(
        "--holes-bc-steps", type=int, default=4000, help="image-holes section: cloning steps"
    )
    parser.add_argument(
        "--holes-steps", type=int, default=256, help="image-holes section: PPO env steps"
    )
    parser.add_argument(
        "--holes-image-size",
        type=int,
        default=64,
        help="image-holes section: pixels square the CNN sees the 128-pixel tile at",
    )
    parser.add_argument("--num-envs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=PPOConfig.learning_rate, help="PPO's")
    parser.add_argument("--ent-coef", type=float, default=PPOConfig.ent_coef, help="PPO's")
    parser.add_argument(
        "--copy-next-bias",
        type=float,
        default=PolicyConfig.copy_next_bias,
        help="the pointer's prior for copying in order (0: none)",
    )
    parser.add_argument("--eval-episodes", type=int, default=None, help="default: every test task")
    parser.add_argument(
        "--methods",
        nargs="+",
        default=[
            *("random", "untrained", "copy", "keyword", "template", *IMAGE_RULES),
            *("scratch", "bc", "sb3", "sb3-masked", "sb3-peer"),
        ],
        help="on the primitives; the other sections run those of theirs listed here",
    )
    parser.add_argument(
        "--style-train-seeds", type=int, default=400, help="styles section: training seeds"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", type=Path, default=HERE / "learn_cadquery.png")
    parser.add_argument("--json", type=Path, default=HERE / "learn_cadquery.json")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # the trainer's own setting, for SB3 too (see TrainConfig.threads)
    runs = Path(tempfile.mkdtemp(prefix="toolgym-learn-"))
    base = dict(
        suite="primitives",
        steps=args.steps,
        num_envs=args.num_envs,
        num_steps=32,
        max_steps=1,
        seed=args.seed,
        progress=False,
        ppo=PPOConfig(learning_rate=args.lr, ent_coef=args.ent_coef),
        policy=PolicyConfig(copy_next_bias=args.copy_next_bias),
    )
    # Every BC + PPO row: PPO after cloning keeps the cloned policy (a low rate, no entropy
    # bonus, an approx-KL stop); PPO from scratch and the peers keep PPO's defaults.
    keep = PPOConfig(
        learning_rate=args.tune_lr, ent_coef=args.tune_ent_coef, target_kl=args.tune_target_kl
    )
    bc = {
        "bc_steps": args.bc_steps,
        "bc_episodes": args.bc_episodes,
        "bc_batch": args.bc_batch,
        "ppo": keep,
    }
    load = os.getloadavg()[0]
    print(f"load average at start {load:.1f}, {os.cpu_count()} CPUs; runs in {runs}", flush=True)
    sections: dict[str, list[dict[str, Any]]] = {}
    ceilings: dict[str, dict[str, Any]] = {}

    def note(section: str, result: dict[str, Any], started: float, group: str = "") -> None:
        result = result | {"group": f"{section} {group}".strip()}
        sections.setdefault(section, []).append(result)
        ablated = ", ".join(f"{k} {v['score']:.3f}" for k, v in result.get("ablations", {}).items())
        test = result["test"]
        stopped = f", {test['stopped']} ended by stop" if "stopped" in test else ""
        print(
            f"[{section}] {result['method']}: test score {test['score']:.3f}, success "
            f"{test['success_rate']:.2f}, {test['steps']:.2f} calls per episode{stopped}"
            f"{'; ' + ablated if ablated else ''}, {time.perf_counter() - started:.0f} s, "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )

    def baselines(
        section: str, config: TrainConfig, name: str = "", rules: tuple[str, ...] = TEXT_RULES
    ) -> None:
        """Beside a section's learned figures, those that could fake them: random calls, the
        untrained start, the fixed ``rules`` on the inputs the section's policy gets (the
        copy-in-order and keyword rules on text, the measure rule on depth, the silhouette rule
        on RGB) and the like-for-like peer (at the config's env steps), each where
        ``--methods`` lists it."""
        for method, run in (
            ("random", run_random),
            ("untrained", run_untrained),
            *((rule, RULES[rule]) for rule in rules),
            ("sb3-peer", lambda c, n: run_sb3(c, n, peer=True)),
        ):
            if method in args.methods:
                started = time.perf_counter()
                result = run(config, args.eval_episodes)
                named = {"method": f"{result['method']}, {name}"} if name else {}
                note(section, result | named, started, name)

    def trained_once(section: str, configs: dict[str, TrainConfig], label: str = "") -> None:
        """BC + PPO trained on the first of ``configs`` (named ``label``, or its key), scored
        on each one's test split (they share the training split): a row each, grouped by key."""
        started = time.perf_counter()
        first, *others = configs
        result = run_trainer(
            f"BC + PPO, {label or first}",
            configs[first],
            args.eval_episodes,
            also={f"BC + PPO, {kind}": configs[kind] for kind in others},
        )
        for row in [result, *result.pop("also")]:
            note(section, row, started, row.pop("kind", first))

    if "primitives" in args.sections:
        for method in args.methods:
            started = time.perf_counter()
            config = TrainConfig(**base, out=str(runs / method))
            if method == "random":
                result = run_random(config, args.eval_episodes)
            elif method == "untrained":
                result = run_untrained(config, args.eval_episodes)
            elif method in TEXT_RULES:
                result = RULES[method](config, args.eval_episodes)
            elif method in IMAGE_RULES:
                continue  # the image section's
            elif method == "scratch":
                result = run_trainer("PPO from scratch", config, args.eval_episodes)
            elif method == "bc":
                config = TrainConfig(**dict(base, **bc), out=str(runs / method))
                result = run_trainer("BC + PPO", config, args.eval_episodes, tuple(ABLATIONS))
            elif method in ("sb3", "sb3-masked", "sb3-peer"):
                result = run_sb3(
                    config,
                    args.eval_episodes,
                    masked=method == "sb3-masked",
                    peer=method == "sb3-peer",
                )
            else:
                raise SystemExit(f"unknown method {method!r}")
            note("primitives", result, started)
    if "paraphrased" in args.sections:
        suite = paraphrased_suite(200, 50, runs)
        # Numbers keyed by where they start too: a number in words keeps the words before it.
        policy = PolicyConfig(copy_next_bias=args.copy_next_bias, number_starts=True)
        config = TrainConfig(
            **dict(base, suite=suite, policy=policy, **bc), out=str(runs / "paraphrased")
        )
        baselines("paraphrased", config)
        if "bc" in args.methods:
            started = time.perf_counter()
            result = run_trainer("BC + PPO", config, args.eval_episodes, tuple(ABLATIONS))
            note("paraphrased", result, started)
    if "styles" in args.sections:
        # The primitives said in the phrase bank's training styles; tested on unseen seeds said
        # in the recombined styles (the training styles' words and forms in combinations no
        # training prompt uses) and, apart, in the held-out styles (words, radii, inches no
        # training prompt uses). One policy, trained once, scored on both.
        suites = {
            kind: family_suite(
                "primitive",
                args.style_train_seeds,
                50,
                runs,
                styles={"train": TRAIN_STYLES, "test": test_styles},
                tag=f"primitive-{kind.replace(' ', '-')}",
            )
            for kind, test_styles in (
                ("recombined", RECOMBINED_STYLES),
                ("held-out words", HELD_OUT_STYLES),
            )
        }
        policy = PolicyConfig(copy_next_bias=args.copy_next_bias, number_starts=True)
        configs = {
            kind: TrainConfig(
                **dict(base, suite=suite, policy=policy, **bc), out=str(runs / "styles")
            )
            for kind, suite in suites.items()
        }
        for kind, config in configs.items():
            baselines("styles", config, kind)
        if "bc" in args.methods:
            trained_once("styles", configs)
    if "image" in args.sections:
        # The views at --image-view-size pixels each (a 2 x 2 tile twice as wide), seen by the
        # CNN with the target less the current view, its pixels' coordinates (CoordConv) and
        # max-pooled features too; soft-binned cloning targets.
        # With --image-inputs depth (the default) the env's depth views too, and the pointer
        # over numbers measured off them (PolicyConfig.depth, measure); "rgb": pictures alone.
        depth = args.image_inputs == "depth"
        size = args.image_size or (32 if depth else 64)
        policy = PolicyConfig(
            copy_next_bias=args.copy_next_bias,
            image_size=size,
            coords=True,
            peak_pool=True,
            difference=True,
            depth=depth,
            measure=depth,
        )
        # The primitives' family, --image-train-seeds training seeds (the demonstrations:
        # continuous sizes read from pictures want more than the suite's 200) and the same 50
        # test seeds as the primitives suite, in the family's fixed frame.
        suite = family_suite("primitive", args.image_train_seeds, 50, runs, framed=True)
        sigma = args.image_bin_sigma if args.image_bin_sigma is not None else 0.0 if depth else 6.0
        config = TrainConfig(
            **dict(base, suite=suite, policy=policy, **bc),
            prompt_form="image",
            out=str(runs / "image"),
            view_size=args.image_view_size,
            bc_bin_sigma=sigma,
        )
        # The fixed rules on what the policy reads: the depth measure rule where it gets depth,
        # the RGB silhouette rule always (the copy rule: the prompt has no number to copy).
        baselines("image", config, rules=("copy", *(("measure",) if depth else ()), "silhouette"))
        if "scratch" in args.methods:  # at equal env steps with the peer, no demonstrations
            started = time.perf_counter()
            scratch = dataclasses.replace(
                config, bc_steps=0, ppo=base["ppo"], out=str(runs / "image-scratch")
            )
            note(
                "image",
                run_trainer("PPO from scratch, image only", scratch, args.eval_episodes),
                started,
            )
        if "bc" in args.methods:
            started = time.perf_counter()
            result = run_trainer(
                "BC + PPO, image only",
                config,
                args.eval_episodes,
                ("images zeroed", "targets swapped"),
            )
            note("image", result, started)
    if "image-holes" in args.sections:
        # Image-only plate_holes: a plate and four through-holes (2 to 20 mm across) seen only
        # as 64-pixel RGB views of the family's frame (2.84 mm a pixel), no depth and no
        # hand-written measures in the policy's inputs. The fixed rules read the same tile: the
        # plate-and-holes rule on the task's own views (what a policy that cannot look sees),
        # and with looks (the closer views the trainer's grammar cannot ask for yet).
        policy = PolicyConfig(
            copy_next_bias=args.copy_next_bias,
            image_size=args.holes_image_size,
            coords=True,
            peak_pool=True,
            difference=True,
        )
        suite = family_suite(args.holes_family, args.holes_train_seeds, 50, runs, framed=True)
        config = TrainConfig(
            **dict(base, suite=suite, policy=policy, **bc)
            | dict(steps=args.holes_steps, bc_steps=args.holes_bc_steps, max_steps=6),
            prompt_form="image",
            out=str(runs / "image-holes"),
            view_size=64,
            bc_bin_sigma=6.0 if args.image_bin_sigma is None else args.image_bin_sigma,
        )
        baselines("image-holes", config, rules=("holes", "holes-looking"))
        if "bc" in args.methods:
            started = time.perf_counter()
            result = run_trainer(
                "BC + PPO, image only, RGB", config, args.eval_episodes, ("images zeroed",)
            )
            note("image-holes", result, started)
    if "families" in args.sections:
        for name in args.families:
            suite = family_suite(name, train=100, test=20, folder=runs)
            config = TrainConfig(
                **dict(base, suite=suite, steps=args.family_steps, max_steps=6, **bc),
                out=str(runs / name),
            )
            baselines("families", config, name)
            if "bc" in args.methods:
                started = time.perf_counter()
                result = run_trainer(f"BC + PPO, {name}", config, args.eval_episodes)
                note("families", result, started, name)
    if "all-families" in args.sections:
        # Every training family at once, scored on unseen seeds of each and, apart, on the
        # held-out families (none seen in training): the generated suites' split. Beside the
        # fixed rules: the grammar's ceiling there, the oracle's calls said in the grammar the
        # run builds (the most any policy acting in it can score), and with "bc" one BC + PPO
        # run over them (ALL_FAMILIES_GRAMMAR: the grammar made for many families), scored on
        # all four test splits.
        from grammar_ceiling import suite_ceiling

        seen = [name for name in sorted(FAMILIES) if name not in HELD_OUT_FAMILIES]
        # Prompts run to 1,450 bytes and 20 numbers: read as a policy reading 1,024 and 24.
        reader = dataclasses.replace(
            base["policy"], number_starts=True, prompt_bytes=1024, max_numbers=24
        )
        configs = {}
        # Test splits: unseen seeds of the training families in the training styles, in
        # recombined wording (seen words and forms, combined as no training style does) and in
        # held-out words (and inches); the held-out families, 3 seeds each.
        test_styles = {
            "seen families": TRAIN_STYLES,
            "recombined wording": RECOMBINED_STYLES,
            "held-out words": HELD_OUT_STYLES,
            "held-out families": TRAIN_STYLES,
        }
        for kind, tested in test_styles.items():
            suite = family_suite(
                seen,
                args.all_train_seeds,
                3 if kind == "held-out families" else args.all_test_seeds,
                runs,
                framed=True,
                styles={"train": TRAIN_STYLES, "test": tested},
                tag=f"all-families-{kind.replace(' ', '-')}",
                test_families=HELD_OUT_FAMILIES if kind == "held-out families" else None,
            )
            longest = max(len(t.tool_calls or ()) for t in get_suite(suite).tasks)
            configs[kind] = TrainConfig(
                **dict(base, **bc) | dict(
                    suite=suite, max_steps=longest + 1, policy=reader, steps=args.all_steps,
                    bc_steps=args.all_bc_steps, bc_batch=args.all_bc_batch, out=str(runs / "all"),
                    **ALL_FAMILIES_GRAMMAR,
                )
            )  # fmt: skip
            baselines("all-families", configs[kind], kind)
            started = time.perf_counter()
            ceiling = suite_ceiling(
                suite,
                configs[kind].max_bins,
                derived=True,
                policy=reader,
                grammar_options=configs[kind].grammar_options(),
            )
            print(
                f"[all-families] grammar ceiling, {kind}: {ceiling['mean']:.3f} "
                f"(vocabulary {ceiling['vocab']}), {time.perf_counter() - started:.0f} s",
                flush=True,
            )
            ceilings[kind] = ceiling
        if "bc" in args.methods:
            trained_once("all-families", configs, "all families")
    args.json.write_text(
        json.dumps(
            {
                "load_average_at_start": load,
                "args": vars(args) | {"plot": args.plot.name, "json": args.json.name},
                **{section: judged(rows) for section, rows in sections.items()},
                **({"all-families ceiling": ceilings} if ceilings else {}),
            },
            indent=2,
            default=str,
        )
    )
    if sections.get("primitives"):
        plot(sections["primitives"], args.plot)
    for section, results in sections.items():
        print(f"\n{section}\n")
        print(table(results))
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
