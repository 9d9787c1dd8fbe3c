#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A headless spice-gtk client (SpiceClientGLib) for test-stream-client.c:
# connects display only, and dumps the primary surface's pixels to files at
# two moments (mid-animation and after it), then exits. Stream events are
# in spice-gtk's debug log (SPICE_DEBUG=1 on stderr), which the test reads.
import ctypes
import sys

import gi
gi.require_version('SpiceClientGLib', '2.0')
from gi.repository import GLib, GObject, SpiceClientGLib as Spice  # noqa: E402

host, port, mid_ms, final_ms, mid_out, final_out = sys.argv[1:7]
loop = GLib.MainLoop()
session = Spice.Session(host=host, port=port)
state = {'primary': None}


def say(*words):
    print(*words, flush=True)


def dump(path):
    if not state['primary']:
        say('no-primary')
        return
    w, h, stride, imgdata = state['primary']
    with open(path, 'wb') as f:
        f.write(ctypes.string_at(imgdata, stride * h))
    say('dumped', path, w, h, stride)


def on_primary_create(ch, fmt, width, height, stride, shmid, imgdata):
    say('primary', fmt, width, height, stride)
    state['primary'] = (width, height, stride, imgdata)


def at_mid():
    dump(mid_out)
    return False


# After final_ms the client waits for the display to go quiet (no
# invalidate for QUIET_S) before its last dump and its exit: the server's
# last stream frames and the lossless repaint after them may still be on
# the way on a loaded machine, and the test counts every frame the server
# sent as handled here.
QUIET_S = 1.0
state['last_invalidate'] = 0.0


def on_invalidate(ch, x, y, w, h):
    state['last_invalidate'] = GLib.get_monotonic_time() / 1e6


def when_quiet():
    if GLib.get_monotonic_time() / 1e6 - state['last_invalidate'] < QUIET_S:
        return True
    dump(final_out)
    loop.quit()
    return False


def at_final():
    GLib.timeout_add(100, when_quiet)
    return False


def on_channel_new(sess, ch):
    if isinstance(ch, Spice.DisplayChannel):
        GObject.Object.connect(ch, 'display-primary-create', on_primary_create)
        GObject.Object.connect(ch, 'display-invalidate', on_invalidate)
        Spice.Channel.connect(ch)


GObject.Object.connect(session, 'channel-new', on_channel_new)
if not Spice.Session.connect(session):
    say('connect-failed')
    sys.exit(1)
GLib.timeout_add(int(mid_ms), at_mid)
GLib.timeout_add(int(final_ms), at_final)
GLib.timeout_add_seconds(30, loop.quit)
loop.run()
session.disconnect()
say('done')
