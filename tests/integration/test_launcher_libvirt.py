# SPDX-License-Identifier: GPL-2.0-or-later
"""qemu-spice-launcher against a real libvirtd (qemu:///system, as root).

Most tests run the launcher with a *probe helper*: a small script put in
[helper] path that reports what the launcher handed it (argv, uid, open
descriptors, the ticket read from its pipe) and then behaves like a helper
(exits when the display socket closes, exits 0 on SIGTERM). That checks the
launcher's contract independently of the real helper; test_launcher_spice.py
runs the real one. The domains boot the test guest under TCG."""

import json
import errno
import ipaddress
import math
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from harness import exits, procs

URI = "qemu:///system"
NS = "https://qemu-spice.org/xmlns/console/1"
PORTS = (47100, 47109)
OPT_IN = f"<metadata><qemu-spice:console xmlns:qemu-spice='{NS}' autostart='yes'/></metadata>"

PROBE = r'''#!/usr/bin/python3
import json, os, select, signal, socket, sys
fds = {}
for fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
ticket = None
if 6 in fds:  # like the helper: read to EOF, then close
    chunks = []
    while (chunk := os.read(6, 4096)):
        chunks.append(chunk)
    os.close(6)
    ticket = b"".join(chunks).decode()
print("PROBE " + json.dumps({"argv": sys.argv, "uid": os.getuid(), "gid": os.getgid(),
      "groups": os.getgroups(), "fds": fds, "ticket": ticket, "pid": os.getpid()}), flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
watch = [3] if 3 in fds else []
# The control socket: a probe has no control interface, so it hangs up on
# every peer at once (the launcher must say so, not wait).
ctl = socket.socket(fileno=7) if 7 in fds else None
if ctl:
    watch.append(7)
while True:
    r, _, _ = select.select(watch, [], [], 1.0)
    if 7 in r:
        ctl.accept()[0].close()
    if 3 in r and not os.read(3, 4096):
        print("PROBE display closed", flush=True)
        sys.exit(1)
'''


def wait_for(pred, timeout, what, step=0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(step)


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False



def other_runs(pid):
    """True for a helper another harness run started itself (its token in
    its environment): tools/check runs the fault tests on the same build
    beside these, and their helpers are not ours to find or kill. Helpers
    the launcher starts get a clean environment, so they have no token."""
    owner = (procs._read_environ(pid) or {}).get("QS_HARNESS_OWNER")
    return owner is not None and owner != procs.OWNER_TOKEN

class LauncherEnv:
    """A private config, run dir, log dir and probe helper in a temp dir."""

    def __init__(self, paths, helper=None, **conf):
        self.launcher = paths.build_dir / "launcher" / "qemu-spice-launcher"
        if not os.access(self.launcher, os.X_OK):
            pytest.fail(f"launcher not built: meson setup {paths.build_dir} && "
                        f"ninja -C {paths.build_dir}")
        self.dir = Path(tempfile.mkdtemp(prefix="qs-launcher-"))
        os.chmod(self.dir, 0o755)  # the helper (nobody) runs the probe from here
        self.run_dir = self.dir / "run"
        self.log_dir = self.dir / "log"
        self.probe = self.dir / "probe.py"
        self.probe.write_text(PROBE)
        os.chmod(self.probe, 0o755)
        self.helper = str(helper or self.probe)
        # How the real helper may end, as the launcher logs it (a negative
        # status is a signal's): 0 unless a test kills it on purpose.
        self.real_helper = helper is not None
        self.helper_ends_allowed = {0}
        self.conf = self.dir / "qemu-spice.conf"
        self.write_conf(**conf)

    def write_conf(self, text=None, **conf):
        if text is None:
            groups = {
                "launcher": {"run-dir": self.run_dir, "restart-backoff-max": 2},
                "listen": {"address": "127.0.0.1", "ports": f"{PORTS[0]}-{PORTS[1]}"},
                "helper": {"path": self.helper, "log-dir": self.log_dir},
            }
            for key, value in conf.items():
                group, k = key.split("__")
                groups.setdefault(group, {})[k.replace("_", "-")] = value
            text = "".join(f"[{g}]\n" + "".join(f"{k}={v}\n" for k, v in kv.items())
                           for g, kv in groups.items())
        self.conf.write_text(text)

    def run(self, *args, timeout=60, check=False, input=None):
        """One launcher command. Its stderr must hold no sanitizer report
        (harness/exits.py); its exit status must be 0 with check=True, and
        otherwise is the caller's to assert."""
        env = dict(os.environ, QS_HARNESS_OWNER=procs.OWNER_TOKEN,
                   QS_HARNESS_KIND="launcher")
        res = subprocess.run([str(self.launcher), "-C", str(self.conf), *map(str, args)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL if input is None else None,
                             input=input, text=True, timeout=timeout, env=env)
        exits.check(f"launcher {' '.join(map(str, args))}", res.returncode, res.stderr,
                    expect=0 if check else res.returncode)
        return res

    def expect_helper_end(self, status):
        """A test that ends the real helper itself (a negative status for a
        signal) says so; any other end fails at cleanup."""
        self.helper_ends_allowed.add(status)

    def heard_helper_ends(self):
        """Every helper end the launcher logged, and every sanitizer report
        in the logs: raises unless all are allowed."""
        if not self.log_dir.is_dir():
            return
        for log in sorted(self.log_dir.iterdir()):
            text = log.read_text(errors="replace")
            ends = []
            for m in re.finditer(r"helper (\d+) (?:exited with status (\d+)|"
                                 r"killed by signal (\d+))", text):
                ends.append(int(m.group(2)) if m.group(2) is not None else -int(m.group(3)))
            for status in ends if self.real_helper else []:
                exits.check(f"a helper the launcher started ({log.name})", status, "",
                            expect=tuple(self.helper_ends_allowed))
            exits.check(f"the launcher's log {log.name}", 0, text)

    def state(self, domain):
        try:
            return json.loads((self.run_dir / f"{domain}.json").read_text())
        except FileNotFoundError:
            return None

    def run_files(self):
        return sorted(p.name for p in self.run_dir.iterdir()) if self.run_dir.exists() else []

    def log(self, domain):
        try:
            return (self.log_dir / f"{domain}.log").read_text()
        except FileNotFoundError:
            return ""

    def probe_reports(self, domain):
        return [json.loads(m) for m in re.findall(r"^PROBE (\{.*\})$", self.log(domain), re.M)]

    def probe_report(self, domain, pid):
        def find():
            for r in self.probe_reports(domain):
                if r["pid"] == pid:
                    return r
            return None
        return wait_for(find, 10, f"the probe report of pid {pid}")

    def helper_pids(self):
        """Processes running our helper (probe or real), found via /proc."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if any(a.decode(errors="replace") == self.helper for a in argv[:2]) \
                    and pid_alive(int(entry)) and not other_runs(entry):
                found.append(int(entry))
        return found

    def cleanup(self):
        for name in self.run_files():
            if name.endswith(".json"):
                self.run("detach", name[:-5], timeout=30)
        for pid in self.helper_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        procs.kill_strays(kind="launcher")
        try:
            self.heard_helper_ends()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def launcher_env(paths):
    env = LauncherEnv(paths)
    yield env
    env.cleanup()


def domain_xml(name, guest, workdir, graphics="<graphics type='dbus' p2p='yes'/>",
               metadata="", devices="", cmdline_extra=""):
    return f"""<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  {metadata}
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{guest.kernel}</kernel>
    <initrd>{guest.initrd}</initrd>
    <cmdline>console=ttyS0 quiet keydraw.mode=idle {cmdline_extra}</cmdline>
  </os>
  <devices>
    <serial type='file'><source path='{workdir}/{name}.serial'/></serial>
    {graphics}
    <video><model type='virtio'/></video>
    {devices}
  </devices>
</domain>
"""


def start_domain(libvirtd, name, guest, workdir, persistent=True, **kw):
    xml = Path(workdir) / f"{name}.xml"
    xml.write_text(domain_xml(name, guest, workdir, **kw))
    if persistent:
        libvirtd.virsh("define", str(xml))
        libvirtd.virsh("start", name)
    else:
        libvirtd.virsh("create", str(xml))
    return name


def metadata(libvirtd, name, config=False):
    res = libvirtd.virsh("metadata", name, NS, *(["--config"] if config else []),
                         check=False)
    return res.stdout.strip() if res.returncode == 0 else None


def fd_table(pid):
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass
    return out


def listening_inodes(port):
    """Socket inodes listening on TCP port (IPv4), from /proc/net/tcp."""
    inodes = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            local, state, inode = cols[1], cols[3], cols[9]
            if state == "0A" and int(local.split(":")[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    return inodes


def check_helper_fds(pid, port, p2p=True):
    fds = fd_table(pid)
    assert fds[0] == "/dev/null"
    assert fds[1].endswith(".log") and fds[2] == fds[1]
    assert fds[4] in listening_inodes(port), (fds, port)
    assert fds[7].startswith("socket:"), fds     # the control socket
    extra = set(fds) - {0, 1, 2, 3, 4, 7}
    assert not extra, f"unexpected descriptors in the helper: {fds}"
    if p2p:
        assert fds[3].startswith("socket:"), fds
    else:
        assert 3 not in fds, fds


def test_attach_p2p_console_and_detach(libvirtd, guest, launcher_env):
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-p2p", guest, env.dir)
    res = env.run("attach", name, "--no-supervise", check=True)
    assert re.match(rf"^{name}: SPICE console on 127\.0\.0\.1 port \d+, helper pid \d+\n$",
                    res.stdout), res.stdout
    st = env.state(name)
    pid, port = st["helper_pid"], st["port"]
    assert st["mode"] == "p2p" and PORTS[0] <= port <= PORTS[1]
    assert (env.run_dir / f"{name}.pid").read_text().strip() == str(pid)
    assert pid_alive(pid) and pid_alive(st["monitor_pid"])

    # Descriptors: display socket (3), listening socket (4), control socket
    # (7), nothing else besides stdio; the ticket came through a pipe (6,
    # read and closed once the probe has reported).
    rep = env.probe_report(name, pid)
    check_helper_fds(pid, port)
    # Started as root: the helper drops to --user itself once it has
    # confined itself (qemu-spice --help-confinement).
    assert rep["uid"] == 0
    assert rep["argv"][1:] == ["--dbus-p2p-fd=3", "--listen-fd=4", "--max-sessions=4",
                               "--when-full=refuse", "--max-fps=30", "--ticket-fd=6",
                               "--control-fd=7", "--user=nobody"]
    assert oct(os.stat(env.run_dir / f"{name}.ctl").st_mode & 0o777) == "0o600"
    assert rep["fds"]["6"].startswith("pipe:")
    password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
    assert rep["ticket"] == f"{password}\nexpiry=never\n"
    assert len(password) == 32
    assert oct(os.stat(env.run_dir / f"{name}.ticket").st_mode & 0o777) == "0o600"

    meta = metadata(libvirtd, name)
    assert meta is not None
    assert f'port="{port}"' in meta and 'host="127.0.0.1"' in meta
    assert f'pid="{pid}"' in meta and password not in meta
    # runtime state is the live XML's only
    assert metadata(libvirtd, name, config=True) is None

    con = json.loads(env.run("console", name, "--format", "json", check=True).stdout)
    assert con["host"] == "127.0.0.1" and con["port"] == port and con["tls_port"] is None
    assert con["password"] == password and con["pid"] == pid and con["uuid"] == st["uuid"]
    uri = env.run("console", name, "--format", "uri", check=True).stdout.strip()
    assert uri == f"spice://127.0.0.1:{port}?password={password.replace('/', '%2F').replace('+', '%2B')}"
    vv = env.run("console", name, "--format", "vv", check=True).stdout
    assert f"port={port}\n" in vv and "type=spice\n" in vv
    kb = env.run("console", name, "--format", "kerbside", check=True).stdout
    assert f"insecure_port: {port}\n" in kb
    assert '    hypervisor_ip: "127.0.0.1"\n' in kb

    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass

    status = env.run("status", name, check=True).stdout
    assert f"helper pid {pid}, port {port}" in status and "running" in status

    res = env.run("detach", name, check=True)
    assert res.stdout == f"{name}: detached\n"
    wait_for(lambda: not pid_alive(pid), 5, "the helper to exit")
    assert env.run_files() == []
    assert metadata(libvirtd, name) is None
    assert metadata(libvirtd, name, config=True) is None
    assert env.helper_pids() == []


def test_attach_bus_mode_runs_as_bus_owner(libvirtd, guest, launcher_env):
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-bus", guest, env.dir,
                        graphics="<graphics type='dbus'/>", persistent=False)
    xml = libvirtd.virsh("dumpxml", name).stdout
    address = re.search(r"<graphics type='dbus' address='([^']+)'", xml).group(1)
    env.run("attach", name, "--no-supervise", check=True)
    st = env.state(name)
    rep = env.probe_report(name, st["helper_pid"])
    sock = os.stat(address.split("=", 1)[1])
    # The helper connects to the bus as the bus's owner (--user), which it
    # becomes itself, so it is started as root.
    assert rep["uid"] == 0
    assert rep["argv"][1:3] == [f"--dbus-address={address}", f"--vm={st['uuid']}"]
    assert rep["argv"][-1] == f"--user={pwd.getpwuid(sock.st_uid).pw_name}"
    assert sock.st_uid == int(subprocess.check_output(["id", "-u", "libvirt-qemu"]))
    check_helper_fds(st["helper_pid"], st["port"], p2p=False)
    env.run("detach", name, check=True)
    assert env.run_files() == [] and env.helper_pids() == []


def test_supervisor_restarts_killed_helper(libvirtd, guest, launcher_env):
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-sup", guest, env.dir)
    env.run("attach", name, "--supervise", check=True)
    st = env.state(name)
    old, port = st["helper_pid"], st["port"]
    os.kill(old, signal.SIGKILL)
    new = wait_for(lambda: (s := env.state(name)) and s["helper_pid"] != old
                   and s["restarts"] == 1 and s, 15, "the restarted helper")
    assert pid_alive(new["helper_pid"]) and new["port"] == port
    env.probe_report(name, new["helper_pid"])  # it has read its ticket
    check_helper_fds(new["helper_pid"], port)
    meta = metadata(libvirtd, name)
    assert f'pid="{new["helper_pid"]}"' in meta and 'restarts="1"' in meta
    assert env.run("status", name).stdout.count("restarts 1") == 1
    assert "killed by signal 9" in env.log(name)
    env.run("detach", name, check=True)
    assert env.run_files() == [] and env.helper_pids() == []


def test_runtime_state_only_in_live_xml(libvirtd, guest, launcher_env):
    """Ports, pid and restarts go to the live definition only: the persistent
    one stays byte for byte as the operator defined it through attach and a
    restart, and a crash (launcher and helper killed, the domain gone) leaves
    no console anywhere: not in the XML of the next start, not in 'console'."""
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-live", guest, env.dir, metadata=OPT_IN)
    inactive = libvirtd.virsh("dumpxml", "--inactive", name).stdout
    assert "autostart='yes'" in inactive or 'autostart="yes"' in inactive

    env.run("attach", name, "--supervise", check=True)
    st = env.state(name)
    assert libvirtd.virsh("dumpxml", "--inactive", name).stdout == inactive
    live = metadata(libvirtd, name)
    assert f'port="{st["port"]}"' in live and f'pid="{st["helper_pid"]}"' in live
    assert 'autostart="yes"' in live
    assert f'port="{st["port"]}"' in libvirtd.virsh("dumpxml", name).stdout

    os.kill(st["helper_pid"], signal.SIGKILL)
    new = wait_for(lambda: (s := env.state(name)) and s["restarts"] == 1 and s, 15,
                   "the restarted helper")
    wait_for(lambda: 'restarts="1"' in (metadata(libvirtd, name) or ""), 10,
             "the restart in the live metadata")
    assert libvirtd.virsh("dumpxml", "--inactive", name).stdout == inactive

    # A crash: nothing of ours gets to clean up, and the domain goes.
    os.kill(new["monitor_pid"], signal.SIGKILL)
    wait_for(lambda: not pid_alive(new["monitor_pid"]), 5, "the monitor to die")
    os.kill(new["helper_pid"], signal.SIGKILL)
    libvirtd.virsh("destroy", name)
    res = env.run("console", name)
    one_line_error(res, "console:", f"the launcher of '{name}' is gone")
    assert env.run("status", name).returncode == 3
    libvirtd.virsh("start", name)
    assert metadata(libvirtd, name) == '<console autostart="yes"/>'
    assert libvirtd.virsh("dumpxml", "--inactive", name).stdout == inactive
    env.run("detach", name, check=True)   # removes the stale files
    assert env.run_files() == []
    assert libvirtd.virsh("dumpxml", "--inactive", name).stdout == inactive


def host_addresses():
    """This host's addresses, from its interfaces (ip -j addr)."""
    out = subprocess.run(["ip", "-j", "addr"], stdout=subprocess.PIPE, check=True,
                         timeout=10, text=True).stdout
    return {a["local"] for i in json.loads(out) for a in i.get("addr_info", [])}


def test_status_starting_and_hook_failure(libvirtd, guest, launcher_env):
    """The hook's launcher records itself before the 'started' hook returns:
    'status' says "starting" (exit 4) until the state is written, then the
    console (exit 0). A hook-started attach that fails leaves its one-line
    error for 'status' (exit 1), since libvirtd drops a hook's output; the
    'stopped' hook clears it. Also: with a wildcard listener the Kerbside
    entry's hypervisor_ip is an address of this host, not its name."""
    env = launcher_env
    name = "qs-test-launch-pend"
    env.write_conf(launcher__wait=30, listen__address="0.0.0.0")
    xml = domain_xml(name, guest, env.dir, metadata=OPT_IN)
    (env.dir / f"{name}.xml").write_text(xml)
    libvirtd.virsh("define", str(env.dir / f"{name}.xml"))

    t0 = time.monotonic()
    env.run("hook", name, "started", "begin", "-", input=xml, check=True)
    assert time.monotonic() - t0 < 5
    res = env.run("status", name)
    assert res.returncode == 4, (res.returncode, res.stdout, res.stderr)
    assert res.stdout.startswith(f"{name}: starting (the libvirt hook's launcher, pid "), res.stdout
    pend = json.loads(env.run("status", name, "--json").stdout)
    assert pend["hook"] == "starting" and pid_alive(pend["launcher_pid"])
    assert env.run("status").stdout.startswith(f"{name}: starting")

    libvirtd.virsh("start", name)
    st = wait_for(lambda: (s := env.state(name)) and s, 30, "the hook's launcher to attach")
    assert st["monitor_pid"] == pend["launcher_pid"]
    assert env.run("status", name).returncode == 0
    assert f"{name}.hook" not in env.run_files()

    kb = env.run("console", name, "--format", "kerbside", check=True).stdout
    ip = re.search(r'^    hypervisor_ip: "([^"]+)"$', kb, re.M).group(1)
    addr = ipaddress.ip_address(ip)      # an address, not a name
    assert not addr.is_loopback and ip in host_addresses(), (ip, kb)
    assert re.search(r"^    # hypervisor_ip: .+$", kb, re.M), kb
    env.run("detach", name, check=True)

    # The domain is not running: the attach gives up after [launcher] wait.
    libvirtd.virsh("destroy", name)
    env.write_conf(launcher__wait=1)
    env.run("hook", name, "started", "begin", "-", input=xml, check=True)
    res = wait_for(lambda: (r := env.run("status", name)).returncode == 1 and r, 15,
                   "the hook's attach to fail")
    one_line_error(res, f"status: {name}: not attached: the libvirt hook's attach failed",
                   f"domain '{name}' is not running")
    assert env.run("status", name, "--json").stdout.count('"hook":"failed"') == 1
    env.run("hook", name, "stopped", "end", "-", input=xml, check=True)
    one_line_error(env.run("status", name), f"domain '{name}' is not attached")
    assert env.run_files() == []


def test_set_ticket_needs_an_answering_helper(libvirtd, guest, launcher_env):
    """set-ticket hands the ticket to the running helper over its control
    socket (test_launcher_spice.py has the real one); a helper that hangs up
    there gets a one-line error, and the ticket in force stays in force."""
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-tkt", guest, env.dir)
    env.run("attach", name, check=True)
    st = env.state(name)
    ticket = env.run_dir / f"{name}.ticket"
    before = ticket.read_text()
    t0 = time.monotonic()
    res = env.run("set-ticket", name, "--expires", "+600")
    assert time.monotonic() - t0 < 5, "a hang-up must not wait for the timeout"
    one_line_error(res, "set-ticket:", f"{name}.ctl")
    assert ticket.read_text() == before
    assert env.state(name)["helper_pid"] == st["helper_pid"]
    assert pid_alive(st["helper_pid"])
    env.run("detach", name, check=True)


def test_destroy_removes_helper_and_state(libvirtd, guest, launcher_env):
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-dst", guest, env.dir)
    env.run("attach", name, "--supervise", check=True)
    pid = env.state(name)["helper_pid"]
    libvirtd.virsh("destroy", name)
    wait_for(lambda: env.run_files() == [], 15, "the state files to go")
    assert not pid_alive(pid) and env.helper_pids() == []
    assert metadata(libvirtd, name, config=True) is None


def test_port_in_use_takes_the_next(libvirtd, guest, launcher_env):
    """Bind and hold: ports held by others (a qemu's SPICE on the wildcard
    address, a service on ours) are skipped, the next free one is taken and
    held by the monitor across a helper restart, so a third party trying it
    meanwhile gets EADDRINUSE."""
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-port", guest, env.dir, persistent=False)
    blockers = []
    for addr, port in (("0.0.0.0", PORTS[0]), ("127.0.0.1", PORTS[0] + 1)):
        b = socket.socket()
        b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        b.bind((addr, port))
        b.listen(1)
        blockers.append(b)
    try:
        env.run("attach", name, "--supervise", check=True)
        st = env.state(name)
        assert st["port"] == PORTS[0] + 2, st
        os.kill(st["helper_pid"], signal.SIGKILL)
        wait_for(lambda: (s := env.state(name)) and s["restarts"] == 1, 15,
                 "the restarted helper")
        # between and after the helpers, the port stayed the monitor's
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError) as e:
                probe.bind(("0.0.0.0", st["port"]))
                probe.listen(1)
            assert e.value.errno == errno.EADDRINUSE
        assert env.state(name)["port"] == PORTS[0] + 2
        env.run("detach", name, check=True)
    finally:
        for b in blockers:
            b.close()


def one_line_error(res, *needles):
    assert res.returncode != 0, res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    assert res.stdout == ""


def assert_nothing_started(env, libvirtd=None, name=None):
    assert env.helper_pids() == []
    assert env.run_files() == []
    if name:
        assert metadata(libvirtd, name) is None


def test_bad_input(libvirtd, guest, launcher_env):
    env = launcher_env
    # unknown domain
    res = env.run("attach", "qs-test-no-such-domain")
    one_line_error(res, "no domain 'qs-test-no-such-domain'")
    assert_nothing_started(env)

    # a domain without a D-Bus display (VNC only)
    vnc = start_domain(libvirtd, "qs-test-launch-vnc", guest, env.dir,
                       graphics="<graphics type='vnc' autoport='yes' listen='127.0.0.1'/>",
                       persistent=False)
    res = env.run("attach", vnc)
    one_line_error(res, f"domain '{vnc}' has no D-Bus display (only vnc graphics)",
                   "<graphics type='dbus' p2p='yes'/>")
    assert_nothing_started(env, libvirtd, vnc)
    libvirtd.virsh("destroy", vnc)

    name = start_domain(libvirtd, "qs-test-launch-bad", guest, env.dir, persistent=False)
    # port range exhausted
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    blocker.bind(("127.0.0.1", PORTS[0]))
    blocker.listen(1)
    try:
        env.write_conf(listen__ports=str(PORTS[0]))
        res = env.run("attach", name)
        one_line_error(res, f"no free port in {PORTS[0]}-{PORTS[0]} on 127.0.0.1")
        assert_nothing_started(env, libvirtd, name)
    finally:
        blocker.close()

    # unreadable TLS directory
    env.write_conf(listen__tls="true", listen__tls_dir=str(env.dir / "no-such-tls"))
    res = env.run("attach", name)
    one_line_error(res, "TLS directory ([listen] tls-dir)", "no-such-tls")
    assert_nothing_started(env, libvirtd, name)

    # malformed config, for every command
    env.write_conf(listen__ports="5900-x")
    for cmd in (["attach", name], ["status"], ["detach", name]):
        res = env.run(*cmd)
        one_line_error(res, str(env.conf), "[listen] ports", "'5900-x'")
    env.write_conf(text="[listen]\nport=5900\n")
    one_line_error(env.run("attach", name), str(env.conf), "[listen] port: unknown key")
    assert_nothing_started(env, libvirtd, name)

    # the helper dies at once: its last words are reported, nothing is left
    env.write_conf(helper__path="/bin/false")
    res = env.run("attach", name)
    one_line_error(res, "the helper exited at once (status 1)")
    assert_nothing_started(env, libvirtd, name)

    # a second attach of an attached domain
    env.write_conf()
    env.run("attach", name, check=True)
    pid = env.state(name)["helper_pid"]
    res = env.run("attach", name)
    one_line_error(res, f"domain '{name}' is already attached (helper pid {pid})")
    assert env.state(name)["helper_pid"] == pid and pid_alive(pid)
    env.run("detach", name, check=True)
    one_line_error(env.run("detach", name), f"domain '{name}' is not attached")
    one_line_error(env.run("reload", name), f"reload: domain '{name}' is not attached")


def make_tls_dir(path):
    """A self-signed CA and a server certificate for 127.0.0.1 (openssl)."""
    path.mkdir(mode=0o700)
    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=path, check=True, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", "ca-key.pem", "-out", "ca-cert.pem", "-subj", "/CN=qs-test-ca")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server-key.pem",
        "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    ssl("x509", "-req", "-in", "server.csr", "-CA", "ca-cert.pem", "-CAkey",
        "ca-key.pem", "-CAcreateserial", "-days", "2", "-out", "server-cert.pem")
    for f in path.iterdir():
        os.chmod(f, 0o600)
    return path


def test_attach_tls_private_copy(libvirtd, guest, launcher_env):
    env = launcher_env
    tls = make_tls_dir(env.dir / "tls")
    env.write_conf(listen__tls="true", listen__tls_dir=str(tls),
                   listen__secure_channels="all", helper__console_page="false")
    name = start_domain(libvirtd, "qs-test-launch-tls", guest, env.dir, persistent=False)
    env.run("attach", name, "--no-supervise", check=True)
    st = env.state(name)
    rep = env.probe_report(name, st["helper_pid"])
    private = env.run_dir / f"{name}.tls"
    assert rep["argv"][1:] == ["--dbus-p2p-fd=3", "--listen-fd=4", "--tls-listen-fd=5",
                               f"--tls-dir={private}", "--secure-channels=all",
                               "--max-sessions=4", "--when-full=refuse", "--max-fps=30",
                               "--no-console-page", "--ticket-fd=6", "--control-fd=7",
                               "--user=nobody"]
    assert st["tls_port"] != st["port"] and st["tls_port"]
    fds = fd_table(st["helper_pid"])
    assert fds[5] in listening_inodes(st["tls_port"])
    # the helper (nobody) can read its copy of the key, not the original
    for f in ("server-cert.pem", "server-key.pem", "ca-cert.pem"):
        s = os.stat(private / f)
        assert (s.st_uid, s.st_mode & 0o777) == (pwd.getpwnam("nobody").pw_uid, 0o600), f
        assert (private / f).read_bytes() == (tls / f).read_bytes()
    meta = metadata(libvirtd, name)
    assert f'tls-port="{st["tls_port"]}"' in meta
    vv = env.run("console", name, "--format", "vv", check=True).stdout
    assert f"tls-port={st['tls_port']}\n" in vv and "ca=-----BEGIN CERTIFICATE-----\\n" in vv
    assert "host-subject=CN=127.0.0.1\n" in vv, vv
    env.run("detach", name, check=True)
    assert env.run_files() == [] and env.helper_pids() == []


def test_foreground_exit_status_for_systemd(libvirtd, guest, launcher_env):
    """qemu-spice@.service runs 'attach --foreground --no-supervise' with
    Restart=on-failure: a failed helper must make the launcher exit non-zero
    (systemd restarts it), a stop request must exit 0; both clean up."""
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-fg", guest, env.dir, persistent=False)
    argv = [env.launcher, "-C", env.conf, "attach", name, "--foreground", "--no-supervise"]
    for how, expect in ((signal.SIGKILL, 1), (signal.SIGTERM, 0)):
        p = procs.spawn(argv, kind="launcher", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True)
        try:
            st = wait_for(lambda: (s := env.state(name)) and pid_alive(s["helper_pid"]) and s,
                          20, "the foreground launcher's helper")
            assert st["monitor_pid"] == p.pid
            assert f'pid="{st["helper_pid"]}"' in metadata(libvirtd, name)
            if how == signal.SIGKILL:
                os.kill(st["helper_pid"], signal.SIGKILL)   # the helper fails
            else:
                p.send_signal(signal.SIGTERM)               # systemctl stop
            out, err = p.communicate(timeout=20)
        finally:
            if p.poll() is None:
                procs.kill_group(p)
            procs.forget(p)
        assert p.returncode == expect, (how, p.returncode, err)
        assert out.startswith(f"{name}: SPICE console on 127.0.0.1 port ")
        # once: standard output carries it, and under systemd both streams
        # go to the same journal
        assert "SPICE console on" not in err, err
        assert env.run_files() == [] and env.helper_pids() == []
        assert metadata(libvirtd, name) is None


def test_status_json(libvirtd, guest, launcher_env):
    env = launcher_env
    name = start_domain(libvirtd, "qs-test-launch-st", guest, env.dir, persistent=False)
    attached_at = time.time()
    env.run("attach", name, check=True)

    def status():
        """One status line, and the real-clock window the launcher read 'now' in."""
        before = time.time()
        lines = env.run("status", "--json", check=True).stdout.splitlines()
        return lines, before, time.time()

    lines, first_start, first_end = status()
    assert len(lines) == 1
    st = json.loads(lines[0])
    assert st["domain"] == name and st["helper_running"] is True
    assert st["launcher_running"] is True and st["clients"] is None
    assert st["port"] == env.state(name)["port"]
    # uptime is whole seconds of the real clock since the helper started,
    # which was after attached_at: floor(now) - floor(start) <= ceil(now - start).
    assert 0 <= st["uptime"] <= math.ceil(first_end - attached_at), (st, first_end - attached_at)
    time.sleep(2.5)
    lines, second_start, second_end = status()
    later = json.loads(lines[0])
    # It grows with the clock: by the time between the two reads of 'now',
    # rounded either way.
    grew = later["uptime"] - st["uptime"]
    assert math.floor(second_start - first_end) <= grew <= math.ceil(second_end - first_start), \
        (st["uptime"], later["uptime"], second_start - first_end, second_end - first_start)
    env.run("detach", name, check=True)
    assert env.run("status").stdout == ""
    res = env.run("status", name)
    assert res.returncode == 1 and "is not attached" in res.stderr
