# SPDX-License-Identifier: GPL-2.0-or-later
"""The test guest boots on every qemu flavour and vga and sees QMP keys."""

import os
import time

import pytest

from harness import QemuError

# Boot time is qemu's and the guest's, not our code's: one pass is enough.
pytestmark = pytest.mark.timing


# The brief: READY within 10 s of starting qemu. On a loaded 2-core machine
# QS_BOOT_TIMEOUT may raise it; the other tests wait up to 30 s.
BOOT_TIMEOUT = float(os.environ.get("QS_BOOT_TIMEOUT", "10"))


@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_guest_ready_and_key(qemu_factory, qemu_flavour, guest, vga):
    start = time.monotonic()
    q = qemu_factory(vga=vga, display="dbus-p2p")
    ready = q.wait_ready(timeout=BOOT_TIMEOUT - (time.monotonic() - start))
    boot_s = time.monotonic() - start
    assert int(ready["w"]) > 0 and int(ready["h"]) > 0, ready
    assert ready["mode"] == "idle" and ready["flush"] == "damage", ready

    mark = q.serial_mark()
    q.send_key("a")
    m = q.wait_serial(r"^KEY code=(\d+)", timeout=5.0, since=mark)
    assert m.group(1) == "30", m.string
    print(f"{qemu_flavour}/{vga}: READY after {boot_s:.2f}s, {ready}")


def test_screendump_has_guest_mode(qemu_factory, qemu_flavour, guest):
    q = qemu_factory(vga="virtio", display="dbus-p2p")
    ready = q.wait_ready()
    w, h, pixels = q.screendump()
    assert (w, h) == (int(ready["w"]), int(ready["h"]))
    assert len(pixels) == w * h * 3
    assert len(set(pixels[i:i + 3] for i in range(0, len(pixels), 3 * 997))) > 1, \
        "screendump is a single colour"


def test_guest_modes_reach_cmdline(qemu_factory, guest):
    q = qemu_factory(vga="std", display="none", mode="busy", flush="full")
    ready = q.wait_ready()
    assert (ready["mode"], ready["flush"]) == ("busy", "full"), ready


def test_wait_serial_times_out_and_reports(qemu_factory):
    q = qemu_factory(guest=None, display="none")
    start = time.monotonic()
    with pytest.raises(QemuError, match="no serial line matching"):
        q.wait_serial("never printed", timeout=0.5)
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("mode", ["busy", "heavy"])
@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_guest_frame_rate(qemu_factory, guest, vga, mode):
    """busy and heavy draw at >= 25 fps by the guest's own FPS lines (median of
    five one-second samples, after the input modules have loaded)."""
    q = qemu_factory(vga=vga, display="dbus-p2p", mode=mode)
    q.wait_ready(timeout=30)
    m = q.wait_serial(r"^NOTE input-modules", timeout=15)
    fps = []
    index = m.line_index + 1
    while len(fps) < 5:
        line = q.wait_serial(r"^FPS fps=([0-9.]+)", timeout=5, since=index)
        fps.append(float(line.group(1)))
        index = line.line_index + 1
    fps.sort()
    assert fps[2] >= 25.0, f"{vga}/{mode}: FPS samples {fps}"
