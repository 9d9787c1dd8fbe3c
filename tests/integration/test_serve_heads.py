# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue J.4: a VM with two graphic consoles is served as two SPICE display
channels (ids 0 and 1, in console order), each showing exactly what qemu's
screendump of that console shows; --console N serves only console N."""

import json
import os
import re

import pytest

from harness.qemu import parse_ppm
from serve_support import READY_TIMEOUT, run_client, serving

SECOND = "qsvga1"


def two_head_qemu(qemu_factory):
    # std-vga is console 0; a secondary-vga (no legacy VGA ports) console 1.
    q = qemu_factory(vga="std", mode="idle",
                     extra_args=["-device", f"secondary-vga,id={SECOND}"])
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


def screendump(q, name, device=None):
    """(w, h, RGB) of the console of `device` (None: console 0)."""
    path = os.path.join(q.run_dir, f"heads-{name}.ppm")
    args = {"filename": path}
    if device:
        args["device"] = device
    q.qmp.command("screendump", timeout=30, **args)
    try:
        with open(path, "rb") as f:
            return parse_ppm(f.read())
    finally:
        os.unlink(path)


def compare(shot, reference, what):
    sw, sh, pixels = parse_ppm(shot.read_bytes())
    w, h, ref = reference
    assert (sw, sh) == (w, h), what
    if pixels != ref:
        diff = [i // 3 for i in range(0, len(pixels), 3) if pixels[i:i + 3] != ref[i:i + 3]]
        pytest.fail(f"{what}: screenshot differs from screendump in {len(diff)} of "
                    f"{w * h} pixels, first at {[(p % w, p // w) for p in diff[:5]]}")


@pytest.mark.timeout(200)
def test_two_consoles_two_exact_display_channels(qemu_factory, guest, helper_binary,
                                                 test_client, tmp_path):
    q = two_head_qemu(qemu_factory)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        info = json.loads(run_client(test_client, "--port", port, "--settle", "500",
                                     "info", timeout=30).stdout)
        states = {(c["type"], c["id"]): c["state"] for c in info["channels"]}
        for needed in (("display", 0), ("display", 1), ("cursor", 0), ("cursor", 1),
                       ("inputs", 0)):
            assert states.get(needed) == "open", info["channels"]
        assert ("display", 2) not in states
        # One line at attach names the consoles served and their channels.
        m = re.search(r"serving consoles (.*)", h.stderr())
        assert m and "0 (display channel 0), 1 (display channel 1)" in m.group(1), h.stderr()

        q.stop()
        refs = [screendump(q, "0"), screendump(q, "1", SECOND)]
        # Two different pictures, neither blank: a channel showing the
        # other console's picture cannot pass.
        # (Observed: the guest's 1280x800 picture, and qemu's 640x480 "not
        # active" text on the second, which the guest does not drive.)
        assert refs[0] != refs[1]
        for w, hgt, px in refs:
            assert len({px[i:i + 3] for i in range(0, len(px), 3 * 7)}) > 1
        for head, ref in enumerate(refs):
            w, hgt, _ = ref
            shot = tmp_path / f"shot{head}.ppm"
            run_client(test_client, "--port", port, "--display", head, "--settle", "700",
                       "--expect-size", f"{w}x{hgt}", "screenshot", shot, timeout=30)
            compare(shot, ref, f"display channel {head}")


@pytest.mark.timeout(150)
def test_console_option_serves_one_console_as_channel_0(qemu_factory, guest, helper_binary,
                                                        test_client, tmp_path):
    q = two_head_qemu(qemu_factory)
    with serving(helper_binary, q, "--disable-ticketing", "--console", "1") as (h, port):
        info = json.loads(run_client(test_client, "--port", port, "--settle", "500",
                                     "info", timeout=30).stdout)
        states = {(c["type"], c["id"]): c["state"] for c in info["channels"]}
        assert states.get(("display", 0)) == "open", info["channels"]
        assert ("display", 1) not in states, info["channels"]
        assert "serving console 1 (display channel 0)" in h.stderr()
        q.stop()
        ref = screendump(q, "1", SECOND)
        shot = tmp_path / "shot.ppm"
        run_client(test_client, "--port", port, "--settle", "700",
                   "--expect-size", f"{ref[0]}x{ref[1]}", "screenshot", shot, timeout=30)
        compare(shot, ref, "display channel 0 (console 1)")
