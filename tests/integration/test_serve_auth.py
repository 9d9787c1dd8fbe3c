# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue C: tickets, expiry, TLS and secured channels of OUR helper, seen
from qs-test-client (exit 4 link refused, 5 ticket rejected, 6 TLS)."""

import time

import pytest

from serve_support import (READY_TIMEOUT, SUBJECT, error_line, make_pki, run_client,
                           serving, ticket_file)


@pytest.fixture
def idle_qemu(shared_qemu, guest):
    # Every test here attaches a helper to the idle guest and detaches: one
    # boot for the file (shared_qemu, conftest.py), not one for each test.
    q = shared_qemu(flavour="host", vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    return q


@pytest.mark.smoke
@pytest.mark.timeout(150)
def test_ticket_right_wrong_missing(idle_qemu, helper_binary, test_client, tmp_path):
    server = ticket_file(tmp_path, "server", "right-ticket")
    right = ticket_file(tmp_path, "right", "right-ticket")
    wrong = ticket_file(tmp_path, "wrong", "wrong-ticket")
    with serving(helper_binary, idle_qemu, "--ticket-file", server) as (h, port):
        res = run_client(test_client, "--port", port, "--ticket-file", right, "info")
        assert '"display"' in res.stdout
        assert "right-ticket" not in res.stdout + res.stderr + h.stderr()

        res = run_client(test_client, "--port", port, "--ticket-file", wrong, "info",
                         check=False)
        assert res.returncode == 5, res.stderr
        line = error_line(res)
        assert line.startswith("error: auth failed: SPICE_LINK_ERR_PERMISSION_DENIED"), line
        assert res.stdout == ""

        # no ticket at all from the client
        res = run_client(test_client, "--port", port, "info", check=False)
        assert res.returncode == 5, res.stderr
        assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)

        # the refusals did not break the server for the right client
        run_client(test_client, "--port", port, "--ticket-file", right, "info")


@pytest.mark.timeout(150)
def test_expired_ticket_in_file_is_refused(idle_qemu, helper_binary, test_client, tmp_path):
    server = ticket_file(tmp_path, "server", "old-ticket",
                         expiry=f"@{int(time.time()) - 3600}")
    right = ticket_file(tmp_path, "right", "old-ticket")
    with serving(helper_binary, idle_qemu, "--ticket-file", server) as (h, port):
        res = run_client(test_client, "--port", port, "--ticket-file", right, "info",
                         check=False)
        assert res.returncode == 5, res.stderr
        assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)


@pytest.mark.timeout(150)
def test_ticket_expiry_option_refuses_after_expiry(idle_qemu, helper_binary, test_client,
                                                  tmp_path):
    server = ticket_file(tmp_path, "server", "short-ticket")
    right = ticket_file(tmp_path, "right", "short-ticket")
    expiry = int(time.time()) + 20
    with serving(helper_binary, idle_qemu, "--ticket-file", server,
                 "--ticket-expiry", f"@{expiry}") as (h, port):
        # still valid now
        run_client(test_client, "--port", port, "--ticket-file", right, "info")
        time.sleep(max(0.0, expiry - time.time()) + 1.0)
        res = run_client(test_client, "--port", port, "--ticket-file", right, "info",
                         check=False)
        assert res.returncode == 5, res.stderr
        assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)


@pytest.mark.smoke
@pytest.mark.timeout(150)
def test_tls_with_test_ca(idle_qemu, helper_binary, test_client, tmp_path):
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    ca = pki / "ca-cert.pem"
    server = ticket_file(tmp_path, "server", "tls-ticket")
    right = ticket_file(tmp_path, "right", "tls-ticket")
    with serving(helper_binary, idle_qemu, "--tls-dir", pki, "--ticket-file", server,
                 tls=True) as (h, port, tls_port):
        res = run_client(test_client, "--tls-port", tls_port, "--ca-file", ca,
                         "--host-subject", SUBJECT, "--ticket-file", right, "info")
        assert '"state":"open"' in res.stdout and '"display"' in res.stdout

        # a CA that did not sign the server certificate
        other = tmp_path / "other"
        other.mkdir()
        make_pki(other)
        res = run_client(test_client, "--tls-port", tls_port, "--ca-file",
                         other / "ca-cert.pem", "--host-subject", SUBJECT,
                         "--ticket-file", right, "info", check=False)
        assert res.returncode == 6, res.stderr
        assert error_line(res).startswith("error: tls failed")


@pytest.mark.timeout(150)
def test_secure_channels_all(idle_qemu, helper_binary, test_client, tmp_path):
    pki = tmp_path / "pki"
    pki.mkdir()
    make_pki(pki)
    ca = pki / "ca-cert.pem"
    with serving(helper_binary, idle_qemu, "--tls-dir", pki, "--disable-ticketing",
                 "--secure-channels", "all", tls=True) as (h, port, tls_port):
        res = run_client(test_client, "--port", port, "info", check=False)
        assert res.returncode == 4, res.stderr
        line = error_line(res)
        assert "NEED_SECURED" in line, line

        # with a TLS port spice-gtk follows NEED_SECURED onto it
        res = run_client(test_client, "--port", port, "--tls-port", tls_port,
                         "--ca-file", ca, "--host-subject", SUBJECT, "info")
        assert '"state":"open"' in res.stdout
