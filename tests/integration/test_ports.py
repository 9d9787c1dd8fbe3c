# SPDX-License-Identifier: GPL-2.0-or-later
"""A SPICE port channel bridged to a virtio-serial port of the guest.

qemu runs a virtserialport named PORT on a `-chardev socket,server=on`; the
test, standing in for the launcher, connects to that socket and passes the
connection to the helper (`--port-fd PORT=FD`). The test guest echoes
everything that arrives on the port (tests/guest/keydraw-echo.c,
keydraw.echo=PORT: "ECHO connected", "ECHO n=<bytes so far>"). spice-gtk's
SpicePortChannel (SpiceClientGLib from Debian's python) waits for the port
to be opened, writes a payload and reads its echo back. What is shown, on
qemu 7.2 and 10.0:

- the helper offers the port (one log line naming it) and spice-gtk opens a
  port channel of that name, told it is opened;
- the bytes written (300 000, more than the helper lets wait for qemu, so
  the client's reading is paused and resumed on the way; and a small second
  write) reach the guest and come back exactly, in order;
- a second client afterwards gets the port again, and its bytes echo too
  (the bridge outlives a client session);
- the other way round, qemu as the chardev's client (`server=off` with
  reconnect) connecting to a listening socket passed to the helper, which
  accepts it (confined, under its seccomp filter): the same echo.

test_launcher_spice.py runs the same client against a libvirt domain
attached by the launcher.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_ports.py client HOST PORT NAME SIZE SEED SECONDS [PASSWORD]
"""

import hashlib
import os
import random
import sys

PORT = "org.qemu-spice.test.echo"


def payload(size, seed):
    return random.Random(seed).randbytes(size)


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    import ctypes

    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, name, size, seed, seconds = argv[:6]
    data = payload(int(size), int(seed))
    tail = b"\x00end\xff"
    want = data + tail
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    if len(argv) > 6:
        session.set_property("password", argv[6])
    state = {"sent": False, "got": bytearray()}

    def say(*words):
        print(*words, flush=True)

    def on_written(channel, result, what):
        try:
            n = channel.write_finish(result)
            say("written", what, n)
        except GLib.Error as e:
            say("write-error", what, e.message)

    def on_opened(channel, pspec):
        opened = channel.get_property("port-opened")
        say("port", channel.get_property("port-name"), int(opened))
        if opened and channel.get_property("port-name") == name and not state["sent"]:
            state["sent"] = True
            channel.write_async(data, None, on_written, "payload")
            channel.write_async(tail, None, on_written, "tail")

    def on_data(channel, ptr, n):
        state["got"] += ctypes.string_at(ptr, n)
        if len(state["got"]) >= len(want):
            loop.quit()

    def on_channel(sess, channel):
        say("channel", channel.get_property("channel-type"),
            channel.get_property("channel-id"))
        if isinstance(channel, Spice.PortChannel):
            GObject.Object.connect(channel, "notify::port-opened", on_opened)
            GObject.Object.connect(channel, "port-data", on_data)
        channel.connect()

    GObject.Object.connect(session, "channel-new", on_channel)
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    got = bytes(state["got"])
    say("received", len(got), hashlib.sha256(got).hexdigest(),
        "exact" if got == want else "differs")
    session.disconnect()
    say("done")


if __name__ != "__main__":
    import socket
    import subprocess
    import tempfile
    import time

    import pytest

    from serve_support import connect_chardev, serving_port, virtio_port_args

    SIZE = 300000
    TAIL = 5

    def run_client(port, seed, seconds=90, password=None):
        proc = subprocess.run(["/usr/bin/python3", __file__, "client", "127.0.0.1",
                               str(port), PORT, str(SIZE), str(seed), str(seconds),
                               *([password] if password else [])],
                              capture_output=True, text=True, timeout=seconds + 30,
                              stdin=subprocess.DEVNULL)
        return proc.stdout.splitlines(), proc.stderr

    def check_echo(q, h, lines, stderr, since):
        log = h.stderr()
        what = (f"client: {lines}\nclient stderr: {stderr[-2000:]}\n"
                f"helper: {log[-3000:]}\nguest: {q.serial_lines[since:][-10:]}\n"
                f"qemu: {q.stderr_tail()}")
        assert "Sanitizer" not in log and "runtime error" not in log, what
        assert f"port {PORT} 1" in lines, what                  # opened, by name
        assert "written payload %d" % SIZE in lines, what
        assert "written tail %d" % TAIL in lines, what
        received = [l.split() for l in lines if l.startswith("received ")]
        assert received and received[0][1] == str(SIZE + TAIL), what
        assert received[0][3] == "exact", what
        return what

    @pytest.mark.timeout(300)
    def test_port_echo(qemu_factory, qemu_flavour, guest, helper_binary):
        run = tempfile.mkdtemp(prefix="qs-port-", dir="/tmp")
        path = os.path.join(run, "echo.sock")
        q = qemu_factory(cmdline_extra=f"keydraw.echo={PORT}",
                         extra_args=virtio_port_args(PORT, f"path={path},server=on,wait=off"))
        q.wait_serial(r"ECHO waiting", timeout=120)
        chardev = connect_chardev(path)
        try:
            with serving_port(helper_binary, q, PORT, chardev) as (h, port, since):
                lines, stderr = run_client(port, seed=1)
                what = check_echo(q, h, lines, stderr, since)
                q.wait_serial(r"ECHO n=%d\b" % (SIZE + TAIL), timeout=30, since=since)
                # A second client: the same port again, a new payload.
                lines2, stderr2 = run_client(port, seed=2)
                check_echo(q, h, lines2, stderr2, since)
                q.wait_serial(r"ECHO n=%d\b" % (2 * (SIZE + TAIL)), timeout=30, since=since)
            log = h.stderr()
            offered = [l for l in log.splitlines() if "offering qemu's chardevs" in l]
            assert len(offered) == 1, what
            assert offered[0].endswith(
                f"as SPICE channels: {PORT} (port channel 0, qemu's end connected)"), what
            # The client's bytes reached qemu's end while it was connected.
            assert "bytes are dropped" not in log, what
            print(what)                                     # shown with pytest -rP
        finally:
            chardev.close()
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            os.rmdir(run)

    @pytest.mark.timeout(300)
    def test_port_echo_qemu_connects(qemu_factory, qemu_flavour, guest, helper_binary):
        run = tempfile.mkdtemp(prefix="qs-port-", dir="/tmp")
        path = os.path.join(run, "echo.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(1)
        # qemu 9.2 renamed reconnect (seconds) to reconnect-ms.
        again = "reconnect=1" if qemu_flavour == "host" else "reconnect-ms=1000"
        try:
            q = qemu_factory(cmdline_extra=f"keydraw.echo={PORT}",
                             extra_args=virtio_port_args(PORT, f"path={path},server=off,{again}"))
            q.wait_serial(r"ECHO waiting", timeout=120)
            with serving_port(helper_binary, q, PORT, listener) as (h, port, since):
                lines, stderr = run_client(port, seed=4)
                what = check_echo(q, h, lines, stderr, since)
            log = h.stderr()
            assert f"as SPICE channels: {PORT} (port channel 0, qemu's end connects to us)" \
                in log, what
            assert f"chardev {PORT}: qemu connected" in log, what
        finally:
            listener.close()
            os.unlink(path)
            os.rmdir(run)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
