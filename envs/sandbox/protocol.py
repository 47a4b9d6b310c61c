"""The sandbox wire format: length-prefixed msgpack frames over Unix stream sockets.

Nothing here ever unpickles. A frame is a 4-byte big-endian length followed by a msgpack map. NumPy
arrays travel as a msgpack extension holding ``[dtype, shape]`` and the raw buffer; only plain
numeric dtypes are accepted, so bytes from a session can never become code or objects. File
descriptors (new channels) ride along with a frame as ``SCM_RIGHTS`` ancillary data.
"""

from __future__ import annotations

import array
import contextlib
import math
import os
import resource
import select
import socket
import struct
import time
from typing import Any

import msgpack
import numpy as np

_HEADER = struct.Struct(">I")
_NDARRAY_EXT = 1
_ALLOWED_KINDS = frozenset("biuf")  # bool, signed, unsigned, float: never object or void
MAX_FDS = 2


class ChannelError(Exception):
    """Base for channel failures."""


class ChannelClosed(ChannelError):
    """The peer closed the channel or died."""


class ChannelTimeout(ChannelError):
    """No complete frame arrived before the deadline."""


class ProtocolViolation(ChannelError):
    """The peer sent bytes that are not a valid frame (oversized, malformed, bad array)."""


class DescriptorsLost(ChannelError):
    """File descriptors sent with a frame could not be received (this process has no room).

    The frame itself was read (the channel stays in step); it is in :attr:`message`."""

    def __init__(self, text: str, message: dict[str, Any]) -> None:
        super().__init__(text)
        self.message = message


def descriptor_shortage() -> str | None:
    """A sentence naming the limit if this process is (nearly) out of file descriptors."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:  # listing needs a descriptor too
        used = soft
    if soft != resource.RLIM_INFINITY and used >= soft - MAX_FDS - 2:
        return f"too many open files: {used} of {soft} in use (RLIMIT_NOFILE)"
    return None


def _default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in _ALLOWED_KINDS:
            raise TypeError(f"cannot send arrays of dtype {obj.dtype}")
        array_ = np.ascontiguousarray(obj)
        header = msgpack.packb([array_.dtype.str, list(array_.shape)])
        return msgpack.ExtType(_NDARRAY_EXT, header + array_.tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    raise TypeError(f"cannot send object of type {type(obj).__name__}")


def _ext_hook(code: int, data: bytes) -> Any:
    if code != _NDARRAY_EXT:
        raise ProtocolViolation(f"unknown msgpack extension {code}")
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(data))
    unpacker.feed(data)
    try:
        dtype_str, shape = unpacker.unpack()
    except Exception as exc:  # malformed header from an untrusted peer
        raise ProtocolViolation(f"bad array header: {exc}") from exc
    offset = unpacker.tell()
    try:
        dtype = np.dtype(dtype_str)
    except TypeError as exc:
        raise ProtocolViolation(f"bad array dtype {dtype_str!r}") from exc
    if dtype.kind not in _ALLOWED_KINDS or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ProtocolViolation(f"refused array of dtype {dtype_str!r} and shape {shape!r}")
    if math.prod(shape) * dtype.itemsize != len(data) - offset:
        raise ProtocolViolation("array buffer size does not match its shape")
    return np.frombuffer(data, dtype=dtype, offset=offset).reshape(shape).copy()


def pack(message: dict[str, Any]) -> bytes:
    """Serialise one message to a payload (no header): what :func:`decode` reads back."""
    return msgpack.packb(message, default=_default, use_bin_type=True)


def encode(message: dict[str, Any]) -> bytes:
    """Serialise one message to a frame (header included)."""
    payload = pack(message)
    return _HEADER.pack(len(payload)) + payload


def decode(payload: bytes) -> dict[str, Any]:
    """Parse one frame's payload; raises :class:`ProtocolViolation` on anything unexpected."""
    try:
        message = msgpack.unpackb(payload, raw=False, ext_hook=_ext_hook, strict_map_key=True)
    except ProtocolViolation:
        raise
    except Exception as exc:
        raise ProtocolViolation(f"malformed message: {exc}") from exc
    if not isinstance(message, dict):
        raise ProtocolViolation(f"expected a map, got {type(message).__name__}")
    return message


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    """Send one message, with optional file descriptors; blocks until written."""
    send_frame(sock, encode(message), fds)


def send_frame(sock: socket.socket, frame: bytes, fds: list[int] | None = None) -> None:
    """Send a frame made by :func:`encode`."""
    if fds:
        sent = socket.send_fds(sock, [frame[:4096]], fds)
        sock.sendall(frame[sent:])
    else:
        sock.sendall(frame)


def readable(sources: list[Any], timeout_s: float | None) -> list[Any]:
    """Those of ``sources`` (sockets, or anything with a ``fileno()``) with something to read,
    or closed, within ``timeout_s`` seconds (``None``: no limit). By ``poll``: ``select`` refuses
    a descriptor past 1,023, which a server holding a few hundred sessions' sockets reaches."""
    poller = select.poll()
    by_fd = {source.fileno(): source for source in sources}
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)
    wait_ms = None if timeout_s is None else max(0, math.ceil(timeout_s * 1000))
    return [by_fd[fd] for fd, _ in poller.poll(wait_ms)]


def _wait_readable(sock: socket.socket, deadline: float | None) -> None:
    if deadline is None:
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not readable([sock], remaining):
        raise ChannelTimeout("no reply before the deadline")


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            socket.close(fd)


def recv(
    sock: socket.socket, *, deadline: float | None = None, max_bytes: int = 1 << 30
) -> tuple[dict[str, Any], list[int]]:
    """Receive one message and any descriptors sent with it.

    Args:
        deadline: ``time.monotonic()`` value after which :class:`ChannelTimeout` is raised; ``None``
            waits forever.
        max_bytes: frames larger than this raise :class:`ProtocolViolation` before being read.
    """
    header = bytearray()
    fds: list[int] = []
    truncated = False
    fd_space = socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)
    while len(header) < _HEADER.size:
        _wait_readable(sock, deadline)
        try:
            data, ancdata, flags, _addr = sock.recvmsg(_HEADER.size - len(header), fd_space)
        except ConnectionResetError:  # the peer died with our data unread
            data, ancdata, flags = b"", [], 0
        for level, kind, cmsg in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                received = array.array("i")
                received.frombytes(cmsg[: len(cmsg) - (len(cmsg) % received.itemsize)])
                fds.extend(received)
        if not data:
            _close_fds(fds)
            raise ChannelClosed("peer closed the channel")
        truncated = truncated or bool(flags & socket.MSG_CTRUNC)
        header += data
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        _close_fds(fds)
        raise ProtocolViolation(f"message of {length} bytes exceeds the limit of {max_bytes}")
    payload = bytearray(length)
    view = memoryview(payload)
    got = 0
    while got < length:
        _wait_readable(sock, deadline)
        try:
            n = sock.recv_into(view[got:], length - got)
        except ConnectionResetError:
            n = 0
        if n == 0:
            _close_fds(fds)
            raise ChannelClosed("peer closed the channel mid-message")
        got += n
    try:
        message = decode(bytes(payload))
    except ProtocolViolation:
        _close_fds(fds)
        raise
    if truncated:
        _close_fds(fds)
        shortage = descriptor_shortage()
        if shortage:
            raise DescriptorsLost(f"a channel sent by the session was lost: {shortage}", message)
        raise ProtocolViolation(f"more than {MAX_FDS} file descriptors sent with a frame")
    return message, fds
