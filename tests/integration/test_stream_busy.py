# SPDX-License-Identifier: GPL-2.0-or-later
"""Video streams from the real helper on the unshaped link.

The guest animates its 640x480 activity rectangle (busy: smooth gradient +
noise; heavy: full noise; typing: an editor receiving 10-20 characters a
frame) at 30 fps. One run per mode (shared_run) is judged twice:
- correctness (test_stream_unshaped): the helper streams the area (a few
  streams a session, not one per look), spice-gtk decodes frames, the
  background outside the rectangle stays exact while it moves, and once the
  guest stops the client's picture settles on qemu's screendump exactly;
- figures (test_stream_unshaped_figures, `timing`): the frame rate spice-gtk
  decoded, its late-frame count, and the picture exact already 1 s after
  the stop.

Needs the helper to serve SPICE (helper/main.c: --listen, --disable-ticketing)."""

import json
import re
import subprocess
import threading
import time

import pytest

from harness.qemu import free_tcp_port, parse_ppm
from harness.shared_run import shared_run
from test_display_support import Helper

ACTIVITY = (624, 160, 640, 480)
READY_TIMEOUT = 45.0
# After the picture 1 s after the stop (the figure), the client waits this
# long more for the settled one (correctness): room for a sanitizer build.
SETTLE_MS = 3000


def run_client(binary, port, *args, timeout=30):
    argv = [str(binary), "--port", str(port), "--timeout", str(timeout), *map(str, args)]
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, timeout=timeout + 30)
    if res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stderr.strip()[-1500:]}")
    return res


def differing(a, b, w, skip=None):
    """Pixels (RGB triples) that differ, outside `skip` = (x, y, w, h)."""
    bad = 0
    for i in range(0, len(a), 3):
        if a[i:i + 3] == b[i:i + 3]:
            continue
        if skip:
            x, y = (i // 3) % w, (i // 3) // w
            if skip[0] <= x < skip[0] + skip[2] and skip[1] <= y < skip[1] + skip[3]:
                continue
        bad += 1
    return bad


def stop_when_written(q, path, stopped, timeout=60.0):
    """QMP stop as soon as the client has written `path` (polled every 20 ms)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            seen = path.stat().st_mtime
        except FileNotFoundError:
            time.sleep(0.02)
            continue
        q.stop()
        stopped["at"] = time.monotonic()
        stopped["after_write_s"] = time.time() - seen
        return


def stream_run(q, helper_binary, test_client, tmp_path, mode):
    """The whole run: returns what both tests judge (nothing left running)."""
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    run = {"ready": ready}
    port = free_tcp_port()
    with Helper.p2p(helper_binary, q, ["--listen", f"127.0.0.1:{port}",
                                      "--disable-ticketing"], control=False) as h:
        h.wait_listening(port)
        # One session: streams and frames as spice-gtk logs them, a
        # mid-animation picture, the picture 1000 ms after the stop (the
        # guest is stopped as soon as the mid picture is written) and the
        # settled one SETTLE_MS later.
        mid, fin, settled = (tmp_path / "mid.ppm", tmp_path / "final.ppm",
                             tmp_path / "settled.ppm")
        stopped = {}
        watcher = threading.Thread(target=stop_when_written, args=(q, mid, stopped),
                                   daemon=True)
        watcher.start()
        try:
            # typing streams only while the editor scrolls, and a slow
            # (sanitizer, loaded) guest may not scroll in 3 s: it gets 6.
            res = run_client(test_client, port, "--settle", "0", "--seconds",
                             "6" if mode == "typing" else "3",
                             "watch", "screenshot", mid, "sleep", "1000",
                             "screenshot", fin, "sleep", SETTLE_MS, "screenshot", settled)
        finally:
            watcher.join(timeout=60)
        run["stopped"] = stopped
        run["watch"] = json.loads(res.stdout.splitlines()[0])
        h.close()
        run["helper_log"] = h.stderr()[-4000:]
        summary = re.search(r"display session: .*streams (\d+), frames (\d+) .*"
                            r"client drops (\d+)", h.stderr())
        run["summary"] = summary.group(0) if summary else None
        run["streams"], run["frames"], run["drops"] = \
            map(int, summary.groups()) if summary else (None, None, None)
    if "at" in stopped:
        w, hgt, ref = q.screendump()
        run["size"] = (w, hgt)
        for name, path in (("mid", mid), ("final", fin), ("settled", settled)):
            pw, ph, pixels = parse_ppm(path.read_bytes())
            run[name + "_size"] = (pw, ph)
            # Mid-animation only the background (outside the activity) counts.
            run[name + "_differing"] = differing(pixels, ref, w,
                                                 skip=ACTIVITY if name == "mid" else None)
    return run


@pytest.fixture
def unshaped_run(qemu_factory, guest, helper_binary, test_client, tmp_path, mode):
    return shared_run(("stream-unshaped", mode),
                      lambda: stream_run(qemu_factory(vga="virtio", mode=mode),
                                         helper_binary, test_client, tmp_path, mode))


@pytest.mark.timeout(180)
# typing: the editor's damage has an odd height, and a stream rectangle grown
# to even sizes once took a still background row below it into the stream.
@pytest.mark.parametrize("mode", ["busy", "heavy", "typing"])
def test_stream_unshaped(unshaped_run, mode):
    run = unshaped_run
    assert run["ready"]["activity"] == ",".join(map(str, ACTIVITY)), run["ready"]
    assert "at" in run["stopped"], "the mid-animation picture never appeared"
    # spice-gtk decoded stream frames (their rate is the figure below).
    assert run["watch"]["stream_frames"] >= 1, run["watch"]
    assert run["summary"], run["helper_log"]
    # One stream per moving area, kept while it moves: a few a session
    # (typing: one per scroll), not one per look (every 10 ms).
    # Measured 2026-12-07, 3 runs a build, the 2-core machine loaded by four
    # other engineers: build, busy 1/1/1, heavy 2/1/1, typing 6/6/6;
    # build-san, busy 3/5/7, heavy 3/2/4, typing 1/8 (and one run whose
    # client decoded nothing: 0 streams, failed on its frames).
    assert 1 <= run["streams"] <= 10, run["summary"]
    for name in ("mid", "final", "settled"):
        assert run[name + "_size"] == run["size"], (name, run[name + "_size"], run["size"])
    assert run["mid_differing"] == 0, \
        f"{run['mid_differing']} background pixels differ mid-animation"
    assert run["settled_differing"] == 0, \
        f"{run['settled_differing']} pixels differ {1000 + SETTLE_MS} ms after the guest stopped"


@pytest.mark.timing
@pytest.mark.timeout(180)
@pytest.mark.parametrize("mode", ["busy", "heavy", "typing"])
def test_stream_unshaped_figures(unshaped_run, mode):
    run = unshaped_run
    print(f"{mode}: {run['watch']['stream_frames']} stream frames decoded, "
          f"{run['drops']} late, {run['streams']} streams")
    # The "1 s" below is from the client's mid picture: the stop follows it
    # within the watcher's 20 ms poll plus a QMP round trip.
    # Measured 2026-12-07 on build, loaded machine: 0.18, 0.18, 0.11 s in
    # the runs that failed it (the bound inside the spread under load).
    assert run["stopped"].get("after_write_s", 1.0) < 0.1, run["stopped"]
    # 3 s of a 30 fps animation: the stream keeps the guest's rate (typing
    # streams only while the editor scrolls: one frame is enough there).
    # Measured 2026-12-07 on build, 3 runs, loaded machine: busy 52/63/87,
    # heavy 6/45/49 (below 30 once), typing 49/124/98.
    assert run["watch"]["stream_frames"] >= (1 if mode == "typing" else 30), run["watch"]
    # spice-gtk may count the first frame or two as late while its
    # GStreamer decoder starts (the unit test channels-stream-client sees
    # the same); more than that means frames arrive behind their time.
    # Measured 2026-12-07 on build, 3 runs, loaded machine: busy 11/1/0,
    # heavy 5/2/0, typing 10/3/6: the bound inside the spread under load
    # (typing in every run); build-san 0-8.
    assert run["drops"] is not None and run["drops"] <= 2, run["summary"]
    assert run.get("final_differing") == 0, \
        f"{run.get('final_differing')} pixels differ 1 s after the guest stopped"
