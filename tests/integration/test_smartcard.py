# SPDX-License-Identifier: GPL-2.0-or-later
"""Smartcard end to end: spice-gtk's smartcard channel, with libcacard's
software virtual card, bridged to qemu's ccid-card-passthru.

qemu runs `-device usb-ccid` with a `ccid-card-passthru` on a
`-chardev socket,server=on`; the test, standing in for the launcher,
connects to it and passes the connection to the helper
(`--smartcard-fd FD`), as for libvirt's `<smartcard mode='passthrough'
type='unix'>`. The client is spice-gtk (SpiceClientGLib from Debian's
python) with `enable-smartcard` and three certificates in an NSS
database made here (`smartcard-certificates`, `smartcard-db`): libcacard
in spice-gtk emulates a CAC card with them, in a virtual reader. The test
guest (tests/guest/keydraw-ccid.c, keydraw.ccid=1) talks CCID over usbfs
to qemu's reader. What is shown, on qemu 7.2 and 10.0:

- the helper offers the smartcard channel (one log line) and logs the
  client's reader added;
- qemu's usb-ccid appears in the guest (08e6:4433: qemu attaches it when
  the reader is added), its slot reports a card present (the client's
  ATR reached qemu);
- the guest powers the card on and gets an ATR that is not qemu's
  built-in default (it is the virtual card's);
- an APDU from the guest (SELECT of the CAC PKI applet) goes through
  qemu, the helper and spice-gtk to libcacard's card, and its answer comes
  back to the guest: status 61 XX (XX bytes of answer waiting), and the
  GET RESPONSE that follows gets those XX bytes, naming the applet
  selected, and 90 00.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_smartcard.py client HOST PORT DB SECONDS [PASSWORD]

test_launcher_spice.py's `test_real_helper_smartcard` runs the same
client against a libvirt domain attached by the launcher.
"""

import sys

CERTS = ["qs-cert1", "qs-cert2", "qs-cert3"]
# qemu's ccid-card-passthru's built-in ATR, used until a client's comes.
QEMU_DEFAULT_ATR = "3bd518ff8091fe1fc38073c8211308"


def client_main(argv):
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, db, seconds = argv[:4]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port, enable_smartcard=True,
                            smartcard_certificates=CERTS, smartcard_db=db)
    if len(argv) > 4:
        session.set_property("password", argv[4])

    def say(*words):
        print(*words, flush=True)

    def on_event(ch, ev):
        say("event", ch.get_property("channel-type"), ch.get_property("channel-id"),
            ev.value_nick)

    def on_channel(sess, channel):
        say("channel", channel.get_property("channel-type"),
            channel.get_property("channel-id"), type(channel).__name__)
        GObject.Object.connect(channel, "channel-event", on_event)
        channel.connect()

    manager = Spice.SmartcardManager.get()
    GObject.Object.connect(manager, "reader-added", lambda m, r: say("reader-added"))
    GObject.Object.connect(manager, "card-inserted", lambda m, r: say("card-inserted"))
    GObject.Object.connect(session, "channel-new", on_channel)
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    say("done")


if __name__ != "__main__":
    import os
    import subprocess
    import tempfile

    import pytest

    from script_client import ScriptClient
    from serve_support import connect_chardev, require_tool, serving

    def drained(client):
        """The client's lines so far (none were waited for)."""
        while True:
            line = client.lines.get_nowait() if not client.lines.empty() else None
            if line is None:
                return client.seen
            client.seen.append(line)

    def make_nss_db(directory):
        """An NSS database with three self-signed certificates and their
        keys: what libcacard's software card needs (its CAC has three)."""
        certutil = require_tool("certutil", "libnss3-tools")
        db = f"sql:{directory}"
        noise = directory / "noise"
        noise.write_bytes(os.urandom(64))
        subprocess.run([certutil, "-N", "-d", db, "--empty-password"], check=True,
                       timeout=60, capture_output=True)
        for i, name in enumerate(CERTS):
            subprocess.run([certutil, "-S", "-d", db, "-n", name, "-s", f"CN={name}",
                            "-x", "-t", "CT,C,C", "-k", "rsa", "-g", "2048",
                            "-m", str(1000 + i), "-z", str(noise)],
                           check=True, timeout=120, capture_output=True)
        return db

    def smartcard_args(path):
        return ["-device", "qemu-xhci,id=qsxhci",
                "-device", "usb-ccid,id=qsccid,bus=qsxhci.0",
                "-chardev", f"socket,id=qscard,path={path},server=on,wait=off",
                "-device", "ccid-card-passthru,chardev=qscard,bus=qsccid.0"]

    @pytest.mark.timeout(500)
    def test_smartcard_virtual_card(qemu_factory, qemu_flavour, guest, helper_binary,
                                    tmp_path):
        dbdir = tmp_path / "nssdb"
        dbdir.mkdir()
        db = make_nss_db(dbdir)
        run = tempfile.mkdtemp(prefix="qs-card-", dir="/tmp")
        path = os.path.join(run, "card.sock")
        q = qemu_factory(cmdline_extra="keydraw.ccid=1", extra_args=smartcard_args(path))
        client = None
        try:
            q.wait_ready(timeout=120)
            chardev = connect_chardev(path)
            with serving(helper_binary, q, "--disable-ticketing",
                         f"--smartcard-fd={chardev.fileno()}",
                         pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()         # the helper holds it now
                client = ScriptClient(__file__, "127.0.0.1", port, db, 300)
                try:
                    got = q.wait_serial(r"CCID (get-response|failed)", timeout=300)
                finally:
                    client.stop()
                log = h.stderr()
            serial = q.serial_lines
            what = (f"client: {drained(client)}\nclient stderr: {client.stderr[-3000:]}\n"
                    f"helper: {log[-3000:]}\n"
                    f"guest: {[l for l in serial if 'FPS' not in l][-30:]}\n"
                    f"qemu: {q.stderr_tail()}")
            assert "Sanitizer" not in log and "runtime error" not in log, what
            offered = [l for l in log.splitlines() if "offering qemu's chardevs" in l]
            assert len(offered) == 1 and offered[0].endswith(
                "as SPICE channels: smartcard (smartcard channel 0, one reader, "
                "qemu's end connected)"), what
            assert "smartcard: the client added its reader" in log, what
            assert any(l.startswith("CCID reader ") for l in serial), what
            assert "CCID slot icc=present" in serial, what
            atr = [l.split("=", 1)[1] for l in serial if l.startswith("CCID atr=")]
            assert atr and atr[0].startswith("3b") and atr[0] != QEMU_DEFAULT_ATR, what
            assert got.group(1) == "get-response", what
            select = [l.split("=", 1)[1] for l in serial if l.startswith("CCID apdu response=")]
            assert len(select) == 1 and len(select[0]) == 4 and select[0].startswith("61"), what
            waiting = int(select[0][2:], 16)
            response = serial[got.line_index].split("=", 1)[1]
            assert len(response) == 2 * (waiting + 2) and response.endswith("9000"), what
            # The card's answer names the applet selected (its AID).
            assert "a0000000790100" in response, what
            print(what)                                     # shown with pytest -rP
        finally:
            if client and client.proc.poll() is None:
                client.stop()
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            os.rmdir(run)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
