"""Image metrics for rendered views.

Images are ``(H, W, C)`` arrays: ``uint8`` in [0, 255] or floats in [0, 1]; they are converted to
float64 in [0, 1] before any metric, so the numbers do not depend on the storage type. A stack of
views is ``(V, H, W, C)``; :func:`multiview` averages a metric over the views.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.ndimage import gaussian_filter

SSIM_SIGMA = 1.5  # Gaussian window of Wang et al. (2004)
SSIM_K1, SSIM_K2 = 0.01, 0.03


def to_unit(image: np.ndarray) -> np.ndarray:
    """Float64 in [0, 1]: ``uint8`` is divided by 255, floats are clipped."""
    array = np.asarray(image)
    if array.dtype == np.uint8:
        return array.astype(np.float64) / 255.0
    if not np.issubdtype(array.dtype, np.floating):
        raise TypeError(f"expected uint8 or float images, got {array.dtype}")
    return np.clip(array.astype(np.float64), 0.0, 1.0)


def _check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = to_unit(a), to_unit(b)
    if a.shape != b.shape:
        raise ValueError(f"images differ in shape: {a.shape} vs {b.shape}")
    return a, b


def photometric_loss(candidate: np.ndarray, reference: np.ndarray) -> float:
    """Mean squared error over all pixels and channels on [0, 1] RGB (the convention of published
    Blender benchmarks). 0 for identical images."""
    a, b = _check_pair(candidate, reference)
    return float(np.mean((a - b) ** 2))


def psnr(candidate: np.ndarray, reference: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB with peak 1: 10·log10(1 / MSE); ``inf`` if identical."""
    mse = photometric_loss(candidate, reference)
    return float("inf") if mse == 0 else float(10 * np.log10(1.0 / mse))


def ssim(candidate: np.ndarray, reference: np.ndarray) -> float:
    """Structural similarity (Wang et al. 2004): Gaussian window σ = 1.5 px, K1 = 0.01, K2 = 0.03,
    data range 1, computed per channel and averaged over pixels and channels. 1 for identical."""
    a, b = _check_pair(candidate, reference)
    if a.ndim == 2:
        a, b = a[..., None], b[..., None]
    c1, c2 = SSIM_K1**2, SSIM_K2**2
    values = []
    for channel in range(a.shape[-1]):
        x, y = a[..., channel], b[..., channel]
        blur = lambda image: gaussian_filter(image, SSIM_SIGMA, mode="reflect")  # noqa: E731
        mx, my = blur(x), blur(y)
        vx, vy, cov = blur(x * x) - mx**2, blur(y * y) - my**2, blur(x * y) - mx * my
        numerator = (2 * mx * my + c1) * (2 * cov + c2)
        values.append(numerator / ((mx**2 + my**2 + c1) * (vx + vy + c2)))
    return float(np.mean(values))


def silhouette(image: np.ndarray, background: tuple[float, ...] | None = None) -> np.ndarray:
    """Foreground mask: alpha > 0 for RGBA images, else pixels differing from ``background``
    (default: the top-left pixel's colour)."""
    array = to_unit(image)
    if array.ndim == 3 and array.shape[-1] == 4:
        return array[..., 3] > 0
    color = array[0, 0] if background is None else np.asarray(background, dtype=np.float64)
    return np.any(np.abs(array - color) > 1e-6, axis=-1) if array.ndim == 3 else array != color


def silhouette_iou(candidate: np.ndarray, reference: np.ndarray) -> float:
    """IoU of two boolean masks (or of the silhouettes of two images); 1 if both are empty."""
    a = candidate if candidate.dtype == bool else silhouette(candidate)
    b = reference if reference.dtype == bool else silhouette(reference)
    if a.shape != b.shape:
        raise ValueError(f"masks differ in shape: {a.shape} vs {b.shape}")
    union = np.count_nonzero(a | b)
    return float(np.count_nonzero(a & b) / union) if union else 1.0


def multiview(
    metric: Callable[[np.ndarray, np.ndarray], float], candidate: np.ndarray, reference: np.ndarray
) -> float:
    """Mean of ``metric`` over matching views of two ``(V, H, W, C)`` stacks."""
    if len(candidate) != len(reference):
        raise ValueError(f"{len(candidate)} views vs {len(reference)}")
    return float(np.mean([metric(c, r) for c, r in zip(candidate, reference, strict=True)]))
