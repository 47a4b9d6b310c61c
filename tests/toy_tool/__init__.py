"""A toy fourth tool, an abacus: what adding a tool to toolgym takes, and the test that it is no
more (``tests/test_fourth_tool.py`` copies this folder into a temporary package, registers it in
one line, and plays it through ``gym.make``, ``toolgym tasks``, ``toolgym doctor`` and the
random agent).

An abacus has four rods; a task asks for a number of beads slid up on each. Its sandbox session
holds the rods; a script sets them (``rods[0] = 3``) or calls ``tools.slide(rods, rod=0,
beads=3)``. The verifier scores the share of beads in place.
"""

from toolgym.envs.registration import DomainCard

CARD = DomainCard(
    package=__name__,
    name="abacus",
    env_id="toyspace/Abacus-v0",
    env="env:AbacusEnv",
    backend="backend:AbacusBackend",
    distributions=("numpy",),
)
