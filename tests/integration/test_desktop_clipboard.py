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
qemu 7.2:

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
  The control against qemu's own spice-server (test_desktop_resize_control_
  spice_server) does not resize X: spice-server hands the config to
  virtio-gpu as a new preferred mode, which nothing in an openbox session
  applies (a desktop such as GNOME follows it); an expected failure.

These tests carry the `desktop` marker and run only when asked for
(`-m desktop`): the image takes minutes to build the first time and the
guest ~a minute to boot under TCG (docs/guest-requirements.md).

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_desktop_clipboard.py client HOST PORT SECONDS
"""

import hashlib
import sys

UTF8_TEXT = 1
CAP_CLIPBOARD_BY_DEMAND = 5
CAP_MONITORS_CONFIG = 1


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    """Commands on stdin: 'offer PATH' (grab the clipboard with the file's
    bytes as UTF-8 text), 'monitor W H', 'quit'. Events on stdout: 'agent
    caps-monitors=N', 'request SEL TYPE', 'grab SEL TYPES...', 'data SEL TYPE
    LEN SHA256', 'primary W H', 'monitors OK'."""
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, seconds = argv[:3]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {"main": None, "offer": b"", "told": False}

    def say(*words):
        print(*words, flush=True)

    def on_agent_update(main):
        if state["told"] or not main.get_property('agent-connected'):
            return
        if not main.agent_test_capability(CAP_CLIPBOARD_BY_DEMAND):
            return              # the guest's caps have not come yet
        state["told"] = True
        say("agent", "caps-monitors=%d" % int(main.agent_test_capability(CAP_MONITORS_CONFIG)))

    def on_request(main, selection, vtype):
        say("request", selection, vtype)
        main.clipboard_selection_notify(selection, vtype, state["offer"])
        return True

    def on_grab(main, selection, types, ntypes):
        types = list(types)[:ntypes]
        say("grab", selection, *types)
        if UTF8_TEXT in types:
            main.clipboard_selection_request(selection, UTF8_TEXT)
        return True

    def on_data(main, selection, vtype, data, size):
        data = bytes(data)
        say("data", selection, vtype, len(data), sha256(data))

    def on_primary(display, fmt, width, height, stride, shmid, imgdata):
        say("primary", width, height)

    def on_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            state["main"] = channel
            GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
            GObject.Object.connect(channel, 'main-clipboard-selection-request', on_request)
            GObject.Object.connect(channel, 'main-clipboard-selection-grab', on_grab)
            GObject.Object.connect(channel, 'main-clipboard-selection', on_data)
        elif isinstance(channel, Spice.DisplayChannel):
            GObject.Object.connect(channel, 'display-primary-create', on_primary)
        channel.connect()

    def on_stdin(source, cond):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        words = line.split()
        main = state["main"]
        if words[0] == "offer":
            with open(words[1], "rb") as f:
                state["offer"] = f.read()
            main.clipboard_selection_grab(0, [UTF8_TEXT])
            say("offered", len(state["offer"]))
        elif words[0] == "monitor":
            w, h = int(words[1]), int(words[2])
            main.update_display(0, 0, 0, w, h, False)
            main.update_display_enabled(0, True, False)
            say("monitors", int(main.send_monitor_config()))
        elif words[0] == "quit":
            loop.quit()
            return False
        return True

    GObject.Object.connect(session, 'channel-new', on_channel)
    session.connect()
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    say("done")


if __name__ != "__main__":
    import os
    import queue
    import shutil
    import subprocess
    import tempfile
    import threading
    import time

    import pytest

    from desktop_support import MEMORY, X_ENV, DesktopGuest, DesktopShell, sanitizer_clean, \
        xrandr_current
    from serve_support import connect_chardev, serving, virtio_port_args

    pytestmark = pytest.mark.desktop
    AGENT_PORT = "com.redhat.spice.0"
    # Boot to the autologin shell, then to X with spice-vdagent running. Measured
    # (2 shared cores, other builds running): see docs/guest-requirements.md.
    LOGIN_WAIT_S = 240
    SESSION_WAIT_S = 180
    # Text with multi-byte UTF-8, over one agent chunk (2048 bytes) and the
    # X selection's usual single transfer size is not an issue at this size.
    HOST_TEXT = ("host \u00e9\u00e8\u00fc \u20ac line\n" * 300).encode()
    # spice-vdagentd writes a whole agent message as one chunk on its port
    # (not cut at 2048 bytes as spice-gtk and our stand-in do): a text up to
    # 2028 bytes fits one chunk of 2048.
    GUEST_TEXT_SMALL = ("guest \u00e0\u00df \u2603 text\n" * 90).encode()
    GUEST_TEXT = ("guest \u00e0\u00df \u2603 text\n" * 250).encode()
    NEW_SIZE = (1024, 768)

    class Client:
        """The client script; stdout lines read as they come."""

        def __init__(self, port, seconds):
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", __file__, "client", "127.0.0.1", str(port),
                 str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                stdin=subprocess.PIPE, text=True)
            self.lines = []
            self._q = queue.Queue()
            threading.Thread(target=self._read, daemon=True).start()

        def _read(self):
            for line in self.proc.stdout:
                self._q.put(line.rstrip("\n"))
            self._q.put(None)

        def send(self, line):
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()

        def wait(self, prefix, timeout, since=0):
            """First line from index `since` on starting with prefix, or None."""
            deadline = time.monotonic() + timeout
            i = since
            while True:
                while i < len(self.lines):
                    if self.lines[i].startswith(prefix):
                        return self.lines[i]
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    line = self._q.get(timeout=left)
                except queue.Empty:
                    return None
                if line is None:
                    return None
                self.lines.append(line)

        def finish(self, timeout=20):
            try:
                self.send("quit")
            except (BrokenPipeError, ValueError):
                pass
            try:
                _, err = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                _, err = self.proc.communicate()
            return err

    @pytest.fixture(scope="module")
    def desktop():
        return DesktopGuest.build()

    def boot(qemu_factory, desktop, run, vga="virtio"):
        """qemu with the desktop guest and its agent port on a socket chardev;
        returns (q, shell, chardev socket, {phase: seconds})."""
        path = os.path.join(run, "agent.sock")
        t0 = time.monotonic()
        q = qemu_factory(guest=desktop, vga=vga, memory=MEMORY, serial_input=True,
                         extra_args=desktop.drive_args() +
                         virtio_port_args(AGENT_PORT, f"path={path},server=on,wait=off"))
        chardev = connect_chardev(path)
        shell = DesktopShell(q)
        times = {"login": shell.wait_login(LOGIN_WAIT_S)}
        # X up, the user's session agent running, the daemon serving it.
        shell.wait_for("pgrep -u user -x spice-vdagent && pgrep -x spice-vdagentd && "
                       f"env {X_ENV} xrandr",
                       SESSION_WAIT_S, "X session with spice-vdagent")
        times["session"] = time.monotonic() - t0
        return q, shell, chardev, times

    def guest_copy(shell, client, text, what):
        """`text` put on the guest's X CLIPBOARD by xclip reaches the client."""
        shell.put_file("/tmp/to-host.txt", text)
        mark = len(client.lines)
        shell.x("xclip -i -selection clipboard -target UTF8_STRING </tmp/to-host.txt")
        data = client.wait("data 0 ", 60, mark)
        assert data == f"data 0 {UTF8_TEXT} {len(text)} {sha256(text)}", what()

    @pytest.mark.timeout(900)
    def test_desktop_clipboard(qemu_factory, desktop, helper_binary):
        run = tempfile.mkdtemp(prefix="qs-desktop-", dir="/tmp")
        client = None
        q, shell, chardev, times = boot(qemu_factory, desktop, run)
        try:
            with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                         chardev.fileno(), pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()                 # the helper holds it now
                client = Client(port, 600)

                def what():
                    return (f"times: {times}\nclient: {client.lines[-20:]}\n"
                            f"helper: {h.stderr()[-3000:]}\n"
                            f"guest: {q.serial_lines[-20:]}\nqemu: {q.stderr_tail()}")

                agent = client.wait("agent", 120)
                assert agent == "agent caps-monitors=1", what()
                assert client.wait("primary", 60), what()

                # Client -> guest: the client's grab, read by xclip from X.
                src = os.path.join(run, "host.txt")
                with open(src, "wb") as f:
                    f.write(HOST_TEXT)
                mark = len(client.lines)
                client.send(f"offer {src}")
                assert client.wait("offered", 10, mark), what()
                shell.wait_for("env DISPLAY=:0 XAUTHORITY=/var/run/lightdm/root/:0 "
                               "timeout 10 xclip -o -selection clipboard -target TARGETS | "
                               "grep -qx UTF8_STRING", 30, "the guest's X clipboard offer")
                shell.x("timeout 30 xclip -o -selection clipboard -target UTF8_STRING "
                        ">/tmp/from-host.txt")
                digest, size = shell.sha256("/tmp/from-host.txt")
                assert (size, digest) == (len(HOST_TEXT), sha256(HOST_TEXT)), what()
                assert client.wait(f"request 0 {UTF8_TEXT}", 10, mark), what()

                # Guest -> client: xclip owns the X clipboard, spice-vdagent
                # grabs, the client asks and gets the bytes.
                guest_copy(shell, client, GUEST_TEXT_SMALL, what)

                err = client.finish()
                client = None
                log = h.stderr()
                assert sanitizer_clean(log), what() + err[-2000:]
                assert "agent: the guest's agent on com.redhat.spice.0 serves" in log, what()
                print(f"boot: {times}")                  # shown with pytest -rP
        finally:
            if client:
                client.finish(5)
            chardev.close()
            shutil.rmtree(run, ignore_errors=True)

    @pytest.mark.timeout(900)
    def test_desktop_resize(qemu_factory, desktop, helper_binary):
        """The client's monitors config makes spice-vdagent set the X mode
        (xrandr shows it) and the client's primary surface follows."""
        run = tempfile.mkdtemp(prefix="qs-desktop-", dir="/tmp")
        client = None
        q, shell, chardev, times = boot(qemu_factory, desktop, run)
        try:
            with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                         chardev.fileno(), pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()
                client = Client(port, 600)

                def what():
                    _, journal = shell.run("journalctl -b --no-pager | "
                                           "grep -i -e vdagent -e randr | tail -30",
                                           check=False)
                    return (f"times: {times}\nclient: {client.lines[-20:]}\n"
                            f"helper: {h.stderr()[-3000:]}\nqemu: {q.stderr_tail()}\n"
                            f"guest journal: {journal}")

                assert client.wait("agent", 120) == "agent caps-monitors=1", what()
                assert client.wait("primary", 60), what()
                # Resize: the monitors config, spice-vdagent's xrandr, the
                # new scanout at the client.
                w0, h0, _ = xrandr_current(shell)
                assert (w0, h0) != NEW_SIZE, what()
                mark = len(client.lines)
                client.send("monitor %d %d" % NEW_SIZE)
                assert client.wait("monitors", 10, mark) == "monitors 1", what()
                deadline = time.monotonic() + 60
                while True:
                    w, hh, out = xrandr_current(shell)
                    if (w, hh) == NEW_SIZE or time.monotonic() > deadline:
                        break
                    time.sleep(1)
                assert (w, hh) == NEW_SIZE, what() + "\nxrandr: " + out
                assert client.wait("primary %d %d" % NEW_SIZE, 60, mark), what()

                assert sanitizer_clean(h.stderr()), what()
        finally:
            if client:
                client.finish(5)
            chardev.close()
            shutil.rmtree(run, ignore_errors=True)

    @pytest.mark.xfail(reason="seen 2026-12-07: qemu's spice-server gives the monitors config "
                       "to virtio-gpu (xrandr's preferred mode became 1024x768), not to "
                       "spice-vdagent, and nothing in this openbox session applies the new "
                       "preferred mode, so the X mode stays 1280x800")
    @pytest.mark.timeout(900)
    def test_desktop_resize_control_spice_server(qemu_factory, desktop):
        """The control: the same monitors config from spice-gtk through qemu's
        own spice-server (its spicevmc agent channel) to the same guest."""
        t0 = time.monotonic()
        q = qemu_factory(guest=desktop, memory=MEMORY, serial_input=True, display="spice",
                         extra_args=desktop.drive_args() + [
                             "-chardev", "spicevmc,id=qsvdagent,name=vdagent",
                             "-device", "virtio-serial-pci,id=qsvserial",
                             "-device", "virtserialport,bus=qsvserial.0,chardev=qsvdagent,"
                                        f"name={AGENT_PORT}"])
        shell = DesktopShell(q)
        times = {"login": shell.wait_login(LOGIN_WAIT_S)}
        shell.wait_for("pgrep -u user -x spice-vdagent && pgrep -x spice-vdagentd && "
                       f"env {X_ENV} xrandr", SESSION_WAIT_S, "X session with spice-vdagent")
        times["session"] = time.monotonic() - t0
        client = Client(q.spice_port, 600)
        try:
            def what():
                _, journal = shell.run("journalctl -b --no-pager | "
                                       "grep -i -e vdagent -e randr | tail -30", check=False)
                return (f"times: {times}\nclient: {client.lines[-20:]}\n"
                        f"qemu: {q.stderr_tail()}\nguest journal: {journal}")

            assert client.wait("agent", 120) == "agent caps-monitors=1", what()
            assert client.wait("primary", 60), what()
            mark = len(client.lines)
            client.send("monitor %d %d" % NEW_SIZE)
            assert client.wait("monitors", 10, mark) == "monitors 1", what()
            deadline = time.monotonic() + 60
            while True:
                w, hh, out = xrandr_current(shell)
                if (w, hh) == NEW_SIZE or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert (w, hh) == NEW_SIZE, what() + "\nxrandr: " + out
        finally:
            client.finish(5)

    @pytest.mark.timeout(900)
    def test_desktop_clipboard_to_client_large(qemu_factory, desktop, helper_binary):
        """A guest text over one 2048-byte chunk reaches the client."""
        run = tempfile.mkdtemp(prefix="qs-desktop-", dir="/tmp")
        client = None
        q, shell, chardev, times = boot(qemu_factory, desktop, run)
        try:
            with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                         chardev.fileno(), pass_fds=[chardev.fileno()]) as (h, port):
                chardev.close()
                client = Client(port, 600)

                def what():
                    return (f"times: {times}\nclient: {client.lines[-20:]}\n"
                            f"helper: {h.stderr()[-3000:]}\nqemu: {q.stderr_tail()}")

                assert client.wait("agent", 120) == "agent caps-monitors=1", what()
                guest_copy(shell, client, GUEST_TEXT, what)
                assert sanitizer_clean(h.stderr()), what()
        finally:
            if client:
                client.finish(5)
            chardev.close()
            shutil.rmtree(run, ignore_errors=True)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
