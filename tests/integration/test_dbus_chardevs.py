# SPDX-License-Identifier: GPL-2.0-or-later
"""qemu's D-Bus chardevs (`-chardev dbus`) as the helper's device channels,
with no descriptor option: what libvirt gives qemu when it runs the helper
for `<graphics type='spice'>` (its spicevmc chardevs, redirdevs and
smartcard become dbus chardevs).

qemu runs the guest's agent port com.redhat.spice.0, a webdav port
org.spice-space.webdav.0, a usb-redir device on org.qemu.usbredir, a
ccid-card-passthru on org.spice-space.smartcard, each on a `-chardev
dbus`, and a monitor on org.qemu.monitor.hmp.0. The helper finds them on
its display connection, registers a socket pair with each it serves and
serves them as the --agent-fd, --port-fd, --usbredir-fd and
--smartcard-fd tests do with sockets. On a p2p connection and on a bus,
qemu 7.2 and 10.0:

- a chardev given both ways (--agent-fd beside the D-Bus agent) is a
  usage error naming it;
- the helper says what it offers (usbredir, smartcard and webdav channels,
  with the chardevs' object paths), that the guest's agent serves, and
  leaves the monitor alone with why;
- webdav: spice-gtk's shared folder listed and a 300 000-byte file read by
  the guest with its SHA-256 (test_webdav.py's client);
- usbredir: qs-usbredir-dev behind a raw client's usbredir channel
  enumerated by the guest's kernel and removed when the client goes, twice
  (each client gets a fresh registration, hence qemu's hello);
- smartcard: spice-gtk's software card answers the guest's APDU
  (test_smartcard.py's client);
- the agent: test_agent.py's whole exchange (the guest's caps, a file,
  clipboard text and image both ways, a monitors config), answered by the
  test guest's agent through the D-Bus chardev;
- FEOpened: the guest's agent closing its port (RESTART) is seen by the
  helper, the client is told the agent went, and when the agent opens the
  port again the client is told it is back.

Run this file as a script for the agent watcher's client side:
  /usr/bin/python3 test_dbus_chardevs.py client HOST PORT SECONDS
"""

import sys


def client_main(argv):
    """Prints "agent 1" / "agent 0" as the main channel's agent comes and goes."""
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, seconds = argv[:3]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port, enable_usbredir=False)
    state = {"agent": None}

    def on_agent(main):
        now = int(main.get_property("agent-connected"))
        if now != state["agent"]:
            state["agent"] = now
            print("agent", now, flush=True)

    def on_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            GObject.Object.connect(channel, "main-agent-update", on_agent)
            channel.connect()

    GObject.Object.connect(session, "channel-new", on_channel)
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    print("done", flush=True)


if __name__ != "__main__":
    import contextlib
    import hashlib
    import os
    import socket
    import tempfile

    import pytest

    import test_agent
    import test_smartcard
    import test_webdav
    from harness import exits
    from harness.qemu import free_tcp_port
    from script_client import ScriptClient
    from serve_support import serving
    from test_display_support import Helper
    from usbredir_support import DEVICE, PRODUCT, UsbClient, device_binary

    PATH = "/org/qemu/Display1/Chardev_"

    def dbus_chardev_args():
        # libvirt's shapes: virtio-serial ports, a redirdev and a passthrough
        # smartcard on dbus chardevs; the monitor is qemu's own D-Bus client's.
        return ["-device", "virtio-serial-pci,id=qsports",
                "-chardev", "dbus,id=qsagent,name=com.redhat.spice.0",
                "-device", "virtserialport,bus=qsports.0,chardev=qsagent,"
                           "name=com.redhat.spice.0",
                "-chardev", f"dbus,id=qswebdav,name={test_webdav.PORT}",
                "-device", f"virtserialport,bus=qsports.0,chardev=qswebdav,"
                           f"name={test_webdav.PORT}",
                "-device", "qemu-xhci,id=qsxhci",
                "-chardev", "dbus,id=charredir0,name=org.qemu.usbredir",
                "-device", "usb-redir,chardev=charredir0,id=qsredir,bus=qsxhci.0",
                "-device", "usb-ccid,id=qsccid,bus=qsxhci.0",
                "-chardev", "dbus,id=qscard,name=org.spice-space.smartcard",
                "-device", "ccid-card-passthru,chardev=qscard,bus=qsccid.0",
                "-chardev", "dbus,id=qsmon,name=org.qemu.monitor.hmp.0",
                "-mon", "chardev=qsmon,mode=readline"]

    def attach_args(mode, bus):
        return ["--dbus-address", bus.address] if mode == "bus" else []

    @contextlib.contextmanager
    def served(mode, helper_binary, q, bus):
        """The helper on `q` (p2p, or on the bus), no ticket: (helper, port)."""
        if mode == "p2p":
            with serving(helper_binary, q, "--disable-ticketing") as (h, port):
                yield h, port
            return
        port = free_tcp_port()
        with Helper(helper_binary, [*attach_args(mode, bus), "--listen", f"127.0.0.1:{port}",
                                    "--disable-ticketing"], control=False) as h:
            h.wait_listening(port)
            yield h, port

    def refused_twice(mode, helper_binary, q, bus):
        """--agent-fd beside qemu's D-Bus agent chardev: a usage error naming it."""
        a, b = socket.socketpair()
        args = [str(helper_binary), "--listen", "127.0.0.1:0", "--disable-ticketing",
                "--agent-fd", str(a.fileno())]
        fds = [a.fileno()]
        p2p = None
        if mode == "p2p":
            p2p = q.dbus_p2p_client()
            args += ["--dbus-p2p-fd", str(p2p.fileno())]
            fds.append(p2p.fileno())
        else:
            args += attach_args(mode, bus)
        try:
            return exits.run(args, "the helper", expect=2, timeout=60, pass_fds=fds)
        finally:
            for s in (a, b, p2p):
                if s:
                    s.close()

    def check_webdav(q, port, share, what):
        big = (share / test_webdav.BIG).read_bytes()
        want_names = sorted([p.name for p in share.iterdir()] + [".spice-clipboard"])
        since = q.serial_mark()
        client = ScriptClient(test_webdav.__file__, "127.0.0.1", port, share, 240)
        try:
            got = q.wait_serial(r"WEBDAV (get|failed)", timeout=240, since=since)
        finally:
            client.stop()
        serial = q.serial_lines
        diag = f"{what()}\nwebdav client: {client.seen} {client.stderr[-1500:]}"
        names = sorted(line.split("WEBDAV entry ", 1)[1] for line in serial[since:]
                       if "WEBDAV entry " in line)
        assert names == want_names, diag
        assert got.group(1) == "get", diag
        assert (f"WEBDAV get status=200 len={len(big)} "
                f"sha256={hashlib.sha256(big).hexdigest()} name={test_webdav.BIG}") in \
            serial[got.line_index], diag

    def check_usbredir(q, port, dev_binary, what):
        for round_ in range(2):
            since = q.serial_mark()
            client = UsbClient(port, dev_binary)
            try:
                q.wait_serial(rf"USB add \S+ {DEVICE} product={PRODUCT}$", timeout=90,
                              since=since)
            finally:
                dev_log = client.close()
            assert f"connected {DEVICE}" in dev_log, f"round {round_}: {dev_log}\n{what()}"
            q.wait_serial(rf"USB remove \S+ {DEVICE}$", timeout=30, since=since)

    def check_smartcard(q, port, db, what):
        since = q.serial_mark()
        client = ScriptClient(test_smartcard.__file__, "127.0.0.1", port, db, 300)
        try:
            got = q.wait_serial(r"CCID (get-response|failed)", timeout=300, since=since)
        finally:
            client.stop()
        serial = q.serial_lines[since:]
        diag = (f"{what()}\nsmartcard client: {test_smartcard.drained(client)} "
                f"{client.stderr[-1500:]}")
        assert got.group(1) == "get-response", diag
        assert "CCID slot icc=present" in serial, diag
        atr = [l.split("=", 1)[1] for l in serial if l.startswith("CCID atr=")]
        assert atr and atr[0] != test_smartcard.QEMU_DEFAULT_ATR, diag
        response = q.serial_lines[got.line_index].split("=", 1)[1]
        assert response.endswith("9000") and "a0000000790100" in response, diag

    def check_agent_restart(q, h, port, what):
        """FEOpened: the guest's agent closing and opening its port."""
        client = ScriptClient(__file__, "127.0.0.1", port, 120)
        try:
            assert client.wait_line("agent 1", 60) == "agent 1", what()
            since = q.serial_mark()
            q.serial_write("RESTART 3000")
            q.wait_serial(r"AGENT port-closed ms=3000", timeout=30, since=since)
            assert client.wait_line("agent ", 30) == "agent 0", what()
            q.wait_serial(r"AGENT port=", timeout=60, since=since)
            assert client.wait_line("agent ", 60) == "agent 1", what()
        finally:
            client.stop()
        log = h.stderr()
        assert "agent: the guest closed its port com.redhat.spice.0" in log, what()
        assert "chardev com.redhat.spice.0: qemu's end closed (the guest closed its agent " \
               "port)" in log, what()
        assert "agent: the guest opened its port com.redhat.spice.0" in log, what()

    @pytest.mark.timeout(1500)
    @pytest.mark.parametrize("mode", ["p2p", "bus"])
    def test_dbus_chardevs(qemu_factory, qemu_flavour, guest, helper_binary, paths,
                           dbus_daemon, tmp_path, mode):
        dev_binary = device_binary(paths)
        share = test_webdav.make_share(tmp_path)
        dbdir = tmp_path / "nssdb"
        dbdir.mkdir()
        db = test_smartcard.make_nss_db(dbdir)
        run = tempfile.mkdtemp(prefix="qs-dbus-chardevs-", dir="/tmp")
        src, data = test_agent.payload(run)
        q = qemu_factory(display="dbus-p2p" if mode == "p2p" else "dbus-bus",
                         dbus_address=dbus_daemon.address, serial_input=True,
                         cmdline_extra=f"keydraw.agent=spice keydraw.usb=1 keydraw.ccid=1 "
                                       f"keydraw.webdav={test_webdav.BIG}",
                         extra_args=dbus_chardev_args())
        try:
            q.wait_serial(r"WEBDAV waiting", timeout=180)
            q.wait_serial(r"USB watching", timeout=120)
            q.wait_serial(r"NOTE input-modules", timeout=120)
            res = refused_twice(mode, helper_binary, q, dbus_daemon)
            assert res.returncode == 2, res.stderr
            assert ("com.redhat.spice.0: given by --agent-fd and also found as qemu's D-Bus "
                    f"chardev {PATH}qsagent") in res.stderr, res.stderr
            with served(mode, helper_binary, q, dbus_daemon) as (h, port):
                def what():
                    return (f"helper: {h.stderr()[-4000:]}\n"
                            f"guest: {[l for l in q.serial_lines if 'FPS' not in l][-25:]}\n"
                            f"qemu: {q.stderr_tail()}")
                # Registered at start: the guest sees the webdav port's host side.
                q.wait_serial(r"WEBDAV connected", timeout=60)
                log = h.stderr()
                offered = [l for l in log.splitlines()
                           if "offering qemu's D-Bus chardevs as SPICE channels" in l]
                assert offered == [
                    "qemu-spice: offering qemu's D-Bus chardevs as SPICE channels: "
                    f"usbredir.0 (usbredir channel 0, {PATH}charredir0), "
                    f"smartcard (smartcard channel 0, one reader, {PATH}qscard), "
                    f"{test_webdav.PORT} (webdav channel 0, {PATH}qswebdav)"], what()
                assert "agent: the guest's agent on com.redhat.spice.0 serves the clients " \
                       f"(qemu's D-Bus chardev {PATH}qsagent" in log, what()
                assert f"qemu's D-Bus chardev {PATH}qsmon (org.qemu.monitor.hmp.0) left " \
                       "alone: not a SPICE channel's name" in log, what()
                check_webdav(q, port, share, what)
                check_usbredir(q, port, dev_binary, what)
                check_smartcard(q, port, db, what)
                diag = test_agent.agent_session(q, h, port, src, data)
                check_agent_restart(q, h, port, what)
                log = h.stderr()
                print(diag)                                 # shown with pytest -rP
            assert "Sanitizer" not in log and "runtime error" not in log, log
            assert "the guest's agent spoke" in log, log
            assert "emulated (text clipboard" not in log, log
            assert log.count("chardev usbredir.0: qemu connected") >= 2, log
        finally:
            os.unlink(src)
            os.rmdir(run)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
