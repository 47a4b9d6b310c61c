"""The environments' arguments: declared once (``EnvOptions``), extended per tool, checked."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pickle
import re

import gymnasium as gym
import pytest

import toolgym
from toolgym.envs.blender.env import BlenderEnv, BlenderOptions
from toolgym.envs.cadquery.env import CadQueryEnv, CadQueryOptions
from toolgym.envs.episode.loop import ToolEnv
from toolgym.envs.episode.options import EnvOptions
from toolgym.envs.scene.env import GameSceneEnv, GameSceneOptions

# Every tool's arguments and their documented defaults, in the order a constructor takes them
# (``suite`` has each tool's own). The first seven may be passed by position.
SHARED = {
    "split": "train",
    "task": None,
    "action_mode": "code",
    "max_steps": 8,
    "view_size": 64,
    "show_target": True,
    "error_penalty": 0.1,
    "max_action_chars": 20_000,
    "limits": None,
    "render_mode": None,
    "timings_in_info": False,
    "final_tier": None,
    "prompt_form": "described",
}
POSITIONAL = ("suite", "split", "task", "action_mode", "max_steps", "view_size", "show_target")
# Each tool's default suite and its own arguments, with their defaults.
TOOLS = {
    CadQueryEnv: ("curated", {"success_iou": None, "depth": False, "style": None}),
    BlenderEnv: ("blender-procedural", {"render_samples": 16, "style": None}),
    GameSceneEnv: ("scene-curated", {"style": None}),
}
OPTIONS = {CadQueryEnv: CadQueryOptions, BlenderEnv: BlenderOptions, GameSceneEnv: GameSceneOptions}


def defaults(signature: inspect.Signature) -> dict[str, object]:
    return {name: parameter.default for name, parameter in signature.parameters.items()}


@pytest.mark.parametrize("cls", list(TOOLS), ids=lambda cls: cls.__name__)
def test_each_signature_is_the_shared_arguments_and_the_tools_own(cls):
    suite, own = TOOLS[cls]
    expected = {"suite": suite, **SHARED, **own}
    signature = inspect.signature(cls)
    assert defaults(signature) == expected  # the same names, order and defaults
    kinds = {name: parameter.kind for name, parameter in signature.parameters.items()}
    assert [name for name, kind in kinds.items() if kind is kind.POSITIONAL_OR_KEYWORD] == list(
        POSITIONAL
    )
    # What the env server reads (``inspect.signature(cls.__init__)``) is the same.
    assert defaults(inspect.signature(cls.__init__)) == {
        "self": inspect.Parameter.empty,
        **expected,
    }
    assert cls.Options is OPTIONS[cls]
    assert [field.name for field in dataclasses.fields(cls.Options)] == list(expected)


def test_the_shared_arguments_are_declared_once():
    assert defaults(inspect.signature(ToolEnv)) == {"suite": inspect.Parameter.empty, **SHARED}
    assert defaults(EnvOptions.signature()) == defaults(inspect.signature(ToolEnv))
    for cls, (_, own) in TOOLS.items():
        declared = set(vars(cls.Options)["__annotations__"]) - {"_"}
        assert declared == {"suite", *own}, cls.__name__  # a default suite and its own, no more
        # No class in the tool's module declares a shared argument again, and no constructor
        # lists them: each takes ``*args, **kwargs`` and reads ``self.options``.
        tree = ast.parse(inspect.getsource(inspect.getmodule(cls)))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = {
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
                assert not names & set(SHARED), (cls.__name__, node.name, names & set(SHARED))
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                arguments = [a.arg for a in node.args.args + node.args.kwonlyargs]
                assert arguments == ["self"], (cls.__name__, arguments)


@pytest.mark.parametrize("cls", list(TOOLS), ids=lambda cls: cls.__name__)
def test_an_unknown_keyword_is_a_type_error_naming_it(cls):
    misspelt = "got an unexpected keyword argument 'max_step'. Did you mean 'max_steps'?"
    with pytest.raises(TypeError, match=re.escape(f"{cls.__name__}.__init__() {misspelt}")):
        cls(max_step=3)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'colour'"):
        cls(colour="red")
    with pytest.raises(TypeError, match="takes from 1 to 8 positional arguments but 9 were given"):
        cls(*[None] * 8)  # the rest are keyword-only
    with pytest.raises(TypeError, match="got multiple values for argument 'suite'"):
        cls("a", suite="b")


def test_an_unknown_keyword_through_gym_make_names_it():
    with pytest.raises(TypeError, match="unexpected keyword argument 'sucess_iou'"):
        gym.make("toolgym/CadQuery-v0", sucess_iou=0.9)
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth'"):
        gym.make("toolgym/GameScene-v0", depth=True)  # another tool's argument


def test_options_are_checked_on_their_own_with_the_same_messages():
    with pytest.raises(ValueError, match="max_steps must be an integer from 1 to 1000, got 0"):
        CadQueryOptions(max_steps=0)
    with pytest.raises(ValueError, match=r"prompt_form must be one of \('described', 'image'\)"):
        GameSceneOptions(prompt_form="sketch")
    with pytest.raises(ValueError, match="render_samples must be an integer from 1 to 1024"):
        BlenderOptions(render_samples=0)
    with pytest.raises(ValueError, match=r"success_iou must be a number from 0\.01 to 1\.0"):
        CadQueryOptions(success_iou=2)
    with pytest.raises(TypeError, match="limits must be a sandbox Limits, got dict"):
        CadQueryOptions(limits={"wall_s": 5})
    # The tool's own arguments come after prompt_form, before the others.
    with pytest.raises(ValueError, match="success_iou"):
        CadQueryOptions(success_iou=2, max_steps=0)
    with pytest.raises(ValueError, match="prompt_form"):
        CadQueryOptions(success_iou=2, prompt_form="sketch")


def test_the_env_keeps_its_options_and_the_spec_round_trips():
    kwargs = {"task": "procedural/plate_holes/train-0", "max_steps": 3, "success_iou": 0.9}
    env = gym.make("toolgym/CadQuery-v0", **kwargs)
    try:
        options = env.unwrapped.options
        assert options == CadQueryOptions(**kwargs)
        assert pickle.loads(pickle.dumps(options)) == options
        assert env.spec.kwargs == kwargs
        assert env.unwrapped.success_iou == 0.9 and env.unwrapped.max_steps == 3
        again = gym.make(env.spec)
        try:
            assert again.unwrapped.options == options
        finally:
            again.close()
    finally:
        env.close()


def test_every_registered_env_takes_its_options():
    for env_id in toolgym.ENVIRONMENTS:
        entry = gym.spec(env_id).entry_point
        module, _, name = str(entry).partition(":")
        cls = getattr(__import__(module, fromlist=[name]), name)
        assert issubclass(cls, ToolEnv) and cls in TOOLS, env_id


def test_a_subclass_with_options_of_its_own_gets_their_signature():
    @dataclasses.dataclass(frozen=True)
    class SmallOptions(CadQueryOptions):
        view_size: int = 16

    class SmallCadQueryEnv(CadQueryEnv):
        Options = SmallOptions

    class SameCadQueryEnv(CadQueryEnv):
        pass

    assert inspect.signature(SmallCadQueryEnv).parameters["view_size"].default == 16
    assert inspect.signature(CadQueryEnv).parameters["view_size"].default == 64
    assert inspect.signature(SameCadQueryEnv) == inspect.signature(CadQueryEnv)
    with pytest.raises(TypeError, match=r"^SmallCadQueryEnv.__init__\(\) got an unexpected"):
        SmallCadQueryEnv(view=3)
