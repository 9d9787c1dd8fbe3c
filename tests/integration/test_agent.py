# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest's own agent on com.redhat.spice.0 (--agent-fd), end to end.

qemu runs a virtserialport com.redhat.spice.0 on a `-chardev
socket,server=on`; the test, standing in for the launcher, connects to it
and passes the connection to the helper (`--agent-fd FD`). The test guest's
agent (tests/guest/keydraw-agent.c, keydraw.agent=spice) speaks the vdagent
protocol as spice-vdagent does toward a SPICE server: capabilities on every
request, text and image/png clipboard both ways, file transfer (it reports
each received file's length and FNV-1a hash on its serial console:
"FILEXFER done ... len=N fnv=H"). The client is spice-gtk (SpiceClientGLib
from Debian's python). What is shown, on qemu 7.2 and 10.0:

- the helper says the guest's agent serves (one line) and, once the guest
  agent spoke, the client is told the agent is connected and gets the
  guest's capabilities (not the emulated agent's: no FILE_XFER_DISABLED);
- a file of 300 000 random bytes sent with spice_main_channel_file_copy_async
  arrives in the guest with the same length and hash, and the client's copy
  completes (the guest's STATUS SUCCESS came back through us);
- text and an image/png clipboard offered by the client reach the guest
  byte for byte, and the guest's text and image/png reach the client byte
  for byte;
- the client's monitors config reaches the guest agent (which announced
  MONITORS_CONFIG: resizing is the guest agent's business here);
- a client disconnecting makes the guest agent hear CLIENT_DISCONNECTED.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_agent.py client HOST PORT FILE SECONDS
"""

import sys

FILE_SIZE = 300000
TEXT = "agent text \u00e9\u00e8 " * 40
IMAGE_SIZE = 70000          # over one 64 KiB read of the port
GUEST_TEXT = (5000, "guest-text-")
GUEST_IMAGE = (90000, "png-bytes!")
MONITOR = (1024, 768)

UTF8_TEXT = 1
IMAGE_PNG = 2
CAP_CLIPBOARD_BY_DEMAND = 5
CAP_FILE_XFER_DISABLED = 13


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def pattern(n, pat):
    p = pat.encode()
    return (p * (n // len(p) + 1))[:n]


def image_bytes():
    # Any bytes: neither the helper nor the agents look inside a PNG.
    import random
    return b"\x89PNG\r\n\x1a\n" + random.Random(7).randbytes(IMAGE_SIZE - 8)


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import Gio, GLib, GObject, SpiceClientGLib as Spice

    host, port, path, seconds = argv[:4]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {"started": False, "offered": []}
    offers = {UTF8_TEXT: TEXT.encode(), IMAGE_PNG: image_bytes()}

    def say(*words):
        print(*words, flush=True)

    def offer_next(main):
        if not state["offered"]:
            say("host-done")
            return False
        vtype = state["offered"][0]
        main.clipboard_selection_grab(0, [vtype])
        return False

    def on_copied(main, result, data):
        try:
            main.file_copy_finish(result)
            say("copied ok")
        except GLib.Error as e:
            say("copy-error", e.message)
        state["offered"] = [UTF8_TEXT, IMAGE_PNG]
        offer_next(main)

    def on_agent_update(main):
        if not main.get_property('agent-connected') or state["started"]:
            return
        if not main.agent_test_capability(CAP_CLIPBOARD_BY_DEMAND):
            return              # the guest's caps have not come yet
        state["started"] = True
        say("agent-caps", int(main.agent_test_capability(CAP_FILE_XFER_DISABLED)))
        main.file_copy_async([Gio.File.new_for_path(path)], Gio.FileCopyFlags.NONE,
                             None, None, None, on_copied, None)

    def on_request(main, selection, vtype):
        say("request", selection, vtype)
        main.clipboard_selection_notify(selection, vtype, offers.get(vtype, b""))
        if state["offered"] and state["offered"][0] == vtype:
            state["offered"].pop(0)
            GLib.timeout_add(500, offer_next, main)
        return True

    def on_grab(main, selection, types, ntypes):
        types = list(types)[:ntypes]
        say("grab", selection, *types)
        main.clipboard_selection_request(selection, types[0])
        return True

    def on_data(main, selection, vtype, data, size):
        data = bytes(data)
        say("data", selection, vtype, len(data), "%08x" % fnv1a(data))
        if vtype == IMAGE_PNG:
            # Last, a monitors config: the guest agent's to handle.
            main.update_display(0, 0, 0, MONITOR[0], MONITOR[1], False)
            main.update_display_enabled(0, True, False)
            say("monitors", int(main.send_monitor_config()))
            GLib.timeout_add(1000, loop.quit)

    def on_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
            GObject.Object.connect(channel, 'main-clipboard-selection-request', on_request)
            GObject.Object.connect(channel, 'main-clipboard-selection-grab', on_grab)
            GObject.Object.connect(channel, 'main-clipboard-selection', on_data)
        channel.connect()

    GObject.Object.connect(session, 'channel-new', on_channel)
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    say("done")


if __name__ != "__main__":
    import os
    import random
    import tempfile

    import pytest

    from line_client import LineClient
    from serve_support import connect_chardev, serving, virtio_port_args

    AGENT_PORT = "com.redhat.spice.0"

    def Client(port, path, seconds):
        """The client script above, its stdout lines read as they come."""
        return LineClient([__file__, "client", "127.0.0.1", port, path, seconds])

    def agent_session(q, h, port, src, data):
        """The whole exchange with the guest's agent serving: the guest's
        caps, the file, clipboard both ways, the monitors config, the guest
        hearing the client go (test_dbus_chardevs.py runs it too, over
        qemu's D-Bus chardev). Returns the diagnostics text."""
        q.wait_serial(r"AGENT port=", timeout=120)
        since = len(q.serial_lines)
        client = None

        def what():
            log = h.stderr()
            return (f"client: {client.lines if client else None}\n"
                    f"helper: {log[-3000:]}\n"
                    f"guest: {[l for l in q.serial_lines[since:] if not l.startswith('FPS')][-15:]}\nqemu: {q.stderr_tail()}")

        try:
            client = Client(port, src, 240)
            caps = client.wait("agent-caps", 90)
            assert caps == "agent-caps 0", what()     # the guest's caps, not ours
            q.wait_serial(r"AGENT ready", timeout=30, since=since)
            # The file, byte for byte.
            done = q.wait_serial(r"FILEXFER done id=\d+ name=payload\.bin len=(\d+) "
                                 r"fnv=([0-9a-f]{8})", timeout=180, since=since)
            assert int(done.group(1)) == FILE_SIZE, what()
            assert done.group(2) == "%08x" % fnv1a(data), what()
            assert client.wait("copied", 60) == "copied ok", what()
            # Client to guest: text, then an image.
            text = TEXT.encode()
            got = q.wait_serial(r"CLIPBOARD sel=0 type=1 len=(\d+) fnv=([0-9a-f]{8})",
                                timeout=60, since=since)
            assert (int(got.group(1)), got.group(2)) == (len(text), "%08x" % fnv1a(text)), \
                what()
            img = image_bytes()
            got = q.wait_serial(r"CLIPBOARD sel=0 type=2 len=(\d+) fnv=([0-9a-f]{8})",
                                timeout=60, since=since)
            assert (int(got.group(1)), got.group(2)) == (len(img), "%08x" % fnv1a(img)), \
                what()
            assert client.wait("host-done", 30), what()
            # Guest to client: text, then an image.
            q.serial_write("COPYREP %d %s" % GUEST_TEXT)
            want = pattern(*GUEST_TEXT)
            assert client.wait("data 0 1 ", 60) == \
                "data 0 1 %d %08x" % (len(want), fnv1a(want)), what()
            q.serial_write("COPYIMG %d %s" % GUEST_IMAGE)
            want = pattern(*GUEST_IMAGE)
            assert client.wait("data 0 2 ", 60) == \
                "data 0 2 %d %08x" % (len(want), fnv1a(want)), what()
            assert client.wait("monitors", 30) == "monitors 1", what()
            q.wait_serial(r"AGENT monitors n=1 first=%dx%d\+0\+0" % MONITOR, timeout=30,
                          since=since)
            assert client.wait("done", 30) == "done", what()
            err = client.finish()
            # The guest agent hears the client go.
            q.wait_serial(r"AGENT client-disconnected", timeout=30, since=since)
            return what() + "\n" + err[-2000:]
        finally:
            if client:
                client.finish(5)

    def payload(run):
        """A file of FILE_SIZE random bytes in `run`: (path, bytes)."""
        src = os.path.join(run, "payload.bin")
        data = random.Random(11).randbytes(FILE_SIZE)
        with open(src, "wb") as f:
            f.write(data)
        return src, data

    @pytest.mark.timeout(420)
    def test_agent_file_and_clipboard(qemu_factory, qemu_flavour, guest, helper_binary):
        run = tempfile.mkdtemp(prefix="qs-agent-", dir="/tmp")
        path = os.path.join(run, "agent.sock")
        src, data = payload(run)
        q = qemu_factory(cmdline_extra="keydraw.agent=spice", serial_input=True,
                         extra_args=virtio_port_args(AGENT_PORT,
                                                     f"path={path},server=on,wait=off"))
        chardev = connect_chardev(path)
        try:
            with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                         chardev.fileno(), pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()                 # the helper holds it now
                what = agent_session(q, h, port, src, data)
                log = h.stderr()
                assert "Sanitizer" not in log and "runtime error" not in log, what
                assert "agent: the guest's agent on com.redhat.spice.0 serves" in log, what
                assert "the guest's agent spoke" in log, what
                assert "emulated (text clipboard" not in log, what
                print(what)                                 # shown with pytest -rP
        finally:
            chardev.close()
            for p in (path, src):
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
            os.rmdir(run)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
