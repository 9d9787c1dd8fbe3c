# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, point 2, the rest of qemu's faults: the guest reboots (and so
changes resolution) and, on qemu 9.2+, the helper's listener is replaced
while a client watches.

1. Guest reboot: a spice-gtk client watches the busy guest; QMP
   `system_reset` (after `set-action reboot=reset`: the harness runs qemu
   with -no-reboot, which would make the reset a shutdown). The guest goes
   through the firmware's screen (std-vga: SeaBIOS's 720x400 text mode; with
   virtio-gpu the console is re-scanned) and boots to keydraw's 1280x800
   again. The same session must survive it (the client's channels stay
   open, it exits 0) and, the guest stopped, its picture must equal qemu's
   screendump, size included.
2. Listener replaced on qemu 10.0 (trixie: shared memory, Listener.Unix.Map):
   the helper's listener thread is stalled through the test control
   (a build with -Dtest_controls=true, as tools/check makes), so its
   watchdog drops the listener and registers a new one, which maps qemu's
   new surface. The watching client must not notice beyond a pause: it
   exits 0, and its final picture, taken after the guest stopped seconds
   after the replacement, is exact (only the new listener can have given
   it that)."""

import threading
import time

import pytest

from fault_support import (BAD_LOG, EXACT_AFTER_STOP_MS, Client, assert_same_picture,
                           busy_guest, serving, stop_when_written)
from harness.qemu import free_tcp_port
from test_display_support import Helper, require_test_controls

# The client watches this long: the reset comes RESET_AT_S in, and a TCG
# boot to READY takes 5-15 s here (more on a loaded CI machine).
WATCH_S = 25
RESET_AT_S = 3.0
BOOT_TIMEOUT_S = 30.0


def watching(test_client, port, tmp_path, name, seconds):
    """A client that prints its session (`info`: the caller may go on once
    that line is out), watches for `seconds`, writes a picture (at which the
    caller stops the guest) and another EXACT_AFTER_STOP_MS later."""
    mid, final = tmp_path / f"{name}-mid.ppm", tmp_path / f"{name}-final.ppm"
    client = Client(test_client, port,
                    ["--settle", "0", "--seconds", seconds, "info", "watch", "screenshot", mid,
                     "sleep", EXACT_AFTER_STOP_MS, "screenshot", final],
                    tmp_path, name=name, timeout=seconds + 60)
    return client, mid, final


def finish(client, q, h, mid, final, stopped_box):
    watcher = threading.Thread(target=stop_when_written, args=(q, mid, stopped_box),
                               kwargs={"timeout": WATCH_S + 60}, daemon=True)
    watcher.start()
    rc = client.wait(timeout=client.timeout + 30)
    watcher.join(timeout=60)
    if rc is None:
        client.kill()
    assert rc == 0, f"the client's session did not survive (exit {rc}): " \
                    f"{client.stderr()[-1500:]}"
    assert "at" in stopped_box, "the client never wrote its picture"
    try:
        assert_same_picture(final, q)
    except BaseException:
        print(f"client: {client.stdout()[-1500:]}\nhelper: {h.stderr()[-4000:]}")
        raise
    return next(j for j in client.json_lines() if "seconds" in j)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_guest_reboot(qemu_factory, guest, helper_binary, test_client, tmp_path, vga):
    q = qemu_factory(flavour="host", guest=guest, vga=vga, mode="busy")
    q.wait_ready(timeout=BOOT_TIMEOUT_S)
    q("set-action", reboot="reset")
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        client, mid, final = watching(test_client, port, tmp_path, f"reboot-{vga}", WATCH_S)
        client.wait_output(1)
        time.sleep(RESET_AT_S)
        mark = q.serial_mark()
        t0 = time.monotonic()
        q("system_reset")
        q.wait_serial(r"^READY\b", timeout=BOOT_TIMEOUT_S, since=mark)
        booted = time.monotonic() - t0
        watch = finish(client, q, h, mid, final, {})
        log = h.stderr()
        print(f"{vga}: guest READY {booted:.1f} s after the reset; client: {watch}")
        assert h.proc.poll() is None, f"helper exited {h.proc.returncode}: {log[-2000:]}"
        bad = [line for line in log.splitlines() if BAD_LOG.search(line)]
        assert not bad, bad
        assert watch["invalidates"] + watch["stream_frames"] > 0, watch


@pytest.mark.timeout(240)
def test_listener_replaced_while_serving(qemu_factory, guest, helper_binary, test_client,
                                         tmp_path):
    require_test_controls(helper_binary)
    q = busy_guest(qemu_factory, guest, flavour="trixie")
    port = free_tcp_port()
    with Helper.p2p(helper_binary, q, ["--listen", f"127.0.0.1:{port}",
                                      "--disable-ticketing"]) as h:
        h.wait_listening(port)
        client, mid, final = watching(test_client, port, tmp_path, "replaced", 12)
        client.wait_output(1)
        time.sleep(2.0)
        h.ctl("stall 2")
        watch = finish(client, q, h, mid, final, {})
        log = h.stderr()
        print(f"client: {watch}")
        assert "dropping it and registering a new one" in log, log[-2000:]
        assert h.proc.poll() is None, f"helper exited {h.proc.returncode}: {log[-2000:]}"
        bad = [line for line in log.splitlines() if BAD_LOG.search(line)]
        assert not bad, bad
