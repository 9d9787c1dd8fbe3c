# SPDX-License-Identifier: GPL-2.0-or-later
"""Several sessions: one client that stops reading holds no other back.

The busy guest is served with the default --max-sessions (4). A raw client
(spice_raw.py) links main and display, reads until the stream runs, then
stops reading: its socket fills and the helper's pacing for it stops. A
spice-gtk client connects beside it and watches the animated rectangle for
WATCH_S seconds (`watch --rect`). It must see the animation all along: its
rect_onset_us lists when activity in the rectangle started after >= 500 ms
without any, so a single onset means no pause of half a second or more
while the other client was stalled; and it must see at least
MIN_UPDATES_PER_S updates a second. qemu's listener must never have been
dropped by the watchdog (its log line "dropping it and registering a new
one"): the stalled client costs qemu nothing.

MIN_UPDATES_PER_S is a floor for "frames keep arriving", far below what a
watching client gets on this host (the busy guest animates at 30 fps; the
sanitizer build decodes fewer), so it is a correctness check, not a figure.
"""

import time

from fault_support import (ACTIVITY, Client, assert_helper_healthy, busy_guest, serving,
                           slowdown, updates)
from spice_raw import Session

WATCH_S = 8
STALL_S = 2.0           # the raw client stalls this long before the other links
MIN_UPDATES_PER_S = 2


def test_stalled_client_holds_no_other(qemu_factory, guest, helper_binary, test_client,
                                       tmp_path):
    slow = slowdown(helper_binary)
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        raw = Session(port)
        try:
            assert raw.display.wait_messages(20, timeout=20 * slow), \
                f"only {raw.display.messages} display messages before the stall"
            for ch in raw.channels():
                ch.reading.clear()
            time.sleep(STALL_S)
            stalled_at = raw.display.messages
            other = Client(test_client, port,
                           ["--settle", "0", "--seconds", WATCH_S, "--rect", ACTIVITY, "watch"],
                           tmp_path, name="other")
            rc = other.wait(timeout=other.timeout + 30)
            if rc is None:
                other.kill()
            assert rc == 0, f"{other.argv} exited {rc}: {other.stderr()[-1500:]}"
            watch = other.json_lines()[0]
            onsets = watch.get("rect_onset_us", [])
            print(f"other client: {updates(watch)} updates in {watch['seconds']} s, "
                  f"activity onsets {onsets}; stalled client read {stalled_at} messages")
            assert updates(watch) >= MIN_UPDATES_PER_S * WATCH_S, watch
            assert len(onsets) == 1, \
                f"the other client's animation paused >= 500 ms: onsets {onsets}"
            log = h.stderr()
            assert "dropping it and registering a new one" not in log, log[-2000:]
            assert_helper_healthy(h)
            assert q.alive()
        finally:
            raw.close()
