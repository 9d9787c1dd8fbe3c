# SPDX-License-Identifier: GPL-2.0-or-later
"""No qemu (and no chroot mount) outlives a Qemu context, however it ends."""

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from harness import Qemu, stray_processes
from harness.procs import wait_pid_gone
from harness.qemu import chroot_mounts, sweep_stale_run_dirs

# Tests the test tooling, not qemu-spice: run once (pytest.ini, `tooling`).
pytestmark = pytest.mark.tooling

HERE = Path(__file__).resolve().parent
PYTHON = "/usr/bin/python3"


def _assert_clean(pid, paths):
    assert wait_pid_gone(pid, 0), f"qemu pid {pid} still running"
    assert stray_processes(kind="qemu") == []
    assert chroot_mounts(paths) == []


def test_context_exit_leaves_nothing(qemu_flavour, paths):
    with Qemu(flavour=qemu_flavour, guest=None, display="dbus-p2p", spice=True,
              paths=paths) as q:
        pid = q.pid
        assert q.alive()
        with open(f"/proc/{pid}/comm") as f:
            assert f.read().strip().startswith("qemu-system")
        if qemu_flavour != "host":
            # The binds exist only in qemu's own mount namespace.
            assert os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        assert chroot_mounts(paths) == []
    _assert_clean(pid, paths)


def test_exception_inside_context_leaves_nothing(qemu_flavour, paths):
    pids = []
    with pytest.raises(RuntimeError, match="boom"):
        with Qemu(flavour=qemu_flavour, guest=None, display="none", paths=paths) as q:
            pids.append(q.pid)
            raise RuntimeError("boom")
    _assert_clean(pids[0], paths)


def test_qemu_that_fails_to_start_is_reported(paths):
    from harness import QemuError
    with pytest.raises(QemuError, match="did not start"):
        with Qemu(guest=None, display="none", extra_args=["-no-such-option"], paths=paths):
            pass
    assert stray_processes(kind="qemu") == []


CHILD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {here!r})
    from harness import Qemu
    q = Qemu(flavour={flavour!r}, guest=None, display="none").start()
    print(q.pid, q.run_dir, flush=True)
    if {how!r} == "exit":
        sys.exit(0)          # no close(): the atexit safety net must act
    time.sleep(60)           # killed with SIGKILL: PR_SET_PDEATHSIG must act
""")



@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_owner_death_kills_qemu(qemu_flavour, paths, how):
    code = CHILD.format(here=str(HERE), flavour=qemu_flavour, how=how)
    child = subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        line = child.stdout.readline().split()
        assert len(line) == 2 and line[0].isdigit(), f"child printed {line!r}"
        pid, run_dir = int(line[0]), line[1]
        if how == "sigkill":
            assert not wait_pid_gone(pid, 0.5), "qemu died too early"
            child.kill()
        child.wait(timeout=15)
        assert wait_pid_gone(pid, 10), f"qemu {pid} outlived its owner ({how})"
        assert chroot_mounts(paths) == []
        if how == "exit":
            assert not os.path.exists(run_dir), "atexit left the run dir"
        else:
            # Nothing can clean up after SIGKILL; the next session's sweep does.
            assert os.path.isdir(run_dir)
            assert run_dir in sweep_stale_run_dirs()
            assert not os.path.exists(run_dir)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


META_CONFTEST = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    from harness import timeout as t
    pytest_runtest_setup = t.pytest_runtest_setup
    pytest_runtest_call = t.pytest_runtest_call
    pytest_runtest_teardown = t.pytest_runtest_teardown
    def pytest_addoption(parser):
        t.addoption(parser)
    def pytest_configure(config):
        t.configure(config)
""")

META_TEST = textwrap.dedent("""
    import time, pytest
    from harness import Qemu

    @pytest.mark.timeout(3)
    def test_hangs():
        with Qemu(flavour={flavour!r}, guest=None, display="none") as q:
            print("QEMU_PID", q.pid, flush=True)
            time.sleep(60)
""")


def _meta_run(tmp_path, flavour):
    (tmp_path / "conftest.py").write_text(META_CONFTEST.format(here=str(HERE)))
    (tmp_path / "test_meta.py").write_text(META_TEST.format(flavour=flavour))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.Popen([PYTHON, "-m", "pytest", "-s", "-p", "no:cacheprovider",
                             str(tmp_path)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=_sigint_default)


def _sigint_default():
    # The child must take a Ctrl-C even when this run is a background job:
    # a shell without job control starts those with SIGINT ignored, children
    # inherit that, and Python then never raises KeyboardInterrupt
    # (tools/check runs the tooling tests as such a job).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _qemu_pid_from(child):
    for _ in range(200):
        line = child.stdout.readline()
        if not line:
            break
        if "QEMU_PID" in line:
            return int(line.split("QEMU_PID", 1)[1].split()[0])
    raise AssertionError("child pytest never started qemu")


def test_timeout_fails_test_and_cleans_up(tmp_path, qemu_flavour, paths):
    start = time.monotonic()
    child = _meta_run(tmp_path, qemu_flavour)
    try:
        pid = _qemu_pid_from(child)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 1, out
    assert "TestTimeout" in out and "1 failed" in out, out
    assert time.monotonic() - start < 20
    assert wait_pid_gone(pid, 0), "qemu outlived the timed-out test"
    assert chroot_mounts(paths) == []


def test_ctrl_c_cleans_up(tmp_path, qemu_flavour, paths):
    child = _meta_run(tmp_path, qemu_flavour)
    try:
        pid = _qemu_pid_from(child)
        assert not wait_pid_gone(pid, 0.3)
        os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 2, out  # pytest: interrupted
    assert "KeyboardInterrupt" in out, out
    assert wait_pid_gone(pid, 0), "qemu outlived Ctrl-C"
    assert chroot_mounts(paths) == []
