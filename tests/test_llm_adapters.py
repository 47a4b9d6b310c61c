"""Adapters for language-model trainers: SFT data from recordings, TRL's GRPO (`agents/llm/sft.py`,
`agents/llm/grpo.py`). The GRPO run uses a tiny model built from a config here: nothing
downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolgym.agents.llm.grpo import EpisodeReward, actions_of, environment, grpo_dataset
from toolgym.agents.llm.messages import RUN_CODE
from toolgym.agents.llm.sft import sft_records
from toolgym.agents.runner import run_episodes
from toolgym.cli import app
from toolgym.envs.tasks.suites import get_suite

TOOL = {"suite": "primitives", "action_mode": "tool", "max_steps": 2}
ENV = "toolgym/CadQuery-v0"


@pytest.fixture(scope="module")
def oracle_recording(tmp_path_factory):
    record = tmp_path_factory.mktemp("oracle")
    episodes = list(
        run_episodes("toolgym/CadQuery-v0", "oracle", episodes=2, record=record, **TOOL)
    )
    assert all(e.passed for e in episodes)
    return record


def test_oracle_episodes_become_a_warm_start_chat_set(oracle_recording, tmp_path):
    (chat, _) = records = list(sft_records(oracle_recording, image_size=24))
    assert len(records) == 2 and chat["score"] == pytest.approx(1.0, abs=1e-9)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]  # passed at once: no views after
    task = next(t for t in get_suite("primitives").split("train") if t.id == chat["task"])
    call = chat["messages"][2]["tool_calls"][0]["function"]
    arguments = json.loads(call["arguments"])
    assert json.loads(task.tool_calls[0]) == {"name": call["name"], "arguments": arguments}
    assert chat["messages"][3]["content"].startswith("verifier: score 1.000 (pass)")
    assert chat["messages"][1]["content"][-1]["image_url"]["url"].startswith("data:image/png")
    assert {t["function"]["name"] for t in chat["tools"]} >= {"add_box", "add_sphere"}
    out = tmp_path / "sft.jsonl"
    done = CliRunner().invoke(app, ["sft", str(oracle_recording), "--out", str(out)])
    assert done.exit_code == 0 and "2 conversations" in done.output, done.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert "image_url" not in json.dumps(lines)  # text only by default
    done = CliRunner().invoke(app, ["sft", str(tmp_path / "nothing"), "--out", str(out)])
    assert done.exit_code == 2 and "no such folder" in done.output


def test_the_reward_is_each_completions_exact_episode_score():
    task = get_suite("primitives").split("train")[0]
    reward = EpisodeReward(**TOOL)
    try:
        oracle = "Here:\n" + task.tool_calls[0] + "\n"
        wrong = '{"name": "add_box", "arguments": {"length": 5, "width": 5, "height": 5}}'
        scores = reward(["p"] * 3, [oracle, wrong, "no call at all"], [task.id] * 3)
    finally:
        reward.close()
    assert scores[0] == pytest.approx(1.0, abs=1e-9)
    assert 0 <= scores[1] < 0.5 and scores[2] == 0.0
    assert actions_of("```python\nresult = 1\n```", "code") == ["result = 1\n"]


def test_the_trl_environment_plays_run_code_and_owns_the_reward():
    task = get_suite("primitives").split("train")[0]
    env = environment(suite="primitives", max_steps=2)()
    try:
        assert env.reset(task=task.id, prompt="ignored") == ""
        assert RUN_CODE in dir(env) and env.run_code("x = 1").startswith("error: ")
        assert env.get_reward() == 0.0  # nothing built; the episode ends here
        env.reset(task=task.id)
        assert "score 1.000 (pass)" in env.run_code(task.reference)
        assert env.get_reward() == pytest.approx(1.0, abs=1e-9)
        assert env.run_code("x = 2") == "error: the episode is over"
    finally:
        env.env.close()


def byte_tokenizer(eos: str = "<eos>", special: tuple[str, ...] = ()):
    """A byte-level tokenizer made here (no hub): ``<pad>``, ``eos`` and ``special`` tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab |= {"<pad>": len(vocab), eos: len(vocab) + 1}
    bytes_ = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    bytes_.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bytes_.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bytes_, pad_token="<pad>", eos_token=eos, padding_side="left"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(special)})
    return tokenizer


def tiny_model_and_tokenizer():
    """A byte-level tokenizer and a one-layer Llama made here from a config (no hub)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = byte_tokenizer()
    vocab = tokenizer.get_vocab()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["<eos>"],
        bos_token_id=vocab["<eos>"],
    )
    return LlamaForCausalLM(config), tokenizer


@pytest.mark.slow  # imports TRL and trains a tiny model
def test_a_grpo_run_gets_toolgyms_rewards(tmp_path, monkeypatch):
    """A few GRPO steps with TRL: one completion of each group is the oracle's call, one a
    wrong box; the rewards the trainer logs are the exact scores toolgym gave, and they move
    the model (a non-zero gradient)."""
    pytest.importorskip("trl")
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer = tiny_model_and_tokenizer()
    data = grpo_dataset("primitives", conversational=False, action_mode="tool", max_steps=1)
    data = data.select(range(2))
    calls = {row["prompt"]: get_suite_call(row["task"]) for row in data}
    wrong = '{"name": "add_box", "arguments": {"length": 5, "width": 5, "height": 5}}'

    def rollout(prompts, trainer):
        texts = [calls[p] if k % 2 == 0 else wrong for k, p in enumerate(prompts)]
        prompt_ids = [tokenizer(p)["input_ids"] for p in prompts]
        completion_ids = [tokenizer(t)["input_ids"] + [tokenizer.eos_token_id] for t in texts]
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": [[0.0] * len(ids) for ids in completion_ids],
        }

    reward = EpisodeReward(**{**TOOL, "max_steps": 1})
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=128,
        max_steps=2,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        learning_rate=1e-3,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=args,
        train_dataset=data,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    try:
        trainer.train()
    finally:
        reward.close()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2 and len(reward.scores) == 4
    assert sorted(reward.scores)[-2:] == pytest.approx([1.0, 1.0], abs=1e-9)
    assert max(reward.scores[:2] + reward.scores[2:]) > min(reward.scores)
    for step, history in enumerate(logged):
        given = reward.scores[2 * step : 2 * step + 2]
        assert history["rewards/toolgym_score/mean"] == pytest.approx(sum(given) / 2, abs=1e-6)
        assert history["reward_std"] > 0 and history["grad_norm"] > 0


def get_suite_call(task_id: str) -> str:
    return next(t for t in get_suite("primitives").split("train") if t.id == task_id).tool_calls[0]


@pytest.mark.slow  # imports TRL and trains a tiny model
def test_grpo_with_the_environment_factory_plays_an_episode_per_rollout(tmp_path, monkeypatch):
    """TRL's multi-turn path: a chat template that renders tool calls (one TRL ships), an
    environment per rollout reset with its row's task, and its exact score as the reward. The
    tiny model writes no call, so each episode ends at once and scores the empty part: 0."""
    trl = pytest.importorskip("trl")
    from trl.chat_template_utils import add_response_schema

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer = tiny_model_and_tokenizer()
    template = Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja"
    tokenizer.chat_template = template.read_text()
    tokenizer = add_response_schema(tokenizer)
    trainer, made, data = grpo_step_through_environments(model, tokenizer, tmp_path)
    (logged,) = [h for h in trainer.state.log_history if "reward" in h]
    assert logged["rewards/ToolgymEnvironment/mean"] == 0.0
    played = [env for env in made if env.report]
    assert len(played) == 2 and all(env.report["score"] == 0.0 for env in played)
    assert {env.env.unwrapped.task.id for env in played} == {data[0]["task"]}


def grpo_step_through_environments(model, processing_class, tmp_path, **env_kwargs):
    """One GRPO step (two rollouts of one row) with an ``environment(...)`` per rollout:
    ``(trainer, the environments made, the dataset)``."""
    from trl import GRPOConfig, GRPOTrainer

    data = grpo_dataset("primitives", action_mode="code", max_steps=2).select(range(1))
    made = []

    def factory():
        made.append(environment(suite="primitives", max_steps=2, **env_kwargs)())
        return made[-1]

    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=data,
        processing_class=processing_class,
        environment_factory=factory,
    )
    try:
        trainer.train()
    finally:
        for env in made:
            env.env.close()
    return trainer, made, data


def test_the_environment_gives_a_vision_model_the_views_as_image_parts():
    """With ``image_size``, TRL's image content parts: the target's views added to the prompt at
    reset, the part's views with each tool answer; the oracle's part looks like its target."""
    import numpy as np

    task = get_suite("primitives").split("train")[0]
    env = environment(suite="primitives", max_steps=2, image_size=64)()
    try:
        text, target = env.reset(task=task.id)
        assert text["type"] == "text" and "target" in text["text"]
        assert target["type"] == "image" and max(target["image"].size) == 64
        picture, feedback = env.run_code(task.reference)
        assert picture["type"] == "image" and picture["image"].size == target["image"].size
        assert "verifier: score 1.000" in feedback["text"]
        part, goal = (np.asarray(p["image"], float) for p in (picture, target))
        assert np.abs(part - goal).mean() < 2.0 and goal.std() > 10  # the same part, drawn
        assert env.get_reward() == pytest.approx(1.0)
    finally:
        env.env.close()


VISION = ("<|im_start|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")


def tiny_vision_model_and_processor():
    """A one-layer Qwen3-VL and its processor (TRL's Qwen3-VL chat template, a byte-level
    tokenizer, images up to 64 x 64 px in 16 px patches), made here from configs: no hub."""
    import torch
    import trl
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    tokenizer = byte_tokenizer("<|im_end|>", VISION)
    tokenizer.image_token, tokenizer.video_token = "<|image_pad|>", "<|video_pad|>"
    tokenizer.vision_start_token, tokenizer.vision_end_token = VISION[1:3]
    template = Path(trl.__file__).parent / "chat_templates" / "qwen3_vl.jinja"
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(
            min_pixels=32 * 32, max_pixels=64 * 64, patch_size=16, merge_size=2
        ),
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(),
        chat_template=template.read_text(),
    )
    token = tokenizer.convert_tokens_to_ids
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True}
    text = {"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64}
    text |= {"num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1}
    text |= {"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": rope}
    vision = {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2}
    vision |= {"patch_size": 16, "spatial_merge_size": 2, "out_hidden_size": 32}
    vision |= {"temporal_patch_size": 2, "num_position_embeddings": 64}
    config = Qwen3VLConfig(
        text_config=text,
        vision_config=vision | {"deepstack_visual_indexes": [0]},
        image_token_id=token("<|image_pad|>"),
        video_token_id=token("<|video_pad|>"),
        vision_start_token_id=token("<|vision_start|>"),
        vision_end_token_id=token("<|vision_end|>"),
    )
    torch.manual_seed(0)
    return Qwen3VLForConditionalGeneration(config), processor


@pytest.mark.slow  # imports TRL and trains a tiny model
def test_a_vision_language_model_sees_the_targets_views_in_a_grpo_run(tmp_path, monkeypatch):
    """GRPO through ``environment(image_size=64)`` on a tiny Qwen3-VL: each rollout's prompt
    carries its target's views, which reach the vision tower as pixels (16 patches of 16 px
    for a 64 px picture), and the reward is toolgym's. (Views in a tool's answer follow the
    same path once a model calls ``run_code``; the untrained model writes no call.)"""
    from trl.chat_template_utils import add_response_schema

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, processor = tiny_vision_model_and_processor()
    processor = add_response_schema(processor)
    seen = []  # what the vision tower is given: (patches, values per patch)
    model.model.visual.register_forward_hook(lambda _m, args, _o: seen.append(args[0].shape))
    trainer, made, _ = grpo_step_through_environments(model, processor, tmp_path, image_size=64)
    patches = (64 // 16) ** 2  # one 64 x 64 picture of the target's views per rollout
    assert seen and all(shape[0] == 2 * patches for shape in seen)  # generation, then training
    (logged,) = [h for h in trainer.state.log_history if "reward" in h]
    assert logged["rewards/ToolgymEnvironment/mean"] == 0.0
    assert [env.report["score"] for env in made if env.report] == [0.0, 0.0]
