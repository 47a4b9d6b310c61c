"""A fixed rule for plates with through-holes and round-ended slots shown only as pictures: what a
person writes in an afternoon to read a plate and its cut-outs off the target's RGB views, with
nothing learnt.

The families' frames are wide (``plate_holes``: 2.84 mm a pixel at 64 px) and a hole may be 2 mm
across, so the task's own views show the plate's box but not always its cut-outs.
:class:`PlateHoleRule` therefore asks for closer views with the env's ``look`` call
(``toolgym.envs.episode.look``):

1. the plate's box off the task's frame (the front view's columns for x and rows for z, the
   right view's columns for y), then a look centred on it at the largest zoom that holds it;
2. one look at zoom 16 on each face of the box (unless the overview was as close), each reading
   one edge;
3. a search of the top face: looks at zoom :attr:`PlateHoleRule.SEARCH_ZOOM` on overlapping
   windows that cover it. A window's cut-outs are the off-part regions of its top view that the
   part encloses (they touch no edge of the window); an off-part region inside the plate that
   does touch one is part of a cut-out too long for a window (a slot);
4. one look at each such long cut-out, its window parts put together, holding it whole;
5. looks at the cut-outs found, at 0.36 mm a pixel or finer where they fit, each centred to
   hold as many unmeasured ones whole as fit (a grid's 2 x 2 block). Each is fitted from its
   region's area, pixel mean and spread along its long axis (:func:`stadium`): a round hole
   (its diameter from the area) or a round-ended slot (width, length end to end, angle);
6. the calls: ``add_box`` with the box, one ``cut_hole`` per hole and one ``cut_slot`` per
   slot, then stop.

It reads ``plate_holes`` (four holes), ``plate_grid_holes`` (a grid of 4 to 35, one
``cut_hole`` each where the reference makes a pattern), ``plate_angled_slots`` (1 to 4 tilted
slots) and ``slotted_plate`` (1 to 4 slots along X, a box and two holes each in the reference)
alike: nothing in it knows how many cut-outs a family has, of which kind, or where.

Without ``looks`` only the task's own views are read (the same inputs as a policy that cannot
look): the box and the cut-outs the 64-pixel top view shows. Sizes are snapped to the 0.5 mm
grid the families' lengths are drawn on, places to 0.25 mm (a hole's place is half a length
less an inset), angles to 0.5 degrees. Views are the env's four (iso, front, right, top), tiled
two by two; lengths in mm, angles in degrees counter-clockwise from +X seen from +Z.
"""

from __future__ import annotations

import json
import math
from typing import Any, NamedTuple

import numpy as np
from scipy import ndimage
from scipy.optimize import brentq

from toolgym.envs.cadquery.image_rules import BoxLooker, Look, part_masks, snap
from toolgym.envs.episode.loop import STOP_CALL
from toolgym.renderers.mesh_views import Framing

Extent = tuple[float, float, float, float]  # x low, x high, y low, y high (mm)
End = tuple[np.ndarray, float, float]  # a slot end's middle (mm), its tip's reach on, the width


class Cutout(NamedTuple):
    """A through-cut seen from above: a round hole (``length == width``, its diameter) or a
    round-ended slot (``length`` end to end, ``angle`` its long axis'); mm and degrees."""

    x: float
    y: float
    width: float
    length: float
    angle: float = 0.0

    @property
    def is_round(self) -> bool:
        return self.length == self.width

    def extent(self) -> Extent:
        """Its box: x low, x high, y low, y high (mm)."""
        straight, turn = self.length - self.width, math.radians(self.angle)
        reach_x = straight / 2 * abs(math.cos(turn)) + self.width / 2
        reach_y = straight / 2 * abs(math.sin(turn)) + self.width / 2
        return (self.x - reach_x, self.x + reach_x, self.y - reach_y, self.y + reach_y)


def stadium(area: float, spread: float) -> tuple[float, float]:
    """The round-ended slot with this ``area`` and ``spread`` (variance along its long axis),
    as (width, straight length between its ends' centres), in the units of ``area``'s square
    root: a disc (straight 0) where the region spreads no further than the disc of its area."""
    widest = 2 * math.sqrt(area / math.pi)

    def excess(width: float) -> float:
        r = width / 2
        straight = (area - math.pi * r * r) / width
        # The middle rectangle's moment plus each half disc's about the slot's centre.
        moment = width * straight**3 / 12 + 2 * (
            math.pi * r**4 / 8 + 2 / 3 * straight * r**3 + math.pi * straight**2 * r**2 / 8
        )
        return moment / area - spread

    if excess(widest) >= 0:
        return widest, 0.0
    width = float(brentq(excess, widest * 1e-3, widest, xtol=1e-9))
    return width, (area - math.pi * width * width / 4) / width


def _axis_angle(dx: float, dy: float) -> float:
    """The angle of the axis along (dx, dy) from +X, degrees in (-90, 90]: a slot's either way."""
    angle = math.degrees(math.atan2(dy, dx))
    return angle - 180 if angle > 90 else angle + 180 if angle <= -90 else angle


def _pixels(
    rows: np.ndarray, columns: np.ndarray, pitch: float, half: float, shift: float
) -> np.ndarray:
    """Pixels' places (mm, n x 2: x right, y up) from a view's middle, each ``shift`` pixels
    on from its corner (0.5: its centre)."""
    return np.stack([(columns + shift - half) * pitch, -(rows + shift - half) * pitch], axis=1)


def _regions(part: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The off-part regions of a view: those that touch none of its edges (what the part
    encloses), and those that do."""
    labels, count = ndimage.label(~part)
    border = set(
        np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])).tolist()
    )
    regions = [(k in border, labels == k) for k in range(1, count + 1)]
    return [r for b, r in regions if not b], [r for b, r in regions if b]


def _joined(parts: list[np.ndarray], cell: float) -> list[np.ndarray]:
    """``parts`` (each an n x 2 array of points, mm) put together where they share a square
    of side ``cell``: the windows overlap, so a cut-out's parts in two windows share pixels."""
    groups: list[tuple[set[tuple[int, int]], np.ndarray]] = []
    for points in parts:
        cells = set(map(tuple, np.floor(points / cell).astype(int).tolist()))
        apart = []
        for group_cells, group_points in groups:  # each group it touches joins it
            if group_cells & cells:
                cells |= group_cells
                points = np.concatenate([points, group_points])
            else:
                apart.append((group_cells, group_points))
        groups = [*apart, (cells, points)]
    return [points for _, points in groups]


def _inside(points: np.ndarray, cutout: Cutout, slack: float) -> bool:
    """Whether any of ``points`` (mm) lies within ``slack`` of ``cutout``'s outline or in it."""
    turn = math.radians(cutout.angle)
    along = np.array([math.cos(turn), math.sin(turn)])
    offsets = points - np.array([cutout.x, cutout.y])
    half = (cutout.length - cutout.width) / 2
    u = np.clip(offsets @ along, -half, half)
    gaps = np.linalg.norm(offsets - u[:, None] * along, axis=1)
    return bool((gaps <= cutout.width / 2 + slack).any())


def _spans(cutouts: list[Cutout]) -> list[tuple[float, float]]:
    """The lowest and highest extent of ``cutouts`` along x, then y (mm)."""
    extents = [c.extent() for c in cutouts]
    return [(min(e[2 * a] for e in extents), max(e[2 * a + 1] for e in extents)) for a in (0, 1)]


class PlateHoleRule(BoxLooker):
    """Reads a plate with round through-holes and round-ended through-slots off the target's
    RGB tile (see the module).

    ``framing``: the family's fixed frame (the pixels' places); ``looks``: whether to ask for
    closer views (about 6 + windows + cut-outs of them; the env's ``max_steps`` must hold them
    and the calls); ``act(observation)`` answers one env observation, tool mode."""

    SEARCH_ZOOM = 4.0  # a window 45 mm wide in plate_holes' frame, 0.7 mm a pixel at 64 px
    HOLE_PITCH = 0.36  # mm: a look at cut-outs at least this close (zoom 8 at 64 px)
    # A region is a slot where its straight part is at least this many pixels and this share of
    # its width: a disc's pixels spread a little further than a disc's (a pixel at most).
    SLOT_PIXELS, SLOT_SHARE = 2.0, 0.25
    # Pixels a turned slot's region falls short of its tip, and of its width (measured on 16
    # training plates of plate_angled_slots; along an axis the width falls a pixel short).
    END_SHRINK, WIDTH_SHRINK = 0.76, 0.22

    def __init__(self, framing: Framing, looks: bool = True) -> None:
        super().__init__(framing)
        self.looks = looks
        self._start()

    def _start(self) -> None:
        """What an episode keeps, as it begins."""
        self._looked = None
        self._plan: list[Look] = []
        self._phases = ["edges", "windows", "wholes", "cutouts"]
        self._found: list[Cutout] = []
        self._parts: list[np.ndarray] = []  # points of cut-outs too long for a window (mm)
        self._measured: dict[int, Cutout] = {}
        self._calls: list[str] = []
        self._overview = 1.0  # the overview's zoom
        self._aimed = Cutout(0.0, 0.0, 0.0, 0.0)  # the cut-out the last "cutout" look was for
        self._ends: list[End | None] = []  # the aimed slot's ends, as read

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        masks = part_masks(observation["target"])
        if int(observation["step"]) == 0:
            self._start()
            if not (masks[1].any() and masks[2].any()):  # no target to read
                self._calls = [json.dumps({"name": STOP_CALL})]
                return json.dumps({"name": "add_box", "arguments": {}})
            self._read_box(masks, self.framing.center, 1.0)
            if not self.looks:
                self._found = self._search(masks[3], self.framing.center, 1.0)[0]
                return self._next_call()
            return self._look("overview", self._middle(), self._overview_zoom(masks[1]))
        if self._looked is not None:
            self._read(*self._looked, masks)
            self._looked = None
            while not self._plan and self._phases:
                self._plan_phase(self._phases.pop(0), masks[3])
            if self._plan:
                return self._look(*self._plan.pop(0))
        return self._next_call()

    # -- reading ------------------------------------------------------------------------------

    def _read(self, what: str, center: Any, zoom: float, masks: list[np.ndarray]) -> None:
        if what == "overview":
            self._read_box(masks, center, zoom)
            self._overview = zoom
        elif what.startswith("edge"):
            self._read_edge(what[4], int(what[5]), masks, center, zoom)
        elif what in ("window", "whole"):
            whole, parts = self._search(masks[3], center, zoom)
            for cutout in whole:
                if not any(self._same(cutout, seen) for seen in self._found):
                    self._found.append(cutout)
            self._parts += parts
        elif what == "cutout":  # every round one found that this view holds whole, finer
            seen = self._search(masks[3], center, zoom)[0]
            for number, found in enumerate(self._found):
                near = [c for c in seen if c.is_round and self._same(c, found)]
                if near and found.is_round and number not in self._measured:
                    self._measured[number] = near[0]
            aimed = self._found.index(self._aimed)
            self._measured.setdefault(aimed, self._aimed)  # not in view: the search's reading
        elif what.startswith("end"):  # one end of a slot
            self._ends.append(self._read_end(masks[3], center, zoom, int(what[3])))
            if len(self._ends) == 2:
                self._measured[self._found.index(self._aimed)] = self._slot_from_ends()

    @staticmethod
    def _same(a: Cutout, b: Cutout) -> bool:
        """Two readings of one cut-out: centres closer than the narrower's width (a
        neighbouring hole or slot is at least a width and a web away)."""
        return math.dist(a[:2], b[:2]) < max(min(a.width, b.width), 1.0)

    def _search(
        self, top: np.ndarray, center: Any, zoom: float
    ) -> tuple[list[Cutout], list[np.ndarray]]:
        """The cut-outs a top view centred on ``center`` at ``zoom`` shows whole, each fitted
        by :meth:`_fit`; and the points (mm) of each off-part region that touches the view's
        edge inside the plate's top face: parts of cut-outs the view does not hold."""
        pitch, half = self._pitch(top, zoom), top.shape[0] / 2
        enclosed, touching = _regions(top)
        parts = []
        (x0, x1), (y0, y1) = (
            (lo + pitch, hi - pitch) for lo, hi in (self._box["x"], self._box["y"])
        )
        for region in touching:
            points = _pixels(*np.nonzero(region), pitch, half, 0.5) + np.asarray(center[:2])
            (low_x, low_y), (high_x, high_y) = points.min(axis=0), points.max(axis=0)
            if low_x > x0 and high_x < x1 and low_y > y0 and high_y < y1:
                parts.append(points)
        return [self._fit(r, center, pitch, half) for r in enclosed], parts

    def _fit(self, region: np.ndarray, center: Any, pitch: float, half: float) -> Cutout:
        """One enclosed region as a cut-out (mm): its centre from its pixels' mean, its size
        from its area and its spread along its long axis (:func:`stadium`), its angle from
        that axis."""
        area = int(region.sum())
        rows, columns = np.nonzero(region)
        # Measured on 20 plates: the region's mean sits a quarter pixel towards the low columns
        # and rows (the part's extra pixels fall on the high side more often).
        x, y = _pixels(rows, columns, pitch, half, 0.75).mean(axis=0) + np.asarray(center[:2])
        # The rasteriser colours the part half a pixel past its edge all round (see ``_edges``):
        # the region is the cut-out one pixel narrower and shorter.
        diameter = (2 * math.sqrt(area / math.pi) + 1) * pitch
        if area < 3:
            return Cutout(float(x), float(y), diameter, diameter)
        # A pixel is a square: its own spread (1/12 a side) adds to its centre's.
        spreads, axes = np.linalg.eigh(np.cov(columns, -rows, bias=True) + np.eye(2) / 12)
        width, straight = stadium(area, float(spreads[1]))
        if straight < max(self.SLOT_PIXELS, self.SLOT_SHARE * width):
            return Cutout(float(x), float(y), diameter, diameter)
        size = (width + 1) * pitch
        angle = _axis_angle(axes[0, 1], axes[1, 1])
        return Cutout(float(x), float(y), size, size + straight * pitch, angle)

    # -- planning -----------------------------------------------------------------------------

    def _plan_phase(self, phase: str, top: np.ndarray) -> None:
        """The looks of ``phase``: "edges" (one at zoom 16 on each face of the box, unless the
        overview was at 16), "windows" (at :attr:`SEARCH_ZOOM` over the top face, overlapping
        by a third, so a hole one window's edge cuts lies whole in the next), "wholes" (one on
        each cut-out that no window held whole, its parts joined, at the largest zoom that
        holds it) or "cutouts" (one on the first cut-out found that no look has measured yet,
        at :meth:`_cutout_look`; the phase comes again until every one is measured)."""
        middle = self._middle()
        if phase == "edges" and self._overview < self.ZOOM:
            for name, side, at in self._faces():
                self._plan.append((f"edge{name}{side}", at, self.ZOOM))
        elif phase == "windows":
            width = 2 * self.framing.half_width / self.SEARCH_ZOOM
            stride = width * 2 / 3
            centres = []
            for axis in "xy":
                low, high = self._box[axis]
                count = max(1, math.ceil((high - low - width) / stride) + 1)
                first = (low + high) / 2 - (count - 1) * stride / 2
                centres.append([first + k * stride for k in range(count)])
            for x in centres[0]:
                for y in centres[1]:
                    self._plan.append(("window", (x, y, middle[2]), self.SEARCH_ZOOM))
        elif phase == "wholes":
            slack = 2 * self._pitch(top, self.SEARCH_ZOOM)
            for points in _joined(self._parts, slack):
                if any(_inside(points, c, slack) for c in self._found):
                    continue  # a part of a cut-out some window held whole
                (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
                reach = max(x1 - x0, y1 - y0) / 2 + self.MARGIN * slack
                zoom = float(max(1.0, min(self.ZOOM, self.framing.half_width / reach)))
                self._plan.append(("whole", ((x0 + x1) / 2, (y0 + y1) / 2, middle[2]), zoom))
        elif phase == "cutouts":
            left = [c for n, c in enumerate(self._found) if n not in self._measured]
            if left:
                self._aimed = left[0]
                self._phases.insert(0, "cutouts")
                if not left[0].is_round:
                    self._ends = []
                    # The round end and a band of the straight part beside it (4 mm or so).
                    holds = self.framing.half_width / (1.5 * left[0].width + 6.0)
                    zoom = float(max(1.0, min(self._closest(top), holds)))
                    for side in (0, 1):
                        at = self._end_centre(left[0], side)
                        self._plan.append((f"end{side}", (*at, middle[2]), zoom))
                    return
                center, zoom = self._cutout_look([c for c in left if c.is_round], top)
                self._plan.append(("cutout", (*center, middle[2]), zoom))

    def _cutout_look(
        self, left: list[Cutout], top: np.ndarray
    ) -> tuple[tuple[float, float], float]:
        """Where and how close to look at the first of ``left`` (cut-outs not measured yet): a
        pixel :attr:`HOLE_PITCH` or finer where it fits (at 64 px, hole centres within 0.05 mm
        and diameters within 0.1 mm on 20 plates), up to zoom 16 for holes under about 4 mm,
        the cut-out held whole with room for the search's error (a window's pixel, its length
        half as big again); centred so that the view holds as many of its nearest neighbours
        whole as it can (a grid's 2 x 2 block), each measured by the same look."""
        margin = self.MARGIN * self._pitch(top, self.SEARCH_ZOOM)
        first = left[0]
        holds = self.framing.half_width / (0.75 * first.length + margin)
        wanted = max(self._closest(top), self.framing.half_width / (3 * first.width))
        zoom = float(max(1.0, min(self.ZOOM, holds, wanted)))
        reach = self.framing.half_width / zoom  # the view's half-width, mm

        def fits(group: list[Cutout]) -> bool:
            room = max(c.length for c in group) * 0.25 + margin
            return all((high - low) / 2 + room <= reach for low, high in _spans(group))

        group = [first]
        for cutout in sorted(left[1:], key=lambda c: math.dist(c[:2], first[:2])):
            if fits([*group, cutout]):
                group.append(cutout)
        (x0, x1), (y0, y1) = _spans(group)
        return ((x0 + x1) / 2, (y0 + y1) / 2), zoom

    def _closest(self, top: np.ndarray) -> float:
        """The zoom whose pixel is :attr:`HOLE_PITCH`."""
        return float(min(self.ZOOM, 2 * self.framing.half_width / (top.shape[0] * self.HOLE_PITCH)))

    @staticmethod
    def _end_centre(slot: Cutout, side: int) -> tuple[float, float]:
        """The centre of a slot's round end (``side`` 0: towards its angle, 1: away), mm."""
        reach = (slot.length - slot.width) / 2 * (1 if side == 0 else -1)
        turn = math.radians(slot.angle)
        return (slot.x + reach * math.cos(turn), slot.y + reach * math.sin(turn))

    def _read_end(self, top: np.ndarray, center: Any, zoom: float, side: int) -> End | None:
        """One end of the slot aimed at, in a close look centred on its round end: the middle
        of its end (mm, world: the mean of its pixels past a line across the straight part), how
        far on along the slot its tip is from there (mm) and the slot's width, or None where the
        view does not show it. The width is the area of a band of the straight part over its
        length; the tip lies beyond the line by what the area past it says (a rectangle and a
        half disc); both by areas, so finer than a pixel."""
        slot, pitch, half = self._aimed, self._pitch(top, zoom), top.shape[0] / 2
        labels, _ = ndimage.label(~top)
        label = labels[int(half), int(half)]
        if label == 0:
            return None  # the look's middle is on the part: not this slot
        rows, columns = np.nonzero(labels == label)
        turn = math.radians(slot.angle) + (0 if side == 0 else math.pi)
        along, across = (
            np.array([math.cos(turn), math.sin(turn)]),
            np.array([-math.sin(turn), math.cos(turn)]),
        )
        points = _pixels(rows, columns, pitch, half, 0.75)
        u, v = points @ along, points @ across
        straight = slot.length - slot.width
        margin = 1.0 + 2 * pitch  # mm: the search's error in where the end is
        # The band stays two pixels inside the view, however the slot is turned.
        room = math.sqrt(max((half * pitch - 2 * pitch) ** 2 - (0.6 * slot.width) ** 2, 0.0))
        low, high = max(-straight + margin, -room), -margin
        band, end = (u >= low) & (u < high), u >= high
        if high - low < 4 * pitch or not band.any():
            return None
        width = band.sum() * pitch * pitch / (high - low)
        beyond = end.sum() * pitch * pitch
        tip = high + width / 2 + (beyond - math.pi * width * width / 8) / width
        # The end's own middle: the pixels past the line, across the slot to a fraction of a
        # pixel, and far from the other end's (the slot's angle between them).
        middle = np.asarray(center[:2]) + u[end].mean() * along + v[end].mean() * across
        reach = tip + self.END_SHRINK * pitch - float(u[end].mean())
        # Along an axis the part is coloured half a pixel past each side (as at a box's edges);
        # turned, measured, less.
        square = min(slot.angle % 90, -slot.angle % 90) < 1.0
        return middle, reach, width + (1.0 if square else self.WIDTH_SHRINK) * pitch

    def _slot_from_ends(self) -> Cutout:
        """The slot aimed at, from its two ends as read (its search reading where either is
        missing): its axis through the two ends' middles, each tip that far on along it."""
        ends = [end for end in self._ends if end is not None]
        if len(ends) < 2:
            return self._aimed
        (middle0, reach0, width0), (middle1, reach1, width1) = ends
        apart = float(np.linalg.norm(middle0 - middle1))
        if apart < 1e-6:
            return self._aimed  # no axis between them
        axis = (middle0 - middle1) / apart
        tip0, tip1 = middle0 + reach0 * axis, middle1 - reach1 * axis
        x, y = (tip0 + tip1) / 2
        length = float(np.linalg.norm(tip0 - tip1))
        angle = _axis_angle(axis[0], axis[1])
        return Cutout(float(x), float(y), (width0 + width1) / 2, length, angle)

    # -- writing ------------------------------------------------------------------------------

    def _next_call(self) -> str:
        """The calls one a step (the box, then the cut-outs), then stop at every step after."""
        if not self._calls:
            self._calls = [*self._write(), json.dumps({"name": STOP_CALL})]
        return self._calls.pop(0) if len(self._calls) > 1 else self._calls[0]

    def _write(self) -> list[str]:
        size = {
            k: snap(self._box[a][1] - self._box[a][0])
            for k, a in zip(("length", "width", "height"), "xyz", strict=True)
        }
        place = {a: snap(v) for a, v in zip("xyz", self._middle(), strict=True)}
        box = size | {a: v for a, v in place.items() if v != 0.0}
        calls = [json.dumps({"name": "add_box", "arguments": box})]
        cutouts = (
            self._found if not self.looks else [self._measured[n] for n in sorted(self._measured)]
        )
        for cutout in cutouts:
            at = {"x": snap(2 * cutout.x) / 2, "y": snap(2 * cutout.y) / 2}
            if cutout.is_round:
                arguments = {"diameter": snap(cutout.width)} | at
                calls.append(json.dumps({"name": "cut_hole", "arguments": arguments}))
                continue
            arguments = {"length": snap(cutout.length), "width": snap(cutout.width)} | at
            if snap(cutout.angle) != 0.0:  # to half a degree
                arguments["angle"] = snap(cutout.angle)
            calls.append(json.dumps({"name": "cut_slot", "arguments": arguments}))
        return calls
