# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: real SPICE viewers show the guest through OUR helper.

remote-viewer (virt-viewer) under Xvfb, and spice-html5 in headless
Chromium through websockify. The guest is stopped first, so its picture is
qemu's screendump; the viewer's screenshot must contain it (found by a
distinctive block of the screendump, then compared over the whole guest
picture at that offset)."""

import pytest
from PIL import Image

from harness import Xvfb
from html5_support import (HOLD_PATH, HTML5_DIR, console_lines, page_server, require_html5,
                           run_chromium, websockify)
from harness.qemu import parse_ppm
from serve_support import (READY_TIMEOUT, SUBJECT, make_pki, require_tool, run_client,
                           serving, ticket_file)
from viewer_support import differing_pixels, locate_guest, remote_viewer_sight

PASSWORD = "viewer-ticket"
# The wrapper page's load event (the screenshot) waits this long; the page
# holds spice-html5 in an iframe.
HOLD_SECONDS = 15


def stopped_guest(qemu_factory, guest):
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


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
        assert best[2] == 1.0, f"guest at {best[:2]} but only {best[2]:.6f} of it matches"


def html5_sees_guest(chromium, spice_url, h, ref_size, ref, tmp_path, ca_file=None):
    """spice-html5 at `spice_url`, in an iframe of a page whose load waits
    HOLD_SECONDS, screenshot by headless Chromium: the guest picture must be
    in it, exact but for the canvas's outer 1-pixel ring and the three
    pixels inside each of its rounded corners, which the page's styling
    covers (~0.4 % of a 1280x800 guest in the 1400x1000 page)."""
    w, hgt = ref_size
    shot = tmp_path / "chromium.png"
    page = ("<!doctype html><html><body style='margin:0'>"
            f"<iframe src='{spice_url}' style='border:0;width:1400px;height:1000px'>"
            f"</iframe><img src='{HOLD_PATH}' style='display:none'></body></html>")
    with page_server(page.encode(), HOLD_SECONDS) as page_port:
        res = run_chromium(chromium, f"http://127.0.0.1:{page_port}/", f"--screenshot={shot}",
                           ca_file=ca_file)
    console = console_lines(res.stderr)
    (tmp_path / "chromium.log").write_text(res.stderr)
    assert shot.exists(), f"chromium wrote no screenshot ({res.returncode}): " \
                          f"{res.stderr[-2000:]}"
    found = locate_guest(w, hgt, ref, shot.read_bytes(), margin=1)
    assert found is not None, ("guest picture not found in the spice-html5 page "
                               f"({shot}); console: {console[-3000:]}; "
                               f"helper: {h.stderr()[-2000:]}")
    # Inside the ring, the styling's rounded corners take three pixels at
    # each corner of the canvas (seen: (1, 1), (2, 1), (1, 2) and their
    # mirrors, all 12, in every run); every other pixel is exact.
    n, where = differing_pixels(w, hgt, ref, shot.read_bytes(), found[0], found[1],
                                margin=1, limit=100)
    in_corner = [(x, y) for x, y in where
                 if (x < 3 or x >= w - 3) and (y < 3 or y >= hgt - 3) and
                 min(x, w - 1 - x) + min(y, hgt - 1 - y) <= 3]
    if n > 12 or len(in_corner) != n:
        pytest.fail(f"guest at {found[:2]}: {n} pixels differ (a rounded corner "
                    f"explains {len(in_corner)}), first at {where[:20]}; "
                    f"console: {console[-3000:]}")


@pytest.mark.timeout(180)
def test_spice_html5_in_chromium_shows_guest(qemu_factory, guest, helper_binary, tmp_path):
    chromium, ws = require_html5()
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", PASSWORD)
    with serving(helper_binary, q, "--ticket-file", server) as (h, port):
        q.stop()
        w, hgt, ref = q.screendump()
        Image.frombytes("RGB", (w, hgt), ref).save(tmp_path / "screendump.png")
        with websockify(ws, h, port, tmp_path / "websockify.log", web=HTML5_DIR) as ws_port:
            html5_sees_guest(chromium, f"http://127.0.0.1:{ws_port}/spice_auto.html?"
                             f"host=127.0.0.1&port={ws_port}&password={PASSWORD}",
                             h, (w, hgt), ref, tmp_path)


@pytest.mark.timeout(180)
def test_spice_html5_straight_to_helper(qemu_factory, guest, helper_binary, test_client,
                                        tmp_path):
    """spice-html5 connects to the helper's own SPICE port, which answers its
    WebSocket upgrade (no websockify anywhere); its canvas shows qemu's exact
    picture, and spice-gtk on the same port still gets the exact picture."""
    chromium, _ = require_html5()
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", PASSWORD)
    with serving(helper_binary, q, "--ticket-file", server) as (h, port):
        q.stop()
        w, hgt, ref = q.screendump()
        with page_server(b"", HOLD_SECONDS, static_dir=HTML5_DIR) as page_port:
            html5_sees_guest(chromium, f"http://127.0.0.1:{page_port}/spice_auto.html?"
                             f"host=127.0.0.1&port={port}&password={PASSWORD}",
                             h, (w, hgt), ref, tmp_path)
        log = h.stderr()
        assert "(WebSocket)" in log, log[-2000:]
        # spice-gtk on the same port, plain SPICE.
        gtk_shot = tmp_path / "gtk.ppm"
        run_client(test_client, "--port", port, "--ticket-file", server, "--settle", "500",
                   "screenshot", gtk_shot, timeout=30)
        assert parse_ppm(gtk_shot.read_bytes())[2] == ref


@pytest.mark.timeout(240)
def test_spice_html5_wss_with_test_ca(qemu_factory, guest, helper_binary, test_client,
                                      tmp_path):
    """The same over the helper's TLS port: spice-html5 served over HTTPS
    uses wss://, Chromium trusts the test CA (its NSS database) and no
    certificate error is waved through; the canvas is exact, and spice-gtk
    on the same TLS port gets the exact picture too."""
    chromium, _ = require_html5()
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    ca = pki / "ca-cert.pem"
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", PASSWORD)
    with serving(helper_binary, q, "--tls-dir", pki, "--ticket-file", server,
                 tls=True) as (h, port, tls_port):
        q.stop()
        w, hgt, ref = q.screendump()
        with page_server(b"", HOLD_SECONDS, static_dir=HTML5_DIR, tls_dir=pki) as page_port:
            html5_sees_guest(chromium, f"https://127.0.0.1:{page_port}/spice_auto.html?"
                             f"host=127.0.0.1&port={tls_port}&password={PASSWORD}",
                             h, (w, hgt), ref, tmp_path, ca_file=ca)
        log = h.stderr()
        assert "(TLS) (WebSocket)" in log, log[-2000:]
        gtk_shot = tmp_path / "gtk.ppm"
        run_client(test_client, "--tls-port", tls_port, "--ca-file", ca,
                   "--host-subject", SUBJECT, "--ticket-file", server, "--settle", "500",
                   "screenshot", gtk_shot, timeout=30)
        assert parse_ppm(gtk_shot.read_bytes())[2] == ref
