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

from harness import exits
from serve_support import serving
from test_display_support import Helper, assert_exact, display_helper  # noqa: F401


@pytest.fixture
def sockdir():
    d = tempfile.mkdtemp(prefix="qsd-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def one_line_failure(helper, status, needle):
    helper.expect_exit(status)
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
    r = exits.run([helper_binary, *args], "the helper", expect=2)
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
                 # the console page's one start-up line (spice-html5 kept gzipped)
                 and "qemu-spice: console page: " not in line
                 # qemu may close the listener's connection before the main one
                 and "qemu closed the listener connection" not in line]
        assert len(after) == 1 and after[0].endswith("; exiting"), h.stderr()


def test_qemu_gone_before_start(qemu_factory, guest, display_helper, sockdir,
                                monkeypatch):
    """qemu closes the D-Bus connection while the helper starts: it still
    exits, status 0, with its one line (its quit once came before the main
    loop ran, and was lost). QS_TEST_DISPLAY_START_DELAY_MS (test builds)
    holds the start back until qemu has quit."""
    qmp2 = os.path.join(sockdir, "qmp2.sock")
    q = qemu_factory(extra_args=["-qmp", f"unix:{qmp2},server=on,wait=off"])
    q.wait_ready()
    monkeypatch.setenv("QS_TEST_DISPLAY_START_DELAY_MS", "4000")
    with Helper(display_helper, ["--qmp", qmp2]) as h:
        deadline = time.monotonic() + 20
        while "starting the display in 4000 ms" not in h.stderr():
            assert h.proc.poll() is None, h.stderr()
            assert time.monotonic() < deadline, f"no hold line: {h.stderr()}"
            time.sleep(0.05)
        q("quit")
        q.proc.wait(timeout=15)
        rc = h.wait_exit(timeout=20)
        assert rc == 0, h.stderr()
        assert "qemu closed the D-Bus connection; exiting" in h.stderr(), h.stderr()


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


# How often a helper asks qemu 7.2 whether it still serves the display, with
# no client and with one (TAKEOVER_PROBE_*_S in helper/display/qs-display.c).
PROBE_IDLE_S = 60
PROBE_WATCHED_S = 3


def take_over_display(q):
    """A second D-Bus display client on qemu `q`; qemu swaps clients once
    its D-Bus handshake is done. Returns the connection (close it)."""
    from gi.repository import Gio
    other = Gio.Socket.new_from_fd(q.dbus_p2p_client().detach())
    return Gio.DBusConnection.new_sync(
        other.connection_factory_create_connection(), None,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None)


def test_second_p2p_client_closes_us(qemu_factory, guest, display_helper):
    """qemu 7.2 keeps one main p2p client: a second one takes the display
    objects off ours. qemu's clipboard proxy keeps our connection open, so
    the helper notices by probing (with no client, every PROBE_IDLE_S), and
    leaves cleanly (no input would reach the guest any more, and the
    newcomer could not take the clipboard)."""
    q = qemu_factory(flavour="host")
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        conn = take_over_display(q)
        try:
            assert h.wait_exit(timeout=PROBE_IDLE_S + 10) == 0, h.stderr()
            assert "another D-Bus display client took it over" in h.stderr(), h.stderr()
        finally:
            conn.close_sync(None)


def test_takeover_found_when_a_client_arrives(qemu_factory, guest, display_helper, test_client):
    """An idle helper probes rarely, but a client's arrival probes at once:
    taken over before any client came, the helper leaves as soon as the
    first one links, instead of serving a display qemu no longer updates
    until its next periodic probe (PROBE_WATCHED_S later with a client,
    PROBE_IDLE_S without)."""
    q = qemu_factory(flavour="host")
    q.wait_ready()
    with serving(display_helper, q, "--disable-ticketing") as (h, port):
        # Taken over only once the helper has started its display (the audio
        # line follows): it listens before, and a takeover that early is
        # another case (qemu then closes our connection).
        deadline = time.monotonic() + 30
        while "audio:" not in h.stderr():
            assert time.monotonic() < deadline, f"no audio line in 30 s: {h.stderr()}"
            time.sleep(0.05)
        conn = take_over_display(q)
        try:
            arrived = time.monotonic()
            client = subprocess.Popen(
                [str(test_client), "--port", str(port), "--timeout", "20", "info",
                 "sleep", "20000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                assert h.wait_exit(timeout=PROBE_IDLE_S + 10) == 0, h.stderr()
                left_after = time.monotonic() - arrived
            finally:
                client.kill()
                client.wait(timeout=10)
            assert "another D-Bus display client took it over" in h.stderr(), h.stderr()
            print(f"helper left {left_after:.2f} s after the client started")
            # Client start to the helper's exit: 0.07-0.12 s on the plain build,
            # 0.22 s on the sanitizer build (measured 2026-12-03); the
            # periodic probe would take PROBE_WATCHED_S at least.
            assert left_after < PROBE_WATCHED_S - 1, \
                f"the helper left {left_after:.1f} s after the client started: the " \
                f"arrival did not probe, a periodic probe did\n{h.stderr()}"
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
