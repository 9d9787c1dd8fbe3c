# SPDX-License-Identifier: GPL-2.0-or-later
"""The launcher with the real qemu-spice helper: a SPICE client (qs-test-client)
connects to the port the launcher reports, with the ticket it made, and gets
the guest's picture. Needs the helper to serve SPICE on inherited listening
sockets (--listen-fd, --ticket-fd)."""

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from PIL import Image

from harness.qemu import parse_ppm
from test_launcher_libvirt import (LauncherEnv, make_tls_dir, metadata, pid_alive, start_domain,
                                  wait_for)


def client_ticket(env, name):
    """qs-test-client reads a bare password file; ours has an expiry line."""
    password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
    path = env.dir / "client-ticket"
    path.write_text(password + "\n")
    path.chmod(0o600)
    return path


def wait_guest_ready(env, name, timeout=60):
    """The guest draws its picture once it prints READY on its serial file."""
    path = env.dir / f"{name}.serial"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and "READY " in path.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise AssertionError(f"no READY on {path} within {timeout}s")


def attached(libvirtd, env, guest, name, attach="--no-supervise"):
    """A transient domain `name` started, its console attached and its guest
    drawing; returns (its name, the launcher's state)."""
    name = start_domain(libvirtd, name, guest, env.dir, persistent=False)
    env.run("attach", name, attach, check=True)
    st = env.state(name)
    wait_guest_ready(env, name)
    return name, st


def wait_serial_count(env, name, needle, count, timeout=60):
    """The guest's serial file has `needle` at least `count` times."""
    path = env.dir / f"{name}.serial"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(errors="replace").count(needle) >= count:
            return
        time.sleep(0.2)
    text = path.read_text(errors="replace") if path.exists() else ""
    raise AssertionError(f"'{needle}' not {count} times on {path} within {timeout}s: "
                         f"{[l for l in text.splitlines() if 'FPS' not in l][-15:]}")


def run_client(test_client, *args, timeout=60):
    return subprocess.run([str(test_client), "--timeout", "30", *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout)


def wait_log(env, name, needle, timeout=15):
    deadline = time.monotonic() + timeout
    while needle not in env.log(name):
        if time.monotonic() > deadline:
            raise AssertionError(f"no '{needle}' in the log within {timeout}s:\n"
                                 + env.log(name)[-2000:])
        time.sleep(0.1)


def start_client(test_client, *args):
    return subprocess.Popen([str(test_client), "--timeout", "30", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)


def check_exact_picture(libvirtd, env, name, port, test_client, ticket=True):
    """With the domain paused, the client's picture equals qemu's screendump
    (with the console's ticket, or none for a proxy-only console)."""
    libvirtd.virsh("suspend", name)
    try:
        # virsh picks qemu's format (PNG on 7.2 and later): lossless either way
        ref_path = env.dir / "ref.img"
        libvirtd.virsh("screenshot", name, str(ref_path))
        shot = env.dir / "exact.ppm"
        auth = ["--ticket-file", client_ticket(env, name)] if ticket else []
        res = run_client(test_client, "--port", port, *auth, "--settle", "500",
                         "screenshot", shot)
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])
        with Image.open(ref_path) as img:
            img = img.convert("RGB")
            rw, rh, ref = img.width, img.height, img.tobytes()
        sw, sh, got = parse_ppm(shot.read_bytes())
        assert (sw, sh) == (rw, rh)
        bad = sum(1 for i in range(0, len(ref), 3) if ref[i:i + 3] != got[i:i + 3])
        assert bad == 0, f"{bad} pixels differ from qemu's screendump"
    finally:
        libvirtd.virsh("resume", name)


def test_real_helper_serves_picture(libvirtd, guest, paths, helper_binary, test_client):
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name = start_domain(libvirtd, "qs-test-launch-spice", guest, env.dir,
                            persistent=False)
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        wait_guest_ready(env, name)
        shot = env.dir / "shot.ppm"
        res = run_client(test_client, "--port", st["port"], "--ticket-file",
                         client_ticket(env, name), "screenshot", shot, "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])
        data = shot.read_bytes()
        assert data.startswith(b"P6")
        # not a blank surface: the guest draws a pattern
        pixels = data.split(b"\n", 3)[3]
        assert len(set(pixels[i:i + 3] for i in range(0, min(len(pixels), 300000), 3))) > 2

        check_exact_picture(libvirtd, env, name, st["port"], test_client)

        # a wrong ticket is refused
        bad = env.dir / "bad-ticket"
        bad.write_text("wrong\n")
        res = run_client(test_client, "--port", st["port"], "--ticket-file", bad, "info")
        assert res.returncode != 0
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_real_helper_ports(libvirtd, guest, paths, helper_binary):
    """The domain's unix-socket virtio-serial ports, as libvirt writes them:
    the launcher connects to the echo port and passes it, leaves libvirt's
    guest-agent channel alone, passes the SPICE agent's port as --agent-fd
    (the guest's own agent serves, and speaks), and spice-gtk's port
    channel gets its bytes echoed by the guest (test_ports.py's client);
    after the helper is killed, the supervisor's new helper has the port
    again."""
    import test_ports

    env = LauncherEnv(paths, helper=helper_binary)
    try:
        devices = "".join(
            f"<channel type='unix'><source mode='bind'/>"
            f"<target type='virtio' name='{port}'/></channel>"
            for port in (test_ports.PORT, "org.qemu.guest_agent.0", "com.redhat.spice.0"))
        name = start_domain(libvirtd, "qs-test-launch-ports", guest, env.dir,
                            persistent=False, devices=devices,
                            cmdline_extra=f"keydraw.echo={test_ports.PORT} keydraw.agent=spice")
        res = env.run("attach", name, "--supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        offered = ("offering qemu's chardevs as SPICE channels: "
                   f"{test_ports.PORT} (port channel 0, qemu's end connected)")
        wait_log(env, name, offered)
        assert "port org.qemu.guest_agent.0 not passed to the helper: it is " \
               "qemu-guest-agent's" in env.log(name), env.log(name)[-2000:]
        assert "agent: the guest's agent on com.redhat.spice.0 serves the clients " \
               "(qemu's end connected)" in env.log(name), env.log(name)[-2000:]
        wait_log(env, name, "agent: the guest's agent spoke on com.redhat.spice.0", timeout=90)
        wait_guest_ready(env, name)
        lines, stderr = test_ports.run_client(st["port"], seed=3, password=password)
        what = f"client: {lines}\n{stderr[-2000:]}\nlog: {env.log(name)[-3000:]}"
        assert f"port {test_ports.PORT} 1" in lines, what
        received = [l.split() for l in lines if l.startswith("received ")]
        assert received and received[0][1] == str(test_ports.SIZE + test_ports.TAIL), what
        assert received[0][3] == "exact", what
        # The helper killed: the supervisor's new helper gets a new
        # connection to the port (qemu takes it once the old one closed).
        env.expect_helper_end(-signal.SIGKILL)
        os.kill(st["helper_pid"], signal.SIGKILL)
        wait_for(lambda: (n := env.state(name)) and n["helper_pid"] != st["helper_pid"]
                 and n.get("restarts") == 1, 20, "the restarted helper")
        wait_for(lambda: env.log(name).count(offered) == 2, 15, "the new helper's port")
        lines, stderr = test_ports.run_client(st["port"], seed=5, password=password)
        what = f"client: {lines}\n{stderr[-2000:]}\nlog: {env.log(name)[-3000:]}"
        received = [l.split() for l in lines if l.startswith("received ")]
        assert received and received[0][3] == "exact", what
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_real_helper_usbredir(libvirtd, guest, paths, helper_binary):
    """A <redirdev bus='usb' type='unix'> with mode='connect', as
    docs/operations.md shows it: the launcher listens on its path and
    passes the socket, qemu's usb-redir connects, and a raw client with
    qs-usbredir-dev behind its usbredir channel (usbredir_support.py) gets
    the device enumerated by the guest and removed when it leaves."""
    from usbredir_support import DEVICE, PRODUCT, UsbClient, device_binary

    dev_binary = device_binary(paths)
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        # qemu runs as libvirt's qemu user: it must reach the socket (the
        # launcher gives the socket itself to that user).
        env.dir.chmod(0o711)
        sock = env.dir / "usbredir0.sock"
        devices = ("<controller type='usb' index='0' model='qemu-xhci'/>"
                   "<redirdev bus='usb' type='unix'>"
                   f"<source mode='connect' path='{sock}'>"
                   "<reconnect enabled='yes' timeout='1'/></source></redirdev>")
        name = start_domain(libvirtd, "qs-test-launch-usbredir", guest, env.dir,
                            persistent=False, devices=devices, cmdline_extra="keydraw.usb=1")
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        wait_log(env, name, "offering qemu's chardevs as SPICE channels: usbredir.0 "
                            "(usbredir channel 0")
        wait_serial_count(env, name, "NOTE input-modules", 1, timeout=90)
        client = UsbClient(st["port"], dev_binary, password=password)
        try:
            wait_serial_count(env, name, f"{DEVICE} product={PRODUCT}", 1)
        except AssertionError as e:
            dev_log = client.close()
            client = None
            raise AssertionError(f"{e}\ndevice: {dev_log}\nlog: {env.log(name)[-2500:]}\n"
                                 f"socket: {sock.exists()} {list(env.dir.iterdir())}") from e
        finally:
            if client:
                dev_log = client.close()
        wait_serial_count(env, name, "USB remove", 1, timeout=30)
        assert f"connected {DEVICE}" in dev_log, dev_log
        assert "chardev usbredir.0: qemu connected" in env.log(name), env.log(name)[-2000:]
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_real_helper_smartcard(libvirtd, guest, paths, helper_binary, tmp_path):
    """A <smartcard mode='passthrough' type='unix'> with mode='connect', as
    docs/operations.md shows it (libvirt adds the usb-ccid reader): the
    launcher listens on its path and passes the socket (--smartcard-fd),
    qemu's passthru connects, and spice-gtk with libcacard's software card
    (test_smartcard.py's client) puts its card into the guest, which gets
    an APDU answered by the card over CCID."""
    from script_client import ScriptClient
    from test_smartcard import make_nss_db

    db = make_nss_db(tmp_path)
    env = LauncherEnv(paths, helper=helper_binary)
    client = None
    try:
        env.dir.chmod(0o711)
        sock = env.dir / "smartcard.sock"
        devices = ("<controller type='usb' index='0' model='qemu-xhci'/>"
                   "<smartcard mode='passthrough' type='unix'>"
                   f"<source mode='connect' path='{sock}'>"
                   "<reconnect enabled='yes' timeout='1'/></source></smartcard>")
        name = start_domain(libvirtd, "qs-test-launch-smartcard", guest, env.dir,
                            persistent=False, devices=devices, cmdline_extra="keydraw.ccid=1")
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        wait_log(env, name, "offering qemu's chardevs as SPICE channels: smartcard "
                            "(smartcard channel 0, one reader, qemu's end connects to us)")
        wait_log(env, name, "chardev smartcard: qemu connected", timeout=60)
        client = ScriptClient(Path(__file__).parent / "test_smartcard.py", "127.0.0.1",
                              st["port"], db, 240, password)
        try:
            wait_serial_count(env, name, "CCID get-response=", 1, timeout=240)
        except AssertionError as e:
            raise AssertionError(f"{e}\nlog: {env.log(name)[-2500:]}") from e
        finally:
            client.stop()
        serial = (env.dir / f"{name}.serial").read_text(errors="replace")
        assert "CCID slot icc=present" in serial, serial[-2000:]
        response = serial.split("CCID get-response=", 1)[1].split()[0]
        assert response.endswith("9000") and "a0000000790100" in response, response
        assert "smartcard: the client added its reader" in env.log(name), env.log(name)[-2000:]
        env.run("detach", name, check=True)
    finally:
        if client and client.proc.poll() is None:
            client.stop()
        env.cleanup()


def test_real_helper_tls(libvirtd, guest, paths, helper_binary, test_client):
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        tls = make_tls_dir(env.dir / "tls")
        env.write_conf(listen__tls="true", listen__tls_dir=str(tls),
                       listen__secure_channels="all")
        name = start_domain(libvirtd, "qs-test-launch-spicetls", guest, env.dir,
                            persistent=False)
        (env.dir / "tls-old-ca.pem").write_bytes((tls / "ca-cert.pem").read_bytes())
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        res = run_client(test_client, "--tls-port", st["tls_port"], "--ca-file",
                         tls / "ca-cert.pem", "--host", "127.0.0.1", "--ticket-file",
                         client_ticket(env, name), "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])

        # New certificates (another CA) reach the confined helper through
        # its control socket on the launcher's SIGHUP, which 'reload' sends;
        # new links use them.
        fresh = make_tls_dir(env.dir / "tls-new")
        for f in ("ca-cert.pem", "server-cert.pem", "server-key.pem"):
            (tls / f).write_bytes((fresh / f).read_bytes())
        res = env.run("reload", name, check=True)
        assert f"the launcher (pid {st['monitor_pid']}) reloads" in res.stdout, res.stdout
        wait_log(env, name, "certificates reloaded")
        assert "TLS certificates replaced" in env.log(name)
        res = run_client(test_client, "--tls-port", st["tls_port"], "--ca-file",
                         fresh / "ca-cert.pem", "--host", "127.0.0.1", "--ticket-file",
                         client_ticket(env, name), "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])
        res = run_client(test_client, "--tls-port", st["tls_port"], "--ca-file",
                         env.dir / "tls-old-ca.pem", "--host", "127.0.0.1",
                         "--ticket-file", client_ticket(env, name), "info")
        assert res.returncode == 6, (res.returncode, res.stderr[-2000:])
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_real_helper_bus_mode(libvirtd, guest, paths, helper_binary, test_client):
    """libvirt's per-VM bus (no p2p): the helper joins it as the bus's owner
    (libvirt-qemu) and serves the exact picture."""
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name = start_domain(libvirtd, "qs-test-launch-spicebus", guest, env.dir,
                            graphics="<graphics type='dbus'/>", persistent=False)
        xml = libvirtd.virsh("dumpxml", name).stdout
        address = re.search(r"<graphics type='dbus' address='([^']+)'", xml).group(1)
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        wait_guest_ready(env, name)
        check_exact_picture(libvirtd, env, name, st["port"], test_client)
        # Serving, it runs as the owner of the bus socket.
        with open(f"/proc/{st['helper_pid']}/status") as f:
            uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)\s+(\d+)", f.read(), re.M).groups()
        owner = os.stat(address.split("=", 1)[1]).st_uid
        assert {int(u) for u in uids} == {owner}, (uids, owner)
        check_bus_control(env, name, address, st["port"], test_client)
        assert env.run_files() == [] and env.helper_pids() == []
    finally:
        env.cleanup()


BUS_CALL = ["--dest", "org.qemuspice.Helper1", "--object-path", "/org/qemuspice/Helper1"]


def check_bus_control(env, name, address, port, test_client):
    """The control interface on the VM's bus under its well-known name (as
    libvirt reaches qemu-rdp): SetTicket there changes the ticket new links
    need, and the helper says Leaving there when it goes (detach)."""
    # The per-VM bus admits only its owner (libvirt-qemu), not root.
    st = os.stat(address.split("=", 1)[1])
    as_owner = ["setpriv", f"--reuid={st.st_uid}", f"--regid={st.st_gid}", "--clear-groups"]
    res = subprocess.run([*as_owner, "gdbus", "call", "--address", address, *BUS_CALL, "--method",
                          "org.qemuspice.Helper1.SetTicket", "bus-ticket-1", "0", "false"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert res.returncode == 0 and res.stdout.strip() == "(uint32 0,)", (res.stdout, res.stderr)
    fresh = env.dir / "bus-ticket"
    fresh.write_text("bus-ticket-1\n")
    res = run_client(test_client, "--port", port, "--ticket-file", fresh, "info")
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    res = run_client(test_client, "--port", port, "--ticket-file", client_ticket(env, name), "info")
    assert res.returncode == 5, (res.returncode, res.stderr[-2000:])
    monitor = subprocess.Popen([*as_owner, "gdbus", "monitor", "--address", address, "--dest",
                                "org.qemuspice.Helper1"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1)   # the monitor's match rule is in place
        env.run("detach", name, check=True)
        time.sleep(1)
    finally:
        monitor.terminate()
        out = monitor.communicate(timeout=10)[0]
    assert "org.qemuspice.Helper1.Leaving" in out, out


def client_count(env, name):
    st = json.loads(env.run("status", name, "--json", check=True).stdout)
    return len(st["clients"]), st


def wait_clients(env, name, n, timeout=20):
    """Until status lists n clients, each with its display channel linked
    (the main channel links first; a slow build shows it alone for a while)."""
    deadline = time.monotonic() + timeout
    while True:
        count, st = client_count(env, name)
        if count == n and all("display" in c["channels"] for c in st["clients"]):
            return st
        if time.monotonic() > deadline:
            raise AssertionError(f"status shows {count} clients, not {n}: {st}")
        time.sleep(0.2)


def test_real_helper_control(libvirtd, guest, paths, helper_binary, test_client):
    """set-ticket through the helper's control socket keeps the connected
    viewer (or drops it with --disconnect); status lists the client; a
    control peer hears Leaving when the helper goes."""
    from gi.repository import Gio, GLib

    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name, st = attached(libvirtd, env, guest, "qs-test-launch-ctl", "--no-supervise")
        port = st["port"]
        old = env.dir / "old-ticket"
        old.write_text(client_ticket(env, name).read_text())
        old.chmod(0o600)

        viewer = start_client(test_client, "--port", port, "--ticket-file", old,
                              "sleep", "6000", "info")
        status = wait_clients(env, name, 1)
        c = status["clients"][0]
        assert c["address"].startswith("127.0.0.1:") and c["tls"] is False, c
        assert {"main", "display"} <= set(c["channels"]), c
        assert abs(c["since"] - time.time()) < 60, c
        assert c["rights"] == "control" and c["bytes"] > 0, c
        text = env.run("status", name, check=True).stdout
        assert f"clients: {c['address']} (" in text, text

        expiry = int(time.time()) + 600
        res = env.run("set-ticket", name, "--expires", f"@{expiry}", check=True)
        assert "the connected viewer was kept" in res.stdout, res.stdout
        assert f'ticket-expiry="{expiry}"' in metadata(libvirtd, name)
        assert env.state(name)["helper_pid"] == st["helper_pid"]
        new = client_ticket(env, name)
        assert new.read_text() != old.read_text()
        res = run_client(test_client, "--port", port, "--ticket-file", old, "info")
        assert res.returncode == 5, (res.returncode, res.stderr[-1000:])
        # the viewer linked with the old ticket stays to the end of its sleep
        out, err = viewer.communicate(timeout=40)
        assert viewer.returncode == 0, (viewer.returncode, err[-2000:])
        assert json.loads(out.strip().splitlines()[-1])["surface"], out
        res = run_client(test_client, "--port", port, "--ticket-file", new, "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-1000:])

        # Two viewers at once; `disconnect` ends one, by its address.
        first = start_client(test_client, "--port", port, "--ticket-file", new,
                             "sleep", "20000")
        wait_clients(env, name, 1)
        viewer = start_client(test_client, "--port", port, "--ticket-file", new,
                              "sleep", "20000")
        st2 = wait_clients(env, name, 2)
        gone = st2["clients"][0]["address"]
        res = env.run("disconnect", name, gone, check=True)
        assert f"the viewer at {gone} was disconnected" in res.stdout, res.stdout
        first.wait(timeout=10)
        assert first.returncode == 7, first.returncode
        st1 = wait_clients(env, name, 1)
        assert st1["clients"][0]["address"] != gone, st1
        res = env.run("disconnect", name, gone)
        assert res.returncode == 1 and "no connected client is linked from" in res.stderr, res
        res = env.run("set-ticket", name, "--disconnect", check=True)
        assert "disconnected" in res.stdout, res.stdout
        viewer.wait(timeout=10)
        assert viewer.returncode == 7, viewer.returncode
        wait_clients(env, name, 0)

        # set-ticket returns once the launcher has published the new expiry
        # (it once returned before, and libvirt's metadata lagged): with the
        # launcher stopped it waits; libvirt tells the new expiry once it
        # has returned.
        expiry = int(time.time()) + 900
        monitor = env.state(name)["monitor_pid"]
        done = []
        waiter = threading.Thread(target=lambda: done.append(
            env.run("set-ticket", name, "--expires", f"@{expiry}", timeout=30)))
        os.kill(monitor, signal.SIGSTOP)
        try:
            waiter.start()
            waiter.join(1.0)
            assert not done, f"set-ticket returned before the launcher took the ticket: {done}"
        finally:
            os.kill(monitor, signal.SIGCONT)
        waiter.join(20)
        assert done and done[0].returncode == 0, done
        assert f'ticket-expiry="{expiry}"' in metadata(libvirtd, name)

        # Any root peer may call it; the helper says why it leaves.
        ctl = env.run_dir / f"{name}.ctl"
        conn = Gio.DBusConnection.new_for_address_sync(
            f"unix:path={ctl}", Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT,
            None, None)
        reply = conn.call_sync(None, "/org/qemuspice/Helper1", "org.qemuspice.Helper1",
                               "GetStatus", None, GLib.VariantType("(a{sv})"),
                               Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
        assert reply["pid"] == st["helper_pid"] and reply["clients"] == []
        heard = []
        conn.signal_subscribe(None, "org.qemuspice.Helper1", "Leaving",
                              "/org/qemuspice/Helper1", None,
                              Gio.DBusSignalFlags.NONE,
                              lambda *a: heard.append(a[5].unpack()[0]))
        env.run("detach", name, check=True)
        ctx = GLib.MainContext.default()
        deadline = time.monotonic() + 5
        while not heard and time.monotonic() < deadline:
            ctx.iteration(False) or time.sleep(0.02)
        assert heard == ["signal received"], heard
    finally:
        env.cleanup()


def test_real_helper_killed_and_restarted(libvirtd, guest, paths, helper_binary, test_client):
    """Issue I, point 3: the helper SIGKILLed during a session. The client
    sees its channels close; the launcher's supervisor starts a new helper on
    the same listening socket with the same ticket and updates the reported
    console; the client, connecting again, gets qemu's exact picture."""
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name, st = attached(libvirtd, env, guest, "qs-test-launch-kill", "--supervise")
        old, port = st["helper_pid"], st["port"]
        ticket = client_ticket(env, name)
        viewer = start_client(test_client, "--port", port, "--ticket-file", ticket,
                              "info", "sleep", "60000")
        wait_clients(env, name, 1)
        env.expect_helper_end(-signal.SIGKILL)
        os.kill(old, signal.SIGKILL)
        out, err = viewer.communicate(timeout=40)
        assert viewer.returncode != 0, "the client did not see the helper go"
        new = wait_for(lambda: (s := env.state(name)) and s["helper_pid"] != old
                       and s.get("restarts") == 1 and s, 20, "the restarted helper")
        assert pid_alive(new["helper_pid"]) and new["port"] == port, new
        meta = metadata(libvirtd, name)
        assert f'pid="{new["helper_pid"]}"' in meta and 'restarts="1"' in meta, meta
        # the same ticket still opens the console (the supervisor hands it on)
        assert client_ticket(env, name).read_text() == ticket.read_text()
        check_exact_picture(libvirtd, env, name, port, test_client)
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_real_helper_tokens(libvirtd, guest, paths, helper_binary, test_client):
    """Signed console tokens: the launcher mints them from the host's master
    key file ([ticket] token-keys); the helper checks them with the keys the
    launcher derived for this VM only; the reference program
    (docs/examples/mint_token.py) mints the same; SIGHUP rotates the keys of
    the running helper; detach removes its key file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "mint_token", Path(__file__).resolve().parents[2] / "docs" / "examples" / "mint_token.py")
    mint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mint)
    master = {1: os.urandom(32), 2: os.urandom(32)}
    keys = None

    def write_master(ids):
        keys.write_text("[master-keys]\n" +
                        "".join(f"{i}={master[i].hex()}\n" for i in ids))

    def client_with(text):
        path = env.dir / "token-ticket"
        path.write_text(text + "\n")
        return run_client(test_client, "--port", port, "--ticket-file", path, "info")

    env = LauncherEnv(paths, helper=helper_binary)
    keys = env.dir / "token-master.keys"
    write_master([1])
    keys.chmod(0o600)
    env.write_conf(ticket__token_keys=keys)
    try:
        name, st = attached(libvirtd, env, guest, "qs-test-launch-tok", "--no-supervise")
        port = st["port"]
        assert f"{name}.tokens" in env.run_files()

        view = env.run("token", name, "--rights", "view", "--ttl", "120", check=True)
        text = view.stdout.strip()
        assert text.startswith("qst.") and len(text) == 51, text
        viewer = start_client(test_client, "--port", port, "--ticket-file",
                              ticket_for(env, text), "sleep", "8000", "info")
        status = wait_clients(env, name, 1)
        assert status["clients"][0]["rights"] == "view", status
        out, err = viewer.communicate(timeout=40)
        assert viewer.returncode == 0, (viewer.returncode, err[-2000:])
        wait_log(env, name, "(view only) (token)")

        # With no view-only ticket, console --rights view hands out a view token.
        uri = env.run("console", name, "--rights", "view", "--ttl", "60", check=True).stdout
        assert "password=qst." in uri, uri

        res = client_with(env.run("token", name, "--single-use", check=True).stdout.strip())
        assert res.returncode == 0, (res.returncode, res.stderr[-1000:], env.log(name)[-2000:])
        # The reference program's token, from the same master key and UUID.
        ref = mint.mint(mint.derive_vm_key(master[1], st["uuid"]), st["uuid"], 1,
                        int(time.time()) + 60)
        assert client_with(ref).returncode == 0
        # The fixed ticket keeps working beside the tokens.
        res = run_client(test_client, "--port", port, "--ticket-file",
                         client_ticket(env, name), "info")
        assert res.returncode == 0, res.stderr[-1000:]

        # Rotation: key 2 added (new tokens use the highest id), then key 1
        # retired, each taken by the running helper on the launcher's SIGHUP.
        write_master([1, 2])
        os.kill(st["monitor_pid"], signal.SIGHUP)
        wait_log(env, name, "control: new token keys")
        two = env.run("token", name, check=True).stdout.strip()
        assert client_with(two).returncode == 0
        write_master([2])
        os.kill(st["monitor_pid"], signal.SIGHUP)
        deadline = time.monotonic() + 15
        while env.log(name).count("control: new token keys") < 2:
            assert time.monotonic() < deadline, env.log(name)[-2000:]
            time.sleep(0.1)
        assert client_with(ref).returncode == 5
        wait_log(env, name, "token with an unknown key id")
        assert client_with(two).returncode == 0
        assert env.state(name)["helper_pid"] == st["helper_pid"]

        # Bad requests: one clear line each.
        res = env.run("token", name, "--rights", "admin")
        assert res.returncode == 2 and "--rights must be view or control" in res.stderr
        res = env.run("token", name, "--ttl", "0")
        assert res.returncode == 2 and "--ttl must be" in res.stderr
        res = env.run("token", name, "--key-id", "1")
        assert res.returncode == 1 and "no master key with id 1" in res.stderr
        env.run("detach", name, check=True)
        assert f"{name}.tokens" not in env.run_files()
    finally:
        env.cleanup()


def ticket_for(env, text):
    path = env.dir / "token-view"
    path.write_text(text + "\n")
    return path


def test_token_without_token_keys(paths):
    env = LauncherEnv(paths)
    try:
        res = env.run("token", "any-domain")
        assert res.returncode == 2, res.stderr
        assert "no [ticket] token-keys" in res.stderr, res.stderr
        env.write_conf(ticket__token_keys="relative/path")
        res = env.run("token", "any-domain")
        assert res.returncode == 1 and "token-keys" in res.stderr, res.stderr
    finally:
        env.cleanup()


def test_real_helper_proxy_only(libvirtd, guest, paths, helper_binary, test_client):
    """[listen] proxy-only: no ticket at all, said in both logs; the console
    carries no password; a client without one gets the picture; set-ticket
    and token keys are refused with one line."""
    env = LauncherEnv(paths, helper=helper_binary, listen__proxy_only="true")
    try:
        name = start_domain(libvirtd, "qs-test-launch-proxy", guest, env.dir,
                            persistent=False)
        res = env.run("attach", name, "--no-supervise", check=True)
        assert "proxy-only" in res.stderr + env.log(name), res.stderr
        st = env.state(name)
        assert st["ticket_file"] is None and f"{name}.ticket" not in env.run_files()
        uri = env.run("console", name, check=True).stdout.strip()
        assert uri.startswith("spice://") and "password" not in uri, uri
        wait_guest_ready(env, name)
        res = run_client(test_client, "--port", st["port"], "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-1000:], env.log(name)[-2000:])
        wait_log(env, name, "no credential (--disable-ticketing --insecure)")
        check_exact_picture(libvirtd, env, name, st["port"], test_client, ticket=False)
        res = env.run("set-ticket", name)
        assert res.returncode == 1 and "proxy-only console" in res.stderr, res.stderr
        res = env.run("attach", name, "--ticket-file", env.dir / "x")
        assert res.returncode != 0
        env.run("detach", name, check=True)
        env.write_conf(listen__proxy_only="true", ticket__token_keys=env.dir / "k")
        res = env.run("status")
        assert res.returncode == 1 and "proxy-only" in res.stderr, res.stderr
    finally:
        env.cleanup()


def test_real_helper_view_rights(libvirtd, guest, paths, helper_binary, test_client):
    """Issue L from the launcher: `set-ticket --rights view` gives the running
    helper a view-only ticket and keeps it for restarts; `console --rights
    view` reports it; its viewer is listed as view; the control ticket's
    password is refused for it; detach removes it."""
    from urllib.parse import parse_qs, urlparse

    def password_of(uri):
        return parse_qs(urlparse(uri).query)["password"][0]

    def linked_rights(password):
        path = env.dir / "view-client"
        path.write_text(password + "\n")
        viewer = start_client(test_client, "--port", port, "--ticket-file", path,
                              "sleep", "4000", "info")
        rights = wait_clients(env, name, 1)["clients"][0]["rights"]
        out, err = viewer.communicate(timeout=40)
        assert viewer.returncode == 0, (viewer.returncode, err[-2000:])
        wait_clients(env, name, 0)
        return rights

    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name, st = attached(libvirtd, env, guest, "qs-test-launch-view", "--supervise")
        port = st["port"]
        res = env.run("console", name, "--rights", "view")
        assert res.returncode == 1 and "no view-only ticket" in res.stderr, res.stderr
        res = env.run("set-ticket", name, "--rights", "view", "--expires", "+600", check=True)
        assert "new view-only ticket" in res.stdout, res.stdout
        view_uri = env.run("console", name, "--rights", "view", check=True).stdout.strip()
        control_uri = env.run("console", name, check=True).stdout.strip()
        assert password_of(view_uri) != password_of(control_uri)
        assert linked_rights(password_of(view_uri)) == "view"
        assert linked_rights(password_of(control_uri)) == "control"
        # The control ticket's own password cannot become the view one.
        res = env.run("set-ticket", name, "--rights", "view", "--ticket-file",
                      client_ticket(env, name))
        assert res.returncode == 1 and "must differ" in res.stderr, res.stderr
        res = env.run("set-ticket", name, "--rights", "admin")
        assert res.returncode == 2 and "--rights must be view or control" in res.stderr
        # A restarted helper keeps the view-only ticket.
        env.expect_helper_end(-signal.SIGKILL)
        os.kill(st["helper_pid"], signal.SIGKILL)
        wait_for(lambda: (s := env.state(name)) and s["helper_pid"] != st["helper_pid"]
                 and s.get("restarts") == 1 and pid_alive(s["helper_pid"]), 20,
                 "the restarted helper")
        wait_log(env, name, "credentials: ticket, view-only ticket")
        assert linked_rights(password_of(view_uri)) == "view"
        env.run("detach", name, check=True)
        assert f"{name}.view-ticket" not in env.run_files()
    finally:
        env.cleanup()
