# SPDX-License-Identifier: GPL-2.0-or-later
"""Video streams from the real helper on the unshaped link (issue D).

The guest animates its 640x480 activity rectangle (busy: smooth gradient +
noise; heavy: full noise; typing: an editor receiving 10-20 characters a
frame) at 30 fps. The helper must start one stream for
it quickly (counted from qemu's frames, not from what it sent), spice-gtk
must decode every frame it is sent, the background outside the rectangle
must stay exact while it moves, and once the guest stops the client's
picture must equal qemu's screendump exactly within 1 s.

Needs the helper to serve SPICE (helper/main.c: --listen, --disable-ticketing)."""

import json
import re
import subprocess
import threading
import time

import pytest

from harness.qemu import free_tcp_port, parse_ppm
from test_display_support import Helper

pytestmark = pytest.mark.timing

ACTIVITY = (624, 160, 640, 480)
READY_TIMEOUT = 45.0


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


@pytest.mark.timeout(180)
# typing: the editor's damage has an odd height, and a stream rectangle grown
# to even sizes once took a still background row below it into the stream.
@pytest.mark.parametrize("mode", ["busy", "heavy", "typing"])
def test_stream_unshaped(qemu_factory, guest, helper_binary, test_client, tmp_path, mode):
    q = qemu_factory(vga="virtio", mode=mode)
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    assert ready["activity"] == ",".join(map(str, ACTIVITY)), ready
    port = free_tcp_port()
    with Helper.p2p(helper_binary, q, ["--listen", f"127.0.0.1:{port}",
                                      "--disable-ticketing"], control=False) as h:
        h.wait_listening(port)
        # One session: streams and frames as spice-gtk logs them, a
        # mid-animation picture, then the still picture 1 s after the stop:
        # the guest is stopped as soon as the mid picture is written, and
        # the client takes the final one 1000 ms after writing it.
        mid, fin = tmp_path / "mid.ppm", tmp_path / "final.ppm"
        stopped = {}
        watcher = threading.Thread(target=stop_when_written, args=(q, mid, stopped),
                                   daemon=True)
        watcher.start()
        try:
            res = run_client(test_client, port, "--settle", "0", "--seconds", "3",
                             "watch", "screenshot", mid, "sleep", "1000",
                             "screenshot", fin)
        finally:
            watcher.join(timeout=60)
        assert "at" in stopped, "the mid-animation picture never appeared"
        # The final picture is at most 1 s + the poll interval after the stop.
        assert stopped["after_write_s"] < 0.1, stopped
        watch = json.loads(res.stdout.splitlines()[0])
        # The stream may start before `watch` begins counting creations, so
        # the helper's own session summary says whether one was made.
        # Typing streams only while the editor scrolls (the typed cells alone
        # are too small an area); the others stream throughout.
        assert watch["stream_frames"] >= (1 if mode == "typing" else 30), watch
        h.close()
        summary = re.search(r"display session: .*streams (\d+), frames (\d+) .*"
                            r"client drops (\d+)", h.stderr())
        assert summary, h.stderr()[-2000:]
        streams, frames, drops = map(int, summary.groups())
        assert streams >= 1, summary.group(0)
        # One stream per moving area, kept while it moves: a few a session
        # (typing: one per scroll), not one per look (every 10 ms).
        assert streams <= 10, summary.group(0)
        # spice-gtk may count the first frame or two as late while its
        # GStreamer decoder starts (the unit test channels-stream-client sees
        # the same); more than that means frames arrive behind their time.
        assert drops <= 2, summary.group(0)
        w, hgt, ref = q.screendump()
        for path in (mid, fin):
            pw, ph, _ = parse_ppm(path.read_bytes())
            assert (pw, ph) == (w, hgt)
        # Mid-animation the background (outside the activity) is exact.
        bad = differing(parse_ppm(mid.read_bytes())[2], ref, w, skip=ACTIVITY)
        assert bad == 0, f"{bad} background pixels differ mid-animation"
        # Still: the whole picture is exact.
        bad = differing(parse_ppm(fin.read_bytes())[2], ref, w)
        assert bad == 0, f"{bad} pixels differ 1 s after the guest stopped"
