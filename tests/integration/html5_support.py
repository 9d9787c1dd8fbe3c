# SPDX-License-Identifier: GPL-2.0-or-later
"""spice-html5 in headless Chromium, for the tests that need a browser:
websockify in front of the helper, a loopback page server whose load event
is held back, and one Chromium run.

Headless Chromium's --screenshot and --dump-dom act at the page's load
event, and --virtual-time-budget runs timers ahead of the real-time
websocket. So the test's page carries an image this server delivers only
after `hold_seconds`: the load event, and with it the screenshot or the DOM
dump, comes once spice-html5 has had that long."""

import contextlib
import http.server
import mimetypes
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time

import pytest

from harness.qemu import free_tcp_port
from serve_support import require_tool

HTML5_DIR = "/usr/share/spice-html5"
HOLD_PATH = "/hold"
PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000001e221bc3300000000"
                        "49454e44ae426082")


def require_html5():
    """(chromium, websockify) paths; a missing piece fails naming its package."""
    chromium = require_tool("chromium", "chromium")
    ws = require_tool("websockify", "websockify")
    if not os.path.exists(os.path.join(HTML5_DIR, "spice_auto.html")):
        pytest.fail(f"{HTML5_DIR}/spice_auto.html missing: apt-get install spice-html5")
    return chromium, ws


@contextlib.contextmanager
def page_server(page, hold_seconds, static_dir=None, tls_dir=None):
    """A loopback HTTP server: / is `page` (bytes), HOLD_PATH an image sent
    after `hold_seconds`, and with `static_dir` any other path that file
    of it (so a page can share spice-html5's origin); HTTPS with the
    server-cert.pem and server-key.pem of `tls_dir`. Yields its port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            if path == HOLD_PATH:
                time.sleep(hold_seconds)
                body, ctype = PNG_1PX, "image/png"
            elif path == "/":
                body, ctype = page, "text/html"
            else:
                file = os.path.normpath(os.path.join(static_dir or "/nonexistent",
                                                     path.lstrip("/")))
                if not static_dir or not file.startswith(static_dir + "/") or \
                        not os.path.isfile(file):
                    self.send_error(404)
                    return
                with open(file, "rb") as f:
                    body = f.read()
                ctype = ("text/javascript" if file.endswith(".js") else
                         mimetypes.guess_type(file)[0] or "application/octet-stream")
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if tls_dir:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(tls_dir, "server-cert.pem"),
                            os.path.join(tls_dir, "server-key.pem"))
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


@contextlib.contextmanager
def websockify(ws, helper, port, log_path, web=None):
    """websockify from a free loopback port to the helper's `port` (with
    `web`, also serving that folder); yields its port once it listens."""
    ws_port = free_tcp_port()
    argv = [ws] + (["--web", web] if web else []) + [f"127.0.0.1:{ws_port}",
                                                      f"127.0.0.1:{port}"]
    with open(log_path, "wb") as log:
        proxy = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            helper.wait_listening(ws_port)      # websockify's port (same check)
            yield ws_port
        finally:
            if proxy.poll() is None:
                os.killpg(proxy.pid, 15)
                try:
                    proxy.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proxy.pid, 9)
                    proxy.wait(timeout=10)


def trusting_home(ca_file):
    """A HOME whose NSS database (where Chromium on Linux looks for the
    user's certificate authorities) trusts `ca_file` for TLS servers."""
    certutil = require_tool("certutil", "libnss3-tools")
    home = tempfile.mkdtemp(prefix="qs-chromium-home-")
    db = os.path.join(home, ".pki", "nssdb")
    os.makedirs(db)
    for args in (["-N", "--empty-password"],
                 ["-A", "-t", "C,,", "-n", "qemu-spice test CA", "-i", str(ca_file)]):
        subprocess.run([certutil, "-d", f"sql:{db}", *args], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    return home


def run_chromium(chromium, url, action, timeout=90, ca_file=None):
    """One headless Chromium on `url` with `action` (e.g. "--dump-dom" or
    "--screenshot=PATH"), a throw-away profile and its console on stderr,
    trusting the test CA `ca_file` if given; returns the CompletedProcess."""
    profile = tempfile.mkdtemp(prefix="qs-chromium-")
    home = trusting_home(ca_file) if ca_file else None
    env = dict(os.environ, HOME=home) if home else None
    try:
        return subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             "--autoplay-policy=no-user-gesture-required",
             "--enable-logging=stderr", "--v=0", "--window-size=1400,1000", action, url],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, timeout=timeout, start_new_session=True, env=env)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
        if home:
            shutil.rmtree(home, ignore_errors=True)


def console_lines(stderr):
    """The page's console lines and Chromium's errors from its stderr."""
    return "\n".join(line for line in stderr.splitlines()
                     if "CONSOLE" in line or "ERROR" in line)
