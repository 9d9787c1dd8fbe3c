#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A headless spice-gtk client (SpiceClientGLib via GObject introspection) for
# test-client.c: connects, records what the server shows, sends some input,
# prints one line per observation and exits.
import ctypes
import sys

import gi
gi.require_version('SpiceClientGLib', '2.0')
from gi.repository import GLib, GObject, SpiceClientGLib as Spice  # noqa: E402

host, port = sys.argv[1], sys.argv[2]
# The surface size the server serves; large ones are checked on a sample.
width, height = int(sys.argv[3]), int(sys.argv[4])
step = 1 if width * height <= 100000 else 97
loop = GLib.MainLoop()
session = Spice.Session(host=host, port=port)
state = {'inputs': None, 'display': None, 'mark': False, 'primary': None,
         'cursor': False, 'sent': False}


def say(*words):
    print(*words, flush=True)


def pattern(x, y):
    return (((x * 5) & 0xff) | (((y * 3) & 0xff) << 8)
            | ((((x ^ y) * 7) & 0xff) << 16))


def pixel(x, y):
    width, height, stride, imgdata = state['primary']
    b = ctypes.string_at(imgdata + y * stride + x * 4, 3)
    return b[0] | b[1] << 8 | b[2] << 16


def on_invalidate(ch, x, y, w, h):
    # After our click the test's "guest" repaints 40,50 20x10 inverted.
    if not state['sent'] or state.get('updated'):
        return
    if all(pixel(px, py) == pattern(px, py) ^ 0xffffff
           for py in range(50, 60) for px in range(40, 60)):
        state['updated'] = True
        say('update-ok')
        GLib.timeout_add(100, loop.quit)


def check_pixels():
    # The primary surface's pixels, from the pointer display-primary-create
    # gave (GI cannot read SpiceDisplayPrimary).
    w, h, stride, imgdata = state['primary']
    data = ctypes.string_at(imgdata, stride * h)
    bad = 0 if (w, h) == (width, height) else 1
    for i in range(0, w * h, step):
        y, x = divmod(i, w)
        off = y * stride + x * 4
        got = data[off] | data[off + 1] << 8 | data[off + 2] << 16
        if got != pattern(x, y):
            bad += 1
    say('pixels-bad', bad)


def maybe_send_input():
    inputs = state['inputs']
    if state['sent'] or not inputs or not state['mark'] or not state['cursor']:
        return
    state['sent'] = True
    check_pixels()
    inputs.key_press(0x1e)
    inputs.key_release(0x1e)
    inputs.key_press_and_release(0x1c)
    inputs.position(100, 50, 0, 0)
    inputs.button_press(1, 1)            # SPICE_MOUSE_BUTTON_LEFT, mask LEFT
    inputs.button_release(1, 0)
    say('input-sent')
    GLib.timeout_add(3000, loop.quit)


def on_primary_create(ch, fmt, width, height, stride, shmid, imgdata):
    say('primary', fmt, width, height, stride)
    state['primary'] = (width, height, stride, imgdata)


def on_mark(ch, mark):
    say('mark', mark)
    state['mark'] = bool(mark)
    maybe_send_input()


def on_monitors(ch, pspec):
    # GI cannot marshal the "monitors" array; the notification itself is
    # what tells spice-gtk's widget the monitors are known.
    say('monitors-notify')


def on_cursor_set(ch, w, h, hx, hy, rgba):
    say('cursor-set', w, h, hx, hy)
    state['cursor'] = True
    maybe_send_input()


def on_inputs_event(ch, event):
    if event == Spice.ChannelEvent.OPENED:
        say('inputs-opened')
        state['inputs'] = ch
        GLib.timeout_add(200, maybe_send_input_later)


def maybe_send_input_later():
    maybe_send_input()
    return False


def on_mouse_mode(ch, pspec):
    say('mouse-mode', ch.get_property('mouse-mode'))


def on_channel_new(sess, ch):
    if isinstance(ch, Spice.MainChannel):
        GObject.Object.connect(ch, 'notify::mouse-mode', on_mouse_mode)
    elif isinstance(ch, Spice.DisplayChannel):
        state['display'] = ch
        GObject.Object.connect(ch, 'display-primary-create', on_primary_create)
        GObject.Object.connect(ch, 'display-mark', on_mark)
        GObject.Object.connect(ch, 'display-invalidate', on_invalidate)
        GObject.Object.connect(ch, 'notify::monitors', on_monitors)
        Spice.Channel.connect(ch)
    elif isinstance(ch, Spice.CursorChannel):
        GObject.Object.connect(ch, 'cursor-set', on_cursor_set)
        Spice.Channel.connect(ch)
    elif isinstance(ch, Spice.InputsChannel):
        GObject.Object.connect(ch, 'channel-event', on_inputs_event)
        Spice.Channel.connect(ch)


GObject.Object.connect(session, 'channel-new', on_channel_new)
GLib.timeout_add_seconds(15, loop.quit)
if not Spice.Session.connect(session):
    say('connect-failed')
    sys.exit(1)
loop.run()
session.disconnect()
say('done')
