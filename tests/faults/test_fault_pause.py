# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, fault 4: qemu `stop` and `cont` while a client watches.

One spice-gtk session watches the animated rectangle (`watch --rect`) while
the guest is stopped for PAUSE seconds and continued. The session must
survive (the client exits 0; a closed channel is status 7), updates must
resume within RESUME_S of `cont` (the client's rect_onset_us lists when
activity in the rectangle started again after >= 500 ms without any; the
helper's lossless refresh of the stopped picture may count as one during the
pause, so only the first onset after `cont` is asserted), and once the guest is stopped for
good the same session's picture must equal qemu's screendump."""

import threading
import time

import pytest

from fault_support import (ACTIVITY, Client, assert_helper_healthy, assert_same_picture,
                           busy_guest, serving, stop_when_written)

PAUSE = 3.0
RESUME_S = 2.0
WATCH_S = 12


@pytest.mark.timeout(150)
def test_stop_cont_keeps_session(qemu_factory, guest, helper_binary, test_client, tmp_path):
    q = busy_guest(qemu_factory, guest)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        mid, final = tmp_path / "mid.ppm", tmp_path / "final.ppm"
        # `info` prints when the session is up; `watch` starts right after.
        client = Client(test_client, port,
                        ["--settle", "0", "--seconds", WATCH_S, "--rect", ACTIVITY,
                         "info", "watch", "screenshot", mid, "sleep", "3000",
                         "screenshot", final], tmp_path, name="pause")
        try:
            client.wait_output(1)
            watch_from = time.monotonic()
            time.sleep(2.0)
            q.stop()
            t_stop = time.monotonic()
            assert q.qmp("query-status")["status"] == "paused"
            time.sleep(PAUSE)
            q.cont()
            t_cont = time.monotonic()
            assert t_cont - watch_from < WATCH_S - 3, "the pause did not fit the watch"
            # The final stop, once the mid picture is written.
            stopped = {}
            stopper = threading.Thread(target=stop_when_written, args=(q, mid, stopped),
                                       daemon=True)
            stopper.start()
            rc = client.wait(timeout=WATCH_S + 60)
            stopper.join(timeout=60)
        finally:
            client.kill()
        assert rc == 0, f"the session did not survive stop/cont: exit {rc}, " \
                        f"{client.stderr()[-1500:]}"
        watch = client.json_lines()[1]
        onsets = [us / 1e6 for us in watch.get("rect_onset_us", [])]
        print(f"stop at {t_stop:.3f}, cont at {t_cont:.3f}, activity onsets {onsets}")
        after = [t - t_cont for t in onsets if t >= t_cont]
        assert after, f"no activity after cont: {watch}"
        print(f"updates resumed {after[0] * 1000:.0f} ms after cont")
        assert after[0] <= RESUME_S, f"updates resumed only {after[0]:.2f} s after cont"
        assert "at" in stopped
        assert_same_picture(final, q)
        assert_helper_healthy(h)
