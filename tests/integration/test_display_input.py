# SPDX-License-Identifier: GPL-2.0-or-later
"""Input out through qemu's Keyboard and Mouse interfaces (driven through
the helper's test controls): keys as qnum, the guest mouse following
IsAbsolute, absolute position and buttons. The guest reports evdev events
on its serial line (KEY code=.., CLICK x=.. y=.. button=..)."""

import re
import time

from test_display_support import Helper, display_helper  # noqa: F401

BTN_LEFT = 0x110
KEY_A = 30


def input_state(h):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", h.ctl("input"))}


def test_key_reaches_guest(qemu_factory, qemu_flavour, guest, display_helper):
    q = qemu_factory()
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        mark = q.serial_mark()
        h.ctl("key 0x1e")
        m = q.wait_serial(r"^KEY code=\d+", timeout=10, since=mark)
        assert m.fields["code"] == str(KEY_A), m.string


def test_absolute_click(qemu_factory, qemu_flavour, guest, display_helper):
    q = qemu_factory(extra_args=["-device", "virtio-tablet-pci"])
    q.wait_ready()
    q.wait_serial(r"^INPUT .*abs=1", timeout=15)
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        deadline = time.monotonic() + 10
        while not input_state(h)["absolute"]:
            assert time.monotonic() < deadline, "IsAbsolute never became true"
            time.sleep(0.1)
        mark = q.serial_mark()
        h.ctl("abs 640 400")
        time.sleep(0.2)
        h.ctl("button 0")
        m = q.wait_serial(r"^CLICK ", timeout=10, since=mark)
        f = m.fields
        assert int(f["button"]) == BTN_LEFT, m.string
        assert abs(int(f["x"]) - 640) <= 2 and abs(int(f["y"]) - 400) <= 2, m.string
