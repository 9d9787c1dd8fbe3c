# SPDX-License-Identifier: GPL-2.0-or-later
"""The smartcard channel fed bad VSCard messages, and flooded, by a client.

qemu runs `-device usb-ccid` with a `ccid-card-passthru` on a
`-chardev socket,server=on`, connected and passed to the helper with
`--smartcard-fd` as the launcher does; the busy guest animates its
rectangle. A raw client (spice_raw.py) links main, display and the
smartcard channel and adds its reader (a VSC_ReaderAdd); qemu's answer
comes back translated (a VSC_Error of code 0 for reader 0, little
endian). qemu's passthru stops reading its chardev for good (across
reconnections: the VM keeps a reader that never answers again) once a
message does not fit its 64 KiB buffer (tried on 7.2 and 10.0 by writing
to the chardev directly), and reads fields a short message lacks; the
helper checks every message first (qs-smartcard-check.c). What is shown,
on qemu 7.2 and 10.0:

- each bad message (shorter than its header, a header whose length is
  not the message's, a body over 65 524 bytes, an unknown type, a
  VSC_Error without its code, a message for a reader not added) closes
  that client's smartcard channel with one log line naming the problem,
  after a short VSC_Init that is dropped; meanwhile the same session's
  display keeps getting the animation and QMP answers within 1 s;
- after every one of them the next client's reader is added by qemu
  again: its chardev survived (none of the bad bytes reached it);
- a client that floods valid APDUs of the largest size as fast as its
  socket takes them (qemu reads and discards them: the guest asked for
  none) leaves the display serving, QMP answering and the helper healthy,
  and the next client's reader is added again.
"""

import os
import struct
import tempfile
import threading
import time

import pytest

from fault_support import assert_helper_healthy, qmp_latency, slowdown
from serve_support import connect_chardev, serving
from spice_raw import MSGC_SPICEVMC_DATA, Channel, Session, link

CHANNEL_SMARTCARD = 8
VSC_INIT, VSC_ERROR, VSC_READER_ADD, VSC_APDU = 1, 2, 3, 7
UNDEFINED_READER = 0xFFFFFFFF
MAX_BODY = 64 * 1024 - 12
QMP_MAX_S = 1.0
SETTLE_S = 6.0
WATCH_S = 3.0

BAD = [
    ("short", b"\x07\x00\x00", "shorter than its header"),
    ("length", struct.pack("<III", VSC_APDU, 0, 100) + b"x" * 10,
     "header says 100 bytes but carries 10"),
    ("oversized", struct.pack("<III", VSC_APDU, 0, MAX_BODY + 1) + bytes(MAX_BODY + 1),
     f"qemu takes at most {MAX_BODY}"),
    ("type", struct.pack("<III", 99, 0, 0), "unknown type 99"),
    ("error", struct.pack("<III", VSC_ERROR, 0, 2) + b"ab", "without its code"),
    ("reader", struct.pack("<III", VSC_APDU, 5, 2) + b"\x90\x00", "for reader 5"),
]


def msg(type_, reader, body=b""):
    return struct.pack("<III", type_, reader, len(body)) + body


def card_args(path):
    return ["-device", "qemu-xhci,id=qsxhci",
            "-device", "usb-ccid,id=qsccid,bus=qsxhci.0",
            "-chardev", f"socket,id=qscard,path={path},server=on,wait=off",
            "-device", "ccid-card-passthru,chardev=qscard,bus=qsccid.0"]


class CardClient:
    """A raw session with the smartcard channel, its reader added: qemu's
    answer (a VSC_Error of code 0 for reader 0) has come back."""

    def __init__(self, port, what):
        self.raw = Session(port)
        self.card = Channel(link(port, CHANNEL_SMARTCARD, self.raw.session_id), "smartcard",
                            vmc=True)
        # A greeting shorter than a VSC_Init (qemu would read stale bytes for
        # its fields): dropped, as the client's greeting is.
        self.send(msg(VSC_INIT, 0))
        self.send(msg(VSC_READER_ADD, UNDEFINED_READER, b"raw reader"))
        want = msg(VSC_ERROR, 0, b"\0\0\0\0")
        deadline = time.monotonic() + 30
        while len(self.card.data) < len(want):
            assert not self.card.eof.is_set() and time.monotonic() < deadline, \
                f"no answer to the reader's add: {bytes(self.card.data)!r}\n{what()}"
            time.sleep(0.02)
        assert bytes(self.card.data) == want, f"{bytes(self.card.data)!r}\n{what()}"

    def send(self, body):
        self.card.send(MSGC_SPICEVMC_DATA, body)

    def close(self):
        self.card.close(reset=True)
        self.raw.main.close(reset=True)
        self.raw.display.close(reset=True)


@pytest.fixture
def served_card(qemu_factory, qemu_flavour, guest, helper_binary):
    run = tempfile.mkdtemp(prefix="qs-cardfault-", dir="/tmp")
    path = os.path.join(run, "card.sock")
    try:
        q = qemu_factory(guest=guest, vga="virtio", mode="busy", extra_args=card_args(path))
        q.wait_ready(timeout=120)
        chardev = connect_chardev(path)
        with serving(helper_binary, q, "--disable-ticketing",
                     f"--smartcard-fd={chardev.fileno()}",
                     pass_fds=[chardev.fileno()]) as (h, port):
            chardev.close()
            yield q, h, port, slowdown(helper_binary)
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.rmdir(run)


def display_serves(q, h, client, slow, what):
    before = client.raw.display.messages
    time.sleep(2.0)
    assert client.raw.display.messages > before, f"display stalled ({before})\n{what()}"
    assert qmp_latency(q) < QMP_MAX_S * slow, what()
    assert_helper_healthy(h)


@pytest.mark.timeout(400)
def test_smartcard_bad_messages(served_card):
    q, h, port, slow = served_card

    def what():
        return f"helper: {h.stderr()[-3000:]}\nqemu: {q.stderr_tail()}"

    for name, body, words in BAD:
        client = CardClient(port, what)
        try:
            client.send(body)
            assert client.card.eof.wait(timeout=20), f"{name}: channel not closed\n{what()}"
            lines = [l for l in h.stderr().splitlines()
                     if "smartcard: a smartcard" in l and "closing the client's channel" in l]
            assert lines and words in lines[-1], f"{name}: {lines}\n{what()}"
            display_serves(q, h, client, slow, what)
        finally:
            client.close()
    log = h.stderr()
    assert log.count("closing the client's channel") == len(BAD), what()
    assert log.count("smartcard: the client added its reader") == len(BAD), what()
    # The next client: qemu's chardev is still there and adds the reader.
    CardClient(port, what).close()
    print(what())                                       # shown with pytest -rP


@pytest.mark.timeout(400)
def test_smartcard_client_floods(served_card):
    q, h, port, slow = served_card

    def what():
        return f"sent {sent[0]} bytes\nhelper: {h.stderr()[-3000:]}\nqemu: {q.stderr_tail()}"

    sent = [0]
    client = CardClient(port, what)
    apdu = struct.pack("<HI", MSGC_SPICEVMC_DATA, 12 + MAX_BODY) + msg(VSC_APDU, 0,
                                                                      bytes(MAX_BODY))
    stop = threading.Event()

    def flood():
        try:
            while not stop.is_set():
                client.card.sock.sendall(apdu)
                sent[0] += len(apdu)
        except OSError:
            pass

    sender = threading.Thread(target=flood, daemon=True)
    sender.start()
    try:
        time.sleep(SETTLE_S * slow)
        before = client.raw.display.messages
        time.sleep(WATCH_S)
        assert client.raw.display.messages > before, f"display stalled ({before})\n{what()}"
        assert qmp_latency(q) < QMP_MAX_S * slow, what()
        assert_helper_healthy(h)
        assert not client.card.eof.is_set(), what()     # valid messages: kept
        assert sent[0] > 0, what()
    finally:
        stop.set()
        client.close()
        sender.join(timeout=10)
    CardClient(port, what).close()
    assert_helper_healthy(h)
    print(what())                                       # shown with pytest -rP
