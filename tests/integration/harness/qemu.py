# SPDX-License-Identifier: GPL-2.0-or-later
"""qemu under test: the host's 7.2 or a chroot's newer one, booting the guest."""

import atexit
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from . import procs
from .errors import HarnessError, QemuError
from .paths import CHROOT_SUITES, Paths
from .qmp import Qmp

FLAVOURS = ("host", "trixie", "sid")
# Which of them the tests parametrised by qemu build run against.
TEST_FLAVOURS = os.environ.get("QS_QEMU_FLAVOURS", "host,trixie").split(",")
VGAS = ("virtio", "std")
DISPLAYS = ("dbus-p2p", "dbus-bus", "spice", "none")
GUEST_MODES = ("idle", "busy", "heavy", "typing")
GUEST_FLUSHES = ("damage", "full")
QEMU_BINARY = "/usr/bin/qemu-system-x86_64"
# Sockets, screendumps and logs go below this directory; the chroot flavours
# see the host's /tmp at the same path.
RUN_BASE = os.environ.get("QS_RUN_DIR", "/tmp")


# Started and not yet closed; the atexit hook closes them (process group and
# run dir). procs' own net, registered earlier, runs after this one.
_open_instances = set()


@atexit.register
def _close_open_instances():
    for q in list(_open_instances):
        try:
            q.close(check=False)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def sweep_stale_run_dirs():
    """Remove run dirs whose owning process is gone (after a SIGKILL)."""
    removed = []
    base = Path(RUN_BASE)
    for d in base.glob("qs-qemu-*"):
        try:
            owner = int((d / "owner").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if not os.path.exists(f"/proc/{owner}"):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


def free_tcp_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mounts_below(path):
    """Mount points at or below path in this (the host's) mount namespace."""
    path = os.path.realpath(path)
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ")
            if mp == path or mp.startswith(path + "/"):
                found.append(mp)
    return found


def chroot_mounts(paths=None):
    """Mount points below any finished chroot (in the host's namespace)."""
    paths = paths or Paths()
    found = []
    for suite in CHROOT_SUITES:
        found += mounts_below(paths.chroot(suite))
    return found


# The guest kernel's own arguments. cryptomgr.notests: the self-tests of
# the kernel's crypto algorithms (the algorithms stay, only their checks
# at boot go; the guest uses no kernel crypto beyond module signatures)
# were the largest initcall of a boot under TCG (0.6 s of 2.6 s with
# initcall_debug); without them a boot to READY takes 2.53 s of CPU, not
# 2.86 (medians of 6 boots each, alternated, qemu 7.2, 2026-12-07).
KERNEL_ARGS = "console=ttyS0 quiet cryptomgr.notests"


class Guest:
    """The test guest: a PVH kernel and an initrd from tests/guest/build-guest."""

    def __init__(self, kernel, initrd):
        self.kernel = Path(kernel)
        self.initrd = Path(initrd)

    @classmethod
    def build(cls, paths=None):
        found = (paths or Paths()).require_guest()
        return cls(found["KERNEL"], found["INITRD"])

    def cmdline(self, mode="idle", flush="damage", extra=""):
        if mode not in GUEST_MODES:
            raise ValueError(f"guest mode {mode!r} not in {GUEST_MODES}")
        if flush not in GUEST_FLUSHES:
            raise ValueError(f"guest flush {flush!r} not in {GUEST_FLUSHES}")
        line = f"{KERNEL_ARGS} keydraw.mode={mode} keydraw.flush={flush}"
        return f"{line} {extra}".strip()


def parse_fields(text):
    """'READY dev=x w=1280 keybox=1,2,3,4' -> {'dev': 'x', 'w': '1280', ...}."""
    return dict(re.findall(r"(\w+)=(\S+)", text))


class Qemu:
    """A qemu process with QMP and a captured serial console.

    Use as a context manager; the process (group) is gone after the with
    block, also when the block raises. See tests/integration/README.md."""

    def __init__(self, flavour="host", guest=None, vga="virtio", display="dbus-p2p",
                 dbus_address=None, spice=None, spice_opts="", mode="idle",
                 flush="damage", cmdline_extra="", extra_args=(), memory="256M",
                 paused=False, name=None, paths=None, binds=(), vdagent=False,
                 serial_input=None, audiodev=None, kind="qemu"):
        if flavour not in FLAVOURS:
            raise ValueError(f"flavour {flavour!r} not in {FLAVOURS}")
        if vga not in VGAS:
            raise ValueError(f"vga {vga!r} not in {VGAS}")
        if display not in DISPLAYS:
            raise ValueError(f"display {display!r} not in {DISPLAYS}")
        if display == "dbus-bus" and not dbus_address:
            raise ValueError("display 'dbus-bus' needs dbus_address")
        if display == "spice" and spice is None:
            spice = True
        if audiodev is not None and not display.startswith("dbus"):
            raise ValueError("audiodev needs a dbus display")
        self.paths = paths or Paths()
        self.flavour = flavour
        self.guest = guest
        self.vga = vga
        self.display = display
        self.dbus_address = dbus_address
        self.spice_port = free_tcp_port() if spice is True else spice
        self.spice_opts = spice_opts
        self.mode = mode
        self.flush = flush
        self.cmdline_extra = cmdline_extra
        self.extra_args = [str(a) for a in extra_args]
        self.memory = memory
        self.paused = paused
        self.name = name or f"qs-test-{os.getpid()}"
        self.binds = [str(b) for b in binds]
        # vdagent: qemu's own agent chardev on the guest's com.redhat.spice.0
        # port, and the guest's agent (keydraw.agent=1), which takes its
        # commands from the serial port (serial_write).
        self.vdagent = vdagent
        self.serial_input = vdagent if serial_input is None else serial_input
        # audiodev: "ID[,OPTIONS]" of a dbus audiodev (e.g. "snd0" or
        # "snd0,out.frequency=48000"), the PC speaker's output; qemu exports
        # it on D-Bus only when the -display dbus names it.
        self.audiodev = audiodev
        # The harness kind its processes carry (procs.spawn): a test file's
        # shared guest (harness/shared_guest.py) is not a stray of one test.
        self.kind = kind
        self.chroot = None if flavour == "host" else self.paths.require_chroot(flavour)
        self.proc = None
        self.qmp = None
        self.run_dir = None
        self.returncode = None
        self.ready = None
        self._serial = []          # [(monotonic time, line)]
        self._serial_cond = threading.Condition()
        self._reader = None
        self._stderr = None
        self._fd_counter = 0
        self._closed = False
        self._stderr_at_close = ""

    # -- command line --------------------------------------------------------

    def _qemu_args(self):
        run = Path(self.run_dir)
        args = [QEMU_BINARY, "-accel", "tcg", "-m", self.memory, "-nodefaults",
                "-no-reboot", "-name", self.name, "-vga", self.vga,
                "-serial", "stdio",
                "-qmp", f"unix:{run / 'qmp.sock'},server=on,wait=off"]
        if self.guest is not None:
            extra = self.cmdline_extra + (" keydraw.agent=1" if self.vdagent else "")
            args += ["-kernel", str(self.guest.kernel), "-initrd", str(self.guest.initrd),
                     "-append", self.guest.cmdline(self.mode, self.flush, extra.strip())]
        if self.vdagent:
            # mouse=off: the agent is here for the clipboard; qemu's agent
            # mouse would take pointer events from the input tests' devices.
            args += ["-chardev", "qemu-vdagent,id=qsvdagent,clipboard=on,mouse=off",
                     "-device", "virtio-serial-pci,id=qsvserial",
                     "-device", "virtserialport,bus=qsvserial.0,chardev=qsvdagent,"
                                "name=com.redhat.spice.0"]
        audio_id = self.audiodev.split(",")[0] if self.audiodev is not None else None
        audio = f",audiodev={audio_id}" if audio_id is not None else ""
        if self.audiodev is not None:
            args += ["-audiodev", f"dbus,id={self.audiodev}",
                     "-machine", f"pcspk-audiodev={audio_id}"]
        if self.display == "dbus-p2p":
            args += ["-display", f"dbus,p2p=on{audio}"]
        elif self.display == "dbus-bus":
            # qemu's option syntax escapes a comma by doubling it.
            addr = self.dbus_address.replace(",", ",,")
            args += ["-display", f"dbus,addr={addr}{audio}"]
        else:
            args += ["-display", "none"]
        if self.spice_port is not None:
            opts = f"port={self.spice_port},addr=127.0.0.1,disable-ticketing=on"
            if self.spice_opts:
                opts += "," + self.spice_opts
            args += ["-spice", opts]
        if self.paused:
            args.append("-S")
        return args + self.extra_args

    def argv(self):
        """The full command line (after start() has made the run dir)."""
        qemu = self._qemu_args()
        if self.chroot is None:
            return qemu
        binds = set(self.binds)
        if not self.run_dir.startswith("/tmp/"):
            binds.add(self.run_dir)
        if self.guest is not None:
            binds.add(str(self.guest.kernel.resolve().parent))
            binds.add(str(self.guest.initrd.resolve().parent))
        wrapper = [str(self.paths.chroot_run), str(self.chroot)]
        for b in sorted(binds):
            if not (b == "/tmp" or b.startswith("/tmp/")):
                wrapper += ["--bind", b]
        return wrapper + ["--"] + qemu

    # -- lifecycle -------------------------------------------------------------

    def start(self, timeout=20.0):
        if self.proc is not None:
            raise HarnessError("Qemu already started")
        self.run_dir = tempfile.mkdtemp(prefix="qs-qemu-", dir=RUN_BASE)
        os.chmod(self.run_dir, 0o755)
        _open_instances.add(self)
        with open(os.path.join(self.run_dir, "owner"), "w") as f:
            f.write(f"{os.getpid()}\n")
        self._stderr = open(os.path.join(self.run_dir, "qemu.stderr"), "w+b")
        self.proc = procs.spawn(self.argv(), kind=self.kind, stdout=subprocess.PIPE,
                                stderr=self._stderr,
                                stdin=subprocess.PIPE if self.serial_input
                                else subprocess.DEVNULL)
        self._reader = threading.Thread(target=self._read_serial, daemon=True,
                                        name=f"serial-{self.proc.pid}")
        self._reader.start()
        try:
            self.qmp = Qmp(os.path.join(self.run_dir, "qmp.sock"), timeout=timeout,
                           alive=lambda: self.proc.poll() is None)
        except HarnessError as e:
            self.close(check=False)
            raise QemuError(f"qemu ({self.flavour}) did not start: {e}\n"
                            f"{self._stderr_at_close}")
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except Exception:
            if exc_type is None:
                raise
        return False

    def close(self, check=True):
        """Stop qemu (group SIGTERM, then SIGKILL) and verify nothing is left."""
        if self._closed:
            return
        self._closed = True
        _open_instances.discard(self)
        problems = []
        if self.qmp is not None:
            self.qmp.close()
        if self.proc is not None:
            self.returncode = procs.kill_group(self.proc, grace=3.0)
            if self.proc.poll() is None:
                problems.append(f"qemu pid {self.proc.pid} survived SIGKILL")
            left = procs.group_members(self.proc.pid)
            if left:
                problems.append(f"processes left in qemu's group: {left}")
            if self._reader is not None:
                self._reader.join(timeout=5)
                if self._reader.is_alive():
                    problems.append("serial reader did not finish")
            self.proc.stdout.close()
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass        # qemu gone with bytes unread: nothing to flush
        if self._stderr is not None:
            self._stderr_at_close = self.stderr_tail()
            self._stderr.close()
        if self.chroot is not None:
            mounts = mounts_below(self.chroot)
            if mounts:
                problems.append(f"mounts left below {self.chroot}: {mounts}")
        if self.run_dir and not os.environ.get("QS_KEEP_RUN_DIR"):
            shutil.rmtree(self.run_dir, ignore_errors=True)
        if problems and check:
            raise QemuError("; ".join(problems))

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_kib(self):
        """qemu's resident set size in KiB."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise QemuError(f"no VmRSS for pid {self.pid}")

    def stderr_tail(self, limit=2000):
        if self._closed and self._stderr is not None and self._stderr.closed:
            return self._stderr_at_close
        try:
            with open(os.path.join(self.run_dir, "qemu.stderr"), "rb") as f:
                data = f.read()
        except OSError:
            return ""
        return "qemu stderr: " + data[-limit:].decode(errors="replace")

    # -- serial ----------------------------------------------------------------

    def _read_serial(self):
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            with self._serial_cond:
                self._serial.append((time.monotonic(), line))
                self._serial_cond.notify_all()
        with self._serial_cond:
            self._serial_cond.notify_all()

    @property
    def serial_lines(self):
        with self._serial_cond:
            return [line for _, line in self._serial]

    @property
    def serial_entries(self):
        """[(monotonic time the line arrived, line)]."""
        with self._serial_cond:
            return list(self._serial)

    def serial_mark(self):
        """An index for wait_serial(since=...): only lines after now count."""
        with self._serial_cond:
            return len(self._serial)

    def wait_serial(self, regex, timeout=10.0, since=0):
        """First re.search match of regex in a serial line (index >= since).

        Raises QemuError on timeout or when qemu exits first. The match has
        .line_time (monotonic time the line arrived) and .line_index."""
        pattern = re.compile(regex)
        deadline = time.monotonic() + timeout
        index = since
        with self._serial_cond:
            while True:
                while index < len(self._serial):
                    t, line = self._serial[index]
                    m = pattern.search(line)
                    if m:
                        match = _SerialMatch(m, t, index)
                        return match
                    index += 1
                if not self.alive() and not self._reader.is_alive():
                    raise QemuError(f"qemu exited ({self.proc.returncode}) while waiting "
                                    f"for {regex!r}; serial: {self._tail()}\n"
                                    f"{self.stderr_tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise QemuError(f"no serial line matching {regex!r} in {timeout}s; "
                                    f"serial: {self._tail()}\n{self.stderr_tail()}")
                self._serial_cond.wait(min(left, 0.2))

    def _tail(self, n=15):
        return " | ".join(line for _, line in self._serial[-n:])

    def serial_write(self, line):
        """Send one line (str, UTF-8; a newline is added) to the guest's
        serial port (needs serial_input=True or vdagent=True)."""
        if not self.serial_input:
            raise HarnessError("serial_write needs Qemu(serial_input=True)")
        if "\n" in line or "\r" in line:
            raise ValueError("serial_write sends one line")
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def wait_ready(self, timeout=30.0):
        """Wait for the guest's READY line; returns its fields as a dict."""
        m = self.wait_serial(r"^READY\b.*$", timeout=timeout)
        self.ready = parse_fields(m.group(0))
        return self.ready

    # -- QMP conveniences ------------------------------------------------------

    def qmp_cmd(self, cmd, **args):
        return self.qmp.command(cmd, **args)

    def __call__(self, cmd, **args):
        return self.qmp.command(cmd, **args)

    def stop(self):
        self.qmp.command("stop")

    def cont(self):
        self.qmp.command("cont")

    def send_key(self, keys, hold_time=None):
        """Press and release keys: 'a', 'ctrl-alt-delete' or ['shift', 'a'] (qcodes)."""
        if isinstance(keys, str):
            keys = keys.split("-")
        args = {"keys": [{"type": "qcode", "data": k} for k in keys]}
        if hold_time is not None:
            args["hold-time"] = int(hold_time)
        self.qmp.command("send-key", **args)

    def screendump(self, timeout=30.0):
        """(width, height, RGB bytes) of the primary console, via a PPM."""
        self._fd_counter += 1
        path = os.path.join(self.run_dir, f"screendump-{self._fd_counter}.ppm")
        self.qmp.command("screendump", filename=path, timeout=timeout)
        try:
            with open(path, "rb") as f:
                data = f.read()
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        return parse_ppm(data)

    def dbus_p2p_client(self):
        """A socket connected to qemu's D-Bus display (add_client @dbus-display).

        The caller owns the returned socket (hand it to the helper with
        pass_fds). qemu 7.2 keeps one main p2p client: a second call closes
        the first client's connection."""
        if self.display != "dbus-p2p":
            raise HarnessError("dbus_p2p_client needs display='dbus-p2p'")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._fd_counter += 1
        fdname = f"qsdbus{self._fd_counter}"
        try:
            self.qmp.getfd(fdname, theirs.fileno())
            self.qmp.command("add_client", protocol="@dbus-display", fdname=fdname)
        except Exception:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours


class _SerialMatch:
    """A re.Match plus when its serial line arrived."""

    def __init__(self, match, line_time, line_index):
        self._m = match
        self.line_time = line_time
        self.line_index = line_index

    def __getattr__(self, name):
        return getattr(self._m, name)

    def __getitem__(self, key):
        return self._m[key]

    @property
    def fields(self):
        return parse_fields(self._m.string)


def parse_ppm(data):
    """(width, height, pixels) of a binary P6 PPM with maxval 255."""
    tokens = []
    pos = 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while pos < len(data) and data[pos:pos + 1] != b"\n":
                pos += 1
            continue
        start = pos
        while pos < len(data) and not data[pos:pos + 1].isspace():
            pos += 1
        if start == pos:
            raise HarnessError("truncated PPM header")
        tokens.append(data[start:pos])
    pos += 1  # the single whitespace byte after maxval
    if tokens[0] != b"P6" or tokens[3] != b"255":
        raise HarnessError(f"unsupported PPM header {tokens!r}")
    width, height = int(tokens[1]), int(tokens[2])
    pixels = data[pos:pos + width * height * 3]
    if len(pixels) != width * height * 3:
        raise HarnessError(f"PPM {width}x{height}: {len(pixels)} bytes of pixels")
    return width, height, pixels
