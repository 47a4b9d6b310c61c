"""The domain plug-in: each tool's folder reaches the shared suites, CLI and agents through it."""

from __future__ import annotations

import gymnasium as gym
import pytest

import toolgym
from toolgym.envs.domains import domain_of_env, domains, get_domain
from toolgym.envs.registration import domain_names, register_domain
from toolgym.envs.tasks.suites import get_suite, get_task, suites


def test_every_domain_is_registered_as_an_environment_and_knows_its_tasks():
    assert domain_names() == ("cadquery", "blender", "scene")
    for domain in domains():
        assert toolgym.ENVIRONMENTS[domain.env_id].startswith(f"toolgym.envs.{domain.name}.")
        assert gym.spec(domain.card.standard_env_id).kwargs == {"env_id": domain.env_id}
        assert domain_of_env(domain.env_id) is domain
        assert get_suite(domain.default_suite).domain == domain.name
        assert domain.export_formats
        assert domain.registry().tools
        for suite in domain.suites().values():
            assert suite.domain == domain.name and suites()[suite.name] is suite
            # A generated id is made for any seed, not only the listed ones.
            first = suite.tasks[0]
            unlisted = first.id.rsplit("-", 1)[0] + "-9999"
            assert get_task(unlisted).seed == 9999
            assert domain.task(unlisted) == get_task(unlisted)


def test_unknown_domains_and_environments_are_named():
    with pytest.raises(KeyError, match="unknown domain 'maya'; known: cadquery"):
        get_domain("maya")
    with pytest.raises(KeyError, match="toolgym environments: toolgym/CadQuery-v0"):
        domain_of_env("toolgym/Maya-v0")
    assert get_domain("cadquery").task("primitives/flange/train-0") is None  # not its family


def test_an_environment_refuses_another_tools_tasks(tmp_path):
    other = next(d for d in domain_names() if d != "cadquery")
    path = tmp_path / "other.toml"
    path.write_text(
        f'[suite]\nname = "other"\ndomain = "{other}"\ndescription = "x"\n'
        '[[task]]\nname = "t"\nprompt = "p"\ndifficulty = 1\nsplit = "train"\n'
        'reference = "pass"\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=f"other/t is a {other} task; this environment runs cadq"):
        gym.make("toolgym/CadQuery-v0", suite=str(path))


def test_a_card_that_cannot_be_registered_is_named(tmp_path, monkeypatch):
    """A folder without a card, a second tool of a registered name and a malformed id are
    refused in one line; registering a folder again changes nothing."""
    again = register_domain("toolgym.envs.cadquery")
    assert (again.name, again.package, again.env_id) == (
        "cadquery",
        "toolgym.envs.cadquery",
        "toolgym/CadQuery-v0",
    )
    with pytest.raises(ValueError, match=r"toolgym\.envs\.sandbox declares no CARD"):
        register_domain("toolgym.envs.sandbox")
    cards = {  # name, env_id, env, backend, package
        "twin": ("cadquery", "toolgym/Twin-v0", "env:E", "backend:B", "twin"),
        "badid": ("badid", "toolgym/NoVersion", "env:E", "backend:B", "badid"),
        "badtarget": ("badtarget", "toolgym/Bad-v0", "env", "backend:B", "badtarget"),
        "moved": ("moved", "toolgym/Moved-v0", "env:E", "backend:B", "elsewhere"),
    }
    for folder, (name, env_id, env, backend, package) in cards.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text(
            "from toolgym.envs.registration import DomainCard\n"
            f"CARD = DomainCard({package!r}, {name!r}, {env_id!r}, {env!r}, {backend!r})\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="a tool named 'cadquery' is registered already"):
        register_domain("twin")
    with pytest.raises(ValueError, match="not of the form namespace/Name-vN"):
        register_domain("badid")
    with pytest.raises(ValueError, match=r"CARD\.env must be 'module:NAME', got 'env'"):
        register_domain("badtarget")
    with pytest.raises(ValueError, match=r"moved: CARD\.package is 'elsewhere'; give it __name__"):
        register_domain("moved")
    assert domain_names() == ("cadquery", "blender", "scene")
