# SPDX-License-Identifier: GPL-2.0-or-later
"""The helper confined (helper/qs-confine.c, docs/security.md) while it serves
a real qemu: what /proc shows about it, that it keeps following the guest
(frames, heat, a listener re-registration after a stall, which makes a new
socketpair and thread under the filter), and what the test-only probe
(--test-confine-probe, test-control builds only) gets when the confined
helper tries to open a file, connect to 127.0.0.1:9 or exec.

Needs a root run (the uid switch, chroot and network namespace need it) and
a helper built with -Dtest_controls=true whose main.c calls qs-confine."""

import json
import os
import pwd
import re
import signal
import subprocess
import time

import pytest

from harness.errors import MissingComponent
from harness.qemu import free_tcp_port
from test_display_support import Helper, display_helper  # noqa: F401

STEPS = ("nnp", "user", "caps", "rlimits", "fs", "netns", "seccomp")
ZERO_CAPS = "0000000000000000"


@pytest.fixture
def confine_helper(display_helper):
    out = subprocess.run([str(display_helper), "--help-all"], capture_output=True,
                         text=True, timeout=10).stdout
    if "--confine" not in out or "--test-confine-probe" not in out:
        raise MissingComponent(
            f"confinement and its probe in {display_helper}",
            "main.c must call qs_confine_prepare/qs_confine_apply (see "
            "docs/security.md) and the build needs -Dtest_controls=true")
    if os.geteuid() != 0:
        raise MissingComponent("root", "run the integration tests as root")
    return display_helper


def confined(binary, q, *args):
    """The helper on qemu's p2p D-Bus with a loopback plain SPICE port."""
    port = free_tcp_port()
    if not any(a.startswith("--confine") for a in args):
        args = ("--confine=all", *args)
    h = Helper.p2p(binary, q, ["--listen", f"127.0.0.1:{port}",
                               "--disable-ticketing", *args])
    h.port = port
    return h


def spice_info(test_client, port):
    """A SPICE link and session through the confined helper."""
    # (the client is not under test: its own leaks in sanitizer builds
    # must not fail this test)
    env = dict(os.environ, LSAN_OPTIONS="detect_leaks=0")
    res = subprocess.run([str(test_client), "--timeout", "20", "--port", str(port),
                          "info"], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, (res.returncode, res.stderr)
    return json.loads(res.stdout)


def expected_user():
    for name in ("qemu-spice", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise AssertionError("neither qemu-spice nor nobody exists")


def wait_log(h, regex, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(regex, h.stderr(), re.M)
        if m:
            return m
        if h.proc.poll() is not None:
            m = re.search(regex, h.stderr(), re.M)
            if m:
                return m
            raise AssertionError(f"helper exited ({h.proc.returncode}) before "
                                 f"/{regex}/: {h.stderr()}")
        time.sleep(0.05)
    raise AssertionError(f"no /{regex}/ in the helper's log within {timeout}s: "
                         f"{h.stderr()}")


def proc_status(path):
    fields = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def assert_thread_confined(path, user):
    st = proc_status(path)
    assert st["NoNewPrivs"] == "1", (path, st["NoNewPrivs"])
    assert st["Seccomp"] == "2", (path, st["Seccomp"])
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert st[cap] == ZERO_CAPS, (path, cap, st[cap])
    assert st["Uid"].split() == [str(user.pw_uid)] * 4, (path, st["Uid"])
    assert st["Gid"].split() == [str(user.pw_gid)] * 4, (path, st["Gid"])
    assert st["Groups"] == "", (path, st["Groups"])


def limits(pid):
    out = {}
    with open(f"/proc/{pid}/limits") as f:
        for line in f.readlines()[1:]:
            name = line[:26].strip()
            soft, hard = line[26:].split()[:2]
            out[name] = (soft, hard)
    return out


def check_fds(h):
    """Only sockets, eventfds, pipes, memfds and the std streams."""
    pid = h.proc.pid
    fds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue    # closed meanwhile
    allowed = re.compile(r"^(socket:\[\d+\]|pipe:\[\d+\]|anon_inode:\[eventfd\]|"
                         r"/memfd:.*|/dev/null)$")
    for fd, target in fds.items():
        if fd == 2:
            assert target == h.stderr_path, target
            continue
        assert allowed.match(target), f"unexpected descriptor {fd} -> {target}: {fds}"
    # stdio, qemu's D-Bus socket, the control socket, a listener pair end,
    # one wakeup eventfd per main context: a few, not dozens.
    assert len(fds) <= 24, fds
    assert sum(t.startswith("socket:") for t in fds.values()) >= 2, fds
    return fds


def test_confined_helper_serves(qemu_factory, qemu_flavour, guest, confine_helper,
                                test_client):
    user = expected_user()
    q = qemu_factory(vga="virtio", mode="busy", flush="full")
    ready = q.wait_ready()
    with confined(confine_helper, q) as h:
        line = wait_log(h, r"^qemu-spice: confinement: active (\S+)$").group(1)
        for step in STEPS:
            assert re.search(rf"(^|,){step}\b", line), (step, line)
        assert f"user={user.pw_name}({user.pw_uid}:{user.pw_gid})" in line, line
        assert "OFF" not in h.stderr()
        pid = h.proc.pid
        h.wait_frames(5)

        tasks = os.listdir(f"/proc/{pid}/task")
        assert len(tasks) >= 2, tasks       # GDBus worker, listener thread
        for tid in tasks:
            assert_thread_confined(f"/proc/{pid}/task/{tid}/status", user)
        assert_thread_confined(f"/proc/{pid}/status", user)

        lim = limits(pid)
        assert lim["Max open files"] == ("1024", "1024"), lim
        assert lim["Max core file size"] == ("0", "0"), lim
        if "unlimited:sanitizer" not in line:
            assert lim["Max address space"] == (str(8192 << 20),) * 2, lim

        root = os.readlink(f"/proc/{pid}/root")
        assert root != "/" and root.endswith("(deleted)"), root
        assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
        check_fds(h)

        # Still serving: a SPICE client links (fresh RSA key from the worker
        # thread, accept on the inherited listener) and sees the surface...
        info = spice_info(test_client, h.port)
        assert f"{ready['w']}" in json.dumps(info), info
        # ...frames keep coming, heat is computed...
        before = h.frames()
        h.wait_frames(before + 10, timeout=20)
        h.ctl("heat")
        # ...and a stalled listener is replaced (new socketpair, new thread,
        # RegisterListener with an fd) under the filter.
        regs = h.stats()["registrations"]
        h.ctl("stall 2")
        deadline = time.monotonic() + 20
        while h.stats()["registrations"] <= regs:
            assert time.monotonic() < deadline, (h.stats(), h.stderr())
            time.sleep(0.1)
        after = h.frames()
        h.wait_frames(after + 10, timeout=20)
        assert h.proc.poll() is None, h.stderr()
        stats = h.stats()
        if qemu_flavour != "host":
            # qemu >= 9.2 shares its surfaces as memfds (Listener.Unix.Map)
            assert stats["scanout_maps"] + stats["update_maps"] > 0, stats
        # every listener's handshake ran under the final uid
        assert "handshake failed" not in h.stderr(), h.stderr()
        for tid in os.listdir(f"/proc/{pid}/task"):
            assert_thread_confined(f"/proc/{pid}/task/{tid}/status", user)
        check_fds(h)
    assert h.proc.returncode == 0, (h.proc.returncode, h.stderr())


def test_confine_probes(qemu_factory, guest, confine_helper):
    q = qemu_factory(flavour="host", vga="virtio", mode="busy")
    q.wait_ready()

    with confined(confine_helper, q, "--test-confine-probe", "open") as h:
        m = wait_log(h, r"confine-probe open /etc/passwd: (.*)$")
        assert m.group(1).startswith("refused EACCES"), m.group(0)
        h.wait_frames(h.frames() + 5)       # refused, not killed
        assert h.proc.poll() is None

    with confined(confine_helper, q, "--test-confine-probe", "connect") as h:
        m = wait_log(h, r"confine-probe connect 127.0.0.1:9: (.*)$")
        assert m.group(1).startswith("refused EPERM"), h.stderr()
        m = re.search(r"confine-probe socket AF_INET: (.*)$", h.stderr(), re.M)
        assert m and m.group(1).startswith("refused EPERM"), h.stderr()
        h.wait_frames(h.frames() + 5)
        assert h.proc.poll() is None

    with confined(confine_helper, q, "--test-confine-probe", "exec") as h:
        wait_log(h, r"confine-probe exec: trying /bin/true")
        h.expect_exit(-signal.SIGSYS)
        rc = h.wait_exit(timeout=15)
        assert rc == -signal.SIGSYS, (rc, h.stderr())    # killed by the filter
        assert "ALLOWED" not in h.stderr()


def test_confine_steps_off_reported(qemu_factory, guest, confine_helper):
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    q.wait_ready()
    with confined(confine_helper, q, "--confine", "all,-seccomp,-netns") as h:
        m = wait_log(h, r"^qemu-spice: warning: confinement: active (\S+); OFF: (\S+)$")
        assert m.group(2) == "netns,seccomp", m.group(0)
        st = proc_status(f"/proc/{h.proc.pid}/status")
        assert st["Seccomp"] == "0" and st["NoNewPrivs"] == "1", st
        assert os.readlink(f"/proc/{h.proc.pid}/ns/net") == os.readlink("/proc/self/ns/net")
        h.wait_frames(1)
