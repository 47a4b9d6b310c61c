"""The CAD red team's cheats, each mechanism they used, and the reward fuzzer on CAD families.

Issue 33's three cheats on ``procedural/plate_holes/test-0`` (a 50 × 53 × 11.5 mm plate with four
6 mm holes), played as an agent plays them: one code step of the environment, the per-step
(cheap) verdict after it and the exact one at the episode's end.

- A plate without its holes, plus a 0.1 mm cube touching one corner, once scored 0.57 where the
  same plate alone scores 0.23: shells were found by shared mesh vertices, so the cube made the
  genus "unknown", and unknown was not a failure. Now shells are connected faces (of the B-Rep,
  counted in the session that measured it): the cube is a second body, the holes are counted
  (none) and an uncountable genus fails.
- A script that patched its own session so that the per-step check saw the right part and the
  export a plain box passed at ``final_tier="cheap"``. Now every tier scores the BREP the step
  exported, measured by a session that runs no agent code.
- A B-Rep/mesh IoU disagreement was recorded and not scored; now it fails, and the lower is
  scored.

Parts built in this process are trusted reference shapes; whatever stands for an agent's part
goes through the sandbox, as in the environment.
"""

from __future__ import annotations

import io

import cadquery as cq
import gymnasium as gym
import numpy as np
import pytest
from OCP.BRepTools import BRepTools

import toolgym  # noqa: F401 - registers the environments
from toolgym.envs.cadquery.artifacts import measure, part_from_shape
from toolgym.envs.cadquery.verification import reference_part
from toolgym.envs.tasks.suites import get_suite, get_task
from toolgym.verifiers.cad import verify_part
from toolgym.verifiers.features import Topology
from toolgym.verifiers.report import VerifierReport

# The fuzzer, the cheats and the measuring session are imported where they are used, so that the
# tests of the three mechanisms also run (and fail) on the code from before them.

PLATE = "procedural/plate_holes/test-0"
NO_HOLES = "result = cq.Workplane('XY').box(50.0, 53.0, 11.5)\n"
# A 0.1 mm cube whose corner touches the plate's corner (25, 26.5, 5.75), or its top edge.
CORNER_CUBE = "cq.Workplane().box(0.1, 0.1, 0.1).translate((25.05, 26.55, 5.8))"
EDGE_CUBE = "cq.Workplane().box(0.1, 0.1, 0.1).translate((0, 26.55, 5.8))"


class Played:
    """A script played as a one-step episode: the per-step (cheap) report, the exact one."""

    def __init__(self, info: dict) -> None:
        step, final = info.get("report") or {}, info.get("final_report") or {}
        self.error = info.get("error")
        self.step_score, self.final_score = step.get("score") or 0.0, final.get("score") or 0.0
        self.passed = bool(step.get("passed") or final.get("passed"))
        self.summary = VerifierReport.from_dict(final).summary() if final else ""


class Plate:
    """One environment of the plate task, each script one episode of one step."""

    def __init__(self) -> None:
        self.env = gym.make("toolgym/CadQuery-v0", task=PLATE, max_steps=1, view_size=16)

    def play(self, script: str) -> Played:
        self.env.reset(seed=0)
        return Played(self.env.step(script)[-1])


@pytest.fixture(scope="module")
def player():
    plate = Plate()
    yield plate
    plate.env.close()


@pytest.fixture(scope="module")
def no_holes(player):
    """The honest attempt the red team compared with: the plate, its holes left out."""
    return player.play(NO_HOLES)


def write_brep(shape: cq.Workplane | cq.Shape) -> bytes:
    stream = io.BytesIO()
    BRepTools.Write_s((shape.val() if isinstance(shape, cq.Workplane) else shape).wrapped, stream)
    return stream.getvalue()


# -- 1. a sliver touching a corner is a second body, and an uncountable genus fails ----------------


@pytest.mark.parametrize(
    "touching",
    [
        f"result = result.union({CORNER_CUBE})",  # the red team's: fused, it stays two solids
        *(
            f"result = cq.Workplane().add(cq.Compound.makeCompound([result.val(), {cube}.val()]))"
            for cube in (CORNER_CUBE, EDGE_CUBE)
        ),
    ],
    ids=["corner-union", "corner-compound", "edge-compound"],
)
def test_a_sliver_touching_the_plate_is_a_second_body_and_the_holes_are_counted(
    player, no_holes, touching
):
    scored = player.play(NO_HOLES + touching + "\n")
    assert scored.error is None and not scored.passed
    assert "2 separate bodies where the target has 1" in scored.summary
    assert "0 through-holes where the target has 4" in scored.summary  # counted, not unknown
    # Half the honest attempt's score: the sliver costs, never pays.
    assert scored.step_score == pytest.approx(no_holes.step_score / 2, rel=0.02)
    assert scored.final_score == pytest.approx(no_holes.final_score / 2, rel=0.02)
    assert no_holes.final_score < 0.3


def corner_touching() -> cq.Workplane:
    plate = cq.Workplane().box(50, 53, 11.5)
    return plate.union(cq.Workplane().box(0.1, 0.1, 0.1).translate((25.05, 26.55, 5.8)))


def test_shells_on_a_mesh_are_connected_faces_not_shared_vertices():
    """The mesh path (parts known only as meshes): the touching cube's mesh shares a vertex
    with the plate's, and is still its own shell."""
    mesh = part_from_shape(corner_touching().val()).mesh
    topology = Topology.of(mesh)
    assert (topology.bodies, topology.cavities, topology.genus) == (2, 0, 0)


def test_an_uncountable_genus_fails_with_its_reason_and_costs_more_than_none():
    plate = cq.Workplane().box(60, 40, 6).faces(">Z").workplane().rect(44, 24).vertices().hole(5)
    reference = part_from_shape(plate.val())

    def scored(topology: Topology):
        candidate = part_from_shape(plate.val())
        candidate._cache["topology"] = topology  # what the mesh or the B-Rep could not count
        return verify_part(candidate, reference)

    unknown, none = scored(Topology(1, 0, None)), scored(Topology(1, 0, 0))
    assert not unknown.passed and unknown.checks["genus"]["ok"] is False
    assert "could not be counted" in unknown.checks["genus"]["message"]
    assert "could not be counted" in unknown.summary()
    assert unknown.score < none.score < 1.0


SHAPES = [
    ("box", cq.Workplane().box(1, 2, 3), (1, 0, 0)),
    ("cylinder: a seam", cq.Workplane().cylinder(3, 1), (1, 0, 0)),
    ("sphere: a seam, degenerate poles", cq.Workplane().sphere(2), (1, 0, 0)),
    ("cone: a degenerate apex", cq.Workplane().add(cq.Solid.makeCone(2, 0, 3)), (1, 0, 0)),
    ("torus: two seams", cq.Workplane().add(cq.Solid.makeTorus(5, 1)), (1, 0, 1)),
    ("filleted box", cq.Workplane().box(10, 10, 10).edges().fillet(2), (1, 0, 0)),
    (
        "plate with four holes",
        cq.Workplane().box(50, 50, 5).faces(">Z").workplane().rarray(20, 20, 2, 2).hole(5),
        (1, 0, 4),
    ),
    (
        "filleted plate with a hole",
        cq.Workplane().box(30, 30, 5).edges("|Z").fillet(3).faces(">Z").workplane().hole(6),
        (1, 0, 1),
    ),
    ("hollow sphere", cq.Workplane().sphere(10).cut(cq.Workplane().sphere(5)), (1, 1, 0)),
    ("open box (shell)", cq.Workplane().box(10, 10, 10).faces(">Z").shell(-1), (1, 0, 0)),
    ("cube touching a corner", corner_touching(), (2, 0, 0)),
    (
        "bar touching an edge",
        cq.Workplane().box(10, 10, 10).union(cq.Workplane().box(10, 1, 1).translate((0, 5.5, 5.5))),
        (2, 0, 0),
    ),
]


@pytest.mark.parametrize(("name", "shape", "expected"), SHAPES, ids=[c[0] for c in SHAPES])
def test_the_brep_counts_its_shells_and_holes_by_euler_poincare(name, shape, expected):
    """Counted in the measuring session on the B-Rep (V − E + F − (L − F) = 2 − 2g per shell),
    and on the mesh; both agree, seams, degenerate edges, fillets and holes included."""
    part = measure(write_brep(shape)).part
    assert part is not None and part.shells is not None
    brep = Topology.of_brep(part.shells)
    assert (brep.bodies, brep.cavities, brep.genus, brep.defects) == (*expected, ()), name
    mesh = Topology.of(part.mesh)
    assert (mesh.bodies, mesh.cavities, mesh.genus) == expected, name


def brep_and_mesh_counts(tasks) -> list[tuple[str, tuple, tuple]]:
    disagree = []
    for task in tasks:
        part = reference_part(task)
        brep, mesh = part.topology, Topology.of(part.mesh)
        counts = [(t.bodies, t.cavities, t.genus) for t in (brep, mesh)]
        if counts[0] != counts[1] or brep.genus is None or brep.defects:
            disagree.append((task.id, brep, mesh))
    return disagree


def test_the_brep_and_the_mesh_count_the_same_on_a_sample_of_references():
    tasks = [get_task(PLATE), get_task("curated/clevis-bracket"), get_task("curated/disc")]
    tasks += [get_task(f"procedural/{name}/test-0") for name in ("bent_tube", "v_pulley", "flange")]
    assert brep_and_mesh_counts(tasks) == []


#: The slow sweeps run in parts, so that parallel test workers share them.
PARTS = 4


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("part", range(PARTS))
def test_the_brep_and_the_mesh_count_the_same_on_every_curated_part_and_family(part):
    """Every curated part, and every family's first part of each split (its other seeds vary
    the sizes, not the features); a quarter of them per part."""
    tasks = list(get_suite("curated").tasks)
    for split in ("train", "test"):
        firsts = {}
        for task in get_suite("procedural").split(split):
            firsts.setdefault(task.family, task)
        tasks += firsts.values()
    assert brep_and_mesh_counts(tasks[part::PARTS]) == []


# -- 2. both tiers score the exported solid, whatever the session shows ----------------------------

# The red team's way: the session's own copy of the measuring code patched to mesh another shape.
SHOWS_THE_REFERENCE = """
import sys
_measure = sys.modules["toolgym.envs.cadquery.measure"]
_tessellation, _inventory = _measure.tessellation, _measure.face_inventory
_measure.tessellation = lambda shape, *a, **k: _tessellation(_shown.val(), *a, **k)
_measure.face_inventory = lambda shape: _inventory(_shown.val())
result = cq.Workplane('XY').box(50.0, 53.0, 11.5)
"""
# The other way round: the right part built, its export patched to send the plain plate.
EXPORTS_A_BOX = """
import sys
_backend = sys.modules["toolgym.envs.cadquery.backend"]
_true = _backend.result_shape
_box = cq.Workplane('XY').box(50.0, 53.0, 11.5).val()
def _lying(namespace, name="result"):
    if sys._getframe(1).f_code.co_name in ("export", "brep"):
        return _box, None
    return _true(namespace, name)
_backend.result_shape = _lying
"""


def tampering(direction: str) -> str:
    reference = get_task(PLATE).reference
    if direction == "shows the reference":
        return reference.replace("result =", "_shown =", 1) + SHOWS_THE_REFERENCE
    return reference + EXPORTS_A_BOX


def one_step(script: str, final_tier: str) -> tuple[dict, dict, np.ndarray]:
    env = gym.make("toolgym/CadQuery-v0", task=PLATE, max_steps=1, final_tier=final_tier)
    try:
        env.reset(seed=0)
        obs, *_, info = env.step(script)
        return info["report"], info["final_report"], obs["image"]
    finally:
        env.close()


@pytest.mark.parametrize("direction", ["shows the reference", "exports a box"])
def test_a_session_that_shows_one_shape_and_exports_another_is_scored_on_the_export(direction):
    honest_step, honest_final, honest_image = one_step(NO_HOLES, "cheap")
    step, final, image = one_step(tampering(direction), "cheap")  # the trainer's default tier
    assert not step["passed"] and not final["passed"]
    # The very solid the plain plate is: the same mesh, score and views.
    assert step["score"] == final["score"] == pytest.approx(honest_step["score"], abs=1e-9)
    assert np.array_equal(image, honest_image)
    _, exact, _ = one_step(tampering(direction), "exact")
    assert not exact["passed"] and exact["score"] == pytest.approx(honest_final["score"], abs=0.01)
    assert exact["validity"]["volume"] == pytest.approx(final["validity"]["volume"], rel=1e-3)


def test_the_measuring_session_starts_every_part_from_its_fresh_state():
    from toolgym.envs.cadquery.artifacts import Measurer

    with Measurer() as measurer:
        first = measurer.measure(write_brep(cq.Workplane().box(1, 2, 3)))
        session = measurer.session
        assert first.part is not None and session is not None
        snapshots, worker = session.info["snapshots"], session.worker_pid
        second = measurer.measure(write_brep(cq.Workplane().box(1, 2, 3)))
        assert measurer.session is session and session.info["snapshots"] == snapshots
        assert session.worker_pid != worker  # a fork of the fresh snapshot measured it
        assert second.part is not None
        assert np.array_equal(first.part.mesh.vertices, second.part.mesh.vertices)


# -- 3. a B-Rep/mesh disagreement fails and costs score --------------------------------------------


def test_a_brep_mesh_disagreement_fails_scores_the_lower_iou_and_says_both():
    plate = part_from_shape(cq.Workplane().box(60, 40, 6).faces(">Z").workplane().hole(5).val())
    agreed, disagreed = (
        verify_part(plate, plate, brep_iou=1.0),
        verify_part(plate, plate, brep_iou=0.9),
    )
    assert agreed.passed and agreed.checks["brep_crosscheck"]["ok"]
    mismatch = disagreed.checks["brep_mismatch"]
    assert not disagreed.passed and mismatch["ok"] is False
    assert "B-Rep IoU 0.900, mesh IoU 1.000" in mismatch["message"]
    assert mismatch["message"] in disagreed.summary()
    assert disagreed.metrics["iou"] == pytest.approx(1.0)  # the mesh's, as measured
    assert disagreed.score == pytest.approx(0.9**0.6, rel=1e-6)  # the lower IoU is scored


def test_an_empty_boolean_of_overlapping_solids_is_a_failed_boolean_not_a_verdict():
    """OpenCASCADE's common comes back empty for a swept tube and its copy moved 1 mm: that is
    the kernel failing, recorded, and the mesh IoU decides."""
    plate = part_from_shape(cq.Workplane().box(60, 40, 6).val())
    report = verify_part(plate, plate, brep_iou=0.0)
    assert report.passed and report.score == pytest.approx(1.0)
    assert report.checks["brep_crosscheck"]["ok"] is None
    assert "no common volume" in report.checks["brep_crosscheck"]["message"]


def test_the_env_fails_an_episode_whose_brep_disagrees_with_its_mesh(monkeypatch):
    env = gym.make("toolgym/CadQuery-v0", task=PLATE, max_steps=1)
    try:
        env.reset(seed=0)
        measurer = env.unwrapped._measurer
        measure_part = measurer.measure

        def disagreeing(data, **kwargs):
            measured = measure_part(data, **kwargs)
            if kwargs.get("reference_brep") is None:
                return measured
            return type(measured)(measured.part, 0.5, measured.error)

        monkeypatch.setattr(measurer, "measure", disagreeing)
        *_, info = env.step(get_task(PLATE).reference)
    finally:
        env.close()
    assert info["report"]["passed"]  # the per-step tier has no boolean
    final = info["final_report"]
    assert not final["passed"] and final["checks"]["brep_mismatch"]["ok"] is False
    assert final["score"] == pytest.approx(0.5**0.6, rel=1e-3)


# -- B-Rep defects: inside-out solids and loose shells are not sound solids ------------------------


@pytest.mark.parametrize(
    ("cheat", "defect"),
    [
        ("inverted_shell", "inside-out solid"),
        ("negative_scale_location", "inside-out solid"),
        ("faces_with_sliver", "outside any solid"),
    ],
)
def test_inside_out_solids_and_loose_shells_are_invalid(player, cheat, defect):
    from toolgym.envs.cadquery import cheats

    scored = player.play(getattr(cheats, cheat)(get_task(PLATE)))
    assert scored.error is not None and scored.error.startswith("invalid solid:")
    assert defect in scored.error
    assert scored.step_score == scored.final_score == 0.0 and not scored.passed


# -- the reward fuzzer on CAD ----------------------------------------------------------------------

SAMPLE = [PLATE, "procedural/l_bracket/test-0", "primitives/primitive/test-0"]


def assert_caught(report) -> None:
    assert not report.escaped and not report.broken, report.markdown()


def test_the_near_miss_fails_but_scores_well(player):
    from toolgym.envs.cadquery import cheats

    near = player.play(cheats.near_miss(get_task(PLATE)))
    assert near.error is None and not near.passed
    assert 0.6 < near.step_score < 0.9 and 0.6 < near.final_score < 0.9
    assert "off the target" in near.summary


def test_the_cad_cheats_are_caught_on_a_sample_of_families():
    from toolgym.envs.verification.fuzzing import fuzz

    report = fuzz(SAMPLE)
    assert_caught(report)
    assert len(report.by("family")) == len(SAMPLE)
    assert report.by("cheat")["negative-scale"][0] >= 1  # the l-bracket is not symmetric


@pytest.mark.slow
@pytest.mark.timeout(1200)  # 17 cheats on a quarter of the families and curated groups: minutes
@pytest.mark.parametrize("part", range(PARTS))
def test_the_cad_cheats_are_caught_on_every_family(part):
    from toolgym.envs.cadquery import cheats
    from toolgym.envs.verification.fuzzing import family_sample, fuzz

    tasks = family_sample("cadquery")[part::PARTS]
    report = fuzz(tasks)
    assert_caught(report)
    families = {t.family or t.id.split("/")[0] for t in tasks}
    assert set(report.by("family")) == families
    assert set(report.by("cheat")) == {cheat.name for cheat in cheats.cheats()}
