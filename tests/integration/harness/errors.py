# SPDX-License-Identifier: GPL-2.0-or-later
"""Exceptions of the harness."""


class HarnessError(Exception):
    """Something the harness manages did not behave (timeout, early exit)."""


class MissingComponent(HarnessError):
    """A prerequisite is not there; the message names the command making it.

    Raised from fixtures, so the test ERRORs (it is never skipped)."""

    def __init__(self, what, command):
        super().__init__(f"{what} is missing: run `{command}`")
        self.what = what
        self.command = command


class QemuError(HarnessError):
    """qemu failed to start, died, or did not produce what was awaited."""
