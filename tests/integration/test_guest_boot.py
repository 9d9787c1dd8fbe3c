# SPDX-License-Identifier: GPL-2.0-or-later
"""The test guest boots on every qemu flavour and vga and sees QMP keys."""

import os
import time

import pytest

from harness import QemuError
from harness.shared_run import shared_run

# Boot time is qemu's and the guest's, not our code's: one pass is enough.
pytestmark = pytest.mark.tooling


# The brief: READY within 10 s of starting qemu. On a loaded 2-core machine
# QS_BOOT_TIMEOUT may raise it. The boot itself may take up to BOOT_WAIT_S
# (the other tests wait 30-45 s); the 10 s figure is a test of its own.
BOOT_TIMEOUT = float(os.environ.get("QS_BOOT_TIMEOUT", "10"))
BOOT_WAIT_S = 45.0


def boot_and_key(qemu_factory, qemu_flavour, vga):
    start = time.monotonic()
    q = qemu_factory(vga=vga, display="dbus-p2p")
    ready = q.wait_ready(timeout=BOOT_WAIT_S)
    boot_s = time.monotonic() - start
    mark = q.serial_mark()
    q.send_key("a")
    m = q.wait_serial(r"^KEY code=(\d+)", timeout=5.0, since=mark)
    print(f"{qemu_flavour}/{vga}: READY after {boot_s:.2f}s, {ready}")
    q.close()
    return {"ready": ready, "boot_s": boot_s, "key": m.group(1), "line": m.string}


@pytest.fixture
def booted(qemu_factory, qemu_flavour, guest, vga):
    return shared_run(("guest-boot", qemu_flavour, vga),
                      lambda: boot_and_key(qemu_factory, qemu_flavour, vga))


@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_guest_ready_and_key(booted):
    ready = booted["ready"]
    assert int(ready["w"]) > 0 and int(ready["h"]) > 0, ready
    assert ready["mode"] == "idle" and ready["flush"] == "damage", ready
    assert booted["key"] == "30", booted["line"]


@pytest.mark.timing
@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_guest_boot_time(booted):
    assert booted["boot_s"] <= BOOT_TIMEOUT, \
        f"READY after {booted['boot_s']:.2f} s (bound {BOOT_TIMEOUT:g} s)"


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


@pytest.mark.timing
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
