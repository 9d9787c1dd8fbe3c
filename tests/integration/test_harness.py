# SPDX-License-Identifier: GPL-2.0-or-later
"""The harness's own pieces against real qemu: QMP, fd passing, screendump."""

import pytest

from harness import QmpError
from harness.qemu import parse_ppm

# Tests the test tooling, not qemu-spice: run once (pytest.ini, `tooling`).
pytestmark = pytest.mark.tooling


def test_qmp_errors_raise(qemu_factory, qemu_flavour):
    q = qemu_factory(guest=None, display="none")
    assert q.qmp("query-status")["status"] == "running"
    with pytest.raises(QmpError) as err:
        q.qmp("no-such-command")
    assert err.value.error_class == "CommandNotFound"
    q.stop()
    assert q.qmp("query-status")["status"] == "paused"
    q.cont()
    assert q.qmp("query-status")["status"] == "running"


def test_dbus_p2p_client_speaks_dbus(qemu_factory, qemu_flavour):
    """getfd (SCM_RIGHTS) + add_client: the socket reaches qemu's Display1."""
    from gi.repository import Gio, GLib

    q = qemu_factory(guest=None, display="dbus-p2p", name="qs-test-p2p")
    sock = q.dbus_p2p_client()
    gsock = Gio.Socket.new_from_fd(sock.detach())
    conn = Gio.DBusConnection.new_sync(gsock.connection_factory_create_connection(), None,
                                       Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT,
                                       None, None)
    try:
        reply = conn.call_sync(None, "/org/qemu/Display1/VM",
                               "org.freedesktop.DBus.Properties", "Get",
                               GLib.Variant("(ss)", ("org.qemu.Display1.VM", "Name")),
                               GLib.VariantType("(v)"), Gio.DBusCallFlags.NONE, 5000, None)
        assert reply.unpack() == ("qs-test-p2p",)
    finally:
        conn.close_sync(None)


def test_send_key_rejects_unknown_qcode(qemu_factory):
    q = qemu_factory(guest=None, display="none")
    q.send_key("ctrl-alt-f1")
    with pytest.raises(QmpError):
        q.send_key("no_such_key")


def test_screendump_of_firmware_screen(qemu_factory, qemu_flavour):
    q = qemu_factory(guest=None, display="none", vga="std")
    w, h, pixels = q.screendump()
    assert w > 0 and h > 0 and len(pixels) == w * h * 3


def test_parse_ppm():
    assert parse_ppm(b"P6\n# c\n2 1\n255\n\x01\x02\x03\x04\x05\x06") == \
        (2, 1, b"\x01\x02\x03\x04\x05\x06")
    with pytest.raises(Exception):
        parse_ppm(b"P6\n2 2\n255\n\x00")
