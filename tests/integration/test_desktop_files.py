# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue W: file transfer to a real Linux desktop guest's spice-vdagent,
not our stand-in (tests/guest/keydraw-agent.c).

The guest is tests/guest/make-desktop's Debian 12 image (desktop_support.py);
the client is spice-gtk (SpiceClientGLib from Debian's python) copying a
file with spice_main_channel_file_copy_async, as remote-viewer does for a
file dropped on its window. spice-vdagent (the user's session agent) saves
it in the user's XDG download directory, /home/user/Downloads in the image
(~/.config/user-dirs.dirs names it; spice-vdagent turns file transfer off
without one). The guest's side is read from the root shell on its serial
console. What is shown, on qemu 7.2 and 10.0:

- a 5 MiB file of random bytes lands in the download directory with the
  host's length and SHA-256, and the client's copy completes;
- a copy cancelled by the client (GCancellable) once 1 MiB has gone out
  ends with G_IO_ERROR_CANCELLED at the client and leaves no file, whole or
  partial, in the download directory (the helper wakes the client's main
  channel while a transfer runs, so its cancel reaches the guest).
  spice-vdagent creates the file at its full size at once
  (ftruncate), so a file of the right size is no sign the copy ended.

Each test runs against the helper (with --agent-fd) and against the control,
[spice-server] (qemu's own -spice with a spicevmc agent port), on qemu 7.2
and 10.0 ([helper-host], [spice-server-host], [helper-trixie],
[spice-server-trixie]), on one boot each for the file
(desktop_support.desktop); each test removes what it put in the guest.

Run this file as a script for the SPICE client side:
  /usr/bin/python3 test_desktop_files.py client HOST PORT SECONDS
"""

import hashlib
import sys

CAP_FILE_XFER_DISABLED = 13
MIB = 1024 * 1024


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    """Commands on stdin: 'copy PATH' (file_copy_async), 'cancel-at PATH N'
    (the same, cancelled once N bytes have gone out), 'quit'. Events on
    stdout: 'agent xfer-disabled=N', 'progress N TOTAL' (each MiB),
    'cancelling N', 'copied ok', 'copy-error DOMAIN CODE MESSAGE'."""
    from gi.repository import Gio, GLib, GObject

    from desktop_client import run, say

    state = {"shown": -1, "cancel_at": None, "cancellable": None}

    def on_done(main, result, data):
        try:
            main.file_copy_finish(result)
            say("copied ok")
        except GLib.Error as e:
            say("copy-error", e.domain, e.code, e.message)

    def on_progress(task, pspec):
        # The task's own progress: file_copy_async's progress callback is
        # (scope call) in spice-gtk's GIR, so not callable later from python.
        current = task.get_transferred_bytes()
        if current // MIB > state["shown"]:
            state["shown"] = current // MIB
            say("progress", current, task.get_total_bytes())
        cancel_at = state["cancel_at"]
        if cancel_at is not None and current >= cancel_at and \
                not state["cancellable"].is_cancelled():
            say("cancelling", current)
            state["cancellable"].cancel()

    def on_new_task(main, task):
        GObject.Object.connect(task, 'notify::transferred-bytes', on_progress)

    def copy(main, path, cancel_at=None):
        state["cancellable"] = Gio.Cancellable()
        state["cancel_at"] = cancel_at
        state["shown"] = -1
        main.file_copy_async([Gio.File.new_for_path(path)], Gio.FileCopyFlags.NONE,
                             state["cancellable"], None, None, on_done, None)

    run(argv,
        lambda main: ["xfer-disabled=%d" % int(main.agent_test_capability(
            CAP_FILE_XFER_DISABLED))],
        on_main=lambda main: GObject.Object.connect(main, 'new-file-transfer', on_new_task),
        commands={"copy": lambda main, w: copy(main, w[1]),
                  "cancel-at": lambda main, w: copy(main, w[1], int(w[2]))})


if __name__ != "__main__":
    import random
    import time

    import pytest

    from desktop_support import _no_stray_qemu, desktop, sanitizer_clean  # noqa: F401

    pytestmark = pytest.mark.desktop
    # make-desktop's user-dirs.dirs: XDG_DOWNLOAD_DIR="$HOME/Downloads".
    DOWNLOADS = "/home/user/Downloads"
    FILE_SIZE = 5 * MIB
    CANCEL_AT = 1 * MIB

    def payload(tmp_path, name):
        data = random.Random(5).randbytes(FILE_SIZE)
        src = tmp_path / name
        src.write_bytes(data)
        return src, data

    def downloads(shell):
        """`ls -l` of the download directory, one line per entry."""
        _, out = shell.run(f"ls -l --time-style=+ {DOWNLOADS} | tail -n +2")
        return out.strip()

    @pytest.mark.timeout(900)
    def test_desktop_file_copy(desktop, helper_binary, tmp_path):
        """A 5 MiB file lands in the guest's download directory byte for
        byte."""
        shell = desktop.shell
        assert downloads(shell) == "", "the download directory is not empty to begin with"
        src, data = payload(tmp_path, "payload-5m.bin")
        dest = f"{DOWNLOADS}/{src.name}"
        try:
            with desktop.serve(helper_binary, __file__) as (client, h, what0):
                def what():
                    return (what0() + f"\nguest journal: {desktop.journal('-e vdagent')}"
                            f"\ndownloads: {downloads(shell)}")

                assert client.wait("agent", 120) == "agent xfer-disabled=0", what()
                t0 = time.monotonic()
                client.send(f"copy {src}")
                # 5 MiB through the agent under TCG: 20-60 s measured
                # (2026-12-07, two shared cores), bound five times that.
                done = client.wait("cop", 300)
                took = time.monotonic() - t0
                assert done == "copied ok", what()
                digest, size = shell.sha256(dest)
                assert (size, digest) == (FILE_SIZE, hashlib.sha256(data).hexdigest()), what()
                if h is not None:
                    assert sanitizer_clean(h.stderr()), what()
                print(f"{desktop.server}: 5 MiB copied in {took:.1f} s; boot {desktop.times}")
        finally:
            shell.run(f"rm -f {DOWNLOADS}/*", check=False)

    @pytest.mark.timeout(900)
    def test_desktop_file_copy_cancel(desktop, helper_binary, tmp_path):
        """A copy cancelled by the client mid-way leaves no file behind."""
        shell = desktop.shell
        assert downloads(shell) == "", "the download directory is not empty to begin with"
        src, data = payload(tmp_path, "payload-cancel.bin")
        try:
            with desktop.serve(helper_binary, __file__) as (client, h, what0):
                def what():
                    agent = [line for line in (h.stderr() if h else "").splitlines()
                             if "agent" in line]
                    return (what0() + f"\nguest journal: {desktop.journal('-e vdagent')}"
                            f"\ndownloads: {downloads(shell)}\nhelper's agent lines: "
                            + "\n".join(agent[-40:]))

                assert client.wait("agent", 120) == "agent xfer-disabled=0", what()
                mark = client.mark()
                client.send(f"cancel-at {src} {CANCEL_AT}")
                assert client.wait("cancelling", 120, mark), what()
                done = client.wait("cop", 120, mark)
                # GIO's G_IO_ERROR_CANCELLED is 19.
                assert done is not None and done.startswith("copy-error g-io-error-quark 19"), \
                    what()
                # spice-vdagent removes the file of a transfer that did not
                # complete; a partial file left there would be named here.
                deadline = time.monotonic() + 30
                while True:
                    left = downloads(shell)
                    if left == "" or time.monotonic() > deadline:
                        break
                    time.sleep(1)
                assert left == "", "a cancelled copy left a file in the guest:\n" + what()
                if h is not None:
                    assert sanitizer_clean(h.stderr()), what()
                print(f"{desktop.server}: cancel: {client.lines[mark:]}")
                print(f"guest journal: {desktop.journal('-e vdagent -e xfer', 10)}")
        finally:
            shell.run(f"rm -f {DOWNLOADS}/*", check=False)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
