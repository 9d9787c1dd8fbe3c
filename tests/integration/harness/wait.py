# SPDX-License-Identifier: GPL-2.0-or-later
"""One bounded poll for the harnesses: every wait in a test has a deadline,
and its failure says what was awaited and what was last seen."""
import time


def wait_until(fn, timeout, interval, failure, error=AssertionError):
    """The first truthy value of fn(), polled every `interval` seconds for
    `timeout`; then raises `error` with failure(last value) as its message."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise error(failure(value))
        time.sleep(interval)
