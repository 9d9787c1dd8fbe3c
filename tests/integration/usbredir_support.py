# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the usbredir tests (test_usbredir.py, the faults'
test_fault_usbredir.py): qemu's usb-redir arguments, and a raw SPICE
client with qs-usbredir-dev (tests/tools) behind its usbredir channel. No
tests here."""

import os
import struct
import subprocess
import sys
import threading
import time

import pytest

_FAULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "faults")
if _FAULTS not in sys.path:
    sys.path.append(_FAULTS)
import spice_raw  # noqa: E402

CHANNEL_USBREDIR = 9
# qs-usbredir-dev's device, as the guest's sysfs shows it.
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

    def __init__(self, port, device_binary, password=""):
        self.main = spice_raw.Channel(spice_raw.link(port, spice_raw.CHANNEL_MAIN,
                                                     password=password), "main")
        deadline = time.monotonic() + spice_raw.LINK_TIMEOUT
        while spice_raw.MSG_MAIN_INIT not in self.main.first:
            if self.main.eof.is_set() or time.monotonic() > deadline:
                self.main.close()
                raise spice_raw.LinkError("no MAIN_INIT from the server")
            time.sleep(0.01)
        session_id = struct.unpack_from("<I", self.main.first[spice_raw.MSG_MAIN_INIT])[0]
        self.dev = subprocess.Popen([str(device_binary)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.usb = RelayChannel(spice_raw.link(port, CHANNEL_USBREDIR, session_id,
                                               password=password), self.dev.stdin)
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
