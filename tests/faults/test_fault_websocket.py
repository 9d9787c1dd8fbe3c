# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile WebSocket clients on the SPICE port.

Each kind connects to the helper's plain port (which answers WebSocket
upgrades itself) and misbehaves once: an upgrade request over the 8 KiB
header bound; after a good upgrade, a frame announcing more than the 16 MiB
frame bound, an unmasked frame, a frame with an unknown opcode, and a frame
cut off by the client closing its socket. Each must be closed by the helper
(EOF within CLOSE_S) with a log line naming what was wrong. Then
HALF_OPEN connections send half an upgrade request and stay: the
unauthenticated-connection bound drops the oldest. Meanwhile, and after,
a spice-gtk client on the same port gets qemu's exact picture, and the
helper stays healthy.
"""

import base64
import os
import socket
import struct
import time

from fault_support import assert_helper_healthy, serving, slowdown
from harness.qemu import parse_ppm
from serve_support import READY_TIMEOUT, run_client

CLOSE_S = 10.0
HALF_OPEN = 200
KEY = base64.b64encode(os.urandom(16)).decode()
UPGRADE = (f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
           f"Sec-WebSocket-Protocol: binary\r\n\r\n").encode()


def frame_header(b0, length, masked=True):
    b1 = 0x80 if masked else 0
    if length < 126:
        head = bytes([b0, b1 | length])
    elif length < 65536:
        head = bytes([b0, b1 | 126]) + struct.pack(">H", length)
    else:
        head = bytes([b0, b1 | 127]) + struct.pack(">Q", length)
    return head + (b"\x01\x02\x03\x04" if masked else b"")


def upgraded(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=CLOSE_S)
    s.sendall(UPGRADE)
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(4096)
        assert chunk, f"no upgrade reply: {reply!r}"
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 101 "), reply
    return s


def closed_by_server(s, timeout):
    """EOF (or a reset) from the helper within `timeout`, reading everything."""
    s.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    return False


def test_hostile_websocket(qemu_factory, guest, helper_binary, test_client, tmp_path):
    slow = slowdown(helper_binary)
    q = qemu_factory(vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        kinds = []
        s = socket.create_connection(("127.0.0.1", port), timeout=CLOSE_S)
        s.sendall(b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n")
        kinds.append(("oversize header", s, "request over 8192 bytes"))
        s = upgraded(port)
        s.sendall(frame_header(0x82, 17 * 1024 * 1024))
        kinds.append(("oversize frame", s, "over the 16777216 byte limit"))
        s = upgraded(port)
        s.sendall(frame_header(0x82, 4, masked=False) + b"REDQ")
        kinds.append(("unmasked frame", s, "unmasked WebSocket frame"))
        s = upgraded(port)
        s.sendall(frame_header(0x83, 4) + b"abcd")
        kinds.append(("bad opcode", s, "opcode 0x3"))
        s = upgraded(port)
        s.sendall(frame_header(0x82, 100)[:4])
        s.shutdown(socket.SHUT_WR)
        kinds.append(("truncated frame", s, "ended inside a frame"))
        for what, s, line in kinds:
            assert closed_by_server(s, CLOSE_S * slow), f"{what}: not closed by the helper"
            s.close()
        log = h.stderr()
        for what, _, line in kinds:
            assert line in log, f"{what}: no log line with {line!r}: {log[-3000:]}"

        half = []
        try:
            for _ in range(HALF_OPEN):
                s = socket.create_connection(("127.0.0.1", port), timeout=CLOSE_S)
                s.sendall(UPGRADE[:40])
                half.append(s)
            q.stop()
            w, hgt, ref = q.screendump()
            shot = tmp_path / "after.ppm"
            run_client(test_client, "--port", port, "--settle", "500", "screenshot", shot,
                       timeout=60)
            assert parse_ppm(shot.read_bytes())[2] == ref
        finally:
            for s in half:
                s.close()
        assert_helper_healthy(h)
        assert q.alive()
