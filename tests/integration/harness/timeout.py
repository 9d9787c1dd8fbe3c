# SPDX-License-Identifier: GPL-2.0-or-later
"""A per-test timeout for pytest (python3-pytest-timeout is not required).

setup+call of a test share one budget: the `timeout(seconds)` marker, else
--qs-timeout, else the ini value qs_timeout. Teardown gets its own budget
(qs_teardown_timeout) so cleanup still runs after a timed-out test. On expiry
SIGALRM raises TestTimeout in the main thread, which fails (or errors) the
test and unwinds its context managers. Every wait in the harness is bounded
too; this is the net under them."""

import contextlib
import signal
import time

import pytest


class TestTimeout(Exception):
    __test__ = False  # not a test class despite the name


def addoption(parser):
    parser.addini("qs_timeout", "seconds for setup+call of one test", default="120")
    parser.addini("qs_teardown_timeout", "seconds for the teardown of one test",
                  default="60")
    parser.addoption("--qs-timeout", type=float, default=None,
                     help="seconds for setup+call of one test (overrides qs_timeout)")


def configure(config):
    config.addinivalue_line("markers", "timeout(seconds): per-test timeout (setup+call)")


def _budget(item):
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    opt = item.config.getoption("--qs-timeout")
    if opt is not None:
        return opt
    return float(item.config.getini("qs_timeout"))


@contextlib.contextmanager
def _alarm(deadline, what):
    def expired(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise TestTimeout(f"{what}: timed out")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, max(0.01, deadline - time.monotonic()))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    budget = _budget(item)
    item._qs_deadline = time.monotonic() + budget
    with _alarm(item._qs_deadline, f"{item.nodeid} (setup, budget {budget:g}s)"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    deadline = getattr(item, "_qs_deadline", time.monotonic() + _budget(item))
    with _alarm(deadline, f"{item.nodeid} (budget {_budget(item):g}s)"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    budget = float(item.config.getini("qs_teardown_timeout"))
    with _alarm(time.monotonic() + budget, f"{item.nodeid} (teardown, budget {budget:g}s)"):
        yield
