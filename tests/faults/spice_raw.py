# SPDX-License-Identifier: GPL-2.0-or-later
"""A raw SPICE client for the fault tests: it links main and display on the
plain port (ticketing disabled), then reads, stops reading, acknowledges or
not, exactly as a test tells it. spice-gtk cannot misbehave on purpose; this
can. No tests here.

Only what a misbehaving client needs: the link (header, SpiceLinkMess, the
RSA-OAEP-SHA1 ticket of a password, empty by default), mini-header messages, and the
base messages (SET_ACK, PING; ACK_SYNC, ACK, PONG), and a port channel's
SPICEVMC_DATA both ways."""

import errno
import fcntl
import socket
import struct
import termios
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

SPICE_MAGIC = b"REDQ"
VERSION = (2, 2)
CHANNEL_MAIN, CHANNEL_DISPLAY, CHANNEL_PORT = 1, 2, 10
# Common caps: PROTOCOL_AUTH_SELECTION 0, AUTH_SPICE 1, MINI_HEADER 3.
COMMON_CAPS = (1 << 0) | (1 << 1) | (1 << 3)
AUTH_SPICE = 1
# Server messages (base).
MSG_SET_ACK, MSG_PING = 3, 4
MSG_MAIN_INIT = 103
MSG_SPICEVMC_DATA, MSG_PORT_INIT = 101, 201
# Client messages (base, display).
MSGC_ACK_SYNC, MSGC_ACK, MSGC_PONG = 1, 2, 3
MSGC_DISPLAY_INIT = 101
MSGC_SPICEVMC_DATA = 101
LINK_TIMEOUT = 10.0


class LinkError(Exception):
    pass


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise LinkError(f"server closed after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


def link(port, channel_type, connection_id=0, host="127.0.0.1", password=""):
    """A linked channel socket (blocking, no timeout), or LinkError."""
    return link_over(socket.create_connection((host, port), timeout=LINK_TIMEOUT),
                     channel_type, connection_id, password)


def link_over(sock, channel_type, connection_id=0, password=""):
    """The link on a connected socket of ours (plain, or wrapped in TLS by
    the caller; closed on failure): the socket, linked, or LinkError."""
    sock.settimeout(LINK_TIMEOUT)
    try:
        mess = struct.pack("<IBBIII", connection_id, channel_type, 0, 1, 0, 18)
        mess += struct.pack("<I", COMMON_CAPS)
        sock.sendall(SPICE_MAGIC + struct.pack("<III", *VERSION, len(mess)) + mess)
        magic, major, _minor, size = struct.unpack("<4sIII", _recv_exact(sock, 16))
        if magic != SPICE_MAGIC or major != VERSION[0] or not 178 <= size <= 4096:
            raise LinkError(f"bad link reply header {magic!r} {major} {size}")
        body = _recv_exact(sock, size)
        err = struct.unpack_from("<I", body)[0]
        if err:
            raise LinkError(f"link refused: error {err}")
        key = serialization.load_der_public_key(body[4:166])
        ticket = key.encrypt(password.encode() + b"\0", padding.OAEP(mgf=padding.MGF1(hashes.SHA1()),
                                                 algorithm=hashes.SHA1(), label=None))
        sock.sendall(struct.pack("<I", AUTH_SPICE) + ticket)
        result = struct.unpack("<I", _recv_exact(sock, 4))[0]
        if result:
            raise LinkError(f"link result {result}")
        sock.settimeout(None)
        return sock
    except BaseException:
        sock.close()
        raise


class Channel:
    """One linked channel with a reader thread.

    The thread reads and parses messages only while `reading` is set; with
    `ack` it answers SET_ACK with ACK_SYNC and acknowledges every window of
    messages as spice-gtk does, with `pong` it answers PINGs. Counters:
    `messages`, `bytes`, `last_rx` (monotonic), `eof` (the server closed);
    with `vmc`, `data` holds the SPICEVMC_DATA bytes received, in order.
    With read=False it reads nothing until `reading` is set."""

    def __init__(self, sock, name, ack=True, pong=True, read=True, vmc=False):
        self.sock = sock
        self.name = name
        self.ack = ack
        self.pong = pong
        self.reading = threading.Event()
        if read:
            self.reading.set()
        self.vmc = vmc
        self.data = bytearray()
        self.messages = 0
        self.bytes = 0
        self.last_rx = None
        self.eof = threading.Event()
        self.error = None
        self.ack_generation = None
        self.ack_window = 0
        self._since_ack = 0
        self.pings = 0
        self.first = {}          # type -> payload of the first such message
        self.counts = {}         # type -> messages of that type
        self._send_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"raw-{name}")
        self._thread.start()

    # -- sending -------------------------------------------------------------

    def send(self, msg_type, payload=b""):
        with self._send_lock:
            self.sock.sendall(struct.pack("<HI", msg_type, len(payload)) + payload)

    def send_blind_ack(self):
        """An ACK (after the ACK_SYNC for the generation seen) without
        having read anything: what defeats the ACK window."""
        self.send(MSGC_ACK)

    # -- reading -------------------------------------------------------------

    def _recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def _run(self):
        try:
            while True:
                self.reading.wait()
                hdr = self._recv_exact(6)
                if hdr is None:
                    break
                msg_type, size = struct.unpack("<HI", hdr)
                body = self._recv_exact(size) if size else b""
                if body is None:
                    break
                self._handle(msg_type, body)
        except OSError as e:
            if not self._closing:
                self.error = e
        self.eof.set()

    def _handle(self, msg_type, body):
        self.messages += 1
        self.bytes += 6 + len(body)
        self.last_rx = time.monotonic()
        self.first.setdefault(msg_type, body)
        self.counts[msg_type] = self.counts.get(msg_type, 0) + 1
        if self.vmc and msg_type == MSG_SPICEVMC_DATA:
            self.data += body
        if msg_type == MSG_SET_ACK and len(body) >= 8:
            self.ack_generation, self.ack_window = struct.unpack_from("<II", body)
            self._since_ack = 0
            if self.ack:
                self.send(MSGC_ACK_SYNC, struct.pack("<I", self.ack_generation))
            return
        if msg_type == MSG_PING and len(body) >= 12:
            self.pings += 1
            if self.pong:
                self.send(MSGC_PONG, body[:12])
        if self.ack and self.ack_window:
            self._since_ack += 1
            if self._since_ack >= self.ack_window:
                self._since_ack = 0
                self.send(MSGC_ACK)

    # -- state ---------------------------------------------------------------

    def unread_bytes(self):
        """Bytes the kernel holds for us, not yet read (FIONREAD)."""
        buf = fcntl.ioctl(self.sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
        return struct.unpack("<i", buf)[0]

    def wait_messages(self, count, timeout):
        deadline = time.monotonic() + timeout
        while self.messages < count:
            if self.eof.is_set() or time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def close(self, reset=False):
        """Closes the socket; with reset=True abruptly (RST, SO_LINGER 0)."""
        self._closing = True
        self.reading.set()
        try:
            if reset:
                # SHUT_RD sends nothing but wakes the reader thread out of
                # recv (which would otherwise keep the socket alive past
                # close); close with a zero linger then sends the RST.
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", 1, 0))
                self.sock.shutdown(socket.SHUT_RD)
            else:
                self.sock.shutdown(socket.SHUT_RDWR)
        except OSError as e:
            if e.errno != errno.ENOTCONN:
                raise
        self._thread.join(timeout=5)
        self.sock.close()


class Session:
    """main + display of one raw client. `display_ack`/`display_pong`/
    `display_read` choose how the display channel behaves (main always
    reads, acks and pongs)."""

    def __init__(self, port, display_ack=True, display_pong=True, display_read=True):
        self.main = Channel(link(port, CHANNEL_MAIN), "main")
        deadline = time.monotonic() + LINK_TIMEOUT
        while MSG_MAIN_INIT not in self.main.first:
            if self.main.eof.is_set() or time.monotonic() > deadline:
                self.main.close()
                raise LinkError("no MAIN_INIT from the server")
            time.sleep(0.01)
        self.session_id = struct.unpack_from("<I", self.main.first[MSG_MAIN_INIT])[0]
        try:
            self.display = Channel(link(port, CHANNEL_DISPLAY, self.session_id), "display",
                                   ack=display_ack, pong=display_pong, read=display_read)
        except BaseException:
            self.main.close()
            raise
        # DISPLAY_INIT: no pixmap cache, no GLZ dictionary. The helper
        # sends nothing on display before it.
        self.display.send(MSGC_DISPLAY_INIT, struct.pack("<BqBi", 0, 0, 0, 0))

    def channels(self):
        return (self.main, self.display)

    def closed_by_server(self, timeout):
        """True if both channels saw EOF (reading everything) in time."""
        for ch in self.channels():
            ch.reading.set()
        deadline = time.monotonic() + timeout
        return all(ch.eof.wait(max(0.0, deadline - time.monotonic()))
                   for ch in self.channels())

    def close(self, reset=False):
        for ch in self.channels():
            ch.close(reset=reset)
