# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue J, resize: a SPICE client's monitors config (VD_AGENT_MONITORS_CONFIG
through our emulated agent) becomes qemu's Console.SetUIInfo; on virtio-gpu
the guest (keydraw.resize=1) takes the new preferred mode, and the client's
display channel gets the new surface without reconnecting. On a device
without UI info (std-vga) the size stays and the helper says so once.
Run against every qemu flavour (host: 7.2; trixie: 10.0); both pass.

Run this file as a script for the SPICE client side (spice-gtk's
SpiceClientGLib):
  /usr/bin/python3 test_resize.py client HOST PORT WIDTH HEIGHT
It prints one line per observation and reads commands on stdin:
  send W H [D]  send a monitors config of W x H for display D (default 0;
                the others stay as spice-gtk has them: disabled here)
  dump PATH     write the current primary surface as a PPM
"""

import re
import sys
import time

VD_AGENT_CAP_MONITORS_CONFIG = 1
VD_AGENT_CAP_REPLY = 2


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    import ctypes

    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port = argv
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {'main': None, 'primary': None, 'announced': False}

    def say(*words):
        print(*words, flush=True)

    def on_agent_update(main):
        connected = main.get_property('agent-connected')
        monitors = connected and main.agent_test_capability(VD_AGENT_CAP_MONITORS_CONFIG)
        if monitors and not state['announced']:
            state['announced'] = True
            say('agent-monitors', int(bool(main.agent_test_capability(VD_AGENT_CAP_REPLY))))

    def send(w, h, head=0):
        main = state['main']
        main.update_display_enabled(head, True, False)
        main.update_display(head, 0, 0, w, h, False)
        say('sent', w, h, int(bool(main.send_monitor_config())))

    def dump(path):
        if not state['primary']:
            say('dumped none')
            return
        w, h, stride, imgdata = state['primary']
        raw = ctypes.string_at(imgdata, stride * h)
        rgb = bytearray(w * h * 3)
        for y in range(h):
            row = raw[y * stride:y * stride + w * 4]
            base = y * w * 3
            rgb[base:base + w * 3:3] = row[2::4]
            rgb[base + 1:base + w * 3:3] = row[1::4]
            rgb[base + 2:base + w * 3:3] = row[0::4]
        with open(path, 'wb') as f:
            f.write(b'P6\n%d %d\n255\n' % (w, h) + bytes(rgb))
        say('dumped', w, h)

    def on_stdin(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        words = line.split()
        if words[:1] == ['send']:
            send(*(int(w) for w in words[1:4]))
        elif words[:1] == ['dump']:
            dump(words[1])
        return True

    def on_primary_create(ch, fmt, width, height, stride, shmid, imgdata):
        state['primary'] = (width, height, stride, imgdata)
        say('primary', width, height, fmt)

    def on_primary_destroy(ch):
        state['primary'] = None
        say('primary-destroy')

    def on_event(ch, event):
        if event == Spice.ChannelEvent.OPENED:
            say('opened', type(ch).__name__)
        elif event != Spice.ChannelEvent.CLOSED:
            say('event', type(ch).__name__, int(event))

    def on_channel(sess, channel):
        GObject.Object.connect(channel, 'channel-event', on_event)
        if isinstance(channel, Spice.MainChannel):
            state['main'] = channel
            GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
        elif isinstance(channel, Spice.DisplayChannel):
            GObject.Object.connect(channel, 'display-primary-create', on_primary_create)
            GObject.Object.connect(channel, 'display-primary-destroy', on_primary_destroy)
        channel.connect()

    GObject.Object.connect(session, 'channel-new', on_channel)
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IOCondition.IN | GLib.IOCondition.HUP,
                      on_stdin)
    session.connect()
    GLib.timeout_add(120000, loop.quit)
    loop.run()
    session.disconnect()
    say('done')


# ---- tests ------------------------------------------------------------------------

if __name__ != "__main__":
    import pytest

    from harness.qemu import parse_ppm
    from script_client import ScriptClient
    from serve_support import READY_TIMEOUT, serving
    from test_display_support import count_differences

    class Client(ScriptClient):
        def __init__(self, port):
            super().__init__(__file__, "127.0.0.1", port, commands=True)

    def client_picture(client, path):
        client.command("dump", path)
        line = client.wait_line("dumped", 20)
        assert line and line != "dumped none", f"no primary surface to dump: {client.seen}"
        return parse_ppm(path.read_bytes())

    @pytest.mark.timeout(240)
    def test_monitors_config_resizes_virtio_gpu(qemu_factory, qemu_flavour, guest,
                                                helper_binary, tmp_path):
        """1024x768 asked by the client: SetUIInfo, the guest's new mode, a new
        surface on the same display channel, and the client's picture equal
        to qemu's screendump."""
        q = qemu_factory(vga="virtio", mode="idle",
                         cmdline_extra="keydraw.resize=1")
        ready = q.wait_ready(timeout=READY_TIMEOUT)
        assert (ready["w"], ready["h"]) == ("1280", "800"), ready
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            client = Client(port)
            try:
                line = client.wait_line("agent-monitors", 30)
                assert line == "agent-monitors 1", \
                    f"no agent with MONITORS_CONFIG: {client.seen}; {h.stderr()[-2000:]}"
                assert client.seen_or_wait("primary 1280 800", 30), client.seen
                mark = q.serial_mark()
                client.command("send", 1024, 768)
                assert client.wait_line("sent 1024 768 1", 10), client.seen
                q.wait_serial(r"^MODE 1024x768 dev=virtio-gpu", timeout=60, since=mark)
                line = client.wait_line("primary 1024 768", 30)
                assert line, f"no new surface: {client.seen}; {h.stderr()[-2000:]}"
                # One main and one display channel, opened once: no reconnect.
                opened = [s for s in client.seen if s.startswith("opened")]
                assert sorted(opened) == sorted(set(opened)), opened
                assert "opened DisplayChannel" in opened and "opened MainChannel" in opened
                assert "primary-destroy" in client.seen, client.seen
                assert not [s for s in client.seen if s.startswith("event")], client.seen

                # The picture, once the guest is still: equal to qemu's.
                time.sleep(1.5)
                q.stop()
                w, hgt, reference = q.screendump()
                assert (w, hgt) == (1024, 768)
                assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10
                deadline = time.monotonic() + 20
                while True:
                    cw, ch, pixels = client_picture(client, tmp_path / "client.ppm")
                    if (cw, ch) == (w, hgt) and pixels == reference:
                        break
                    if time.monotonic() > deadline:
                        n, where = count_differences(pixels, reference, w)
                        pytest.fail(f"client {cw}x{ch} differs from screendump {w}x{hgt}: "
                                    f"{n} pixels, first at {where}")
                    time.sleep(1)
                print("client:", client.seen)
            finally:
                client.stop()
            assert "cannot change its mode" not in h.stderr(), h.stderr()[-2000:]

    @pytest.mark.timeout(240)
    def test_monitors_config_second_head(qemu_factory, qemu_flavour, guest, helper_binary):
        """A virtio-gpu with two outputs is two consoles, two display
        channels; the client's display 1 asks for 1024x768: console 1's
        SetUIInfo, which the guest sees as connector 1's new preferred mode
        (keydraw drives only connector 0 and reports the others' modes),
        while console 0 keeps its mode."""
        q = qemu_factory(vga="virtio", mode="idle", cmdline_extra="keydraw.resize=1",
                         extra_args=["-global", "virtio-vga.max_outputs=2"])
        ready = q.wait_ready(timeout=READY_TIMEOUT)
        assert (ready["w"], ready["h"]) == ("1280", "800"), ready
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            client = Client(port)
            try:
                assert client.wait_line("agent-monitors 1", 30), client.seen
                assert client.seen_or_wait("primary 1280 800", 30), client.seen
                mark = q.serial_mark()
                client.command("send", 1024, 768, 1)
                assert client.wait_line("sent 1024 768 1", 10), client.seen
                q.wait_serial(r"PREFERRED connector=1 1024x768", timeout=60, since=mark)
                client.command("send", 800, 600, 1)
                q.wait_serial(r"PREFERRED connector=1 800x600", timeout=60, since=mark)
                time.sleep(2)       # longer than the guest's 2 s poll
                modes = [l for l in q.serial_lines[mark:] if "MODE " in str(l)]
                assert not modes, f"console 0 changed: {modes}"
                m = re.search(r"serving consoles (.*)", h.stderr())
                assert m and "1 (display channel 1)" in m.group(1), h.stderr()[-2000:]
                print("client:", client.seen)
            finally:
                client.stop()

    @pytest.mark.timeout(240)
    def test_grow_and_back_while_busy(qemu_factory, qemu_flavour, guest, helper_binary,
                                      tmp_path):
        """Bigger than keydraw's picture and back, with the activity rect
        animating: each time a new surface of the asked size on the same
        channel; the margin is plain and a key still repaints the key box."""
        q = qemu_factory(vga="virtio", mode="busy",
                         cmdline_extra="keydraw.resize=1")
        q.wait_ready(timeout=READY_TIMEOUT)
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            client = Client(port)
            try:
                assert client.wait_line("agent-monitors", 30), client.seen
                assert client.seen_or_wait("primary 1280 800", 30), client.seen
                mark = q.serial_mark()
                client.command("send", 1600, 900)
                q.wait_serial(r"^MODE 1600x900 ", timeout=60, since=mark)
                assert client.wait_line("primary 1600 900", 30), client.seen
                mark = q.serial_mark()
                q.send_key("a")
                key = q.wait_serial(r"^KEY code=30 color=(\w+)", timeout=20, since=mark)
                time.sleep(0.5)
                w, hgt, px = q.screendump()
                assert (w, hgt) == (1600, 900)

                def at(x, y):
                    return px[(y * w + x) * 3:(y * w + x) * 3 + 3].hex()
                assert at(112, 112) == key.group(1), (at(112, 112), key.group(0))
                assert {at(1500, 100), at(100, 850), at(1599, 899)} == {"1d2330"}

                mark = q.serial_mark()
                client.command("send", 1280, 800)
                q.wait_serial(r"^MODE 1280x800 ", timeout=60, since=mark)
                assert client.wait_line("primary 1280 800", 30), client.seen
                opened = [s for s in client.seen if s.startswith("opened")]
                assert sorted(opened) == sorted(set(opened)), opened
                assert not [s for s in client.seen if s.startswith("event")], client.seen
                assert [s.split()[1:3] for s in client.seen if s.startswith("primary ")] == \
                    [["1280", "800"], ["1600", "900"], ["1280", "800"]], client.seen
                w, hgt, _ = q.screendump()
                assert (w, hgt) == (1280, 800)
                assert not [s for s in q.serial_lines if s.startswith(("WARN", "FAIL"))], \
                    q.serial_lines[-20:]
            finally:
                client.stop()

    @pytest.mark.timeout(240)
    def test_monitors_config_refused_on_std_vga(qemu_factory, qemu_flavour, guest,
                                                helper_binary, tmp_path):
        """std-vga has no UI info: qemu refuses SetUIInfo, the helper logs one
        line (not one per config), the surface and the guest's mode stay."""
        q = qemu_factory(vga="std", mode="idle",
                         cmdline_extra="keydraw.resize=1")
        q.wait_ready(timeout=READY_TIMEOUT)
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            client = Client(port)
            try:
                line = client.wait_line("agent-monitors", 30)
                assert line, f"no agent: {client.seen}; {h.stderr()[-2000:]}"
                assert client.seen_or_wait("primary 1280 800", 30), client.seen
                mark = q.serial_mark()
                for size in ((1024, 768), (800, 600)):
                    client.command("send", *size)
                    assert client.wait_line(f"sent {size[0]} {size[1]} 1", 10), client.seen
                    time.sleep(2)
                assert client.wait_line("primary", 3) is None, client.seen
                assert "primary-destroy" not in client.seen, client.seen
                w, hgt, _ = q.screendump()
                assert (w, hgt) == (1280, 800)
                assert not [s for s in q.serial_lines[mark:] if s.startswith("MODE")]
                cw, ch, _ = client_picture(client, tmp_path / "client.ppm")
                assert (cw, ch) == (1280, 800)
            finally:
                client.stop()
            lines = [s for s in h.stderr().splitlines() if "cannot change its mode" in s]
            assert len(lines) == 1, h.stderr()[-2000:]
            print("helper:", lines[0])

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
