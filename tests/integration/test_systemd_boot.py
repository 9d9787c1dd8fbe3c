# SPDX-License-Identifier: GPL-2.0-or-later
"""systemd owns the console: a Debian trixie tree booted with
'systemd-nspawn -b' (systemd as its PID 1, libvirtd, qemu; this host's PID 1
is not systemd), our unit and hook installed in it from this build, and
then 'virsh start' of an opted-in domain starts qemu-spice@UUID.service
(the domain's UUID as the instance, no escaping): the launcher and the
helper in the unit's own cgroup, not libvirtd's, every journal line of the
unit (the launcher's and the helper's) naming the domain's UUID; our test
client gets qemu's exact picture from the helper, and
remote-viewer, opened on the console 'qemu-spice-launcher console --format
vv' reports, shows it, every pixel (viewer_support.py); 'virsh destroy'
stops the unit; a broken configuration leaves the domain running, says why
in the journal and in 'status'; the console's runtime state is in the live
definition only, after the attach and after a restart by the unit (the
helper killed); a launcher that keeps failing is tried 5 times
(StartLimitBurst) and the unit left 'failed'; 'systemctl reload' (the
unit's ExecReload) hands the running helper the keys of a new master key id.

The tree (tests/integration/harness/make-systemd-chroot) is cached; each
boot writes to a tmpfs overlay (--volatile=overlay), so the cache is never
changed. Our binaries are bound in read-only at their build paths."""

import io
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from PIL import Image

from harness import Xvfb
from harness.errors import MissingComponent
from harness.wait import wait_until as poll_until
from serve_support import require_tool
from test_launcher_libvirt import NS, OPT_IN, domain_xml
from viewer_support import remote_viewer_sight

NAME = "qs-sd-vm"
WORKDIR = "/var/lib/qs-test"
BOOT_WAIT_S = 120
ATTACH_WAIT_S = 90
SANITIZER_ENV = ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS")        # the launcher waits for libvirt's start job; TCG


class Container:
    """One systemd-nspawn boot of ROOT; commands run in it with nsenter."""

    def __init__(self, root, binds, name):
        self.root, self.binds, self.name = root, binds, name
        self.proc = None
        self.leader = None

    def start(self):
        cmd = ["systemd-nspawn", "-D", str(self.root), "--boot", "--quiet",
               "--register=no", "--keep-unit", f"--machine={self.name}",
               "--private-network", "--volatile=overlay", "--console=pipe"]
        cmd += [f"--bind-ro={b}:{in_box(b)}" for b in self.binds]
        self.log = open(f"/tmp/{self.name}.console", "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + BOOT_WAIT_S
        while self.leader is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"systemd-nspawn did not boot: "
                                     f"{Path(self.log.name).read_text()[-2000:]}")
            try:
                kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
            except FileNotFoundError:
                kids = ""
            for pid in kids.split():
                if Path(f"/proc/{pid}/comm").read_text().strip() == "systemd":
                    self.leader = int(pid)
            time.sleep(0.2)
        # systemctl talks to systemd through its private socket, which it
        # makes a moment after it runs: until then 'is-system-running'
        # fails at once ("Failed to connect to system scope bus"), and is
        # asked again.
        while True:
            left = max(1, int(deadline - time.monotonic()))
            res = self.run("systemctl", "is-system-running", "--wait", check=False,
                           timeout=left)
            if res.stdout.strip() or "Failed to connect" not in res.stderr:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"systemd in the container never answered: {res.stderr}"
                                     f"{Path(self.log.name).read_text()[-2000:]}")
            time.sleep(0.2)
        # degraded: a unit of the tree that has no use here (no network in
        # a private netns) failed; ours are checked one by one below.
        assert res.stdout.strip() in ("running", "degraded"), (res.stdout, res.stderr)

    def run(self, *cmd, check=True, timeout=60, input=None):
        res = subprocess.run(["nsenter", "-t", str(self.leader), "-a", "--", *map(str, cmd)],
                             input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=None if input is not None else subprocess.DEVNULL,
                             text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"in the container: {' '.join(map(str, cmd))} exited "
                                 f"{res.returncode}: {res.stdout.strip()} {res.stderr.strip()}")
        return res

    def path(self, p):
        return Path(f"/proc/{self.leader}/root") / str(p).lstrip("/")

    def write(self, p, text, mode=0o644):
        dst = self.path(p)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text)
        os.chmod(dst, mode)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        # The tree is a throw-away overlay: no clean shutdown is needed, and
        # one would wait on the domains. 'poweroff -ff' is reboot(2) in the
        # container's PID namespace, which ends every process in it.
        if self.leader is not None:
            subprocess.run(["nsenter", "-t", str(self.leader), "-a", "--", "systemctl",
                            "poweroff", "-ff"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.log.close()


def wait_until(what, fn, timeout):
    return poll_until(fn, timeout, 0.5, lambda _: f"timed out after {timeout} s waiting for {what}")


def sanitizer_libs(binary):
    """Host run-time libraries of a sanitizer build (gcc 12's), which the
    trixie tree does not hold at these paths: bound in read-only."""
    out = subprocess.run(["ldd", str(binary)], stdout=subprocess.PIPE, text=True).stdout
    return [m.group(1) for m in re.finditer(r"=> (\S*lib(?:asan|ubsan)\.so\S*)", out)]


# The unit runs with PrivateTmp=yes, so what it runs must not sit under
# /tmp in the container: a checkout or build under the host's /tmp (a
# fresh clone often is) is bound in below this directory instead.
TMP_BINDS = "/opt/qs-host-tmp"


def in_box(path):
    """Where a host path bound into the container is seen from inside."""
    path = str(path)
    return TMP_BINDS + path if path == "/tmp" or path.startswith("/tmp/") else path


def default_config_path(launcher):
    out = subprocess.run([str(launcher), "--help"], stdout=subprocess.PIPE, text=True).stdout
    return re.search(r"Configuration file \(default (\S+)\)", out).group(1)


@pytest.fixture(scope="module")
def booted(paths, guest):
    for tool in ("systemd-nspawn", "nsenter"):
        if not shutil.which(tool):
            raise MissingComponent(tool, "apt-get install systemd-container util-linux")
    make = paths.repo / "tests" / "integration" / "harness" / "make-systemd-chroot"
    res = subprocess.run([str(make)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=1800)
    if res.returncode != 0:
        raise MissingComponent(f"the systemd-boot tree ({res.stderr.strip()[-500:]})", str(make))
    root = Path(res.stdout.strip())
    launcher = paths.build_dir / "launcher" / "qemu-spice-launcher"
    helper = paths.require_helper()
    if not os.access(launcher, os.X_OK):
        raise MissingComponent(f"launcher {launcher}", f"ninja -C {paths.build_dir}")
    binds = [paths.build_dir, guest.kernel.parent, guest.initrd.parent,
             paths.repo / "tests" / "tools"]
    binds += sanitizer_libs(helper) + sanitizer_libs(launcher)
    box = Container(root, sorted(set(map(str, binds))), f"qs-sd-{os.getpid()}")
    try:
        box.start()
        install(box, paths, launcher, helper)
        yield box
    finally:
        box.stop()


def install(box, paths, launcher, helper):
    """What a package would install, from this build's tree."""
    bindir = in_box(launcher.parent)
    conf = default_config_path(launcher)
    sysconfdir = str(Path(conf).parent.parent)
    unit = (paths.repo / "launcher" / "qemu-spice@.service").read_text()
    box.write("/etc/systemd/system/qemu-spice@.service", unit.replace("@BINDIR@", bindir))
    hook = (paths.repo / "libvirt-hooks" / "qemu-spice").read_text()
    box.write("/etc/libvirt/hooks/qemu.d/qemu-spice",
              hook.replace("@BINDIR@", bindir).replace("@SYSCONFDIR@", sysconfdir), 0o755)
    box.write(conf, good_config(helper))
    box.path(WORKDIR).mkdir(parents=True, exist_ok=True)
    os.chmod(box.path(WORKDIR), 0o755)
    # A sanitizer build runs in the unit with this run's sanitizer options
    # (the leak suppressions are in the bound-in tests/tools): a report
    # fails the launcher, and so the unit, which the test sees.
    env = "".join(f'Environment="{k}={sanitizer_env_in_box(os.environ[k])}"\n'
                  for k in SANITIZER_ENV if k in os.environ)
    if env:
        box.write("/etc/systemd/system/qemu-spice@.service.d/sanitizer.conf",
                  "[Service]\n" + env)
    # This host's cgroup v1 controllers are read-only in the container
    # (only systemd's own name=systemd hierarchy is writable), so libvirt
    # must not ask for controllers; systemd still gives units their cgroups.
    qemu_conf = box.path("/etc/libvirt/qemu.conf")
    qemu_conf.write_text(qemu_conf.read_text() + "\ncgroup_controllers = [ ]\n")
    box.run("systemctl", "daemon-reload")
    # libvirtd reads its hook directory only when it starts.
    box.run("systemctl", "restart", "libvirtd.service", timeout=120)


def sanitizer_env_in_box(value):
    """ASAN/LSAN/UBSAN options with their file paths (suppressions=...) as
    the unit sees them."""
    return ":".join(f"{k}={in_box(v)}" if v.startswith("/") else f"{k}={v}" if v else k
                    for k, _, v in (opt.partition("=") for opt in value.split(":")))


def good_config(helper):
    return f"[helper]\npath={in_box(helper)}\n[listen]\naddress=127.0.0.1\n"


def unit_prop_of(box, unit, prop):
    return box.run("systemctl", "show", "-P", prop, unit).stdout.strip()


def unit_of(box, name):
    """The console's unit of a defined domain: its UUID is the instance."""
    uuid = box.run("virsh", "domuuid", name).stdout.strip()
    assert re.fullmatch(r"[0-9a-f-]{36}", uuid), uuid
    return f"qemu-spice@{uuid}.service", uuid


def cgroup_of(box, pid):
    lines = box.run("cat", f"/proc/{pid}/cgroup").stdout.splitlines()
    return next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))


def journal(box, unit, since_cursor=None):
    args = ["journalctl", "-u", unit, "-o", "json", "--no-pager"]
    if since_cursor:
        args += ["--after-cursor", since_cursor]
    return [json.loads(line) for line in box.run(*args).stdout.splitlines() if line]


def read(path):
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def client_run(box, paths, state, *args, tmp_path):
    """qs-test-client in the container's network namespace; it reads a bare
    password file (ours has an expiry line)."""
    ticket = tmp_path / "ticket"
    ticket.write_text(box.path(f"/run/qemu-spice/{NAME}.ticket").read_text().splitlines()[0]
                      + "\n")
    return subprocess.run(["nsenter", "-t", str(box.leader), "-n", "--",
                           str(paths.require_test_client()), f"--port={state['port']}",
                           f"--ticket-file={ticket}", "--timeout=30", *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)


@pytest.mark.timeout(360)
def test_virsh_start_runs_the_console_in_its_unit(booted, guest, paths, tmp_path):
    box = booted
    viewer = require_tool("remote-viewer", "virt-viewer")
    require_tool("import", "imagemagick")
    xml = domain_xml(NAME, guest, WORKDIR, metadata=OPT_IN)
    box.write(f"{WORKDIR}/{NAME}.xml", xml)
    box.run("virsh", "-q", "define", f"{WORKDIR}/{NAME}.xml")
    unit, uuid = unit_of(box, NAME)

    def unit_prop(prop):
        return unit_prop_of(box, unit, prop)
    inactive = box.run("virsh", "dumpxml", "--inactive", NAME).stdout
    box.run("virsh", "-q", "start", NAME, timeout=120)
    launcher = in_box(paths.build_dir / "launcher" / "qemu-spice-launcher")

    # From the moment virsh returns: starting (4) or attached (0).
    res = box.run(launcher, "status", NAME, check=False)
    assert res.returncode in (0, 4), (res.returncode, res.stdout, res.stderr)
    wait_until(f"{unit} active", lambda: unit_prop("ActiveState") == "active", 30)
    state = wait_until("the console's state file",
                       lambda: box.path(f"/run/qemu-spice/{NAME}.json").exists() and
                       json.loads(box.path(f"/run/qemu-spice/{NAME}.json").read_text()),
                       ATTACH_WAIT_S)
    assert box.run(launcher, "status", NAME).returncode == 0

    # The launcher is the unit's main process; it and the helper are in the
    # unit's cgroup, libvirtd in its own.
    main_pid = int(unit_prop("MainPID"))
    assert main_pid == state["monitor_pid"], (main_pid, state)
    unit_cg = unit_prop("ControlGroup")
    assert unit_cg.endswith("/" + unit), unit_cg
    assert cgroup_of(box, state["monitor_pid"]) == unit_cg
    assert cgroup_of(box, state["helper_pid"]) == unit_cg
    libvirtd_pid = int(box.run("systemctl", "show", "-P", "MainPID", "libvirtd.service")
                       .stdout.strip())
    assert cgroup_of(box, libvirtd_pid).endswith("/libvirtd.service")
    status = box.run("systemctl", "status", "--no-pager", "-l", unit, check=False).stdout
    assert f"qemu-spice SPICE console for libvirt domain {uuid}" in status, status
    assert str(state["helper_pid"]) in status, status

    # The helper serves qemu's exact picture to a SPICE client (in the
    # container's network namespace), the domain paused so both see one frame.
    wait_until("the guest's READY", lambda: "READY" in read(box.path(f"{WORKDIR}/{NAME}.serial")),
               60)
    box.run("virsh", "-q", "suspend", NAME)
    box.run("virsh", "-q", "screenshot", NAME, f"{WORKDIR}/ref.img")
    shot = tmp_path / "shot.ppm"
    res = client_run(box, paths, state, "--settle=500", "screenshot", shot, tmp_path=tmp_path)
    assert res.returncode == 0, (res.returncode, res.stderr)
    # (PIL resolves a path with realpath, which would leave the container:
    # the bytes are read here.)
    ref_bytes = io.BytesIO(box.path(f"{WORKDIR}/ref.img").read_bytes())
    with Image.open(ref_bytes) as ref, Image.open(shot) as got:
        ref = ref.convert("RGB")
        assert ref.tobytes() == got.convert("RGB").tobytes()
    # remote-viewer on the console the launcher reports (its .vv file: the
    # address, port and ticket), run in the container's network namespace
    # where the console listens (on the container's loopback; its X client
    # side reaches the host's Xvfb through the socket file in /tmp, the
    # mount namespace being the host's): the guest's picture appears in its
    # window unscaled, every pixel equal to qemu's screendump (what the grab
    # of the X screen can and cannot show: viewer_support.py).
    vv = tmp_path / "console.vv"
    vv.write_text(box.run(launcher, "console", NAME, "--format", "vv").stdout)
    vv.chmod(0o600)
    assert f"port={state['port']}\n" in vv.read_text(), vv.read_text()
    with Xvfb(screen="1600x1000x24") as x:
        best = remote_viewer_sight(viewer, vv, x, ref.width, ref.height, ref.tobytes(),
                                   tmp_path, prefix=("nsenter", "-t", box.leader, "-n", "--"),
                                   want=1.0)
    assert best and best[2] == 1.0, (
        f"the guest's picture never appeared whole in remote-viewer ({best}): "
        f"{read(tmp_path / 'remote-viewer.log')[-2000:]}")
    box.run("virsh", "-q", "resume", NAME)

    # Every journal line of the unit that is not systemd's own names the
    # domain's UUID (SyslogIdentifier), the launcher's console line among them.
    entries = journal(box, unit)
    ours = [e for e in entries if e.get("_PID") != "1"]
    assert ours, entries
    idents = {e.get("SYSLOG_IDENTIFIER") for e in ours}
    assert idents == {f"qemu-spice/{uuid}"}, idents
    consoles = [e for e in ours if "SPICE console on" in str(e.get("MESSAGE"))]
    assert len(consoles) == 1, consoles     # once, not on stdout and stderr
    # the helper's own lines are there too (its output is the unit's stream),
    # and the unit's hardening left its confinement whole
    helper_lines = [str(e.get("MESSAGE")) for e in ours if e.get("_PID") == str(state["helper_pid"])]
    main_helper = state["helper_pid"]
    assert any("qemu-spice: attached to VM" in m for m in helper_lines), helper_lines
    confined = [m for m in helper_lines if "confinement: active" in m]
    assert confined and all(step in confined[0] for step in
                            ("nnp", "user=nobody", "caps", "fs", "netns", "seccomp")), confined
    # Runtime state in the live definition only: the console's port and
    # helper pid are in the live metadata, the persistent definition is as
    # defined, after the attach and after a restart by the unit (the helper
    # killed: the launcher exits with it, systemd starts it again, and it
    # publishes the new console).
    assert box.run("virsh", "dumpxml", "--inactive", NAME).stdout == inactive
    live = box.run("virsh", "metadata", NAME, NS).stdout
    assert f'port="{state["port"]}"' in live and f'pid="{state["helper_pid"]}"' in live, live
    # (the shell's kill: the tree has no procps)
    box.run("sh", "-c", f"kill -KILL {state['helper_pid']}")
    wait_until(f"{unit} restarted", lambda: unit_prop("NRestarts") == "1" and
               unit_prop("ActiveState") == "active", 60)
    state = wait_until("the restarted console's state",
                       lambda: (s := read(box.path(f"/run/qemu-spice/{NAME}.json"))) and
                       (st := json.loads(s))["helper_pid"] != main_helper and st, ATTACH_WAIT_S)
    assert box.path(f"/proc/{state['helper_pid']}").exists(), state
    wait_until("the restarted console in the live metadata",
               lambda: f'pid="{state["helper_pid"]}"' in
               box.run("virsh", "metadata", NAME, NS).stdout, 30)
    assert box.run("virsh", "dumpxml", "--inactive", NAME).stdout == inactive
    cursor = journal(box, unit)[-1]["__CURSOR"]

    # virsh destroy: the hook stops the unit, the console goes.
    box.run("virsh", "-q", "destroy", NAME, timeout=60)
    wait_until(f"{unit} inactive", lambda: unit_prop("ActiveState") == "inactive", 30)
    wait_until("the state file to go",
               lambda: not box.path(f"/run/qemu-spice/{NAME}.json").exists(), 15)
    assert not box.path(f"/proc/{state['helper_pid']}").exists()
    assert not box.path(f"/proc/{state['monitor_pid']}").exists()
    stops = [e for e in journal(box, unit, cursor) if e.get("_PID") != "1"]
    assert all(e.get("SYSLOG_IDENTIFIER") == f"qemu-spice/{uuid}" for e in stops), stops


@pytest.mark.timeout(180)
def test_broken_config_is_visible_and_the_domain_still_starts(booted, guest, paths):
    box = booted
    launcher = paths.build_dir / "launcher" / "qemu-spice-launcher"
    conf = default_config_path(launcher)
    name = "qs-sd-broken"
    box.write(f"{WORKDIR}/{name}.xml", domain_xml(name, guest, WORKDIR, metadata=OPT_IN))
    box.write(conf, "[helper]\nno-such-key=1\n")
    try:
        box.run("virsh", "-q", "create", f"{WORKDIR}/{name}.xml", timeout=120)
        state = box.run("virsh", "domstate", name).stdout.strip()
        assert state == "running", state
        # the journal (syslog from the hook, which libvirtd ran)
        # (the identifier docs/operations.md tells to look for)
        lines = [line for line in box.run("journalctl", "--no-pager", "-o", "cat", "-t",
                                          f"qemu-spice-launcher[{name}]")
                 .stdout.splitlines() if f"hook: {name}: no console:" in line]
        assert lines and "no-such-key" in lines[-1], lines
        # 'status' (with a working configuration again) says why
        box.write(conf, good_config(helper=paths.helper))
        res = box.run(in_box(launcher), "status", name, check=False)
        assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
        out = res.stdout + res.stderr
        assert f"{name}: not attached" in out and "no-such-key" in out, out
        assert box.run("systemctl", "is-active", unit_of(box, name)[0],
                       check=False).stdout.strip() == "inactive"
    finally:
        box.write(conf, good_config(helper=paths.helper))
        box.run("virsh", "-q", "destroy", name, check=False, timeout=60)


def unit_journal(box, unit):
    return [json.loads(line) for line in
            box.run("journalctl", "-u", unit, "-o", "json", "--no-pager").stdout.splitlines()
            if line]


def limit_hit(box, unit):
    """The unit's journal once systemd refused a restart for its start limit
    (systemd 257 leaves Result at the last try's 'exit-code' then, so the
    refusal is read from its own line); None before."""
    if unit_prop_of(box, unit, "ActiveState") != "failed":
        return None
    entries = unit_journal(box, unit)
    if any(e.get("_PID") == "1" and "Start request repeated too quickly" in str(e.get("MESSAGE"))
           for e in entries):
        return entries
    return None


@pytest.mark.timeout(180)
def test_restarts_are_bounded(booted):
    """A console whose launcher keeps failing (here: no such domain, which
    the launcher says at once) is restarted by the unit's policy and then
    left 'failed' by its start limit (StartLimitBurst=5 in 10 minutes), not
    restarted for ever; every try's failure is in the journal, naming the
    domain."""
    box = booted
    name = "0b5e6d7c-1a2b-4c3d-8e9f-00000000dead"     # no such domain
    unit = f"qemu-spice@{name}.service"
    burst = int(unit_prop_of(box, unit, "StartLimitBurst"))
    assert burst == 5, burst
    # 5 tries 2 s apart (RestartSec), each failing at once
    box.run("systemctl", "start", "--no-block", unit)
    try:
        entries = wait_until(f"{unit} to hit its start limit",
                             lambda: limit_hit(box, unit), 120)
        time.sleep(5)     # longer than RestartSec: no further try comes
        assert unit_prop_of(box, unit, "ActiveState") == "failed"
        # one launcher pid per try (its lines reach the journal by another
        # socket than systemd's, so they are read again after the wait)
        entries = unit_journal(box, unit)
        tries = {e["_PID"] for e in entries if e.get("_PID") != "1"}
        assert len(tries) == burst, (tries, [e.get("MESSAGE") for e in entries])
        assert all(e.get("SYSLOG_IDENTIFIER") == f"qemu-spice/{name}"
                   for e in entries if e.get("_PID") != "1"), entries
        assert any(name in str(e.get("MESSAGE")) for e in entries if e.get("_PID") != "1")
    finally:
        box.run("systemctl", "reset-failed", unit, check=False)


def token_client(box, paths, port, token, tmp_path):
    """qs-test-client in the container's network namespace with `token`;
    its exit status (0 linked, 5 refused)."""
    path = tmp_path / "token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return subprocess.run(["nsenter", "-t", str(box.leader), "-n", "--",
                           str(paths.require_test_client()), f"--port={port}",
                           f"--ticket-file={path}", "--timeout=30", "info"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)


@pytest.mark.timeout(300)
def test_reload_rotates_token_keys(booted, guest, paths, tmp_path):
    """'systemctl reload' on a console's unit (its ExecReload: 'qemu-spice-
    launcher reload', SIGHUP to the launcher) rotates the token keys: a token of a master key id added
    after the attach is refused until the reload, and links after it,
    while the old id's tokens keep linking (docs/operations.md, section 4)."""
    box = booted
    launcher = in_box(paths.build_dir / "launcher" / "qemu-spice-launcher")
    conf = default_config_path(paths.build_dir / "launcher" / "qemu-spice-launcher")
    master = "/etc/qemu-spice/token-master.keys"
    name = "qs-sd-keys"
    box.write(master, f"[master-keys]\n1={os.urandom(32).hex()}\n", 0o600)
    box.write(conf, good_config(paths.helper) + f"[ticket]\ntoken-keys={master}\n")
    box.write(f"{WORKDIR}/{name}.xml", domain_xml(name, guest, WORKDIR, metadata=OPT_IN))
    try:
        box.run("virsh", "-q", "create", f"{WORKDIR}/{name}.xml", timeout=120)
        unit, _ = unit_of(box, name)
        assert "qemu-spice-launcher reload" in unit_prop_of(box, unit, "ExecReload"), \
            unit_prop_of(box, unit, "ExecReload")
        state = wait_until("the console's state file",
                           lambda: (s := read(box.path(f"/run/qemu-spice/{name}.json"))) and
                           json.loads(s), ATTACH_WAIT_S)
        old = box.run(launcher, "token", name, "--key-id", "1").stdout.strip()
        box.write(master, box.path(master).read_text() + f"2={os.urandom(32).hex()}\n", 0o600)
        new = box.run(launcher, "token", name, "--key-id", "2").stdout.strip()
        assert new.startswith("qst.") and new != old
        res = token_client(box, paths, state["port"], new, tmp_path)
        assert res.returncode == 5, (res.returncode, res.stderr[-1000:])
        box.run("systemctl", "reload", unit)
        wait_until("the launcher's reload", lambda: any(
            f"token keys reloaded from {master}" in str(e.get("MESSAGE"))
            for e in journal(box, unit)), 30)
        res = token_client(box, paths, state["port"], new, tmp_path)
        assert res.returncode == 0, (res.returncode, res.stderr[-1000:])
        res = token_client(box, paths, state["port"], old, tmp_path)
        assert res.returncode == 0, (res.returncode, res.stderr[-1000:])
        # the same launcher and helper: reloaded, not restarted
        assert json.loads(read(box.path(f"/run/qemu-spice/{name}.json")))["helper_pid"] == \
            state["helper_pid"]
        assert unit_prop_of(box, unit, "NRestarts") == "0"
    finally:
        box.write(conf, good_config(helper=paths.helper))
        box.run("virsh", "-q", "destroy", name, check=False, timeout=60)
