# SPDX-License-Identifier: GPL-2.0-or-later
"""Services tests need: a private dbus-daemon, libvirtd (as root), Xvfb."""

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

from . import procs
from .errors import HarnessError, MissingComponent


def _read_line(fd, timeout, what, proc=None):
    """One line from fd within timeout (bounded; gives up if proc exits)."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HarnessError(f"{what}: nothing printed in {timeout}s")
        ready, _, _ = select.select([fd], [], [], min(left, 0.2))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                rc = proc.poll() if proc is not None else None
                raise HarnessError(f"{what}: exited ({rc}) before printing a line")
            data += chunk
    return data.split(b"\n", 1)[0].decode().strip()


def _require(binary, package):
    path = shutil.which(binary, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if path is None:
        raise MissingComponent(f"{binary}", f"apt-get install -y {package}")
    return path


class _Service:
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class DBusDaemon(_Service):
    """A private message bus; .address is its D-Bus address."""

    CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
"""

    def __init__(self):
        self.proc = None
        self.dir = None
        self.address = None

    def start(self, timeout=10.0):
        binary = _require("dbus-daemon", "dbus-daemon")
        # Under /tmp so that chroot'ed qemu (tmp shared) reaches the socket.
        self.dir = tempfile.mkdtemp(prefix="qs-dbus-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        conf = os.path.join(self.dir, "bus.conf")
        with open(conf, "w") as f:
            f.write(self.CONFIG.format(dir=self.dir))
        with open(os.path.join(self.dir, "stderr.log"), "wb") as log:
            self.proc = procs.spawn([binary, f"--config-file={conf}", "--print-address=1",
                                     "--nofork", "--nopidfile"],
                                    kind="dbus-daemon", stdout=subprocess.PIPE, stderr=log)
        try:
            self.address = _read_line(self.proc.stdout.fileno(), timeout,
                                      "dbus-daemon", self.proc)
        except HarnessError:
            self.stop()
            raise
        return self

    def env(self):
        return {"DBUS_SESSION_BUS_ADDRESS": self.address}

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc is not None:
            procs.kill_group(self.proc, grace=3.0)
            self.proc.stdout.close()
            self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class Xvfb(_Service):
    """An X server on a free display number; .display is ':N'."""

    def __init__(self, screen="1024x768x24"):
        self.screen = screen
        self.proc = None
        self.display = None
        self.number = None

    def start(self, timeout=10.0):
        binary = _require("Xvfb", "xvfb")
        r, w = os.pipe()
        try:
            # -displayfd: Xvfb picks a free display and writes its number once
            # it accepts connections.
            self.proc = procs.spawn([binary, "-displayfd", str(w), "-screen", "0",
                                     self.screen, "-nolisten", "tcp", "-noreset"],
                                    kind="xvfb", pass_fds=(w,),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.close(w)
            w = -1
            self.number = int(_read_line(r, timeout, "Xvfb", self.proc))
        except (HarnessError, ValueError):
            self.stop()
            raise
        finally:
            if w >= 0:
                os.close(w)
            os.close(r)
        self.display = f":{self.number}"
        return self

    def env(self):
        return {"DISPLAY": self.display}

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc is not None:
            procs.kill_group(self.proc, grace=3.0)
            self.proc = None
        if self.number is not None:
            for path in (f"/tmp/.X{self.number}-lock", f"/tmp/.X11-unix/X{self.number}"):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            self.number = None


def _pid_from_file(path):
    try:
        with open(path) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return pid if os.path.exists(f"/proc/{pid}") else None


class Libvirtd(_Service):
    """libvirtd + virtlogd as root on qemu:///system (monolithic daemon).

    If a libvirtd is already running it is reused and left running (.owned is
    False). Domains named qs-test-* are destroyed and undefined on stop.

    A libvirtd it starts itself runs in a mount namespace of its own where
    /etc/libvirt/hooks is .hooks_dir, a private directory (empty until a test
    puts a hook in its qemu.d/): hooks the host has installed, qemu-spice's
    own among them, never run for the tests' domains, and a hook test needs
    not touch the host's."""

    URI = "qemu:///system"
    PIDFILES = {"libvirtd": "/run/libvirtd.pid", "virtlogd": "/run/virtlogd.pid"}
    DOMAIN_PREFIX = "qs-test-"
    HOST_HOOKS = "/etc/libvirt/hooks"

    def __init__(self):
        self.owned = False
        self.pids = {}
        self.hooks_dir = None
        self._leased_pid = None

    def _argv(self, name, binary):
        if name != "libvirtd":
            return [binary, "-d"]
        if self.hooks_dir is None:
            self.hooks_dir = tempfile.mkdtemp(prefix="qs-libvirt-hooks-")
            os.mkdir(os.path.join(self.hooks_dir, "qemu.d"))
        os.makedirs(self.HOST_HOOKS, exist_ok=True)
        unshare = _require("unshare", "util-linux")
        # slave: the host's later mounts reach libvirtd, its bind mount
        # stays inside.
        return [unshare, "--mount", "--propagation", "slave", "sh", "-c",
                'mount --bind "$1" "$2" && exec "$3" -d', "sh",
                self.hooks_dir, self.HOST_HOOKS, binary]

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            if self.hooks_dir and not self.owned:
                shutil.rmtree(self.hooks_dir, ignore_errors=True)
                self.hooks_dir = None

    def virsh(self, *args, timeout=20.0, check=True):
        res = subprocess.run([self._virsh, "-c", self.URI, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                             timeout=timeout)
        if check and res.returncode != 0:
            raise HarnessError(f"virsh {' '.join(args)}: {res.stderr.strip()}")
        return res

    def _answers(self):
        try:
            return self.virsh("version", timeout=10.0, check=False).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def start(self, timeout=30.0):
        if os.geteuid() != 0:
            raise MissingComponent("root (Libvirtd needs it)", "sudo /usr/bin/python3 -m pytest ...")
        pkg = "libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients"
        self._virsh = _require("virsh", pkg)
        binaries = {name: _require(name, pkg) for name in ("libvirtd", "virtlogd")}
        if _pid_from_file(self.PIDFILES["libvirtd"]) and self._answers():
            self.owned = False
            return self
        self.owned = True
        os.makedirs("/run/libvirt", exist_ok=True)
        try:
            for name in ("virtlogd", "libvirtd"):
                if _pid_from_file(self.PIDFILES[name]):
                    continue
                # -d daemonises: the started process exits once the daemon runs.
                p = procs.spawn(self._argv(name, binaries[name]), kind="libvirt",
                                pdeathsig=False,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                try:
                    _, err = p.communicate(timeout=15)
                except subprocess.TimeoutExpired:
                    procs.kill_group(p)
                    raise HarnessError(f"{name} -d did not return in 15s")
                procs.forget(p)
                if p.returncode != 0:
                    raise HarnessError(f"{name} -d exited {p.returncode}: {err.decode()}")
                deadline = time.monotonic() + 10
                while not _pid_from_file(self.PIDFILES[name]):
                    if time.monotonic() > deadline:
                        raise HarnessError(f"{name}: no {self.PIDFILES[name]} in 10s")
                    time.sleep(0.05)
                self.pids[name] = _pid_from_file(self.PIDFILES[name])
            deadline = time.monotonic() + timeout
            while not self._answers():
                if time.monotonic() > deadline:
                    raise HarnessError(f"virsh -c {self.URI} version: no answer in {timeout}s")
                time.sleep(0.1)
        except Exception:
            self.stop()
            raise
        return self

    def version(self):
        return self.virsh("version").stdout

    def _cleanup_domains(self):
        try:
            res = self.virsh("list", "--all", "--name", check=False, timeout=10.0)
        except subprocess.TimeoutExpired:
            return
        for name in res.stdout.split():
            if name.startswith(self.DOMAIN_PREFIX):
                self.virsh("destroy", name, check=False, timeout=20.0)
                self.virsh("undefine", name, "--nvram", check=False, timeout=20.0)

    def lease(self):
        """Before a test that shares this daemon: it answers (a test before
        may have stopped it); returns self."""
        if not self._answers():
            self.start()
        self._leased_pid = self.pids.get("libvirtd")
        return self

    def reset(self):
        """After a test that shared this daemon: no qs-test-* domain left,
        no hook left in the private hooks directory. libvirtd looks for
        hooks when it starts, so a daemon the test restarted (to install a
        hook) or stopped is replaced by one started without it."""
        if not hasattr(self, "_virsh"):
            return
        if self.pids.get("libvirtd") or not self.owned:
            self._cleanup_domains()
        hooks = os.path.join(self.hooks_dir, "qemu.d") if self.hooks_dir else None
        left = os.listdir(hooks) if hooks and os.path.isdir(hooks) else []
        for name in left:
            os.unlink(os.path.join(hooks, name))
        if self.owned and (left or self.pids.get("libvirtd") != self._leased_pid):
            self.stop()

    def stop(self, timeout=10.0):
        if not hasattr(self, "_virsh"):
            return
        if self.pids.get("libvirtd") or not self.owned:
            self._cleanup_domains()
        if not self.owned:
            return
        problems = []
        for name in ("libvirtd", "virtlogd"):
            pid = self.pids.pop(name, None)
            if pid is None:
                continue
            for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    break
                if procs.wait_pid_gone(pid, wait):
                    break
            if not procs.wait_pid_gone(pid, 0):
                problems.append(f"{name} pid {pid} still running")
            path = self.PIDFILES[name]
            if _pid_from_file(path) is None:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        self.owned = False
        if problems:
            raise HarnessError("; ".join(problems))
