"""The environments' arguments, declared once: those every tool takes, and each tool's own.

:class:`EnvOptions` declares the arguments every tool's environment takes, with their defaults,
ranges and documentation. A tool extends it with its own arguments and gives ``suite`` its
default (``CadQueryOptions`` in ``toolgym.envs.cadquery.env``). An environment class names its
extension as ``Options`` (see :class:`~toolgym.envs.episode.loop.ToolEnv`): its constructor takes
exactly those arguments, so ``gym.make(env_id, **kwargs)`` and ``CadQueryEnv(**kwargs)`` take
them, ``inspect.signature`` and ``help()`` show them with their defaults, and ``env.options``
holds them, checked. Code that needs an environment's arguments reads
``dataclasses.fields(EnvClass.Options)``.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import KW_ONLY, MISSING, dataclass, fields
from typing import Any, Self

import numpy as np

from toolgym.envs.sandbox import Limits
from toolgym.envs.tasks.model import SPLITS
from toolgym.verifiers.report import TIERS

ACTION_MODES = ("code", "tool")
PROMPT_FORMS = ("described", "image")
RENDER_MODES = ("rgb_array",)
# Sane bounds for constructor arguments: beyond them a step takes minutes and gigabytes (a
# 10,000 px view) or the argument means nothing (a negative penalty).
MAX_STEPS_RANGE = (1, 1000)
VIEW_SIZE_RANGE = (8, 512)
ACTION_CHARS_RANGE = (1, 1_000_000)
PENALTY_RANGE = (0.0, 1.0)


def check_int(name: str, value: Any, low: int, high: int, unit: str = "") -> None:
    """Raise ``ValueError`` unless ``value`` is an integer in ``[low, high]``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or not low <= value <= high
    ):
        unit = f" ({unit})" if unit else ""
        raise ValueError(f"{name} must be an integer from {low} to {high}{unit}, got {value!r}")


def check_number(name: str, value: Any, low: float, high: float) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite number in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number from {low} to {high}, got {value!r}")
    if not low <= float(value) <= high:  # NaN fails too
        raise ValueError(f"{name} must be a number from {low} to {high}, got {value!r}")


@dataclass(frozen=True)
class EnvOptions:
    """The arguments every tool's environment takes, checked when it is made.

    ## Arguments

    - ``suite`` (each tool's own default), ``split`` (``"train"`` or ``"test"``), ``task`` (one
      task id, instead of a suite's split; ``reset(options={"task": id})`` picks one per episode).
    - ``action_mode`` (``"code"``: a script per step; ``"tool"``: one tool call per step),
      ``max_steps`` (8; 1 to 1,000), ``view_size`` (64 px per view; 8 to 512).
    - ``show_target`` (True; False: the ``target`` image is black).
    - ``error_penalty`` (0.1; 0 to 1): the reward of a failed step.
    - ``max_action_chars`` (20,000; 1 to 1,000,000), ``limits`` (sandbox :class:`Limits`; None:
      the defaults), ``render_mode`` (None or ``"rgb_array"``).
    - ``timings_in_info`` (False): add wall-clock timings to ``info``. Off by default because they
      are the one part of ``info`` that a seed does not fix (Gymnasium's ``check_env`` compares
      infos of two runs with the same seed).
    - ``final_tier`` (None: the task's, ``"exact"``): the tier that settles the return at the
      episode's end. ``"cheap"`` keeps the last per-step score and skips the exact measurement:
      for training on a budget. Score reported results at the exact tier.
    - ``prompt_form`` (``"described"``: the task's text, with its numbers; ``"image"``: only the
      kind of task, no numbers, so only the target views say what to build).

    The first seven may be passed by position, the rest by keyword only. An argument out of range
    raises ``ValueError`` saying which and why (``limits`` not a :class:`Limits`: ``TypeError``);
    an argument the environment does not take raises ``TypeError`` naming it.
    """

    suite: str
    split: str = "train"
    task: str | None = None
    action_mode: str = "code"
    max_steps: int = 8
    view_size: int = 64
    show_target: bool = True
    _: KW_ONLY
    error_penalty: float = 0.1
    max_action_chars: int = 20_000
    limits: Limits | None = None
    render_mode: str | None = None
    timings_in_info: bool = False
    final_tier: str | None = None
    prompt_form: str = "described"

    def __post_init__(self) -> None:
        if self.prompt_form not in PROMPT_FORMS:
            raise ValueError(f"prompt_form must be one of {PROMPT_FORMS}, got {self.prompt_form!r}")
        self.check_own()
        if self.action_mode not in ACTION_MODES:
            raise ValueError(f"action_mode must be one of {ACTION_MODES}, got {self.action_mode!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or 'rgb_array', got {self.render_mode!r}")
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {self.split!r}")
        check_int("max_steps", self.max_steps, *MAX_STEPS_RANGE)
        check_int("view_size", self.view_size, *VIEW_SIZE_RANGE, "pixels per view")
        check_int("max_action_chars", self.max_action_chars, *ACTION_CHARS_RANGE, "characters")
        check_number("error_penalty", self.error_penalty, *PENALTY_RANGE)
        if self.final_tier is not None and self.final_tier not in TIERS:
            raise ValueError(f"final_tier must be None or one of {TIERS}, got {self.final_tier!r}")
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise TypeError(f"limits must be a sandbox Limits, got {type(self.limits).__name__}")

    def check_own(self) -> None:
        """Check the tool's own arguments (after ``prompt_form``, before the others): raise
        ``ValueError`` naming the first one out of range."""

    @classmethod
    def signature(cls) -> inspect.Signature:
        """The arguments, with their defaults and types, as a constructor takes them."""
        hints = typing.get_type_hints(cls)  # each class's annotations, in its own module
        parameters = [
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY
                if field.kw_only
                else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=inspect.Parameter.empty if field.default is MISSING else field.default,
                annotation=hints[field.name],
            )
            for field in sorted(fields(cls), key=lambda field: bool(field.kw_only))
        ]
        return inspect.Signature(parameters, return_annotation=None)

    @classmethod
    def parse(cls, caller: str, *args: Any, **kwargs: Any) -> Self:
        """The checked options of the call ``caller(*args, **kwargs)``; a call that does not match
        raises ``TypeError`` as Python words it for ``caller`` ("CadQueryEnv.__init__() got an
        unexpected keyword argument 'max_step'. Did you mean 'max_steps'?")."""
        try:
            return cls(*args, **kwargs)
        except TypeError as exc:
            prefix = f"{cls.__qualname__}.__init__() "
            if not str(exc).startswith(prefix):
                raise  # an argument's own check (``limits``)
            message = f"{caller}() {str(exc).removeprefix(prefix)}"
        raise TypeError(message)
