"""Sessions on the three real tools: calls, results, output capture, REPL state."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolgym.envs.sandbox import Limits, Session


def test_cadquery_session_builds_a_solid_and_returns_its_mesh(cq_session):
    result = cq_session.run("result = cq.Workplane().box(10, 20, 30)", fetch=["result"])
    assert result.ok, result.feedback()
    summary = result.results["result"]
    assert summary["volume_mm3"] == pytest.approx(6000.0)
    assert summary["bbox_mm"] == pytest.approx([-5, -10, -15, 5, 10, 15])
    assert summary["solids"] == 1 and summary["valid"]

    mesh = cq_session.request("tessellate", {"tolerance": 0.01}).value
    vertices, faces = mesh["vertices"], mesh["faces"]
    assert vertices.dtype == np.float64 and faces.dtype == np.int32 and faces.shape[1] == 3
    assert vertices.min(axis=0).tolist() == [-5, -10, -15] and vertices.max(axis=0).tolist() == [
        5,
        10,
        15,
    ]
    # The divergence theorem on the returned triangles gives back the exact volume.
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    assert np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6 == pytest.approx(6000.0)


def test_cadquery_sphere_mesh_volume_converges(cq_session):
    cq_session.run("result = cq.Workplane().sphere(10)")
    mesh = cq_session.request("tessellate", {"tolerance": 0.01, "angular_tolerance": 0.05}).value
    v, f = mesh["vertices"], mesh["faces"]
    volume = np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6
    assert volume == pytest.approx(4 / 3 * math.pi * 1000, rel=5e-3)


def test_show_object_and_step_export(cq_session):
    assert cq_session.run("show_object(cq.Workplane().cylinder(10, 5))").ok
    step = cq_session.request("export", {"format": "step"})
    assert step.ok, step.feedback()
    assert step.value.startswith(b"ISO-10303-21")
    bad = cq_session.request("export", {"format": "dwg"})
    assert not bad.ok and "unknown export format" in bad.error.message


def test_state_persists_between_calls_like_a_repl(cq_session):
    cq_session.run("part = cq.Workplane().box(10, 10, 10)")
    result = cq_session.run("part = part.faces('>Z').workplane().hole(4)", fetch=["part"])
    assert result.results["part"]["volume_mm3"] == pytest.approx(1000 - math.pi * 4 * 10)


def test_output_is_captured_at_the_fd_level(cq_session):
    code = "import os\nprint('from python')\nos.write(1, b'from C-level fd\\n')\n"
    code += "os.write(2, b'err\\n')"
    result = cq_session.run(code)
    assert result.stdout == "from python\nfrom C-level fd\n" and result.stderr == "err\n"
    assert cq_session.run("print('again')").stdout == "again\n"


def test_errors_are_reported_with_agent_frames_only(cq_session):
    result = cq_session.run("x = 1\ny = x / 0", filename="step-1")
    assert result.error.kind == "exception" and "ZeroDivisionError" in result.error.message
    assert 'File "step-1", line 2' in result.traceback and "worker.py" not in result.traceback
    syntax = cq_session.run("def (:")
    assert syntax.error.kind == "syntax"
    exit_ = cq_session.run("import sys; sys.exit(3)")
    assert exit_.error.kind == "exit" and exit_.restored_to is None  # the worker survived
    missing = cq_session.run("y = 2", fetch=["y", "nope"])
    assert missing.results == {"y": 2} and missing.missing == ["nope"]
    unknown = cq_session.request("render")
    assert unknown.error.kind == "request" and "tessellate" in unknown.error.message


def test_non_solid_result_is_a_clear_error(cq_session):
    cq_session.run("result = 42")
    result = cq_session.request("tessellate")
    assert not result.ok and "expected a CadQuery Workplane" in result.error.message


def test_bpy_session_builds_a_mesh_and_renders_workbench():
    with Session("blender") as session:
        built = session.run("bpy.ops.mesh.primitive_cube_add(size=2, location=(1, 0, 0))")
        assert built.ok, built.feedback()
        mesh = session.request("mesh").value
        assert mesh["faces"].shape == (12, 3)
        assert mesh["vertices"].min(axis=0).tolist() == [0, -1, -1]
        image = session.request("render", {"width": 64, "height": 48})
        assert image.ok, image.feedback()
        pixels = np.asarray(image.value)
        assert pixels.shape == (48, 64, 4) and pixels.dtype == np.uint8
        assert pixels[24, 32, 3] == 255 and pixels[0, 0, 3] == 0  # cube in the middle, film corners
        # Rendering happens in a throwaway fork: the worker itself can still snapshot and render.
        snap = session.snapshot()
        session.run("bpy.data.objects['Cube'].scale = (0.1, 0.1, 0.1)")
        small = np.asarray(session.request("render", {"width": 64, "height": 48}).value)
        assert (small[..., 3] > 0).sum() < (pixels[..., 3] > 0).sum()
        session.rollback(snap)
        again = np.asarray(session.request("render", {"width": 64, "height": 48}).value)
        assert np.array_equal(again, pixels)


def test_panda3d_session_renders_offscreen():
    with Session("scene") as session:
        code = (
            "card = core.CardMaker('card')\n"
            "card.set_frame(-1, 1, -1, 1)\n"
            "node = scene.attach_new_node(card.generate())\n"
            "node.set_color(1, 0, 0, 1)\n"
            "node.set_light_off()\n"
            "node.set_two_sided(True)\n"
        )
        assert session.run(code).ok
        first = session.request("render", {"width": 32, "height": 24})
        assert first.ok, first.feedback()
        image = first.value
        assert image.shape == (24, 32, 3)
        assert image[12, 16].tolist() == [255, 0, 0]  # the card fills the centre
        assert image[0, 0].tolist() == [255, 255, 255]  # background corner
        assert np.array_equal(session.request("render", {"width": 32, "height": 24}).value, image)


def test_limits_are_validated():
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=-1)


def test_api_misuse_raises(cq_session):
    with pytest.raises(TypeError):
        cq_session.run(b"x = 1")
    with pytest.raises(KeyError):
        cq_session.rollback(999)
    cq_session.close()
    with pytest.raises(RuntimeError, match="closed"):
        cq_session.run("x = 1")
    with pytest.raises(ValueError, match="unknown backend"):
        Session("maya")


@pytest.mark.timing
def test_exit_does_not_wait_for_a_thread_stuck_mid_spawn():
    """A Ctrl-C'd batch verification exits while a daemon thread may hold a zygote's lock,
    waiting up to 30 s for a spawn's reply. The exit's shutdown kills the zygote anyway."""
    import threading
    import time

    from toolgym.envs.sandbox import get_zygote, shutdown_zygotes

    zygote = get_zygote("cadquery")
    process = zygote._proc
    held, release = threading.Event(), threading.Event()

    def stuck_in_spawn() -> None:
        with zygote._lock:
            held.set()
            release.wait(60)

    thread = threading.Thread(target=stuck_in_spawn, daemon=True)
    thread.start()
    held.wait(10)
    started = time.monotonic()
    shutdown_zygotes(wait_s=0.5)  # as at exit
    waited = time.monotonic() - started
    release.set()
    thread.join(10)
    assert waited < 10  # without the bound: until the lock's holder lets go
    assert process is not None and process.wait(timeout=30) is not None  # really killed
    assert get_zygote("cadquery")._proc is not process  # the next use starts a fresh one
