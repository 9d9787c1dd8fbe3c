# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue W: the clipboard and resize against a real Linux desktop guest's
agent, not our stand-in (tests/guest/keydraw-agent.c).

The guest is tests/guest/make-desktop's Debian 12 image: Debian's kernel,
systemd, lightdm logging 'user' into openbox on Xorg (modesetting on
virtio-vga), and spice-vdagentd with the session's spice-vdagent as Debian
ships and starts them (udev + systemd for the daemon, the session's
/etc/xdg/autostart for the agent). qemu gives the guest the virtserialport
com.redhat.spice.0 on a listening socket chardev; the test, standing in for
the launcher, connects to it and passes the connection to the helper
(--agent-fd), as test_agent.py does. The client is spice-gtk
(SpiceClientGLib from Debian's python), driven by lines on its stdin. The
guest's side is read and written with xclip and xrandr from the root shell
on its serial console (desktop_support.DesktopShell). What is shown, on
qemu 7.2 and 10.0:

- the guest's spice-vdagent connects through the helper and the client is
  told the agent is there with the guest's capabilities;
- client -> guest: a UTF-8 text the client grabs is what `xclip -o` reads
  from the guest's X CLIPBOARD, byte for byte (SHA-256 and length);
- guest -> client: a text put on the X CLIPBOARD with `xclip -i` reaches the
  client byte for byte. spice-vdagentd writes each agent message as ONE
  chunk on its port, whatever its size (our stand-in and spice-gtk cut at
  2048 bytes); the helper, as spice-server, reads a chunk of any size in
  pieces of 2048 bytes (helper/wire/qs-agent-chunk.c), so a 5000-byte
  text arrives whole (before it did, chunks over 2048 bytes broke the
  framing);
- resize: the client's monitors config makes spice-vdagent change the X
  mode (`xrandr` shows the size), and the client's primary surface follows.
  spice-vdagentd takes a monitors config only when its size is exactly the
  header and the monitors ("invalid message size for VDAgentMonitorsConfig"
  otherwise), and spice-gtk appends physical sizes: the helper passes the
  guest's agent the config without them (qs_agent_monitors_body_for_guest).
  Against qemu's own spice-server, the control, X is not resized:
  spice-server hands the config to virtio-gpu as a new preferred mode,
  which nothing in an openbox session applies (a desktop such as GNOME
  follows it); an expected failure there.

Every test runs against the helper and against [spice-server] (the
control, qemu's own -spice with a spicevmc agent port, so a failure can be
told apart from the guest's), on qemu 7.2 and 10.0 ([helper-host],
[spice-server-host], [helper-trixie], [spice-server-trixie]), each time on
the file's one boot for that server and qemu (desktop_support.desktop,
module-scoped); each test leaves the guest as it found it.

These tests carry the `desktop` marker and run only when asked for
(`-m desktop`): the image takes minutes to build the first time and the
guest ~a minute to boot under TCG (docs/guest-requirements.md).

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_desktop_clipboard.py client HOST PORT SECONDS
"""

import hashlib
import sys

UTF8_TEXT = 1
IMAGE_PNG = 2
CAP_MONITORS_CONFIG = 1


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def png(width, height, seed):
    """A valid RGB PNG: smooth gradients with a little noise, so it is a few
    KiB (over one 2048-byte agent chunk, few lines to type into the guest)."""
    import random
    import struct
    import zlib
    rnd = random.Random(seed)
    rows = b"".join(b"\0" + bytes(v for x in range(width)
                                  for v in (x // 8 * 20 % 256, y // 8 * 20 % 256,
                                            (rnd.random() < 0.02) * 128))
                    for y in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    """Commands on stdin: 'offer PATH [TYPE]' (grab the clipboard with the
    file's bytes as UTF-8 text, or as the agent's TYPE), 'monitor W H',
    'quit'. Events on stdout: 'agent
    caps-monitors=N', 'request SEL TYPE', 'grab SEL TYPES...', 'data SEL TYPE
    LEN SHA256', 'primary W H', 'monitors OK'."""
    from gi.repository import GObject

    from desktop_client import run, say

    state = {"offer": b""}

    def on_request(main, selection, vtype):
        say("request", selection, vtype)
        main.clipboard_selection_notify(selection, vtype, state["offer"])
        return True

    def on_grab(main, selection, types, ntypes):
        types = list(types)[:ntypes]
        say("grab", selection, *types)
        for vtype in (UTF8_TEXT, IMAGE_PNG):
            if vtype in types:
                main.clipboard_selection_request(selection, vtype)
                break
        return True

    def on_data(main, selection, vtype, data, size):
        data = bytes(data)
        say("data", selection, vtype, len(data), sha256(data))

    def on_primary(display, fmt, width, height, stride, shmid, imgdata):
        say("primary", width, height)

    def on_main(main):
        GObject.Object.connect(main, 'main-clipboard-selection-request', on_request)
        GObject.Object.connect(main, 'main-clipboard-selection-grab', on_grab)
        GObject.Object.connect(main, 'main-clipboard-selection', on_data)

    def offer(main, words):
        with open(words[1], "rb") as f:
            state["offer"] = f.read()
        main.clipboard_selection_grab(0, [int(words[2]) if len(words) > 2 else UTF8_TEXT])
        say("offered", len(state["offer"]))

    def monitor(main, words):
        w, h = int(words[1]), int(words[2])
        main.update_display(0, 0, 0, w, h, False)
        main.update_display_enabled(0, True, False)
        say("monitors", int(main.send_monitor_config()))

    run(argv,
        lambda main: ["caps-monitors=%d" % int(main.agent_test_capability(CAP_MONITORS_CONFIG))],
        on_main=on_main,
        on_display=lambda d: GObject.Object.connect(d, 'display-primary-create', on_primary),
        commands={"offer": offer, "monitor": monitor})


if __name__ != "__main__":
    import time

    import pytest

    from desktop_support import X_ENV, _no_stray_qemu, desktop, sanitizer_clean, \
        xrandr_current  # noqa: F401 - fixtures

    pytestmark = pytest.mark.desktop
    # Text with multi-byte UTF-8, over one agent chunk (2048 bytes) and the
    # X selection's usual single transfer size is not an issue at this size.
    HOST_TEXT = ("host \u00e9\u00e8\u00fc \u20ac line\n" * 300).encode()
    # spice-vdagentd writes a whole agent message as one chunk on its port
    # (not cut at 2048 bytes as spice-gtk and our stand-in do): a text up to
    # 2028 bytes fits one chunk of 2048.
    GUEST_TEXT_SMALL = ("guest \u00e0\u00df \u2603 text\n" * 90).encode()
    GUEST_TEXT = ("guest \u00e0\u00df \u2603 text\n" * 250).encode()
    NEW_SIZE = (1024, 768)

    # The agent's clipboard types as X targets, and the guest's file for each.
    X_TARGET = {UTF8_TEXT: ("UTF8_STRING", "txt"), IMAGE_PNG: ("image/png", "png")}

    def client_offer(shell, client, tmp_path, data, vtype, what):
        """`data` the client grabs as `vtype` is what `xclip -o` reads from
        the guest's X CLIPBOARD, and the client was asked for it."""
        target, ext = X_TARGET[vtype]
        src = tmp_path / f"host.{ext}"
        src.write_bytes(data)
        mark = client.mark()
        client.send(f"offer {src} {vtype}")
        assert client.wait("offered", 10, mark), what()
        shell.wait_for(f"env {X_ENV} timeout 10 xclip -o -selection clipboard "
                       f"-target TARGETS | grep -qx {target}", 30,
                       f"the guest's X clipboard offer of {target}")
        shell.x(f"timeout 30 xclip -o -selection clipboard -target {target} "
                f">/tmp/from-host.{ext}")
        digest, size = shell.sha256(f"/tmp/from-host.{ext}")
        assert (size, digest) == (len(data), sha256(data)), what()
        assert client.wait(f"request 0 {vtype}", 10, mark), what()

    def guest_copy(shell, client, data, vtype, what):
        """`data` put on the guest's X CLIPBOARD by xclip as `vtype`'s target
        reaches the client."""
        target, ext = X_TARGET[vtype]
        shell.put_file(f"/tmp/to-host.{ext}", data)
        mark = client.mark()
        shell.x(f"xclip -i -selection clipboard -target {target} </tmp/to-host.{ext}")
        got = client.wait("data 0 ", 60, mark)
        assert got == f"data 0 {vtype} {len(data)} {sha256(data)}", what()

    def helper_clean(h, what, *extra):
        if h is not None:
            assert sanitizer_clean(h.stderr()), what() + "".join(extra)

    @pytest.mark.timeout(900)
    def test_desktop_clipboard(desktop, helper_binary, tmp_path):
        shell = desktop.shell
        with desktop.serve(helper_binary, __file__) as (client, h, what):
            agent = client.wait("agent", 120)
            assert agent == "agent caps-monitors=1", what()
            assert client.wait("primary", 60), what()

            # Client -> guest: the client's grab, read by xclip from X.
            client_offer(shell, client, tmp_path, HOST_TEXT, UTF8_TEXT, what)
            # Guest -> client: xclip owns the X clipboard, spice-vdagent
            # grabs, the client asks and gets the bytes.
            guest_copy(shell, client, GUEST_TEXT_SMALL, UTF8_TEXT, what)
            err = client.finish()
            helper_clean(h, what, err[-2000:])
            if h is not None:
                assert "agent: the guest's agent on com.redhat.spice.0 serves" in h.stderr(), \
                    what()
            print(f"boot: {desktop.times}")                  # shown with pytest -rP
        shell.run("rm -f /tmp/from-host.txt /tmp/to-host.txt")

    @pytest.mark.timeout(900)
    def test_desktop_clipboard_to_client_large(desktop, helper_binary):
        """A guest text over one 2048-byte chunk reaches the client."""
        with desktop.serve(helper_binary, __file__) as (client, h, what):
            assert client.wait("agent", 120) == "agent caps-monitors=1", what()
            guest_copy(desktop.shell, client, GUEST_TEXT, UTF8_TEXT, what)
            helper_clean(h, what)
        desktop.shell.run("rm -f /tmp/to-host.txt")


    @pytest.mark.timeout(900)
    def test_desktop_agent_restart(desktop, helper_binary, tmp_path):
        """spice-vdagentd restarted in the guest: the client is told the
        agent went and came back, and is served again (the clipboard both
        ways). Through the helper's socket chardev the port's close is not
        seen; the agent's new capabilities, asking for the client's, tell."""
        shell = desktop.shell
        with desktop.serve(helper_binary, __file__) as (client, h, what):
            assert client.wait("agent", 120) == "agent caps-monitors=1", what()
            _, before = shell.run("pgrep -x spice-vdagentd")
            mark = client.mark()
            shell.run("systemctl restart spice-vdagentd")
            shell.wait_for("pgrep -u user -x spice-vdagent && pgrep -x spice-vdagentd", 60,
                           "spice-vdagentd and the session agent again")
            _, after = shell.run("pgrep -x spice-vdagentd")
            assert before.strip() != after.strip(), "spice-vdagentd was not restarted"
            assert client.wait("agent-gone", 60, mark), what()
            assert client.wait("agent ", 60, mark) == "agent caps-monitors=1", what()
            guest_copy(shell, client, GUEST_TEXT_SMALL, UTF8_TEXT, what)
            client_offer(shell, client, tmp_path, HOST_TEXT, UTF8_TEXT, what)
            helper_clean(h, what)
            if h is not None:
                assert "the guest's agent on com.redhat.spice.0 started over" in h.stderr(), \
                    what()
            print(f"{desktop.server}: restart: {client.lines[mark:]}")
        shell.run("rm -f /tmp/from-host.txt /tmp/to-host.txt")

    # Valid PNGs of a few KiB (over one 2048-byte agent chunk).
    HOST_PNG = png(200, 150, 1)
    GUEST_PNG = png(220, 140, 2)

    @pytest.mark.timeout(900)
    def test_desktop_clipboard_image(desktop, helper_binary, tmp_path):
        """image/png both ways, byte for byte: spice-vdagent hands the X
        selection's image/png bytes over as VD_AGENT_CLIPBOARD_IMAGE_PNG and
        back without decoding them (it converts only between the agent's
        types and X targets), so the bytes, not only the pixels, must match."""
        shell = desktop.shell
        with desktop.serve(helper_binary, __file__) as (client, h, what):
            assert client.wait("agent", 120) == "agent caps-monitors=1", what()
            client_offer(shell, client, tmp_path, HOST_PNG, IMAGE_PNG, what)
            guest_copy(shell, client, GUEST_PNG, IMAGE_PNG, what)
            helper_clean(h, what)
            print(f"{desktop.server}: image/png {len(HOST_PNG)} and {len(GUEST_PNG)} bytes")
        shell.run("rm -f /tmp/from-host.png /tmp/to-host.png")

    @pytest.mark.timeout(900)
    def test_desktop_resize(desktop, helper_binary, request):
        """The client's monitors config makes spice-vdagent set the X mode
        (xrandr shows it) and the client's primary surface follows; the
        guest's first mode is set back after."""
        if desktop.server == "spice-server":
            request.applymarker(pytest.mark.xfail(
                reason="seen 2026-12-07: qemu's spice-server gives the monitors config to "
                "virtio-gpu (xrandr's preferred mode became 1024x768), not to "
                "spice-vdagent, and nothing in this openbox session applies the new "
                "preferred mode, so the X mode stays 1280x800"))
        shell = desktop.shell
        w0, h0, _ = xrandr_current(shell)
        assert (w0, h0) != NEW_SIZE
        try:
            with desktop.serve(helper_binary, __file__) as (client, h, what0):
                def what():
                    return what0() + f"\nguest journal: {desktop.journal()}"

                assert client.wait("agent", 120) == "agent caps-monitors=1", what()
                assert client.wait("primary", 60), what()
                mark = client.mark()
                client.send("monitor %d %d" % NEW_SIZE)
                assert client.wait("monitors", 10, mark) == "monitors 1", what()
                deadline = time.monotonic() + 60
                while True:
                    w, hh, out = xrandr_current(shell)
                    if (w, hh) == NEW_SIZE or time.monotonic() > deadline:
                        break
                    time.sleep(1)
                assert (w, hh) == NEW_SIZE, what() + "\nxrandr: " + out
                if h is not None:
                    assert client.wait("primary %d %d" % NEW_SIZE, 60, mark), what()
                helper_clean(h, what)
        finally:
            # As found: the first mode back on the guest's output.
            out = xrandr_current(shell)[2]
            outputs = [line.split()[0] for line in out.splitlines() if " connected" in line]
            if outputs:
                shell.x(f"xrandr --output {outputs[0]} --mode {w0}x{h0}", check=False)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
