"""How CadQuery-v0 frames its views: one frame per family, whatever the part's own size.

A view framed on the target's own bounding box hides its size: a 20 mm and a 41.5 mm sphere look
the same. So every task of a procedural family is seen through the same fixed frame, the family's
*envelope*: the box that holds every part the family draws (measured over 2 × 60 seeds of the
primitives and plate_holes and 2 × 12 of each other family, then widened by 10 % of its span on
each side). The current part and the target share it, so a part twice as big covers twice the
pixels and a part moved 10 mm moves on screen. A ground grid with lines every
:func:`grid_spacing` mm lies on the envelope's floor: a scale a policy can read, the same in
every episode of the family.

A hand-written task (no family) is framed about the origin, with the smallest half-width of
:data:`LADDER` that shows its target from every direction: the frame changes only when the part
outgrows a rung, never with its exact size.
"""

from __future__ import annotations

import numpy as np

from toolgym.renderers.mesh_views import Framing

# Per family: the (low, high) corners, in mm, of the box holding every part it draws.
ENVELOPES: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "primitive": ((-54.5, -53.5, -44.75), (54.25, 54.75, 40.0)),
    "plate_holes": ((-59.75, -40.0, -6.0), (59.75, 40.0, 6.0)),
    "u_channel": ((-30.0, -74.25, 0.0), (30.0, 74.25, 50.0)),
    "finished_block": ((-38.75, -38.75, -24.75), (38.75, 38.75, 24.75)),
    "stepped_shaft": ((-19.75, -19.75, 0.0), (19.75, 19.75, 123.5)),
    "l_bracket": ((0.0, -24.75, 0.0), (69.5, 24.75, 66.5)),
    "slotted_plate": ((-69.75, -44.5, -5.0), (69.75, 44.5, 5.0)),
    "enclosure": ((-56.25, -43.25, 0.0), (56.25, 43.25, 59.5)),
    "v_pulley": ((-49.25, -49.25, 0.0), (49.25, 49.25, 28.5)),
    "transition": ((-33.5, -34.75, 0.0), (33.5, 34.75, 78.0)),
    "bent_tube": ((-14.25, -14.25, 0.0), (150.0, 14.25, 134.25)),
    "flange": ((-53.0, -53.0, 0.0), (53.0, 53.0, 35.0)),
    "pillow_block": ((-50.25, -17.5, 0.0), (50.25, 17.5, 73.75)),
    "enclosure_bosses": ((-74.5, -59.25, 0.0), (74.5, 59.25, 67.0)),
    "lid_with_lip": ((-79.0, -60.0, -10.0), (79.0, 59.75, 5.25)),
    "box_ribbed": ((-79.5, -53.25, 0.0), (79.5, 53.25, 59.5)),
    "bearing_housing": ((-70.0, -70.0, 0.0), (70.0, 70.0, 30.0)),
    "motor_mount": ((-52.5, -37.5, 0.0), (52.5, 37.5, 7.5)),
    "vented_case": ((-79.75, -60.0, 0.0), (79.75, 60.0, 60.0)),
    "cup_revolved": ((-58.0, -58.0, -0.25), (58.0, 58.0, 143.0)),
    "junction_box": ((-72.75, -72.75, 0.0), (72.75, 72.75, 97.5)),
    "plate_counterbored": ((-65.75, -49.5, -8.75), (65.75, 49.5, 8.75)),
    "plate_countersunk": ((-103.0, -17.25, -5.75), (103.0, 17.25, 5.75)),
    "plate_pocketed": ((-63.25, -41.0, -7.5), (63.25, 41.0, 7.5)),
    "plate_grid_holes": ((-55.0, -42.0, -3.0), (55.0, 42.0, 3.0)),
    "plate_angled_slots": ((-65.5, -28.5, -5.25), (65.5, 28.5, 5.0)),
    "angle_gusset": ((0.0, 0.0, 0.0), (64.5, 64.0, 59.0)),
    "clevis": ((-17.75, -17.5, 0.0), (17.75, 17.5, 74.75)),
    "t_bracket": ((-40.0, -38.0, 0.0), (40.0, 38.0, 61.0)),
    "flange_raised_face": ((-100.5, -100.5, 0.0), (100.5, 100.5, 92.5)),
    "hub_keyed": ((-60.25, -60.25, 0.0), (60.25, 60.25, 62.0)),
    "shaft_keyway": ((-29.5, -29.5, 0.0), (29.5, 29.5, 204.75)),
    "shaft_grooved": ((-30.0, -30.0, 0.0), (30.0, 30.0, 210.0)),
    "shaft_chamfered": ((-29.75, -29.75, 0.0), (29.75, 29.75, 148.0)),
    "shaft_threaded_end": ((-21.75, -21.75, 0.0), (21.75, 21.75, 201.5)),
    "collar_set_screw": ((-36.5, -36.5, -0.25), (36.5, 36.5, 24.5)),
    "bushing_flanged": ((-37.0, -37.0, -0.25), (37.0, 37.0, 64.75)),
    "spur_gear": ((-57.0, -57.0, 0.0), (57.0, 57.0, 28.0)),
    "gear_hubbed": ((-87.0, -87.0, 0.0), (87.0, 87.0, 51.5)),
    "sprocket": ((-79.5, -79.75, 0.0), (79.5, 79.75, 9.25)),
    "timing_pulley": ((-58.5, -58.5, 0.0), (58.5, 58.5, 45.75)),
    "flat_pulley": ((-100.0, -100.0, -5.0), (100.0, 100.0, 58.5)),
    "handwheel": ((-125.0, -125.0, 0.0), (125.0, 125.0, 42.0)),
    "rack": ((-98.25, 0.0, 0.0), (98.25, 31.5, 29.5)),
    "ratchet_wheel": ((-73.0, -72.5, 0.0), (73.0, 72.5, 23.5)),
    "hex_nut": ((-20.25, -21.0, 3.5), (20.25, 21.0, 46.5)),
    "washer_iso": ((-33.0, -33.0, 3.5), (33.0, 33.0, 33.5)),
    "hex_bolt": ((-20.5, -21.0, -200.0), (20.5, 21.0, 15.0)),
    "socket_cap_screw": ((-15.0, -15.0, -130.25), (15.0, 15.0, 20.0)),
    "pipe_tee": ((-119.5, -57.25, -57.25), (119.5, 57.25, 114.5)),
    "pipe_reducer": ((-57.25, -57.25, 0.0), (57.25, 57.25, 108.5)),
    "pipe_elbow_flanged": ((-82.5, -82.5, 0.0), (133.0, 82.5, 215.5)),
    "pipe_cap": ((-36.75, -36.75, -0.25), (36.75, 36.75, 33.0)),
    "z_bracket": ((0.0, -33.5, -0.25), (115.5, 33.5, 73.0)),
    "hat_channel": ((-71.5, -98.5, -0.25), (71.5, 98.5, 68.5)),
    "sheet_l_holes": ((-0.25, -77.25, 0.0), (71.0, 77.25, 73.5)),
    "u_clip": ((-31.5, -21.75, -0.25), (31.5, 21.75, 71.5)),
    "pull_handle": ((-106.25, -13.0, 0.0), (106.25, 13.0, 100.25)),
    "knob_lofted": ((-28.25, -28.25, -0.25), (28.25, 28.25, 44.25)),
    "knob_fluted": ((-35.25, -35.25, -0.25), (34.75, 35.25, 34.75)),
    "heat_sink": ((-79.5, -49.25, 0.0), (79.5, 49.25, 53.5)),
}
WIDEN = 0.1  # share of the envelope's span added on each side: unseen seeds reach a bit further
# mm, hand-written tasks: a geometric ladder (about x1.6 a rung), so a part fills at least a
# third of the frame's width whatever its size.
LADDER = (10.0, 15.0, 25.0, 40.0, 60.0, 100.0, 150.0, 250.0, 400.0, 600.0, 1000.0, 1500.0, 2500.0)
MARGIN = 1.05  # the frame's half-width over the envelope's bounding-sphere radius
GRID_STEPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0)  # mm, round numbers


def grid_spacing(half_width: float) -> float:
    """The round spacing (mm) that puts about eight grid cells across a frame."""
    return next((s for s in GRID_STEPS if s >= 2 * half_width / 8), GRID_STEPS[-1])


def family_framing(family: str) -> Framing | None:
    """The fixed frame of a procedural family (``None`` for one without an envelope)."""
    if family not in ENVELOPES:
        return None
    low, high = (np.asarray(c, dtype=np.float64) for c in ENVELOPES[family])
    extra = WIDEN * (high - low)
    low, high = low - extra, high + extra
    radius = float(np.linalg.norm(high - low) / 2) * MARGIN
    center = tuple(float(c) for c in (low + high) / 2)
    return Framing(center, radius, grid_spacing(radius), float(low[2]))


def task_framing(family: str | None, bounds: np.ndarray | None) -> Framing:
    """The frame of a task's views: its family's fixed frame, or for a hand-written task a rung
    of :data:`LADDER` about the origin, big enough for ``bounds`` (2×3, the target's box)."""
    fixed = family_framing(family) if family else None
    if fixed is not None:
        return fixed
    reach = 1.0
    if bounds is not None and np.isfinite(bounds).all():
        reach = float(np.linalg.norm(np.abs(np.asarray(bounds, dtype=np.float64)).max(axis=0)))
    half = next((h for h in LADDER if h >= reach * MARGIN), reach * MARGIN)
    # The grid lies below any part the rung holds (their lowest point is above -half / MARGIN).
    return Framing((0.0, 0.0, 0.0), half, grid_spacing(half), -0.96 * half)
