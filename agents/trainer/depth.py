"""The depth views as the policy reads them (``CadQuery-v0(depth=True)``, ``PolicyConfig.depth``):
more CNN channels, *readings* (each view's extents, whether it shows a part, how full its
silhouette is) and, for the pointer (``PolicyConfig.measure``), numbers measured off them.

Each is a fixed function of the depth (max-pooling, counting): what is learnt is how to use it.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

DEPTH_CHANNELS = 6  # per image (current, target): both surfaces (mm / 100) and where the part is
MEASURES = 24  # per image (2) and view (4): an extent and a centre of either sign
READINGS = 32  # per view (4): the largest of each of 4 surface channels, 2 flags, 2 fills


def depth_inputs(depths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """From ``depths`` ``(B, 4, H, W)`` (mm, ``-inf`` off the part; a 2 x 2 tile of views):
    the CNN's extra channels ``(B, 6, H, W)`` (the four surfaces in mm / 100, 0 off the part,
    and the current part's and the target's silhouettes) and the readings ``(B, READINGS)``: per
    view, the largest value of each surface channel (mm / 100, 0 where the view shows no part),
    whether the current part and the target show in it, and each silhouette's fill (see
    :func:`silhouette_fill`)."""
    hit = torch.isfinite(depths)
    values = torch.where(hit, depths / 100.0, torch.zeros_like(depths))
    maps = torch.cat([values, hit[:, 0:1].float(), hit[:, 2:3].float()], dim=1)
    peaks = F.adaptive_max_pool2d(depths, 2).flatten(1)  # (B, 16): a view per tile quadrant
    peaks = torch.where(torch.isfinite(peaks), peaks / 100.0, torch.zeros_like(peaks))
    shown = F.adaptive_max_pool2d(hit[:, 0::2].float(), 2).flatten(1)  # (B, 8)
    return maps, torch.cat([peaks, shown, silhouette_fill(hit[:, 0::2])], dim=1)


def depth_measures(depths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Numbers measured off ``depths`` ``(B, 4, H, W)`` (see :func:`depth_inputs`), for the
    pointer: ``(values (B, MEASURES) mm, present (B, MEASURES))``. Per image (the current part,
    the target) and view, with ``near`` and ``far`` the largest values of its two surface
    channels: the extent along the view's axis (``near + far``) and the centre's coordinate
    along it, ``(near - far) / 2`` and its negative (the front view looks along -y). Present
    where the image shows a part in the view."""
    peaks = F.adaptive_max_pool2d(depths, 2).flatten(2)  # (B, 4 channels, 4 views)
    near, far = peaks[:, 0::2], peaks[:, 1::2]  # (B, 2 images, 4 views)
    shown = torch.isfinite(near) & torch.isfinite(far)
    near, far = (torch.where(shown, x, torch.zeros_like(x)) for x in (near, far))
    centre = (near - far) / 2
    values = torch.stack([near + far, centre, -centre], dim=-1).flatten(1)  # (B, 24)
    return values, shown.unsqueeze(-1).expand(-1, -1, -1, 3).flatten(1)


def silhouette_fill(hit: torch.Tensor) -> torch.Tensor:
    """``(B, 2 * 4)``: per image of ``hit`` ``(B, 2, H, W)`` (a 2 x 2 tile of views) and view,
    the share of the rows-by-columns box a silhouette spans that it covers: 1 for a box seen
    square on, pi / 4 for a disc (a cylinder from above, a sphere from anywhere); 0 for no part.
    What tells the tools apart, as one number per view."""
    batch, images, height, width = hit.shape
    views = hit.float().view(batch, images, 2, height // 2, 2, width // 2).transpose(3, 4)
    views = views.reshape(batch, images * 4, height // 2, width // 2)
    rows = views.amax(dim=3).sum(dim=2)  # rows the silhouette spans
    columns = views.amax(dim=2).sum(dim=2)
    return views.sum(dim=(2, 3)) / (rows * columns).clamp(min=1.0)
