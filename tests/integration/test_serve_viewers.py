# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: real SPICE viewers show the guest through OUR helper.

remote-viewer (virt-viewer) under Xvfb, and spice-html5 in headless
Chromium through websockify. The guest is stopped first, so its picture is
qemu's screendump; the viewer's screenshot must contain it (found by a
distinctive block of the screendump, then compared over the whole guest
picture at that offset)."""

import http.server
import io
import os
import threading
import shutil
import subprocess
import tempfile
import time

import pytest
from PIL import Image

from harness import Xvfb
from harness.qemu import free_tcp_port
from serve_support import (READY_TIMEOUT, distinctive_block, find_block, require_tool,
                           serving, ticket_file)

PASSWORD = "viewer-ticket"
HTML5_DIR = "/usr/share/spice-html5"
# Headless Chromium's --screenshot fires at the page's load event, and
# --virtual-time-budget runs timers ahead of the real-time websocket. So the
# page is a wrapper whose load event waits for an image the test's own HTTP
# server delivers only after this many seconds, with spice-html5 in an iframe.
HOLD_SECONDS = 15
PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000001e221bc3300000000"
                        "49454e44ae426082")


def wrapper_server(spice_url):
    """A loopback HTTP server: / is the wrapper page, /hold the late image."""
    page = ("<!doctype html><html><body style='margin:0'>"
            f"<iframe src='{spice_url}' style='border:0;width:1400px;height:1000px'>"
            "</iframe><img src='/hold' style='display:none'></body></html>").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/hold":
                time.sleep(HOLD_SECONDS)
                body, ctype = PNG_1PX, "image/png"
            else:
                body, ctype = page, "text/html"
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


def stopped_guest(qemu_factory, guest):
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


def match_ratio(ref_w, ref_h, ref, shot_w, shot_h, shot, x0, y0):
    """Fraction of the guest picture's pixels equal in the shot at (x0, y0)
    (pixels outside the shot count as different)."""
    same = 0
    for y in range(ref_h):
        if y0 + y >= shot_h:
            break
        w = min(ref_w, shot_w - x0)
        a = ref[y * ref_w * 3:(y * ref_w + w) * 3]
        b = shot[((y0 + y) * shot_w + x0) * 3:((y0 + y) * shot_w + x0 + w) * 3]
        if a == b:
            same += w
        else:
            same += sum(1 for i in range(0, len(a), 3) if a[i:i + 3] == b[i:i + 3])
    return same / (ref_w * ref_h)


def locate_guest(ref_w, ref_h, ref, png_bytes):
    """(x, y, ratio) of the guest picture in the screenshot, or None."""
    with Image.open(io.BytesIO(png_bytes)) as img:
        img = img.convert("RGB")
        sw, sh, shot = img.width, img.height, img.tobytes()
    (bx, by, block), colours = distinctive_block(ref_w, ref_h, ref)
    assert colours > 8, "guest picture too plain to locate"
    pos = find_block(sw, sh, shot, 48, 48, block)
    if pos is None:
        return None
    x0, y0 = pos[0] - bx, pos[1] - by
    if x0 < 0 or y0 < 0:
        return None
    return x0, y0, match_ratio(ref_w, ref_h, ref, sw, sh, shot, x0, y0)


def remote_viewer_sight(viewer, vv, xvfb, ref_w, ref_h, ref, tmp_path, timeout=60):
    """Opens remote-viewer on `vv` in `xvfb` and screenshots the screen until
    the guest picture `ref` is found whole (ratio >= 0.99) or `timeout`
    passes; returns locate_guest()'s last answer. Its log is
    tmp_path/remote-viewer.log."""
    env = dict(os.environ, **xvfb.env(), GDK_BACKEND="x11", NO_AT_BRIDGE="1")
    log_path = tmp_path / "remote-viewer.log"
    best = None
    with open(log_path, "wb") as log:
        rv = subprocess.Popen([viewer, str(vv)], env=env, stdin=subprocess.DEVNULL,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            shot_path = tmp_path / "screen.png"
            while time.monotonic() < deadline:
                assert rv.poll() is None, \
                    f"remote-viewer exited {rv.returncode}: {log_path.read_text()[-2000:]}"
                subprocess.run(["import", "-window", "root", str(shot_path)], env=env,
                               check=True, timeout=30, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
                best = locate_guest(ref_w, ref_h, ref, shot_path.read_bytes())
                if best and best[2] >= 0.99:
                    break
                time.sleep(1.0)
        finally:
            if rv.poll() is None:
                os.killpg(rv.pid, 15)
                try:
                    rv.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(rv.pid, 9)
                    rv.wait(timeout=10)
    return best


@pytest.mark.timeout(180)
def test_remote_viewer_shows_guest(qemu_factory, guest, helper_binary, tmp_path):
    viewer = require_tool("remote-viewer", "virt-viewer")
    require_tool("import", "imagemagick")
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", PASSWORD)
    with serving(helper_binary, q, "--ticket-file", server) as (h, port), \
            Xvfb(screen="1600x1000x24") as x:
        q.stop()
        w, hgt, ref = q.screendump()
        Image.frombytes("RGB", (w, hgt), ref).save(tmp_path / "screendump.png")
        vv = tmp_path / "guest.vv"
        vv.write_text("[virt-viewer]\ntype=spice\nhost=127.0.0.1\n"
                      f"port={port}\npassword={PASSWORD}\ndelete-this-file=0\n"
                      "title=qs-test\n")
        vv.chmod(0o600)
        best = remote_viewer_sight(viewer, vv, x, w, hgt, ref, tmp_path)
        shot_path = tmp_path / "screen.png"
        assert best is not None, ("guest picture not found in the remote-viewer screen "
                                  f"({shot_path}); log: "
                                  f"{(tmp_path / 'remote-viewer.log').read_text()[-2000:]}; "
                                  f"helper: {h.stderr()[-2000:]}")
        # the mouse pointer may cover a few pixels; everything else is exact
        assert best[2] >= 0.99, f"guest at {best[:2]} but only {best[2]:.4f} of it matches"


@pytest.mark.timeout(180)
def test_spice_html5_in_chromium_shows_guest(qemu_factory, guest, helper_binary, tmp_path):
    chromium = require_tool("chromium", "chromium")
    ws = require_tool("websockify", "websockify")
    if not os.path.exists(os.path.join(HTML5_DIR, "spice_auto.html")):
        pytest.fail(f"{HTML5_DIR}/spice_auto.html missing: apt-get install spice-html5")
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", PASSWORD)
    with serving(helper_binary, q, "--ticket-file", server) as (h, port):
        q.stop()
        w, hgt, ref = q.screendump()
        Image.frombytes("RGB", (w, hgt), ref).save(tmp_path / "screendump.png")
        ws_port = free_tcp_port()
        ws_log = open(tmp_path / "websockify.log", "wb")
        proxy = subprocess.Popen([ws, "--web", HTML5_DIR, f"127.0.0.1:{ws_port}",
                                  f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                                 stdout=ws_log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        profile = tempfile.mkdtemp(prefix="qs-chromium-")
        shot = tmp_path / "chromium.png"
        wrapper = None
        try:
            h.wait_listening(ws_port)       # websockify's port (same check)
            spice_url = (f"http://127.0.0.1:{ws_port}/spice_auto.html?host=127.0.0.1"
                         f"&port={ws_port}&password={PASSWORD}")
            wrapper = wrapper_server(spice_url)
            url = f"http://127.0.0.1:{wrapper.server_address[1]}/"
            res = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                 "--enable-logging=stderr", "--v=0", f"--screenshot={shot}",
                 "--window-size=1400,1000", url],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, timeout=90, start_new_session=True)
            console = "\n".join(line for line in res.stderr.splitlines()
                                if "CONSOLE" in line or "ERROR" in line)
            (tmp_path / "chromium.log").write_text(res.stderr)
            assert shot.exists(), f"chromium wrote no screenshot ({res.returncode}): " \
                                  f"{res.stderr[-2000:]}"
            found = locate_guest(w, hgt, ref, shot.read_bytes())
            assert found is not None, ("guest picture not found in the spice-html5 page "
                                       f"({shot}); console: {console[-3000:]}; "
                                       f"helper: {h.stderr()[-2000:]}")
            # the whole 1280x800 guest fits in the 1400x1000 page below the
            # spice-html5 header; the canvas shows it exact except its outer
            # 1-pixel ring, which the page's styling covers (~0.4 %)
            assert found[2] >= 0.99, (f"guest at {found[:2]} but only {found[2]:.4f} of it "
                                      f"matches; console: {console[-3000:]}")
        finally:
            if wrapper is not None:
                wrapper.shutdown()
                wrapper.server_close()
            if proxy.poll() is None:
                os.killpg(proxy.pid, 15)
                try:
                    proxy.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proxy.pid, 9)
                    proxy.wait(timeout=10)
            ws_log.close()
            shutil.rmtree(profile, ignore_errors=True)
