"""toolgym: Gymnasium environments in which agents operate professional tools by writing scripts.

``import toolgym`` registers the tools: ``gym.make("toolgym/CadQuery-v0", ...)``, and their
numeric faces ``toolgym/CadQuery-Std-v0`` etc. (tool mode under
``toolgym.envs.wrappers.standard.StandardSpaces``). A client that only takes an id writes
``"toolgym:toolgym/CadQuery-Std-v0"``: Gymnasium imports ``toolgym`` first.

A tool is a folder and one line here (``toolgym.envs.registration``); registering imports no tool.
"""

from toolgym._version import __version__
from toolgym.envs.registration import cards, register_domain

register_domain("toolgym.envs.cadquery")
register_domain("toolgym.envs.blender")
register_domain("toolgym.envs.scene")

#: Every registered tool's Gymnasium id to its env class (``module:Class``).
ENVIRONMENTS = {card.env_id: card.target(card.env) for card in cards()}
#: Numeric ids: MultiDiscrete tool calls and token-id texts, for RL libraries (``StandardSpaces``).
STANDARD_ENVIRONMENTS = {card.standard_env_id: card.env_id for card in cards()}


def load_environment(**kwargs: object) -> object:
    """A suite as a Prime Intellect ``verifiers`` environment: what ``vf.load_environment(
    "toolgym", suite=...)`` and ``vf-eval toolgym`` call (``toolgym.agents.llm.verifiers_env``)."""
    from toolgym.agents.llm.verifiers_env import load_environment as load

    return load(**kwargs)  # type: ignore[arg-type]


__all__ = ["ENVIRONMENTS", "STANDARD_ENVIRONMENTS", "__version__", "load_environment"]
