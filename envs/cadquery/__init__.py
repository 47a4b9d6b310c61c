"""CAD on the OpenCASCADE kernel through CadQuery: ``toolgym/CadQuery-v0``."""

from toolgym.envs.registration import DomainCard

CARD = DomainCard(
    package=__name__,
    name="cadquery",
    env_id="toolgym/CadQuery-v0",
    env="env:CadQueryEnv",
    backend="backend:CadQueryBackend",
    distributions=("cadquery", "cadquery-ocp"),
)
