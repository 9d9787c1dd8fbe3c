# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, faults 2 and 3: a client that stops reading, and one that reads
but never acknowledges, while the guest animates.

Both are raw clients (spice_raw.py) linked on main and display.

- The stalled reader comes in two kinds. The silent one just stops
  reading, for 10 s (30 s with --long). The other stops reading for 20 s
  (60 s with --long) but keeps sending ACKs blindly (two a second, credit
  for 800 messages a second), so the ACK window does not hold the helper
  back and only its own pacing can. Meanwhile the helper's RSS must stay
  within RSS_GROWTH_KIB of where it was when the stall began and under
  RSS_MAX_KIB, and qemu's QMP must answer every query within 1 s. Then the
  client reads again: the flow resumes (a PING stamped after the resume
  arrives). It stalls once more and a normal spice-gtk client connects
  meanwhile.
- The non-acking reader reads everything but sends no ACK_SYNC and no ACK
  (it answers PINGs): the helper must stop at its ACK window (SET_ACK, 2 x
  400 messages, then the PING timer's one a second), with the same RSS and
  QMP checks for 10 s (30 s with --long).

The helper serves one client at a time and a new main link replaces the
old session (tests/integration/test_serve_hostile.py), so "a second client
at the same time" takes the session over: it must get updates and, with the
guest stopped, qemu's exact picture, and the misbehaving client's sockets
must be closed by the helper (EOF within CLOSE_TIMEOUT although it never
read), not left open.

Bounds. Measured on the 2-core test machine (qemu 7.2, virtio-gpu 1280x800,
busy guest, plain build, 4 runs and one --long run): the helper's RSS was
19-24 MiB when a stall began and grew by at most 1.2 MiB (blind ACKs, 20 s
and 60 s), 28 KiB (silent, 10 s and 30 s) and 3.1 MiB (never acking,
begun right after the link, so stream start-up is in it); the largest RSS
seen was 24.3 MiB; the stalled socket held 55-600 KiB unread; QMP answered
within 5 ms. RSS_GROWTH_KIB allows 16 MiB, four full 1280x800 xRGB frames;
RSS_MAX_KIB 64 MiB, 2.5 times the largest RSS seen. A helper that queued for a stalled client without pacing
would grow up to its 64 MiB per-connection send-queue cap (net/qs-conn.h)
before dropping the client, and fail both.
"""

import struct
import time

import pytest

from fault_support import (assert_helper_healthy, busy_guest, closed_lines, qmp_latency,
                           serving, RssSampler, updates, wait_closed_lines,
                           watch_then_exact)
from spice_raw import MSG_PING, Session

pytestmark = pytest.mark.timing

RSS_GROWTH_KIB = 16 * 1024
RSS_MAX_KIB = 64 * 1024
QMP_MAX_S = 1.0
CLOSE_TIMEOUT = 15.0
# The helper's display ACK window (helper/channels/qs-display-private.h).
ACK_WINDOW = 400


def stall_phase(q, h, raw, seconds, blind_ack):
    """`seconds` of misbehaviour: RSS sampled every 0.1 s, QMP timed every
    0.5 s. Returns (rss at start, max rss, max QMP latency)."""
    start_rss = h.rss_kib()
    worst_qmp = 0.0
    with RssSampler(h.proc.pid) as rss:
        end = time.monotonic() + seconds
        next_ack = time.monotonic()
        while time.monotonic() < end:
            assert h.proc.poll() is None, h.stderr()[-2000:]
            assert q.alive(), q.stderr_tail()
            worst_qmp = max(worst_qmp, qmp_latency(q))
            if blind_ack and time.monotonic() >= next_ack:
                raw.display.send_blind_ack()
                raw.display.send_blind_ack()
                next_ack += 1.0
            time.sleep(0.5)
    return start_rss, rss.max, worst_qmp


def check_bounds(start_rss, max_rss, worst_qmp, what):
    print(f"{what}: helper RSS {start_rss} KiB at start, max {max_rss} KiB "
          f"(+{max_rss - start_rss} KiB); worst QMP latency {worst_qmp * 1000:.0f} ms")
    assert max_rss - start_rss <= RSS_GROWTH_KIB, \
        f"{what}: helper RSS grew {(max_rss - start_rss) // 1024} MiB"
    assert max_rss <= RSS_MAX_KIB, f"{what}: helper RSS reached {max_rss // 1024} MiB"
    assert worst_qmp < QMP_MAX_S, f"{what}: a QMP query took {worst_qmp:.2f} s"


def takeover(test_client, port, q, h, tmp_path, raw):
    """A normal client connects while `raw` misbehaves: it gets updates and
    the exact picture, and the helper closes raw's channels."""
    closed_before = len(closed_lines(h))
    watch = watch_then_exact(test_client, port, q, tmp_path, seconds=3, name="normal")
    assert updates(watch) > 0, watch
    wait_closed_lines(h, closed_before + 1)
    t0 = time.monotonic()
    assert raw.closed_by_server(CLOSE_TIMEOUT), \
        f"the replaced client's sockets were not closed in {CLOSE_TIMEOUT}s " \
        f"(main eof {raw.main.eof.is_set()}, display eof {raw.display.eof.is_set()})"
    print(f"replaced client saw EOF on both channels {time.monotonic() - t0:.2f} s "
          "after the new client finished")
    assert_helper_healthy(h)
    assert q.alive()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("blind_ack", [True, False], ids=["blind-acks", "silent"])
def test_stalled_reader(qemu_factory, guest, helper_binary, test_client, tmp_path, long_run,
                        blind_ack):
    stall = (60 if long_run else 20) if blind_ack else (30 if long_run else 10)
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        raw = Session(port)
        try:
            assert raw.display.wait_messages(50, timeout=20), \
                f"only {raw.display.messages} display messages before the stall"
            assert raw.display.ack_generation is not None, "no SET_ACK on display"
            time.sleep(1.0)
            for ch in raw.channels():
                ch.reading.clear()
            start_rss, max_rss, worst_qmp = stall_phase(q, h, raw, stall, blind_ack)
            unread = raw.display.unread_bytes()
            what = f"stalled reader, {'blind ACKs' if blind_ack else 'silent'}, {stall} s"
            print(f"{what}: {unread} bytes unread in its socket")
            check_bounds(start_rss, max_rss, worst_qmp, what)
            # The helper did send into the stalled socket (it stops after
            # some 64 KiB in flight: no PONG comes back to its end-to-end
            # estimate, so it never even fills the socket buffers).
            assert unread > 0, "nothing sent to the stalled client"
            assert_helper_healthy(h)

            # It reads again: the stream resumes (a PING sent after now arrives).
            resumed_us = time.monotonic() * 1e6
            pings = []
            orig = raw.display._handle

            def spy(msg_type, body):
                if msg_type == MSG_PING and len(body) >= 12:
                    pings.append(struct.unpack_from("<IQ", body)[1])
                orig(msg_type, body)
            raw.display._handle = spy
            for ch in raw.channels():
                ch.reading.set()
            deadline = time.monotonic() + 10
            while not any(ts >= resumed_us for ts in pings):
                assert time.monotonic() < deadline, \
                    f"no fresh PING within 10 s of resuming ({len(pings)} old ones)"
                assert not raw.display.eof.is_set(), "display closed while stalled"
                time.sleep(0.05)
            n = raw.display.messages
            time.sleep(1.0)
            assert raw.display.messages > n, "the stream did not resume"

            # Stalled again, and a normal client connects meanwhile.
            for ch in raw.channels():
                ch.reading.clear()
            time.sleep(2.0)
            takeover(test_client, port, q, h, tmp_path, raw)
        finally:
            raw.close()


@pytest.mark.timeout(180)
def test_client_never_acks(qemu_factory, guest, helper_binary, test_client, tmp_path,
                           long_run):
    noack = 30 if long_run else 10
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        linked = time.monotonic()
        raw = Session(port, display_ack=False, display_pong=True)
        try:
            assert raw.display.wait_messages(20, timeout=20), \
                f"only {raw.display.messages} display messages"
            start_rss, max_rss, worst_qmp = stall_phase(q, h, raw, noack, blind_ack=False)
            got = raw.display.messages
            print(f"never-acking client: {got} display messages, {raw.display.bytes} "
                  f"bytes, {raw.display.pings} PINGs in {noack} s")
            check_bounds(start_rss, max_rss, worst_qmp, f"never-acking client ({noack} s)")
            # The ACK window held: SET_ACK and 2 windows, then only the
            # PING timer's probes, one a second, which bypass the window.
            allowed = 1 + 2 * ACK_WINDOW + int(time.monotonic() - linked) + 2
            assert got <= allowed, \
                f"{got} messages without an ACK (window {ACK_WINDOW}, allowed {allowed})"
            assert not raw.display.eof.is_set()
            takeover(test_client, port, q, h, tmp_path, raw)
        finally:
            raw.close()
