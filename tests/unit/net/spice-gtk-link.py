#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Links spice-gtk (SpiceClientGLib through GObject introspection) to the real
# net server: the right password must get the main channel past the link
# stage, a wrong one must end in an authentication error. Then with TLS: main
# is a secure channel, so the plain port answers NEED_SECURED and spice-gtk
# must reconnect on the TLS port (verifying our certificate) and link there.
# Usage: spice-gtk-link.py NET_LINK_SERVER

import os
import subprocess
import sys
import tempfile

try:
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice
except (ImportError, ValueError) as e:
    print('FAIL: SpiceClientGLib is missing (gir1.2-spiceclientglib-2.0):', e)
    sys.exit(1)

PASSWORD = 'Correct-Horse-1'


def start_server(binary, ticket_path, extra=()):
    proc = subprocess.Popen([binary, '--listen', '127.0.0.1:0',
                             '--ticket-file', ticket_path] + list(extra),
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith('port '):
        proc.kill()
        raise SystemExit('server did not start: %r' % line)
    words = line.split()
    return proc, int(words[1]), int(words[3])


def make_cert(tls_dir):
    """A self-signed CA-less server certificate for 127.0.0.1."""
    key = os.path.join(tls_dir, 'server-key.pem')
    cert = os.path.join(tls_dir, 'server-cert.pem')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                    'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
                    '-subj', '/CN=127.0.0.1', '-addext',
                    'subjectAltName=IP:127.0.0.1', '-keyout', key,
                    '-out', cert], check=True, capture_output=True)
    # Our self-signed certificate is its own CA for the client.
    with open(cert) as src, \
            open(os.path.join(tls_dir, 'ca-cert.pem'), 'w') as dst:
        dst.write(src.read())
    return cert


def try_link(port, password, tls_port=None, ca_file=None):
    """Returns the list of channel events of the main channel."""
    loop = GLib.MainLoop()
    session = Spice.Session()
    session.set_property('host', '127.0.0.1')
    session.set_property('port', str(port))
    session.set_property('password', password)
    if tls_port:
        session.set_property('tls-port', str(tls_port))
        session.set_property('ca-file', ca_file)
    events = []

    def on_event(channel, event):
        events.append(event)
        if event != Spice.ChannelEvent.OPENED or len(events) > 1:
            loop.quit()
        else:
            # Linked: spice-gtk now waits for MAIN_INIT; give any late
            # error a moment to show, then stop.
            GLib.timeout_add(300, loop.quit)

    def on_new_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            GObject.Object.connect(channel, 'channel-event', on_event)

    GObject.Object.connect(session, 'channel-new', on_new_channel)
    GLib.timeout_add(5000, loop.quit)
    if not session.connect():
        raise SystemExit('spice_session_connect failed')
    loop.run()
    session.disconnect()
    return events


def main():
    binary = sys.argv[1]
    with tempfile.NamedTemporaryFile('w', delete=False) as f:
        f.write(PASSWORD + '\n')
        ticket = f.name
    proc, port, _ = start_server(binary, ticket)
    try:
        good = try_link(port, PASSWORD)
        print('right password:', [e.value_nick for e in good])
        bad = try_link(port, 'wrong-password')
        print('wrong password:', [e.value_nick for e in bad])
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=5)
    print(out, end='')

    with tempfile.TemporaryDirectory() as tls_dir:
        cert = make_cert(tls_dir)
        proc, port, tls_port = start_server(
            binary, ticket, ['--tls-listen', '127.0.0.1:0', '--tls-dir',
                             tls_dir, '--secure-channels', 'main'])
        try:
            secured = try_link(port, PASSWORD, tls_port, cert)
            print('secure main:', [e.value_nick for e in secured])
        finally:
            proc.terminate()
            tls_out, _ = proc.communicate(timeout=5)
    os.unlink(ticket)
    print(tls_out, end='')
    ok = True
    if good[:1] != [Spice.ChannelEvent.OPENED] or \
            Spice.ChannelEvent.ERROR_AUTH in good:
        print('FAIL: the right password did not open the main channel')
        ok = False
    if Spice.ChannelEvent.ERROR_AUTH not in bad or \
            Spice.ChannelEvent.OPENED in bad:
        print('FAIL: the wrong password was not refused as an auth error')
        ok = False
    if 'linked channel 1' not in out:
        print('FAIL: the server did not hand over a main channel')
        ok = False
    if secured[:1] != [Spice.ChannelEvent.OPENED]:
        print('FAIL: no TLS link after NEED_SECURED')
        ok = False
    if 'linked channel 1' not in tls_out:
        print('FAIL: the server did not link main over TLS')
        ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
