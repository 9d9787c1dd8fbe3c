# SPDX-License-Identifier: GPL-2.0-or-later
"""A usbredir channel flooded with garbage by a client.

qemu runs `-device usb-redir` on a `-chardev socket,server=off` with
reconnect, connecting to a socket passed to the helper with
`--usbredir-fd`, as the launcher does; the busy guest animates its
rectangle and watches its USB devices (keydraw.usb=1). A raw client
(spice_raw.py) links main, display and usbredir channel 0 and sends
random bytes as SPICEVMC_DATA (64 KiB each) as fast as its socket takes
them: what qemu's usb-redir parser gets is not usbredir. The helper does
not parse the stream (it is the client's and qemu's business), so what is
shown is that the bridge stays a bridge:

- meanwhile the same session's display keeps getting the animation, QMP
  answers within 1 s, and the helper logs no error and stays up (if
  qemu's usb-redir gives up on the stream and closes its chardev, the
  helper closes that client's usbredir channel, one log line);
- afterwards, with the flooding client gone, a well-behaved client
  (qs-usbredir-dev behind the relay of tests/integration/usbredir_support.py)
  gets its device enumerated by the guest: the garbage did not wedge
  qemu's usb-redir, because the next client gets a fresh chardev
  connection.

The helper's queues towards qemu are bounded by the bridge whatever the
bytes are (the client is read only while under 256 KiB wait for qemu);
tests/unit/channels/test-vmc-usbredir.c and test_fault_port_flood.py show
those bounds. The other direction (qemu flooding a client that does not
read) has no guest-side driver here: qemu's usb-redir sends only what the
redirected device is asked for.
"""

import os
import random
import socket
import struct
import tempfile
import threading
import time

import pytest

from fault_support import assert_helper_healthy, qmp_latency, slowdown
from serve_support import serving
from spice_raw import MSGC_SPICEVMC_DATA, Channel, Session, link
from usbredir_support import (CHANNEL_USBREDIR, DEVICE, PRODUCT, UsbClient, device_binary,
                              usbredir_args)

SETTLE_S = 6.0
WATCH_S = 3.0
QMP_MAX_S = 1.0
CHUNK = 64 * 1024


@pytest.mark.timeout(300)
def test_client_floods_usbredir_with_garbage(qemu_factory, qemu_flavour, guest, helper_binary,
                                            paths):
    dev_binary = device_binary(paths)
    run = tempfile.mkdtemp(prefix="qs-usbflood-", dir="/tmp")
    path = os.path.join(run, "usbredir.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    try:
        q = qemu_factory(guest=guest, vga="virtio", mode="busy", cmdline_extra="keydraw.usb=1",
                         extra_args=usbredir_args(path, qemu_flavour))
        q.wait_serial(r"NOTE input-modules", timeout=120)
        with serving(helper_binary, q, "--disable-ticketing",
                     f"--usbredir-fd={listener.fileno()}",
                     pass_fds=[listener.fileno()]) as (h, port):
            listener.close()
            raw = Session(port)
            usb = Channel(link(port, CHANNEL_USBREDIR, raw.session_id), "usbredir", vmc=True)
            sent = [0]
            stop = threading.Event()
            rng = random.Random(7)
            chunks = [struct.pack("<HI", MSGC_SPICEVMC_DATA, CHUNK) + rng.randbytes(CHUNK)
                      for _ in range(8)]

            def flood():
                try:
                    while not stop.is_set():
                        usb.sock.sendall(chunks[sent[0] // CHUNK % len(chunks)])
                        sent[0] += CHUNK
                except OSError:
                    pass

            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            time.sleep(SETTLE_S * slowdown(helper_binary))
            before = raw.display.messages
            time.sleep(WATCH_S)
            what = (f"client sent {sent[0]} bytes of garbage\n"
                    f"helper: {h.stderr()[-2000:]}\nqemu: {q.stderr_tail()}")
            assert raw.display.messages > before, f"display stalled ({before})\n{what}"
            assert qmp_latency(q) < QMP_MAX_S * slowdown(helper_binary), what
            assert_helper_healthy(h)
            stop.set()
            usb.close(reset=True)
            raw.close(reset=True)
            sender.join(timeout=5)

            # A well-behaved client next: the device reaches the guest.
            since = len(q.serial_lines)
            client = UsbClient(port, dev_binary)
            try:
                q.wait_serial(rf"USB add \S+ {DEVICE} product={PRODUCT}$",
                              timeout=60, since=since)
            finally:
                dev_log = client.close()
            q.wait_serial(rf"USB remove \S+ {DEVICE}$", timeout=30, since=since)
            assert_helper_healthy(h)
            what += f"\ndevice: {dev_log}\nhelper after: {h.stderr()[-1500:]}"
            print(what)                                 # shown with pytest -rP
    finally:
        listener.close()
        os.unlink(path)
        os.rmdir(run)
