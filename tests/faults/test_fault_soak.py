# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, point 5: the soak. The guest animates (busy) and one spice-gtk
client watches through an 80 ms / 10 Mbit link for SOAK_S (120 s here,
30 minutes with --long); the helper's RSS and open descriptors are sampled
every SAMPLE_S. After the warm-up (the first picture, the stream's
encoder, the pools filling) RSS must stay flat and the descriptors
constant; at the end the guest is stopped and the same session's picture
must equal qemu's screendump.

"Flat": over the samples after the warm-up, the spread (max - min) stays
within RSS_SPREAD_KIB and the mean of the last third is within
RSS_DRIFT_KIB of the mean of the first third. A helper that leaked one
small allocation per frame (30 a second) or per message would drift by
megabytes over the 30 minutes and, at its rate, show it within 120 s too.
The curve is printed and written to soak-rss.json in the directory of the
test that ran the soak.

The soak runs once (shared_run), on the plain build (a sanitizer build's
quarantine holds freed memory: its RSS is not the helper's), and is judged
by two tests: the `plain_run` one asserts what must hold (the client's
session lasted and saw updates all along, the descriptor count stayed
constant, the final picture is exact, the helper exited cleanly), the
`timing` one the RSS spread and drift. What the soak hunts, growth over
time, is the same on either build; the sanitizers watch busy streams over
shaped links in the stream tests, so a second 120 s soak on the sanitizer
build only cost CI time (143 s of a run, tests/README.md).

The link is the benchmark rig's (tests/bench/rig/qsbench/link.py): two
network namespaces, tbf at 10 Mbit on both veth ends, the delay relay
adding 40 ms each way."""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import pytest

from fault_support import (assert_helper_healthy, assert_no_problems, assert_same_picture,
                           busy_guest, recorded, serving, slowdown, stop_when_written)
from harness import MissingComponent
from harness.shared_run import shared_run

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench", "rig"))
from qsbench.link import RELAY_PORT, SERVER_ADDR, Link, LinkProfile, Relay  # noqa: E402

SAMPLE_S = 5.0
# Measured (plain build, qemu 7.2, busy guest), after the warm-up:
# - the 120 s run the suite makes, 4 runs: spread 20 KiB and drift -3 KiB
#   (docs/performance.md, "Soak"); then 552, 8 and 3600 KiB, drift +552,
#   +2 and -480 KiB (2026-12-06, at load 11-13 beside other sessions'
#   builds: in the first the watchdog replaced a listener that read slower
#   than qemu wrote, in the third RSS fell by 3.6 MiB half-way);
# - the one 30-minute run (--long): spread 1.7 MiB (one step at 650 s),
#   drift +1.2 MiB.
# The spread bound is 2.2x the largest measured, the drift bound 3.6x the
# largest drift of a 120 s run; a leak of 4 KiB a frame (30 frames a
# second) drifts about 6 MiB between the thirds of a 120 s run's 80 s
# after the warm-up.
RSS_SPREAD_KIB = 8 * 1024
RSS_DRIFT_KIB = 2 * 1024
# The lossless repaint of the stopped 640x480 area crosses 10 Mbit in
# well under a second; the rest is the 80 ms RTT and a loaded machine
# (times slowdown() against a sanitizer build).
EXACT_AFTER_STOP_MS = 5000
# "Updates all along": the 120 s run's client got 3645 repaints and 3639
# video frames (61 a second); a helper whose stream stopped for good would
# leave it far below this.
MIN_UPDATES_PER_S = 5


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Sampler:
    """RSS (KiB) and descriptor count of `pid` every SAMPLE_S in a thread."""

    def __init__(self, h):
        self.h = h
        self.samples = []            # (seconds since start, rss KiB, fds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="soak")
        self._t0 = time.monotonic()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append((round(time.monotonic() - self._t0, 1),
                                     self.h.rss_kib(), fd_count(self.h.proc.pid)))
            except OSError:
                return
            self._stop.wait(SAMPLE_S)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)
        return False


def soak_scenario(qemu_factory, guest, paths, helper_binary, test_client, tmp_path,
                  soak_s, warmup_s):
    """The soak's run: the RSS and descriptor curve, what the client saw,
    and the correctness problems, as data."""
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if not os.access(relay_bin, os.X_OK):
        raise MissingComponent(f"delay relay {relay_bin}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    exact_after_ms = int(EXACT_AFTER_STOP_MS * slowdown(helper_binary))
    run = {"soak_s": soak_s, "warmup_s": warmup_s, "problems": [], "watch": None}
    q = busy_guest(qemu_factory, guest)
    mid, final = tmp_path / "soak-mid.ppm", tmp_path / "soak-final.ppm"
    try:
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            with Link(LinkProfile(80, 10)) as net:
                relay = Relay(str(relay_bin), net, port)
                stopped = {}
                watcher = threading.Thread(target=stop_when_written, args=(q, mid, stopped),
                                           kwargs={"timeout": soak_s + 120}, daemon=True)
                try:
                    with Sampler(h) as sampler:
                        argv = net.client_argv([
                            test_client, "--host", SERVER_ADDR, "--port", RELAY_PORT,
                            "--timeout", soak_s + 90, "--settle", "0", "--seconds", soak_s,
                            "watch", "screenshot", mid, "sleep", exact_after_ms,
                            "screenshot", final])
                        watcher.start()
                        res = subprocess.run(argv, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True,
                                             stdin=subprocess.DEVNULL, timeout=soak_s + 120)
                    watcher.join(timeout=30)
                finally:
                    relay.close()
            with recorded(run["problems"], "the helper after the soak"):
                assert_helper_healthy(h)
            # Listener replacements open a new GMainContext (an eventfd)
            # each: printed, to tell a descriptor change's cause.
            run["watchdog_lines"] = [line for line in h.stderr().splitlines()
                                     if "watchdog" in line or "registering a new" in line]
            print(f"soak: helper watchdog lines: {len(run['watchdog_lines'])} "
                  f"{run['watchdog_lines'][:3]}")
            run["samples"] = sampler.samples
            curve = [{"s": s, "rss_kib": r, "fds": f} for s, r, f in sampler.samples]
            (tmp_path / "soak-rss.json").write_text(json.dumps(curve))
            print("soak curve (s, RSS KiB, fds): " +
                  " ".join(f"{s:g}:{r}:{f}" for s, r, f in sampler.samples))
            with recorded(run["problems"], "the soak's session"):
                assert res.returncode == 0, \
                    f"{argv} exited {res.returncode}: {res.stderr[-1500:]}"
                run["watch"] = json.loads(next(line for line in res.stdout.splitlines()
                                               if line.startswith('{"seconds"')))
                print(f"soak {soak_s} s: {json.dumps(run['watch'])}")
                assert "at" in stopped, "the mid-soak picture never appeared"
                assert_same_picture(final, q)
    finally:
        q.close()
    return run


def soak_run(qemu_factory, guest, paths, helper_binary, test_client, tmp_path, long_run):
    soak_s = 1800 if long_run else 120
    warmup_s = 300 if long_run else 40
    return shared_run(("soak", long_run),
                      lambda: soak_scenario(qemu_factory, guest, paths, helper_binary,
                                            test_client, tmp_path, soak_s, warmup_s))


def after_warmup(run):
    """The samples from the end of the warm-up to the end of the watch (the
    session winds down after it: the final pictures, the client's exit)."""
    after = [(s, r, f) for s, r, f in run["samples"]
             if run["warmup_s"] <= s <= run["soak_s"]]
    assert len(after) >= 6, f"only {len(after)} samples after the warm-up"
    return after


@pytest.mark.plain_run
@pytest.mark.timeout(2400)
def test_soak_busy_10mbit(qemu_factory, guest, paths, helper_binary, test_client, tmp_path,
                          long_run):
    run = soak_run(qemu_factory, guest, paths, helper_binary, test_client, tmp_path, long_run)
    assert_no_problems(run)
    watch, soak_s = run["watch"], run["soak_s"]
    assert watch["invalidates"] + watch["stream_frames"] > soak_s * MIN_UPDATES_PER_S, \
        f"the client saw too few updates in {soak_s} s: {watch}"
    fds = [f for _, _, f in after_warmup(run)]
    print(f"soak: descriptors after {run['warmup_s']} s {sorted(set(fds))}")
    # Constant but for one: a listener replacement in progress (the
    # watchdog replaced a sanitizer build's slow listener 20-27 times in
    # 120 s) holds its successor's socket beside its own for a moment, seen
    # as 13 and 14 in one run. A descriptor kept per replacement (the
    # asynchronous close that once kept each retired listener's context)
    # grew 10 -> 39 in the same time.
    assert max(fds) - min(fds) <= 1, \
        f"descriptor count changed after the warm-up: {sorted(set(fds))}"


@pytest.mark.timing
@pytest.mark.timeout(2400)
def test_soak_busy_10mbit_rss(qemu_factory, guest, paths, helper_binary, test_client,
                              tmp_path, long_run):
    run = soak_run(qemu_factory, guest, paths, helper_binary, test_client, tmp_path, long_run)
    rss = [r for _, r, _ in after_warmup(run)]
    third = max(1, len(rss) // 3)
    first, last = statistics.mean(rss[:third]), statistics.mean(rss[-third:])
    print(f"soak: after {run['warmup_s']} s RSS {min(rss)}-{max(rss)} KiB (spread "
          f"{max(rss) - min(rss)}), first third mean {first:.0f}, last third {last:.0f} "
          f"(drift {last - first:+.0f}); peak before the warm-up ended "
          f"{max(r for _, r, _ in run['samples'])} KiB")
    assert max(rss) - min(rss) <= RSS_SPREAD_KIB, \
        f"RSS spread {max(rss) - min(rss)} KiB after the warm-up"
    assert last - first <= RSS_DRIFT_KIB, f"RSS drifted by {last - first:.0f} KiB"
