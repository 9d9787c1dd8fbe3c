# SPDX-License-Identifier: GPL-2.0-or-later
"""USB redirection: a SPICE usbredir channel bridged to qemu's usb-redir.

qemu runs `-device usb-redir` on `-chardev socket,server=off` with
reconnect, connecting to a socket the test listens on and passes to the
helper (`--usbredir-fd FD`), as the launcher does for a libvirt
`<redirdev type='unix'>` with `mode='connect'`. The client is a raw SPICE
client (tests/faults/spice_raw.py) that links main and usbredir channel 0
and relays SPICEVMC_DATA to and from qs-usbredir-dev (tests/tools), an
emulated USB device (pid.codes 1209:0001, one vendor-specific interface)
speaking usbredir with Debian's libusbredirparser. The test guest watches
sysfs (tests/guest/keydraw-usb.c, keydraw.usb=1: "USB add BUS-PORT
VVVV:PPPP product=...", "USB remove ..."). What is shown, on qemu 7.2 and
10.0:

- the helper offers usbredir channel 0 (one log line) and accepts qemu's
  connection once the client's channel is there;
- the guest's kernel enumerates the device (vendor, product and the
  product string read from its descriptors through the whole path);
- the client disconnecting removes the device from the guest;
- a second client, after that, gets the device enumerated again (qemu's
  usb-redir got a fresh chardev connection, hence a fresh hello) and
  removed again when it leaves.

spice-gtk itself (with its USB device manager, as remote-viewer) opens
the usbredir channel and takes qemu's hello cleanly, though it has no
device to redirect here. And without qemu: a connected (not listening)
descriptor for --usbredir-fd is a usage error that says why.
"""

import os
import socket
import subprocess
import tempfile
import time

import pytest

from harness import exits
from serve_support import serving
from usbredir_support import DEVICE, PRODUCT, UsbClient, device_binary, usbredir_args


@pytest.mark.timeout(300)
def test_usbredir_device_enumerated(qemu_factory, qemu_flavour, guest, helper_binary, paths):
    dev_binary = device_binary(paths)
    run = tempfile.mkdtemp(prefix="qs-usbredir-", dir="/tmp")
    path = os.path.join(run, "usbredir.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    try:
        q = qemu_factory(cmdline_extra="keydraw.usb=1",
                         extra_args=usbredir_args(path, qemu_flavour))
        q.wait_serial(r"USB watching", timeout=120)
        # The guest loads its USB modules after READY, in the background.
        q.wait_serial(r"NOTE input-modules", timeout=120)
        with serving(helper_binary, q, "--disable-ticketing",
                     f"--usbredir-fd={listener.fileno()}",
                     pass_fds=[listener.fileno()]) as (h, port):
            listener.close()            # the helper holds it now
            for round_ in range(2):
                since = len(q.serial_lines)
                client = UsbClient(port, dev_binary)
                dev_log = ""
                try:
                    what = lambda: (f"round {round_}\nhelper: {h.stderr()[-3000:]}\n"  # noqa: E731
                                    f"guest: {[l for l in q.serial_lines if 'FPS' not in l][-20:]}\n"
                                    f"qemu: {q.stderr_tail()}")
                    try:
                        q.wait_serial(rf"USB add \S+ {DEVICE} product={PRODUCT}$",
                                      timeout=60, since=since)
                    except Exception as e:
                        dev_log = client.close()
                        client = None
                        raise AssertionError(f"{e}\ndevice: {dev_log}\n{what()}") from e
                finally:
                    if client:
                        dev_log = client.close()
                assert f"connected {DEVICE}" in dev_log, dev_log
                assert "config 1" in dev_log, dev_log
                try:
                    q.wait_serial(rf"USB remove \S+ {DEVICE}$", timeout=30, since=since)
                except Exception as e:
                    raise AssertionError(f"{e}\ndevice: {dev_log}\n{what()}") from e
            log = h.stderr()
        assert "Sanitizer" not in log and "runtime error" not in log, log
        offered = [l for l in log.splitlines() if "offering qemu's chardevs" in l]
        assert len(offered) == 1 and "usbredir.0 (usbredir channel 0" in offered[0], log
        assert log.count("chardev usbredir.0: qemu connected") >= 2, log
        assert "the client's usbredir channel ended" in log, log
        print(what())                                   # shown with pytest -rP
    finally:
        listener.close()
        os.unlink(path)
        os.rmdir(run)


GTK_CLIENT = """
import sys
import gi
gi.require_version('SpiceClientGLib', '2.0')
from gi.repository import GLib, GObject, SpiceClientGLib as Spice
loop = GLib.MainLoop()
session = Spice.Session(host="127.0.0.1", port=sys.argv[1])
# As remote-viewer does: the USB device manager gives usbredir channels
# their usbredirhost.
Spice.UsbDeviceManager.get(session)
def on_event(ch, ev):
    print("event", ch.get_property("channel-type"), ch.get_property("channel-id"),
          ev.value_nick, flush=True)
def on_channel(sess, ch):
    GObject.Object.connect(ch, "channel-event", on_event)
    ch.connect()
GObject.Object.connect(session, "channel-new", on_channel)
session.connect()
GLib.timeout_add(4000, loop.quit)
loop.run()
session.disconnect()
print("done", flush=True)
"""


@pytest.mark.timeout(300)
def test_usbredir_spice_gtk_opens_channel(qemu_factory, guest, helper_binary):
    """spice-gtk (0.42, with its USB device manager as remote-viewer has)
    opens usbredir channel 0: qemu's usb-redir connects, spice-gtk's
    usbredirhost takes qemu's hello without complaint and its own stream
    passes the helper's check. No USB device is redirected (the test
    machine has none to give spice-gtk's libusb)."""
    run = tempfile.mkdtemp(prefix="qs-usbredir-", dir="/tmp")
    path = os.path.join(run, "usbredir.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    try:
        q = qemu_factory(extra_args=usbredir_args(path, "host"))
        q.wait_ready(timeout=120)
        with serving(helper_binary, q, "--disable-ticketing",
                     f"--usbredir-fd={listener.fileno()}",
                     pass_fds=[listener.fileno()]) as (h, port):
            listener.close()
            res = subprocess.run(["/usr/bin/python3", "-c", GTK_CLIENT, str(port)],
                                 capture_output=True, text=True, timeout=60,
                                 stdin=subprocess.DEVNULL)
            # The client's channels close as it exits; the helper's line
            # about the chardev follows once the session is torn down.
            deadline = time.monotonic() + 10
            while ("the client's usbredir channel ended" not in h.stderr()
                   and time.monotonic() < deadline):
                time.sleep(0.05)
            log = h.stderr()
        what = f"client: {res.stdout}\n{res.stderr[-2000:]}\nhelper: {log[-2500:]}"
        assert res.returncode == 0 and "done" in res.stdout, what
        assert "event 9 0 opened" in res.stdout, what
        assert "CRITICAL" not in res.stderr and "WARNING" not in res.stderr, what
        assert "chardev usbredir.0: qemu connected" in log, what
        assert "closing the client's channel" not in log, what
        assert "the client's usbredir channel ended" in log, what
    finally:
        listener.close()
        os.unlink(path)
        os.rmdir(run)


def test_usbredir_connected_descriptor_refused(helper_binary):
    a, b = socket.socketpair()
    try:
        proc = exits.run([helper_binary, "--qmp", "/nonexistent/qmp.sock",
                          "--listen", "127.0.0.1:0", "--disable-ticketing",
                          f"--usbredir-fd={a.fileno()}"], "the helper", expect=2,
                         pass_fds=[a.fileno()])
    finally:
        a.close()
        b.close()
    assert "connected, not listening" in proc.stderr, proc.stderr
    assert "server=off" in proc.stderr, proc.stderr
