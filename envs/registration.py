"""Registering a tool: one line, ``register_domain("toolgym.envs.cadquery")``.

A tool is one folder, a package whose ``__init__.py`` declares ``CARD``, a :class:`DomainCard`:
its package, the tool's name, its Gymnasium id, and where in the folder its env, sandbox backend
and domain plug-in live. Registering reads the card and nothing else (no tool is imported): it
registers the env id, its numeric face (``...-Std-v0``, the env in tool mode under
``toolgym.envs.wrappers.standard.StandardSpaces``) and the sandbox backend. What else the shared
code asks of a tool is its :class:`toolgym.envs.domains.Domain`, imported when first asked for.

``toolgym`` registers its own tools so on import; a tool outside the package registers the same
way, from any importable package::

    from toolgym.envs.registration import register_domain
    register_domain("my_tools.lathe")   # my_tools/lathe/__init__.py declares CARD

Sandbox processes import this module (a tool's ``__init__.py`` does), so it imports nothing of
the environments.
"""

from __future__ import annotations

import dataclasses
import importlib
import re

from toolgym.envs.sandbox.backend import register_backend, unregister_backend

#: The wrapper every tool's numeric face is made by.
STANDARD_ENTRY_POINT = "toolgym.envs.wrappers.standard:standard_env"
_VERSIONED_ID = re.compile(r"^(?P<name>[\w/.:-]+?)-v(?P<version>\d+)$")


#: The env a door opens when it is told no other (the first tool registered).
DEFAULT_ENV = "toolgym/CadQuery-v0"


@dataclasses.dataclass(frozen=True)
class DomainCard:
    """What registering a tool needs, declared by its folder as ``CARD`` in ``__init__.py``.

    Attributes:
        name: the tool's name: ``Task.domain`` of its tasks, its sandbox backend's name, and the
            ``domain`` of its task files.
        env_id: its Gymnasium id, ``namespace/Name-vN``.
        env: its environment class, ``module:Class`` inside the folder (e.g. ``env:CadQueryEnv``).
        backend: its sandbox backend, ``module:Class`` inside the folder.
        distributions: the Python distributions that provide the tool, the first the tool itself
            (``toolgym doctor`` reports their versions; recordings name the first).
        domain: its :class:`~toolgym.envs.domains.Domain`, ``module:NAME`` inside the folder.
    """

    package: str  # the folder's package: ``__name__`` in its ``__init__.py``
    name: str
    env_id: str
    env: str
    backend: str
    distributions: tuple[str, ...] = ()
    domain: str = "domain:DOMAIN"

    def target(self, relative: str) -> str:
        """``module:NAME`` inside the folder, as an absolute import target."""
        return f"{self.package}.{relative}"

    @property
    def standard_env_id(self) -> str:
        """The numeric face's id: ``toolgym/CadQuery-v0`` -> ``toolgym/CadQuery-Std-v0``."""
        match = _VERSIONED_ID.match(self.env_id)
        assert match is not None  # checked by register_domain
        return f"{match['name']}-Std-v{match['version']}"


_CARDS: dict[str, DomainCard] = {}


def register_domain(package: str) -> DomainCard:
    """Register the tool whose folder is ``package`` (it declares ``CARD``); registering the
    same folder again is a no-op. Raises ``ValueError`` for a card that cannot be registered."""
    card = importlib.import_module(package).__dict__.get("CARD")
    if not isinstance(card, DomainCard):
        raise ValueError(f"{package} declares no CARD (a toolgym.envs.registration.DomainCard)")
    if card.package != package:
        raise ValueError(f"{package}: CARD.package is {card.package!r}; give it __name__")
    known = _CARDS.get(card.name)
    if known == card:
        return card
    if known is not None:
        raise ValueError(f"a tool named {card.name!r} is registered already, from {known.package}")
    if not _VERSIONED_ID.match(card.env_id):
        raise ValueError(f"{package}: env_id {card.env_id!r} is not of the form namespace/Name-vN")
    for field in ("env", "backend", "domain"):
        if ":" not in (value := getattr(card, field)):
            raise ValueError(f"{package}: CARD.{field} must be 'module:NAME', got {value!r}")
    _register_environments(card)
    register_backend(card.name, card.target(card.backend))
    _CARDS[card.name] = card
    return card


def _register_environments(card: DomainCard) -> None:
    from gymnasium.envs.registration import register, registry

    if card.env_id not in registry:
        register(id=card.env_id, entry_point=card.target(card.env), disable_env_checker=False)
    if card.standard_env_id not in registry:
        register(
            id=card.standard_env_id,
            entry_point=STANDARD_ENTRY_POINT,
            kwargs={"env_id": card.env_id},
            disable_env_checker=False,
        )


def unregister_domain(name: str) -> None:
    """Forget the tool ``name``: its card, env ids and backend (a test's toy tool, or a plug-in
    being reloaded). Raises ``KeyError`` naming the registered ones."""
    from gymnasium.envs.registration import registry

    card = get_card(name)
    for env_id in (card.env_id, card.standard_env_id):
        registry.pop(env_id, None)
    unregister_backend(name)
    del _CARDS[name]


def cards() -> list[DomainCard]:
    """Every registered tool's card, in registration order."""
    return list(_CARDS.values())


def get_card(name: str) -> DomainCard:
    """The card of the tool called ``name``. Raises ``KeyError`` naming the registered ones."""
    if name not in _CARDS:
        raise KeyError(f"unknown domain {name!r}; known: {', '.join(_CARDS) or 'none'}")
    return _CARDS[name]


def domain_names() -> tuple[str, ...]:
    """The registered tools' names, in registration order."""
    return tuple(_CARDS)
