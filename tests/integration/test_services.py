# SPDX-License-Identifier: GPL-2.0-or-later
"""The services of the harness start, answer and stop without leftovers."""

import os
import subprocess
import time

import pytest

from harness import DBusDaemon, Libvirtd, Xvfb
from harness.procs import wait_pid_gone

# These test the test tooling, not qemu-spice: run once (pytest.ini,
# `tooling`), beside the integration tests. The libvirtd one is not marked:
# libvirtd is the host's one daemon, which the integration tests' launcher
# cases use, so it runs with them, never beside them.


def _pid_alive(pid):
    return not wait_pid_gone(pid, 0)


def test_libvirtd_starts_answers_and_stops():
    running = subprocess.run(["pgrep", "-x", "libvirtd"], stdout=subprocess.PIPE,
                             text=True).stdout.split()
    if running:
        pytest.fail(f"a libvirtd not started by this test is running (pids {running}): "
                    "stop it, this test must start and stop its own")
    lv = Libvirtd()
    with lv:
        assert lv.owned
        out = lv.version()
        assert "Running hypervisor: QEMU" in out, out
        pids = dict(lv.pids)
        assert set(pids) == {"libvirtd", "virtlogd"}
        assert all(_pid_alive(p) for p in pids.values())
    for name, pid in pids.items():
        assert not _pid_alive(pid), f"{name} pid {pid} still running"
        assert not os.path.exists(Libvirtd.PIDFILES[name]), name
    left = subprocess.run(["pgrep", "-x", "libvirtd|virtlogd"], stdout=subprocess.PIPE,
                          text=True).stdout.split()
    assert [p for p in left if _pid_alive(int(p))] == []


@pytest.mark.tooling
def test_xvfb_starts_and_stops():
    with Xvfb() as x:
        pid = x.pid
        number = x.number
        assert os.path.exists(f"/tmp/.X11-unix/X{number}")
        res = subprocess.run(["xdpyinfo"], env={**os.environ, **x.env()},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=10)
        assert res.returncode == 0, res.stderr
        assert "dimensions:    1024x768 pixels" in res.stdout
    assert not _pid_alive(pid)
    assert not os.path.exists(f"/tmp/.X{number}-lock")
    assert not os.path.exists(f"/tmp/.X11-unix/X{number}")


@pytest.mark.tooling
def test_two_xvfb_get_different_displays():
    with Xvfb() as a, Xvfb() as b:
        assert a.display != b.display


@pytest.mark.tooling
def test_private_dbus_daemon():
    from gi.repository import Gio, GLib

    flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
             | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    with DBusDaemon() as bus:
        pid = bus.pid
        assert bus.address.startswith("unix:")
        owner = Gio.DBusConnection.new_for_address_sync(bus.address, flags, None, None)
        other = Gio.DBusConnection.new_for_address_sync(bus.address, flags, None, None)
        reply = owner.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "RequestName",
                                GLib.Variant("(su)", ("org.qemuspice.Test", 4)),
                                None, Gio.DBusCallFlags.NONE, 5000, None)
        assert reply.unpack() == (1,)  # primary owner
        reply = other.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "GetNameOwner",
                                GLib.Variant("(s)", ("org.qemuspice.Test",)),
                                None, Gio.DBusCallFlags.NONE, 5000, None)
        assert reply.unpack() == (owner.get_unique_name(),)
        owner.close_sync(None)
        other.close_sync(None)
    assert not _pid_alive(pid)


@pytest.mark.tooling
def test_qemu_bus_mode_owns_org_qemu(qemu_factory, qemu_flavour, dbus_daemon):
    """-display dbus,addr=<private bus>: qemu (host or chroot) joins the bus."""
    from gi.repository import Gio, GLib

    q = qemu_factory(guest=None, display="dbus-bus", dbus_address=dbus_daemon.address)
    conn = Gio.DBusConnection.new_for_address_sync(
        dbus_daemon.address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    try:
        deadline = time.monotonic() + 10
        while True:
            reply = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                   "org.freedesktop.DBus", "NameHasOwner",
                                   GLib.Variant("(s)", ("org.qemu",)), None,
                                   Gio.DBusCallFlags.NONE, 5000, None)
            if reply.unpack() == (True,):
                break
            assert q.alive(), q.stderr_tail()
            assert time.monotonic() < deadline, "org.qemu not on the bus in 10s"
            time.sleep(0.1)
        reply = conn.call_sync("org.qemu", "/org/qemu/Display1/VM",
                               "org.freedesktop.DBus.Properties", "Get",
                               GLib.Variant("(ss)", ("org.qemu.Display1.VM", "Name")),
                               GLib.VariantType("(v)"), Gio.DBusCallFlags.NONE, 5000, None)
        assert reply.unpack() == (q.name,)
    finally:
        conn.close_sync(None)
