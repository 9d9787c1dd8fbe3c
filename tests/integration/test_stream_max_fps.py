# SPDX-License-Identifier: GPL-2.0-or-later
"""--max-fps: a ceiling on the helper's video frame rate, for hosts where
the helper's CPU matters more than smooth motion. The busy guest redraws its
activity rectangle at 30 fps; served with --max-fps 10, the client decodes
its stream at no more than 10 frames a second (about 25-30 without the
option on this link), and the helper logs the ceiling with the stream."""
import json
import re

import pytest

from serve_support import READY_TIMEOUT, run_client, serving

MAX_FPS = 10
SECONDS = 6
# Frames are read at least 1/MAX_FPS s apart; arrivals may bunch by an
# encode's jitter, so one window may see a frame or two more than
# MAX_FPS * SECONDS + 1.
SLACK = 2


@pytest.mark.timeout(150)
def test_max_fps_caps_the_stream(qemu_factory, guest, helper_binary, test_client):
    q = qemu_factory(vga="virtio", mode="busy")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-fps", MAX_FPS) as (h, port):
        res = run_client(test_client, "--port", port, "--seconds", SECONDS, "watch",
                         timeout=40)
        out = json.loads(res.stdout.strip().splitlines()[-1])
        log = h.stderr()
    frames = out["stream_frames"] + out["stream_late"]
    print(out)
    assert frames > 0, (out, log[-3000:])
    assert frames <= MAX_FPS * out["seconds"] + 1 + SLACK, out
    created = re.findall(r"display: stream \d+, .* kbit/s, at most (\d+) fps", log)
    assert created and set(created) == {str(MAX_FPS)}, log[-3000:]
