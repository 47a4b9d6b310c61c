"""Procedural edits of modifiers and geometry nodes, said in any style of the phrase bank: each
starts from a scene with one object and asks for a change the verifier reads in its evaluated
mesh (the union of its closed shells: an open surface counts for nothing).

- ``mirror_half``: one half (or quarter) of a bench or table, cut open on its mirror plane(s):
  add a Mirror modifier across the right axes, merging the seam so the cut parts close.
- ``solidify_shell``: an open cup, tray or pipe with a thin Solidify modifier: set its
  thickness and which side of the surface the wall grows on.
- ``subdivide``: a box with a Simple (or one-level) Subdivision Surface modifier: smooth it,
  Catmull-Clark with a number of render levels (the verifier reads what renders draw, so the
  viewport's levels are not asked for).
- ``boolean_cut``: a block and a cutter beside it: place and size the cutter, cut a round or
  square hole through the block (the ``boolean`` tool), the cutter gone.
- ``geometry_nodes_grid``: a Geometry Nodes tree (built by the start program) that lays out a
  grid of tiles: change its inputs (columns, rows, spacing, tile size and height).

Lengths in metres, angles in degrees. Every object stands on the floor (z = 0), centred on the
origin unless said; left, right, in front of and behind read as seen from the front (from -Y).
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.blender.families.model import Call, Drawn, Family, snap
from toolgym.envs.blender.families.phrases import Phrases

Box = tuple[tuple[float, float, float], tuple[float, float, float]]  # size, centre (m)


def _convention(s: Phrases) -> str:
    """What relative places mean, for the styles that say them so."""
    return (
        f"{s.w('directions')} read {s.w('from the front')}: left and right are -X and +X, in "
        f"front of and behind are -Y and +Y, and a distance from an object is from its centre"
    )


# -- mirror_half ---------------------------------------------------------------------------------

MIRROR_START = """import bmesh
mesh = bpy.data.meshes.new({name!r})
built = bmesh.new()
for (sx, sy, sz), (cx, cy, cz) in {boxes!r}:
    made = bmesh.ops.create_cube(built, size=1.0)
    for vertex in made["verts"]:
        vertex.co = (vertex.co.x * sx + cx, vertex.co.y * sy + cy, vertex.co.z * sz + cz)
# Each face in four: a cut then opens an eight-sided hole, which no reader takes for closed.
bmesh.ops.subdivide_edges(built, edges=built.edges[:], cuts=1, use_grid_fill=True)
for normal in {cuts!r}:  # keep the +X (+Y) side only (and a little past), open on the cut
    geometry = built.verts[:] + built.edges[:] + built.faces[:]
    at = tuple(-{past!r} * n for n in normal)
    bmesh.ops.bisect_plane(built, geom=geometry, plane_co=at, plane_no=normal, clear_inner=True)
built.to_mesh(mesh)
built.free()
bpy.context.scene.collection.objects.link(bpy.data.objects.new({name!r}, mesh))
"""


def _bench(rng: np.random.Generator) -> tuple[dict[str, float], list[Box]]:
    """A bench along X: a seat on two end panels, a backrest at the back (+Y)."""
    p = {
        "length": snap(rng.uniform(1.0, 1.8), 0.1),
        "depth": snap(rng.uniform(0.35, 0.5)),
        "height": snap(rng.uniform(0.4, 0.5)),
        "board": snap(rng.uniform(0.04, 0.08), 0.01),
        "back": snap(rng.uniform(0.3, 0.5)),
    }
    length, depth, height, t, back = (p[k] for k in ("length", "depth", "height", "board", "back"))
    end = length / 2 - t / 2 - 0.1
    boxes: list[Box] = [
        ((length, depth, t), (0.0, 0.0, height - t / 2)),
        ((t, depth, height - t), (end, 0.0, (height - t) / 2)),
        ((t, depth, height - t), (-end, 0.0, (height - t) / 2)),
        ((length, t, back), (0.0, depth / 2 - t / 2, height + back / 2)),
    ]
    p["overall"] = (length, depth, height + back)
    return p, boxes


def _table(rng: np.random.Generator) -> tuple[dict[str, float], list[Box]]:
    """A table: a top on four square legs set in from its corners."""
    p = {
        "width": snap(rng.uniform(0.8, 1.6), 0.1),
        "depth": snap(rng.uniform(0.6, 1.0), 0.1),
        "height": snap(rng.uniform(0.6, 0.9)),
        "board": snap(rng.uniform(0.03, 0.06), 0.01),
        "leg": snap(rng.uniform(0.05, 0.1), 0.01),
    }
    width, depth, height, t, leg = (p[k] for k in ("width", "depth", "height", "board", "leg"))
    boxes: list[Box] = [((width, depth, t), (0.0, 0.0, height - t / 2))]
    for sx in (1, -1):
        for sy in (1, -1):
            at = (sx * (width / 2 - leg / 2 - 0.05), sy * (depth / 2 - leg / 2 - 0.05))
            boxes.append(((leg, leg, height - t), (at[0], at[1], (height - t) / 2)))
    p["overall"] = (width, depth, height)
    return p, boxes


def _mirror_half(rng: np.random.Generator) -> Drawn:
    """Bench halves mirror across X or (turned a quarter) Y; a table's quarter across both."""
    axes = str(rng.choice(["X", "Y", "XY"]))
    if axes == "XY":
        name, model = "Table", "table"
        p, boxes = _table(rng)
    else:
        name, model = "Bench", "bench"
        p, boxes = _bench(rng)
        if axes == "Y":  # the bench turned to run along Y, its back at +X
            boxes = [((sy, sx, sz), (cy, cx, cz)) for (sx, sy, sz), (cx, cy, cz) in boxes]
            w, d, h = p["overall"]
            p["overall"] = (d, w, h)
    cuts = [(1.0, 0.0, 0.0)] * ("X" in axes) + [(0.0, 1.0, 0.0)] * ("Y" in axes)
    rounded = [
        (tuple(snap(v, 0.001) for v in size), tuple(snap(v, 0.001) for v in at))
        for size, at in boxes
    ]
    past = 0.0 if rng.random() < 0.5 else snap(rng.uniform(0.02, 0.05), 0.01)
    start = MIRROR_START.format(name=name, boxes=rounded, cuts=cuts, past=past)
    calls: list[Call] = [
        ("add_modifier", {"name": name, "kind": "MIRROR", "modifier": "Mirror"}),
        (
            "set_mirror",
            {
                "name": name,
                "modifier": "Mirror",
                "x": int("X" in axes),
                "y": int("Y" in axes),
                "z": 0,
                "merge": 1,
                "bisect": int(past > 0),
            },
        ),
    ]
    part = "one quarter" if axes == "XY" else "one half"
    side = "+X, +Y" if axes == "XY" else f"+{axes}"
    across = "X and Y" if axes == "XY" else axes
    planes = "each seam" if axes == "XY" else "the seam"

    def text(s: Phrases) -> list[str]:
        said = [
            f"{name} holds only {s.w(part)} of a {s.w(model)}, the part on the {side} side: "
            f"{s.w('add')} a Mirror {s.w('modifier')} {s.w('across')} {across} that "
            f"{s.w('makes it whole')}",
            f"the whole {s.w(model)} is {s.dims(*p['overall'])} {s.w('overall')} (X, Y, Z), "
            f"{s.w('standing on the floor')} (z = 0)",
        ]
        if past:
            said.append(
                f"{name} {s.w('reaches')} {s.len(past)} past {s.w(planes)}: "
                f"{s.w('bisect')} it there, so that what lies past is cut away before the "
                f"{s.w('mirroring')}"
            )
        return said

    parameters = {"axes": axes, "past": past, **{k: v for k, v in p.items() if k != "overall"}}
    tier = (1 if axes == "X" else 2) + (past > 0)
    return Drawn(text, start, calls, parameters, tier)


# -- solidify_shell ------------------------------------------------------------------------------

SOLIDIFY_START = """import bmesh
from mathutils import Matrix
{build}
shape = bpy.data.objects[{name!r}]
built = bmesh.new()
built.from_mesh(shape.data)
built.normal_update()
opened = [f for f in built.faces if {which}]
bmesh.ops.delete(built, geom=opened, context="FACES_ONLY")
built.to_mesh(shape.data)
built.free()
tools.add_modifier({name!r}, "SOLIDIFY", "Solidify")
tools.set_modifier({name!r}, "Solidify", "thickness", 0.01)
tools.set_modifier({name!r}, "Solidify", "offset", -1.0)
"""
SHELLS = {
    # name, what is opened (faces whose normal says so)
    "cup": ("Cup", "f.normal.z > 0.5"),
    "tray": ("Tray", "f.normal.z > 0.5"),
    "pipe": ("Pipe", "abs(f.normal.z) > 0.5"),
}
OFFSETS = {-1.0: "inside", 0.0: "centred", 1.0: "outside"}


def _solidify_shell(rng: np.random.Generator) -> Drawn:
    """An open cup, tray or pipe: the Solidify's thickness 0.02-0.1 m and its side."""
    shape = str(rng.choice(list(SHELLS)))
    name, which = SHELLS[shape]
    if shape == "tray":
        width, depth = snap(rng.uniform(0.6, 1.2), 0.1), snap(rng.uniform(0.4, 0.8), 0.1)
        height = snap(rng.uniform(0.1, 0.25))
        build = (
            f'tools.add_primitive("cube", {name!r}, size=1.0, z={height / 2!r})\n'
            f"bpy.data.objects[{name!r}].data.transform("
            f"Matrix.Diagonal(({width!r}, {depth!r}, {height!r}, 1.0)))"
        )
        sizes = {"width": width, "depth": depth, "height": height}
    else:
        diameter, height = snap(rng.uniform(0.4, 0.8)), snap(rng.uniform(0.4, 0.9))
        build = (
            f'tools.add_primitive("cylinder", {name!r}, size={diameter!r}, depth={height!r}, '
            f"z={height / 2!r})"
        )
        sizes = {"diameter": diameter, "height": height}
    thickness = snap(rng.uniform(0.02, 0.1), 0.01)
    offset = float(rng.choice(list(OFFSETS)))
    start = SOLIDIFY_START.format(build=build, name=name, which=which)
    calls: list[Call] = [
        (
            "set_modifier",
            {"name": name, "modifier": "Solidify", "setting": "thickness", "value": thickness},
        ),
        (
            "set_modifier",
            {"name": name, "modifier": "Solidify", "setting": "offset", "value": offset},
        ),
    ]

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('set')} the {s.w('wall thickness')} of {name}, a {s.w('open')} {s.w(shape)}, "
            f"to {s.len(thickness)} with its Solidify {s.w('modifier')}",
            f"the {s.w('shell wall')} {s.w(OFFSETS[offset])} the surface it has now, whose "
            f"{s.w('normals')} face out",
        ]

    parameters = {"shape": shape, **sizes, "thickness": thickness, "offset": offset}
    return Drawn(text, start, calls, parameters, 1 if offset == -1.0 else 2)


# -- subdivide -----------------------------------------------------------------------------------


def _subdivide(rng: np.random.Generator) -> Drawn:
    """A box (0.4-1.2 m sides) whose Subdivision Surface is Simple, or one Catmull-Clark level:
    Catmull-Clark at 2 or 3 render levels (levels that the verifier's IoU tells apart)."""
    name = str(rng.choice(["Cushion", "Pebble", "Pillow"]))
    size = [snap(v) for v in rng.uniform(0.4, 1.2, 3)]
    size[2] = snap(min(size[2], 0.8 * min(size[:2])))
    simple = bool(rng.random() < 0.6)
    levels = int(rng.integers(2, 4))
    start: list[Call] = [
        ("add_primitive", {"kind": "cube", "name": name, "size": 1.0, "z": size[2] / 2}),
        ("set_scale", {"name": name, "x": size[0], "y": size[1], "z": size[2]}),
        ("add_modifier", {"name": name, "kind": "SUBSURF", "modifier": "Subdivision"}),
        (
            "set_modifier_choice",
            {
                "name": name,
                "modifier": "Subdivision",
                "setting": "subdivision_type",
                "value": "SIMPLE" if simple else "CATMULL_CLARK",
            },
        ),
        (
            "set_modifier",
            {"name": name, "modifier": "Subdivision", "setting": "render_levels", "value": 1.0},
        ),
    ]
    calls: list[Call] = []
    if simple:
        calls.append(
            (
                "set_modifier_choice",
                {
                    "name": name,
                    "modifier": "Subdivision",
                    "setting": "subdivision_type",
                    "value": "CATMULL_CLARK",
                },
            )
        )
    calls.append(
        (
            "set_modifier",
            {
                "name": name,
                "modifier": "Subdivision",
                "setting": "render_levels",
                "value": float(levels),
            },
        )
    )

    def text(s: Phrases) -> list[str]:
        said = [
            f"{s.w('round off')} the {s.w('box')} {name} with its Subdivision Surface "
            f"{s.w('modifier')}: {s.w('set')} its {s.w('render levels')} to {s.count(levels)}"
        ]
        if simple:
            said.append(
                f"{s.w('switch')} its {s.w('subdivision type')} from Simple to Catmull-Clark, "
                f"which {s.w('rounds')} the corners"
            )
        else:
            said.append(f"{s.w('keep')} its Catmull-Clark {s.w('subdivision type')}")
        return said

    parameters = {"x": size[0], "y": size[1], "z": size[2], "simple": simple, "levels": levels}
    return Drawn(text, start, calls, parameters, 2 if simple else 1)


# -- boolean_cut ---------------------------------------------------------------------------------


def _boolean_cut(rng: np.random.Generator) -> Drawn:
    """A block (0.8-1.6 × 0.4-0.8 × 0.2-0.5 m) cut through by a round or square hole along Z
    or Y, with the scene's cutter (a 1 m cylinder or cube, 32 segments), then deleted."""
    width, depth = snap(rng.uniform(0.8, 1.6), 0.1), snap(rng.uniform(0.4, 0.8), 0.1)
    height = snap(rng.uniform(0.2, 0.5))
    round_hole = bool(rng.random() < 0.6)
    axis = str(rng.choice(["Z", "Y"]))
    across = depth if axis == "Z" else height  # what the hole's side lies in, besides X
    hole = snap(rng.uniform(0.08, 0.5 * min(across, 0.4)), 0.01)
    x = snap(rng.uniform(-width / 2 + hole, width / 2 - hole))
    if axis == "Z":
        y = snap(rng.uniform(-depth / 2 + hole, depth / 2 - hole))
        y = y if abs(y) + hole / 2 < depth / 2 - 0.02 else 0.0
        at, length = (x, y, height / 2), height + 0.2
    else:
        reach = max(height / 2 - hole / 2 - 0.02, 0.0)  # the hole stays 2 cm inside
        z = snap(height / 2 + snap(rng.uniform(-reach, reach), 0.01), 0.001)
        at, length = (x, 0.0, z), depth + 0.2
    kind = "cylinder" if round_hole else "cube"
    start: list[Call] = [
        ("add_primitive", {"kind": "cube", "name": "Block", "size": 1.0, "z": height / 2}),
        ("set_scale", {"name": "Block", "x": width, "y": depth, "z": height}),
        (
            "add_primitive",
            {
                "kind": kind,
                "name": "Cutter",
                "size": 1.0,
                "depth": 1.0,
                "x": snap(width / 2 + 1.0),
                "z": 0.5,
            },
        ),
    ]
    calls: list[Call] = []
    if axis == "Y":
        calls.append(("set_rotation", {"name": "Cutter", "x": 90.0, "y": 0.0, "z": 0.0}))
    calls += [
        ("set_location", {"name": "Cutter", "x": at[0], "y": at[1], "z": at[2]}),
        ("set_scale", {"name": "Cutter", "x": hole, "y": hole, "z": snap(length)}),
        ("boolean", {"name": "Block", "other": "Cutter", "operation": "DIFFERENCE"}),
    ]
    centre = (0.0, 0.0, height / 2)
    direction = "top to bottom" if axis == "Z" else "front to back"

    def text(s: Phrases) -> list[str]:
        shaped = (
            s.dia(hole, "hole")
            if round_hole
            else f"square {s.w('hole')} {s.len(hole)} on a side, its sides square to Block's,"
        )
        return [
            f"{s.w('cut')} a {shaped} {s.w('straight through')} Block from {s.w(direction)}",
            f"its axis {s.w('passes')} {s.place(*at, anchor=('Block', centre))}",
            f"{s.w('use')} the {s.w(kind + ' cutter')} Cutter for a boolean difference, then "
            f"{s.w('remove')} it, so that only Block is left",
            _convention(s),
        ]

    parameters = {"width": width, "depth": depth, "height": height, "hole": hole, "axis": axis}
    return Drawn(text, start, calls, parameters, 3 if axis == "Y" else 2)


# -- geometry_nodes_grid -------------------------------------------------------------------------

GRID_START = """mesh = bpy.data.meshes.new("Tiles")
tiles = bpy.data.objects.new("Tiles", mesh)
bpy.context.scene.collection.objects.link(tiles)
tree = bpy.data.node_groups.new("TileGrid", "GeometryNodeTree")
tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
for label, kind, low in (
    ("Columns", "NodeSocketInt", 1),
    ("Rows", "NodeSocketInt", 1),
    ("Spacing", "NodeSocketFloat", 0.0),
    ("Size", "NodeSocketFloat", 0.0),
    ("Height", "NodeSocketFloat", 0.0),
):
    socket = tree.interface.new_socket(label, in_out="INPUT", socket_type=kind)
    socket.min_value = low
nodes, links = tree.nodes, tree.links
given, result = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")


def math(operation, a, b):
    node = nodes.new("ShaderNodeMath")
    node.operation = operation
    for socket, value in zip(node.inputs, (a, b)):
        if isinstance(value, float):
            socket.default_value = value
        else:
            links.new(value, socket)
    return node.outputs[0]


# Tile centres: a Columns × Rows grid of points, Spacing apart, centred on the origin.
grid = nodes.new("GeometryNodeMeshGrid")
for side, count in (("Size X", "Columns"), ("Size Y", "Rows")):
    across = math("SUBTRACT", given.outputs[count], 1.0)
    links.new(math("MULTIPLY", given.outputs["Spacing"], across), grid.inputs[side])
links.new(given.outputs["Columns"], grid.inputs["Vertices X"])
links.new(given.outputs["Rows"], grid.inputs["Vertices Y"])
# On each, a Size × Size × Height box standing on the floor.
size = nodes.new("ShaderNodeCombineXYZ")
links.new(given.outputs["Size"], size.inputs["X"])
links.new(given.outputs["Size"], size.inputs["Y"])
links.new(given.outputs["Height"], size.inputs["Z"])
box = nodes.new("GeometryNodeMeshCube")
links.new(size.outputs[0], box.inputs["Size"])
placed = nodes.new("GeometryNodeInstanceOnPoints")
links.new(grid.outputs["Mesh"], placed.inputs["Points"])
links.new(box.outputs["Mesh"], placed.inputs["Instance"])
real = nodes.new("GeometryNodeRealizeInstances")
links.new(placed.outputs[0], real.inputs[0])
lift = nodes.new("ShaderNodeCombineXYZ")
links.new(math("MULTIPLY", given.outputs["Height"], 0.5), lift.inputs["Z"])
moved = nodes.new("GeometryNodeTransform")
links.new(real.outputs[0], moved.inputs["Geometry"])
links.new(lift.outputs[0], moved.inputs["Translation"])
links.new(moved.outputs[0], result.inputs[0])
tiles.modifiers.new("Grid", "NODES").node_group = tree
"""
GRID_INPUTS = ("Columns", "Rows", "Spacing", "Size", "Height")


def _grid_values(rng: np.random.Generator) -> dict[str, float]:
    spacing = snap(rng.uniform(0.5, 1.2))
    return {
        "Columns": int(rng.integers(2, 7)),
        "Rows": int(rng.integers(2, 6)),
        "Spacing": spacing,
        "Size": snap(rng.uniform(0.2, spacing - 0.15)),
        "Height": snap(rng.uniform(0.1, 0.6)),
    }


def _geometry_nodes_grid(rng: np.random.Generator) -> Drawn:
    """A grid of tiles from a Geometry Nodes tree: two to four of its five inputs changed (the
    tiles never touch: their size stays under the spacing)."""
    before, after = _grid_values(rng), _grid_values(rng)
    picked = {GRID_INPUTS[k] for k in rng.choice(5, int(rng.integers(2, 5)), replace=False)}
    goal = {k: after[k] if k in picked else before[k] for k in GRID_INPUTS}
    goal["Size"] = min(goal["Size"], snap(goal["Spacing"] - 0.15))  # the tiles never touch
    if goal == before:
        goal["Columns"] = before["Columns"] % 6 + 2
    names = [k for k in GRID_INPUTS if goal[k] != before[k]]
    start = GRID_START + "".join(
        f"tools.set_node_input('Tiles', 'Grid', {k!r}, {float(before[k])!r})\n" for k in GRID_INPUTS
    )
    calls: list[Call] = [
        (
            "set_node_input",
            {"name": "Tiles", "modifier": "Grid", "input": k, "value": float(goal[k])},
        )
        for k in names
    ]

    def said(s: Phrases, k: str) -> str:
        value = goal[k]
        if k in ("Columns", "Rows"):
            return f"{s.w('set')} {k} (the {s.w(k)}) to {s.count(int(value))}"
        meaning = {"Spacing": "spacing", "Size": "tile width", "Height": "tile height"}[k]
        return f"{s.w('set')} {k} (the {s.w(meaning)}) to {s.len(value)}"

    def text(s: Phrases) -> list[str]:
        return [
            f"{s.w('change')} the {s.w('tile grid')} that the Grid {s.w('modifier')} of Tiles "
            f"{s.w('builds')} through its inputs",
            *(said(s, k) for k in names),
        ]

    parameters = {"changed": names, **{k: goal[k] for k in GRID_INPUTS}}
    return Drawn(text, start, calls, parameters, 1 if len(names) <= 2 else 2)


WORDS = {
    # mirror_half
    "one half": ("one half", "a single half", "half the geometry"),
    "one quarter": ("one quarter", "a single quarter", "a quarter of the geometry"),
    "bench": ("bench", "park bench", "long seat"),
    "add": ("add", "put on", "attach"),
    "across": ("across", "along", "mirroring in"),
    "makes it whole": ("makes it whole", "completes it", "rebuilds the full shape"),
    "reaches": ("reaches", "extends", "carries on"),
    "the seam": ("the mirror plane", "its mirror plane", "the centre plane"),
    "each seam": ("each mirror plane", "both mirror planes", "either centre plane"),
    "bisect": ("bisect", "trim", "clip"),
    "mirroring": ("mirroring", "mirror copy", "reflection"),
    "overall": ("overall", "in all", "outside to outside"),
    "standing on the floor": ("standing on the floor", "resting on the floor", "set on the ground"),
    # solidify_shell
    "open": ("open", "single-sided", "unthickened"),
    "cup": ("cup", "beaker", "open-topped cylinder"),
    "tray": ("tray", "open box", "lidless box"),
    "pipe": ("pipe", "tube", "open-ended cylinder"),
    "wall thickness": ("wall thickness", "thickness of the walls", "skin depth"),
    "shell wall": ("wall", "solid wall", "skin"),
    "inside": ("grows inward from", "lies inside", "sits on the inner side of"),
    "centred": ("is centred on", "straddles", "sits evenly about"),
    "outside": ("grows outward from", "lies outside", "sits on the outer side of"),
    "normals": ("normals", "face normals", "surface normals"),
    # subdivide
    "round off": ("round off", "smooth", "soften"),
    "box": ("box", "block", "cuboid"),
    "render levels": ("render levels", "levels for renders", "render-time subdivision count"),
    "switch": ("switch", "change", "turn"),
    "subdivision type": ("subdivision type", "subdivision method", "scheme"),
    "rounds": ("rounds", "smooths", "softens"),
    "keep": ("keep", "leave", "retain"),
    # boolean_cut
    "cut": ("cut", "bore", "make"),
    "hole": ("hole", "opening", "through-hole"),
    "straight through": ("straight through", "right through", "clean through"),
    "top to bottom": ("top to bottom", "its top face to its bottom face", "above to below"),
    "front to back": ("front to back", "its front face to its back face", "fore to aft"),
    "passes": ("passes", "runs", "goes"),
    "use": ("use", "take", "employ"),
    "cylinder cutter": ("cylindrical", "round", "drum-shaped"),
    "cube cutter": ("cubic", "box-shaped", "square-sided"),
    "remove": ("remove", "delete", "discard"),
    "directions": ("directions", "relative places", "offsets"),
    "from the front": ("as seen from the front", "as viewed from the front", "looking toward +Y"),
    # geometry_nodes_grid
    "change": ("change", "edit", "alter"),
    "tile grid": ("grid of tiles", "tile grid", "array of pavers"),
    "builds": ("builds", "makes", "generates"),
    "Columns": ("number of columns", "count of tiles along X", "file count"),
    "Rows": ("number of rows", "count of tiles along Y", "rank count"),
    "spacing": ("centre-to-centre spacing", "distance between tile centres", "pitch"),
    "tile width": ("width of each tile", "tile size", "side of every paver"),
    "tile height": ("height of each tile", "tile thickness", "paver height"),
}

FAMILY_GROUP = (
    Family(
        "mirror_half",
        "procedural",
        _mirror_half,
        "mirror a half bench (or a quarter table) whole",
        words=WORDS,
    ),
    Family(
        "solidify_shell",
        "procedural",
        _solidify_shell,
        "an open shape's Solidify thickness and side",
        words=WORDS,
    ),
    Family(
        "subdivide",
        "procedural",
        _subdivide,
        "a box's Subdivision Surface type and render levels",
        words=WORDS,
    ),
    Family(
        "boolean_cut",
        "procedural",
        _boolean_cut,
        "cut a hole through a block with a cutter",
        words=WORDS,
    ),
    Family(
        "geometry_nodes_grid",
        "procedural",
        _geometry_nodes_grid,
        "a Geometry Nodes tile grid's inputs",
        words=WORDS,
    ),
)
