#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A headless spice-gtk client (SpiceClientGLib) for test-agent-client.c: it
# copies TEXT_A (selection 0) and answers the server's request for it; then,
# when the server's side grabs, it asks for that text and prints it.
import sys

import gi
gi.require_version('SpiceClientGLib', '2.0')
from gi.repository import GLib, GObject, SpiceClientGLib as Spice  # noqa: E402

UTF8_TEXT = 1
CAP_CLIPBOARD_BY_DEMAND = 5
host, port, text_a_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
TEXT_A = ''.join(chr(ord('a') + i % 26) for i in range(text_a_len)).encode()
loop = GLib.MainLoop()
session = Spice.Session(host=host, port=port)
state = {'grabbed': False}


def say(*words):
    print(*words, flush=True)


def on_agent_update(main):
    if not main.get_property('agent-connected'):
        return
    # Grabs are dropped by spice-gtk until the agent's caps arrived.
    if main.agent_test_capability(CAP_CLIPBOARD_BY_DEMAND) and not state['grabbed']:
        state['grabbed'] = True
        say('agent-caps')
        main.clipboard_selection_grab(0, [UTF8_TEXT])


def on_request(main, selection, vtype):
    say('request', selection, vtype)
    main.clipboard_selection_notify(selection, vtype, TEXT_A)
    return True


def on_grab(main, selection, types, ntypes):
    say('grab', selection, *types)
    main.clipboard_selection_request(selection, UTF8_TEXT)
    return True


def on_data(main, selection, vtype, data, size):
    data = bytes(data)
    # The server's text: "b".."z" repeated; print its length and a checksum.
    say('data', selection, vtype, len(data), sum(data) % 65521, data[:8].decode())
    GLib.timeout_add(100, loop.quit)


def on_channel(sess, channel):
    if isinstance(channel, Spice.MainChannel):
        GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
        GObject.Object.connect(channel, 'main-clipboard-selection-request', on_request)
        GObject.Object.connect(channel, 'main-clipboard-selection-grab', on_grab)
        GObject.Object.connect(channel, 'main-clipboard-selection', on_data)
    channel.connect()


GObject.Object.connect(session, 'channel-new', on_channel)
session.connect()
GLib.timeout_add(15000, loop.quit)
loop.run()
session.disconnect()
