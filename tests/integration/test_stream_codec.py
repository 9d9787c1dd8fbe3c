# SPDX-License-Identifier: GPL-2.0-or-later
"""The client's video codec order reaches the helper: the display channel
announces PREF_VIDEO_CODEC_TYPE, spice-gtk then sends the order a client
sets (qs-test-client --video-codecs, spice-gtk's
spice_display_channel_change_preferred_video_codec_types), and the busy
guest's animation streams in the first codec of that order the helper
encodes. The helper logs each stream it creates with its codec."""

import json
import re

import pytest

from serve_support import READY_TIMEOUT, run_client, serving


def streams(log):
    return re.findall(r"display: stream \d+, \S+ at \S+ (H\.264|MJPEG) at", log)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("order, codec", [("mjpeg,h264", "MJPEG"), ("h264,mjpeg", "H.264")])
def test_client_codec_order(qemu_factory, guest, helper_binary, test_client, order, codec):
    q = qemu_factory(vga="virtio", mode="busy")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        res = run_client(test_client, "--port", port, "--video-codecs", order, "--seconds", 4,
                         "watch", timeout=40)
        assert json.loads(res.stdout.strip().splitlines()[-1])["stream_frames"] > 0, \
            (res.stdout, h.stderr()[-3000:])
        got = streams(h.stderr())
        assert got, h.stderr()[-2000:]
        assert set(got) == {codec}, got


def test_bad_codec_list(test_client):
    res = run_client(test_client, "--port", 1, "--video-codecs", "mjpeg,theora", "info",
                     check=False)
    assert res.returncode == 2 and "--video-codecs: 'mjpeg,theora'" in res.stderr, res
