"""Packages are found, not listed: every folder with an ``__init__.py`` under the mapped roots
installs as ``toolgym.<root>.<folder>`` (a new tool's folder needs no line here)."""

from setuptools import find_namespace_packages, find_packages, setup

#: The design card keeps subpackages as top-level folders; they install under ``toolgym.``.
ROOTS = {
    "toolgym": "toolgym",
    "toolgym.envs": "envs",
    "toolgym.renderers": "renderers",
    "toolgym.verifiers": "verifiers",
    "toolgym.agents": "agents",
}
#: Task files and the scene catalogue: data, no code (namespace packages, so that setuptools
#: packs each folder's files).
DATA = {"toolgym.assets": "assets"}


def packages() -> list[str]:
    found = [*ROOTS, *DATA]
    for package, folder in ROOTS.items():
        found += [f"{package}.{name}" for name in find_packages(folder)]
    for package, folder in DATA.items():
        found += [f"{package}.{name}" for name in find_namespace_packages(folder)]
    return found


setup(package_dir={**ROOTS, **DATA}, packages=packages())
