# SPDX-License-Identifier: GPL-2.0-or-later
"""One booted guest per test file and qemu configuration, lent to its tests
in turn (the `shared_qemu` fixture of conftest.py).

A boot is about a quarter of the CPU of a typical correctness test that
boots its own guest; tests that only attach a helper to a running guest,
watch it and detach can take the file's guest instead. A test that kills,
pauses, reboots or reconfigures qemu, or whose assertion needs a fresh
boot, keeps its own (qemu_factory).

What a borrower leaves is checked when it gives the guest back
(SharedGuests.give_back): every helper or launcher it started has been
heard at exit (so none is still attached to qemu's display), qemu runs
and is not paused, and the test passed. Otherwise the guest is closed and
the next test of that configuration boots a new one, so no test passes
or fails by another's leftovers; a test that left one of those states
behind fails itself."""

from . import exits
from .errors import HarnessError
from .qemu import Qemu

KIND = "qemu-shared"


class SharedGuests:
    """The running guests of one test file, by their Qemu keyword arguments."""

    def __init__(self):
        self._guests = {}           # key -> Qemu
        self._lent = {}             # id(Qemu) -> key
        self.boots = 0

    @staticmethod
    def _key(kwargs):
        return tuple(sorted((k, repr(v)) for k, v in kwargs.items()
                            if k not in ("paths", "guest")))

    def lend(self, **kwargs):
        """A started qemu of this configuration (booted now, or by an
        earlier test of the file and given back in order). The caller waits
        for READY as with its own qemu (the line stays in its serial log)."""
        key = self._key(kwargs)
        q = self._guests.get(key)
        if q is not None and not q.alive():
            self._drop(key)
            q = None
        if q is None:
            q = Qemu(kind=KIND, **kwargs)
            q.start()
            self.boots += 1
            self._guests[key] = q
        if id(q) in self._lent:
            raise HarnessError("shared_qemu: this guest is lent already")
        self._lent[id(q)] = key
        return q

    def give_back(self, q, passed):
        """Check what the borrower left; returns the problems it caused
        (the guest is then closed), [] if the guest can serve the next."""
        key = self._lent.pop(id(q))
        problems = []
        left = exits.pending()
        if left:
            problems.append(f"processes the test started still run: {left}")
        if not q.alive():
            problems.append("the shared qemu exited")
        else:
            try:
                status = q("query-status")
                if not status.get("running") or status.get("status") != "running":
                    problems.append(f"the shared qemu is not running: {status}")
            except Exception as e:  # noqa: BLE001 - any failure drops the guest
                problems.append(f"the shared qemu does not answer QMP: {e}")
        if problems or not passed:
            # A failed test may leave state no check here sees: its guest
            # is not lent again either.
            self._drop(key)
        return problems

    def _drop(self, key):
        q = self._guests.pop(key)
        q.close(check=False)

    def close(self):
        errors = []
        for key in list(self._guests):
            q = self._guests.pop(key)
            try:
                q.close()
            except Exception as e:  # noqa: BLE001 - report all of them
                errors.append(str(e))
        if errors:
            raise HarnessError("shared qemu teardown: " + "; ".join(errors))
