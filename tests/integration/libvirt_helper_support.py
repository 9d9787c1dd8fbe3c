# SPDX-License-Identifier: GPL-2.0-or-later
"""The patched libvirt of libvirt/patches, run for a test.

tools/make-libvirt builds libvirt 11.3.0 with the series in a copy of the
trixie chroot (cached). A PatchedLibvirt runs that tree's virtlogd and
virtqemud in a mount namespace of their own, over an overlay of the tree
(the cache is never written), with the tree's qemu 10.0 and our helper:
QS_BUILD_DIR is bound in at the same path, so qemu.conf's spice_helper
names the host's build. The network namespace is the host's, so SPICE
clients on the host reach the ports libvirt allocates; virsh, the domains'
files and qemu's screendumps are reached inside."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import procs
from harness.errors import HarnessError, MissingComponent
from harness.qemu import KERNEL_ARGS
from harness.wait import wait_until

URI = "qemu:///system"
# What tools/check's sanitizer runs set: the daemon passes its environment
# on to the helper it starts (qemu gets a cleared one).
SANITIZER_ENV = ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS")
QS_DIR = "/var/lib/qs"


def make_tree(paths):
    """The cached tree of tools/make-libvirt (built on first use)."""
    make = paths.repo / "tools" / "make-libvirt"
    try:
        res = subprocess.run([str(make)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        raise MissingComponent("the patched libvirt (make-libvirt took over an hour)", str(make))
    if res.returncode != 0:
        raise MissingComponent(f"the patched libvirt ({res.stderr.strip()[-600:]})", str(make))
    return Path(res.stdout.strip().splitlines()[-1])


def sanitizer_libs(binary):
    """Host run-time libraries of a sanitizer build (gcc 12's), which the
    trixie tree holds in another version at the same paths: bound over."""
    out = subprocess.run(["ldd", str(binary)], stdout=subprocess.PIPE, text=True).stdout
    return [m.group(1) for m in re.finditer(r"=> (\S*lib(?:asan|ubsan)\.so\S*)", out)]


# Runs in the new mount namespace: the overlay, the host's /dev, /proc, /sys,
# the shared directory (if any) read-write at /run/qs-share, the bound paths
# read-only; says READY, then holds the namespace until its stdin closes.
NAMESPACE_SCRIPT = r'''
tree=$1 dir=$2 share=$3
shift 3
root=$dir/root
mount -t overlay overlay -o "lowerdir=$tree,upperdir=$dir/upper,workdir=$dir/work" "$root"
for d in /dev /proc /sys; do
    mount --rbind "$d" "$root$d"
done
# No KVM for the tree's daemons: an empty file no one may open in place of
# /dev/kvm (see PatchedLibvirt).
if [ -e "$root/dev/kvm" ]; then
    : >"$dir/no-kvm"
    chmod 000 "$dir/no-kvm"
    mount --bind "$dir/no-kvm" "$root/dev/kvm"
fi
if [ -n "$share" ]; then
    mkdir -p "$root/run/qs-share"
    mount --bind "$share" "$root/run/qs-share"
fi
for p in "$@"; do
    if [ -d "$p" ]; then
        mkdir -p "$root$p"
    else
        mkdir -p "$root$(dirname "$p")"
        [ -e "$root$p" ] || : >"$root$p"
    fi
    mount --bind "$p" "$root$p"
    mount -o remount,bind,ro "$root$p"
done
echo READY
exec cat >/dev/null
'''


class PatchedLibvirt:
    """virtlogd and virtqemud of the patched tree; qemu.conf's spice_helper
    names `helper` (None: left unset, QEMU's own SPICE serves).

    The tree's /dev/kvm is a file no one may open. On a machine whose
    /dev/kvm is there (root:kvm 0660 once qemu's package is installed)
    but whose guests run under TCG, virtqemud probed qemu again and again
    (accel=kvm:tcg, then accel=tcg, in a loop seen with strace), and each
    `virsh define` timed out at 60 s: 11 of 11 tests of
    test_libvirt_spice_helper.py failed in a fresh clone, and 2 of 2 run
    alone. Without KVM the probe's answer holds.

    With `share` (a host directory), the tree sees it at /run/qs-share and,
    with `own_socket`, virtqemud listens there: so the daemon of another
    tree sharing the directory reaches this one (qemu+unix with
    socket=/run/qs-share/NAME/virtqemud-sock), as a migration needs."""

    def __init__(self, paths, guest, helper=None, tree=None, share=None, own_socket=None,
                 qemu_conf="", files=None):
        self.paths = paths
        self.qemu_conf = qemu_conf         # added to qemu.conf
        self.files = files or {}           # path in the tree: text, written before start
        self.guest = guest
        self.helper = helper
        self.tree = tree or make_tree(paths)
        self.share = share
        self.sock_dir = f"/run/qs-share/{own_socket}" if own_socket else "/run/libvirt"
        self.uri = URI if not own_socket else \
            f"qemu+unix:///system?socket={self.sock_dir}/virtqemud-sock"
        self.dir = None
        self.holder = None
        self.daemons = {}
        self.reported = set()

    # -- the namespace ---------------------------------------------------------

    def _enter(self):
        return ["nsenter", "-t", str(self.holder.pid), "-m", "chroot", f"{self.dir}/root",
                "env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8",
                "HOME=/root"]

    def run(self, *argv, input=None, timeout=30.0, check=True, text=True):
        """argv inside the tree; CompletedProcess (stdout, stderr captured)."""
        res = subprocess.run(self._enter() + [str(a) for a in argv], input=input,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=timeout, text=text)
        if check and res.returncode != 0:
            err = res.stderr if text else res.stderr.decode(errors="replace")
            raise HarnessError(f"{' '.join(map(str, argv))} in the libvirt tree: "
                               f"exit {res.returncode}: {err.strip()}")
        return res

    def write(self, path, text):
        self.run("sh", "-c", 'mkdir -p "$(dirname "$1")" && cat >"$1"', "sh", path,
                 input=text)

    def read_bytes(self, path):
        return self.run("cat", path, text=False).stdout

    def virsh(self, *args, timeout=60.0, check=True):
        return self.run("virsh", "-c", self.uri, *args, timeout=timeout, check=check)

    # -- start and stop --------------------------------------------------------

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="qs-libvirt-", dir="/tmp")
        for sub in ("upper", "work", "root"):
            os.mkdir(os.path.join(self.dir, sub))
        binds = {str(self.paths.build_dir), str(self.guest.kernel.parent),
                 str(self.guest.initrd.parent), str(self.paths.repo / "tests" / "tools")}
        if self.helper:
            binds.update(sanitizer_libs(self.helper))
        self.holder = procs.spawn(
            ["unshare", "--mount", "--propagation", "private", "sh", "-ec",
             NAMESPACE_SCRIPT, "sh", str(self.tree), self.dir, str(self.share or ""),
             *sorted(binds)],
            kind="libvirt", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        try:
            line = _read_line(self.holder.stdout, 20.0)
            if line != b"READY\n":
                raise HarnessError(f"the libvirt tree's namespace: {line!r}, "
                                   f"{self.holder.stderr.read().decode(errors='replace')}")
            self._configure()
            self._start_daemon("virtlogd", "/run/libvirt/virtlogd-sock")
            self._start_daemon("virtqemud", f"{self.sock_dir}/virtqemud-sock")
            self._probed()
        except BaseException:
            self.stop()
            raise
        return self

    def _probed(self):
        """virtqemud probes qemu's capabilities (two qemu runs) at the
        first call that needs them: 4-12 s here. Paid once per daemon, with
        its own bound, so a test's first call does not pay it within its
        own, and a daemon that cannot probe fails here, by name."""
        self.virsh("version", timeout=300)

    def _configure(self):
        conf = self.read_bytes("/etc/libvirt/qemu.conf").decode()
        if self.helper:
            conf += f'\nspice_helper = "{self.helper}"\n'
        conf += self.qemu_conf
        for path, text in self.files.items():
            self.write(path, text)
            self.run("chmod", "a+r", path)
        self.write("/etc/libvirt/qemu.conf", conf)
        if self.sock_dir != "/run/libvirt":
            daemon_conf = self.read_bytes("/etc/libvirt/virtqemud.conf").decode()
            self.write("/etc/libvirt/virtqemud.conf",
                       daemon_conf + f'\nunix_sock_dir = "{self.sock_dir}"\n')
        # libvirt relabels (chowns) a domain's kernel and initrd: copies of
        # the guest's, not the cache's files.
        self.run("mkdir", "-p", QS_DIR, self.sock_dir)
        for f in (self.guest.kernel, self.guest.initrd):
            self.run("cp", f, f"{QS_DIR}/{f.name}")

    def _start_daemon(self, name, socket_path):
        env = [f"{k}={os.environ[k]}" for k in SANITIZER_ENV if k in os.environ]
        argv = self._enter() + env + [f"/usr/sbin/{name}"]
        self.daemons[name] = procs.spawn(argv, kind="libvirt", stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while self.run("test", "-S", socket_path, check=False).returncode != 0:
            if self.daemons[name].poll() is not None:
                raise HarnessError(f"{name} exited {self.daemons[name].returncode}: "
                                   f"{self.daemons[name].stderr.read().decode(errors='replace')}")
            if time.monotonic() > deadline:
                raise HarnessError(f"{name}: no {socket_path} in 30s")
            time.sleep(0.1)

    def restart_virtqemud(self):
        """Stop virtqemud (its domains keep running) and start it again."""
        proc = self.daemons.pop("virtqemud")
        procs.kill_group(proc)
        self._start_daemon("virtqemud", f"{self.sock_dir}/virtqemud-sock")

    def pid_of(self, pidfile):
        """The pid in a pidfile of the tree, or None."""
        res = self.run("cat", pidfile, check=False)
        return int(res.stdout) if res.returncode == 0 and res.stdout.strip() else None

    def sanitizer_reports(self):
        """[(log, excerpt)] of the helpers' logs (DOMAIN-qemu-spice.log, in the
        overlay's upper directory) that hold a sanitizer report not returned
        before: each report fails one test, not every later one too."""
        logs = Path(self.dir, "upper", "var", "log", "libvirt", "qemu")
        found = []
        for log in sorted(logs.glob("*-qemu-spice.log")) if logs.is_dir() else []:
            text = log.read_text(errors="replace")
            for m in re.finditer(r"ERROR: (?:Address|Leak)Sanitizer|runtime error:", text):
                if (log.name, m.start()) in self.reported:
                    continue
                self.reported.add((log.name, m.start()))
                found.append((log.name, text[max(0, m.start() - 200):m.start() + 1500]))
        return found

    def stop(self):
        problems = []
        if self.daemons.get("virtqemud") and self.daemons["virtqemud"].poll() is None:
            try:
                for name in self.virsh("list", "--name", timeout=20).stdout.split():
                    self.virsh("destroy", name, check=False, timeout=30)
            except (HarnessError, subprocess.TimeoutExpired) as e:
                problems.append(f"destroying the domains: {e}")
        for name in ("virtqemud", "virtlogd"):
            proc = self.daemons.pop(name, None)
            if proc:
                procs.kill_group(proc)
        if self.dir:
            # Whatever still runs in the tree (a qemu or helper the daemon
            # could not stop) would hold the namespace: it goes too.
            for pid in self._processes_in_tree():
                problems.append(f"pid {pid} still ran in the tree")
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.holder:
            try:
                self.holder.stdin.close()
            except OSError:
                pass
            procs.kill_group(self.holder)
            self.holder = None
        if self.dir:
            problems += [f"sanitizer report in {log}:\n{excerpt}"
                         for log, excerpt in self.sanitizer_reports()]
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if problems:
            raise HarnessError("; ".join(problems))

    def _processes_in_tree(self):
        root = f"{self.dir}/root"
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.readlink(f"/proc/{entry}/root") == root:
                    found.append(int(entry))
            except OSError:
                continue
        return found

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _read_line(stream, timeout):
    """One line of a pipe, bounded."""
    import select
    fd = stream.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise HarnessError(f"no line in {timeout}s (got {buf!r})")
        chunk = os.read(fd, 1)
        if not chunk:
            break
        buf += chunk
    return buf


def domain_xml(lv, name, graphics, devices="", machine="pc", cmdline=""):
    """The test guest as a domain of `lv`, `cmdline` added to its kernel's;
    its serial log is QS_DIR/NAME.serial."""
    return f"""<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='{machine}'>hvm</type>
    <kernel>{QS_DIR}/{lv.guest.kernel.name}</kernel>
    <initrd>{QS_DIR}/{lv.guest.initrd.name}</initrd>
    <cmdline>{KERNEL_ARGS} keydraw.mode=idle {cmdline}</cmdline>
  </os>
  <devices>
    <serial type='file'><source path='{QS_DIR}/{name}.serial'/></serial>
    {graphics}
    <video><model type='virtio'/></video>
    {devices}
  </devices>
</domain>
"""


class DomainSerial:
    """What a domain's guest wrote on its serial port (the file QS_DIR/NAME.serial
    of domain_xml), line by line, for waits on what the guest reports."""

    def __init__(self, lv, name):
        self.lv = lv
        self.path = f"{QS_DIR}/{name}.serial"

    def lines(self):
        """The whole lines so far (a line still being written is left out)."""
        text = self.lv.read_bytes(self.path).decode(errors="replace")
        return text[:text.rfind("\n") + 1].replace("\r", "").splitlines()

    def mark(self):
        """An index for wait(since=...): only lines after now count."""
        return len(self.lines())

    def wait(self, regex, timeout, since=0):
        """The first re.search match of regex in a line at index >= since."""
        pattern = re.compile(regex)
        seen = []

        def match():
            seen[:] = self.lines()
            return next(filter(None, map(pattern.search, seen[since:])), None)
        return wait_until(match, timeout, 0.2,
                          lambda _: f"no line matching {regex!r} on {self.path} in "
                                    f"{timeout}s; the last lines: {seen[-10:]}")
