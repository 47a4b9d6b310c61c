"""The mesh renderer: known depths and silhouettes, deterministic pixels."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from toolgym.renderers.mesh_views import DEFAULT_VIEWS, Framing, MeshRenderer, View, tile


@pytest.fixture(scope="module")
def renderer():
    r = MeshRenderer(64)
    yield r
    r.close()


def test_depth_and_silhouette_of_a_box_from_the_top_are_exact(renderer):
    box = trimesh.creation.box((20, 10, 4))
    framing = Framing((0.0, 0.0, 0.0), 16.0)  # 32 mm across 64 px: 0.5 mm per pixel
    out = renderer.render(box, framing)
    top = [v.name for v in DEFAULT_VIEWS].index("top")
    # The box covers 40 × 20 pixels seen from above.
    assert out.mask[top].sum() == 40 * 20
    rows, cols = np.nonzero(out.mask[top])
    assert cols.max() - cols.min() + 1 == 40 and rows.max() - rows.min() + 1 == 20
    # The camera plane sits 2 × 32 mm above the centre; the top face is 2 mm above it.
    assert np.allclose(out.depth[top][out.mask[top]], 64 - 2)
    assert np.isinf(out.depth[top][~out.mask[top]]).all()
    # The RGB image agrees with the exact silhouette but for edge pixels.
    painted = (out.rgb[top] != 255).any(axis=-1)
    assert (painted == out.mask[top]).mean() > 0.97


def test_renders_are_deterministic_across_renderers():
    mesh = trimesh.creation.icosphere(3, 5.0)
    framing = Framing.around(mesh.bounds)
    first, second = MeshRenderer(48), MeshRenderer(48)
    try:
        a, b = first.render(mesh, framing), second.render(mesh, framing)
    finally:
        first.close()
        second.close()
    assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth, b.depth)


def test_empty_and_broken_meshes_render_as_background(renderer):
    framing = Framing((0.0, 0.0, 0.0), 1.0)
    for mesh in (None, trimesh.Trimesh()):
        out = renderer.render(mesh, framing)
        assert (out.rgb == 255).all() and not out.mask.any()


def test_tile_lays_views_out_in_a_grid():
    views = np.arange(3 * 2 * 2 * 3, dtype=np.uint8).reshape(3, 2, 2, 3)
    grid = tile(views, columns=2)
    assert grid.shape == (4, 4, 3)
    assert np.array_equal(grid[:2, 2:], views[1]) and not grid[2:, 2:].any()


def test_custom_views():
    renderer = MeshRenderer(32, views=(View("bottom", (0, 0, -1), up=(0, 1, 0)),))
    try:
        out = renderer.render(trimesh.creation.box((2, 2, 2)), Framing((0.0, 0.0, 0.0), 2.0))
        assert out.rgb.shape == (1, 32, 32, 3) and out.mask[0].sum() == 16 * 16
    finally:
        renderer.close()


def test_a_family_frame_shows_size_and_place_and_a_grid():
    """Two spheres of different size at the same place, framed as CadQuery-v0 frames every
    primitive (the family's fixed frame), give different views; a moved sphere moves; the grid
    is drawn around them, the same for both."""
    from toolgym.envs.cadquery.framing import family_framing, task_framing

    renderer = MeshRenderer(64)
    try:
        small, big = trimesh.creation.icosphere(3, 10.0), trimesh.creation.icosphere(3, 20.75)
        frames = [task_framing("primitive", m.bounds) for m in (small, big)]
        assert frames[0] == frames[1] == family_framing("primitive")  # not the part's own
        a, b = (renderer.render(m, frames[0]) for m in (small, big))
        area = [int(r.mask.sum()) for r in (a, b)]
        assert area[1] / area[0] == pytest.approx((20.75 / 10.0) ** 2, rel=0.2)
        assert np.abs(a.rgb.astype(float) - b.rgb).mean() > 1.0  # out of 255
        moved = renderer.render(small.copy().apply_translation((20, 0, 0)), frames[0])
        assert not np.array_equal(moved.mask, a.mask)
        assert moved.mask.sum() == pytest.approx(a.mask.sum(), rel=0.1)  # pixel edges
        # The grid: grey pixels where no part is, identical in both images.
        top = [v.name for v in DEFAULT_VIEWS].index("top")
        from scipy.ndimage import binary_dilation

        clear = ~binary_dilation(a.mask[top] | b.mask[top], iterations=2)  # off the edges
        grey = (a.rgb[top] < 240).all(axis=-1) & clear
        assert grey.sum() > 100 and np.array_equal(a.rgb[top][clear], b.rgb[top][clear])
        # A hand-written task: a rung of a fixed ladder about the origin, which changes only
        # when a part outgrows it.
        bigger = trimesh.creation.icosphere(3, 12.0)
        hand = [task_framing(None, m.bounds) for m in (small, bigger, big)]
        assert hand[0] == hand[1] and hand[0].center == (0.0, 0.0, 0.0)
        assert hand[2].half_width > hand[0].half_width
    finally:
        renderer.close()


def test_reach_gives_a_parts_extent_along_each_views_axis_exactly(renderer):
    """A 20 × 10 × 4 mm box centred at (3, -2, 1.5) in a frame of 2.5 mm pixels: the reach
    views' largest values are its faces' coordinates to float precision, though an edge in the
    pixels is known only to 2.5 mm; ``-inf`` off the part, and everywhere for no part."""
    box = trimesh.creation.box((20, 10, 4))
    box.apply_translation((3.0, -2.0, 1.5))
    framing = Framing((1.0, 1.0, 0.0), 80.0)  # 160 mm across 64 px
    reach = renderer.reach(box, framing)
    names = [v.name for v in DEFAULT_VIEWS]
    assert reach.shape == (4, 64, 64, 2) and reach.dtype == np.float32
    facing = {name: reach[names.index(name)].reshape(-1, 2).max(axis=0) for name in names}
    assert np.allclose(facing["front"], (2.0 + 5, -2.0 + 5))  # -y_min, y_max
    assert np.allclose(facing["right"], (3.0 + 10, -3.0 + 10))  # x_max, -x_min
    assert np.allclose(facing["top"], (1.5 + 2, -1.5 + 2))  # z_max, -z_min
    top = reach[names.index("top")]
    assert np.array_equal(np.isfinite(top[..., 0]), renderer.render(box, framing).mask[3])
    assert np.isneginf(renderer.reach(None, framing)).all()


def test_the_state_caches_are_not_collected_under_a_frame_another_thread_draws(renderer):
    """Panda3D lets go of the GIL while it draws; collecting its state caches then crashed the
    process (a segfault in the benchmark runner's threads). Every render counts its frames, and
    the collection waits for none to be in flight."""
    from panda3d.core import TransformState

    from toolgym.renderers import panda_offscreen

    seen: list[int] = []

    class CountingEngine:  # the renderer's engine, noting the frames in flight as it draws
        def __init__(self, engine) -> None:
            self.engine = engine

        def render_frame(self) -> None:
            seen.append(panda_offscreen._frames_in_flight)
            self.engine.render_frame()

        def __getattr__(self, name: str):
            return getattr(self.engine, name)

    renderer.engine = CountingEngine(renderer.engine)
    try:
        renderer.render(trimesh.creation.box((10, 10, 10)), Framing((0, 0, 0), 10.0), depth=False)
    finally:
        renderer.engine = renderer.engine.engine
    assert seen == [1] * len(renderer.views)

    def litter() -> int:  # transforms no node holds, left in the cache
        for k in range(100):
            TransformState.make_pos((k * 1.37, 2.0, 3.0))
        return TransformState.get_num_states()

    littered = litter()
    with panda_offscreen.drawing():  # another thread's frame
        assert not panda_offscreen.forget_unused_states()
        assert TransformState.get_num_states() == littered
    assert panda_offscreen.forget_unused_states()
    assert TransformState.get_num_states() <= littered - 100
