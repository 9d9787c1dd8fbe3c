# SPDX-License-Identifier: GPL-2.0-or-later
"""Heat as the helper computes it from qemu's frames: a busy guest flushing
whole frames (keydraw.flush=full, so qemu sends the full surface each frame)
must make exactly the blocks of its 640x480 activity rectangle hot, within
300 ms of the first frame, and nothing else.

A block gets hot on its 8th change (helper/screen); the first frame is the
surface itself. So the helper is on time if the blocks are hot when the 11th
frame has arrived (two frames of slack: a change copied from the live shared
surface may land one frame late, and polling adds its own delay); and at the
guest's 30 fps they must be hot within 300 ms.
Under TCG on a loaded host the guest may draw fewer frames: the 300 ms bound
is then checked against the frames qemu actually delivered, and a warning
says so (the frame-count bound is always checked)."""

import time

import pytest
import warnings

from test_display_support import Helper, activity_blocks, display_helper  # noqa: F401

pytestmark = pytest.mark.timing

HOT_WITHIN = 0.300
HOT_BY_FRAME = 11
FULL_RATE_FPS = 28
WATCH_FOR = 2.0
POLL_SLACK = 0.05


def test_heat_activity_rect(qemu_factory, qemu_flavour, guest, display_helper):
    q = qemu_factory(vga="virtio", mode="busy", flush="full")
    ready = q.wait_ready()
    assert ready["activity"] == "624,160,640,480", ready
    q.wait_serial(r"^FPS\b", timeout=15, since=q.serial_mark())
    with Helper.p2p(display_helper, q) as h:
        arrivals = []       # time each new frame count was first seen
        hot_at = None
        missing = None
        outside = set()
        expected = None
        # The blocks turned hot between the poll before hot_at and hot_at:
        # that gap is the measurement's own uncertainty (two test-control
        # calls and a sleep; it made "300 ms" of a 267 ms ninth frame at 30
        # fps in a fresh-clone run of 2026-12-01).
        prev_poll = None
        hot_gap = 0.0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            now = time.monotonic()
            frames = h.frames()
            while len(arrivals) < frames:
                arrivals.append(now)
            if not arrivals:
                time.sleep(0.005)
                continue
            hot, bx = h.heat()
            if bx == 0:
                # A frame may be counted before the screen has its size (a
                # shared-memory scanout is mapped first); blocks of a 0-wide
                # grid would name the wrong places.
                time.sleep(0.005)
                continue
            expected = activity_blocks(bx)
            outside |= hot - expected
            missing = expected - hot
            if hot_at is None and hot >= expected:
                hot_at = now
                hot_gap = now - prev_poll if prev_poll is not None else 0.0
            if hot_at is not None and now - hot_at >= WATCH_FOR:
                break
            prev_poll = now
            time.sleep(0.01)
        assert arrivals, f"no frame: {h.stderr()}"
        assert expected is not None, f"the screen never got a size: {h.stats()}"
        assert hot_at is not None, \
            f"activity blocks never all hot: {len(missing)} cold at the end, e.g. " \
            f"{sorted(missing)[:8]} (blocks_x {bx}); {h.stats()}"
        assert not outside, f"{len(outside)} blocks outside the activity rect hot, " \
                            f"e.g. {sorted(outside)[:5]}"
        took = hot_at - arrivals[0]
        assert len(arrivals) >= HOT_BY_FRAME, arrivals
        by_frame = arrivals[HOT_BY_FRAME - 1] - arrivals[0]
        assert took <= by_frame + POLL_SLACK, \
            f"activity hot {took * 1000:.0f} ms after the first frame, but the " \
            f"{HOT_BY_FRAME}th frame had arrived at {by_frame * 1000:.0f} ms"
        # The rate of the frames that matter: the first HOT_BY_FRAME.
        fps = (HOT_BY_FRAME - 1) / by_frame if by_frame > 0 else 0
        if fps >= FULL_RATE_FPS:
            assert took - hot_gap <= HOT_WITHIN, \
                f"activity hot {took * 1000:.0f} ms after the first frame at {fps:.1f} " \
                f"fps, seen {hot_gap * 1000:.0f} ms after the poll before (limit " \
                f"{HOT_WITHIN * 1000:.0f} ms)"
        else:
            warnings.warn(f"qemu delivered only {fps:.1f} frames/s (loaded host): "
                          f"hot after {took * 1000:.0f} ms, checked against the "
                          f"{HOT_BY_FRAME}th frame instead of {HOT_WITHIN * 1000:.0f} ms")
