# SPDX-License-Identifier: GPL-2.0-or-later
"""The launcher with the real qemu-spice helper: a SPICE client (qs-test-client)
connects to the port the launcher reports, with the ticket it made, and gets
the guest's picture. Needs the helper to serve SPICE on inherited listening
sockets (--listen-fd, --ticket-fd)."""

import os
import re
import subprocess
import time

from PIL import Image

from harness.qemu import parse_ppm
from test_launcher_libvirt import LauncherEnv, make_tls_dir, start_domain


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


def run_client(test_client, *args, timeout=60):
    return subprocess.run([str(test_client), "--timeout", "30", *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout)


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


def test_real_helper_tls(libvirtd, guest, paths, helper_binary, test_client):
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        tls = make_tls_dir(env.dir / "tls")
        env.write_conf(listen__tls="true", listen__tls_dir=str(tls),
                       listen__secure_channels="all")
        name = start_domain(libvirtd, "qs-test-launch-spicetls", guest, env.dir,
                            persistent=False)
        res = env.run("attach", name, "--no-supervise")
        assert res.returncode == 0, res.stderr
        st = env.state(name)
        res = run_client(test_client, "--tls-port", st["tls_port"], "--ca-file",
                         tls / "ca-cert.pem", "--host", "127.0.0.1", "--ticket-file",
                         client_ticket(env, name), "info")
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])
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
