# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue J: the clipboard between a SPICE client (spice-gtk's SpiceClientGLib)
and qemu, through our helper's emulated agent and qemu's
org.qemu.Display1.Clipboard.

With the guest's agent (the real path): the test guest runs a small vdagent
of ours (tests/guest/keydraw-agent.c, keydraw.agent=1) on the virtio-serial
port com.redhat.spice.0, which qemu connects to its own agent chardev
(-chardev qemu-vdagent,clipboard=on; Qemu(vdagent=True)). The test drives
both ends: the guest copies on a serial command ("COPY <text>", "COPYREP
<bytes> <pattern>") and prints what it receives ("CLIPBOARD ... fnv=
text="); the SPICE client below copies or watches.

- guest -> client: the guest agent's GRAB (with a serial, which is what
  makes qemu's D-Bus clipboard pass it on) reaches the SPICE client as
  main-clipboard-selection-grab; the client's request comes back through
  our helper, qemu's D-Bus Request, qemu's agent and the guest agent, and
  the exact text arrives (also 5400 bytes: several agent chunks each way).
- client -> guest: the client's grab reaches the guest agent, which asks for
  the text; qemu asks our helper (a synchronous D-Bus Request), the helper
  asks the client, and the guest prints the exact text (3 KB as well).
- Registering our helper makes qemu reset the grab serials, and qemu's agent
  does that by closing the guest's port: the guest agent connects again
  ("AGENT host-closed", then "AGENT ready"), and the tests wait for that
  before copying (a grab made while the guest is away is not replayed).

Without an agent in the guest, qemu's other clipboard peer is its own VNC
server (-vnc beside -display dbus) with a small RFB client of ours that
speaks the extended clipboard (qemu ui/vnc-clipboard.c: the VNC peer
registers with qemu's clipboard only for clients announcing pseudo-encoding
0xC0A1E5CE). What is shown:

- client -> qemu: the SPICE client copies; qemu's clipboard (read through
  VNC: NOTIFY, REQUEST, PROVIDE) holds its exact text. That path runs
  qemu's synchronous D-Bus Request to our helper, our AGENT CLIPBOARD_REQUEST
  to the client and its answer.
- qemu -> client is NOT reachable this way: qemu's D-Bus clipboard forwards
  only grabs that carry a serial (ui/dbus-clipboard.c,
  dbus_clipboard_update_info returns early for !info->has_serial), and only
  qemu's vdagent and the D-Bus peer itself set one; VNC cut text has none,
  unless qemu's vdagent is connected to a guest agent, which gives every
  other peer's grab a serial before the D-Bus peer sees it (ui/vdagent.c,
  vdagent_send_clipboard_grab; on qemu 7.2 a VNC copy then reached the
  SPICE client). test_vnc_copy_not_forwarded_by_qemu pins that qemu
  behaviour down (it fails, and should be revisited, when a qemu starts
  forwarding it); in the same session it first shows the guest agent's
  copy reaching the client, so a broken qemu -> client path fails it
  rather than passing as an absence.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_clipboard.py client HOST PORT copy TEXT
  /usr/bin/python3 test_clipboard.py client HOST PORT watch SECONDS
"""

import os
import select
import socket
import struct
import sys
import time
import zlib

# RFB extended clipboard (qemu ui/vnc.h).
VNC_ENCODING_CLIPBOARD_EXT = -1063131698        # 0xC0A1E5CE as s32
CB_TEXT = 1 << 0
CB_CAPS = 1 << 24
CB_REQUEST = 1 << 25
CB_NOTIFY = 1 << 27
CB_PROVIDE = 1 << 28

VD_AGENT_CLIPBOARD_UTF8_TEXT = 1
VD_AGENT_CAP_CLIPBOARD_BY_DEMAND = 5


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, mode, arg = argv
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {'grabbed': False}

    def say(*words):
        print(*words, flush=True)

    def on_agent_update(main):
        connected = main.get_property('agent-connected')
        # spice-gtk drops grabs until the agent's capabilities came.
        by_demand = connected and main.agent_test_capability(VD_AGENT_CAP_CLIPBOARD_BY_DEMAND)
        say('agent', int(connected), int(bool(by_demand)))
        if mode == 'copy' and by_demand and not state['grabbed']:
            state['grabbed'] = True
            main.clipboard_selection_grab(0, [VD_AGENT_CLIPBOARD_UTF8_TEXT])
            say('grabbed')

    def on_request(main, selection, vtype):
        say('request', selection, vtype)
        if mode == 'copy' and vtype == VD_AGENT_CLIPBOARD_UTF8_TEXT:
            main.clipboard_selection_notify(selection, vtype, arg.encode())
            say('provided')
            return True
        return False

    def on_grab(main, selection, types, ntypes):
        say('qemu-grab', selection, *types)
        if VD_AGENT_CLIPBOARD_UTF8_TEXT in types:
            main.clipboard_selection_request(selection, VD_AGENT_CLIPBOARD_UTF8_TEXT)
        return True

    def on_data(main, selection, vtype, data, size):
        say('data', selection, vtype, bytes(data).decode(errors='replace'))

    def on_release(main, selection):
        say('qemu-release', selection)

    def on_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
            GObject.Object.connect(channel, 'main-clipboard-selection-request', on_request)
            GObject.Object.connect(channel, 'main-clipboard-selection-grab', on_grab)
            GObject.Object.connect(channel, 'main-clipboard-selection', on_data)
            GObject.Object.connect(channel, 'main-clipboard-selection-release', on_release)
        channel.connect()

    GObject.Object.connect(session, 'channel-new', on_channel)
    session.connect()
    GLib.timeout_add(int(float(arg) * 1000) if mode == 'watch' else 30000, loop.quit)
    loop.run()
    session.disconnect()
    say('done')


# ---- a minimal RFB client with the extended clipboard --------------------------

class Rfb:
    def __init__(self, path, timeout=20.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        version = self._read(12)
        assert version.startswith(b"RFB "), version
        self.sock.sendall(b"RFB 003.008\n")
        n = self._read(1)[0]
        types = self._read(n)
        assert 1 in types, f"no 'None' security type: {types!r}"
        self.sock.sendall(b"\x01")
        result = struct.unpack(">I", self._read(4))[0]
        assert result == 0, f"security result {result}"
        self.sock.sendall(b"\x01")                      # ClientInit, shared
        _w, _h = struct.unpack(">HH", self._read(4))
        self._read(16)                                  # pixel format
        self._read(struct.unpack(">I", self._read(4))[0])
        encodings = [0, VNC_ENCODING_CLIPBOARD_EXT]     # raw; clipboard ext
        self.sock.sendall(struct.pack(">BxH", 2, len(encodings)) +
                          b"".join(struct.pack(">i", e) for e in encodings))

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("VNC server closed the connection")
            buf += chunk
        return buf

    def close(self):
        self.sock.close()

    def read_cut(self, timeout):
        """The next ServerCutText as (flags, payload) (flags None: plain text).
        We never request framebuffer updates, so only cut texts and bells come."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                raise TimeoutError(f"no ServerCutText within {timeout} s")
            kind = self._read(1)[0]
            if kind == 2:                               # Bell
                continue
            assert kind == 3, f"unexpected VNC server message {kind}"
            self._read(3)
            length = struct.unpack(">i", self._read(4))[0]
            if length >= 0:
                return None, self._read(length)
            body = self._read(-length)
            return struct.unpack(">I", body[:4])[0], body[4:]

    def wait_ext(self, flag, timeout):
        deadline = time.monotonic() + timeout
        while True:
            flags, payload = self.read_cut(max(0.1, deadline - time.monotonic()))
            if flags is not None and flags & flag:
                return flags, payload

    def send_ext(self, flags, payload=b""):
        self.sock.sendall(struct.pack(">Bxxxi", 6, -(4 + len(payload))) +
                          struct.pack(">I", flags) + payload)

    def send_plain(self, text):
        self.sock.sendall(struct.pack(">BxxxI", 6, len(text)) + text)


# ---- tests ------------------------------------------------------------------------

if __name__ != "__main__":
    import pytest

    from script_client import ScriptClient
    from serve_support import READY_TIMEOUT, serving

    class Client(ScriptClient):
        def __init__(self, port, *args):
            super().__init__(__file__, "127.0.0.1", port, *args)

    def qemu_with_vnc(qemu_factory, tmp_path):
        os.chmod(tmp_path, 0o755)
        sock = tmp_path / "vnc.sock"
        q = qemu_factory(guest=None, vga="virtio",
                         extra_args=["-vnc", f"unix:{sock}"])
        return q, sock

    @pytest.mark.timeout(150)
    def test_client_copy_reaches_qemu(qemu_factory, qemu_flavour, helper_binary, tmp_path):
        text = "qemu-spice clipboard \u00e9t\u00e9 " + "0123456789" * 300     # 3 KB: 2 pieces
        q, sock = qemu_with_vnc(qemu_factory, tmp_path)
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            vnc = Rfb(str(sock))
            try:
                vnc.wait_ext(CB_CAPS, timeout=10)
                client = Client(port, "copy", text)
                try:
                    line = client.wait_line("grabbed", 20)
                    assert line, f"SPICE client never saw an agent: {client.seen}; " \
                                 f"helper: {h.stderr()[-2000:]}"
                    # qemu tells its VNC client that text is there ...
                    flags, _ = vnc.wait_ext(CB_NOTIFY, timeout=15)
                    assert flags & CB_TEXT, hex(flags)
                    # ... and fetches it from us when asked: a synchronous
                    # D-Bus Request to the helper, a CLIPBOARD_REQUEST to the
                    # SPICE client, its answer back.
                    vnc.send_ext(CB_REQUEST | CB_TEXT)
                    flags, payload = vnc.wait_ext(CB_PROVIDE, timeout=15)
                    assert flags & CB_TEXT, hex(flags)
                    raw = zlib.decompress(payload)
                    size = struct.unpack(">I", raw[:4])[0]
                    assert raw[4:4 + size] == text.encode(), raw[:80]
                    line = client.wait_line("provided", 5)
                    assert any(s.startswith("request 0 1") for s in client.seen), client.seen
                finally:
                    client.stop()
            finally:
                vnc.close()
            assert "registered with qemu's D-Bus clipboard" in h.stderr(), h.stderr()[-2000:]

    @pytest.mark.timeout(150)
    def test_clipboard_after_helper_restart(qemu_factory, qemu_flavour, helper_binary,
                                            tmp_path):
        """A second helper on the same qemu gets the clipboard too: the first
        one unregisters when it stops (qemu 7.2 would refuse the second peer
        otherwise: it drops a p2p peer only on Unregister)."""
        q, _sock = qemu_with_vnc(qemu_factory, tmp_path)
        for attempt in (1, 2):
            with serving(helper_binary, q, "--disable-ticketing") as (h, port):
                client = Client(port, "watch", 10)
                try:
                    line = client.wait_line("agent 1 1", 20)
                    assert line, f"attempt {attempt}: no agent: {client.seen}; " \
                                 f"helper: {h.stderr()[-2000:]}"
                finally:
                    client.stop()
                assert "registered with qemu's D-Bus clipboard" in h.stderr(), h.stderr()

    # ---- with the guest's agent ----------------------------------------------------

    def fnv1a(data):
        h = 2166136261
        for b in data:
            h = ((h ^ b) * 16777619) & 0xFFFFFFFF
        return h

    def guest_with_agent(qemu_factory):
        """A booted guest whose agent is connected to qemu's agent chardev."""
        q = qemu_factory(vga="virtio", vdagent=True)
        q.wait_ready(timeout=READY_TIMEOUT)
        q.wait_serial(r"^AGENT ready\b", timeout=60)
        return q

    def wait_agent_back(q, since, h):
        """After our helper registered: qemu reset the serials by closing the
        guest's port; the agent has connected again."""
        closed = q.wait_serial(r"^AGENT host-closed\b", timeout=30, since=since)
        q.wait_serial(r"^AGENT ready\b", timeout=30, since=closed.line_index)
        # qemu resets the guest's port when the registration reaches it; the
        # helper logs once qemu's reply is back, which on a loaded host came
        # after the guest's agent was ready again (a sanitizer run beside
        # other test runs, 2026-12-01): wait for the line, bounded.
        deadline = time.monotonic() + 10
        while "registered with qemu's D-Bus clipboard" not in h.stderr():
            assert time.monotonic() < deadline, h.stderr()[-2000:]
            time.sleep(0.05)

    def guest_clipboard_line(q, since, timeout=30):
        m = q.wait_serial(r"^CLIPBOARD sel=(\d+) type=(\d+) len=(\d+) fnv=([0-9a-f]{8}) "
                          r"text=(.*)$", timeout=timeout, since=since)
        return (int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4), 16),
                m.group(5))

    def remove_qemu_agent(q):
        """Take qemu's agent chardev away: its port first (the harness gives
        the port no id: found by type), then the chardev (id qsvdagent in
        harness/qemu.py). On qemu 10.0 the unplug alone makes qemu's vdagent
        leave the clipboard; qemu 7.2 keeps it registered until the chardev
        itself is gone (measured: a VNC copy was still forwarded)."""
        for child in q("qom-list", path="/machine/peripheral-anon"):
            if child["type"] == "child<virtserialport>":
                q("device_del", id=f"/machine/peripheral-anon/{child['name']}")
                q.qmp.wait_event("DEVICE_DELETED", timeout=10)
                q("chardev-remove", id="qsvdagent")
                return
        raise AssertionError("no virtserialport under /machine/peripheral-anon")

    @pytest.mark.timeout(240)
    def test_vnc_copy_not_forwarded_by_qemu(qemu_factory, qemu_flavour, guest, helper_binary,
                                            tmp_path):
        """Why qemu -> client is not shown through VNC: qemu keeps VNC's copy
        from its D-Bus peer (no serial). Fails, to be revisited, once a qemu
        passes it on.

        An absence proves nothing if our qemu -> client path is broken, so
        the same helper and SPICE client first get the guest agent's copy
        (a grab qemu forwards). Then qemu's agent chardev goes, since it
        would give VNC's grab a serial too; the client sees the guest's grab
        released. VNC's copy then reaches qemu's clipboard (a
        second VNC client is told of it) and not the SPICE client."""
        os.chmod(tmp_path, 0o755)
        sock = tmp_path / "vnc.sock"
        q = qemu_factory(vga="virtio", vdagent=True, extra_args=["-vnc", f"unix:{sock}"])
        q.wait_ready(timeout=READY_TIMEOUT)
        q.wait_serial(r"^AGENT ready\b", timeout=60)
        mark = q.serial_mark()
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            wait_agent_back(q, mark, h)
            client = Client(port, "watch", 120)
            vncs = []
            try:
                line = client.wait_line("agent 1 1", 30)
                assert line, f"no agent: {client.seen}; helper: {h.stderr()[-2000:]}"
                text = "qemu to client, from the guest agent"
                mark = q.serial_mark()
                q.serial_write(f"COPY {text}")
                q.wait_serial(r"^AGENT grabbed sel=0 ", timeout=20, since=mark)
                line = client.wait_line("qemu-grab", 30)
                assert line == "qemu-grab 0 1", \
                    f"control: the guest's grab never reached the client: {client.seen}; " \
                    f"helper: {h.stderr()[-2000:]}"
                line = client.wait_line("data ", 30)
                assert line is not None and line.split(" ", 3)[3] == text, \
                    f"control: no text at the client: {client.seen}"

                remove_qemu_agent(q)
                line = client.wait_line("qemu-release", 30)
                assert line == "qemu-release 0", \
                    f"the guest's grab stayed after its agent went: {client.seen}"

                vncs = [Rfb(str(sock)), Rfb(str(sock))]
                for vnc in vncs:
                    vnc.wait_ext(CB_CAPS, timeout=10)
                vncs[0].send_ext(CB_NOTIFY | CB_TEXT)
                vncs[0].send_plain(b"from vnc")
                flags, _ = vncs[1].wait_ext(CB_NOTIFY, timeout=10)
                assert flags & CB_TEXT, hex(flags)
                line = client.wait_line("qemu-grab", 5)
                assert line is None, client.seen
            finally:
                client.stop()
                for vnc in vncs:
                    vnc.close()

    @pytest.mark.timeout(240)
    def test_guest_copy_reaches_client(qemu_factory, qemu_flavour, guest, helper_binary):
        """guest agent GRAB -> qemu -> D-Bus Grab -> helper -> SPICE client's
        main-clipboard-selection-grab; its request back to the guest agent;
        the exact text arrives. Then 5400 bytes (agent chunks both legs)."""
        q = guest_with_agent(qemu_factory)
        mark = q.serial_mark()
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            wait_agent_back(q, mark, h)
            client = Client(port, "watch", 90)
            try:
                line = client.wait_line("agent 1 1", 30)
                assert line, f"SPICE client never saw an agent: {client.seen}; " \
                             f"helper: {h.stderr()[-2000:]}"
                text = "guest clipboard \u00e9t\u00e9 \u2603 end"
                for what, command, expected in (
                        ("short", f"COPY {text}", text),
                        ("long", "COPYREP 5400 0123456789abcdef\u00e9",
                         "0123456789abcdef\u00e9" * 300)):
                    mark = q.serial_mark()
                    q.serial_write(command)
                    q.wait_serial(r"^AGENT grabbed sel=0 ", timeout=20, since=mark)
                    line = client.wait_line("qemu-grab", 30)
                    assert line == "qemu-grab 0 1", \
                        f"{what}: no grab at the client: {client.seen}; helper: {h.stderr()[-2000:]}"
                    line = client.wait_line("data ", 30)
                    assert line is not None, f"{what}: no text at the client: {client.seen}; " \
                                             f"helper: {h.stderr()[-2000:]}"
                    assert line.startswith("data 0 1 "), line[:200]
                    got = line.split(" ", 3)[3]
                    assert got == expected, f"{what}: {len(got)} chars: {got[:120]!r}"
                    # The text came from the guest agent, on request.
                    n = len(expected.encode())
                    q.wait_serial(rf"^AGENT request sel=0 type=1 answered={n}$", timeout=10,
                                  since=mark)
            finally:
                client.stop()
            # A client that comes after the guest copied is offered the text.
            client = Client(port, "watch", 60)
            try:
                line = client.wait_line("data ", 30)
                assert line is not None and line.split(" ", 3)[3] == expected, \
                    f"late client: {[s[:80] for s in client.seen]}; helper: {h.stderr()[-2000:]}"
                assert "qemu-grab 0 1" in client.seen, client.seen
                # The guest gives up its copy: the client's grab goes too.
                q.serial_write("RELEASE")
                line = client.wait_line("qemu-release", 30)
                assert line == "qemu-release 0", f"no release at the client: {client.seen}"
            finally:
                client.stop()

    @pytest.mark.timeout(240)
    def test_client_copy_reaches_guest(qemu_factory, qemu_flavour, guest, helper_binary):
        """SPICE client grab -> helper -> D-Bus Grab -> qemu -> guest agent's
        CLIPBOARD_GRAB; the agent's request goes back to the client (qemu's
        synchronous D-Bus Request to the helper) and the guest prints the
        exact text: a short one, then 3 KB (several agent chunks)."""
        q = guest_with_agent(qemu_factory)
        mark = q.serial_mark()
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            wait_agent_back(q, mark, h)
            for what, text in (("short", "client clipboard \u00e9t\u00e9 \u2603"),
                               ("long", "qemu-spice clipboard \u00e9t\u00e9 " +
                                "0123456789" * 300)):
                mark = q.serial_mark()
                client = Client(port, "copy", text)
                try:
                    line = client.wait_line("grabbed", 30)
                    assert line, f"{what}: SPICE client never saw an agent: {client.seen}; " \
                                 f"helper: {h.stderr()[-2000:]}"
                    q.wait_serial(r"^AGENT grab sel=0 text=1$", timeout=30, since=mark)
                    sel, vtype, size, digest, shown = guest_clipboard_line(q, mark)
                    data = text.encode()
                    assert (sel, vtype) == (0, 1)
                    assert size == len(data), f"{what}: guest got {size} bytes, " \
                                              f"sent {len(data)}"
                    assert digest == fnv1a(data), f"{what}: guest's text differs"
                    assert shown == data[:300].decode(errors="replace"), shown[:120]
                    line = client.wait_line("provided", 10)
                    assert any(s.startswith("request 0 1") for s in client.seen), \
                        client.seen
                finally:
                    client.stop()
                # The client that copied is gone: the guest must not keep
                # offering text nobody can give (spice-server tells the guest
                # agent CLIENT_DISCONNECTED for the same reason).
                q.wait_serial(r"^AGENT release sel=0$", timeout=20, since=mark)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
