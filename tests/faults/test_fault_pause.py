# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, fault 4: qemu `stop` and `cont` while a client watches.

One spice-gtk session watches the animated rectangle (`watch --rect`) while
the guest is stopped for PAUSE seconds and continued. The session must
survive (the client exits 0; a closed channel is status 7), updates must
resume after `cont` (the client's rect_onset_us lists when activity in the
rectangle started again after >= 500 ms without any; the helper's lossless
refresh of the stopped picture may count as one during the pause, so only
onsets after `cont` count), and once the guest is stopped for good the same
session's picture must equal qemu's screendump.

The run happens once (shared_run) and is judged by two tests: the unmarked
one asserts the above (also against the sanitizer build), the `timing` one
that the first update came within RESUME_S of `cont` (plain build only)."""

import threading
import time

import pytest

from fault_support import (ACTIVITY, Client, assert_helper_healthy, assert_no_problems,
                           assert_same_picture, busy_guest, recorded, serving,
                           stop_when_written)
from harness.shared_run import shared_run

PAUSE = 3.0
# First update after `cont`: 17 to 40 ms in four runs of the plain build
# (qemu 7.2, busy guest; docs/performance.md "Faults").
RESUME_S = 2.0
WATCH_S = 12


def pause_scenario(qemu_factory, guest, helper_binary, test_client, tmp_path):
    """The stop/cont run: when `cont` came, the activity onsets the client
    saw, and the correctness problems, as data."""
    run = {"problems": []}
    q = busy_guest(qemu_factory, guest)
    try:
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
                stopper = threading.Thread(target=stop_when_written,
                                           args=(q, mid, stopped), daemon=True)
                stopper.start()
                rc = client.wait(timeout=WATCH_S + 60)
                stopper.join(timeout=60)
            finally:
                client.kill()
            with recorded(run["problems"], "the session"):
                assert rc == 0, f"the session did not survive stop/cont: exit {rc}, " \
                                f"{client.stderr()[-1500:]}"
                watch = client.json_lines()[1]
                onsets = [us / 1e6 for us in watch.get("rect_onset_us", [])]
                print(f"stop at {t_stop:.3f}, cont at {t_cont:.3f}, activity onsets {onsets}")
                run["after_cont"] = [t - t_cont for t in onsets if t >= t_cont]
                assert run["after_cont"], f"no activity after cont: {watch}"
                print(f"updates resumed {run['after_cont'][0] * 1000:.0f} ms after cont")
                assert "at" in stopped, "the picture after the watch never appeared"
                assert_same_picture(final, q)
            with recorded(run["problems"], "the helper"):
                assert_helper_healthy(h)
    finally:
        q.close()
    return run


def pause_run(qemu_factory, guest, helper_binary, test_client, tmp_path):
    return shared_run(("pause",),
                      lambda: pause_scenario(qemu_factory, guest, helper_binary, test_client,
                                             tmp_path))


@pytest.mark.timeout(150)
def test_stop_cont_keeps_session(qemu_factory, guest, helper_binary, test_client, tmp_path):
    assert_no_problems(pause_run(qemu_factory, guest, helper_binary, test_client, tmp_path))


@pytest.mark.timing
@pytest.mark.timeout(150)
def test_stop_cont_resume_time(qemu_factory, guest, helper_binary, test_client, tmp_path):
    run = pause_run(qemu_factory, guest, helper_binary, test_client, tmp_path)
    assert run.get("after_cont"), f"no update after cont to time: {run['problems']}"
    after = run["after_cont"][0]
    assert after <= RESUME_S, f"updates resumed only {after:.2f} s after cont"
