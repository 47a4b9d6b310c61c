"""An on-disk cache of arrays that every process of a user shares: a task's reference is built
once, not once per process (a vector env's workers, a Ray actor, the next run).

Entries are ``.npz`` files of plain arrays, read with ``allow_pickle=False`` (never a pickle),
named by a SHA-256 of everything that decides their content (:func:`cache_key`: the caller's
inputs, the toolgym version and the sources that compute them). A write goes to a temporary file
renamed into place, so a reader sees a whole entry or none; an entry that cannot be read (cut
short, corrupt: the zip's CRC) is removed and the caller builds it again. After each write the
least recently used entries go until the folder holds at most :func:`max_bytes`.

Where: ``$TOOLGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolgym``, else ``~/.cache/toolgym``;
``TOOLGYM_CACHE_DIR=off`` turns the cache off, ``TOOLGYM_CACHE_MAX_MB`` bounds it (default
512). The sandbox never sees the folder: callers store only from a session whose allow-list
lies outside it (:func:`hidden_from`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from toolgym._version import __version__

DEFAULT_MAX_MB = 512
SUFFIX = ".npz"


def cache_dir() -> Path | None:
    """The cache folder (not created here), or ``None`` when ``TOOLGYM_CACHE_DIR=off``."""
    chosen = os.environ.get("TOOLGYM_CACHE_DIR", "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolgym"


def max_bytes() -> int:
    """The cache's bound in bytes (``TOOLGYM_CACHE_MAX_MB``, default 512 MiB)."""
    try:
        megabytes = float(os.environ.get("TOOLGYM_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return int(max(megabytes, 0.0) * 2**20)


@functools.cache
def _source_digest(modules: tuple[str, ...]) -> str:
    """SHA-256 of the named modules' source files: code that changes what an entry holds
    changes its key, even between two commits of one version."""
    import importlib.util

    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"no module {name!r}")
        digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()


@functools.cache
def tool_versions(*names: str) -> tuple[str, ...]:
    """``"name version"`` of each installed distribution (``"name ?"`` where none is): a tool
    whose version changes what an entry holds belongs in its key."""
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} ?")
    return tuple(versions)


def cache_key(kind: str, inputs: object, *, modules: Iterable[str] = ()) -> str:
    """The key of an entry: ``kind`` (a short name) and a SHA-256 of ``inputs`` (JSON data: the
    program, the settings), the toolgym version and the source of ``modules``."""
    text = json.dumps(
        [inputs, __version__, _source_digest(tuple(modules))], sort_keys=True, default=str
    )
    return f"{kind}-{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def hidden_from(allowed_paths: Iterable[str], layers: Iterable[str]) -> bool:
    """Whether a session with this allow-list and these isolation layers cannot see the cache:
    it has its own mount namespace and no allowed path holds the folder (or lies inside it)."""
    folder = cache_dir()
    if folder is None or "mountns" not in set(layers):
        return False
    here = os.path.realpath(folder)
    for path in allowed_paths:
        real = os.path.realpath(path)
        if os.path.commonpath([here, real]) in (here, real):
            return False
    return True


def load(key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored under ``key``, or ``None`` (no cache, no entry, or a broken entry, which
    is removed)."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{key}{SUFFIX}"
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}  # reads all: checks each CRC
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: the last to go
    return arrays


def store(key: str, arrays: dict[str, np.ndarray]) -> bool:
    """Store ``arrays`` under ``key`` atomically; ``False`` if the cache is off or unwritable (a
    cache that cannot be written is no error)."""
    folder = cache_dir()
    if folder is None:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(prefix=".partial-", suffix=SUFFIX, dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, **arrays)
            os.replace(temporary, folder / f"{key}{SUFFIX}")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError:
        return False
    _prune(folder, max_bytes())
    return True


def _prune(folder: Path, limit: int) -> None:
    """Remove the least recently used entries until the folder holds at most ``limit`` bytes."""
    entries = []
    for path in folder.glob(f"*{SUFFIX}"):
        if path.name.startswith(".partial-"):
            continue
        with contextlib.suppress(OSError):
            stat = path.stat()
            entries.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda entry: entry[0]):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size
