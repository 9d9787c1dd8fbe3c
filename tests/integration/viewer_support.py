# SPDX-License-Identifier: GPL-2.0-or-later
"""remote-viewer (virt-viewer) under Xvfb, for the tests that open the real
viewer on a console (and locate_guest, which the spice-html5 tests use on
Chromium's screenshot too): it is started on a .vv file, the X screen is
grabbed (ImageMagick's import) until qemu's screendump of a still guest is
found in it, located by a distinctive block of the screendump and then
compared over the whole guest picture at that offset.

What a sight proves: the viewer's window holds the guest picture, unscaled,
at some offset, with the returned fraction of its pixels equal to the
screendump's. 1.0 is the exact picture, and what every caller asks for:
the X server's own pointer is not in the grab (Xvfb leaves it out of
GetImage), and the test guest sets no cursor of its own. Where a client
frames the picture (spice-html5's canvas styling covers its outer 1-pixel
ring), `margin` leaves that ring out of the comparison, and only it."""

import io
import os
import subprocess
import time

from PIL import Image

from serve_support import distinctive_block, find_block


def match_ratio(ref_w, ref_h, ref, shot_w, shot_h, shot, x0, y0, margin=0):
    """Fraction of the guest picture's pixels equal in the shot at (x0, y0)
    (pixels outside the shot count as different), leaving out a ring of
    `margin` pixels at the picture's edge."""
    same = 0
    x_lo, x_hi = margin, ref_w - margin
    for y in range(margin, ref_h - margin):
        if y0 + y >= shot_h:
            break
        w = max(0, min(x_hi, shot_w - x0) - x_lo)
        a = ref[(y * ref_w + x_lo) * 3:(y * ref_w + x_lo + w) * 3]
        b = shot[((y0 + y) * shot_w + x0 + x_lo) * 3:((y0 + y) * shot_w + x0 + x_lo + w) * 3]
        if a == b:
            same += w
        else:
            same += sum(1 for i in range(0, len(a), 3) if a[i:i + 3] == b[i:i + 3])
    return same / ((ref_w - 2 * margin) * (ref_h - 2 * margin))


def differing_pixels(ref_w, ref_h, ref, png_bytes, x0, y0, margin=0, limit=20):
    """(count, [(x, y) of the first `limit`]) of the guest picture's
    pixels, outside the `margin` ring, that differ in the screenshot at
    (x0, y0): what a sight short of 1.0 missed, for its failure message."""
    with Image.open(io.BytesIO(png_bytes)) as img:
        img = img.convert("RGB")
        sw, sh, shot = img.width, img.height, img.tobytes()
    count, where = 0, []
    for y in range(margin, ref_h - margin):
        for x in range(margin, ref_w - margin):
            a = ref[(y * ref_w + x) * 3:(y * ref_w + x + 1) * 3]
            sx, sy = x0 + x, y0 + y
            b = shot[(sy * sw + sx) * 3:(sy * sw + sx + 1) * 3] if sx < sw and sy < sh else b""
            if a != b:
                count += 1
                if len(where) < limit:
                    where.append((x, y))
    return count, where


def locate_guest(ref_w, ref_h, ref, png_bytes, margin=0):
    """(x, y, ratio) of the guest picture in the screenshot, or None
    (ratio: match_ratio's, with its `margin`)."""
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
    return x0, y0, match_ratio(ref_w, ref_h, ref, sw, sh, shot, x0, y0, margin)


def remote_viewer_sight(viewer, vv, xvfb, ref_w, ref_h, ref, tmp_path, timeout=60,
                        prefix=(), want=1.0):
    """Opens remote-viewer on `vv` in `xvfb` and screenshots the screen until
    the guest picture `ref` is found whole (ratio >= `want`) or `timeout`
    passes; returns locate_guest()'s last answer. Its log is
    tmp_path/remote-viewer.log. `prefix` goes before remote-viewer's argv
    (e.g. nsenter into the network namespace where the console listens)."""
    env = dict(os.environ, **xvfb.env(), GDK_BACKEND="x11", NO_AT_BRIDGE="1")
    log_path = tmp_path / "remote-viewer.log"
    best = None
    with open(log_path, "wb") as log:
        rv = subprocess.Popen([*map(str, prefix), viewer, str(vv)], env=env, stdin=subprocess.DEVNULL,
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
                if best and best[2] >= want:
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
