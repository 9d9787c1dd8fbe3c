# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the test_serve_* tests: the helper serving SPICE to real
clients. No tests here."""

import contextlib
import shutil
import socket
import subprocess
import time

import pytest

from harness.qemu import free_tcp_port
from test_display_support import Helper

# Boot to READY takes ~3 s alone but much longer on a loaded 2-core machine.
READY_TIMEOUT = 45.0
# What qs-test-client's --host-subject must be for make_pki's server cert.
SUBJECT = "C=XX,O=qemu-spice,CN=localhost"


def require_tool(name, package):
    """A missing tool fails the test naming the Debian package (no skip)."""
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} not found: apt-get install {package}")
    return path


def run_client(binary, *args, timeout=20, check=True):
    """qs-test-client with --timeout; bounded by the timeout plus slack."""
    argv = [str(binary), "--timeout", str(timeout), *map(str, args)]
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, timeout=timeout + 30)
    if check and res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stderr.strip()[-1500:]}")
    return res


def error_line(res):
    lines = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert lines, f"no error line (exit {res.returncode}): {res.stderr!r}"
    return lines[-1]


def ticket_file(directory, name, password, expiry=None):
    path = directory / name
    text = password + "\n"
    if expiry is not None:
        text += f"expiry={expiry}\n"
    path.write_text(text)
    path.chmod(0o600)
    return path


def make_pki(directory):
    """A test CA and a server certificate for 127.0.0.1/localhost, in the
    x509-dir layout (ca-cert.pem, server-cert.pem, server-key.pem)."""
    ext = directory / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem",
            "-out", "ca-cert.pem", "-days", "2", "-subj", "/CN=qs-test-ca")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server-key.pem",
            "-out", "server.csr", "-subj", "/C=XX/O=qemu-spice/CN=localhost")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem",
            "-CAcreateserial", "-out", "server-cert.pem", "-days", "2", "-extfile", str(ext))
    return directory


@contextlib.contextmanager
def serving(helper_binary, q, *args, tls=False, pass_fds=()):
    """The helper attached to qemu `q`, listening on a free loopback port,
    inheriting `pass_fds` besides qemu's D-Bus connection.

    Yields (helper, port) or, with tls=True (then args must carry --tls-dir),
    (helper, port, tls_port)."""
    port = free_tcp_port()
    argv = ["--listen", f"127.0.0.1:{port}"]
    tls_port = None
    if tls:
        tls_port = free_tcp_port()
        argv += ["--tls-listen", f"127.0.0.1:{tls_port}"]
    with Helper.p2p(helper_binary, q, [*argv, *map(str, args)], control=False,
                    pass_fds=pass_fds) as h:
        h.wait_listening(port)
        if tls:
            h.wait_listening(tls_port)
            yield h, port, tls_port
        else:
            yield h, port


def crop(width, pixels, x, y, w, h):
    return b"".join(pixels[((y + r) * width + x) * 3:((y + r) * width + x + w) * 3]
                    for r in range(h))


def find_block(hay_w, hay_h, hay, block_w, block_h, block, step=1):
    """(x, y) where the RGB `block` occurs in the RGB picture `hay`, or None.

    Matches the first row with bytes.find, then checks the other rows."""
    first = block[:block_w * 3]
    row_bytes = hay_w * 3
    for y in range(0, hay_h - block_h + 1, step):
        row = hay[y * row_bytes:(y + 1) * row_bytes]
        start = 0
        while True:
            i = row.find(first, start)
            if i < 0:
                break
            start = i + 1
            if i % 3:
                continue
            x = i // 3
            if x + block_w > hay_w:
                break
            if crop(hay_w, hay, x, y, block_w, block_h) == block:
                return x, y
    return None


def distinctive_block(width, height, pixels, size=48):
    """A size x size block of the picture with many colours (a good needle)."""
    best, best_n = None, -1
    for y in range(0, height - size, size):
        for x in range(0, width - size, size):
            blk = crop(width, pixels, x, y, size, size)
            n = len({blk[i:i + 3] for i in range(0, len(blk), 3)})
            if n > best_n:
                best, best_n = (x, y, blk), n
    return best, best_n


def virtio_port_args(name, chardev):
    """qemu arguments for a virtserialport `name` on `-chardev socket,`
    `chardev` (e.g. "path=P,server=on,wait=off")."""
    return ["-chardev", f"socket,id=qsport,{chardev}",
            "-device", "virtio-serial-pci,id=qsports",
            "-device", f"virtserialport,bus=qsports.0,chardev=qsport,name={name}"]


def connect_chardev(path, timeout=20.0):
    """What the launcher does for a port: a connection to qemu's listening
    chardev socket (retried until qemu has made it)."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextlib.contextmanager
def serving_port(helper_binary, q, name, sock, *args):
    """serving() with `sock` passed as the chardev of port `name`
    (--port-fd; our copy closed), once the test guest's echo end
    (tests/guest/keydraw-echo.c) says the host side is connected. Yields
    (helper, port, the serial line count then)."""
    with serving(helper_binary, q, "--disable-ticketing", *args, "--port-fd",
                 f"{name}={sock.fileno()}", pass_fds=[sock.fileno()]) as (h, port):
        sock.close()                # the helper holds it now
        q.wait_serial(r"ECHO connected", timeout=60)
        yield h, port, len(q.serial_lines)
