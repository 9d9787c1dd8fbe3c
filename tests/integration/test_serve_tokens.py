# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue M: signed console tokens, minted by the reference program
(docs/examples/mint_token.py, a second implementation of the format) and
checked by OUR helper, seen from qs-test-client (spice-gtk; exit 5 when the
ticket is refused) and from the helper's log."""

import importlib.util
import os
import time
import uuid
from pathlib import Path

import pytest

from harness import exits
from harness.qemu import parse_ppm
from serve_support import READY_TIMEOUT, error_line, run_client, serving, ticket_file

ROOT = Path(__file__).resolve().parents[2]
VM = str(uuid.UUID("6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b"))
OTHER_VM = "0a0b0c0d-2b1c-4f3e-9a7d-0c5b1e2f3a4b"


def mint_module():
    spec = importlib.util.spec_from_file_location(
        "mint_token", ROOT / "docs" / "examples" / "mint_token.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MINT = mint_module()
MASTER = {1: os.urandom(32), 2: os.urandom(32), 3: os.urandom(32)}


def helper_keys(tmp_path, ids, name="keys"):
    """The helper's key file for VM, made the way mint_token.py's
    helper-keys command makes it."""
    lines = ["[tokens]", f"vm={VM}"]
    lines += [f"key-{i}={MINT.derive_vm_key(MASTER[i], VM).hex()}" for i in ids]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)
    return path


def token(key_id=2, vm=VM, ttl=300, **kw):
    return MINT.mint(MINT.derive_vm_key(MASTER[key_id], vm), vm, key_id,
                     int(time.time()) + ttl, **kw)


def client_with(test_client, tmp_path, port, text, *args, check=True, name="t"):
    return run_client(test_client, "--port", port,
                      "--ticket-file", ticket_file(tmp_path, name, text), *args,
                      check=check)


def assert_refused(test_client, tmp_path, port, h, text, log_reason):
    res = client_with(test_client, tmp_path, port, text, "info", check=False)
    assert res.returncode == 5, res.stderr
    assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)
    deadline = time.monotonic() + 5
    while log_reason not in h.stderr() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log_reason in h.stderr(), h.stderr()[-2000:]
    # The token itself never reaches the log.
    assert text[4:] not in h.stderr()


@pytest.fixture
def idle_qemu(qemu_factory, guest):
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


@pytest.mark.timeout(240)
def test_tokens_refusals_and_rights(idle_qemu, helper_binary, test_client, tmp_path):
    keys = helper_keys(tmp_path, [1, 2])
    fixed = ticket_file(tmp_path, "fixed", "fixed-ticket")
    with serving(helper_binary, idle_qemu, "--ticket-file", fixed,
                 "--token-keys-file", keys) as (h, port):
        # A control token from the reference program; and from the other key
        # id at the same time (rotation: both are valid until 1 is retired).
        for kid in (1, 2):
            res = client_with(test_client, tmp_path, port, token(key_id=kid), "info")
            assert '"display"' in res.stdout
        assert "linked from" in h.stderr() and "(token)" in h.stderr()
        # The fixed ticket keeps working beside tokens.
        run_client(test_client, "--port", port, "--ticket-file", fixed, "info")

        # A view token links a view-only session.
        res = client_with(test_client, tmp_path, port, token(view_only=True), "info")
        assert '"display"' in res.stdout
        assert "(view only) (token)" in h.stderr()

        # Each refusal: the same auth error, its own log line.
        assert_refused(test_client, tmp_path, port, h, token(ttl=-5), "expired token")
        assert_refused(test_client, tmp_path, port, h, token(vm=OTHER_VM),
                       "token for another VM")
        assert_refused(test_client, tmp_path, port, h, token(key_id=3),
                       "token with an unknown key id")
        good = token()
        tampered = good[:12] + ("B" if good[12] == "A" else "A") + good[13:]
        assert_refused(test_client, tmp_path, port, h, tampered,
                       "token with a wrong MAC")
        once = token(single_use=True)
        res = client_with(test_client, tmp_path, port, once, "info")
        assert '"display"' in res.stdout
        assert_refused(test_client, tmp_path, port, h, once,
                       "single-use token already used")
        # The refusals did not disturb the server.
        run_client(test_client, "--port", port, "--ticket-file", fixed, "info")


@pytest.mark.timeout(240)
def test_token_only_console_exact_picture(qemu_factory, guest, helper_binary,
                                          test_client, tmp_path):
    """No fixed ticket at all: a token lets spice-gtk in, and it gets qemu's
    exact picture."""
    q = qemu_factory(flavour="host", vga="virtio", mode="idle")
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    keys = helper_keys(tmp_path, [2])
    with serving(helper_binary, q, "--token-keys-file", keys) as (h, port):
        text = token()
        client_with(test_client, tmp_path, port, text, "--settle", "500", "info")
        q.stop()
        w, hgt, reference = q.screendump()
        assert (w, hgt) == (int(ready["w"]), int(ready["h"]))
        shot = tmp_path / "shot.ppm"
        client_with(test_client, tmp_path, port, text, "--settle", "700",
                    "--expect-size", f"{w}x{hgt}", "screenshot", shot)
        sw, sh, pixels = parse_ppm(shot.read_bytes())
        assert (sw, sh) == (w, hgt)
        assert pixels == reference
        assert "credentials: no fixed ticket, signed tokens" in h.stderr()
        # Without a fixed ticket, a password is nothing.
        res = client_with(test_client, tmp_path, port, "fixed-ticket", "info",
                          check=False, name="pw")
        assert res.returncode == 5, res.stderr


@pytest.mark.timeout(60)
def test_token_option_errors(helper_binary, tmp_path):
    """Bad key files and combinations: one clear line each, exit 2 before
    anything is served."""
    bad = tmp_path / "bad"
    bad.write_text(f"[tokens]\nvm={VM}\nkey-1=abcd\n")
    cases = [
        (["--token-keys-file", bad], "key-1 is not 64 hex digits"),
        (["--token-keys-file", tmp_path / "missing"], "missing"),
        (["--token-keys-file", helper_keys(tmp_path, [1]), "--disable-ticketing"],
         "--disable-ticketing excludes"),
    ]
    for extra, want in cases:
        res = exits.run([helper_binary, "--listen", "127.0.0.1:0",
                         "--dbus-address", "unix:path=/nonexistent", *extra],
                        "the helper", expect=2, timeout=20)
        assert want in res.stderr, res.stderr
        assert "abcd" not in res.stderr
