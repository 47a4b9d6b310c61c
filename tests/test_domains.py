"""The domain plug-in: each tool's folder reaches the shared suites, CLI and agents through it."""

from __future__ import annotations

import gymnasium as gym
import pytest

import toolgym
from toolgym.envs.domains import DOMAIN_MODULES, domain_of_env, domains, get_domain
from toolgym.envs.tasks.model import DOMAINS
from toolgym.envs.tasks.suites import get_suite, get_task, suites


def test_every_domain_is_registered_as_an_environment_and_knows_its_tasks():
    assert set(DOMAIN_MODULES) <= set(DOMAINS)
    for domain in domains():
        assert toolgym.ENVIRONMENTS[domain.env_id].startswith(f"toolgym.envs.{domain.name}.")
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
    other = next(d for d in DOMAINS if d != "cadquery")
    path = tmp_path / "other.toml"
    path.write_text(
        f'[suite]\nname = "other"\ndomain = "{other}"\ndescription = "x"\n'
        '[[task]]\nname = "t"\nprompt = "p"\ndifficulty = 1\nsplit = "train"\n'
        'reference = "pass"\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=f"other/t is a {other} task; this environment runs cadq"):
        gym.make("toolgym/CadQuery-v0", suite=str(path))
