# SPDX-License-Identifier: GPL-2.0-or-later
"""A port channel flooded from either end while the other end does not read;
and the same for the webdav channel of folder sharing (the port named
org.spice-space.webdav.0: the same bridge, channel type 11).

qemu runs a virtserialport on `-chardev socket,server=on`, connected and
passed to the helper with `--port-fd` as the launcher does; the busy guest
animates its rectangle (tests/guest/keydraw-echo.c, keydraw.echo=PORT with
keydraw.echo_mode). The client is a raw one (spice_raw.py) linked on main,
display and the port.

- The client floods (SPICEVMC_DATA of 64 KiB as fast as its socket takes
  them) while the guest holds the port open and never reads
  (echo_mode=hold): the helper stops reading the client once 256 KiB wait
  for qemu, so the client's sending stalls. It must have got at most
  FLOOD_BOUND into the network in SETTLE_S + WATCH_S, and nothing more in
  the last WATCH_S (a helper that took everything would take hundreds of
  MiB in that time over loopback).
- The guest floods (a known byte stream, echo_mode=flood) while the client
  does not read its port channel: the helper stops reading qemu once 64 KiB
  wait for the client, so the guest's writes block. The guest must have
  written at most FLOOD_BOUND, and nothing more in the last WATCH_S. Then
  the client reads: the stream resumes, and what arrives is the guest's
  stream from its first byte, in order.

In both, meanwhile, the same session's display channel keeps receiving the
guest's animation, qemu answers QMP within 1 s, and the helper logs no
error; afterwards a new client takes the session over (the helper runs
with --max-sessions 1 --when-full replace) and its display gets the
animation, and the flooding client's port channel is closed by the
helper. (The new client is a raw one too: qs-test-client built with ASan
reports a 16 KiB "leak" once spice-gtk registers its port channel type,
GLib's first quark array, which GLib keeps on purpose when the table grows
past 2048 quarks; its allocation stack goes through GLib's constructor,
but ASan's fast unwinder stops at g_malloc, so tests/tools/lsan.supp's
_dl_init rule cannot match it.)

Bound. FLOOD_BOUND is 32 MiB: what the loopback socket buffers (a few MiB
each way with autotuning), qemu's and the guest's buffers and the helper's
queues (64 KiB + 256 KiB + one message) may hold. Measured (qemu 7.2,
plain and sanitizer builds, 2026-12-02): the client got 5.3 MB into the
network and the guest wrote 768 KiB, neither a byte more in the watch.
With the bridge's flow control taken out (both sides always read) the
same tests saw 1.8 GB taken from the client and 65 MiB from the guest
(until the client connection's 64 MiB hard cap closed it).
"""

import os
import struct
import tempfile
import threading
import time

import pytest

from fault_support import assert_helper_healthy, qmp_latency, slowdown
from serve_support import connect_chardev, serving_port, virtio_port_args
from spice_raw import (CHANNEL_PORT, MSG_PORT_INIT, MSGC_SPICEVMC_DATA, Channel, Session,
                       link)

PORT = "org.qemu-spice.test.flood"
# The same bridge as the webdav channel (type 11) that folder sharing uses.
CHANNEL_WEBDAV = 11
PORTS = [pytest.param(PORT, CHANNEL_PORT, id="port"),
         pytest.param("org.spice-space.webdav.0", CHANNEL_WEBDAV, id="webdav")]
FLOOD_BOUND = 32 * 1024 * 1024
SETTLE_S = 6.0
WATCH_S = 3.0
QMP_MAX_S = 1.0
CHUNK = 64 * 1024
SAY = 256 * 1024            # the guest's flood line granularity


def flood_byte(i):
    return (i * 7 + i // 251) & 0xff


def flood_bytes(start, n):
    return bytes(flood_byte(i) for i in range(start, start + n))


class PortVm:
    """The busy guest with PORT on a socket chardev, and the helper serving
    it with the connection passed in."""

    def __init__(self, qemu_factory, guest, helper_binary, mode, name=PORT,
                 channel=CHANNEL_PORT):
        self.channel = channel
        self.run = tempfile.mkdtemp(prefix="qs-flood-", dir="/tmp")
        self.path = os.path.join(self.run, "port.sock")
        self.q = qemu_factory(flavour="host", guest=guest, vga="virtio", mode="busy",
                              cmdline_extra=f"keydraw.echo={name} keydraw.echo_mode={mode}",
                              extra_args=virtio_port_args(
                                  name, f"path={self.path},server=on,wait=off"))
        self.q.wait_serial(r"ECHO waiting", timeout=120)
        self.chardev = connect_chardev(self.path)
        # One client at a time, the newest winning: a new client takes the
        # flooding one's session over.
        self.serving = serving_port(helper_binary, self.q, name, self.chardev,
                                    "--max-sessions", "1", "--when-full", "replace")

    def __enter__(self):
        self.h, self.port, _ = self.serving.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            return self.serving.__exit__(*exc)
        finally:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            os.rmdir(self.run)

    def session(self, read_port=True):
        raw = Session(self.port)
        port = Channel(link(self.port, self.channel, raw.session_id), "port",
                       read=read_port, vmc=True)
        return raw, port

    def guest_flooded(self):
        """Bytes the guest has written so far (to SAY granularity)."""
        n = 0
        for line in self.q.serial_lines:
            text = str(line)
            if "ECHO flood n=" in text:
                n = int(text.split("ECHO flood n=")[1].split()[0])
        return n


def taken_over(vm, old_port, binary, what):
    """A new raw client takes the session over: its display gets the
    animation, and the old client's port channel is closed by the helper."""
    new = Session(vm.port)
    try:
        assert new.display.wait_messages(20, 15 * slowdown(binary)), \
            f"the new client's display got {new.display.messages} messages\n{what}"
        assert old_port.eof.wait(15 * slowdown(binary)), \
            f"the flooding client's port channel stayed open\n{what}"
    finally:
        new.close()


def display_keeps_going(q, h, raw, binary, what):
    """The session's display gets the animation during WATCH_S; QMP answers."""
    before = raw.display.messages
    time.sleep(WATCH_S)
    assert raw.display.messages > before, f"display stalled ({before}) {what}"
    assert qmp_latency(q) < QMP_MAX_S * slowdown(binary), what
    assert_helper_healthy(h)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name,channel", PORTS)
def test_client_floods_port_guest_does_not_read(qemu_factory, guest, helper_binary, name,
                                                channel):
    with PortVm(qemu_factory, guest, helper_binary, "hold", name, channel) as vm:
        raw, port = vm.session()
        deadline = time.monotonic() + 10
        while MSG_PORT_INIT not in port.first:
            assert time.monotonic() < deadline, "no PORT_INIT"
            time.sleep(0.05)
        sent = [0]
        stop = threading.Event()
        chunk = struct.pack("<HI", MSGC_SPICEVMC_DATA, CHUNK) + bytes(CHUNK)

        def flood():
            try:
                while not stop.is_set():
                    port.sock.sendall(chunk)
                    sent[0] += len(chunk)
            except OSError:
                pass

        sender = threading.Thread(target=flood, daemon=True)
        sender.start()
        time.sleep(SETTLE_S * slowdown(helper_binary))
        at_settle = sent[0]
        display_keeps_going(vm.q, vm.h, raw, helper_binary, f"while the client floods ({at_settle} sent)")
        at_end = sent[0]
        what = f"client sent {at_settle} then {at_end} bytes\nhelper: {vm.h.stderr()[-2000:]}"
        assert at_end <= FLOOD_BOUND, what
        assert at_end - at_settle <= CHUNK + 6, what
        taken_over(vm, port, helper_binary, what)
        stop.set()
        raw.close(reset=True)
        port.close(reset=True)
        sender.join(timeout=5)
        assert_helper_healthy(vm.h)
        print(what)                                     # shown with pytest -rP


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name,channel", PORTS)
def test_guest_floods_port_client_does_not_read(qemu_factory, guest, helper_binary, name,
                                                channel):
    with PortVm(qemu_factory, guest, helper_binary, "flood", name, channel) as vm:
        raw, port = vm.session(read_port=False)
        time.sleep(SETTLE_S * slowdown(helper_binary))
        at_settle = vm.guest_flooded()
        display_keeps_going(vm.q, vm.h, raw, helper_binary, f"while the guest floods ({at_settle} written)")
        at_end = vm.guest_flooded()
        what = (f"guest wrote {at_settle} then {at_end} bytes; client has "
                f"{port.unread_bytes()} unread\nhelper: {vm.h.stderr()[-2000:]}")
        assert at_end <= FLOOD_BOUND, what
        assert at_end - at_settle <= SAY, what
        # The client reads: the stream resumes from the guest's first byte.
        port.reading.set()
        want = at_end + 4 * SAY
        deadline = time.monotonic() + 30 * slowdown(helper_binary)
        while len(port.data) < want and time.monotonic() < deadline:
            time.sleep(0.1)
        got = bytes(port.data[:want])
        assert len(got) == want, f"{len(port.data)} of {want} bytes after resuming\n{what}"
        assert got == flood_bytes(0, want), f"the stream differs\n{what}"
        deadline = time.monotonic() + 10 * slowdown(helper_binary)
        while vm.guest_flooded() <= at_end and time.monotonic() < deadline:
            time.sleep(0.1)
        assert vm.guest_flooded() > at_end, what
        taken_over(vm, port, helper_binary, what)
        raw.close(reset=True)
        port.close(reset=True)
        assert_helper_healthy(vm.h)
        print(what)
