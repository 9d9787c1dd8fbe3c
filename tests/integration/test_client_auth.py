# SPDX-License-Identifier: GPL-2.0-or-later
"""qs-test-client's connection outcomes against qemu's built-in SPICE server.

Tests rely on the distinct exit statuses (3 connect, 4 link refused, 5 ticket
rejected, 6 TLS) and on the SPICE error named on stderr."""

import subprocess

import pytest

from harness.qemu import free_tcp_port

# Tests the test tooling, not qemu-spice: run once (pytest.ini, `tooling`).
pytestmark = pytest.mark.tooling

SUBJECT = "C=XX,O=qemu-spice,CN=localhost"


def run_client(binary, *args, timeout=15):
    argv = [str(binary), "--timeout", str(timeout), *map(str, args)]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout + 30)


def error_line(res):
    lines = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert lines, f"no error line (exit {res.returncode}): {res.stderr!r}"
    return lines[-1]


def ticket_file(tmp_path, name, password, newline=True):
    path = tmp_path / name
    path.write_text(password + ("\n" if newline else ""))
    path.chmod(0o600)
    return path


def spice_qemu(qemu_factory, spice_arg, extra=()):
    # The harness's display="spice" always adds disable-ticketing=on, which
    # would win over a password; these tests write their own -spice.
    return qemu_factory(guest=None, vga="std", display="none",
                        extra_args=[*extra, "-spice", spice_arg])


def test_ticket_wrong_missing_right_expired(qemu_factory, test_client, tmp_path):
    port = free_tcp_port()
    # qemu's secret object keeps a trailing newline; the client strips one
    secret = ticket_file(tmp_path, "secret", "right-ticket", newline=False)
    q = spice_qemu(qemu_factory, f"port={port},addr=127.0.0.1,password-secret=qsspw",
                   extra=["-object", f"secret,id=qsspw,file={secret}"])
    right = ticket_file(tmp_path, "right", "right-ticket")
    wrong = ticket_file(tmp_path, "wrong", "wrong-ticket")

    res = run_client(test_client, "--port", port, "--ticket-file", wrong, "info")
    assert res.returncode == 5, res.stderr
    line = error_line(res)
    assert line.startswith("error: auth failed: SPICE_LINK_ERR_PERMISSION_DENIED"), line
    assert "SPICE_CHANNEL_ERROR_AUTH" in line and res.stdout == ""

    res = run_client(test_client, "--port", port, "info")
    assert res.returncode == 5, res.stderr
    assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)

    res = run_client(test_client, "--port", port, "--ticket-file", right, "info")
    assert res.returncode == 0, res.stderr
    assert '"display"' in res.stdout
    # the ticket never appears on the command line or in the output
    assert "right-ticket" not in res.stdout + res.stderr + " ".join(map(str, res.args))

    q("expire_password", protocol="spice", time="now")
    res = run_client(test_client, "--port", port, "--ticket-file", right, "info")
    assert res.returncode == 5, res.stderr
    assert "SPICE_LINK_ERR_PERMISSION_DENIED" in error_line(res)

    # qemu keeps the expiry across set_password, so lift it again
    q("set_password", protocol="spice", password="another-ticket")
    q("expire_password", protocol="spice", time="never")
    res = run_client(test_client, "--port", port,
                     "--ticket-file", ticket_file(tmp_path, "another", "another-ticket"), "info")
    assert res.returncode == 0, res.stderr


def test_connection_refused(test_client):
    port = free_tcp_port()      # nothing listens there
    res = run_client(test_client, "--port", port, "info")
    assert res.returncode == 3, res.stderr
    line = error_line(res)
    assert line.startswith("error: connect failed (") and "Connection refused" in line, line


def test_bad_ticket_file_is_a_usage_error(test_client, tmp_path):
    res = run_client(test_client, "--port", 1, "--ticket-file", tmp_path / "absent", "info")
    assert res.returncode == 2, res.stderr
    assert "ticket file" in error_line(res)


def make_pki(directory):
    """A CA and a server certificate in qemu's x509-dir layout."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem",
            "-out", "ca-cert.pem", "-days", "2", "-subj", "/CN=qs-test-ca")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server-key.pem",
            "-out", "server.csr", "-subj", "/C=XX/O=qemu-spice/CN=localhost")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem",
            "-CAcreateserial", "-out", "server-cert.pem", "-days", "2")
    return directory


def test_tls_and_need_secured(qemu_factory, test_client, tmp_path):
    pki = make_pki(tmp_path)
    ca = pki / "ca-cert.pem"
    port, tls_port = free_tcp_port(), free_tcp_port()
    spice_qemu(qemu_factory, f"port={port},tls-port={tls_port},addr=127.0.0.1,"
               f"disable-ticketing=on,x509-dir={pki},tls-channel=main,tls-channel=display")

    # main must be secured and the client knows no TLS port
    res = run_client(test_client, "--port", port, "info")
    assert res.returncode == 4, res.stderr
    assert error_line(res).startswith("error: link failed: SPICE_LINK_ERR_NEED_SECURED")

    # with a TLS port spice-gtk follows NEED_SECURED onto it
    res = run_client(test_client, "--port", port, "--tls-port", tls_port, "--ca-file", ca,
                     "--host-subject", SUBJECT, "info")
    assert res.returncode == 0, res.stderr
    assert '"state":"open"' in res.stdout

    res = run_client(test_client, "--host", "localhost", "--tls-port", tls_port,
                     "--ca-file", ca, "info")
    assert res.returncode == 0, res.stderr

    res = run_client(test_client, "--tls-port", tls_port, "--ca-file", ca,
                     "--host-subject", "C=XX,O=someone-else,CN=localhost", "info")
    assert res.returncode == 6, res.stderr
    assert error_line(res).startswith("error: tls failed")
    assert "verification failed" in res.stderr

    # a CA that did not sign the server certificate
    other = tmp_path / "other"
    other.mkdir()
    make_pki(other)
    res = run_client(test_client, "--tls-port", tls_port, "--ca-file", other / "ca-cert.pem",
                     "--host-subject", SUBJECT, "info")
    assert res.returncode == 6, res.stderr
