# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest's own agent (--agent-fd) flooding, or breaking its framing.

qemu runs the guest agent's virtserialport com.redhat.spice.0 on a socket
chardev passed to the helper with --agent-fd, as the launcher does; the busy
guest animates its rectangle and runs its test agent (tests/guest/
keydraw-agent.c, keydraw.agent=spice), which takes serial commands. The
client is a raw one (spice_raw.py) linked on main and display.

- The guest floods (well-framed 60 000-byte clipboard messages, as fast as
  its port takes them: "FLOOD") while the client has started the agent
  with no tokens, so the helper may send it nothing: the helper stops
  reading the port once 64 KiB wait for the client, and the guest's writes
  block. The guest must have written at most FLOOD_BOUND, and nothing more
  in the last WATCH_S. Meanwhile the display channel keeps receiving the
  animation, qemu answers QMP within 1 s and the helper logs no error.
  Then the client grants tokens: AGENT_DATA arrives and the guest's writes
  resume.
- The guest breaks the framing (a chunk for port 7: "BADCHUNK") with qemu
  connecting to a socket the helper listens on (server=off, reconnect): one
  line names the problem, the client is told the agent went
  (AGENT_DISCONNECTED), the helper ends the chardev connection, qemu
  reconnects, the guest's agent opens its port again and speaks, and the
  client is told the agent is back (AGENT_CONNECTED); the display keeps
  going throughout.

Bound. FLOOD_BOUND is 32 MiB, as for the port channels
(test_fault_port_flood.py): the loopback and chardev socket buffers, qemu's
and the guest's buffers and the helper's queues (64 KiB toward the client
plus one 64 KiB read). Measured (qemu 7.2, plain and sanitizer builds,
2026-12-02): the guest wrote 240 000-300 000 bytes, not a byte more in the
watch.
"""

import os
import socket
import struct
import tempfile
import time

import pytest

from fault_support import assert_helper_healthy, qmp_latency, slowdown
from serve_support import connect_chardev, serving, virtio_port_args
from spice_raw import MSG_MAIN_INIT, Session

AGENT_PORT = "com.redhat.spice.0"
FLOOD_BOUND = 32 * 1024 * 1024
SETTLE_S = 6.0
WATCH_S = 3.0
QMP_MAX_S = 1.0
SAY = 60000                     # the guest's flood line granularity (one message)

MSG_AGENT_CONNECTED, MSG_AGENT_DISCONNECTED, MSG_AGENT_DATA = 107, 108, 109
MSGC_AGENT_START, MSGC_AGENT_TOKEN = 106, 108


def agent_vm(qemu_factory, guest, chardev_opts):
    return qemu_factory(flavour="host", guest=guest, vga="virtio", mode="busy",
                        cmdline_extra="keydraw.agent=spice", serial_input=True,
                        extra_args=virtio_port_args(AGENT_PORT, chardev_opts))


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what()
        time.sleep(0.05)


def guest_flooded(q):
    n = 0
    for line in q.serial_lines:
        text = str(line)
        if "AGENT flood n=" in text:
            n = int(text.split("AGENT flood n=")[1].split()[0])
    return n


def display_keeps_going(q, h, raw, binary, what):
    before = raw.display.messages
    time.sleep(WATCH_S)
    assert raw.display.messages > before, f"display stalled ({before}) {what}"
    assert qmp_latency(q) < QMP_MAX_S * slowdown(binary), what
    assert_helper_healthy(h)


@pytest.mark.timeout(240)
def test_guest_agent_floods_client_takes_nothing(qemu_factory, guest, helper_binary):
    run = tempfile.mkdtemp(prefix="qs-agentflood-", dir="/tmp")
    path = os.path.join(run, "agent.sock")
    try:
        q = agent_vm(qemu_factory, guest, f"path={path},server=on,wait=off")
        chardev = connect_chardev(path)
        with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                     chardev.fileno(), pass_fds=[chardev.fileno()]) as (h, port):
            chardev.close()
            q.wait_serial(r"AGENT port=", timeout=120)

            def what():
                return (f"guest wrote {guest_flooded(q)}\nhelper: {h.stderr()[-2000:]}\n"
                        f"guest: {[l for l in q.serial_lines if 'FPS' not in str(l)][-10:]}")

            wait_for(lambda: "the guest's agent spoke" in h.stderr(), 60, what)
            raw = Session(port)
            try:
                init = raw.main.first[MSG_MAIN_INIT]
                assert struct.unpack_from("<I", init, 16)[0] == 1, what()   # agent_connected
                # The agent started, with no tokens: nothing may be sent.
                raw.main.send(MSGC_AGENT_START, struct.pack("<I", 0))
                q.serial_write("FLOOD")
                q.wait_serial(r"AGENT flood start", timeout=60)
                time.sleep(SETTLE_S * slowdown(helper_binary))
                at_settle = guest_flooded(q)
                display_keeps_going(q, h, raw, helper_binary, what())
                at_end = guest_flooded(q)
                assert at_end <= FLOOD_BOUND, what()
                assert at_end - at_settle <= SAY, what()
                assert raw.main.counts.get(MSG_AGENT_DATA, 0) == 0, what()
                # Tokens: the guest's messages flow again.
                raw.main.send(MSGC_AGENT_TOKEN, struct.pack("<I", 100000))
                wait_for(lambda: raw.main.counts.get(MSG_AGENT_DATA, 0) > 100,
                         30 * slowdown(helper_binary), what)
                wait_for(lambda: guest_flooded(q) > at_end + 2 * SAY,
                         30 * slowdown(helper_binary), what)
                assert_helper_healthy(h)
                print(f"guest wrote {at_settle} then {at_end} bytes while the client "
                      f"took nothing")                 # shown with pytest -rP
            finally:
                raw.close(reset=True)
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.rmdir(run)


@pytest.mark.timeout(240)
def test_guest_agent_breaks_framing(qemu_factory, guest, helper_binary):
    run = tempfile.mkdtemp(prefix="qs-agentbad-", dir="/tmp")
    path = os.path.join(run, "agent.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    try:
        q = agent_vm(qemu_factory, guest, f"path={path},server=off,reconnect=1")
        with serving(helper_binary, q, "--disable-ticketing", "--agent-fd",
                     listener.fileno(), pass_fds=[listener.fileno()]) as (h, port):
            listener.close()

            def what():
                return (f"helper: {h.stderr()[-2500:]}\nguest: "
                        f"{[l for l in q.serial_lines if 'FPS' not in str(l)][-12:]}")

            wait_for(lambda: "the guest's agent spoke" in h.stderr(), 120, what)
            raw = Session(port)
            try:
                since = len(q.serial_lines)
                q.serial_write("BADCHUNK")
                q.wait_serial(r"AGENT badchunk sent", timeout=30, since=since)
                wait_for(lambda: raw.main.counts.get(MSG_AGENT_DISCONNECTED, 0) == 1,
                         30 * slowdown(helper_binary), what)
                log = h.stderr()
                assert "broke the framing (agent chunk for port 7 (expected 1 or 2))" in log, \
                    what()
                display_keeps_going(q, h, raw, helper_binary, what())
                # qemu reconnects, the guest's agent reopens and speaks again.
                q.wait_serial(r"AGENT host-closed", timeout=30, since=since)
                wait_for(lambda: raw.main.counts.get(MSG_AGENT_CONNECTED, 0) == 1,
                         60 * slowdown(helper_binary), what)
                assert h.stderr().count("the guest's agent spoke") == 2, what()
                assert_helper_healthy(h)
            finally:
                raw.close(reset=True)
    finally:
        listener.close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.rmdir(run)
