"""Episode recording: every step's prompt, action, sandbox result, reward, report and pictures.

:class:`RecordEpisodes` wraps any toolgym environment (a
:class:`~toolgym.envs.episode.loop.ToolEnv`, through ``gym.make`` wrappers or not, inside a vector
environment or not) and writes one folder per episode into a run folder::

    RUN/0000-curated_plate-four-holes-p4242/
        meta.json          env id and arguments, seed, toolgym, tool and Python versions, git commit
        episode.jsonl      one JSON line for the reset, then one per step (see ``step_line``)
        images/<sha1>.png  the views, named by content: a view that does not change is stored once
        artifact.step      the final part, through the env's ``export`` (every step: artifacts/)

Each line is written with one ``write`` after the images it names are in place (each written to
a temporary name and renamed), so a run cut short by a crash, a kill or Ctrl-C reads back up to
its last complete step. A full disk or a permission error warns once and stops recording; the
environment goes on. The folder of a run is safe to share between processes (vector envs): each
episode folder carries its process id.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import inspect
import io
import math
import os
import platform
import subprocess
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from toolgym._version import __version__
from toolgym.envs.recording.log import FORMAT, encode_kwargs, to_json
from toolgym.envs.registration import get_card

ARTIFACT_MODES = ("final", "every", "none")
MiB = 1024 * 1024


class RecordingWarning(UserWarning):
    """The recorder could not write (disk full, no permission) or hit a size cap."""


class RecordEpisodes(gym.Wrapper):
    """Record every episode of ``env`` into ``directory``, one folder per episode.

    Args:
        env: a toolgym environment (``gym.make("toolgym/CadQuery-v0", ...)`` or the class).
        directory: the run folder; created if missing. Several recorders (one per process of an
            ``AsyncVectorEnv``) may share it.
        images: write the observation's views (every uint8 ``(H, W, 3)`` array: ``image`` and
            ``target``) as PNG.
        artifacts: ``"final"`` (the part at the end of the episode), ``"every"`` (after every
            step too; one sandbox export per step) or ``"none"``.
        artifact_format: the env's export format; ``None``: its first ``export_formats``.
        max_field_chars: longest text kept in a line (stdout, feedback, an action); longer text
            is cut and says by how many characters.
        max_episode_bytes: bytes one episode folder may take; beyond, images and artifacts are
            dropped first (the lines say so), then the episode's recording stops with a warning.
        max_run_bytes: bytes the run folder may hold; an episode that starts beyond is not
            recorded (one warning). Counted from the folder's contents at each reset.

    Attributes:
        recording_s: seconds spent recording, all episodes (what the wrapper adds to steps).
        episode_dir: the current episode's folder (``None`` when it is not being recorded).
    """

    def __init__(
        self,
        env: gym.Env,
        directory: str | os.PathLike[str],
        *,
        images: bool = True,
        artifacts: str = "final",
        artifact_format: str | None = None,
        max_field_chars: int = 65_536,
        max_episode_bytes: int = 64 * MiB,
        max_run_bytes: int = 4096 * MiB,
    ) -> None:
        super().__init__(env)
        if artifacts not in ARTIFACT_MODES:
            raise ValueError(f"artifacts must be one of {ARTIFACT_MODES}, got {artifacts!r}")
        for name, value in (
            ("max_field_chars", max_field_chars),
            ("max_episode_bytes", max_episode_bytes),
            ("max_run_bytes", max_run_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.directory = Path(directory)
        self.images, self.artifacts = images, artifacts
        self.artifact_format = artifact_format
        self.max_field_chars = max_field_chars
        self.max_episode_bytes, self.max_run_bytes = max_episode_bytes, max_run_bytes
        self.recording_s = 0.0
        self.episode_dir: Path | None = None
        self._episodes = 0
        self._warned: set[str] = set()
        self._written: set[str] = set()  # image files already in this episode's folder
        self._episode_bytes = 0
        self._capped = False
        self._annotations: dict[str, Any] = {}

    # -- gymnasium API --------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self._annotations = {}
        started = time.perf_counter()
        with self._never_raising():
            self._start_episode(observation, info, seed, options)
        self.recording_s += time.perf_counter() - started
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        started = time.perf_counter()
        observation, reward, terminated, truncated, info = self.env.step(action)
        step_s = time.perf_counter() - started
        if self.episode_dir is not None:
            started = time.perf_counter()
            with self._never_raising():
                line = self._step_line(action, observation, reward, terminated, truncated, info)
                line["duration_s"] = step_s
                self._write_line(line)
            self.recording_s += time.perf_counter() - started
        self._annotations = {}
        return observation, reward, terminated, truncated, info

    def annotate(self, **fields: Any) -> None:
        """Add ``fields`` to the next step's line: an agent's own account of the step (a
        language model's messages, token counts and latency under ``agent``, say)."""
        self._annotations.update(fields)

    def finish(self) -> tuple[float, dict[str, Any]]:
        """End the episode now (:meth:`~toolgym.envs.episode.loop.ToolEnv.finish`) and record it as
        a last line with ``"finish": true``, no action, the settling reward and ``final_report``.
        Returns what the env's ``finish`` returns."""
        reward, info = self.env.unwrapped.finish()
        if self.episode_dir is not None:
            with self._never_raising():
                line = self._annotations | {
                    "kind": "step",
                    "finish": True,
                    "step": getattr(self.env.unwrapped, "_steps", None),
                    "time": time.time(),
                    "task": info.get("task"),
                    "action": None,
                    "reward": float(reward),
                    "final_report": info.get("final_report"),
                    "error": info.get("error"),
                    "terminated": False,
                    "truncated": True,
                }
                self._annotations = {}
                line.update(self._artifact("artifact") if self.artifacts != "none" else {})
                self._write_line(line)
        self._annotations = {}
        return reward, info

    @contextlib.contextmanager
    def _never_raising(self) -> Iterator[None]:
        """A recorder's own failure (a bug, an odd observation) warns and stops recording the
        episode; it never ends the caller's training."""
        try:
            yield
        except OSError as exc:
            self._io_failed(exc)
        except Exception as exc:
            self._warn("internal", f"recording stopped: {type(exc).__name__}: {exc}")
            self.episode_dir = None

    # -- episodes ---------------------------------------------------------------------------------
    def _start_episode(
        self, observation: Any, info: dict[str, Any], seed: int | None, options: Any
    ) -> None:
        self.episode_dir, self._written, self._episode_bytes = None, set(), 0
        self._capped = False
        task = getattr(self.env.unwrapped, "task", None)
        task_id = getattr(task, "id", None) or str(info.get("task", "episode"))
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            used = _folder_bytes(self.directory)
            if used >= self.max_run_bytes:
                self._warn(
                    "run-cap",
                    f"recording stopped: the run folder {self.directory} holds {used} bytes, "
                    f"over max_run_bytes={self.max_run_bytes}; the environment goes on",
                )
                return
            folder = self._new_folder(task_id)
            self.episode_dir = folder
            self._write_file("meta.json", to_json(self._meta(seed, options)).encode())
        except OSError as exc:
            self._io_failed(exc)
            return
        line = {
            "kind": "reset",
            "time": time.time(),
            "task": task_id,
            "prompt": getattr(task, "prompt", None),
            "seed": seed,
            "options": options,
            "isolation": info.get("isolation"),
        }
        line.update(self._views(observation))
        self._write_line(line)

    def _new_folder(self, task_id: str) -> Path:
        slug = "".join(c if c.isalnum() or c in "-." else "_" for c in task_id)[:80]
        while True:
            folder = self.directory / f"{self._episodes:04d}-{slug}-p{os.getpid()}"
            self._episodes += 1
            try:
                folder.mkdir()
                return folder
            except FileExistsError:  # an earlier run in the same folder, same pid by chance
                continue

    def _meta(self, seed: int | None, options: Any) -> dict[str, Any]:
        unwrapped = self.env.unwrapped
        spec = self.env.spec
        backend = getattr(unwrapped, "backend", "") or ""
        distribution = _tool_distribution(backend)
        return {
            "format": FORMAT,
            "env_id": spec.id if spec is not None else None,
            "entry_point": f"{type(unwrapped).__module__}:{type(unwrapped).__qualname__}",
            "env_kwargs": encode_kwargs(dict(spec.kwargs)) if spec is not None else None,
            "seed": seed,
            "options": options,
            "toolgym": __version__,
            "tool": {"name": distribution, "version": _distribution_version(distribution)},
            "python": platform.python_version(),
            "git_commit": git_commit(),
            "started": time.time(),
            "pid": os.getpid(),
        }

    def _step_line(
        self,
        action: Any,
        observation: Any,
        reward: Any,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> dict[str, Any]:
        task = getattr(self.env.unwrapped, "task", None)
        line: dict[str, Any] = {
            "kind": "step",
            "step": observation.get("step") if isinstance(observation, dict) else None,
            "time": time.time(),
            "task": getattr(task, "id", None) or info.get("task"),
            "prompt": getattr(task, "prompt", None),
            "action": action,
            "sandbox": info.get("sandbox"),
            "error": info.get("error"),
            "reward": float(reward),
            "report": info.get("report"),
            "final_report": info.get("final_report"),
            "feedback": observation.get("feedback") if isinstance(observation, dict) else None,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "isolation": info.get("isolation"),
        }
        for key in ("timings", "sandbox_wall_s"):
            if key in info:
                line[key] = info[key]
        line.update(self._annotations)
        self._annotations = {}
        line.update(self._views(observation))
        done = terminated or truncated
        if self.artifacts == "every" or (done and self.artifacts == "final"):
            step = line["step"] if isinstance(line["step"], int) else 0
            name = "artifact" if done else f"artifacts/step-{step:04d}"
            line.update(self._artifact(name))
        return line

    def _views(self, observation: Any) -> dict[str, Any]:
        """PNGs of the observation's pictures, and digests of them (``--verify`` compares)."""
        views: dict[str, str] = {}
        digests: dict[str, str] = {}
        if not isinstance(observation, dict):
            return {}
        for key, value in observation.items():
            if not _is_picture(value):
                continue
            array = np.ascontiguousarray(value)
            digests[key] = picture_digest(array)
            digest = digests[key].partition(":")[0]
            if not self.images or self.episode_dir is None:
                continue
            name = f"images/{digest}.png"
            if name not in self._written:
                buffer = io.BytesIO()
                Image.fromarray(array[..., :3]).save(buffer, format="PNG", compress_level=1)
                if not self._write_file(name, buffer.getvalue(), optional=True):
                    continue
                self._written.add(name)
            views[key] = name
        return {"images": views, "digests": digests}

    def _artifact(self, name: str) -> dict[str, Any]:
        export = getattr(self.env.unwrapped, "export", None)
        if export is None:
            return {}
        fmt = self.artifact_format or _default_format(self.env.unwrapped, export)
        try:
            data = export(fmt) if fmt else export()
        except Exception as exc:  # no part, or an export that failed: recorded, never raised
            return {"artifact": None, "artifact_error": f"{type(exc).__name__}: {exc}"}
        if not isinstance(data, bytes):
            return {"artifact": None, "artifact_error": "export returned no bytes"}
        path = f"{name}.{fmt or 'bin'}"
        if not self._write_file(path, data, optional=True):
            return {"artifact": None, "artifact_error": "dropped: over max_episode_bytes"}
        return {"artifact": path}

    # -- writing ----------------------------------------------------------------------------------
    def _write_line(self, line: dict[str, Any]) -> None:
        if self.episode_dir is None:
            return
        try:
            data = (to_json(_cut_strings(line, self.max_field_chars)) + "\n").encode()
        except (TypeError, ValueError) as exc:  # info the env filled with something odd
            line = {k: line.get(k) for k in ("kind", "step", "time", "task", "reward")}
            line["record_error"] = f"the step could not be written as JSON: {exc}"
            data = (to_json(_cut_strings(line, self.max_field_chars)) + "\n").encode()
        if self._episode_bytes + len(data) > self.max_episode_bytes:
            self._warn(
                "episode-cap",
                f"recording of {self.episode_dir} stopped at max_episode_bytes="
                f"{self.max_episode_bytes}; the environment goes on",
            )
            self.episode_dir = None
            return
        try:
            # One write of a whole line on an O_APPEND descriptor: a reader sees whole lines,
            # and a crash can only cut the last one.
            fd = os.open(
                self.episode_dir / "episode.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        except OSError as exc:
            self._io_failed(exc)
            return
        self._episode_bytes += len(data)

    def _write_file(self, name: str, data: bytes, optional: bool = False) -> bool:
        """Write ``name`` in the episode folder atomically; ``False`` if it was not written."""
        folder = self.episode_dir
        if folder is None:
            return False
        if optional and self._episode_bytes + len(data) > self.max_episode_bytes * 0.9:
            # Pictures and parts go first: the last tenth of the cap is kept for the lines.
            if not self._capped:
                self._capped = True
                self._warn(
                    "episode-files",
                    f"{folder}: near max_episode_bytes={self.max_episode_bytes}; further images "
                    "and artifacts of the episode are not written",
                )
            return False
        path = folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_bytes(data)
            os.replace(temporary, path)
        except OSError as exc:
            if not optional:
                raise
            self._io_failed(exc)
            return False
        self._episode_bytes += len(data)
        return True

    def _io_failed(self, exc: OSError) -> None:
        where = exc.filename or self.directory
        self._warn(
            "io",
            f"recording stopped: cannot write {where}: {exc.strerror or exc}; "
            "the environment goes on (the next episode tries again)",
        )
        self.episode_dir = None

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            warnings.warn(message, RecordingWarning, stacklevel=3)


def recorded(
    env_fn: Callable[[], gym.Env], directory: str | os.PathLike[str], **options: Any
) -> Callable[[], gym.Env]:
    """A picklable ``env_fn`` for vector envs (and a trainer's ``eval --record``): makes
    ``env_fn()`` wrapped in :class:`RecordEpisodes` writing to ``directory``; ``options`` are
    the wrapper's. E.g. ``AsyncVectorEnv([recorded(make_env, "runs/eval")] * 4)``.
    """
    return functools.partial(_make_recorded, env_fn, str(directory), options)


def _make_recorded(env_fn: Callable[[], gym.Env], directory: str, options: dict) -> gym.Env:
    return RecordEpisodes(env_fn(), directory, **options)


def _cut_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f"… [{len(value) - limit} more characters cut by the recorder]"
    if isinstance(value, dict):
        return {k: _cut_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut_strings(v, limit) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no inf/NaN; "inf" as the verifier reports write it
    return value


def picture_digests(observation: Any) -> dict[str, str]:
    """``{key: digest}`` of the observation's pictures (what ``--verify`` compares)."""
    if not isinstance(observation, dict):
        return {}
    return {k: picture_digest(v) for k, v in observation.items() if _is_picture(v)}


def picture_digest(array: np.ndarray) -> str:
    """``"<sha1 of the pixels>:<H>x<W>x<C>"``."""
    array = np.ascontiguousarray(array)
    return f"{hashlib.sha1(array.tobytes()).hexdigest()}:{'x'.join(map(str, array.shape))}"


def _is_picture(value: Any) -> bool:
    return (
        isinstance(value, np.ndarray)
        and value.dtype == np.uint8
        and value.ndim == 3
        and value.shape[2] in (3, 4)
    )


def _default_format(unwrapped: Any, export: Callable[..., Any]) -> str | None:
    formats = getattr(unwrapped, "export_formats", None)
    if formats:
        return str(formats[0])
    try:
        parameters = list(inspect.signature(export).parameters.values())
    except (TypeError, ValueError):
        return None
    if parameters and isinstance(parameters[0].default, str):
        return parameters[0].default
    return None


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # removed meanwhile by another process
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def _tool_distribution(backend: str) -> str:
    """The distribution that provides a tool (its card's first), for meta.json."""
    try:
        return get_card(backend).distributions[0]
    except (KeyError, IndexError):  # a mix of tools, or a tool that names none
        return backend


@functools.cache
def git_commit() -> str | None:
    """The commit of the toolgym checkout in use, or ``None`` (an installed wheel, no git)."""
    source = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None
