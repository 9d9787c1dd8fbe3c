# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: keys and absolute clicks from a SPICE client reach the guest
through OUR helper."""

import pytest

from serve_support import READY_TIMEOUT, run_client, serving


# One idle guest with a USB tablet per qemu flavour for both tests
# (shared_qemu, conftest.py): each waits for the guest's KEY or CLICK line
# after its own serial mark, so the other's lines cannot answer it.
IDLE_TABLET = dict(vga="virtio", mode="idle",
                   extra_args=["-device", "qemu-xhci", "-device", "usb-tablet"])


@pytest.mark.timeout(150)
def test_key_reaches_guest(shared_qemu, qemu_flavour, guest, helper_binary, test_client):
    q = shared_qemu(**IDLE_TABLET)
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        mark = q.serial_mark()
        run_client(test_client, "--port", port, "key", "0x1e", "sleep", 300)
        m = q.wait_serial(r"^KEY code=(\d+)\b", timeout=10.0, since=mark)
        assert m.group(1) == "30", m.string


@pytest.mark.timeout(150)
def test_absolute_click_reaches_guest(shared_qemu, qemu_flavour, guest, helper_binary,
                                      test_client):
    q = shared_qemu(**IDLE_TABLET)
    q.wait_ready(timeout=READY_TIMEOUT)
    # the tablet may be probed after READY on a loaded machine
    q.wait_serial(r"^INPUT .*abs=1", timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        mark = q.serial_mark()
        res = run_client(test_client, "--port", port, "info", "click", 300, 200,
                         "click", 1000, 700, 3, "sleep", 300)
        assert '"mouse_mode":"client"' in res.stdout, res.stdout
        m = q.wait_serial(r"^CLICK x=(\d+) y=(\d+) button=(\d+)", timeout=10.0, since=mark)
        assert m.groups() == ("300", "200", "272"), m.string        # BTN_LEFT
        m = q.wait_serial(r"^CLICK x=(\d+) y=(\d+) button=(\d+)", timeout=10.0,
                          since=m.line_index + 1)
        assert m.groups() == ("1000", "700", "273"), m.string       # BTN_RIGHT
