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

The probe page and spice-html5's files come from one loopback page server
(html5_support.py; same origin, so the probe can look into spice-html5's
iframe); its load event waits HOLD_SECONDS, and Chromium's --dump-dom
prints the probe's findings at that event."""

import json
import re

import pytest

from html5_support import (HOLD_PATH, HTML5_DIR, console_lines, page_server, require_html5,
                           run_chromium, websockify)
from serve_support import serving

AUDIODEV = "snd0"
BEEP_HZ = 440
HOLD_SECONDS = 12

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
<img src="%(hold)s" style="display:none"></body></html>"""


@pytest.mark.timeout(180)
def test_spice_html5_buffers_opus(qemu_factory, guest, helper_binary, tmp_path):
    chromium, ws = require_html5()
    q = qemu_factory(flavour="trixie", cmdline_extra=f"keydraw.beep={BEEP_HZ}",
                     audiodev=AUDIODEV)
    q.wait_serial("BEEP on", timeout=120)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        with websockify(ws, h, port, tmp_path / "websockify.log") as ws_port:
            page = PROBE % {"spice_url": f"/spice_auto.html?host=127.0.0.1&port={ws_port}",
                            "hold": HOLD_PATH}
            with page_server(page.encode(), HOLD_SECONDS, static_dir=HTML5_DIR) as page_port:
                res = run_chromium(chromium, f"http://127.0.0.1:{page_port}/", "--dump-dom")
    log = h.stderr()
    (tmp_path / "chromium.log").write_text(res.stderr)
    console = console_lines(res.stderr)
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
