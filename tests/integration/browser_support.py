# SPDX-License-Identifier: GPL-2.0-or-later
"""Headless Chromium driven over the DevTools protocol, for the tests of the
console page the helper serves itself: the page is opened as a user would
open the printed link, and the test reads what the page shows (its state,
its message, the guest's canvas pixel for pixel) instead of a screenshot
taken at a load event. The page forbids framing (CSP frame-ancestors), so
the iframe-and-held-image trick of html5_support.py cannot hold it.

The protocol runs over a pipe (--remote-debugging-pipe: Chromium reads
commands on its descriptor 3 and writes on 4, each message JSON ended by a
NUL byte), so no port is opened and no WebSocket client is needed. Every
wait is bounded."""

import base64
import fcntl
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import numpy
from PIL import Image

from harness.wait import wait_until
from html5_support import trusting_home
from serve_support import require_tool


class BrowserError(AssertionError):
    pass


class Browser:
    """One headless Chromium with one page. `ca_file`: a CA it trusts for
    TLS servers (through an NSS database in a throw-away HOME, as the
    wss test does); no certificate error is waved through."""

    def __init__(self, ca_file=None, log_path=None):
        self.chromium = require_tool("chromium", "chromium")
        self.ca_file = ca_file
        self.log_path = log_path
        self.events = []
        self._replies = {}
        self._cond = threading.Condition()
        self._next_id = 0
        self._closed = False

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="qs-chromium-")
        self.home = trusting_home(self.ca_file) if self.ca_file else None
        env = dict(os.environ, HOME=self.home) if self.home else dict(os.environ)
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()

        def fds():
            # Moved out of the way first: either pipe may already be 3 or 4.
            a = fcntl.fcntl(to_child, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._log = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [self.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={self.profile}",
             "--autoplay-policy=no-user-gesture-required", "--remote-debugging-pipe",
             "--enable-logging=stderr", "--v=0", "--window-size=1400,1000", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=env,
            preexec_fn=fds, close_fds=False, start_new_session=True)
        os.close(to_child)
        os.close(from_child)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target,
                                     flatten=True)["sessionId"]
            self.call("Runtime.enable", session=True)
            self.call("Page.enable", session=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close", timeout=5)
                except BrowserError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, 9)
                    self.proc.wait(timeout=10)
        finally:
            self._closed = True
            for fd in (self._out, self._in):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self._log is not subprocess.DEVNULL:
                self._log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
            if self.home:
                shutil.rmtree(self.home, ignore_errors=True)

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._in, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._closed = True
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def call(self, method, session=False, timeout=30, **params):
        with self._cond:
            self._next_id += 1
            mid = self._next_id
        msg = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data):]
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise BrowserError(f"{method}: no answer within {timeout} s"
                                       f"{' (Chromium went away)' if self._closed else ''}")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def open(self, url):
        res = self.call("Page.navigate", session=True, url=url)
        if res.get("errorText"):
            raise BrowserError(f"{url}: {res['errorText']}")

    def evaluate(self, expression, timeout=30):
        res = self.call("Runtime.evaluate", session=True, timeout=timeout,
                        expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression, timeout=60, interval=0.25):
        """The first truthy value of `expression`, polled until `timeout`."""
        return wait_until(lambda: self.evaluate(expression), timeout, interval,
                          lambda value: f"'{expression}' still {value!r} after {timeout} s; "
                                        f"page console: {self.console()[-3000:]}",
                          BrowserError)

    def console(self):
        """The page's console lines and exceptions so far."""
        lines = []
        with self._cond:
            events = list(self.events)
        for ev in events:
            if ev.get("method") == "Runtime.consoleAPICalled":
                args = ev["params"].get("args", [])
                lines.append(" ".join(str(a.get("value", a.get("description", "")))
                                      for a in args))
            elif ev.get("method") == "Runtime.exceptionThrown":
                lines.append(str(ev["params"]["exceptionDetails"].get("exception", {})
                                 .get("description", ev["params"]["exceptionDetails"])))
        return "\n".join(lines)

    def page_state(self):
        return self.evaluate("document.body ? document.body.dataset.state : null")

    def page_message(self):
        return self.evaluate("(() => { const m = document.getElementById('qs-message');"
                             " return m && !m.hidden ? m.textContent : null; })()")

    def location(self):
        return self.evaluate("window.location.href")

    def canvas(self, selector="#qs-screen canvas"):
        """(width, height, RGB bytes) of the page's first canvas, or None."""
        url = self.evaluate(f"(() => {{ const c = document.querySelector('{selector}');"
                            " return c ? c.toDataURL('image/png') : null; })()")
        if not url:
            return None
        png = base64.b64decode(url.split(",", 1)[1])
        with Image.open(io.BytesIO(png)) as img:
            img = img.convert("RGB")
            return img.width, img.height, img.tobytes()

    def wait_canvas(self, ref_size, ref, timeout=60):
        """Polls the canvas until it equals the picture `ref` (w, h) or
        `timeout` passes; returns the last (width, height, differing
        pixels, pixels) seen."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            got = self.canvas()
            if got is not None:
                w, h, pix = got
                if (w, h) == tuple(ref_size):
                    bad = 0 if pix == ref else int(numpy.count_nonzero(
                        (numpy.frombuffer(pix, numpy.uint8).reshape(-1, 3) !=
                         numpy.frombuffer(ref, numpy.uint8).reshape(-1, 3)).any(axis=1)))
                    last = (w, h, bad, w * h)
                    if bad == 0:
                        return last
                else:
                    last = (w, h, None, None)
            if time.monotonic() > deadline:
                return last
            time.sleep(0.5)
