# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue V: the helper serves the browser client itself. Headless Chromium
(driven over the DevTools protocol, browser_support.py) opens
http(s)://127.0.0.1:PORT/#TOKEN on OUR helper's console ports: the page
(ours) loads Debian's spice-html5 from the same port, takes the token from
the fragment, and its canvas equals qemu's screendump. A single-use token's
second open, an expired token and a forged one are refused in the page's
words and in one helper log line each. Any other path is a 404 and never a
file: the helper read spice-html5's directory once, before it confined
itself.

Tokens come from docs/examples/mint_token.py (test_serve_tokens.py's
helpers); the printed link of the launcher is test_launcher_console.py's."""

import gzip
import http.client
import shutil
import socket
import ssl
import time

import pytest

from browser_support import Browser
from serve_support import READY_TIMEOUT, make_pki, serving
from test_serve_tokens import helper_keys, token

HTML5_DIR = "/usr/share/spice-html5"
REFUSED = {
    "used": "has been used already",
    "expired": "has expired",
    "wrong": "is not valid for this console",
}


@pytest.fixture
def still_guest(qemu_factory, guest):
    """A guest that drew its picture and was stopped: the screendump is
    what any client must show."""
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


def wait_log(h, needle, count=1, timeout=10):
    deadline = time.monotonic() + timeout
    while h.stderr().count(needle) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"not {count} x '{needle}' in the helper's log:\n"
                                 f"{h.stderr()[-3000:]}")
        time.sleep(0.1)


def open_exact(browser, url, ref_size, ref, log):
    """Opens `url`; the page connects and its canvas equals `ref`. `log()`
    gives the helper's log for a failure's message."""
    browser.open(url)
    browser.wait_for("document.body && ['connected', 'refused', 'error', 'used', 'expired',"
                     " 'wrong', 'missing'].includes(document.body.dataset.state)", timeout=60)
    assert browser.page_state() == "connected", \
        (browser.page_state(), browser.page_message(), browser.console()[-2000:],
         log()[-2000:])
    # The token left the address bar and the history entry.
    assert "#" not in browser.location(), browser.location()
    got = browser.wait_canvas(ref_size, ref, timeout=60)
    assert got is not None and got[:2] == tuple(ref_size), \
        (got, ref_size, browser.console()[-2000:])
    assert got[2] == 0, f"{got[2]} of {got[3]} canvas pixels differ from qemu's screendump"


def open_refused(browser, url, state):
    """Opens `url`; the page refuses it with its message for `state`."""
    browser.open(url)
    browser.wait_for(f"document.body && document.body.dataset.state === '{state}'",
                     timeout=30)
    message = browser.page_message()
    assert message and REFUSED[state] in message, (state, message)
    assert browser.evaluate("document.querySelector('#qs-screen canvas') === null")


@pytest.mark.timeout(300)
def test_console_page_plain(still_guest, helper_binary, tmp_path):
    """The link on the plain port: the picture exact; the same single-use
    link again, an expired token and a forged one refused, each with the
    page's message and one helper log line; the token never in the log."""
    q = still_guest
    keys = helper_keys(tmp_path, [2])
    once = token(single_use=True)
    with serving(helper_binary, q, "--token-keys-file", keys) as (h, port), \
            Browser(log_path=tmp_path / "chromium.log") as b:
        q.stop()
        w, hgt, ref = q.screendump()
        open_exact(b, f"http://127.0.0.1:{port}/#{once}", (w, hgt), ref, h.stderr)
        assert "(WebSocket) (token)" in h.stderr(), h.stderr()[-2000:]
        b.open("about:blank")       # the first viewer leaves
        open_refused(b, f"http://127.0.0.1:{port}/#{once}", "used")
        wait_log(h, "token refused: single-use token already used")
        short = token(single_use=True, ttl=1)
        time.sleep(2.2)
        open_refused(b, f"http://127.0.0.1:{port}/#{short}", "expired")
        wait_log(h, "token refused: expired token")
        good = token()
        forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
        open_refused(b, f"http://127.0.0.1:{port}/#{forged}", "wrong")
        wait_log(h, "console page for 127.0.0.1:", count=3)
        log = h.stderr()
        assert log.count("console page for ") == 3, log[-3000:]
        for t in (once, short, forged):
            assert t[4:] not in log


@pytest.mark.timeout(300)
def test_console_page_tls(still_guest, helper_binary, tmp_path):
    """The link on the TLS port: https and wss with the test CA trusted by
    Chromium (no certificate error waved through), the picture exact."""
    q = still_guest
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    keys = helper_keys(tmp_path, [2])
    once = token(single_use=True, view_only=True)
    with serving(helper_binary, q, "--tls-dir", pki, "--token-keys-file", keys,
                 "--secure-channels", "all", tls=True) as (h, port, tls_port), \
            Browser(ca_file=pki / "ca-cert.pem", log_path=tmp_path / "chromium.log") as b:
        q.stop()
        w, hgt, ref = q.screendump()
        open_exact(b, f"https://127.0.0.1:{tls_port}/#{once}", (w, hgt), ref, h.stderr)
        log = h.stderr()
        assert "(TLS) (WebSocket) (view only) (token)" in log, log[-2000:]


def raw_get(port, target, tls_ctx=None, extra=""):
    """(status, headers, body) of one GET, sent as written (no client-side
    normalisation of the path; `extra`: header lines)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    if tls_ctx:
        sock = tls_ctx.wrap_socket(sock, server_hostname="localhost")
    with sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


@pytest.mark.timeout(180)
def test_console_page_paths(still_guest, helper_binary, tmp_path):
    """Every path outside the table is a 404 with no file's bytes in it, on
    both ports; spice-html5's directory is read once: a file changed or
    added there later is never served. --no-console-page: a 400."""
    q = still_guest
    html5 = tmp_path / "spice-html5"
    shutil.copytree(HTML5_DIR, html5)
    (html5 / "secret.txt").write_text("SECRET-FILE-BYTES\n")
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    ctx = ssl.create_default_context(cafile=str(pki / "ca-cert.pem"))
    keys = helper_keys(tmp_path, [2])
    original_main = (html5 / "main.js").read_bytes()
    with serving(helper_binary, q, "--token-keys-file", keys, "--spice-html5-dir", html5,
                 "--tls-dir", pki, tls=True) as (h, port, tls_port):
        (html5 / "main.js").write_text("// CHANGED-AFTER-START\n")
        (html5 / "added.js").write_text("// ADDED-AFTER-START\n")
        for p, c in ((port, None), (tls_port, ctx)):
            status, headers, body = raw_get(p, "/", c)
            assert status == 200 and b"/qs/console.js" in body
            csp = headers["Content-Security-Policy"]
            assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, csp
            assert headers["Cache-Control"] == "no-store"
            assert headers["X-Content-Type-Options"] == "nosniff"
            assert headers["Referrer-Policy"] == "no-referrer"
            status, headers, body = raw_get(p, "/spice-html5/main.js", c)
            assert status == 200 and body == original_main
            assert "Content-Encoding" not in headers
            # kept gzipped: so to a client that takes gzip
            status, headers, body = raw_get(p, "/spice-html5/main.js", c,
                                            "Accept-Encoding: gzip, deflate\r\n")
            assert headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(body) == original_main
            for target in ("/spice-html5/added.js", "/spice-html5/secret.txt",
                           "/spice-html5/spice_auto.html", "/spice-html5/",
                           "/spice-html5/../../../../etc/passwd", "/etc/passwd",
                           "/../../etc/passwd", "/%2e%2e/etc/passwd", "/proc/self/environ",
                           f"/spice-html5/{'x' * 200}.js", "/qs/", "/favicon.ico"):
                status, _, body = raw_get(p, target, c)
                assert status == 404, (target, status)
                assert body == b"not found\n", (target, body[:200])
            status, _, body = raw_get(p, f"/?token={token()}", c)
            assert status == 400 and b"after '#'" in body
    with serving(helper_binary, q, "--token-keys-file", keys,
                 "--no-console-page") as (h, port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().status == 400
        wait_log(h, "serves no console page")
