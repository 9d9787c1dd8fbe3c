# SPDX-License-Identifier: GPL-2.0-or-later
"""Starting child processes so that none can outlive the test run.

Every process started here
- leads its own process group (killed as a group),
- gets PR_SET_PDEATHSIG(SIGKILL), so it dies with the thread that started it
  (start them from the main thread),
- carries QS_HARNESS_OWNER=<token of this Python process> and
  QS_HARNESS_KIND=<kind> in its environment, so stray_processes() finds it
  (and its children) by scanning /proc even if its pid was lost,
- is killed by an atexit safety net if still registered at interpreter exit.
"""

import atexit
import os
import signal
import subprocess
import threading
import time
import uuid

OWNER_TOKEN = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
_live = {}
_live_lock = threading.Lock()


# PR_SET_PDEATHSIG is set by util-linux's setpriv right before it execs the
# program (same pid): a Python preexec_fn could deadlock in the forked child
# of this multi-threaded process.
SETPRIV = "/usr/bin/setpriv"


def spawn(argv, kind, env=None, pdeathsig=True, **kwargs):
    """Popen argv in a new session; registered for the atexit safety net."""
    full_env = dict(os.environ if env is None else env)
    full_env["QS_HARNESS_OWNER"] = OWNER_TOKEN
    full_env["QS_HARNESS_KIND"] = kind
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    argv = [str(a) for a in argv]
    if pdeathsig:
        argv = [SETPRIV, "--pdeathsig", "KILL", "--"] + argv
    proc = subprocess.Popen(argv, env=full_env, start_new_session=True, **kwargs)
    with _live_lock:
        _live[proc.pid] = proc
    return proc


def group_members(pgid):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        # Fields after the parenthesised comm: state ppid pgrp ...
        rest = stat.rsplit(")", 1)[-1].split()
        if len(rest) >= 3 and rest[0] != "Z" and int(rest[2]) == pgid:
            pids.append(int(entry))
    return pids


def kill_group(proc, grace=5.0):
    """SIGTERM the process group, SIGKILL after grace seconds; reap the leader.

    Returns the leader's exit status."""
    pgid = proc.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None and not group_members(pgid):
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_members(pgid):
                break
            time.sleep(0.02)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    forget(proc)
    return proc.returncode


def forget(proc):
    with _live_lock:
        _live.pop(proc.pid, None)


def _read_environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return None
    env = {}
    for item in data.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def stray_processes(kind=None, token=OWNER_TOKEN):
    """[(pid, comm, kind)] of live processes started by this harness run."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        env = _read_environ(entry)
        if not env or env.get("QS_HARNESS_OWNER") != token:
            continue
        if kind is not None and env.get("QS_HARNESS_KIND") != kind:
            continue
        found.append((int(entry), _comm(entry), env.get("QS_HARNESS_KIND")))
    return found


def kill_strays(kind=None):
    """SIGKILL every stray_processes(kind); returns what was found."""
    strays = stray_processes(kind)
    for pid, _, _ in strays:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return strays


def wait_pid_gone(pid, timeout):
    """True once pid does not exist (or is a zombie) within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().decode(errors="replace").rsplit(")", 1)[-1].split()[0]
            if state == "Z":
                return True
        except (OSError, IndexError):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


@atexit.register
def _safety_net():
    with _live_lock:
        procs = list(_live.values())
    for proc in procs:
        try:
            kill_group(proc, grace=1.0)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
    kill_strays()
