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

And without qemu: a connected (not listening) descriptor for
--usbredir-fd is a usage error that says why.
"""

import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from serve_support import serving

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "faults"))
import spice_raw  # noqa: E402

CHANNEL_USBREDIR = 9
DEVICE = "1209:0001"
PRODUCT = "usbredir test device"


class RelayChannel(spice_raw.Channel):
    """A linked usbredir channel whose SPICEVMC_DATA goes to `sink`."""

    def __init__(self, sock, sink):
        self.sink = sink
        super().__init__(sock, "usbredir")

    def _handle(self, msg_type, body):
        super()._handle(msg_type, body)
        if msg_type == spice_raw.MSG_SPICEVMC_DATA:
            try:
                self.sink.write(body)
                self.sink.flush()
            except (BrokenPipeError, ValueError):
                pass


class UsbClient:
    """A raw SPICE session (main + usbredir 0) with qs-usbredir-dev behind
    the usbredir channel."""

    def __init__(self, port, device_binary):
        self.main = spice_raw.Channel(spice_raw.link(port, spice_raw.CHANNEL_MAIN), "main")
        deadline = time.monotonic() + spice_raw.LINK_TIMEOUT
        while spice_raw.MSG_MAIN_INIT not in self.main.first:
            if self.main.eof.is_set() or time.monotonic() > deadline:
                self.main.close()
                raise spice_raw.LinkError("no MAIN_INIT from the server")
            time.sleep(0.01)
        session_id = struct.unpack_from("<I", self.main.first[spice_raw.MSG_MAIN_INIT])[0]
        self.dev = subprocess.Popen([str(device_binary)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.usb = RelayChannel(spice_raw.link(port, CHANNEL_USBREDIR, session_id),
                                self.dev.stdin)
        self._pump = threading.Thread(target=self._to_server, daemon=True)
        self._pump.start()

    def _to_server(self):
        while True:
            data = os.read(self.dev.stdout.fileno(), 65536)
            if not data:
                return
            try:
                self.usb.send(spice_raw.MSGC_SPICEVMC_DATA, data)
            except OSError:
                return

    def close(self):
        """Disconnects; returns the device's stderr (its lines)."""
        self.usb.close()
        self.main.close()
        try:
            self.dev.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.dev.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.dev.kill()
            self.dev.wait()
        self._pump.join(timeout=5)
        return self.dev.stderr.read().decode(errors="replace")


def device_binary(paths):
    path = paths.build_dir / "tests" / "tools" / "qs-usbredir-dev"
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} missing: build it (meson needs libusbredirparser-dev)")
    return path


def usbredir_args(path, flavour):
    # qemu 9.2 renamed reconnect (seconds) to reconnect-ms.
    again = "reconnect=1" if flavour == "host" else "reconnect-ms=1000"
    return ["-device", "qemu-xhci,id=qsxhci",
            "-chardev", f"socket,id=qsusb,path={path},server=off,{again}",
            "-device", "usb-redir,chardev=qsusb,id=qsredir,bus=qsxhci.0"]


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


def test_usbredir_connected_descriptor_refused(helper_binary):
    a, b = socket.socketpair()
    try:
        proc = subprocess.run([str(helper_binary), "--qmp", "/nonexistent/qmp.sock",
                               "--listen", "127.0.0.1:0", "--disable-ticketing",
                               f"--usbredir-fd={a.fileno()}"],
                              pass_fds=[a.fileno()], capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
    finally:
        a.close()
        b.close()
    assert proc.returncode == 2, proc.stderr
    assert "connected, not listening" in proc.stderr, proc.stderr
    assert "server=off" in proc.stderr, proc.stderr
