# SPDX-License-Identifier: GPL-2.0-or-later
"""The lag watchdog: a listener thread stalled for 10 s must not let qemu
queue frames without bound. qemu 7.2 with virtio-gpu and whole-frame flushes
sends 1280x800 frames (~4 MB each, ~120 MB/s) inside the D-Bus messages.
With the watchdog qemu's RSS, and the helper's, each stay within 64 MiB of
where they were and the helper's copy is exact afterwards; with it disabled
the growth is plainly visible (this is what makes the first test able to
fail). Where the queue builds up, in qemu or in the helper (GDBus reads the
socket as fast as it can, the stalled thread just stops handling), depends on
scheduling, so the second test looks at both together."""

import os
import time

import pytest

from harness.shared_run import shared_run
from test_display_support import Helper, assert_exact, display_helper  # noqa: F401

STALL = 10
# Measured: see the module's docstring; 64 MiB is 16 of the ~4 MB frames.
# A figure (timing). Measured 2026-12-07, 3 runs a build, the 2-core machine
# loaded by four other engineers' builds and tests: build, qemu grew 32-76
# MiB (32780, 49192, 78296 KiB: the bound inside the spread once), the
# helper 8-39 MiB; build-san, qemu 344-475 MiB (two runs; the third had no
# frames in 15 s), the helper 21-24 MiB: the sanitizer build is not held
# to it.
LIMIT_KIB = 64 * 1024


def stalled_growth(q, h, watchdog):
    h.wait_frames(10)
    if not watchdog:
        h.ctl("watchdog off")
    q0, h0 = q.rss_kib(), h.rss_kib()
    qmax, hmax = q0, h0
    h.ctl(f"stall {STALL}")
    end = time.monotonic() + STALL + 1
    while time.monotonic() < end:
        qmax, hmax = max(qmax, q.rss_kib()), max(hmax, h.rss_kib())
        time.sleep(0.1)
    return qmax - q0, hmax - h0


def exact_after_stop(h, q):
    """None when the helper's copy equals qemu's picture once the guest
    stopped, else what differed."""
    q.stop()
    h.wait_quiet()
    try:
        assert_exact(h, q)
    except AssertionError as e:
        return str(e)[:1500]
    return None


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_count_settled(pid, bound, timeout=3.0):
    """The descriptor count once it is at most `bound`, or the last count
    after `timeout`: the test control connection just used (and a listener's
    connection being closed) can still be open for a moment when counted, a
    leaked one stays."""
    deadline = time.monotonic() + timeout
    while True:
        n = fd_count(pid)
        if n <= bound or time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def stall_run(q, display_helper):
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames(10)
        fds_before = fd_count(h.proc.pid)
        qgrow, hgrow = stalled_growth(q, h, watchdog=True)
        stats = h.stats()
        # The new listener got a fresh picture and follows the guest again.
        inexact = exact_after_stop(h, q)
        return {"qgrow": qgrow, "hgrow": hgrow, "stats": stats, "inexact": inexact,
                "fds": (fds_before, fd_count_settled(h.proc.pid, fds_before)),
                "alive": h.proc.poll() is None, "stderr": h.stderr()}


@pytest.fixture
def stalled(qemu_factory, guest, display_helper):
    return shared_run("watchdog-stall", lambda: stall_run(
        qemu_factory(flavour="host", vga="virtio", mode="busy", flush="full"),
        display_helper))


def test_watchdog_replaces_stalled_listener(stalled):
    """Correctness: the stalled listener is dropped, a new one registered,
    and the helper's copy is exact afterwards."""
    assert stalled["stats"]["watchdog_resets"] >= 1, stalled["stats"]
    assert stalled["alive"], stalled["stderr"][-2000:]
    assert "dropping it and registering a new one" in stalled["stderr"]
    assert stalled["inexact"] is None, stalled["inexact"]
    # The retired listener left nothing open: its connection's close once
    # completed on a context nobody ran any more, which kept the context
    # (an eventfd) and the connection alive for each replacement.
    # (One fewer was seen after: a descriptor in use when counted first.)
    before, after = stalled["fds"]
    assert after <= before, f"{after - before} descriptors more after " \
                            f"{stalled['stats']['watchdog_resets']} listener replacement(s)"


@pytest.mark.timing
def test_watchdog_bounds_qemu(stalled):
    qgrow, hgrow = stalled["qgrow"], stalled["hgrow"]
    print(f"watchdog on, {STALL} s stall: qemu RSS grew {qgrow} KiB, the helper's {hgrow} KiB")
    assert qgrow <= LIMIT_KIB, f"qemu RSS grew {qgrow // 1024} MiB (helper " \
                               f"{hgrow // 1024} MiB) with the watchdog on"
    assert hgrow <= LIMIT_KIB, f"helper RSS grew {hgrow // 1024} MiB (qemu " \
                               f"{qgrow // 1024} MiB) with the watchdog on"


@pytest.mark.timing
def test_no_watchdog_growth_visible(qemu_factory, guest, display_helper):
    """The control for the figure above: without the watchdog the growth is
    plainly visible, so the bounded-growth figure could fail."""
    q = qemu_factory(flavour="host", vga="virtio", mode="busy", flush="full")
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        qgrow, hgrow = stalled_growth(q, h, watchdog=False)
        assert h.stats()["watchdog_resets"] == 0
        assert qgrow + hgrow > 4 * LIMIT_KIB, \
            f"qemu RSS grew only {qgrow // 1024} MiB and the helper's " \
            f"{hgrow // 1024} MiB without the watchdog: the bounded-growth test " \
            "above could not fail"


def wake_run(q, display_helper):
    """While qemu sends nothing the watchdog sleeps (its next check is at the
    next message's arrival, or 5 s later): a listener that stalls while the
    guest is idle must still be dropped within the stall rule's 300 ms plus
    a check or two once qemu sends, as with the 100 ms polling, not after
    the 5 s idle period."""
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames(1)
        h.wait_quiet()
        time.sleep(1.5)                 # the watchdog went quiet
        h.ctl("stall 3")
        time.sleep(0.2)
        t0 = time.monotonic()
        for key in "asdf":              # each press redraws the key box
            q.send_key(key)
        while h.stats()["watchdog_resets"] == 0 and time.monotonic() - t0 < 5:
            time.sleep(0.02)
        took = time.monotonic() - t0
        resets = h.stats()["watchdog_resets"]
        return {"took": took, "resets": resets, "inexact": exact_after_stop(h, q),
                "stderr": h.stderr()[-1500:]}


@pytest.fixture
def woken(qemu_factory, guest, display_helper):
    return shared_run("watchdog-wake", lambda: wake_run(
        qemu_factory(flavour="host", vga="virtio", mode="idle"), display_helper))


def test_watchdog_wakes_on_arrival(woken):
    assert woken["resets"] >= 1, f"stalled listener not dropped in 5 s: {woken['stderr']}"
    assert woken["inexact"] is None, woken["inexact"]


@pytest.mark.timing
def test_watchdog_wakes_on_arrival_figure(woken):
    assert woken["resets"] >= 1, "no figure: the listener was never dropped"
    print(f"stalled listener dropped {woken['took']:.3f} s after qemu's first message")
    # Measured 2026-12-07, loaded machine: 0.33-0.51 s on build (3 runs),
    # 0.32-0.34 s on build-san (2 runs).
    assert woken["took"] < 0.9, f"stalled listener dropped only after {woken['took']:.2f} s"


def test_watchdog_drops_slow_reader(qemu_factory, guest, display_helper):
    """GDBus's reader, not the listener thread, falls behind: it sleeps
    100 ms after each of qemu's messages (test control), so qemu's
    whole-frame flushes, ~30 a second, wait in the socket and in qemu. The
    listener still makes progress, so only the rule that the socket must
    empty now and then can see it: the watchdog drops the listener as one
    that reads slower than qemu writes, and the new one (not slowed)
    leaves the helper's copy exact."""
    q = qemu_factory(flavour="host", vga="virtio", mode="busy", flush="full")
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames(10)
        h.ctl("slow-reader 100 5")
        deadline = time.monotonic() + 8
        while h.stats()["watchdog_resets"] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        log = h.stderr()
        assert "listener reads slower than qemu writes" in log, log[-2000:]
        assert h.proc.poll() is None, log[-2000:]
        inexact = exact_after_stop(h, q)
        assert inexact is None, inexact
