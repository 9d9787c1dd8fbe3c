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


def check_exact_picture(libvirtd, env, name, port, test_client):
    """With the domain paused, the client's picture equals qemu's screendump."""
    libvirtd.virsh("suspend", name)
    try:
        # virsh picks qemu's format (PNG on 7.2 and later): lossless either way
        ref_path = env.dir / "ref.img"
        libvirtd.virsh("screenshot", name, str(ref_path))
        shot = env.dir / "exact.ppm"
        res = run_client(test_client, "--port", port, "--ticket-file",
                         client_ticket(env, name), "--settle", "500", "screenshot", shot)
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
    guest-agent channel alone, and spice-gtk's port channel gets its bytes
    echoed by the guest (test_ports.py's client); after the helper is
    killed, the supervisor's new helper has the port again."""
    import test_ports

    env = LauncherEnv(paths, helper=helper_binary)
    try:
        devices = "".join(
            f"<channel type='unix'><source mode='bind'/>"
            f"<target type='virtio' name='{port}'/></channel>"
            for port in (test_ports.PORT, "org.qemu.guest_agent.0"))
        name = start_domain(libvirtd, "qs-test-launch-ports", guest, env.dir,
                            persistent=False, devices=devices,
                            cmdline_extra=f"keydraw.echo={test_ports.PORT}")
        res = env.run("attach", name, "--supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        password = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        offered = ("offering qemu's chardevs as SPICE channels: "
                   f"{test_ports.PORT} (port channel 0, qemu's end connected)")
        wait_log(env, name, offered)
        assert "port org.qemu.guest_agent.0 not passed to the helper: it is " \
               "qemu-guest-agent's" in env.log(name), env.log(name)[-2000:]
        wait_guest_ready(env, name)
        lines, stderr = test_ports.run_client(st["port"], seed=3, password=password)
        what = f"client: {lines}\n{stderr[-2000:]}\nlog: {env.log(name)[-3000:]}"
        assert f"port {test_ports.PORT} 1" in lines, what
        received = [l.split() for l in lines if l.startswith("received ")]
        assert received and received[0][1] == str(test_ports.SIZE + test_ports.TAIL), what
        assert received[0][3] == "exact", what
        # The helper killed: the supervisor's new helper gets a new
        # connection to the port (qemu takes it once the old one closed).
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
        # its control socket on the launcher's SIGHUP; new links use them.
        fresh = make_tls_dir(env.dir / "tls-new")
        for f in ("ca-cert.pem", "server-cert.pem", "server-key.pem"):
            (tls / f).write_bytes((fresh / f).read_bytes())
        os.kill(st["monitor_pid"], signal.SIGHUP)
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
        env.run("detach", name, check=True)
        assert env.run_files() == [] and env.helper_pids() == []
    finally:
        env.cleanup()


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
        name = start_domain(libvirtd, "qs-test-launch-ctl", guest, env.dir,
                            persistent=False)
        env.run("attach", name, "--no-supervise", check=True)
        st = env.state(name)
        port = st["port"]
        wait_guest_ready(env, name)
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
        name = start_domain(libvirtd, "qs-test-launch-kill", guest, env.dir,
                            persistent=False)
        env.run("attach", name, "--supervise", check=True)
        st = env.state(name)
        old, port = st["helper_pid"], st["port"]
        wait_guest_ready(env, name)
        ticket = client_ticket(env, name)
        viewer = start_client(test_client, "--port", port, "--ticket-file", ticket,
                              "info", "sleep", "60000")
        wait_clients(env, name, 1)
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
