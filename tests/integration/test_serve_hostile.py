# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: hostile link traffic does not disturb an active session of OUR
helper, and a new client still gets in afterwards.

While qs-test-client measures key latency (keys in, key-box repaints out),
plain Python sockets send garbage link bytes, a truncated link header, a
header with an oversize size field, and hold 200 half-open connections."""

import json
import os
import socket
import struct
import subprocess
import time

import pytest

from serve_support import READY_TIMEOUT, run_client, serving

SAMPLES = 40


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def closed_by_server(s, timeout):
    """True if the server closes (EOF or reset) within timeout; what it sent
    before (e.g. a link error reply) is ignored."""
    s.settimeout(0.5)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not s.recv(4096):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def link_header(size, major=2, minor=2):
    return b"REDQ" + struct.pack("<III", major, minor, size)


@pytest.mark.timeout(180)
def test_hostile_links_do_not_disturb_session(qemu_factory, guest, helper_binary,
                                             test_client, tmp_path):
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        out_path = tmp_path / "keylat.out"
        err_path = tmp_path / "keylat.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            keylat = subprocess.Popen(
                [str(test_client), "--port", str(port), "--timeout", "60", "keylat",
                 "--rect", ready["keybox"], "--count", str(SAMPLES), "--interval", "500"],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        socks = []
        try:
            # the session is up once the first sample is out
            deadline = time.monotonic() + 45
            while b'"i":0' not in out_path.read_bytes():
                assert keylat.poll() is None, (keylat.returncode, err_path.read_text())
                assert time.monotonic() < deadline, "keylat never produced a sample"
                time.sleep(0.1)

            # 1. garbage instead of a link header: closed by the server
            s = connect(port)
            socks.append(s)
            s.sendall(os.urandom(4096))
            assert closed_by_server(s, 15), "garbage link not closed"

            # 2. oversize size field: closed at once, nothing allocated for it
            s = connect(port)
            socks.append(s)
            s.sendall(link_header(0xFFFFFFFF))
            assert closed_by_server(s, 15), "oversize link size not closed"
            s = connect(port)
            socks.append(s)
            s.sendall(link_header(0x7FFFFFF0) + b"\0" * 64)
            assert closed_by_server(s, 15), "oversize link size (2) not closed"

            # 3. a truncated header, left hanging (the link timeout ends it)
            trunc = connect(port)
            socks.append(trunc)
            trunc.sendall(b"REDQ\x02\x00")

            # 4. 200 half-open connections, kept open while the session runs
            half = []
            for i in range(200):
                try:
                    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    socks.append(c)
                    c.settimeout(5)
                    c.connect(("127.0.0.1", port))
                    if i % 2:
                        c.sendall(link_header(64)[:10])
                    half.append(c)
                except OSError:
                    # the server may already be dropping the oldest ones
                    pass
            assert len(half) >= 100, f"only {len(half)} half-open connections made"
            # all of it happened while the measured session was running
            assert keylat.poll() is None, "keylat finished before the attack ended"

            try:
                rc = keylat.wait(timeout=90)
            except subprocess.TimeoutExpired:
                pytest.fail("keylat did not finish")
            out = out_path.read_text()
            assert rc == 0, (rc, err_path.read_text()[-1500:], out, h.stderr()[-2000:])
            summary = json.loads(out.strip().splitlines()[-1])
            assert summary.get("summary") and summary["count"] == SAMPLES, summary
            assert summary["ok"] == SAMPLES, f"session disturbed: {summary}"

            # a new legitimate client gets in while the half-open ones are
            # still open
            res = run_client(test_client, "--port", port, "info", timeout=30)
            assert '"display"' in res.stdout
        finally:
            for s in socks:
                s.close()
            if keylat.poll() is None:
                keylat.kill()
                keylat.wait(timeout=10)

        # and afterwards, with the hostile sockets gone
        res = run_client(test_client, "--port", port, "screenshot", tmp_path / "after.ppm",
                         timeout=30)
        assert (tmp_path / "after.ppm").stat().st_size > 0
        assert h.proc.poll() is None, h.stderr()[-2000:]
        # under -Db_sanitize=address,undefined: no report either
        log = h.stderr()
        assert "Sanitizer" not in log and "runtime error" not in log, log[-3000:]
