# SPDX-License-Identifier: GPL-2.0-or-later
"""org.qemuspice.Helper1.AddClient: a client's connected socket handed to
the helper, as libvirt does for virDomainOpenGraphicsFD (virt-manager's
and virt-viewer's local console).

The client is qs-test-client (spice-gtk) with --add-client: its session is
opened on a descriptor, spice-gtk asks for a socket per channel, and the
client makes a socket pair and passes one end with AddClient, as
virt-viewer does through libvirt. What is shown:

- over the control socket (--control-fd, p2p attach, qemu 7.2) and over
  the VM's bus (--dbus-address, qemu 10.0): without skipauth a client
  without the ticket is refused and one with it gets qemu's exact picture
  (the stopped guest's screendump, byte for byte); with skipauth a client
  without the ticket gets the exact picture too;
- tls=true on a helper with a TLS listener: the socket starts with the TLS
  handshake (Python's ssl, the test CA verified, as spice-gtk cannot do
  TLS on a socket it is given), then the link with the ticket and the
  main channel's MAIN_INIT;
- refusals reach the caller as the interface file says: a pipe is not a
  socket (Code13), tls=true without a TLS listener is NOT_SUPPORTED
  (Code15), and the helper serves on.
"""

import os
import socket
import ssl
import struct
import sys
import tempfile

import pytest

from harness.qemu import free_tcp_port, parse_ppm
from serve_support import READY_TIMEOUT, SUBJECT, make_pki, run_client, ticket_file
from test_display_support import Helper

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "faults"))
import spice_raw  # noqa: E402

PASSWORD = "add-client-pw"
IO_ERROR = "org.gtk.GDBus.UnmappedGError.Quark._g_2dio_2derror_2dquark.Code"


def add_client(address, bus, fd, skipauth, tls):
    """AddClient(fd, skipauth, tls) over D-Bus (our copy of fd is closed
    by the caller); returns None or the error's D-Bus name and message."""
    from gi.repository import Gio, GLib
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
    if bus:
        flags |= Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    conn = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    fds = Gio.UnixFDList.new()
    fds.append(fd)
    try:
        conn.call_with_unix_fd_list_sync(
            "org.qemuspice.Helper1" if bus else None, "/org/qemuspice/Helper1",
            "org.qemuspice.Helper1", "AddClient", GLib.Variant("(hbb)", (0, skipauth, tls)),
            None, Gio.DBusCallFlags.NONE, 10000, fds, None)
        return None
    except GLib.Error as e:
        return f"{Gio.DBusError.get_remote_error(e)}: {e.message}"
    finally:
        conn.close_sync(None)


class Served:
    """The helper attached to `q`, with its control on a socket (p2p) or on
    the VM's bus, a ticket, and optionally a TLS listener."""

    def __init__(self, helper_binary, q, tmp_path, mode, bus=None, tls=False):
        self.dir = tempfile.mkdtemp(prefix="qs-add-client-", dir="/tmp")
        self.ticket = ticket_file(tmp_path, "ticket", PASSWORD)
        self.port = free_tcp_port()
        args = ["--listen", f"127.0.0.1:{self.port}", "--ticket-file", self.ticket]
        if tls:
            self.pki = make_pki(tmp_path)
            args += ["--tls-listen", f"127.0.0.1:{free_tcp_port()}", "--tls-dir", self.pki]
        self.listener = None
        if mode == "control":
            path = os.path.join(self.dir, "ctl.sock")
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.listener.bind(path)
            self.listener.listen(4)
            self.address, self.bus = f"unix:path={path}", False
            self.helper = Helper.p2p(helper_binary, q,
                                     [*args, "--control-fd", self.listener.fileno()],
                                     control=False, pass_fds=[self.listener.fileno()])
            self.listener.close()
        else:
            self.address, self.bus = bus.address, True
            self.helper = Helper(helper_binary, ["--dbus-address", bus.address, *args],
                                 control=False)
        self.helper.wait_listening(self.port)
        if mode == "bus":
            self.wait_log("control: org.qemuspice.Helper1 on the VM's bus")

    def wait_log(self, text, timeout=20):
        import time
        deadline = time.monotonic() + timeout
        while text not in self.helper.stderr():
            assert time.monotonic() < deadline, f"no '{text}': {self.helper.stderr()}"
            time.sleep(0.05)

    def client(self, test_client, *args, check=True, timeout=30):
        bus = ["--add-client-bus"] if self.bus else []
        return run_client(test_client, "--add-client", self.address, *bus, *args,
                          timeout=timeout, check=check)

    def close(self):
        self.helper.close()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


def screenshot(served, test_client, tmp_path, name, *args):
    shot = tmp_path / name
    served.client(test_client, *args, "--settle", "700", "screenshot", shot)
    return parse_ppm(shot.read_bytes())


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode,flavour", [("control", "host"), ("bus", "trixie")])
def test_add_client_exact_picture(qemu_factory, guest, helper_binary, test_client, paths,
                                  dbus_daemon, tmp_path, mode, flavour):
    if flavour != "host":
        paths.require_chroot(flavour)
    display = "dbus-p2p" if mode == "control" else "dbus-bus"
    q = qemu_factory(flavour=flavour, display=display, dbus_address=dbus_daemon.address,
                     mode="idle")
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    served = Served(helper_binary, q, tmp_path, mode, bus=dbus_daemon)
    try:
        # A first session over AddClient: the helper has the picture.
        served.client(test_client, "--ticket-file", served.ticket, "--settle", "500", "info")
        q.stop()
        w, h, reference = q.screendump()
        assert (w, h) == (int(ready["w"]), int(ready["h"]))
        assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10
        # No skipauth, no ticket: refused.
        res = served.client(test_client, "info", check=False, timeout=15)
        assert res.returncode == 5 and "PERMISSION_DENIED" in res.stderr, res.stderr
        # No skipauth, the ticket; skipauth, no ticket: qemu's picture.
        for name, args in (("ticket.ppm", ["--ticket-file", served.ticket]),
                           ("skipauth.ppm", ["--skipauth"])):
            sw, sh, pixels = screenshot(served, test_client, tmp_path, name, *args)
            assert (sw, sh) == (w, h), name
            if pixels != reference:
                diff = [i // 3 for i in range(0, len(pixels), 3)
                        if pixels[i:i + 3] != reference[i:i + 3]]
                pytest.fail(f"{name}: {len(diff)} of {w * h} pixels differ from qemu's "
                            f"screendump, first at {[(p % w, p // w) for p in diff[:5]]}")
        log = served.helper.stderr()
    finally:
        served.close()
    assert "Sanitizer" not in log and "runtime error" not in log, log
    assert "linked from local:" in log, log
    assert "(added with no credential asked)" in log, log
    assert "link from local:" in log and "wrong ticket" in log, log


def read_main_init(sock, timeout=10):
    """Messages (mini header: u16 type, u32 size) until MAIN_INIT."""
    sock.settimeout(timeout)
    for _ in range(50):
        kind, size = struct.unpack("<HI", spice_raw._recv_exact(sock, 6))
        body = spice_raw._recv_exact(sock, size)
        if kind == spice_raw.MSG_MAIN_INIT:
            return body
    raise AssertionError("no MAIN_INIT in 50 messages")


@pytest.mark.timeout(200)
def test_add_client_tls_and_refusals(qemu_factory, helper_binary, tmp_path):
    q = qemu_factory(flavour="host", guest=None)
    served = Served(helper_binary, q, tmp_path, "control", tls=True)
    try:
        ours, theirs = socket.socketpair()
        err = add_client(served.address, False, theirs.fileno(), False, True)
        theirs.close()
        assert err is None, err
        ctx = ssl.create_default_context(cafile=str(served.pki / "ca-cert.pem"))
        with ctx.wrap_socket(ours, server_hostname="localhost") as tls:
            subject = dict(x[0] for x in tls.getpeercert()["subject"])
            assert subject["commonName"] == "localhost", subject
            linked = spice_raw.link_over(tls, spice_raw.CHANNEL_MAIN, password=PASSWORD)
            init = read_main_init(linked)
            assert struct.unpack_from("<I", init)[0] != 0     # a session id
        # Refusals, each named; the helper serves on.
        r, w = os.pipe()
        err = add_client(served.address, False, r, False, False)
        os.close(r)
        os.close(w)
        assert err and err.startswith(IO_ERROR + "13:") and "not a socket" in err, err
        log = served.helper.stderr()
    finally:
        served.close()
    # Without a TLS listener, tls=true is NOT_SUPPORTED.
    plain = Served(helper_binary, q, tmp_path, "control")
    try:
        ours, theirs = socket.socketpair()
        err = add_client(plain.address, False, theirs.fileno(), True, True)
        theirs.close()
        assert err and err.startswith(IO_ERROR + "15:") and "no TLS listener" in err, err
        ours.settimeout(5)
        assert ours.recv(1) == b""                          # closed, not kept
        ours.close()
        ours, theirs = socket.socketpair()
        assert add_client(plain.address, False, theirs.fileno(), True, False) is None
        theirs.close()
        linked = spice_raw.link_over(ours, spice_raw.CHANNEL_MAIN, password="not it")
        assert struct.unpack_from("<I", read_main_init(linked))[0] != 0
        linked.close()
        plain_log = plain.helper.stderr()
    finally:
        plain.close()
    assert "main channel 1:0 linked from local:1 (TLS)" in log, log
    assert "main channel 1:0 linked from local:1 (added with no credential asked)" in plain_log, \
        plain_log
    for text in (log, plain_log):
        assert "Sanitizer" not in text and "runtime error" not in text, text
