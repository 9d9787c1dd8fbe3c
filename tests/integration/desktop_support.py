# SPDX-License-Identifier: GPL-2.0-or-later
"""The desktop test guest (tests/guest/make-desktop): a Debian 12 disk image
booted with Debian's kernel, systemd, lightdm logging 'user' into openbox on
Xorg, and Debian's spice-vdagent, spice-vdagentd and spice-webdavd. Tests
drive it through the root shell on its serial console (DesktopShell).

Its Qemu is the harness's (harness/qemu.py): DesktopGuest stands where the
keydraw Guest does (kernel, initrd, cmdline), and the disk goes in as an
extra -drive with snapshot=on, so the cached image is never written."""

import contextlib
import copy
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from harness import Qemu, stray_processes
from harness.errors import MissingComponent, QemuError
from harness.procs import group_members
from harness.qemu import TEST_FLAVOURS, chroot_mounts
from line_client import LineClient
from serve_support import connect_chardev, serving, virtio_port_args

MAKE_DESKTOP = Path(__file__).resolve().parents[1] / "guest" / "make-desktop"
# The X server the serial shell talks to: lightdm's own authority file for
# it, there as soon as X is (the user's ~/.Xauthority comes with the login).
X_ENV = "DISPLAY=:0 XAUTHORITY=/var/run/lightdm/root/:0"
MEMORY = "1024M"


class DesktopGuest:
    """Kernel, initrd and disk of the desktop guest; quacks like Guest."""

    def __init__(self, kernel, initrd, disk):
        self.kernel, self.initrd, self.disk = Path(kernel), Path(initrd), Path(disk)

    @classmethod
    def build(cls, paths, timeout=3600):
        """make-desktop run as the harness runs build-guest (its errors and
        its KERNEL/INITRD lines); the disk lies beside the kernel."""
        desk = copy.copy(paths)
        desk.build_guest = MAKE_DESKTOP
        found = desk.require_guest(timeout=timeout)
        disk = found["KERNEL"].parent / "disk.img"
        if not disk.is_file():
            raise MissingComponent(f"desktop guest disk {disk}", str(MAKE_DESKTOP))
        return cls(found["KERNEL"], found["INITRD"], disk)

    def cmdline(self, mode=None, flush=None, extra=""):
        # mode/flush are the keydraw guest's; the desktop has none.
        line = ("root=/dev/vda rw console=ttyS0,115200 quiet loglevel=3 "
                "systemd.show_status=false")
        return f"{line} {extra}".strip()

    def drive_args(self):
        return ["-drive", f"file={self.disk},if=virtio,format=raw,snapshot=on"]


class DesktopShell:
    """Commands run by the root shell on the guest's serial console.

    Every command's output comes back as lines tagged with the command's own
    number (kernel or systemd lines on the same console cannot be mistaken
    for it); input echo is turned off first."""

    def __init__(self, q):
        self.q = q
        self.n = 0

    def wait_login(self, timeout):
        """Until the autologin shell answers; returns seconds waited."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        while True:
            mark = self.q.serial_mark()
            # Quoting splits the marker, so an echo of the input never matches.
            self.q.serial_write("stty -echo; echo QS''LOGIN")
            try:
                self.q.wait_serial(r"^QSLOGIN$", timeout=min(5.0, max(0.1, deadline -
                                                                       time.monotonic())),
                                   since=mark)
                return time.monotonic() - t0
            except QemuError:
                if time.monotonic() >= deadline:
                    raise

    def run(self, cmd, timeout=60.0, check=True):
        """(status, output) of `cmd` in the guest's shell."""
        self.n += 1
        n = self.n
        mark = self.q.serial_mark()
        self.q.serial_write(f"( {cmd} ) >/tmp/qs.out 2>&1; echo QS''RC{n} $?; "
                            f"sed 's/^/QS{n}: /' /tmp/qs.out; echo QS''END{n}")
        rc = int(self.q.wait_serial(rf"^QSRC{n} (\d+)$", timeout=timeout,
                                    since=mark).group(1))
        end = self.q.wait_serial(rf"^QSEND{n}$", timeout=30, since=mark)
        prefix = f"QS{n}: "
        out = "\n".join(line[len(prefix):] for line in self.q.serial_lines[mark:end.line_index]
                        if line.startswith(prefix))
        if check and rc != 0:
            raise QemuError(f"guest command {cmd!r} exited {rc}: {out[-2000:]}")
        return rc, out

    def x(self, cmd, **kw):
        """`cmd` as an X client of the user's display :0."""
        return self.run(f"env {X_ENV} {cmd}", **kw)

    def wait_for(self, cmd, timeout, what):
        """Run `cmd` every second until it exits 0; returns seconds waited."""
        t0 = time.monotonic()
        last = ""
        while time.monotonic() - t0 < timeout:
            rc, last = self.run(cmd, check=False)
            if rc == 0:
                return time.monotonic() - t0
            time.sleep(1.0)
        raise QemuError(f"{what}: not after {timeout}s; last output: {last[-1000:]}")

    def put_file(self, path, data):
        """Write `data` (bytes) to `path` in the guest, base64 in short lines
        (the tty's canonical line limit is 4096 bytes)."""
        import base64
        b64 = base64.b64encode(data).decode()
        self.run(f": >{path}.b64")
        for i in range(0, len(b64), 1000):
            self.run(f"echo {b64[i:i + 1000]} >>{path}.b64")
        self.run(f"base64 -d {path}.b64 >{path} && rm {path}.b64")

    def sha256(self, path):
        _, out = self.run(f"sha256sum <{path}; wc -c <{path}")
        digest, size = out.split()[0], int(out.split()[-1])
        return digest, size


def xrandr_current(shell):
    """The X screen's current size from `xrandr` in the guest: (w, h)."""
    _, out = shell.x("xrandr")
    m = re.search(r"current (\d+) x (\d+)", out)
    if not m:
        raise QemuError(f"no current size in xrandr output: {out[-1000:]}")
    return int(m.group(1)), int(m.group(2)), out


def sanitizer_clean(log):
    return "Sanitizer" not in log and "runtime error" not in log


def env_flag(name):
    return os.environ.get(name, "") not in ("", "0")


# ---- one boot per test file --------------------------------------------------

AGENT_PORT = "com.redhat.spice.0"
# Boot to the autologin shell, then to X with spice-vdagent running. Measured
# (2 shared cores, other builds running): see docs/guest-requirements.md.
LOGIN_WAIT_S = 240
SESSION_WAIT_S = 180
# Which server stands between the client and the guest's agent: the helper
# (--agent-fd), or qemu's own spice-server as the control.
SERVERS = ("helper", "spice-server")
# And on which qemu: the host's 7.2 and trixie's 10.0 (QS_QEMU_FLAVOURS, as
# the conftest's qemu_flavour), each server on each, one boot a file each.
BOOTS = [(server, flavour) for flavour in TEST_FLAVOURS for server in SERVERS]


class DesktopBoot:
    """The desktop guest booted to its X session with spice-vdagent running,
    shared by the tests of one file (each leaves the guest as it found it).

    server 'helper': qemu's D-Bus display, the agent port on a listening
    socket chardev; this object holds the connection (as the launcher
    would) and each test's helper gets a copy of it, so the guest's port
    stays open from one helper to the next. server 'spice-server': qemu's
    own -spice with the port on a spicevmc chardev."""

    def __init__(self, paths, desktop, server, flavour="host", vga="virtio"):
        self.server = server
        self.run = tempfile.mkdtemp(prefix="qs-desktop-", dir="/tmp")
        self.chardev = None
        kw = dict(flavour=flavour, paths=paths, guest=desktop, vga=vga, memory=MEMORY,
                  serial_input=True)
        if server == "helper":
            path = os.path.join(self.run, "agent.sock")
            self.q = Qemu(**kw, extra_args=desktop.drive_args() + virtio_port_args(
                AGENT_PORT, f"path={path},server=on,wait=off"))
        else:
            self.q = Qemu(**kw, display="spice", extra_args=desktop.drive_args() + [
                "-chardev", "spicevmc,id=qsvdagent,name=vdagent",
                "-device", "virtio-serial-pci,id=qsvserial",
                "-device", "virtserialport,bus=qsvserial.0,chardev=qsvdagent,"
                           f"name={AGENT_PORT}"])
        t0 = time.monotonic()
        try:
            self.q.start()
            if server == "helper":
                self.chardev = connect_chardev(path)
            self.shell = DesktopShell(self.q)
            self.times = {"login": round(self.shell.wait_login(LOGIN_WAIT_S), 1)}
            # X up, the user's session agent running, the daemon serving it.
            self.shell.wait_for("pgrep -u user -x spice-vdagent && pgrep -x spice-vdagentd "
                                f"&& env {X_ENV} xrandr", SESSION_WAIT_S,
                                "X session with spice-vdagent")
            self.times["session"] = round(time.monotonic() - t0, 1)
        except BaseException:
            self.close()
            raise

    def pids(self):
        """qemu's process group (kept alive between this file's tests)."""
        return set(group_members(self.q.pid)) | {self.q.pid}

    def journal(self, pattern="-e vdagent -e randr", lines=30):
        _, out = self.shell.run(f"journalctl -b --no-pager | grep -i {pattern} | "
                                f"tail -{lines}", check=False)
        return out

    @contextlib.contextmanager
    def serve(self, helper_binary, script, *args, seconds=600):
        """A client (LineClient running `script client HOST PORT *args
        SECONDS`, commands on its stdin) connected through this boot's
        server; yields (client, helper or None, what) where what() is the
        diagnostics text. The helper, if any, is this test's own."""
        client = None
        if self.server == "spice-server":
            try:
                client = LineClient([script, "client", "127.0.0.1", self.q.spice_port,
                                     *args, seconds], commands=True)

                def what():
                    return (f"server: spice-server\nboot: {self.times}\n"
                            f"client: {client.lines[-20:]}{client_err(client)}\n"
                            f"qemu: {self.q.stderr_tail()}")
                yield client, None, what
            finally:
                if client:
                    client.finish(5)
            return
        fd = self.chardev.fileno()
        with serving(helper_binary, self.q, "--disable-ticketing", "--agent-fd", fd,
                     pass_fds=[fd]) as (h, port):
            try:
                client = LineClient([script, "client", "127.0.0.1", port, *args, seconds],
                                    commands=True)

                def what():
                    return (f"server: helper\nboot: {self.times}\n"
                            f"client: {client.lines[-20:]}{client_err(client)}\n"
                            f"helper: {h.stderr()[-3000:]}\n"
                            f"qemu: {self.q.stderr_tail()}")
                yield client, h, what
            finally:
                if client:
                    client.finish(5)

    def close(self):
        try:
            if self.chardev:
                self.chardev.close()
            self.q.close()
        finally:
            shutil.rmtree(self.run, ignore_errors=True)


def client_err(client):
    """The client script's stderr so far."""
    return "\nclient stderr: " + client.stderr()[-2000:]


@contextlib.contextmanager
def desktop_boot(paths, server, **kw):
    """DesktopBoot as a context manager (the module fixture's body)."""
    boot = DesktopBoot(paths, DesktopGuest.build(paths), server, **kw)
    try:
        yield boot
    finally:
        boot.close()


def no_stray_qemu_but(boots):
    """The conftest's per-test check that no qemu is left, sparing the
    file's shared boot(s): a test module imports the fixture below under the
    conftest's name, `_no_stray_qemu`, which overrides it there."""
    keep = set()
    for b in boots:
        if b.q.alive():
            keep |= b.pids()
    strays = [s for s in stray_processes(kind="qemu") if s[0] not in keep]
    for pid, _, _ in strays:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    return strays


SHARED_BOOTS = []


@pytest.fixture(autouse=True)
def _no_stray_qemu(paths):
    """Every test: afterwards no qemu of ours runs but the file's shared
    boot, and no chroot mount is left but its own."""
    yield
    strays = no_stray_qemu_but(SHARED_BOOTS)
    mounts = [] if SHARED_BOOTS else chroot_mounts(paths)
    if strays or mounts:
        pytest.fail(f"left behind: qemu processes {strays}, mounts {mounts}")


@pytest.fixture(scope="module", params=BOOTS, ids=[f"{s}-{f}" for s, f in BOOTS])
def desktop(request, paths):
    """One boot of the desktop guest per test file, server and qemu: the
    tests run against the helper, then against qemu's spice-server (the
    control), on each qemu; pytest ends one boot before it starts the
    next."""
    server, flavour = request.param
    with desktop_boot(paths, server, flavour=flavour) as boot:
        SHARED_BOOTS.append(boot)
        try:
            yield boot
        finally:
            SHARED_BOOTS.remove(boot)
