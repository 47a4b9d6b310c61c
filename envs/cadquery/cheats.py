"""Generic CAD cheats for the reward fuzzer (``toolgym.envs.verification.fuzzing``), and the honest
near miss every one of them must score below.

Each cheat is the task's reference script followed by a few lines that work on ``result``:
they undo what the task asks (its holes, its single body, its solidity, its handedness) while
keeping what a careless verifier reads (the bounding box, the volume, the IoU, the counts of
bodies and holes, what the session's own mesher shows). A cheat that cannot change a task's
part (the bounding box of a part that is its own bounding box, a mirror of a symmetric part)
returns ``None`` for it. Whether it applies is read off the reference as the verifier holds it
(its mesh and face inventory, measured in a sandbox), never by running CAD code here.

Lengths are mm. Every script leaves the part in ``result``, as an agent's does.
"""

from __future__ import annotations

import numpy as np

from toolgym.envs.tasks.model import Task
from toolgym.envs.verification.fuzzing import Cheat
from toolgym.verifiers import features, geometry
from toolgym.verifiers.parts import Part

SLIVER_MM = 0.1  # a sliver's side: invisible in any view, a body or a bridge to a count
SLIVER_SHARE = 0.01  # ... and at most this share of the part's thinnest extent
THRESHOLD_IOU = 0.951  # just past the pass threshold of IoU (0.95)
TINY_HOLE_SHARE = 0.5  # a tiny hole's wall area, as a share of what a face group needs to count

# The reference's solid and its bounding box, whatever ``result`` holds (a Workplane or a
# Shape).
PRELUDE = """
_vals = result.vals() if isinstance(result, cq.Workplane) else [result]
_ref = _vals[0] if len(_vals) == 1 else cq.Compound.makeCompound(_vals)
_bb = _ref.BoundingBox()
_low, _high = cq.Vector(_bb.xmin, _bb.ymin, _bb.zmin), cq.Vector(_bb.xmax, _bb.ymax, _bb.zmax)
_size = _high - _low
_centre = (_low + _high) * 0.5
_box = cq.Solid.makeBox(_size.x, _size.y, _size.z, _low)
"""


def reference(task: Task) -> Part:
    """The task's reference part, as the verifier holds it (measured in a sandbox)."""
    from toolgym.envs.cadquery.verification import reference_part

    return reference_part(task)


def sliver(part: Part) -> float:
    """A sliver's side (mm) for ``part``: :data:`SLIVER_MM`, or less on a thin part."""
    return float(min(SLIVER_MM, SLIVER_SHARE * float(np.min(part.mesh.extents))))


def visible(part: Part) -> float:
    """An error anyone sees on ``part`` (mm): 1 mm, or 10 % of its thinnest extent."""
    return features.visible_tolerance(float(np.min(part.mesh.extents))) / features.MARGIN


def _script(task: Task, body: str) -> str:
    return f"{task.reference.rstrip()}\n{PRELUDE}{body}"


def _fills_its_box(part: Part) -> bool:
    """Whether ``part`` is (nearly) its own bounding box: then no feature can be removed."""
    return part.volume >= (1 - 1e-3) * float(np.prod(part.mesh.extents))


# -- the cheats ----------------------------------------------------------------------------------


def bbox(task: Task) -> str | None:
    """The bounding box, every feature gone."""
    if _fills_its_box(reference(task)):
        return None
    return _script(task, "result = cq.Workplane().add(_box)\n")


def bbox_corner_sliver(task: Task) -> str | None:
    """The bounding box, and a sliver cube touching one of its corners: the red team's cheat."""
    if _fills_its_box(reference(task)):
        return None
    s = sliver(reference(task))
    return _script(
        task,
        f"_cube = cq.Solid.makeBox({s}, {s}, {s}, _high)\n"
        "result = cq.Workplane().add(_box).union(cq.Workplane().add(_cube))\n",
    )


def bbox_edge_sliver(task: Task) -> str | None:
    """The bounding box, and a sliver bar touching it along an edge, outside it."""
    if _fills_its_box(reference(task)):
        return None
    s = sliver(reference(task))
    return _script(
        task,
        f"_bar = cq.Solid.makeBox(_size.x, {s}, {s}, cq.Vector(_bb.xmin, _bb.ymax, _bb.zmax))\n"
        "result = cq.Workplane().add(_box).union(cq.Workplane().add(_bar))\n",
    )


def corner_sliver(task: Task) -> str | None:
    """The right part, and a sliver cube at a corner of its bounding box: one body too many,
    invisible (touching the part wherever the part reaches that corner)."""
    s = sliver(reference(task))
    return _script(
        task,
        f"_cube = cq.Solid.makeBox({s}, {s}, {s}, _high)\n"
        "result = cq.Workplane().add(_ref).union(cq.Workplane().add(_cube))\n",
    )


def split(task: Task) -> str | None:
    """The right part cut in two by a sliver-thin slit across its middle: two bodies."""
    part = reference(task)
    axis = int(np.argmax(part.mesh.extents))
    if not _crosses(part, axis):
        return None
    s = sliver(part) / 10  # a slit no view resolves
    size = ["_size.x + 2", "_size.y + 2", "_size.z + 2"]
    size[axis] = str(s)
    low = ["_low.x - 1", "_low.y - 1", "_low.z - 1"]
    low[axis] = f"_centre.{'xyz'[axis]} - {s / 2}"
    return _script(
        task,
        f"_slit = cq.Solid.makeBox({', '.join(size)}, cq.Vector({', '.join(low)}))\n"
        "result = cq.Workplane().add(_ref.cut(_slit))\n",
    )


def bridged_gap(task: Task) -> str | None:
    """A visible gap cut across the part's middle, its two halves joined again by a sliver
    column of the original material: one body, as the target, but a slab of it missing."""
    part = reference(task)
    axis = int(np.argmax(part.mesh.extents))
    if not _crosses(part, axis):
        return None
    gap, s = visible(part), sliver(part)
    size = ["_size.x + 2", "_size.y + 2", "_size.z + 2"]
    size[axis] = str(gap)
    low = ["_low.x - 1", "_low.y - 1", "_low.z - 1"]
    low[axis] = f"_centre.{'xyz'[axis]} - {gap / 2}"
    column = [str(s), str(s), str(s)]
    column[axis] = str(gap + 2)
    return _script(
        task,
        f"_slab = cq.Solid.makeBox({', '.join(size)}, cq.Vector({', '.join(low)}))\n"
        "_inside = _ref.intersect(_slab).Vertices()[0].Center()\n"
        f"_at = _inside - cq.Vector({column[0]}, {column[1]}, {column[2]}) * 0.5\n"
        f"_column = cq.Solid.makeBox({', '.join(column)}, _at)\n"
        "result = cq.Workplane().add(_ref.cut(_slab.cut(_column)))\n",
    )


def inverted_shell(task: Task) -> str | None:
    """The bounding box with what the features remove added back inside-out: its mesh winds
    like the right part (the inverted shells cancel the box where the features are), while
    the solid is a box and some inside-out solids."""
    if _fills_its_box(reference(task)):
        return None
    return _script(
        task,
        "_gone = _box.cut(_ref)\n"
        "_inverted = cq.Shape.cast(_gone.wrapped.Reversed())\n"
        "result = cq.Workplane().add(cq.Compound.makeCompound([_box, _inverted]))\n",
    )


def faces_not_solid(task: Task) -> str | None:
    """The part's faces as a shell, not a solid."""
    return _script(task, "result = cq.Workplane().add(cq.Shell.makeShell(_ref.Faces()))\n")


def faces_with_sliver(task: Task) -> str | None:
    """The part's faces as a loose shell, with a sliver solid at a corner of its bounding box
    so that the result holds a solid."""
    s = sliver(reference(task))
    return _script(
        task,
        f"_cube = cq.Solid.makeBox({s}, {s}, {s}, _high)\n"
        "_faces = cq.Shell.makeShell(_ref.Faces())\n"
        "result = cq.Workplane().add(cq.Compound.makeCompound([_faces, _cube]))\n",
    )


def duplicate_overlap(task: Task) -> str | None:
    """The right part twice, the copy moved by a visible amount, overlapping it."""
    shift = visible(reference(task))
    return _script(
        task,
        f"_copy = _ref.translate(cq.Vector({shift}, 0, 0))\n"
        "result = cq.Workplane().add(cq.Compound.makeCompound([_ref, _copy]))\n",
    )


def duplicate_coincident(task: Task) -> str | None:
    """The right part twice, in the same place."""
    return _script(
        task, "result = cq.Workplane().add(cq.Compound.makeCompound([_ref, _ref.copy()]))\n"
    )


# The agent's session answers requests with its own copy of the backend: these patch it, so
# that the session's own mesher (the per-step check, once) sees one shape and its exporter
# (the exact tier's source) another.
TAMPER = """
import sys as _sys
_backend = _sys.modules["toolgym.envs.cadquery.backend"]
_true_result_shape = _backend.result_shape

def _lying_result_shape(namespace, name="result"):
    caller = _sys._getframe(1).f_code.co_name
    if caller in {callers}:
        return {shown}, None
    return _true_result_shape(namespace, name)

_backend.result_shape = _lying_result_shape
"""


def tamper_mesher(task: Task) -> str | None:
    """The bounding box built, the session's own mesher patched to show the right part."""
    if _fills_its_box(reference(task)):
        return None
    patch = TAMPER.format(callers='("tessellate", "describe")', shown="_ref")
    return _script(task, patch + "result = cq.Workplane().add(_box)\n")


def tamper_exporter(task: Task) -> str | None:
    """The right part built, the session's exporter patched to send the bounding box."""
    if _fills_its_box(reference(task)):
        return None
    return _script(task, TAMPER.format(callers='("export", "brep")', shown="_box"))


def negative_scale(task: Task) -> str | None:
    """The part reflected through its centre by a scale of −1, made properly: a valid solid,
    the wrong hand."""
    part = reference(task)
    centre = part.mesh.bounds.mean(axis=0)
    mirrored = part.mesh.copy()
    mirrored.vertices = 2 * centre - mirrored.vertices
    mirrored.invert()  # a reflection turns the winding inside out: the solid is made properly
    if geometry.iou_mesh(mirrored, part.mesh) > 0.99:
        return None  # symmetric through its centre: nothing changes
    return _script(
        task,
        "result = cq.Workplane().add(_ref.translate(-_centre).scale(-1).translate(_centre))\n",
    )


def negative_scale_location(task: Task) -> str | None:
    """The part reflected through its centre by a location of scale −1: its faces keep their
    orientation, so the solid is inside out (OpenCASCADE still calls it valid)."""
    return _script(
        task,
        "from OCP.gp import gp_Pnt, gp_Trsf\n"
        "from OCP.TopLoc import TopLoc_Location\n"
        "_flip = gp_Trsf()\n"
        "_flip.SetScale(gp_Pnt(_centre.x, _centre.y, _centre.z), -1)\n"
        "result = cq.Workplane().add(cq.Shape.cast(_ref.wrapped.Moved(TopLoc_Location(_flip))))\n",
    )


MANY_FACES = 200  # faces of a part on which a B-Rep boolean costs a noticeable time


def iou_threshold(task: Task) -> str | None:
    """The bounding box, every feature gone, scaled about its centre until its IoU with the
    right part is just past the pass threshold (:data:`THRESHOLD_IOU`), or as close as it
    gets."""
    part = reference(task)
    if _fills_its_box(part):
        return None
    # Each step is a B-Rep boolean with the part: on a part of hundreds of faces (a gear) a
    # third of a second, so fewer bisection steps there keep the search inside the sandbox's
    # time limit (the scale still to 1e-3, the IoU to a few thousandths).
    steps = 30 if part.features is None or len(part.features) < MANY_FACES else 10
    return _script(
        task,
        f"""
def _iou(scale):
    box = _box.translate(-_centre).scale(scale).translate(_centre)
    common = box.intersect(_ref).Volume()
    return common / (box.Volume() + _ref.Volume() - common)

# IoU rises as the box shrinks onto the part, then falls: find the scale closest to the
# threshold on the part's side of the peak.
_low_s, _high_s = 0.5, 1.0
for _ in range({steps}):
    _mid = (_low_s + _high_s) / 2
    if _iou(_mid) >= _iou(_mid + 1e-4):
        _high_s = _mid
    else:
        _low_s = _mid
_peak = _high_s
if _iou(_peak) > {THRESHOLD_IOU}:
    _low_s, _high_s = _peak, 1.0
    for _ in range({steps}):
        _mid = (_low_s + _high_s) / 2
        if _iou(_mid) >= {THRESHOLD_IOU}:
            _low_s = _mid
        else:
            _high_s = _mid
    _peak = _low_s
result = cq.Workplane().add(_box.translate(-_centre).scale(_peak).translate(_centre))
""",
    )


def tiny_holes(task: Task) -> str | None:
    """The bounding box with as many through-holes as the target has, each too small for its
    wall to count as a face group: the hole count right, the holes not there."""
    part = reference(task)
    genus = part.topology.genus
    if not genus or _fills_its_box(part):
        return None
    axis = int(np.argmin(part.mesh.extents))  # drilled through the thinnest extent
    depth = float(part.mesh.extents[axis])
    area = TINY_HOLE_SHARE * features.SIGNIFICANT_AREA * float(part.mesh.area) / genus
    diameter = area / (np.pi * depth)  # the wall of one hole is π × diameter × depth
    plane = ("YZ", "XZ", "XY")[axis]
    across = [i for i in range(3) if i != axis]  # the plane's two in-plane axes
    u, v = (float(part.mesh.extents[i]) for i in across)
    spots = [(u * (-0.3 + 0.6 * i / max(genus - 1, 1)), v * 0.25) for i in range(genus)]
    return _script(
        task,
        f"_drill = cq.Workplane({plane!r}, origin=_centre.toTuple()).pushPoints({spots})"
        f".circle({diameter / 2}).extrude({depth / 2 + 1}, both=True)\n"
        "result = cq.Workplane().add(_box).cut(_drill)\n",
    )


def _crosses(part: Part, axis: int) -> bool:
    """Whether the plane through the part's centre across ``axis`` cuts through its faces."""
    at = float(part.mesh.bounds.mean(axis=0)[axis])
    coordinate = np.asarray(part.mesh.vertices)[np.asarray(part.mesh.faces)][:, :, axis]
    return bool(((coordinate.min(axis=1) < at) & (coordinate.max(axis=1) > at)).any())


CHEATS: tuple[Cheat, ...] = tuple(
    Cheat(name, (build.__doc__ or "").split("\n\n")[0].replace("\n", " "), build)
    for name, build in (
        ("bbox", bbox),
        ("bbox-corner-sliver", bbox_corner_sliver),
        ("bbox-edge-sliver", bbox_edge_sliver),
        ("corner-sliver", corner_sliver),
        ("split", split),
        ("bridged-gap", bridged_gap),
        ("inverted-shell", inverted_shell),
        ("faces-not-solid", faces_not_solid),
        ("faces-with-sliver", faces_with_sliver),
        ("duplicate-overlap", duplicate_overlap),
        ("duplicate-coincident", duplicate_coincident),
        ("tamper-mesher", tamper_mesher),
        ("tamper-exporter", tamper_exporter),
        ("negative-scale", negative_scale),
        ("negative-scale-location", negative_scale_location),
        ("iou-threshold", iou_threshold),
        ("tiny-holes", tiny_holes),
    )
)


def cheats() -> tuple[Cheat, ...]:
    """Every generic CAD cheat (``Domain.cheats``)."""
    return CHEATS


NEAR_MISS_TOLERANCES = 1.5  # the near miss's surface is this many deviation tolerances off


def near_miss(task: Task) -> str | None:
    """The reference moved along x just past the deviation tolerance (by
    :data:`NEAR_MISS_TOLERANCES` of it: 0.375 mm on most parts): an honest error that fails,
    but not by much (``Domain.near_miss``)."""
    part = reference(task)
    tolerance = task.verification.deviation_mm or features.deviation_tolerance(part.mesh.extents)
    shift = NEAR_MISS_TOLERANCES * tolerance
    return _script(task, f"result = cq.Workplane().add(_ref.translate(cq.Vector({shift}, 0, 0)))\n")
