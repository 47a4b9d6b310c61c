"""The house in layers, read from the imports (``tests/layers.py``): arrows only run down, no module
is in an import circle, the tools' folders never import each other, the env layer loads no
trainer, and the README's drawing is the one the code makes."""

from __future__ import annotations

import subprocess
import sys

import pytest

import layers

README = layers.ROOT / "README.md"
BEGIN, END = "<!-- layers: begin (make layout) -->\n", "<!-- layers: end -->\n"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return layers.import_graph()


def test_every_module_stands_in_a_room_of_a_floor(graph):
    homeless = []
    for module in graph:
        try:
            layers.room(module)
        except KeyError:
            homeless.append(module)
    assert homeless == []


def test_no_arrow_runs_up_or_across(graph):
    assert layers.violations(graph) == []


def test_no_module_is_in_an_import_circle(graph):
    assert layers.circles(graph) == []


def test_the_checks_catch_an_arrow_up_a_circle_and_one_tool_reaching_into_another(graph):
    """The same checks on the real graph with three bad arrows added: each is named."""
    bad = {name: set(targets) for name, targets in graph.items()}
    bad["toolgym.envs.episode.loop"].add(
        "toolgym.agents.trainer.policy"
    )  # the env layer reaching up
    bad["toolgym.verifiers.report"].add("toolgym.envs.scene.catalogue")  # shared -> a tool
    bad["toolgym.envs.scene.verifier"].add("toolgym.envs.blender.scene")  # tool -> tool
    bad["toolgym.envs.tools"].add("toolgym.envs.grammar.tables")  # closes a circle
    found = layers.violations(bad)

    def named(arrow: str, way: str) -> bool:
        return any(f.startswith(arrow) and f"({way}:" in f for f in found)

    assert named("toolgym.envs.episode.loop -> toolgym.agents.trainer.policy", "up")
    assert named("toolgym.verifiers.report -> toolgym.envs.scene.catalogue", "up")
    assert named("toolgym.envs.scene.verifier -> toolgym.envs.blender.scene", "across")
    circle = {"toolgym.envs.tools", "toolgym.envs.grammar.tables"}
    assert any(circle <= set(c) for c in layers.circles(bad))


def test_tools_folders_are_one_floor_and_the_sandbox_is_the_ground():
    assert {layers.FLOOR[t] for t in layers.TOOLS} == {layers.FLOOR["toolgym.envs.cadquery"]}
    below = [r for r in layers.FLOOR if layers.FLOOR[r] > layers.FLOOR["toolgym.envs.sandbox"]]
    assert below == ["toolgym._version"]


def test_the_env_layer_loads_neither_torch_nor_the_trainer():
    """Making and stepping an env in tool mode under the numeric wrapper, serving one, recording
    one: none of it imports PyTorch or ``toolgym.agents``."""
    code = (
        "import sys, toolgym, toolgym.envs.wrappers.standard, toolgym.envs.wrappers.mixed, "
        "toolgym.envs.serving.server, toolgym.envs.recording.recorder, toolgym.envs.doctor\n"
        "from toolgym.envs.domains import domains\n"
        "[d.registry() for d in domains()]\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('toolgym.agents')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_readme_draws_the_layers_the_code_has(graph):
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "the README's Layout section lost its drawing markers"
    drawn = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert drawn == layers.drawing(graph), "the drawing is stale: run `make layout`"


def write_readme() -> None:
    """Put the current drawing between the markers (``make layout``)."""
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    README.write_text(head + BEGIN + layers.drawing() + END + rest.split(END, 1)[1], "utf-8")


if __name__ == "__main__":
    write_readme()
