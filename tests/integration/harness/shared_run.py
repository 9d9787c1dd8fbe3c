# SPDX-License-Identifier: GPL-2.0-or-later
"""One run of a scenario, judged by two kinds of test.

A scenario (boot the guest, serve it, misbehave, look at the result) is
expensive, and it yields two kinds of result: correctness (the picture is
exact, the socket was closed, the stream started at all) and figures (how
soon, how much memory). They are asserted by different tests: a correctness
test and a figure test (marked `timing`) take the same run from
`shared_run(key, run)`, which runs the scenario for whichever of them comes
first and keeps its outcome for the session.

tools/check selects the figure tests against the plain build and the
correctness tests against the sanitizer build, so each build runs each
scenario once; run together (no -m), the two tests share one run. Nothing is
ever rerun: a scenario that failed fails every test that judges it, with the
first failure's message."""

import pytest

_RUNS = {}


def shared_run(key, run):
    """run() once for `key` (a hashable naming the scenario and its
    parameters); later calls return its result, or fail if it failed.
    run() must leave nothing running: its result outlives the fixtures of
    the test that ran it."""
    if key not in _RUNS:
        try:
            _RUNS[key] = (True, run())
        except BaseException as e:  # noqa: BLE001 - a timeout or pytest.fail too
            _RUNS[key] = (False, f"{type(e).__name__}: {e}"[:1500])
            raise
    ok, value = _RUNS[key]
    if not ok:
        pytest.fail(f"the shared run {key!r} failed in an earlier test: {value}",
                    pytrace=False)
    return value
