# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: the picture qs-test-client gets from OUR helper equals qemu's
screendump byte for byte once the idle guest is stopped."""

import pytest

from harness.qemu import parse_ppm
from serve_support import READY_TIMEOUT, run_client, serving

# Attach, serve and the exact picture: also run against the build we
# install (pytest.ini, `smoke`).
pytestmark = pytest.mark.smoke


@pytest.mark.timeout(150)
@pytest.mark.parametrize("vga", ["virtio", "std"])
def test_screenshot_equals_screendump(qemu_factory, qemu_flavour, guest, helper_binary,
                                      test_client, tmp_path, vga):
    q = qemu_factory(vga=vga, mode="idle")
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        # First session: the helper has the picture, the guest has settled.
        run_client(test_client, "--port", port, "--settle", "500", "info", timeout=30)
        q.stop()
        w, hgt, reference = q.screendump()
        assert (w, hgt) == (int(ready["w"]), int(ready["h"]))
        # A blank picture would make the comparison meaningless.
        assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10
        shot = tmp_path / "shot.ppm"
        run_client(test_client, "--port", port, "--settle", "700",
                   "--expect-size", f"{w}x{hgt}", "screenshot", shot, timeout=30)
        sw, sh, pixels = parse_ppm(shot.read_bytes())
        assert (sw, sh) == (w, hgt)
        if pixels != reference:
            diff = [i // 3 for i in range(0, len(pixels), 3)
                    if pixels[i:i + 3] != reference[i:i + 3]]
            pytest.fail(f"screenshot differs from screendump in {len(diff)} of {w * hgt} "
                        f"pixels, first at {[(p % w, p // w) for p in diff[:5]]}")
