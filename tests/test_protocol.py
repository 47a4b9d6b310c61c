"""The wire format: plain data and numeric arrays only, size-capped, never pickle."""

from __future__ import annotations

import socket
import struct

import msgpack
import numpy as np
import pytest

from toolgym.envs.sandbox import protocol


def roundtrip(message, **kwargs):
    a, b = socket.socketpair()
    with a, b:
        protocol.send(a, message)
        return protocol.recv(b, **kwargs)[0]


def test_arrays_and_plain_data_roundtrip_exactly():
    vertices = np.arange(12, dtype=np.float64).reshape(4, 3) / 7
    message = {"vertices": vertices, "faces": np.array([[0, 1, 2]], np.int32), "name": "é", "n": 3}
    got = roundtrip(message)
    assert got["vertices"].dtype == np.float64 and np.array_equal(got["vertices"], vertices)
    assert got["faces"].dtype == np.int32 and got["faces"].tolist() == [[0, 1, 2]]
    assert got["name"] == "é" and got["n"] == 3


def test_large_array_survives_partial_reads():
    image = np.random.default_rng(0).integers(0, 255, (512, 512, 4), dtype=np.uint8)
    a, b = socket.socketpair()
    with a, b:
        import threading

        sender = threading.Thread(target=protocol.send, args=(a, {"image": image}))
        sender.start()
        got, _ = protocol.recv(b)
        sender.join()
    assert np.array_equal(got["image"], image)


def test_object_arrays_are_refused_on_both_sides():
    with pytest.raises(TypeError):
        protocol.encode({"x": np.array([object()], dtype=object)})
    header = msgpack.packb(["|O", [1]])
    payload = msgpack.packb({"x": msgpack.ExtType(1, header + b"\0" * 8)})
    with pytest.raises(protocol.ProtocolViolation, match="refused array"):
        protocol.decode(payload)


def test_lying_array_header_is_rejected():
    header = msgpack.packb(["<f8", [1000]])
    payload = msgpack.packb({"x": msgpack.ExtType(1, header + b"\0" * 8)})
    with pytest.raises(protocol.ProtocolViolation, match="does not match"):
        protocol.decode(payload)


def test_oversized_frame_is_refused_before_reading():
    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack(">I", 10**9))
        with pytest.raises(protocol.ProtocolViolation, match="exceeds the limit"):
            protocol.recv(b, max_bytes=1024)


def test_non_map_and_garbage_are_violations():
    with pytest.raises(protocol.ProtocolViolation):
        protocol.decode(msgpack.packb([1, 2]))
    with pytest.raises(protocol.ProtocolViolation):
        protocol.decode(b"\xc1\xc1\xc1")


def test_closed_peer_and_deadline():
    a, b = socket.socketpair()
    with b:
        with pytest.raises(protocol.ChannelTimeout):
            protocol.recv(b, deadline=0)
        a.close()
        with pytest.raises(protocol.ChannelClosed):
            protocol.recv(b)


def test_descriptors_travel_with_a_frame():
    a, b = socket.socketpair()
    extra_a, extra_b = socket.socketpair()
    with a, b, extra_a, extra_b:
        protocol.send(a, {"op": "x"}, [extra_b.fileno()])
        message, fds = protocol.recv(b)
        assert message == {"op": "x"} and len(fds) == 1
        received = socket.socket(fileno=fds[0])
        with received:
            received.sendall(b"hi")
            assert extra_a.recv(2) == b"hi"


def test_readable_takes_descriptors_past_selects_limit():
    """A server holding a few hundred sessions has sockets past descriptor 1,023, which
    ``select`` refuses ("filedescriptor out of range"): the sandbox client waits by ``poll``."""
    import os
    import resource
    import select
    import socket

    from toolgym.envs.sandbox.protocol import readable

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 1500:
        pytest.skip(f"descriptors limited to {hard} here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1501), hard))
    a, b = socket.socketpair()
    high = socket.socket(fileno=os.dup2(a.fileno(), 1500))
    try:
        with pytest.raises(ValueError, match="out of range"):
            select.select([high], [], [], 0)
        assert readable([high], 0.05) == []
        b.send(b"x")
        assert readable([high], 5.0) == [high]
    finally:
        for s in (a, b, high):
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
