"""Agent scripts run as they would at home: as ``__main__``, with their own ``__future__`` imports
only (never the sandbox's), in every backend."""

from __future__ import annotations

import pytest

from toolgym.envs.sandbox import Session

# An annotation-heavy class, a dataclass resolved through sys.modules["__main__"], and a main block.
PORTABLE = """
import dataclasses, typing

class Spec:
    width: int
    depth: "float"
    tags: list[str]

@dataclasses.dataclass
class Box:
    size: float = 1.0
    kind: typing.ClassVar[str] = "box"

hints = {k: getattr(v, "__name__", str(v)) for k, v in typing.get_type_hints(Spec).items()}
raw = {k: type(v).__name__ for k, v in Spec.__annotations__.items()}
fields = [f.name for f in dataclasses.fields(Box)]
ran_main = False
if __name__ == "__main__":
    ran_main = True
"""


@pytest.mark.parametrize("backend", ["cadquery", "scene", "blender"])
def test_scripts_run_as_main_without_inherited_future_imports(backend):
    with Session(backend, snapshot_on_start=False) as session:
        result = session.run(PORTABLE, fetch=["hints", "raw", "fields", "ran_main"])
        assert result.ok, result.feedback()
        assert result.results["ran_main"] is True
        # Without an inherited ``from __future__ import annotations`` they are real types.
        assert result.results["raw"] == {"width": "type", "depth": "str", "tags": "GenericAlias"}
        assert result.results["hints"]["width"] == "int"
        assert result.results["fields"] == ["size"]  # ClassVar seen as one, not a field
        # A script's own __future__ import still applies to it.
        own = session.run(
            "from __future__ import annotations\n"
            "class A:\n    x: int\n"
            "kind = type(A.__annotations__['x']).__name__",
            fetch=["kind"],
        )
        assert own.results["kind"] == "str", own.feedback()


def test_blender_property_annotations_register():
    script = """
import bpy

class ToolgymSettings(bpy.types.PropertyGroup):
    count: bpy.props.IntProperty(name="Count", default=3)
    label: bpy.props.StringProperty(default="part")

class OBJECT_OT_toolgym_scale(bpy.types.Operator):
    bl_idname = "object.toolgym_scale"
    bl_label = "Scale"
    factor: bpy.props.FloatProperty(default=2.0)

    def execute(self, context):
        context.scene["toolgym_factor"] = self.factor
        return {"FINISHED"}

def register():
    bpy.utils.register_class(ToolgymSettings)
    bpy.utils.register_class(OBJECT_OT_toolgym_scale)
    bpy.types.Scene.toolgym = bpy.props.PointerProperty(type=ToolgymSettings)

if __name__ == "__main__":
    register()
    bpy.ops.object.toolgym_scale(factor=4.5)
    count = bpy.context.scene.toolgym.count
    label = bpy.context.scene.toolgym.label
    factor = bpy.context.scene["toolgym_factor"]
"""
    with Session("blender", snapshot_on_start=False) as session:
        result = session.run(script, fetch=["count", "label", "factor"])
        assert result.ok, result.feedback()
        assert result.results == {"count": 3, "label": "part", "factor": 4.5}
