# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue S: the patched libvirt (libvirt/patches, tools/make-libvirt)
serving an unchanged <graphics type='spice'> with our helper.

The patched virtqemud of the trixie tree runs with spice_helper naming the
helper of QS_BUILD_DIR, qemu 10.0 beside it (libvirt_helper_support.py).
What is shown, for a domain as virt-manager writes it (autoport,
<image compression='off'/>, a spicevmc agent channel, two spicevmc
redirdevs, spice audio) and one as Nova writes it (a listen address, the
agent channel):

- qemu runs with -display dbus on the domain's bus and D-Bus chardevs and
  audio, never -spice; `virsh domdisplay` names the live XML's port, on
  which the helper (not qemu) listens, and a SPICE client there gets
  qemu's screendump byte for byte;
- the agent channel carries a file and the clipboard (text, an image) to
  the guest's agent byte for byte, and a USB device behind a spicevmc
  redirdev reaches the guest's USB bus;
- with spice_tls, the live XML's port and tlsPort are the helper's, and a
  client verifying the certificate gets the picture over TLS;
- the helper runs as the domain's user in the domain's cgroups (the same
  as qemu's process, line for line);
- a password and its expiry from the XML, changed live with update-device:
  the old password refused, the new one taken, an expired one refused;
- remote-viewer on domdisplay's URI and `virt-viewer --connect URI
  DOMAIN` under Xvfb show qemu's screendump whole;
- virDomainOpenGraphicsFD hands the client to the helper (AddClient);
- a restart of virtqemud keeps the helper and its console, and destroy
  after it still stops the helper;
- live migration is refused both ways, with two daemons: away from the
  helper's host by the source, towards it by the destination;
- without spice_helper the same domain gets qemu's own -spice."""

import io
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from harness.qemu import parse_ppm
from harness.services import Xvfb
import test_agent
import test_client_auth
from libvirt_helper_support import QS_DIR, DomainSerial, PatchedLibvirt, domain_xml
from serve_support import require_tool, run_client
from usbredir_support import DEVICE, PRODUCT, UsbClient, device_binary
from viewer_support import remote_viewer_sight

VIRT_MANAGER_SPICE = """<graphics type='spice' autoport='yes'>
      <listen type='address'/>
      <image compression='off'/>
    </graphics>"""
VIRT_MANAGER_DEVICES = """<controller type='usb' model='qemu-xhci' ports='15'/>
    <controller type='virtio-serial'/>
    <channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>
    <input type='tablet' bus='usb'/>
    <sound model='ich9'/>
    <audio id='1' type='spice'/>
    <redirdev bus='usb' type='spicevmc'/>
    <redirdev bus='usb' type='spicevmc'/>"""
# Nova's spice console: the compute host's address (here a loopback one
# other than libvirt's default), the agent channel.
NOVA_SPICE = """<graphics type='spice' autoport='yes' listen='127.0.0.2'>
      <listen type='address' address='127.0.0.2'/>
    </graphics>"""
NOVA_DEVICES = """<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>"""

GUEST_READY_TIMEOUT = 60


@pytest.fixture(scope="module")
def helper_libvirt(paths, guest):
    with PatchedLibvirt(paths, guest, helper=paths.require_helper()) as lv:
        yield lv


@pytest.fixture
def domains(helper_libvirt):
    """Domains started by the test, destroyed and undefined after it; then
    no helper may have left a sanitizer report in its log."""
    started = []
    yield started
    for name in started:
        pid = helper_pid(helper_libvirt, name)
        helper_libvirt.virsh("destroy", name, check=False)
        helper_libvirt.virsh("undefine", name, check=False)
        if pid:
            wait_gone(pid, 15, f"the helper of {name}")
    reports = helper_libvirt.sanitizer_reports()
    if reports:
        pytest.fail("; ".join(f"sanitizer report in {log}:\n{excerpt}"
                              for log, excerpt in reports))


def wait_gone(pid, timeout, what):
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}"):
        assert time.monotonic() < deadline, f"{what} (pid {pid}) still runs after {timeout}s"
        time.sleep(0.1)


def start(lv, started, name, graphics, devices, transient=False, cmdline=""):
    path = f"{QS_DIR}/{name}.xml"
    lv.write(path, domain_xml(lv, name, graphics, devices, cmdline=cmdline))
    if transient:
        lv.virsh("create", path)
    else:
        lv.virsh("define", path)
        lv.virsh("start", name)
    started.append(name)
    wait_guest_ready(lv, name)
    return name


def wait_guest_ready(lv, name):
    deadline = time.monotonic() + GUEST_READY_TIMEOUT
    while b"READY" not in lv.read_bytes(f"{QS_DIR}/{name}.serial"):
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: no READY on the serial port in "
                                 f"{GUEST_READY_TIMEOUT}s")
        time.sleep(0.2)


def qemu_cmdline(lv, name):
    pid = lv.pid_of(f"/run/libvirt/qemu/{name}.pid")
    return lv.read_bytes(f"/proc/{pid}/cmdline").decode().split("\0")


def helper_pid(lv, name):
    """The pid in the helper's pidfile (STATEDIR/spice-helper/ID-NAME-...)."""
    res = lv.run("sh", "-c", f"cat /run/libvirt/qemu/spice-helper/*-{name}-spice-helper.pid",
                 check=False)
    return int(res.stdout) if res.returncode == 0 and res.stdout.strip() else None


def live_port(lv, name):
    xml = lv.virsh("dumpxml", name).stdout
    m = re.search(r"<graphics type='spice' port='(\d+)'", xml)
    assert m, f"no spice port in the live XML:\n{xml}"
    return int(m.group(1))


def listening_pids(port, address="127.0.0.1"):
    """Pids holding a socket listening on address:port (from /proc/net/tcp)."""
    hexaddr = "".join(f"{int(b):02X}" for b in reversed(address.split(".")))
    inodes = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and local == f"{hexaddr}:{port:04X}":
                inodes.add(inode)
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{entry}/fd"):
                link = os.readlink(f"/proc/{entry}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.add(int(entry))
        except OSError:
            continue
    return pids


def assert_exact_picture(lv, name, test_client, tmp_path, host="127.0.0.1", port=None,
                         ticket=None):
    """A first session (the helper has the picture), the guest paused, then
    the client's screenshot equals qemu's screendump."""
    port = port or live_port(lv, name)
    args = ["--host", host, "--port", port]
    if ticket:
        args += ["--ticket-file", ticket]
    run_client(test_client, *args, "--settle", "500", "info", timeout=60)
    lv.virsh("suspend", name)
    # qemu 10.0's screendump through libvirt comes as PNG.
    lv.virsh("screenshot", name, f"{QS_DIR}/{name}.png")
    w, h, reference = png_pixels(lv.read_bytes(f"{QS_DIR}/{name}.png"))
    assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10, \
        "qemu's screendump is blank: the comparison would mean nothing"
    shot = tmp_path / f"{name}-shot.ppm"
    run_client(test_client, *args, "--settle", "700", "--expect-size", f"{w}x{h}",
               "screenshot", shot, timeout=60)
    sw, sh, pixels = parse_ppm(shot.read_bytes())
    assert (sw, sh) == (w, h)
    assert pixels == reference, "the client's picture differs from qemu's screendump"
    lv.virsh("resume", name)


def png_pixels(data):
    """(width, height, RGB bytes as in a P6 PPM) of a PNG."""
    from PIL import Image
    image = Image.open(io.BytesIO(data)).convert("RGB")
    return image.width, image.height, image.tobytes()


def ticket(tmp_path, password):
    path = tmp_path / f"ticket-{password}"
    path.write_text(password + "\n")
    return path


@pytest.mark.timeout(240)
def test_virt_manager_domain_is_served_by_the_helper(helper_libvirt, domains, test_client,
                                                    tmp_path):
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-vmgr", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
    argv = qemu_cmdline(lv, name)
    assert "-spice" not in argv
    display = argv[argv.index("-display") + 1]
    assert re.fullmatch(r"dbus,addr=unix:path=/run/libvirt/qemu/dbus/\d+-qs-s-vmgr-dbus\.sock,"
                        r"audiodev=audio1", display), display
    chardevs = [argv[i + 1] for i, a in enumerate(argv) if a == "-chardev"]
    assert "dbus,id=charchannel0,name=com.redhat.spice.0" in chardevs
    assert "dbus,id=charredir0,name=org.qemu.usbredir" in chardevs
    assert "dbus,id=charredir1,name=org.qemu.usbredir" in chardevs
    assert '{"id":"audio1","driver":"dbus"}' in argv
    # The live XML is what every tool reads: the SPICE graphics as written,
    # with the port libvirt allocated, on which the helper listens.
    xml = lv.virsh("dumpxml", name).stdout
    assert "<channel type='spicevmc'>" in xml and "<redirdev bus='usb' type='spicevmc'>" in xml
    port = live_port(lv, name)
    assert lv.virsh("domdisplay", name).stdout.strip() == f"spice://127.0.0.1:{port}"
    pid = helper_pid(lv, name)
    assert pid and listening_pids(port) == {pid}
    # libvirt's chardevs reached the helper under the names it serves.
    log = lv.read_bytes(f"/var/log/libvirt/qemu/{name}-qemu-spice.log").decode()
    path = "/org/qemu/Display1/Chardev_"
    assert ("offering qemu's D-Bus chardevs as SPICE channels: "
            f"usbredir.0 (usbredir channel 0, {path}charredir0), "
            f"usbredir.1 (usbredir channel 1, {path}charredir1)") in log, log
    assert ("agent: the guest's agent on com.redhat.spice.0 serves the clients "
            f"(qemu's D-Bus chardev {path}charchannel0") in log, log
    assert "audio: registered with qemu's D-Bus audio" in log, log
    assert_exact_picture(lv, name, test_client, tmp_path)


@pytest.mark.timeout(600)
def test_agent_and_usbredir_reach_the_guest(helper_libvirt, domains, paths, tmp_path):
    """The virt-manager domain's spicevmc redirdev takes a USB device to the
    guest, and its spicevmc agent channel carries a file and the clipboard
    (text, then an image) to the guest's agent, byte for byte. The other
    direction (the guest's clipboard to the client) is test_agent.py's and
    test_dbus_chardevs.py's: this domain's serial port is a log, the guest
    cannot be told to copy."""
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-devs", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES,
                 cmdline="keydraw.agent=spice keydraw.usb=1")
    serial = DomainSerial(lv, name)
    port = live_port(lv, name)
    serial.wait(r"USB watching", 120)
    serial.wait(r"AGENT port=", 120)

    def log():
        return lv.read_bytes(f"/var/log/libvirt/qemu/{name}-qemu-spice.log").decode()[-3000:]

    since = serial.mark()
    usb = UsbClient(port, device_binary(paths))
    try:
        serial.wait(rf"USB add \S+ {DEVICE} product={PRODUCT}$", 90, since)
    finally:
        dev_log = usb.close()
    assert f"connected {DEVICE}" in dev_log, f"{dev_log}\n{log()}"
    serial.wait(rf"USB remove \S+ {DEVICE}$", 30, since)

    src, data = test_agent.payload(str(tmp_path))
    since = serial.mark()
    client = test_agent.Client(port, src, 240)
    try:
        assert client.wait("agent-caps", 90) == "agent-caps 0", log()
        serial.wait(r"AGENT ready", 30, since)
        done = serial.wait(r"FILEXFER done id=\d+ name=payload\.bin len=(\d+) "
                           r"fnv=([0-9a-f]{8})", 180, since)
        assert (int(done.group(1)), done.group(2)) == \
            (test_agent.FILE_SIZE, "%08x" % test_agent.fnv1a(data)), log()
        assert client.wait("copied", 60) == "copied ok", log()
        for kind, want in ((1, test_agent.TEXT.encode()), (2, test_agent.image_bytes())):
            got = serial.wait(rf"CLIPBOARD sel=0 type={kind} len=(\d+) fnv=([0-9a-f]{{8}})",
                              60, since)
            assert (int(got.group(1)), got.group(2)) == \
                (len(want), "%08x" % test_agent.fnv1a(want)), log()
        assert client.wait("host-done", 30), log()
    finally:
        client.finish(5)
    full = lv.read_bytes(f"/var/log/libvirt/qemu/{name}-qemu-spice.log").decode()
    assert "agent: the guest's agent spoke on" in full, full[-3000:]


@pytest.mark.timeout(240)
def test_nova_domain_on_its_listen_address(helper_libvirt, domains, test_client, tmp_path):
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-nova", NOVA_SPICE, NOVA_DEVICES, transient=True)
    port = live_port(lv, name)
    assert lv.virsh("domdisplay", name).stdout.strip() == f"spice://127.0.0.2:{port}"
    assert listening_pids(port, "127.0.0.2") == {helper_pid(lv, name)}
    assert_exact_picture(lv, name, test_client, tmp_path, host="127.0.0.2")


@pytest.mark.timeout(300)
def test_tls_port_is_the_helpers(paths, guest, helper_libvirt, test_client, tmp_path):
    """A daemon with spice_tls on: libvirt allocates a TLS port beside the
    plain one and hands the helper both listeners and
    spice_tls_x509_cert_dir. The live XML's port and tlsPort are where the
    helper listens, domdisplay names both, and a client that verifies the
    certificate gets qemu's picture over TLS."""
    pki = test_client_auth.make_pki(tmp_path)
    # Readable by all: the helper reads them as the domain's user.
    files = {f"/etc/pki/qs-spice/{f}": (pki / f).read_text()
             for f in ("ca-cert.pem", "server-cert.pem", "server-key.pem")}
    with PatchedLibvirt(paths, guest, helper=paths.require_helper(), tree=helper_libvirt.tree,
                        qemu_conf='spice_tls = 1\n'
                                  'spice_tls_x509_cert_dir = "/etc/pki/qs-spice"\n',
                        files=files) as lv:
        name = start(lv, [], "qs-s-tls", VIRT_MANAGER_SPICE, NOVA_DEVICES, transient=True)
        try:
            xml = lv.virsh("dumpxml", name).stdout
            m = re.search(r"<graphics type='spice' port='(\d+)' tlsPort='(\d+)'", xml)
            assert m, xml
            port, tls_port = int(m.group(1)), int(m.group(2))
            assert tls_port != port
            assert lv.virsh("domdisplay", name).stdout.strip() == \
                f"spice://127.0.0.1:{port}?tls-port={tls_port}"
            argv = qemu_cmdline(lv, name)
            assert "-spice" not in argv
            pid = helper_pid(lv, name)
            assert pid and listening_pids(port) == {pid} and listening_pids(tls_port) == {pid}
            res = run_client(test_client, "--host", "127.0.0.1", "--tls-port", tls_port,
                             "--ca-file", pki / "ca-cert.pem",
                             "--host-subject", test_client_auth.SUBJECT, "info", timeout=60)
            assert res.returncode == 0, res.stderr[-2000:]
            helper_argv = lv.read_bytes(f"/proc/{pid}/cmdline").decode().split("\0")
            assert "--tls-listen-fd" in " ".join(helper_argv), helper_argv
            assert helper_argv[helper_argv.index("--tls-dir") + 1] == "/etc/pki/qs-spice", \
                helper_argv
        finally:
            lv.virsh("destroy", name, check=False)
        reports = lv.sanitizer_reports()
        assert not reports, reports


@pytest.mark.timeout(300)
def test_remote_viewer_and_virt_viewer_show_the_guest(helper_libvirt, domains, test_client,
                                                      tmp_path):
    """The real viewers: remote-viewer on domdisplay's URI, and virt-viewer
    --connect URI DOMAIN, which reads the live XML itself (through the
    daemon's socket where the namespace has it), each show qemu's
    screendump of the paused guest whole."""
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-viewer", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
    port = live_port(lv, name)
    run_client(test_client, "--port", port, "--settle", "500", "info", timeout=60)
    lv.virsh("suspend", name)
    lv.virsh("screenshot", name, f"{QS_DIR}/{name}.png")
    w, h, reference = png_pixels(lv.read_bytes(f"{QS_DIR}/{name}.png"))
    uri = lv.virsh("domdisplay", name).stdout.strip()
    # A screen larger than the guest's 1280x800, so the window shows it whole.
    with Xvfb(screen="1600x1000x24") as xvfb:
        (tmp_path / "remote").mkdir()
        sight = remote_viewer_sight(require_tool("remote-viewer", "virt-viewer"), uri, xvfb,
                                    w, h, reference, tmp_path / "remote", want=1.0)
        assert sight and sight[2] == 1.0, f"remote-viewer on {uri}: {sight}"
        # virt-viewer in the daemon's mount namespace, to reach its socket;
        # its argv is: virt-viewer --connect=URI DOMAIN.
        (tmp_path / "virt").mkdir()
        socket_uri = f"qemu+unix:///system?socket={lv.dir}/root/run/libvirt/virtqemud-sock"
        sight = remote_viewer_sight(f"--connect={socket_uri}", name, xvfb, w, h, reference,
                                    tmp_path / "virt", want=1.0,
                                    prefix=["nsenter", "-t", lv.holder.pid, "-m",
                                            require_tool("virt-viewer", "virt-viewer")])
        assert sight and sight[2] == 1.0, f"virt-viewer --connect: {sight}"
    lv.virsh("resume", name)


@pytest.mark.timeout(240)
def test_helper_runs_as_the_domain_user_in_its_cgroups(helper_libvirt, domains):
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-cgroup", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
    qemu = lv.pid_of(f"/run/libvirt/qemu/{name}.pid")
    helper = helper_pid(lv, name)

    def ids(pid):
        status = open(f"/proc/{pid}/status").read()
        return re.search(r"^Uid:\s+(.*)$", status, re.M).group(1), \
            re.search(r"^Gid:\s+(.*)$", status, re.M).group(1)

    uid = lv.run("id", "-u", "libvirt-qemu").stdout.strip()
    assert ids(helper) == ids(qemu)
    assert ids(helper)[0].split()[0] == uid
    cgroups = open(f"/proc/{helper}/cgroup").read()
    assert cgroups == open(f"/proc/{qemu}/cgroup").read()
    assert "/machine/qemu-" in cgroups and name in cgroups


@pytest.mark.timeout(240)
def test_password_expiry_and_live_change(helper_libvirt, domains, test_client, tmp_path):
    lv = helper_libvirt
    graphics = ("<graphics type='spice' autoport='yes' passwd='first-pw' "
                "passwdValidTo='2099-01-01T00:00:00'><listen type='address'/></graphics>")
    name = start(lv, domains, "qs-s-pw", graphics, "")
    port = live_port(lv, name)
    helper = helper_pid(lv, name)
    argv = open(f"/proc/{helper}/cmdline").read().split("\0")
    assert "--ticket-expiry" in argv and argv[argv.index("--ticket-expiry") + 1] == "@4070908800"
    assert "first-pw" not in " ".join(argv), "the password must not be on the command line"

    def client(password):
        return run_client(test_client, "--port", port, "--ticket-file",
                          ticket(tmp_path, password), "info", timeout=60, check=False)

    assert client("first-pw").returncode == 0
    assert client("wrong-pw").returncode == 5

    def update(attrs):
        path = f"{QS_DIR}/{name}-graphics.xml"
        # The listen as the live XML has it: update-device may not change it.
        lv.write(path, f"<graphics type='spice' autoport='yes' {attrs}>"
                       "<listen type='address' address='127.0.0.1'/></graphics>")
        lv.virsh("update-device", name, path, "--live")

    update("passwd='second-pw'")
    assert client("first-pw").returncode == 5
    assert client("second-pw").returncode == 0
    # An expiry in the past: the password is refused from now on.
    update("passwd='third-pw' passwdValidTo='2001-01-01T00:00:00'")
    assert client("third-pw").returncode == 5
    assert helper_pid(lv, name) == helper, "the password changes must not restart the helper"


OPEN_GRAPHICS_FD = r"""
import libvirt, socket, struct, sys
c = libvirt.open("qemu+unix:///system?socket=" + sys.argv[1])
fd = c.lookupByName(sys.argv[2]).openGraphicsFD(0, libvirt.VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH)
s = socket.socket(fileno=fd)
s.settimeout(20)
# SpiceLinkMess for the main channel, no capabilities, after the header.
link = struct.pack("<IBBIII", 0, 1, 0, 0, 0, 18)
s.sendall(b"REDQ" + struct.pack("<III", 2, 2, len(link)) + link)
reply = s.recv(16)
assert reply[:4] == b"REDQ", reply
print(struct.unpack("<I", s.recv(4))[0])
"""


@pytest.mark.timeout(240)
def test_open_graphics_fd_reaches_the_helper(helper_libvirt, domains, tmp_path):
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-fd", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
    # virsh has no openGraphicsFD command: Debian's python3-libvirt on the
    # host, through the daemon's socket where the namespace has it.
    script = tmp_path / "open_graphics_fd.py"
    script.write_text(OPEN_GRAPHICS_FD)
    res = subprocess.run(["nsenter", "-t", str(lv.holder.pid), "-m", "/usr/bin/python3",
                          str(script), f"{lv.dir}/root/run/libvirt/virtqemud-sock", name],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=60)
    # 0: SPICE_LINK_ERR_OK, the helper linked the client without a ticket.
    assert res.returncode == 0 and res.stdout.strip() == "0", res.stderr
    log = lv.read_bytes(f"/var/log/libvirt/qemu/{name}-qemu-spice.log").decode()
    assert "added (plain, no credential asked)" in log, log


@pytest.mark.timeout(480)
def test_live_migration_is_refused_both_ways(paths, guest, helper_libvirt):
    """Two daemons, each on its own overlay of the tree, reaching each
    other's socket through a shared directory: one with spice_helper, one
    without. Migrating a helper-served domain away is refused by its
    source; migrating a domain of QEMU's own SPICE to the helper's host is
    refused by that destination. Both domains keep running."""
    share = tempfile.mkdtemp(prefix="qs-libvirt-share-", dir="/tmp")
    try:
        with PatchedLibvirt(paths, guest, helper=paths.require_helper(),
                            tree=helper_libvirt.tree, share=share, own_socket="helper") as a, \
             PatchedLibvirt(paths, guest, helper=None, tree=helper_libvirt.tree,
                            share=share, own_socket="plain") as b:
            served = start(a, [], "qs-s-mig-a", NOVA_SPICE, NOVA_DEVICES, transient=True)
            plain = start(b, [], "qs-s-mig-b", NOVA_SPICE, NOVA_DEVICES, transient=True)
            res = a.virsh("migrate", "--live", served, b.uri, check=False, timeout=120)
            assert res.returncode != 0
            assert ("cannot migrate a domain whose SPICE graphics are served by the "
                    "SPICE helper") in res.stderr, res.stderr
            res = b.virsh("migrate", "--live", plain, a.uri, check=False, timeout=120)
            assert res.returncode != 0
            assert ("cannot migrate a domain with SPICE graphics to a host whose SPICE "
                    "graphics are served by the SPICE helper") in res.stderr, res.stderr
            assert a.virsh("domstate", served).stdout.strip() == "running"
            assert b.virsh("domstate", plain).stdout.strip() == "running"
            assert a.virsh("list", "--name").stdout.split() == [served]
    finally:
        shutil.rmtree(share, ignore_errors=True)


@pytest.mark.timeout(300)
def test_daemon_restart_keeps_the_helper_and_destroy_stops_it(helper_libvirt, domains,
                                                             test_client, tmp_path):
    lv = helper_libvirt
    name = start(lv, domains, "qs-s-restart", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
    helper = helper_pid(lv, name)
    lv.restart_virtqemud()
    assert lv.virsh("domstate", name).stdout.strip() == "running"
    assert helper_pid(lv, name) == helper and os.path.exists(f"/proc/{helper}")
    assert_exact_picture(lv, name, test_client, tmp_path)
    # The restarted daemon still reaches the helper, and still stops it.
    path = f"{QS_DIR}/{name}-graphics.xml"
    lv.write(path, "<graphics type='spice' autoport='yes' passwd='after-restart'>"
                   "<listen type='address' address='127.0.0.1'/></graphics>")
    lv.virsh("update-device", name, path, "--live")
    port = live_port(lv, name)
    assert run_client(test_client, "--port", port, "info", timeout=60,
                      check=False).returncode == 5
    run_client(test_client, "--port", port, "--ticket-file",
               ticket(tmp_path, "after-restart"), "info", timeout=60)
    lv.virsh("destroy", name)
    wait_gone(helper, 15, "the helper, after its domain was destroyed,")
    assert helper_pid(lv, name) is None


@pytest.mark.timeout(300)
def test_without_spice_helper_qemu_serves_spice(paths, guest, helper_libvirt):
    # The module's daemon serves with the helper; this one, on its own
    # overlay of the same tree, has no spice_helper.
    with PatchedLibvirt(paths, guest, helper=None, tree=helper_libvirt.tree) as lv:
        started = []
        try:
            name = start(lv, started, "qs-s-plain", VIRT_MANAGER_SPICE, VIRT_MANAGER_DEVICES)
            argv = qemu_cmdline(lv, name)
            assert "-spice" in argv and "-display" not in argv
            assert "spicevmc,id=charchannel0,name=vdagent" in argv
            assert helper_pid(lv, name) is None
        finally:
            for n in started:
                lv.virsh("destroy", n, check=False)
