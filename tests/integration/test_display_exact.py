# SPDX-License-Identifier: GPL-2.0-or-later
"""The helper's screen copy is byte-identical to qemu's own screendump.

qemu 7.2 (host) only has the copy path (Scanout/Update with the pixels in
the message); qemu 10.0 (trixie) shares virtio-gpu surfaces through
Listener.Unix.Map. Both with virtio-gpu and std-vga (bochs-drm)."""

import pytest

from test_display_support import Helper, assert_exact, display_helper  # noqa: F401


@pytest.mark.parametrize("vga", ["virtio", "std"])
@pytest.mark.parametrize("mode", ["idle", "busy"])
def test_screen_exact(qemu_factory, qemu_flavour, guest, display_helper, vga, mode):
    q = qemu_factory(vga=vga, mode=mode)
    q.wait_ready()
    with Helper.p2p(display_helper, q) as h:
        h.wait_frames()
        # Let the guest draw a while, then freeze it and let qemu's last
        # refreshes arrive.
        q.wait_serial(r"^FPS\b", timeout=15, since=q.serial_mark())
        q.stop()
        h.wait_quiet()
        assert_exact(h, q)
        stats = h.stats()
        # Nothing refused as invalid; an Update that beat qemu's resize
        # announcement ("early") is recovered by a fresh Scanout, and the
        # picture above is exact either way.
        assert stats["dropped"] == 0, stats
        if qemu_flavour == "host":
            assert stats["scanout_maps"] == 0, f"qemu 7.2 has no Unix.Map: {stats}"
        elif vga == "virtio":
            assert stats["update_maps"] > 0, f"Unix.Map path not taken: {stats}"
        assert h.proc.poll() is None, h.stderr()
