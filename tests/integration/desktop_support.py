# SPDX-License-Identifier: GPL-2.0-or-later
"""The desktop test guest (tests/guest/make-desktop): a Debian 12 disk image
booted with Debian's kernel, systemd, lightdm logging 'user' into openbox on
Xorg, and Debian's spice-vdagent, spice-vdagentd and spice-webdavd. Tests
drive it through the root shell on its serial console (DesktopShell).

Its Qemu is the harness's (harness/qemu.py): DesktopGuest stands where the
keydraw Guest does (kernel, initrd, cmdline), and the disk goes in as an
extra -drive with snapshot=on, so the cached image is never written."""

import os
import re
import subprocess
import time
from pathlib import Path

from harness.errors import MissingComponent, QemuError

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
    def build(cls, timeout=3600):
        cmd = str(MAKE_DESKTOP)
        try:
            res = subprocess.run([cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MissingComponent(f"desktop guest (make-desktop took over {timeout}s)", cmd)
        if res.returncode != 0:
            raise MissingComponent(f"desktop guest ({res.stderr.strip()[-800:]})", cmd)
        found = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
        return cls(found["KERNEL"], found["INITRD"], found["DISK"])

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
