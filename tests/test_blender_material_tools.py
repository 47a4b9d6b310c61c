"""The material tools (``toolgym.envs.blender.material_tools``) in a real Blender session: the
node graphs they build, what the verifier's reader makes of them, and calls they refuse."""

from __future__ import annotations

import json

import pytest

from toolgym.envs.blender.tools import registry
from toolgym.envs.sandbox import Session
from toolgym.envs.tools import ToolCallError

BUILD = """
from toolgym.envs.blender.materials import Defaults, material_surface

def graph(name):
    tree = bpy.data.objects[name].active_material.node_tree
    surface = tree.get_output_node('ALL').inputs['Surface'].links[0].from_node
    nodes = {n.name: n.type for n in tree.nodes}
    links = sorted((l.from_node.name, l.to_node.name, l.to_socket.identifier) for l in tree.links)
    return {'nodes': nodes, 'links': [list(l) for l in links], 'surface': surface.name}

def reduced(name):
    defaults = Defaults(bpy)
    try:
        return material_surface(bpy.data.objects[name].active_material, defaults)
    finally:
        defaults.close()

tools.add_primitive('uv_sphere', 'Vase', size=1.0)
tools.set_bsdf_input('Vase', 'transmission', 1.0)   # no material yet: a grey one is made
tools.set_bsdf_input('Vase', 'ior', 1.45)
tools.set_bsdf_input('Vase', 'coat', 0.6)
vase, vase_surface = graph('Vase'), reduced('Vase')

tools.add_primitive('cube', 'Crate', size=1.0)
tools.set_material('Crate', 0.8, 0.2, 0.1, roughness=0.7)
tools.mix_shader('Crate', 'GLOSSY', 0.5, r=0.9, g=0.9, b=0.9, roughness=0.1)
tools.mix_shader('Crate', 'TRANSPARENT', 0.25)  # replaces the glossy one
crate, crate_surface = graph('Crate'), reduced('Crate')

tools.add_primitive('cube', 'Tile', size=1.0)
tools.set_texture('Tile', 'NOISE', 0.1, 0.2, 0.3, 0.9, 0.8, 0.7, scale=4.0)
noise = graph('Tile')
tools.set_texture('Tile', 'CHECKER', 0.1, 0.2, 0.3, 0.9, 0.8, 0.7, scale=6.0)
tile = bpy.data.objects['Tile'].active_material.node_tree
checker, tile_surface = graph('Tile'), reduced('Tile')
squares = tile.nodes['Base Texture'].inputs['Scale'].default_value
second = list(tile.nodes['Base Texture'].inputs['Color2'].default_value)
tools.set_texture('Tile', 'NONE', 0.4, 0.5, 0.6)
plain, plain_surface = graph('Tile'), reduced('Tile')
"""


@pytest.fixture(scope="module")
def built():
    with Session("blender") as session:
        fetch = ["vase", "vase_surface", "crate", "crate_surface", "noise", "checker"]
        fetch += ["tile_surface", "squares", "second", "plain", "plain_surface"]
        ran = session.run(BUILD, fetch=fetch)
        assert ran.ok, ran.feedback()
        return ran.results


def test_set_bsdf_input_sets_the_principled_bsdf_and_the_reader_sees_glass(built):
    assert built["vase"]["surface"] == "Principled BSDF"
    surface = built["vase_surface"]
    assert surface["transmission"] == pytest.approx(1.0)
    assert surface["settings"]["Principled BSDF IOR"][0] == pytest.approx(1.45)
    assert surface["settings"]["Principled BSDF Coat Weight"][0] == pytest.approx(0.6)


def test_mix_shader_mixes_the_principled_bsdf_with_one_second_shader(built):
    crate = built["crate"]
    assert crate["surface"] == "Shader Mix"
    assert crate["nodes"]["Mixed Shader"] == "BSDF_TRANSPARENT"  # the glossy one was replaced
    assert sorted(crate["nodes"].values()).count("MIX_SHADER") == 1
    assert ["Principled BSDF", "Shader Mix", "Shader"] in crate["links"]
    assert ["Mixed Shader", "Shader Mix", "Shader_001"] in crate["links"]
    surface = built["crate_surface"]  # a quarter transparent: it reduces to a constant surface
    assert surface["alpha"] == pytest.approx(0.75)
    assert surface["base_color"] == pytest.approx([0.6, 0.15, 0.075])
    assert surface["roughness"] == pytest.approx(0.7)


def test_set_texture_drives_the_base_colour_and_is_left_to_the_renders(built):
    noise = built["noise"]
    assert noise["nodes"]["Base Texture"] == "TEX_NOISE"
    assert ["Base Texture", "Base Texture Colours", "Factor_Float"] in noise["links"]
    assert ["Base Texture Colours", "Principled BSDF", "Base Color"] in noise["links"]
    checker = built["checker"]  # the noise replaced: one texture, straight into the colour
    assert checker["nodes"]["Base Texture"] == "TEX_CHECKER"
    assert "Base Texture Colours" not in checker["nodes"]
    assert ["Base Texture", "Principled BSDF", "Base Color"] in checker["links"]
    assert built["squares"] == pytest.approx(6.0)
    assert built["second"] == pytest.approx([0.9, 0.8, 0.7, 1.0])
    assert "irreducible" in built["tile_surface"]
    plain = built["plain"]  # NONE: the texture gone, base colour 1 left
    assert "Base Texture" not in plain["nodes"] and len(plain["links"]) == 1
    assert built["plain_surface"]["base_color"] == pytest.approx([0.4, 0.5, 0.6])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"setting": "ior", "value": 0.5}, "ior = 0.5 is out of range"),
        ({"setting": "alpha", "value": 1.5}, "alpha = 1.5 is out of range"),
        ({"setting": "gloss", "value": 0.5}, "gloss"),
    ],
)
def test_set_bsdf_input_checks_its_setting_and_range_before_it_runs(call, message):
    text = json.dumps({"name": "set_bsdf_input", "arguments": {"name": "Vase", **call}})
    with pytest.raises(ToolCallError, match=message):
        registry.parse_call(text)


def test_the_material_tools_are_in_the_registry_with_their_choices():
    grammar = registry.grammar()
    assert grammar["mix_shader"]["params"]["shader"]["choices"] == [
        "GLOSSY",
        "DIFFUSE",
        "GLASS",
        "EMISSION",
        "TRANSPARENT",
    ]
    assert grammar["set_texture"]["params"]["kind"]["choices"] == [
        "CHECKER",
        "NOISE",
        "WAVE",
        "NONE",
    ]
    assert "transmission" in grammar["set_bsdf_input"]["params"]["setting"]["choices"]
