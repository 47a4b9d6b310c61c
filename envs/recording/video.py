"""Recorded episodes as an animation (GIF, MP4): one frame per step, the agent's views beside the
target's, with the task, step, reward and score drawn in a caption strip.

Text is Pillow's built-in bitmap font, so frames do not depend on the fonts installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from toolgym.envs.recording.log import RecordedEpisode
from toolgym.renderers.labels import agent_and_target

CAPTION_HEIGHT = 28
BACKGROUND = (255, 255, 255)
TEXT = (30, 30, 30)


def episode_frames(episode: RecordedEpisode, scale: int = 2) -> list[np.ndarray]:
    """RGB uint8 frames: the start (the reset's views), then one per recorded step whose views
    can be read (others are skipped). Each shows the agent's views beside the target's, the views
    named and the panels captioned "agent" and "target", under the task, step, reward and score."""
    frames = []
    scores = episode.scores()
    lines = [(None, episode.reset)] if episode.reset else []
    lines += list(enumerate(episode.steps))
    for k, line in lines:
        views = line.get("images") if isinstance(line.get("images"), dict) else {}
        agent, target = (_load(episode, views.get(key)) for key in ("image", "target"))
        if agent is None and target is None:
            continue
        panels = agent_and_target(agent, target)
        panels = np.repeat(np.repeat(panels, scale, axis=0), scale, axis=1)
        height, width = panels.shape[:2]
        frame = Image.new("RGB", (width, height + CAPTION_HEIGHT), BACKGROUND)
        frame.paste(Image.fromarray(panels), (0, CAPTION_HEIGHT))
        draw = ImageDraw.Draw(frame)
        font = ImageFont.load_default_imagefont()
        draw.text((4, 2), episode.task[: width // 6], fill=TEXT, font=font)
        if k is None:
            caption = f"start (before step 1 of {len(episode.steps)})"
        else:
            caption = (
                f"step {k + 1}/{len(episode.steps)}  reward {_fmt(line.get('reward'))}  "
                f"score {_fmt(scores[k])}" + ("  error" if line.get("error") else "")
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
        path,
        save_all=True,
        append_images=images[1:],
        duration=int(seconds_per_frame * 1000),
        loop=0,
    )


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
        str(path),
        (even[1], even[0]),
        fps=fps,
        codec="libx264",
        pix_fmt_out="yuv420p",
        macro_block_size=1,
        ffmpeg_log_level="error",
    )
    writer.send(None)
    for frame in frames:
        canvas = np.full((*even, 3), 255, np.uint8)
        canvas[:height, :width] = frame
        writer.send(np.ascontiguousarray(canvas))
    writer.close()


def _load(episode: RecordedEpisode, relative: object) -> np.ndarray | None:
    path = episode.file(relative if isinstance(relative, str) else None)
    if path is None:
        return None
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except OSError:
        return None


def _fmt(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"
