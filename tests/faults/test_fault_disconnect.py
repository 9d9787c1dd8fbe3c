# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, fault 1: clients that vanish mid-stream.

While the guest animates, a spice-gtk client watching it is SIGKILLed, and a
raw client reading the stream resets both its sockets (RST, nothing read
any more). The helper notices each, keeps running, and the next client gets
updates and, once the guest is stopped, qemu's exact picture."""

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

        # 3. The next client: updates while the guest runs, then the exact
        # picture once it is stopped.
        watch = watch_then_exact(test_client, port, q, tmp_path, seconds=2)
        assert updates(watch) > 0, watch
        assert_helper_healthy(h)
