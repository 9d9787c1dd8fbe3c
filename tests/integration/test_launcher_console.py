# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue V: handing a console to someone. 'qemu-spice-launcher console
DOMAIN --format url' prints a link to the helper's own console page with a
fresh single-use token after '#': headless Chromium opens the printed link
on the plain port and on the TLS port (the test CA trusted) and the canvas
equals qemu's screendump; the same link again, and an expired one, are
refused in the page's words and one helper log line each; --qr draws the
same link (zbarimg reads it back). '--format vv' hands remote-viewer a
single-use token instead of the ticket, with the TLS console's CA,
host-subject and secure-channels: remote-viewer (Xvfb) shows the guest,
and with a wrong host-subject it refuses the server before the token is
spent. Real libvirtd, qemu, helper, Chromium and remote-viewer."""

import os
import re
import subprocess
import time

import pytest
from PIL import Image

from browser_support import Browser
from harness import Xvfb
from serve_support import SUBJECT, make_pki, require_tool, run_client
from test_console_page import open_exact, open_refused, raw_get
from test_launcher_libvirt import LauncherEnv, start_domain
from test_launcher_spice import wait_guest_ready, wait_log
from viewer_support import remote_viewer_sight


# spice-gtk's warning when the server's certificate is not the .vv's
# host-subject (spice-common's ssl_verify.c).
REFUSED_SUBJECT = "subject 'C=XX,O=qemu-spice,CN=other' verification failed"


def token_env(paths, helper_binary, **conf):
    """A launcher environment whose host mints tokens."""
    env = LauncherEnv(paths, helper=helper_binary)
    keys = env.dir / "token-master.keys"
    keys.write_text(f"[master-keys]\n1={os.urandom(32).hex()}\n")
    keys.chmod(0o600)
    env.write_conf(ticket__token_keys=keys, **conf)
    return env


def still_picture(libvirtd, env, name):
    """Suspends the domain; (w, h, RGB) of qemu's screendump (virsh's
    lossless PNG)."""
    wait_guest_ready(env, name)
    libvirtd.virsh("suspend", name)
    ref = env.dir / f"{name}-ref.png"
    libvirtd.virsh("screenshot", name, str(ref))
    with Image.open(ref) as img:
        img = img.convert("RGB")
        return img.width, img.height, img.tobytes()


def printed_link(env, name, *args):
    res = env.run("console", name, "--format", "url", *args, check=True)
    link = res.stdout.splitlines()[0]
    assert re.fullmatch(r"https?://127\.0\.0\.1:\d+/#qst\.[A-Za-z0-9_-]{47}", link), link
    return link, res.stdout


def qr_text_to_png(text, path, scale=8):
    """The half-block QR code as a picture (light modules white)."""
    rows = [line for line in text.splitlines() if line]
    top = {"\u2588": (1, 1), "\u2580": (1, 0), "\u2584": (0, 1), " ": (0, 0)}
    width = len(rows[0])
    img = Image.new("L", (width, 2 * len(rows)), 0)
    for y, line in enumerate(rows):
        assert len(line) == width, repr(line)
        for x, ch in enumerate(line):
            a, b = top[ch]
            img.putpixel((x, 2 * y), 255 * a)
            img.putpixel((x, 2 * y + 1), 255 * b)
    img.resize((width * scale, 2 * len(rows) * scale), Image.NEAREST).save(path)


@pytest.mark.timeout(600)
def test_printed_link_in_browser(libvirtd, guest, paths, helper_binary, tmp_path):
    zbarimg = require_tool("zbarimg", "zbar-tools")
    env = token_env(paths, helper_binary)
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    try:
        # The plain port.
        name = start_domain(libvirtd, "qs-test-console-url", guest, env.dir, persistent=False)
        env.run("attach", name, "--no-supervise", check=True)
        st = env.state(name)
        w, h, ref = still_picture(libvirtd, env, name)
        link, _ = printed_link(env, name)
        assert link.startswith(f"http://127.0.0.1:{st['port']}/#qst."), link
        with Browser(log_path=tmp_path / "chromium.log") as b:
            open_exact(b, link, (w, h), ref, lambda: env.log(name))
            b.open("about:blank")
            open_refused(b, link, "used")
            wait_log(env, name, "token refused: single-use token already used")
            expiring, _ = printed_link(env, name, "--ttl", "1", "--rights", "view")
            time.sleep(2.2)
            open_refused(b, expiring, "expired")
            wait_log(env, name, "token refused: expired token")
        log = env.log(name)
        assert log.count("console page for ") == 2, log[-3000:]
        assert link.split("#qst.")[1] not in log and expiring.split("#qst.")[1] not in log
        status, _, body = raw_get(st["port"], "/etc/passwd")
        assert status == 404 and body == b"not found\n"
        # --qr: the same link, drawn; a reader gets it back whole.
        link, out = printed_link(env, name, "--qr")
        qr_text_to_png(out.split("\n", 1)[1], tmp_path / "qr.png")
        read = subprocess.run([zbarimg, "--raw", "-q", str(tmp_path / "qr.png")],
                              capture_output=True, text=True, timeout=30)
        assert read.stdout.strip() == link, (read.returncode, read.stdout, read.stderr)
        env.run("detach", name, check=True)
        libvirtd.virsh("destroy", name)

        # The TLS port only: https and wss, the test CA trusted.
        env.write_conf(ticket__token_keys=env.dir / "token-master.keys", listen__plain="false",
                       listen__tls="true", listen__tls_dir=str(pki))
        name = start_domain(libvirtd, "qs-test-console-urltls", guest, env.dir,
                            persistent=False)
        env.run("attach", name, "--no-supervise", check=True)
        st = env.state(name)
        w, h, ref = still_picture(libvirtd, env, name)
        link, _ = printed_link(env, name)
        assert link.startswith(f"https://127.0.0.1:{st['tls_port']}/#qst."), link
        with Browser(ca_file=pki / "ca-cert.pem", log_path=tmp_path / "chromium-tls.log") as b:
            open_exact(b, link, (w, h), ref, lambda: env.log(name))
            b.open("about:blank")
            open_refused(b, link, "used")
            wait_log(env, name, "token refused: single-use token already used")
        assert "(TLS) (WebSocket) (token)" in env.log(name)
        env.run("detach", name, check=True)
    finally:
        env.cleanup()


def test_url_needs_tokens(libvirtd, guest, paths, helper_binary):
    """Without token keys the link is refused by name: a link never carries
    the ticket; --qr goes with url only."""
    env = LauncherEnv(paths, helper=helper_binary)
    try:
        name = start_domain(libvirtd, "qs-test-console-notok", guest, env.dir,
                            persistent=False)
        env.run("attach", name, "--no-supervise", check=True)
        res = env.run("console", name, "--format", "url")
        assert res.returncode == 1 and "mints no tokens" in res.stderr, res.stderr
        assert res.stdout == ""
        res = env.run("console", name, "--format", "vv", "--qr")
        assert res.returncode == 2 and "--qr goes with --format url" in res.stderr, res.stderr
        # A .vv of a console without tokens still carries its ticket.
        vv = env.run("console", name, "--format", "vv", check=True).stdout
        ticket = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        assert f"password={ticket}\n" in vv and "delete-this-file" not in vv
    finally:
        env.cleanup()


def vv_value(text, key):
    m = re.search(rf"^{key}=(.*)$", text, re.M)
    return m.group(1) if m else None


@pytest.mark.timeout(420)
def test_vv_token_tls_host_subject(libvirtd, guest, paths, helper_binary, test_client,
                                   tmp_path):
    viewer = require_tool("remote-viewer", "virt-viewer")
    require_tool("import", "imagemagick")
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    env = token_env(paths, helper_binary, listen__plain="false", listen__tls="true",
                    listen__tls_dir=str(pki))
    try:
        name = start_domain(libvirtd, "qs-test-console-vv", guest, env.dir, persistent=False)
        env.run("attach", name, "--no-supervise", check=True)
        st = env.state(name)
        w, h, ref = still_picture(libvirtd, env, name)
        text = env.run("console", name, "--format", "vv", "--rights", "view",
                       check=True).stdout
        # A token, not the ticket; the certificate's subject in its order.
        ticket = (env.run_dir / f"{name}.ticket").read_text().splitlines()[0]
        assert ticket not in text
        assert re.fullmatch(r"qst\.[A-Za-z0-9_-]{47}", vv_value(text, "password")), text
        assert vv_value(text, "host-subject") == SUBJECT, text
        assert vv_value(text, "tls-port") == str(st["tls_port"]) and not vv_value(text, "port")
        assert vv_value(text, "secure-channels").split(";")[:4] == \
            ["main", "display", "inputs", "cursor"], text
        assert "-----BEGIN CERTIFICATE-----\\n" in vv_value(text, "ca")
        vv = tmp_path / "console.vv"
        vv.write_text(text)
        vv.chmod(0o600)
        with Xvfb(screen="1600x1000x24") as x:
            best = remote_viewer_sight(viewer, vv, x, w, h, ref, tmp_path)
        assert best and best[2] >= 0.99, (best, (tmp_path / "remote-viewer.log").read_text()
                                          [-2000:], env.log(name)[-2000:])
        assert "(TLS) (view only) (token)" in env.log(name)

        # Another .vv (another token), its host-subject not the server's:
        # remote-viewer refuses the server, and the token is never spent.
        text = env.run("console", name, "--format", "vv", check=True).stdout
        wrong = text.replace(f"host-subject={SUBJECT}", "host-subject=C=XX,O=qemu-spice,CN=other")
        assert wrong != text
        vv.write_text(wrong)
        linked = env.log(name).count("main channel 1:0 linked")
        rv_log = tmp_path / "remote-viewer-wrong.log"
        with Xvfb(screen="1600x1000x24") as x, open(rv_log, "wb") as log:
            rv = subprocess.Popen([viewer, str(vv)],
                                  env=dict(os.environ, **x.env(), GDK_BACKEND="x11",
                                           NO_AT_BRIDGE="1"),
                                  stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
            try:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and \
                        REFUSED_SUBJECT not in rv_log.read_text(errors="replace"):
                    time.sleep(0.5)
            finally:
                if rv.poll() is None:
                    os.killpg(rv.pid, 15)
                    rv.wait(timeout=10)
        seen = rv_log.read_text(errors="replace")
        assert REFUSED_SUBJECT in seen, seen[-3000:]
        assert env.log(name).count("main channel 1:0 linked") == linked, env.log(name)[-2000:]
        # The token is still good: the right subject links with it.
        token = vv_value(text, "password")
        path = tmp_path / "token"
        path.write_text(token + "\n")
        res = run_client(test_client, "--tls-port", st["tls_port"], "--host", "127.0.0.1",
                         "--ca-file", pki / "ca-cert.pem", "--host-subject", SUBJECT,
                         "--ticket-file", path, "info", check=False)
        assert res.returncode == 0, (res.returncode, res.stderr[-2000:], env.log(name)[-2000:])
        env.run("detach", name, check=True)
    finally:
        env.cleanup()
