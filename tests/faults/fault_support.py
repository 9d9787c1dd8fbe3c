# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the fault tests (tests/faults/README.md): the helper
serving a busy guest, a spice-gtk client in the background, the exact-screen
check, RSS and QMP sampling, what a scenario shared by a correctness test
and a figure test needs (tests/integration/harness/shared_run.py). No tests
here."""

import contextlib
import json
import re
import subprocess
import threading
import time

import pytest

from harness.qemu import parse_ppm
# Re-exported: the fault tests stretch correctness deadlines by slowdown().
from harness.sanitizer import sanitized, slowdown  # noqa: F401
from serve_support import READY_TIMEOUT, serving  # noqa: F401 (re-exported)
from test_display_support import count_differences

# The guest's animated rectangle (tests/guest/keydraw.h KD_ACT_*).
ACTIVITY = "624,160,640,480"
# How long after the guest stops the client's picture must be exact (the
# integration tests ask 1 s on an idle machine; this directory runs beside
# other VMs, so it allows more).
EXACT_AFTER_STOP_MS = 3000
# Messages the helper logs about its own state that must never appear.
BAD_LOG = re.compile(r"Sanitizer|runtime error|qemu-spice: error: |CRITICAL|assertion")


@contextlib.contextmanager
def recorded(problems, what):
    """A correctness check inside a shared scenario (shared_run): its
    failure (an assert, pytest.fail) is appended to `problems` as text
    instead of ending the run, so the scenario goes on and the figures it
    measures still reach their own test; the correctness test asserts
    `problems` is empty. Anything else (a timeout, a harness error) ends
    the run and fails both tests."""
    try:
        yield
    except (AssertionError, pytest.fail.Exception) as e:
        problems.append(f"{what}: {e}"[:2000])


def assert_no_problems(run):
    assert not run["problems"], "\n".join(run["problems"])


def busy_guest(qemu_factory, guest, flavour="host", mode="busy"):
    q = qemu_factory(flavour=flavour, guest=guest, vga="virtio", mode=mode)
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


class Client:
    """qs-test-client running in the background, stdout/stderr in files."""

    def __init__(self, binary, port, args, tmp_path, name="client", timeout=60):
        self.out_path = tmp_path / f"{name}.out"
        self.err_path = tmp_path / f"{name}.err"
        self.timeout = timeout
        argv = [str(binary), "--port", str(port), "--timeout", str(timeout),
                *map(str, args)]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL)
        self.argv = argv

    def stdout(self):
        return self.out_path.read_text(errors="replace")

    def stderr(self):
        return self.err_path.read_text(errors="replace")

    def json_lines(self):
        return [json.loads(line) for line in self.stdout().splitlines()
                if line.startswith("{")]

    def wait_output(self, lines=1, timeout=45.0):
        """Until stdout has `lines` lines (e.g. `info` printed: the session
        is up and the next command runs)."""
        deadline = time.monotonic() + timeout
        while self.stdout().count("\n") < lines:
            if self.proc.poll() is not None:
                pytest.fail(f"client exited {self.proc.returncode} early: "
                            f"{self.stderr()[-1500:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"client printed nothing in {timeout}s: {self.stderr()[-1500:]}")
            time.sleep(0.05)

    def wait(self, timeout):
        """Exit status, or None if still running after `timeout`."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def stop_when_written(q, path, stopped, timeout=90.0):
    """QMP stop as soon as `path` exists (polled every 20 ms)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            q.stop()
            stopped["at"] = time.monotonic()
            return
        time.sleep(0.02)


def assert_same_picture(path, q):
    w, h, ref = q.screendump()
    pw, ph, pixels = parse_ppm(path.read_bytes())
    assert (pw, ph) == (w, h), f"client picture {pw}x{ph}, qemu {w}x{h}"
    if pixels != ref:
        n, where = count_differences(pixels, ref, w)
        pytest.fail(f"client picture differs from qemu's screendump in {n} of {w * h} "
                    f"pixels, first at {where}")


def watch_then_exact(test_client, port, q, tmp_path, seconds=3, name="next", extra=()):
    """One spice-gtk session: `watch` the running guest for `seconds`, then
    (the guest is stopped as soon as the mid-picture is written) a picture
    EXACT_AFTER_STOP_MS later that must equal qemu's screendump. Returns the
    watch JSON; the guest is left stopped."""
    mid, final = tmp_path / f"{name}-mid.ppm", tmp_path / f"{name}-final.ppm"
    stopped = {}
    watcher = threading.Thread(target=stop_when_written, args=(q, mid, stopped),
                               daemon=True)
    watcher.start()
    client = Client(test_client, port,
                    ["--settle", "0", "--seconds", seconds, *extra, "watch",
                     "screenshot", mid, "sleep", EXACT_AFTER_STOP_MS, "screenshot", final],
                    tmp_path, name=name)
    rc = client.wait(timeout=client.timeout + 30)
    watcher.join(timeout=90)
    if rc is None:
        client.kill()
    assert rc == 0, f"{client.argv} exited {rc}: {client.stderr()[-1500:]}"
    assert "at" in stopped, "the mid picture never appeared"
    assert_same_picture(final, q)
    return client.json_lines()[0]


def updates(watch):
    """What a `watch` JSON saw arrive: repaints plus video frames (a slow
    client, e.g. a sanitizer build's, may not have decoded any frame of a
    stream yet when its window ends)."""
    return watch["invalidates"] + watch["stream_frames"]


class RssSampler:
    """VmRSS of a process every `interval` s in a thread: .samples (KiB)."""

    def __init__(self, pid, interval=0.1):
        self.pid = pid
        self.interval = interval
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss")

    def _read(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def _run(self):
        while not self._stop.is_set():
            kib = self._read()
            if kib is not None:
                self.samples.append(kib)
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        return False

    @property
    def max(self):
        return max(self.samples)


def qmp_latency(q, timeout=5.0):
    """Seconds a `query-status` takes (bounded by `timeout`)."""
    t0 = time.monotonic()
    q.qmp.command("query-status", timeout=timeout)
    return time.monotonic() - t0


def closed_lines(h, channel="display"):
    """The helper's log lines about closed connections of `channel`."""
    return [line for line in h.stderr().splitlines()
            if re.search(rf"{channel} channel \d+:\d+ from \S+ closed: ", line)]


def wait_closed_lines(h, count, channel="display", timeout=10.0):
    deadline = time.monotonic() + timeout
    while len(closed_lines(h, channel)) < count:
        if h.proc.poll() is not None:
            pytest.fail(f"helper exited ({h.proc.returncode}): {h.stderr()[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"the helper did not log {count} closed {channel} connections "
                        f"in {timeout}s: {h.stderr()[-2000:]}")
        time.sleep(0.05)
    return closed_lines(h, channel)


def assert_helper_healthy(h):
    assert h.proc.poll() is None, f"helper exited {h.proc.returncode}: {h.stderr()[-2000:]}"
    bad = [line for line in h.stderr().splitlines() if BAD_LOG.search(line)]
    assert not bad, f"helper logged: {bad[:5]}"
