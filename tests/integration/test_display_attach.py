# SPDX-License-Identifier: GPL-2.0-or-later
"""Attaching the helper to qemu: the three attach modes, one clear line per
failure, a clean exit (status 0) when qemu goes away, and qemu 7.2's stale
first Scanout."""

import os
import shutil
import subprocess
import tempfile
import time

import pytest

from test_display_support import Helper, assert_exact, display_helper  # noqa: F401


@pytest.fixture
def sockdir():
    d = tempfile.mkdtemp(prefix="qsd-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def one_line_failure(helper, status, needle):
    rc = helper.wait_exit()
    err = helper.stderr().strip()
    assert rc == status, f"exit {rc}, stderr: {err}"
    assert needle in err, err
    assert len(err.splitlines()) == 1, f"more than one line: {err!r}"


@pytest.mark.parametrize("args, needle", [
    ([], "choose how to attach"),
    (["--qmp", "/x", "--dbus-address", "unix:path=/x"], "mutually exclusive"),
    (["--qmp", "/x", "--vm", "v"], "--vm only applies"),
    (["--dbus-p2p-fd", "-5"], "descriptor number"),
    (["--qmp", "/x", "--console", "-3"], "console number"),
    (["--qmp", "/x", "extra"], "unexpected argument"),
])
def test_usage_errors(helper_binary, args, needle):
    r = subprocess.run([str(helper_binary), *args], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 2, r
    assert needle in r.stderr, r.stderr


def test_no_such_qmp_socket(display_helper, sockdir):
    with Helper(display_helper, ["--qmp", os.path.join(sockdir, "nope.sock")],
                control=False) as h:
        one_line_failure(h, 1, "No such file or directory")


def test_p2p_fd_not_a_socket(display_helper):
    r, w = os.pipe()
    try:
        with Helper(display_helper, ["--dbus-p2p-fd", r], pass_fds=[r],
                    control=False) as h:
            one_line_failure(h, 1, "is not a socket")
    finally:
        os.close(r)
        os.close(w)


def test_qmp_attach_and_qemu_quit(qemu_factory, qemu_flavour, guest, display_helper,
                                  sockdir):
    qmp2 = os.path.join(sockdir, "qmp2.sock")
    q = qemu_factory(extra_args=["-qmp", f"unix:{qmp2},server=on,wait=off"])
    q.wait_ready()
    with Helper(display_helper, ["--qmp", qmp2]) as h:
        h.wait_frames()
        q("quit")
        rc = h.wait_exit()
        assert rc == 0, h.stderr()
        # Exactly one line about qemu going away, nothing else after attaching.
        after = [line for line in h.stderr().splitlines()
                 if "attached to VM" not in line and "test controls on" not in line
                 and "confinement" not in line
                 # the net layer's start-up line: which credentials it takes
                 and "credential" not in line
                 and "clipboard: registered" not in line
                 # which agent serves the clients (the emulated one here)
                 and "qemu-spice: agent: " not in line
                 # audio's one start-up line (here: qemu has no D-Bus audio)
                 and "qemu-spice: audio: " not in line
                 # qemu may close the listener's connection before the main one
                 and "qemu closed the listener connection" not in line]
        assert len(after) == 1 and after[0].endswith("; exiting"), h.stderr()


def test_qmp_not_p2p(qemu_factory, guest, display_helper, dbus_daemon, sockdir):
    qmp2 = os.path.join(sockdir, "qmp2.sock")
    q = qemu_factory(flavour="host", display="dbus-bus",
                     dbus_address=dbus_daemon.address,
                     extra_args=["-qmp", f"unix:{qmp2},server=on,wait=off"])
    q.wait_ready()
    with Helper(display_helper, ["--qmp", qmp2], control=False) as h:
        one_line_failure(h, 1, "not in p2p mode")


def test_console_absent(qemu_factory, guest, display_helper):
    q = qemu_factory(flavour="host")
    q.wait_ready()
    with Helper.p2p(display_helper, q, ["--console", "7"]) as h:
        one_line_failure(h, 1, "console 7 absent")


def test_bus_mode_pick_vm(qemu_factory, qemu_flavour, guest, display_helper,
                          dbus_daemon):
    q = qemu_factory(display="dbus-bus", dbus_address=dbus_daemon.address)
    q.wait_ready()
    with Helper(display_helper, ["--dbus-address", dbus_daemon.address,
                                 "--vm", "no-such-vm"], control=False) as h:
        one_line_failure(h, 1, "no VM named 'no-such-vm'")
    with Helper(display_helper, ["--dbus-address", dbus_daemon.address,
                                 "--vm", q.name]) as h:
        h.wait_frames()
        q.stop()
        h.wait_quiet()
        assert_exact(h, q)
        q("quit")
        assert h.wait_exit() == 0, h.stderr()
        assert "left the bus" in h.stderr() or "closed" in h.stderr(), h.stderr()


def test_second_p2p_client_closes_us(qemu_factory, guest, display_helper):
    """qemu 7.2 keeps one main p2p client: a second one takes the display
    objects off ours. qemu's clipboard proxy keeps our connection open, so
    the helper notices by probing, and leaves cleanly (no input would reach
    the guest any more, and the newcomer could not take the clipboard)."""
    q = qemu_factory(flavour="host")
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        # qemu swaps clients once the new one has done its D-Bus handshake.
        from gi.repository import Gio
        other = Gio.Socket.new_from_fd(q.dbus_p2p_client().detach())
        conn = Gio.DBusConnection.new_sync(
            other.connection_factory_create_connection(), None,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None)
        try:
            assert h.wait_exit() == 0, h.stderr()
            assert "another D-Bus display client took it over" in h.stderr(), h.stderr()
        finally:
            conn.close_sync(None)


def test_stale_first_scanout(qemu_factory, display_helper):
    """qemu 7.2 on a fresh VM: a stale 640x480 Scanout, then the SeaBIOS text
    screen (720x400) as Updates with the resize shown only as a Width/Height
    property change (qemu-dbus-display.md §6)."""
    q = qemu_factory(flavour="host", guest=None, vga="std", paused=True)
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        q.cont()
        time.sleep(3)           # SeaBIOS prints its banner, then idles
        q.stop()
        time.sleep(1)
        # The text cursor keeps blinking (qemu's VGA refresh, also while
        # stopped): compare everything, allowing one 9x16 character cell.
        qw, qh, qpx = q.screendump()
        hw, hh, hpx = h.dump()
        assert (hw, hh) == (qw, qh) == (720, 400), (hw, hh, qw, qh)
        diff = [i // 3 for i in range(0, len(qpx), 3) if qpx[i:i + 3] != hpx[i:i + 3]]
        if diff:
            xs = [p % qw for p in diff]
            ys = [p // qw for p in diff]
            assert max(xs) - min(xs) < 9 and max(ys) - min(ys) < 16, \
                f"{len(diff)} pixels differ in ({min(xs)},{min(ys)})-" \
                f"({max(xs)},{max(ys)}): more than the text cursor; {h.stats()}"
        stats = h.stats()
        assert not (stats["dropped"] + stats["early"]) or \
            "asking qemu for the whole surface" in h.stderr(), (stats, h.stderr())
