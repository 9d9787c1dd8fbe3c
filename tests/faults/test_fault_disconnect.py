# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, fault 1: clients that vanish mid-image and mid-stream.

While the guest animates, a spice-gtk client watching it is SIGKILLed, a
raw client reading the stream resets both its sockets (RST, nothing read
any more), and a raw client that stops reading as soon as it has linked
resets them while its first full picture (1280x800, sent in bands) is
still on its way. The helper notices each, keeps running, and the next
client gets updates and, once the guest is stopped, qemu's exact
picture."""

import time

import pytest

from fault_support import (Client, assert_helper_healthy, busy_guest, closed_lines,
                           serving, updates, wait_closed_lines, watch_then_exact)
from spice_raw import Session


@pytest.mark.timeout(150)
def test_client_vanishes_mid_stream(qemu_factory, guest, helper_binary, test_client,
                                    tmp_path):
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        # 1. spice-gtk, SIGKILLed while the stream runs: the kernel closes its
        # sockets with unread data, i.e. resets them.
        watcher = Client(test_client, port, ["--settle", "0", "--seconds", "30",
                                             "info", "watch"], tmp_path, name="killed")
        try:
            watcher.wait_output(1)
            before = len(closed_lines(h))
            # Let the stream run into the client, then kill it.
            time.sleep(1.5)
        finally:
            watcher.kill()
        wait_closed_lines(h, before + 1)
        assert_helper_healthy(h)

        # 2. A raw client that read part of the stream resets both channels.
        raw = Session(port)
        try:
            assert raw.display.wait_messages(20, timeout=20), \
                f"raw client got {raw.display.messages} display messages"
        finally:
            raw.close(reset=True)
        wait_closed_lines(h, before + 2)
        assert_helper_healthy(h)

        # 3. Mid-image: the display channel reads nothing, so the first
        # picture's bands pile up in its socket; it resets with them unread.
        # From its link on: a channel stopped after its first messages may
        # have answered a PING among them, and the helper then holds it to
        # the pacer's first target (one fresh-clone run: 15466 bytes unread
        # after 2 messages, never the 16 KiB wanted). A client that never
        # answers is paced by TCP_INFO after 3 s (flow/qs-e2e.c), so the
        # bands fill its socket.
        raw = Session(port, display_read=False)
        try:
            deadline = time.monotonic() + 10
            while raw.display.unread_bytes() < 16 * 1024:
                assert time.monotonic() < deadline, \
                    f"the first picture never arrived: {raw.display.unread_bytes()} " \
                    f"bytes unread, {raw.display.messages} messages read"
                time.sleep(0.02)
            unread, read = raw.display.unread_bytes(), raw.display.messages
        finally:
            raw.close(reset=True)
        assert read == 0, f"read {read} display messages, none wanted"
        wait_closed_lines(h, before + 3)
        assert_helper_healthy(h)
        print(f"mid-image: reset with {unread} bytes unread after {read} messages")

        # 4. The next client: updates while the guest runs, then the exact
        # picture once it is stopped.
        watch = watch_then_exact(test_client, port, q, tmp_path, seconds=2)
        assert updates(watch) > 0, watch
        assert_helper_healthy(h)
