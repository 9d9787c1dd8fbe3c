#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Feeds H.264 access units one at a time to spice-gtk 0.42's decoding
# pipeline shape (appsrc with caps "video/x-h264", h264parse, a decoder,
# appsink sync=false; GTK channel-display-gst.c) and prints which frames come
# out after each push: "P <push> <frame>...", then "E <frame>..." after EOS.
# Input: a file of {u32 little-endian length; access unit}. Exit 77: no Gst.
import struct
import sys

try:
    import gi
    gi.require_version('Gst', '1.0')
    from gi.repository import Gst
except (ImportError, ValueError):
    sys.exit(77)

FRAME_NS = 33333333


def main():
    path, decoder, caps = sys.argv[1], sys.argv[2], sys.argv[3]
    Gst.init(None)
    if Gst.ElementFactory.find(decoder) is None:
        sys.exit(77)
    data = open(path, 'rb').read()
    aus = []
    i = 0
    while i < len(data):
        (n,) = struct.unpack_from('<I', data, i)
        aus.append(data[i + 4:i + 4 + n])
        i += 4 + n
    pipeline = Gst.parse_launch(
        'appsrc name=src is-live=true format=time caps=%s ! h264parse ! %s '
        '! appsink name=sink sync=false' % (caps, decoder))
    src = pipeline.get_by_name('src')
    sink = pipeline.get_by_name('sink')
    pipeline.set_state(Gst.State.PLAYING)

    def drain(timeout_ns):
        got = []
        while True:
            sample = sink.emit('try-pull-sample', timeout_ns)
            if sample is None:
                return got
            got.append(str(sample.get_buffer().pts // FRAME_NS))
            timeout_ns = 50 * Gst.MSECOND

    for k, au in enumerate(aus):
        buf = Gst.Buffer.new_wrapped(au)
        buf.pts = k * FRAME_NS
        src.emit('push-buffer', buf)
        print('P', k, *drain(700 * Gst.MSECOND), flush=True)
    src.emit('end-of-stream')
    print('E', *drain(2 * Gst.SECOND), flush=True)
    pipeline.set_state(Gst.State.NULL)


main()
