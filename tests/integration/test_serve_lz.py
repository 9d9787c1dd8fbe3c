# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 22, point 4: a client that announces no LZ4 still gets compressed
lossless images (SPICE LZ) and an exact picture: our test client with the
capability stripped on its link (as a proxy that forwards fewer caps would),
with no display caps at all (a proxy that forwards none: no JPEG either),
and spice-html5 in headless Chromium, which never announces LZ4. A figure
test measures the first full picture's bytes against qemu's own
spice-server for the same screen."""

import json
import re
import time

import pytest

from harness.qemu import parse_ppm
from html5_support import HTML5_DIR, page_server, require_html5
from serve_support import READY_TIMEOUT, run_client, serving, ticket_file
from test_serve_viewers import HOLD_SECONDS, html5_sees_guest, stopped_guest

SESSION_BYTES = re.compile(r"display session: [0-9.]+ s, (\d+) bytes")
SUMMARY = re.compile(r"display session: .*images bitmap (\d+) lz (\d+) lz4 (\d+) jpeg (\d+) "
                     r"\((\d+) bytes\)")


def session_images(h, n, timeout=15.0):
    """The image counts of the helper's n-th display session summary
    (logged when the client goes): dict of bitmap, lz, lz4, jpeg, bytes."""
    deadline = time.monotonic() + timeout
    while True:
        found = SUMMARY.findall(h.stderr())
        if len(found) >= n:
            return dict(zip(("bitmap", "lz", "lz4", "jpeg", "bytes"), map(int, found[n - 1])))
        assert time.monotonic() < deadline, \
            f"no display session summary #{n} within {timeout} s: {h.stderr()[-2000:]}"
        time.sleep(0.1)


def assert_exact(shot, w, hgt, reference):
    sw, sh, pixels = parse_ppm(shot.read_bytes())
    assert (sw, sh) == (w, hgt)
    if pixels != reference:
        diff = [i // 3 for i in range(0, len(pixels), 3)
                if pixels[i:i + 3] != reference[i:i + 3]]
        pytest.fail(f"screenshot differs from screendump in {len(diff)} of {w * hgt} "
                    f"pixels, first at {[(p % w, p // w) for p in diff[:5]]}")


@pytest.mark.timeout(150)
@pytest.mark.parametrize("strip", ["--no-lz4", "--no-display-caps"])
def test_client_without_lz4_gets_exact_lz(qemu_factory, guest, helper_binary, test_client,
                                          tmp_path, strip):
    q = qemu_factory(vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        run_client(test_client, "--port", port, strip, "--settle", "500", "info", timeout=30)
        q.stop()
        w, hgt, reference = q.screendump()
        assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10
        shot = tmp_path / "shot.ppm"
        run_client(test_client, "--port", port, strip, "--settle", "700",
                   "--expect-size", f"{w}x{hgt}", "screenshot", shot, timeout=30)
        assert_exact(shot, w, hgt, reference)
        images = session_images(h, 2)
        assert images["lz"] > 0 and images["lz4"] == 0, images
        # Raw bitmaps only where LZ's header does not pay (a few pixels).
        assert images["bitmap"] <= images["lz"] // 10, images
        if strip == "--no-display-caps":
            # Still content on a fast link would not go lossy anyway; the
            # rule itself is judged by /flow/plan/jpeg-needs-display-caps.
            assert images["jpeg"] == 0, images


@pytest.mark.timeout(180)
def test_spice_html5_gets_exact_lz(qemu_factory, guest, helper_binary, tmp_path):
    """spice-html5 (no LZ4 in its display caps) straight to the helper: its
    canvas shows qemu's picture, and the images went as SPICE LZ."""
    chromium, _ = require_html5()
    q = stopped_guest(qemu_factory, guest)
    server = ticket_file(tmp_path, "ticket", "lz-ticket")
    with serving(helper_binary, q, "--ticket-file", server) as (h, port):
        q.stop()
        w, hgt, ref = q.screendump()
        with page_server(b"", HOLD_SECONDS, static_dir=HTML5_DIR) as page_port:
            html5_sees_guest(chromium, f"http://127.0.0.1:{page_port}/spice_auto.html?"
                             f"host=127.0.0.1&port={port}&password=lz-ticket",
                             h, (w, hgt), ref, tmp_path)
        images = session_images(h, 1)
        assert images["lz"] > 0 and images["lz4"] == 0 and images["bitmap"] <= 2, images


def display_bytes(info_stdout):
    info = json.loads(info_stdout.splitlines()[-1])
    return sum(c["bytes_received"] for c in info["channels"] if c["type"] == "display")


@pytest.mark.timing
@pytest.mark.timeout(240)
def test_first_picture_bytes_against_spice_server(qemu_factory, guest, helper_binary,
                                                  test_client, tmp_path):
    """The display bytes a client without LZ4 receives for the first full
    picture of the stopped test guest (1280x800), from us and from qemu
    7.2's spice-server (image-compression auto_glz, its default) for the
    same screen: qs-test-client --no-lz4, and spice-html5 in headless
    Chromium (the helper's count of the bytes it wrote, WebSocket framing
    included, over the page's 15 s). Measured on the plain build,
    2026-12-02 on a shared 2-core machine: spice-gtk 1.008-1.061x (8 runs),
    spice-html5 1.055-1.063x (4 runs; docs/performance.md); the bound is
    issue 22's acceptance, 2x."""
    chromium, _ = require_html5()
    ours_q = qemu_factory(vga="virtio", mode="idle")
    theirs_q = qemu_factory(vga="virtio", mode="idle", display="spice")
    ours_q.wait_ready(timeout=READY_TIMEOUT)
    theirs_q.wait_ready(timeout=READY_TIMEOUT)
    ours_q.stop()
    theirs_q.stop()
    w, hgt, ours_ref = ours_q.screendump()
    tw, th, theirs_ref = theirs_q.screendump()
    assert (w, hgt) == (tw, th)
    same = sum(1 for i in range(0, len(ours_ref), 3)
               if ours_ref[i:i + 3] == theirs_ref[i:i + 3]) / (w * hgt)
    theirs = display_bytes(run_client(test_client, "--port", theirs_q.spice_port, "--no-lz4",
                                      "--settle", "1000", "info", timeout=30).stdout)
    with serving(helper_binary, ours_q, "--disable-ticketing") as (h, port):
        ours = display_bytes(run_client(test_client, "--port", port, "--no-lz4",
                                        "--settle", "1000", "info", timeout=30).stdout)
        # For the record (docs/performance.md), not judged: the same
        # picture to a client that announces LZ4.
        ours_lz4 = display_bytes(run_client(test_client, "--port", port,
                                            "--settle", "1000", "info", timeout=30).stdout)
        with page_server(b"", HOLD_SECONDS, static_dir=HTML5_DIR) as page_port:
            html5_sees_guest(chromium, f"http://127.0.0.1:{page_port}/spice_auto.html?"
                             f"host=127.0.0.1&port={port}", h, (w, hgt), ours_ref, tmp_path)
        deadline = time.monotonic() + 15
        while len(SESSION_BYTES.findall(h.stderr())) < 3:
            assert time.monotonic() < deadline, h.stderr()[-2000:]
            time.sleep(0.1)
        html5 = int(SESSION_BYTES.findall(h.stderr())[2])
    ratio = ours / theirs
    print(f"first picture {w}x{hgt}: qemu-spice LZ {ours} bytes, spice-server {theirs} bytes, "
          f"ratio {ratio:.3f} (qemu-spice LZ4 {ours_lz4} bytes); spice-html5 {html5} bytes, "
          f"ratio {html5 / theirs:.3f}; screens {same:.4f} alike")
    # The screens are the same guest picture (the activity area is still in
    # idle mode), so the bytes compare like for like.
    assert same > 0.99, f"the two guests' screens differ ({same:.4f} alike)"
    # Issue 22's acceptance: at most 2x spice-server's bytes.
    assert ratio <= 2.0, f"qemu-spice {ours} bytes, spice-server {theirs}: {ratio:.2f}x"
    assert html5 / theirs <= 2.0, \
        f"qemu-spice to spice-html5 {html5} bytes, spice-server {theirs}: {html5 / theirs:.2f}x"
