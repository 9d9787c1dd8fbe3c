# SPDX-License-Identifier: GPL-2.0-or-later
"""The one place where a test hears how a process of ours ended.

Every helper and launcher a test starts is registered here when it starts
(started()) and heard when it ends (hear(), or stop_and_hear(), which ends it
first): its exit status must be the one the test expects (0 unless the test
says which), and its stderr after exit must hold no sanitizer report and no
runtime error. LeakSanitizer reports only at exit and ASan or UBSan may trip
during shutdown, so a look while the process is alive cannot see them.

The `_all_heard` fixture (integration/conftest.py) fails every test that
leaves a registered process unheard, so a test cannot start one and forget
to listen."""

import re
import signal
import subprocess
import threading

# What a sanitizer or GLib prints when it has found a fault. GLib's CRITICAL
# is a failed precondition (g_return_if_fail): a bug of ours, not a
# condition of the test.
REPORT = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)"
    r"|SUMMARY: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)"
    r"|runtime error: "
    r"|\b[A-Za-z-]+-CRITICAL \*\*"
    r"|\*\* ERROR:\S* assertion failed"
    r"|Bail out! ")

_unheard = {}          # pid -> what
_lock = threading.Lock()


class ExitStatusError(AssertionError):
    pass


def started(proc, what):
    """Register a started process: it must be heard before its test ends."""
    with _lock:
        _unheard[proc.pid] = what


def forget(proc):
    """For a process whose end a test cannot hear (it was never ours to
    end: a wrapper that exec'd it). Returns True if it was registered."""
    with _lock:
        return _unheard.pop(proc.pid, None) is not None


def pending():
    """Registered processes not heard yet (the list stays)."""
    with _lock:
        return sorted(_unheard.items())


def unheard():
    """Registered processes not heard yet; clears the list."""
    with _lock:
        left = sorted(_unheard.items())
        _unheard.clear()
    return left


def reports(text):
    """The lines of `text` that report a sanitizer fault or runtime error,
    each with a little context after it."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if REPORT.search(line):
            found.append("\n".join(lines[i:i + 6]))
    return found


def _describe(status):
    if status is None:
        return "still running"
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def check(what, status, stderr_text, expect=0):
    """Raise ExitStatusError unless `status` is `expect` (an int or a
    collection of ints) and `stderr_text` holds no report."""
    allowed = (expect,) if isinstance(expect, int) else tuple(expect)
    problems = []
    if status not in allowed:
        want = " or ".join(_describe(a) for a in allowed)
        problems.append(f"{_describe(status)}, expected {want}")
    found = reports(stderr_text)
    if found:
        problems.append(f"{len(found)} sanitizer or runtime error report(s) "
                        f"in its stderr:\n" + "\n---\n".join(found[:3]))
    if problems:
        raise ExitStatusError(f"{what}: " + "; ".join(problems) +
                              "\n--- end of its stderr ---\n" + stderr_text[-3000:])


def hear(proc, what, read_stderr, expect=0):
    """`proc` has exited (it is waited for, up to 10 s): check its status and
    its stderr (read_stderr() returns the text)."""
    with _lock:
        _unheard.pop(proc.pid, None)
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        status = None
    check(what, status, read_stderr(), expect)


def stop_and_hear(proc, what, read_stderr, expect=0, grace=70.0):
    """SIGTERM `proc` if it still runs, wait `grace` s (a stalled listener
    may take 60 s to give up), SIGKILL after that (then the status is
    SIGKILL's, which fails unless expected), and hear it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    hear(proc, what, read_stderr, expect)


def run(argv, what, expect=0, timeout=30, **kwargs):
    """subprocess.run(argv) of a short-lived process of ours, heard: returns
    the CompletedProcess (text mode) once its status is `expect` and its
    stderr clean."""
    res = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                         timeout=timeout, stdin=kwargs.pop("stdin", subprocess.DEVNULL),
                         **kwargs)
    check(what, res.returncode, res.stderr, expect)
    return res
