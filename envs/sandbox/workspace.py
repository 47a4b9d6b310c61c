"""Copies of a session's writable files, so that a snapshot covers them too.

The session's init (trusted, root) keeps one copy of the scratch directories per snapshot in a
store the worker cannot read, and puts a copy back when the snapshot is resumed. Files the
previous copy already holds unchanged (same size, mtime and mode) are hard links to it, so a
snapshot of an unchanged workspace costs a directory walk. Only regular files, directories and
symlinks are kept (a FIFO or socket is not state a snapshot can hold); symlinks are never followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat

_CHUNK = 1 << 20


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_mode, a.st_size, a.st_mtime_ns) == (b.st_mode, b.st_size, b.st_mtime_ns)


def _copy_file(source: str, target: str, info: os.stat_result, uid: int | None) -> None:
    """Copy a regular file without following links or blocking on a file swapped for a FIFO."""
    fd_in = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd_in).st_mode):
            return
        fd_out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(fd_in, _CHUNK):
                os.write(fd_out, chunk)
            if uid is not None:
                os.fchown(fd_out, uid, uid)
            os.fchmod(fd_out, stat.S_IMODE(info.st_mode))
        finally:
            os.close(fd_out)
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    finally:
        os.close(fd_in)


def _remove(path: str) -> None:
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _sync(source: str, target: str, uid: int | None, link_from: str | None) -> None:
    """Make directory ``target`` hold what ``source`` holds (both exist and are directories).

    With ``link_from`` (a directory of unchanging copies), files identical to the one at the same
    place there become hard links to it instead of copies.
    """
    wanted = {}
    with os.scandir(source) as entries:
        for entry in entries:
            with contextlib.suppress(FileNotFoundError):
                wanted[entry.name] = entry.stat(follow_symlinks=False)
    with os.scandir(target) as entries:
        present = {e.name: e.stat(follow_symlinks=False) for e in entries}
    for name, info in present.items():
        want = wanted.get(name)
        if want is None or stat.S_IFMT(info.st_mode) != stat.S_IFMT(want.st_mode):
            keep = False
        elif stat.S_ISREG(want.st_mode):
            keep = _same(info, want)
        elif stat.S_ISLNK(want.st_mode):
            keep = os.readlink(os.path.join(target, name)) == os.readlink(
                os.path.join(source, name)
            )
        else:
            keep = stat.S_ISDIR(want.st_mode)
        if not keep:
            _remove(os.path.join(target, name))
    for name, info in wanted.items():
        src, dst = os.path.join(source, name), os.path.join(target, name)
        here = os.path.join(link_from, name) if link_from else None
        try:
            if stat.S_ISDIR(info.st_mode):
                if name not in present or not os.path.isdir(dst):
                    os.mkdir(dst, 0o700)
                _sync(src, dst, uid, here if here and os.path.isdir(here) else None)
                if uid is not None:
                    os.chown(dst, uid, uid)
                os.chmod(dst, stat.S_IMODE(info.st_mode))
            elif os.path.lexists(dst):
                continue  # an unchanged file (kept above)
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(src), dst)
                if uid is not None:
                    os.lchown(dst, uid, uid)
            elif stat.S_ISREG(info.st_mode):
                if here and os.path.lexists(here) and _same(os.lstat(here), info):
                    os.link(here, dst)
                else:
                    _copy_file(src, dst, info, uid)
        except FileNotFoundError:
            continue  # changed while we copied: the script is still writing


def save(
    root: str,
    names: list[str],
    store: str,
    snapshot_id: int,
    previous: int | None,
    budget: int | None = None,
) -> None:
    """Copy ``root/<name>`` for each of ``names`` into ``store/<snapshot_id>``.

    Raises ``OSError`` (``ENOSPC`` when the store is full, or would then hold more than
    ``budget`` bytes); a failed copy is removed."""
    target = os.path.join(store, str(snapshot_id))
    base = os.path.join(store, str(previous)) if previous is not None else None
    discard(store, snapshot_id)
    try:
        os.mkdir(target, 0o700)
        for name in names:
            os.mkdir(os.path.join(target, name), 0o700)
            link_from = os.path.join(base, name) if base else None
            if link_from and not os.path.isdir(link_from):
                link_from = None
            _sync(os.path.join(root, name), os.path.join(target, name), None, link_from)
        if budget is not None and _used(store) > budget:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError:
        discard(store, snapshot_id)
        raise


def restore(store: str, snapshot_id: int, root: str, names: list[str], uid: int | None) -> None:
    """Make ``root/<name>`` hold exactly what snapshot ``snapshot_id`` saved; files owned by
    ``uid`` (``None``: by us). Raises ``FileNotFoundError`` if the snapshot has no copy."""
    saved = os.path.join(store, str(snapshot_id))
    if not os.path.isdir(saved):
        raise FileNotFoundError(f"no copy of snapshot {snapshot_id}")
    for name in names:
        _sync(os.path.join(saved, name), os.path.join(root, name), uid, None)


def discard(store: str, snapshot_id: int) -> None:
    shutil.rmtree(os.path.join(store, str(snapshot_id)), ignore_errors=True)


def _used(store: str) -> int:
    """Bytes the store holds: its file system's use when it has its own (a tmpfs), else a walk."""
    if os.path.ismount(store):
        info = os.statvfs(store)
        return (info.f_blocks - info.f_bfree) * info.f_frsize
    return usage(store)


def usage(root: str) -> int:
    """Bytes held by the files below ``root`` (allocated blocks, links counted once)."""
    total, seen = 0, set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(dirpath, name))
                if (info.st_dev, info.st_ino) not in seen:
                    seen.add((info.st_dev, info.st_ino))
                    total += info.st_blocks * 512
    return total
