# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue J, audio in the browser: spice-html5 plays only Opus at 48 kHz
stereo (its playback.js refuses any other MODE or START and logs "This
player cannot handle ..."), so before the helper spoke Opus a browser
console had no sound at all. Here the guest beeps (keydraw.beep, PC
speaker, qemu's default 44100 Hz, which the helper converts), spice-html5
runs in headless Chromium through websockify, and a probe page beside it
reads the <audio> element spice-html5 feeds through Media Source
Extensions: Chromium must have buffered over a second of the WebM/Opus
spice-html5 built from our packets, with no media error and no refusal in
the console.

The probe page and spice-html5's files come from one loopback HTTP server
of the test (same origin, so the probe can look into spice-html5's
iframe); its load event waits for an image served only after HOLD_SECONDS,
and Chromium's --dump-dom prints the probe's findings at that event."""

import http.server
import json
import mimetypes
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from harness.qemu import free_tcp_port
from serve_support import require_tool, serving

HTML5_DIR = "/usr/share/spice-html5"
AUDIODEV = "snd0"
BEEP_HZ = 440
HOLD_SECONDS = 12
PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000001e221bc3300000000"
                        "49454e44ae426082")

# Polls spice-html5's page (the iframe) every 100 ms: the most any <audio>
# element had buffered, media errors, and how many such elements it saw
# (spice-html5 makes one per START and drops it at STOP).
PROBE = """<!doctype html><html><body>
<iframe id="spice" src="%(spice_url)s" style="width:800px;height:600px"></iframe>
<pre id="probe">{}</pre>
<script>
var seen = new Set(), best = 0, errors = [];
setInterval(function () {
  var doc;
  try { doc = document.getElementById('spice').contentDocument; } catch (e) { return; }
  if (!doc) return;
  doc.querySelectorAll('audio').forEach(function (a) {
    seen.add(a.src);
    if (a.error) errors.push(a.error.code + ' ' + a.error.message);
    for (var i = 0; i < a.buffered.length; i++)
      best = Math.max(best, a.buffered.end(i) - a.buffered.start(i));
  });
  document.getElementById('probe').textContent = JSON.stringify(
    {elements: seen.size, buffered_s: best, errors: errors});
}, 100);
</script>
<img src="/hold" style="display:none"></body></html>"""


def page_server(spice_url):
    """/ the probe page, /hold the late image, anything else spice-html5's file."""
    page = (PROBE % {"spice_url": spice_url}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/hold":
                time.sleep(HOLD_SECONDS)
                body, ctype = PNG_1PX, "image/png"
            elif path == "/":
                body, ctype = page, "text/html"
            else:
                file = os.path.normpath(os.path.join(HTML5_DIR, path.lstrip("/")))
                if not file.startswith(HTML5_DIR + "/") or not os.path.isfile(file):
                    self.send_error(404)
                    return
                with open(file, "rb") as f:
                    body = f.read()
                ctype = mimetypes.guess_type(file)[0] or "application/octet-stream"
                if file.endswith(".js"):
                    ctype = "text/javascript"
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.mark.timeout(180)
def test_spice_html5_buffers_opus(qemu_factory, guest, helper_binary, tmp_path):
    chromium = require_tool("chromium", "chromium")
    ws = require_tool("websockify", "websockify")
    if not os.path.exists(os.path.join(HTML5_DIR, "spice_auto.html")):
        pytest.fail(f"{HTML5_DIR}/spice_auto.html missing: apt-get install spice-html5")
    q = qemu_factory(flavour="trixie", cmdline_extra=f"keydraw.beep={BEEP_HZ}",
                     audiodev=AUDIODEV)
    q.wait_serial("BEEP on", timeout=120)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        ws_port = free_tcp_port()
        ws_log = open(tmp_path / "websockify.log", "wb")
        proxy = subprocess.Popen([ws, f"127.0.0.1:{ws_port}", f"127.0.0.1:{port}"],
                                 stdin=subprocess.DEVNULL, stdout=ws_log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        profile = tempfile.mkdtemp(prefix="qs-chromium-")
        server = None
        try:
            h.wait_listening(ws_port)       # websockify's port (same check)
            server = page_server(f"/spice_auto.html?host=127.0.0.1&port={ws_port}")
            url = f"http://127.0.0.1:{server.server_address[1]}/"
            res = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 "--autoplay-policy=no-user-gesture-required",
                 "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, timeout=90, start_new_session=True)
        finally:
            if server is not None:
                server.shutdown()
                server.server_close()
            if proxy.poll() is None:
                os.killpg(proxy.pid, 15)
                try:
                    proxy.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proxy.pid, 9)
                    proxy.wait(timeout=10)
            ws_log.close()
            shutil.rmtree(profile, ignore_errors=True)
    log = h.stderr()
    (tmp_path / "chromium.log").write_text(res.stderr)
    console = "\n".join(line for line in res.stderr.splitlines() if "CONSOLE" in line)
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    what = (f"probe: {m.group(1) if m else None}; console: {console[-3000:]}; "
            f"helper: {log[-2000:]}")
    assert m, f"no probe in chromium's DOM ({res.returncode}): {res.stderr[-2000:]}"
    probe = json.loads(m.group(1).replace("&quot;", '"'))
    assert "cannot handle" not in console, what
    assert "playback: Opus at 48000 Hz" in log, what
    assert probe["elements"] >= 1, what
    assert not probe["errors"], what
    assert probe["buffered_s"] > 1.0, what
    print(what)
