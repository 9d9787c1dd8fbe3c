# SPDX-License-Identifier: GPL-2.0-or-later
"""Folder sharing end to end: spice-gtk's webdav channel serving a host
directory to the test guest over the virtio port org.spice-space.webdav.0.

qemu runs that virtserialport on a `-chardev socket,server=on`; the test,
standing in for the launcher, connects to it and passes the connection to
the helper (`--port-fd org.spice-space.webdav.0=FD`), which offers it as
the webdav channel. The SPICE client is spice-gtk (SpiceClientGLib from
Debian's python) with the session's `shared-dir` set to a directory made
here; its webdav channel runs the WebDAV server on that directory. The
test guest (tests/guest/keydraw-webdav.c, keydraw.webdav=FILE) is the
guest's side, as spice-webdavd would be: it speaks the port's framing
(connection id, size, bytes), sends a PROPFIND of the folder (Depth: 1)
and a GET of FILE, and prints "WEBDAV entry NAME" per entry and "WEBDAV
get status=... len=... sha256=...". What is shown, on qemu 7.2 and 10.0:

- the helper offers the port as the webdav channel (one log line);
- the guest lists exactly the directory's names (a sub-folder, a name
  with a space and an ampersand; not the sub-folder's own file), and
  spice-gtk's own virtual folder `.spice-clipboard` (where files copied to
  its clipboard are offered), which every spice-gtk share has;
- the guest reads a 300 000-byte file (several frames of the port's
  framing) with the same length and SHA-256 as on the host.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_webdav.py client HOST PORT DIR SECONDS
"""

import sys

PORT = "org.spice-space.webdav.0"


def client_main(argv):
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, shared, seconds = argv[:4]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port, shared_dir=shared)

    def say(*words):
        print(*words, flush=True)

    def on_opened(channel, pspec):
        say("port", channel.get_property("port-name"),
            int(channel.get_property("port-opened")))

    def on_channel(sess, channel):
        say("channel", channel.get_property("channel-type"),
            channel.get_property("channel-id"), type(channel).__name__)
        if isinstance(channel, Spice.PortChannel):
            GObject.Object.connect(channel, "notify::port-opened", on_opened)
        channel.connect()

    GObject.Object.connect(session, "channel-new", on_channel)
    say("shared-dir", session.get_property("shared-dir"))
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    say("done")


if __name__ != "__main__":
    import hashlib
    import os
    import random
    import tempfile

    import pytest

    from script_client import ScriptClient
    from serve_support import connect_chardev, serving, virtio_port_args

    BIG = "big.bin"
    BIG_SIZE = 300000

    def make_share(root):
        share = root / "share"
        share.mkdir()
        (share / BIG).write_bytes(random.Random(21).randbytes(BIG_SIZE))
        (share / "alpha.txt").write_text("folder sharing\n")
        (share / "two words & more.txt").write_text("x\n")
        (share / "sub").mkdir()
        (share / "sub" / "inner.txt").write_text("not listed at depth 1\n")
        return share

    @pytest.mark.timeout(400)
    def test_webdav_folder(qemu_factory, qemu_flavour, guest, helper_binary, tmp_path):
        share = make_share(tmp_path)
        # spice-gtk serves a virtual folder of its own at the root, where files
        # copied to its clipboard go: the listing has it besides the host's.
        want_names = sorted([p.name for p in share.iterdir()] + [".spice-clipboard"])
        big = (share / BIG).read_bytes()
        run = tempfile.mkdtemp(prefix="qs-webdav-", dir="/tmp")
        path = os.path.join(run, "webdav.sock")
        q = qemu_factory(cmdline_extra=f"keydraw.webdav={BIG}",
                         extra_args=virtio_port_args(PORT, f"path={path},server=on,wait=off"))
        client = None
        try:
            q.wait_serial(r"WEBDAV waiting", timeout=120)
            chardev = connect_chardev(path)
            with serving(helper_binary, q, "--disable-ticketing", "--port-fd",
                         f"{PORT}={chardev.fileno()}", pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()         # the helper holds it now
                q.wait_serial(r"WEBDAV connected", timeout=60)
                client = ScriptClient(__file__, "127.0.0.1", port, share, 240)
                try:
                    got = q.wait_serial(r"WEBDAV (get|failed)", timeout=240)
                finally:
                    client.stop()
                log = h.stderr()
            serial = q.serial_lines
            what = (f"client: {client.seen}\nclient stderr: {client.stderr[-2000:]}\n"
                    f"helper: {log[-3000:]}\nguest: {serial[-30:]}\n"
                    f"qemu: {q.stderr_tail()}")
            assert "Sanitizer" not in log and "runtime error" not in log, what
            offered = [l for l in log.splitlines() if "offering qemu's chardevs" in l]
            assert len(offered) == 1 and offered[0].endswith(
                f"as SPICE channels: {PORT} (webdav channel 0, qemu's end connected)"), what
            assert "WEBDAV propfind status=207" in serial_text(serial), what
            names = sorted(line.split("WEBDAV entry ", 1)[1] for line in serial
                           if "WEBDAV entry " in line)
            assert names == want_names, what
            assert f"WEBDAV listed n={len(want_names)}" in serial_text(serial), what
            assert got.group(1) == "get", what
            line = serial[got.line_index]
            assert (f"WEBDAV get status=200 len={len(big)} "
                    f"sha256={hashlib.sha256(big).hexdigest()} name={BIG}") in line, what
            print(what)                                     # shown with pytest -rP
        finally:
            if client and client.proc.poll() is None:
                client.stop()
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            os.rmdir(run)

    def serial_text(lines):
        return "\n".join(lines)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
