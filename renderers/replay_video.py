"""Recorded episodes as an animation (GIF, MP4): one frame per step, the agent's views beside the
target's, with the task, step, reward and score drawn in a caption strip.

Text is Pillow's built-in bitmap font, so frames do not depend on the fonts installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from toolgym.envs.episode_log import RecordedEpisode

CAPTION_HEIGHT = 28
BACKGROUND = (255, 255, 255)
TEXT = (30, 30, 30)


def episode_frames(episode: RecordedEpisode, scale: int = 2) -> list[np.ndarray]:
    """RGB uint8 frames, one per recorded step whose views can be read (others are skipped)."""
    frames = []
    scores = episode.scores()
    for k, line in enumerate(episode.steps):
        views = line.get("images") if isinstance(line.get("images"), dict) else {}
        panels = [_load(episode, views.get(key)) for key in ("image", "target")]
        panels = [p for p in panels if p is not None]
        if not panels:
            continue
        height = max(p.height for p in panels)
        width = sum(p.width for p in panels) + 4 * (len(panels) - 1)
        frame = Image.new("RGB", (width * scale, height * scale + CAPTION_HEIGHT), BACKGROUND)
        left = 0
        for panel in panels:
            big = panel.resize((panel.width * scale, panel.height * scale), Image.NEAREST)
            frame.paste(big, (left, CAPTION_HEIGHT))
            left += big.width + 4 * scale
        reward = line.get("reward")
        score = scores[k]
        draw = ImageDraw.Draw(frame)
        font = ImageFont.load_default_imagefont()
        draw.text((4, 2), episode.task[: width * scale // 6], fill=TEXT, font=font)
        caption = (
            f"step {k + 1}/{len(episode.steps)}  reward {_fmt(reward)}  score {_fmt(score)}"
            + ("  error" if line.get("error") else "")
        )
        draw.text((4, 15), caption, fill=TEXT, font=font)
        frames.append(np.asarray(frame))
    return frames


def run_frames(episodes: list[RecordedEpisode]) -> list[np.ndarray]:
    """Every episode's frames in order, padded to one size (the largest)."""
    frames = [f for episode in episodes for f in episode_frames(episode)]
    if not frames:
        return []
    height = max(f.shape[0] for f in frames)
    width = max(f.shape[1] for f in frames)
    padded = []
    for frame in frames:
        canvas = np.full((height, width, 3), 255, np.uint8)
        canvas[: frame.shape[0], : frame.shape[1]] = frame
        padded.append(canvas)
    return padded


def write_gif(frames: list[np.ndarray], path: Path, seconds_per_frame: float = 1.0) -> None:
    images = [Image.fromarray(f) for f in frames]
    images[0].save(
        path, save_all=True, append_images=images[1:], duration=int(seconds_per_frame * 1000),
        loop=0,
    )  # fmt: skip


def write_mp4(frames: list[np.ndarray], path: Path, fps: int = 2) -> None:
    """H.264 through imageio-ffmpeg's bundled ffmpeg (installed with the dev extras' moviepy).

    Raises ``RuntimeError`` naming the package when it is missing."""
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        raise RuntimeError(
            "--mp4 needs imageio-ffmpeg: pip install imageio-ffmpeg (or the dev extras)"
        ) from exc
    height, width = frames[0].shape[:2]
    even = (height + height % 2, width + width % 2)  # H.264 wants even sizes
    writer = imageio_ffmpeg.write_frames(
        str(path), (even[1], even[0]), fps=fps, codec="libx264", pix_fmt_out="yuv420p",
        macro_block_size=1, ffmpeg_log_level="error",
    )  # fmt: skip
    writer.send(None)
    for frame in frames:
        canvas = np.full((*even, 3), 255, np.uint8)
        canvas[:height, :width] = frame
        writer.send(np.ascontiguousarray(canvas))
    writer.close()


def _load(episode: RecordedEpisode, relative: object) -> Image.Image | None:
    path = episode.file(relative if isinstance(relative, str) else None)
    if path is None:
        return None
    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except OSError:
        return None


def _fmt(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"
