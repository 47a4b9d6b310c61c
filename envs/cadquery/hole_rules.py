"""A fixed rule for plates with through-holes shown only as pictures: what a person writes in an
afternoon to read a plate and its holes off the target's RGB views, with nothing learnt.

The family's frame is wide (``plate_holes``: 2.84 mm a pixel at 64 px) and a hole may be 2 mm
across, so the task's own views show the plate's box but not always its holes.
:class:`PlateHoleRule` therefore asks for closer views with the env's ``look`` call
(``toolgym.envs.episode.look``):

1. the plate's box off the task's frame (the front view's columns for x and rows for z, the
   right view's columns for y), then a look centred on it at the largest zoom that holds it;
2. one look at zoom 16 on each face of the box (unless the overview was as close), each reading
   one edge;
3. a search of the top face: looks at zoom :attr:`PlateHoleRule.SEARCH_ZOOM` on overlapping
   windows that cover it, each window's holes being the off-part regions of the top view that
   the part encloses (they touch no edge of the window);
4. looks at the holes found, at 0.36 mm a pixel or finer, each centred to hold as many
   unmeasured holes whole as fit (a grid's 2 x 2 block): each hole's diameter from its area,
   its centre from its pixels' mean;
5. the calls: ``add_box`` with the box, one ``cut_hole`` per hole, then stop.

It reads ``plate_holes`` (four holes) and ``plate_grid_holes`` (a grid of 4 to 35, one
``cut_hole`` each where the reference makes a pattern) alike: nothing in it knows how many holes
a family has or where.

Without ``looks`` only the task's own views are read (the same inputs as a policy that cannot
look): the box and the holes the 64-pixel top view shows. Sizes are snapped to the 0.5 mm grid
the family's lengths are drawn on, places to 0.25 mm (a hole's place is half a length less an
inset). Views are the env's four (iso, front, right, top), tiled two by two; lengths in mm.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from scipy import ndimage

from toolgym.envs.cadquery.image_rules import BoxLooker, part_masks, snap
from toolgym.envs.episode.loop import STOP_CALL
from toolgym.renderers.mesh_views import Framing

Look = tuple[str, tuple[float, float, float], float]  # (what it is for, centre mm, zoom)
Hole = tuple[float, float, float]  # (x, y, diameter), mm


def _enclosed(part: np.ndarray) -> list[np.ndarray]:
    """The off-part regions of a view that touch none of its edges: what the part encloses."""
    labels, count = ndimage.label(~part)
    border = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    return [labels == k for k in range(1, count + 1) if k not in border]


def _spans(holes: list[Hole]) -> list[tuple[float, float]]:
    """The lowest and highest centre of ``holes`` along x, then y (mm)."""
    return [(min(h[a] for h in holes), max(h[a] for h in holes)) for a in (0, 1)]


class PlateHoleRule(BoxLooker):
    """Reads a plate with round through-holes off the target's RGB tile (see the module).

    ``framing``: the family's fixed frame (the pixels' places); ``looks``: whether to ask for
    closer views (about 6 + windows + holes of them; the env's ``max_steps`` must hold them and
    the calls); ``act(observation)`` answers one env observation, tool mode."""

    SEARCH_ZOOM = 4.0  # a window 45 mm wide in plate_holes' frame, 0.7 mm a pixel at 64 px
    HOLE_PITCH = 0.36  # mm: a look at holes at least this close (zoom 8 at 64 px)

    def __init__(self, framing: Framing, looks: bool = True) -> None:
        super().__init__(framing)
        self.looks = looks
        self._start()

    def _start(self) -> None:
        """What an episode keeps, as it begins."""
        self._looked = None
        self._plan: list[Look] = []
        self._phases = ["edges", "windows", "holes"]
        self._found: list[Hole] = []
        self._measured: dict[int, Hole] = {}
        self._calls: list[str] = []
        self._overview = 1.0  # the overview's zoom
        self._aimed: Hole = (0.0, 0.0, 0.0)  # the hole the last "holes" look was for

    def act(self, observation: dict[str, Any], task: Any = None) -> str:
        masks = part_masks(observation["target"])
        if int(observation["step"]) == 0:
            self._start()
            if not (masks[1].any() and masks[2].any()):  # no target to read
                self._calls = [json.dumps({"name": STOP_CALL})]
                return json.dumps({"name": "add_box", "arguments": {}})
            self._read_box(masks, self.framing.center, 1.0)
            if not self.looks:
                self._found = self._search(masks[3], self.framing.center, 1.0)
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
        elif what == "window":
            for hole in self._search(masks[3], center, zoom):
                if all(math.dist(hole[:2], seen[:2]) > seen[2] for seen in self._found):
                    self._found.append(hole)
        elif what == "hole":  # every hole found that this view holds whole, finer
            seen = self._search(masks[3], center, zoom)
            for number, found in enumerate(self._found):
                near = [h for h in seen if math.dist(h[:2], found[:2]) < max(found[2], 1.0)]
                if near and number not in self._measured:
                    self._measured[number] = near[0]
            aimed = self._found.index(self._aimed)
            self._measured.setdefault(aimed, self._aimed)  # not in view: the search's reading

    def _search(self, top: np.ndarray, center: Any, zoom: float) -> list[Hole]:
        """The holes a top view centred on ``center`` at ``zoom`` shows: (x, y, diameter) mm,
        the diameter from the region's area (a disc's), its centre from its pixels' mean."""
        pitch, half = self._pitch(top, zoom), top.shape[0] / 2
        holes = []
        for region in _enclosed(top):
            area = int(region.sum())
            rows, columns = np.nonzero(region)
            # Measured on 20 plates: the region's mean sits a quarter pixel towards the low
            # columns and rows (the part's extra pixels fall on the high side more often).
            x = center[0] + (columns.mean() + 0.75 - half) * pitch
            y = center[1] - (rows.mean() + 0.75 - half) * pitch
            # The rasteriser colours the part half a pixel past its edge all round (see
            # ``_edges``): the region is one pixel narrower than the hole.
            diameter = (2 * math.sqrt(area / math.pi) + 1) * pitch
            holes.append((float(x), float(y), float(diameter)))
        return holes

    # -- planning -----------------------------------------------------------------------------

    def _plan_phase(self, phase: str, top: np.ndarray) -> None:
        """The looks of ``phase``: "edges" (one at zoom 16 on each face of the box, unless the
        overview was at 16), "windows" (at :attr:`SEARCH_ZOOM` over the top face, overlapping
        by a third, so a hole one window's edge cuts lies whole in the next) or "holes" (one on
        the first hole found that no look has measured yet, at :meth:`_hole_zoom`; the phase
        comes again until every hole is measured)."""
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
        elif phase == "holes":
            left = [h for n, h in enumerate(self._found) if n not in self._measured]
            if left:
                self._aimed = left[0]
                center, zoom = self._hole_look(left, top)
                self._plan.append(("hole", (*center, middle[2]), zoom))
                self._phases.insert(0, "holes")

    def _hole_look(self, left: list[Hole], top: np.ndarray) -> tuple[tuple[float, float], float]:
        """Where and how close to look at the first of ``left`` (holes not measured yet): a
        pixel :attr:`HOLE_PITCH` or finer (at 64 px, centres within 0.05 mm and diameters within
        0.1 mm on 20 plates), up to zoom 16 for holes under about 4 mm, the hole held whole with
        room for the search's error (a window's pixel, the diameter half as big again); centred
        so that the view holds as many of its nearest neighbours whole as it can (a grid's 2 x 2
        block), each measured by the same look."""
        margin = self.MARGIN * self._pitch(top, self.SEARCH_ZOOM)
        diameter = left[0][2]
        holds = self.framing.half_width / (0.75 * diameter + margin)
        closest = 2 * self.framing.half_width / (top.shape[0] * self.HOLE_PITCH)
        wanted = max(closest, self.framing.half_width / (3 * diameter))
        zoom = float(max(1.0, min(self.ZOOM, holds, wanted)))
        reach = self.framing.half_width / zoom  # the view's half-width, mm

        def fits(group: list[Hole]) -> bool:
            room = max(h[2] for h in group) * 0.75 + margin
            return all((high - low) / 2 + room <= reach for low, high in _spans(group))

        group = [left[0]]
        for hole in sorted(left[1:], key=lambda h: math.dist(h[:2], left[0][:2])):
            if fits([*group, hole]):
                group.append(hole)
        (x0, x1), (y0, y1) = _spans(group)
        return ((x0 + x1) / 2, (y0 + y1) / 2), zoom

    # -- writing ------------------------------------------------------------------------------

    def _next_call(self) -> str:
        """The calls one a step (the box, then the holes), then stop at every step after."""
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
        holes = (
            self._found if not self.looks else [self._measured[n] for n in sorted(self._measured)]
        )
        for x, y, diameter in holes:
            arguments = {"diameter": snap(diameter), "x": snap(2 * x) / 2, "y": snap(2 * y) / 2}
            calls.append(json.dumps({"name": "cut_hole", "arguments": arguments}))
        return calls
