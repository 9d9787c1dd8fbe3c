# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the test_display_* tests: run the helper with its test
controls (a build with -Dtest_controls=true) and talk to them.

No tests here; pytest collects the file because of its name and finds none."""

import os
import re
import socket
import subprocess
import tempfile
import time

from harness import exits, procs
from harness.errors import MissingComponent
from harness.qemu import parse_ppm
from harness.sanitizer import sanitized

# Activity rectangle of the test guest (tests/guest/keydraw.h KD_ACT_*).
ACTIVITY = (624, 160, 640, 480)
BLOCK = 16


def require_test_controls(helper_binary):
    """The helper must be built with -Dtest_controls=true."""
    out = exits.run([helper_binary, "--help"], "the helper's --help", timeout=10).stdout
    if "--test-control" not in out:
        raise MissingComponent(
            f"test controls in {helper_binary}",
            f"meson configure {os.path.dirname(os.path.dirname(helper_binary))} "
            "-Dtest_controls=true && ninja -C <build dir>")
    return helper_binary


class Helper:
    """qemu-spice attached to a qemu, with a test control socket.

    Use as a context manager; the process is gone after the with block, and
    its end was heard (harness/exits.py): exit status 0 unless the test
    called expect_exit(), and no sanitizer report in its stderr."""

    def __init__(self, binary, args=(), pass_fds=(), control=True):
        self.dir = tempfile.mkdtemp(prefix="qs-display-test-")
        self.control = os.path.join(self.dir, "control.sock") if control else None
        argv = [str(binary), *[str(a) for a in args]]
        if not any(str(a).startswith(("--listen", "--tls-listen")) for a in args):
            # The helper always serves; these tests only look at its copy.
            argv += ["--listen", "127.0.0.1:0", "--disable-ticketing"]
        if control:
            argv += ["--test-control", self.control]
        if sanitized(str(binary)) and not any(str(a).startswith("--confine") for a in args):
            # LeakSanitizer checks at exit only where it can list and trace
            # the threads: not in the empty root, not under the filter
            # (helper/qs-confine.c). Confinement itself is the confine
            # tests' and the smoke tests' (tests/README.md).
            argv += ["--confine=all,-fs,-seccomp"]
        self.stderr_path = os.path.join(self.dir, "stderr")
        self._stderr = open(self.stderr_path, "w+b")
        # The harness run's token in its environment: a test that looks for
        # helpers by their binary (test_launcher_libvirt.py) leaves those of
        # another run on the same build alone.
        env = dict(os.environ, QS_HARNESS_OWNER=procs.OWNER_TOKEN, QS_HARNESS_KIND="helper")
        self.proc = subprocess.Popen(argv, pass_fds=list(pass_fds), env=env,
                                     stdout=subprocess.DEVNULL, stderr=self._stderr)
        self.argv = argv
        self.expected_exit = 0
        exits.started(self.proc, self._what())

    @classmethod
    def p2p(cls, binary, qemu, args=(), control=True, pass_fds=()):
        """Attached with --dbus-p2p-fd to a fresh qemu D-Bus client; pass_fds
        are further descriptors the helper inherits (e.g. --port-fd's)."""
        sock = qemu.dbus_p2p_client()
        try:
            return cls(binary, ["--dbus-p2p-fd", sock.fileno(), *args],
                       pass_fds=[sock.fileno(), *pass_fds], control=control)
        finally:
            sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _what(self):
        return f"helper {self.proc.pid} ({' '.join(self.argv[1:6])} ...)"

    def expect_exit(self, status):
        """The exit status (an int, or a tuple of them) this test expects of
        the helper instead of 0; a negative one is a signal's."""
        self.expected_exit = status

    def close(self):
        """End the helper (SIGTERM; a stalled listener may take 60 s to give
        up) and hear its end; closing twice hears it once."""
        if self._stderr.closed:
            return
        try:
            exits.stop_and_hear(self.proc, self._what(), self.stderr,
                                expect=self.expected_exit)
        finally:
            self._stderr.close()

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_exit(self, timeout=15):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"helper still running after {timeout}s; "
                                 f"stderr: {self.stderr()}")

    def wait_listening(self, port, timeout=20):
        """Until a TCP connect to 127.0.0.1:port succeeds (the helper binds
        its listeners after attaching to qemu)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"helper exited ({self.proc.returncode}): "
                                     f"{self.stderr()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"helper not listening on {port} after "
                                         f"{timeout}s: {self.stderr()}")
                time.sleep(0.05)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS for the helper")

    def ctl(self, command, timeout=10, payload=None):
        """One control command; returns the reply line without 'ok '.
        With `payload` (a list), the bytes that follow the line go there."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(timeout)
                s.connect(self.control)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                if self.proc.poll() is not None:
                    raise AssertionError(f"helper exited ({self.proc.returncode}): "
                                         f"{self.stderr()}")
                if time.monotonic() > deadline:
                    raise AssertionError("helper control socket did not appear")
                time.sleep(0.05)
        with s:
            s.sendall(command.encode() + b"\n")
            reply = b""
            while b"\n" not in reply:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                reply += chunk
            reply, _, rest = reply.partition(b"\n")
            m = re.search(rb" bytes=(\d+)$", reply)
            if m and payload is not None:
                want = int(m.group(1))
                while len(rest) < want:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        raise AssertionError(f"control payload cut at {len(rest)} "
                                             f"of {want} bytes")
                    rest += chunk
                payload.append(rest[:want])
        reply = reply.decode().strip()
        if not reply.startswith("ok"):
            raise AssertionError(f"control '{command}': {reply}")
        return reply[3:]

    def stats(self):
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", self.ctl("stats"))}

    def frames(self):
        s = self.stats()
        return s["scanouts"] + s["updates"] + s["scanout_maps"] + s["update_maps"]

    def wait_frames(self, count=1, timeout=15):
        deadline = time.monotonic() + timeout
        while self.frames() < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no frames from qemu in {timeout}s: "
                                     f"{self.stats()} {self.stderr()}")
            time.sleep(0.05)

    def wait_quiet(self, quiet=0.7, timeout=10):
        """Until no frame arrived for `quiet` seconds and nothing waits."""
        deadline = time.monotonic() + timeout
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            s = self.stats()
            key = (self.frames(), s["backlog"])
            if key != last:
                last, since = key, time.monotonic()
            elif s["backlog"] == 0 and time.monotonic() - since >= quiet:
                return
            time.sleep(0.1)
        raise AssertionError(f"helper never quiet: {self.stats()}")

    def dump(self):
        """(width, height, RGB bytes) of the helper's screen copy."""
        data = []
        self.ctl("dump", payload=data)
        return parse_ppm(data[0])

    def heat(self):
        """(set of hot block indices, blocks_x, qemu's frames counted as the
        helper took that snapshot) now."""
        reply = self.ctl("heat")
        fields = dict(re.findall(r"(\w+)=(\S*)", reply))
        bx = int(fields["blocks"].split("x")[0])
        hot = {int(i) for i in fields["hot"].split(",") if i}
        return hot, bx, int(fields["frames"])


def activity_blocks(bx):
    x, y, w, h = ACTIVITY
    return {by * bx + b
            for by in range(y // BLOCK, (y + h + BLOCK - 1) // BLOCK)
            for b in range(x // BLOCK, (x + w + BLOCK - 1) // BLOCK)}


def count_differences(a, b, width):
    """Number of differing RGB pixels and the first few positions."""
    diffs = [i // 3 for i in range(0, min(len(a), len(b)), 3) if a[i:i + 3] != b[i:i + 3]]
    return len(diffs), [(p % width, p // width) for p in diffs[:5]]


def assert_exact(helper, qemu):
    """The helper's copy equals qemu's screendump, byte for byte."""
    qw, qh, qpx = qemu.screendump()
    hw, hh, hpx = helper.dump()
    assert (hw, hh) == (qw, qh), f"size: helper {hw}x{hh}, qemu {qw}x{qh}"
    if hpx != qpx:
        n, where = count_differences(hpx, qpx, qw)
        raise AssertionError(f"{n} pixels differ from qemu's screendump, first at "
                             f"{where}; stats {helper.stats()}")


import pytest  # noqa: E402  (kept next to the fixture it serves)


@pytest.fixture
def display_helper(helper_binary):
    """The helper binary, checked to carry the test controls."""
    return require_test_controls(helper_binary)
