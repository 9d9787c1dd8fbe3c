# SPDX-License-Identifier: GPL-2.0-or-later
"""Several sessions: one client that stops reading, is killed or reads a
trickle holds no other back.

The busy guest is served with the default --max-sessions (4). A raw client
(spice_raw.py) links main and display, reads until the stream runs, then
stops reading: its socket fills and the helper's pacing for it stops. A
spice-gtk client connects beside it and watches the animated rectangle for
WATCH_S seconds (`watch --rect`).

The run happens once (shared_run) and is judged by two tests. The unmarked
one (also against the sanitizer build) asserts what must hold: the watching
client's session lasts its whole window and gets at least
MIN_UPDATES_PER_S updates a second (a floor for "frames keep arriving",
far below the 30 fps the guest animates at), no client holds qemu's
listener (the watchdog drops it as stalled or over its backlog at most
MAX_HELD_DROPS times: a held listener would be held again after each
re-registration, a thread starved of the CPU on a loaded host is dropped
once), and the helper stays healthy. The `timing` one (plain build only,
alone on the machine) asserts the figures: no listener drop of any kind, and the watcher's
rect_onset_us lists when activity in the rectangle started after
>= 500 ms without any, so a single onset means it never paused half a
second while the other client was stalled. Measured: plain build, quiet
host: 1 onset, 483 updates in 8 s (one run); sanitizer build beside the
integration run in a fresh-clone tools/check: 3 onsets, 297 updates, which
is why the pause is a figure and not a correctness check.

A drop because GDBus's reader itself falls behind qemu ("reads slower
than qemu writes", helper/display/qs-watchdog.h) is no client's doing: no
client path touches that thread. It depends on the reader getting the
CPU, and it happened to the throttled case below with the sanitizer build
beside the integration suite on two cores, in two fresh-clone runs of
2026-12-03 (once mid-run, once after the watcher had left), while its
watcher's updates held. So only the figures tests assert it never
happens.
"""

import re
import threading
import time

import pytest

from fault_support import (ACTIVITY, Client, assert_helper_healthy, assert_no_problems,
                           busy_guest, recorded, serving, slowdown, updates)
from harness.shared_run import shared_run
from spice_raw import Session

WATCH_S = 8
STALL_S = 2.0           # the raw client stalls this long before the other links
MIN_UPDATES_PER_S = 2
WATCH_ARGV = ["--settle", "0", "--seconds", WATCH_S, "--rect", ACTIVITY, "watch"]


def stalled_scenario(qemu_factory, guest, helper_binary, test_client, tmp_path):
    run = {"problems": [], "onsets": None, "drops": None}
    slow = slowdown(helper_binary)
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        raw = Session(port)
        try:
            assert raw.display.wait_messages(20, timeout=20 * slow), \
                f"only {raw.display.messages} display messages before the stall"
            for ch in raw.channels():
                ch.reading.clear()
            time.sleep(STALL_S)
            watch_beside(run, q, h, Client(test_client, port, WATCH_ARGV, tmp_path,
                                           name="other"))
        finally:
            raw.close()
    return run


def watch_beside(run, q, h, other):
    """Judges the watching client `other` once it ends, and the helper:
    problems into run["problems"], the watcher's activity onsets into
    run["onsets"], the watchdog's drops into run["drops"]."""
    rc = other.wait(timeout=other.timeout + 30)
    if rc is None:
        other.kill()
    with recorded(run["problems"], "the watching client"):
        assert rc == 0, f"{other.argv} exited {rc}: {other.stderr()[-1500:]}"
        watch = other.json_lines()[0]
        run["onsets"] = watch.get("rect_onset_us", [])
        print(f"other client: {updates(watch)} updates in {watch['seconds']} s, "
              f"activity onsets {run['onsets']}")
        assert updates(watch) >= MIN_UPDATES_PER_S * WATCH_S, watch
    with recorded(run["problems"], "the helper"):
        run["drops"] = listener_drops(h.stderr())
        assert_listener_held_by_none(run["drops"], h.stderr())
        assert_helper_healthy(h)
        assert q.alive()


def listener_drops(log):
    """The watchdog's verdicts on each listener it dropped, in order."""
    return re.findall(r"listener (.+?) \(\d+ bytes waiting\): dropping it and registering "
                      r"a new one", log)


# A listener that a client holds (its thread blocked on that client) would
# be held again as soon as it is registered anew, and dropped again after
# the watchdog's 300 ms, for as long as the client stalls: some 20 times in
# the 10 s window. A listener thread that is only starved of the CPU is dropped once:
# in a fresh-clone run of 2026-12-07 (sanitizer build beside the sanitizer
# integration run, as x264 started) one 'stalled' drop with 110 KB waiting,
# the watcher getting 407 updates in 8 s with one onset; none in the runs
# before. The figures tests, alone on the machine, allow no drop at all.
MAX_HELD_DROPS = 2


def assert_listener_held_by_none(drops, log):
    held = [v for v in drops if v != "reads slower than qemu writes"]
    assert len(held) <= MAX_HELD_DROPS, \
        f"listener dropped {len(held)} times as {held}: {log[-2000:]}"


def stalled_run(qemu_factory, guest, helper_binary, test_client, tmp_path):
    return shared_run(("stalled-beside",),
                      lambda: stalled_scenario(qemu_factory, guest, helper_binary, test_client,
                                               tmp_path))


@pytest.mark.timeout(150)
def test_stalled_client_holds_no_other(qemu_factory, guest, helper_binary, test_client,
                                       tmp_path):
    assert_no_problems(stalled_run(qemu_factory, guest, helper_binary, test_client, tmp_path))


def throttle(raw, stop, on_s=0.02, period_s=0.5):
    """Lets the raw client read 20 ms of every 500: a client on a link far
    slower than the stream, whose socket is full most of the time."""
    while not stop.wait(period_s - on_s):
        for ch in raw.channels():
            ch.reading.set()
        time.sleep(on_s)
        for ch in raw.channels():
            ch.reading.clear()


def beside_scenario(qemu_factory, guest, helper_binary, test_client, tmp_path, fault):
    """A spice-gtk viewer SIGKILLed mid-stream, or a raw one reading a
    trickle, beside a spice-gtk viewer watching the animation."""
    run = {"problems": [], "onsets": None, "drops": None}
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        victim = raw = None
        stop = threading.Event()
        try:
            if fault == "killed":
                victim = Client(test_client, port, ["--settle", "0", "--seconds", 60, "watch"],
                                tmp_path, name="victim", timeout=90)
            else:
                raw = Session(port)
                assert raw.display.wait_messages(20, timeout=20 * slowdown(helper_binary))
                threading.Thread(target=throttle, args=(raw, stop), daemon=True).start()
            deadline = time.monotonic() + 30
            while h.stderr().count("display: stream ") < 1:
                assert time.monotonic() < deadline, h.stderr()[-2000:]
                time.sleep(0.1)
            other = Client(test_client, port, WATCH_ARGV, tmp_path, name="other")
            if victim is not None:
                time.sleep(2)
                victim.kill()
            watch_beside(run, q, h, other)
        finally:
            stop.set()
            if raw is not None:
                raw.close()
            if victim is not None:
                victim.kill()
    return run


def beside_run(qemu_factory, guest, helper_binary, test_client, tmp_path, fault):
    return shared_run(("beside", fault),
                      lambda: beside_scenario(qemu_factory, guest, helper_binary, test_client,
                                              tmp_path, fault))


@pytest.mark.timeout(150)
@pytest.mark.parametrize("fault", ["killed", "throttled"])
def test_killed_or_throttled_client_holds_no_other(qemu_factory, guest, helper_binary,
                                                   test_client, tmp_path, fault):
    """The watcher gets at least MIN_UPDATES_PER_S updates a second for its
    whole window, no client holds qemu's listener, the helper stays
    healthy."""
    assert_no_problems(beside_run(qemu_factory, guest, helper_binary, test_client, tmp_path,
                                  fault))


@pytest.mark.timing
@pytest.mark.timeout(150)
@pytest.mark.parametrize("fault", ["killed", "throttled"])
def test_killed_or_throttled_client_holds_no_other_figures(qemu_factory, guest, helper_binary,
                                                           test_client, tmp_path, fault):
    """Alone on the machine, qemu's listener is never dropped at all."""
    run = beside_run(qemu_factory, guest, helper_binary, test_client, tmp_path, fault)
    assert run["drops"] == [], f"qemu's listener dropped: {run['drops']} ({run['problems']})"


@pytest.mark.timing
@pytest.mark.timeout(150)
def test_stalled_client_holds_no_other_figures(qemu_factory, guest, helper_binary, test_client,
                                               tmp_path):
    run = stalled_run(qemu_factory, guest, helper_binary, test_client, tmp_path)
    assert run["drops"] == [], f"qemu's listener dropped: {run['drops']} ({run['problems']})"
    assert run["onsets"] is not None, f"no watch to judge: {run['problems']}"
    assert len(run["onsets"]) == 1, \
        f"the other client's animation paused >= 500 ms: onsets {run['onsets']}"
