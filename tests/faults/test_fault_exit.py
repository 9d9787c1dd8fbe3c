# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, faults 5 and 6: how a session ends when one side goes.

5. qemu is SIGKILLed while a spice-gtk client watches: the helper exits
   with status 0 within EXIT_BOUND_S and says once, in one line, that qemu
   went away; the client sees its channels close. It says nothing else
   about it: in a race the listener's connection closes first, and the
   helper used to warn that it was "registering a new listener"
   (test_qemu_killed_no_listener_retry kills qemu ten times for it).
6. The helper gets SIGTERM during a session: it exits with status 0 within
   EXIT_BOUND_S, the client sees the disconnection (spice-gtk reports the
   channel closed: qs-test-client status 7) instead of hanging until its
   own timeout, and qemu runs on."""

import re
import signal
import time

import pytest

from fault_support import BAD_LOG, Client, busy_guest, qmp_latency, serving

# A deadline (the helper leaves rather than hangs), not a figure: measured
# exits took 32-65 ms after qemu's SIGKILL and 8-16 ms after SIGTERM (plain
# build, four runs; docs/performance.md "Faults"); on the sanitizer build,
# which runs these tests too, 0.19-0.30 s (one run of each, 2026-12-01,
# machine loaded).
EXIT_BOUND_S = 5.0
# qs-test-client: 7 = disconnected/IO.
CLIENT_DISCONNECTED = 7
# After the "qemu-spice: " prefix every line has.
GONE = re.compile(r"^qemu-spice: (?:\w+: )?.*\bqemu\b.*\b(closed|left|went away|gone|"
                  r"vanished|exited|died)\b", re.IGNORECASE)


def watching_client(test_client, port, tmp_path, name):
    client = Client(test_client, port, ["--settle", "0", "--seconds", "60", "info", "watch"],
                    tmp_path, name=name, timeout=90)
    client.wait_output(1)
    time.sleep(1.0)          # the stream is running into the client
    return client


def wait_exit(proc, timeout):
    t0 = time.monotonic()
    try:
        rc = proc.wait(timeout=timeout)
    except Exception:  # noqa: BLE001 - TimeoutExpired; reported below
        return None, None
    return rc, time.monotonic() - t0


@pytest.mark.timeout(150)
def test_qemu_killed(qemu_factory, qemu_flavour, guest, helper_binary, test_client,
                     tmp_path):
    q = busy_guest(qemu_factory, guest, flavour=qemu_flavour)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        client = watching_client(test_client, port, tmp_path, "qemu-killed")
        try:
            t0 = time.monotonic()
            q.proc.kill()
            rc, took = wait_exit(h.proc, EXIT_BOUND_S)
            crc = client.wait(timeout=EXIT_BOUND_S + 5)
            client_took = time.monotonic() - t0
        finally:
            client.kill()
        log = h.stderr()
        assert rc is not None, f"helper still running {EXIT_BOUND_S}s after qemu died: " \
                               f"{log[-2000:]}"
        print(f"{qemu_flavour}: helper exited {rc} {took:.3f} s after qemu's SIGKILL; "
              f"client exited {crc} after {client_took:.3f} s")
        assert rc == 0, f"helper exit status {rc}: {log[-2000:]}"
        after = log.splitlines()
        # The one line saying why the helper leaves (no retry announced:
        # test_qemu_killed_no_listener_retry).
        gone = [line for line in after if GONE.search(line) and "exiting" in line]
        assert len(gone) == 1, f"want one line saying qemu went away, got {gone}: " \
                               f"{log[-2000:]}"
        bad = [line for line in after if BAD_LOG.search(line)]
        assert not bad, bad
        assert crc == CLIENT_DISCONNECTED, \
            f"client exit {crc} (want {CLIENT_DISCONNECTED}): {client.stderr()[-1500:]}"


@pytest.mark.timeout(150)
def test_helper_sigterm(qemu_factory, guest, helper_binary, test_client, tmp_path):
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        client = watching_client(test_client, port, tmp_path, "sigterm")
        try:
            t0 = time.monotonic()
            h.proc.send_signal(signal.SIGTERM)
            rc, took = wait_exit(h.proc, EXIT_BOUND_S)
            crc = client.wait(timeout=EXIT_BOUND_S + 5)
            client_took = time.monotonic() - t0
        finally:
            client.kill()
        log = h.stderr()
        assert rc is not None, f"helper still running {EXIT_BOUND_S}s after SIGTERM: " \
                               f"{log[-2000:]}"
        print(f"helper exited {rc} {took:.3f} s after SIGTERM; client exited {crc} "
              f"after {client_took:.3f} s")
        assert rc == 0, f"helper exit status {rc}: {log[-2000:]}"
        assert "signal received; exiting" in log, log[-2000:]
        bad = [line for line in log.splitlines() if BAD_LOG.search(line)]
        assert not bad, bad
        assert crc == CLIENT_DISCONNECTED, \
            f"client exit {crc} (want {CLIENT_DISCONNECTED}, it must see the " \
            f"disconnection): {client.stderr()[-1500:]}"
        assert client_took < EXIT_BOUND_S + 2, client_took
        # qemu is not hurt by its display client going: it answers QMP
        # (within qmp_latency's 5 s: a correctness deadline, not a figure).
        assert q.alive(), q.stderr_tail()
        qmp_latency(q, timeout=5.0)
        assert q.qmp("query-status")["status"] == "running"


LISTENER_RETRY = "registering a new listener"
# How often the race is run: 4 of the first 10 kills showed the bug (host
# 7.2 and trixie 10.0 alike), so 10 clean runs in a row (0.6 ** 10 < 1 %)
# mean it is fixed; while it is not, the first bad run ends the test.
RACE_RUNS = 10


@pytest.mark.timeout(150)
def test_qemu_killed_no_listener_retry(qemu_factory, qemu_flavour, helper_binary):
    """qemu SIGKILLed, again and again (no guest: the firmware's screen is
    enough): the helper must never announce a listener retry."""
    for run in range(1, RACE_RUNS + 1):
        q = qemu_factory(flavour=qemu_flavour, guest=None, vga="virtio")
        with serving(helper_binary, q, "--disable-ticketing") as (h, _port):
            time.sleep(1.0)      # the listener is registered and connected
            q.proc.kill()
            rc, _took = wait_exit(h.proc, EXIT_BOUND_S)
            log = h.stderr()
        q.close()
        # (before the fix, 4 of the first 10 kills showed the retry line)
        if rc != 0:
            pytest.fail(f"run {run}: helper exit {rc}: {log[-2000:]}")
        if "qemu closed the D-Bus connection; exiting" not in log:
            pytest.fail(f"run {run}: no exit line: {log[-2000:]}")
        retry = [line for line in log.splitlines() if LISTENER_RETRY in line]
        assert not retry, f"run {run} of {RACE_RUNS}: {retry}"
