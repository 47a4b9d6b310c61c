"""Image metrics with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from toolgym.verifiers import images


def test_photometric_loss_and_psnr_on_known_images():
    a = np.zeros((4, 4, 3), dtype=np.uint8)
    b = np.full((4, 4, 3), 51, dtype=np.uint8)  # 0.2 on [0, 1]
    assert images.photometric_loss(a, b) == pytest.approx(0.04)
    assert images.psnr(a, b) == pytest.approx(10 * np.log10(1 / 0.04))
    assert images.psnr(a, a) == float("inf") and images.photometric_loss(b, b) == 0.0
    # uint8 and float inputs mean the same thing.
    assert images.photometric_loss(a, b.astype(np.float64) / 255) == pytest.approx(0.04)


def test_ssim_matches_its_closed_form_on_constant_images():
    """For constant images x = a and y = b there is no variance, so SSIM is the luminance term
    (2ab + C1) / (a² + b² + C1) exactly."""
    a, b = 0.3, 0.7
    c1 = images.SSIM_K1**2
    expected = (2 * a * b + c1) / (a * a + b * b + c1)
    got = images.ssim(np.full((16, 16, 3), a), np.full((16, 16, 3), b))
    assert got == pytest.approx(expected, rel=1e-9)


def test_ssim_of_identical_images_is_one_and_noise_lowers_it():
    rng = np.random.default_rng(0)
    image = rng.random((32, 32, 3))
    assert images.ssim(image, image) == pytest.approx(1.0)
    noisy = np.clip(image + rng.normal(0, 0.2, image.shape), 0, 1)
    slightly = np.clip(image + rng.normal(0, 0.02, image.shape), 0, 1)
    assert images.ssim(image, noisy) < images.ssim(image, slightly) < 1.0


def test_silhouette_iou_from_alpha_and_from_background():
    a = np.zeros((10, 10, 4), dtype=np.uint8)
    b = np.zeros((10, 10, 4), dtype=np.uint8)
    a[2:6, 2:6, 3] = 255  # 16 px
    b[4:8, 2:6, 3] = 255  # 16 px, 8 shared
    assert images.silhouette_iou(a, b) == pytest.approx(8 / 24)
    rgb = np.full((10, 10, 3), 255, dtype=np.uint8)
    rgb[2:6, 2:6] = (200, 0, 0)
    assert images.silhouette(rgb).sum() == 16
    assert images.silhouette_iou(rgb, rgb) == 1.0


def test_multiview_averages_per_view():
    a = np.zeros((2, 4, 4, 3))
    b = np.stack([np.zeros((4, 4, 3)), np.full((4, 4, 3), 0.5)])
    assert images.multiview(images.photometric_loss, a, b) == pytest.approx(0.125)
    with pytest.raises(ValueError, match="views"):
        images.multiview(images.photometric_loss, a, b[:1])


def test_mismatched_shapes_are_a_clear_error():
    with pytest.raises(ValueError, match="differ in shape"):
        images.ssim(np.zeros((4, 4, 3)), np.zeros((5, 4, 3)))
    with pytest.raises(TypeError, match="uint8 or float"):
        images.to_unit(np.zeros((2, 2), dtype=np.int32))
