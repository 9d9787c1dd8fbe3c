# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue J, recording: a SPICE client's record channel reaches the guest's
sound card through qemu's D-Bus audio input (-audiodev dbus), by our
helper's AudioInListener.

The guest has an AC97 card on the dbus audiodev; keydraw.record=1 loads its
driver with OSS emulation and reads /dev/dsp (S16 stereo 44100 Hz) forever,
printing every 0.5 s of what it captured: "RECORD n=N hz=F peak=P", the
left channel's frequency from zero crossings and its peak
(tests/guest/keydraw-record.c). qemu pulls that sound from its audio
listeners with a synchronous Read on its timer, only while the guest
captures. What is shown (qemu 8.1+; 7.2 over a bus):

- the helper offers a record channel and, as the guest records, asks the
  client for S16 stereo: at 48 kHz from a client that codes Opus (spice-gtk
  does so only at Opus's rates), converted back to qemu's capture rate
  (44100 Hz by default); at qemu's rate from one without Opus
  (SPICE_DISABLE_OPUS, spice-gtk's own switch), raw;
- the tone the client records (a 660 Hz sine, spice-gtk's
  spice_record_channel_send_data) is what the guest captures: its
  frequency, loud; before the client sends, the guest gets silence at the
  right rate, not a stalled capture;
- without a client, the guest's capture keeps running (silence).

Run this file as a script for the SPICE client side (Debian's python, gi):
  /usr/bin/python3 test_record.py client HOST PORT SECONDS HZ
"""

import math
import os
import re
import subprocess
import sys

SPICE_AUDIO_FMT_S16 = 1
SPICE_CHANNEL_RECORD = 6
TONE_HZ = 660
AMPLITUDE = 12000


# ---- the SPICE client (a subprocess under Debian's python, with gi) ----------

def client_main(argv):
    import ctypes
    import struct
    import time

    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, seconds, hz = argv
    hz = float(hz)
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {'timer': 0, 'sent': 0}

    def say(*words):
        print(*words, flush=True)

    def stop_sending():
        if state['timer']:
            GLib.source_remove(state['timer'])
            state['timer'] = 0

    def on_start(channel, fmt, channels, rate):
        say('start', fmt, channels, rate)
        stop_sending()
        t0 = time.monotonic()
        frames_sent = [0]

        def tick():
            due = int((time.monotonic() - t0) * rate)
            n = due - frames_sent[0]
            if n <= 0:
                return True
            samples = []
            for i in range(frames_sent[0], due):
                v = int(AMPLITUDE * math.sin(2 * math.pi * hz * i / rate))
                samples.extend([v] * channels)
            data = struct.pack(f'<{len(samples)}h', *samples)
            buf = ctypes.create_string_buffer(data, len(data))
            channel.send_data(ctypes.addressof(buf), len(data),
                              int(time.monotonic() * 1000) & 0xffffffff)
            frames_sent[0] = due
            state['sent'] += len(data)
            return True

        state['timer'] = GLib.timeout_add(10, tick)

    def on_stop(channel):
        stop_sending()
        say('stop')

    def on_channel(sess, channel):
        say('channel', channel.get_property('channel-type'))
        if isinstance(channel, Spice.RecordChannel):
            GObject.Object.connect(channel, 'record-start', on_start)
            GObject.Object.connect(channel, 'record-stop', on_stop)
        channel.connect()

    GObject.Object.connect(session, 'channel-new', on_channel)
    session.connect()
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    stop_sending()
    say('sent', state['sent'])
    session.disconnect()
    say('done')


if __name__ != "__main__":
    import time

    import pytest

    from harness import not_applicable
    from harness.sanitizer import slowdown
    from serve_support import free_tcp_port, serving
    from test_display_support import Helper

    AUDIODEV = "snd0"
    RECORD_RE = re.compile(r"RECORD n=(\d+) hz=([\d.]+) peak=(\d+)")

    def run_client(port, seconds, opus=True):
        env = dict(os.environ)
        if opus:
            env.pop("SPICE_DISABLE_OPUS", None)
        else:
            env["SPICE_DISABLE_OPUS"] = "1"
        proc = subprocess.run(["/usr/bin/python3", __file__, "client", "127.0.0.1",
                               str(port), str(seconds), str(TONE_HZ)],
                              capture_output=True, text=True, timeout=seconds + 30,
                              stdin=subprocess.DEVNULL, env=env)
        return proc.stdout.splitlines(), proc.stderr

    def windows(q, since):
        """The guest's (hz, peak) windows in serial lines from index `since`."""
        out = []
        for line in q.serial_lines[since:]:
            m = RECORD_RE.search(str(line))
            if m:
                out.append((float(m.group(2)), int(m.group(3))))
        return out

    def silent_tail(q, since, binary):
        """The guest's last two windows from `since` once both are silent,
        waited for (bounded): the sound the client sent drains through
        the helper, qemu and the guest, whose capture reports a window a
        second and lags behind when the host is busy (2.5 s after the
        client left, a sanitizer run beside another run still showed the
        tone in the second-to-last window). Past the deadline, the last two
        as they are: the test then fails on them."""
        deadline = time.monotonic() + 20 * slowdown(binary)
        while True:
            tail = windows(q, since)[-2:]
            if (len(tail) == 2 and all(peak == 0 for _, peak in tail)) or \
                    time.monotonic() > deadline:
                return tail
            time.sleep(0.2)

    def quiet_windows(q, h):
        """Three whole windows the guest captured with the helper registered
        and no client (waited for, bounded). Counted from the second window
        after the registration. The one in flight then may hold what qemu
        gave while nobody listened (its dbus_read hands over its buffer
        unwritten: peaks 32606-32691 measured with no client at all on qemu
        7.2, 32611 once on 10.0 in a sanitizer run beside other tests). So
        may the next one: what qemu captured before the switch waits in its
        capture buffer until the guest reads it, and a fresh-clone run on
        qemu 7.2 over a bus saw [(942.3, 32757), (0.0, 0), (0.0, 0)] when
        counting from the first (the switch stalled that window by 280 ms)."""
        deadline = time.monotonic() + 30
        while "registered with qemu's D-Bus audio capture" not in h.stderr():
            assert time.monotonic() < deadline, f"never registered: {h.stderr()}"
            time.sleep(0.1)
        for _ in range(2):
            q.wait_serial(r"RECORD n=", timeout=30, since=len(q.serial_lines))
        since = len(q.serial_lines)
        deadline = time.monotonic() + 15
        while len(windows(q, since)) < 3:
            assert time.monotonic() < deadline, \
                f"the capture stalled without a client: {windows(q, since)}"
            time.sleep(0.1)
        return windows(q, since)

    def recording_qemu(qemu_factory, **kwargs):
        q = qemu_factory(cmdline_extra="keydraw.record=1", audiodev=AUDIODEV,
                         extra_args=["-device", f"AC97,audiodev={AUDIODEV}"], **kwargs)
        q.wait_serial("RECORD ready", timeout=120)
        return q

    def check_tone(q, since, lines, stderr, log, opus=True):
        got = windows(q, since)
        what = (f"guest windows: {got}\nclient: {lines}\nclient stderr: {stderr[-2000:]}"
                f"\nhelper: {log[-3000:]}\nqemu: {q.stderr_tail()}")
        assert "Sanitizer" not in log and "runtime error" not in log, what
        assert f"channel {SPICE_CHANNEL_RECORD}" in lines, what
        starts = [l.split() for l in lines if l.startswith("start ")]
        assert starts, what
        # spice-gtk codes Opus only at Opus's rates: a client with it is
        # asked for 48 kHz, converted back to qemu's 44100 Hz.
        for _, fmt, channels, rate in starts:
            assert int(fmt) == SPICE_AUDIO_FMT_S16, what
            assert int(channels) == 2 and int(rate) == (48000 if opus else 44100), what
        said = [l for l in log.splitlines() if "record: the guest records" in l]
        assert said and "S16 at 44100 Hz, 2 channels" in said[0], what
        modes = [l for l in log.splitlines() if "from the client" in l]
        assert len(modes) == 1, what                        # one line per client
        if opus:
            assert modes[0].endswith("record: Opus at 48000 Hz from the client "
                                     "(converted to qemu's 44100 Hz)"), what
        else:
            assert modes[0].endswith("record: raw PCM at 44100 Hz from the client"), what
        tone = [(hz, peak) for hz, peak in got
                if abs(hz - TONE_HZ) <= TONE_HZ * 0.05 and peak > AMPLITUDE // 2]
        # The client sends for ~8 s: most 0.5 s windows in that time carry
        # the tone (the first and the last may straddle its edges).
        assert len(tone) >= 8, what
        for hz, peak in tone:
            assert peak < AMPLITUDE * 1.1, what                 # not clipped or doubled
        # The helper's summary at exit accounts for every second the client
        # sent: it reached qemu, or it was dropped because the guest's sound
        # card, slowed by TCG, read more slowly than real time (0 to 0.5 s
        # of 9 s on an idle host; 3.2 s in a sanitizer run beside another
        # test run, where 5.6 s reached qemu). How much reached qemu in time
        # is the guest's pace, so it is no correctness bound here.
        summary = re.search(r"record: ([\d.]+) s of the clients' sound reached qemu, "
                            r"([\d.]+) s of silence where none came, ([\d.]+) s dropped",
                            log)
        assert summary, what
        reached, dropped = float(summary.group(1)), float(summary.group(3))
        sent = next(int(l.split()[1]) for l in lines if l.startswith("sent "))
        _, _, channels, rate = starts[-1]
        sent_s = sent / (int(rate) * int(channels) * 2)
        assert reached > 0 and abs(reached + dropped - sent_s) <= 0.5, \
            f"reached {reached} s + dropped {dropped} s of {sent_s:.3f} s sent\n{what}"
        return what

    @pytest.mark.timeout(240)
    @pytest.mark.parametrize("opus", [True, False], ids=["opus", "raw"])
    def test_client_tone_reaches_guest(qemu_factory, qemu_flavour, guest, helper_binary,
                                       opus):
        if qemu_flavour == "host" and not opus:
            not_applicable("qemu 7.2 over p2p: the helper leaves audio alone "
                        "(test_record_over_bus_qemu72 covers 7.2)")
        q = recording_qemu(qemu_factory)
        if qemu_flavour == "host":
            # qemu 7.2 crashes on a p2p RegisterInListener as on the output
            # one: no record channel, and qemu lives.
            with serving(helper_binary, q, "--disable-ticketing") as (h, port):
                lines, stderr = run_client(port, 4)
            log = h.stderr()
            what = f"client: {lines}\nhelper: {log[-3000:]}\nqemu: {q.stderr_tail()}"
            assert "before 8.0 crashes" in log, what
            assert "channel 2" in lines, what
            assert f"channel {SPICE_CHANNEL_RECORD}" not in lines, what
            assert q.proc.poll() is None, what
            return
        # Before any helper: qemu hands the guest its own buffer's contents
        # (nobody listens), so the guest's capture runs.
        q.wait_serial(r"RECORD n=2 ", timeout=60)
        with serving(helper_binary, q, "--disable-ticketing") as (h, port):
            # With the helper and no client: silence, and the capture runs.
            quiet = quiet_windows(q, h)
            since = len(q.serial_lines)
            lines, stderr = run_client(port, 9, opus=opus)
            after = len(q.serial_lines)
            tail = silent_tail(q, after, helper_binary)
        log = h.stderr()
        what = check_tone(q, since, lines, stderr, log, opus)
        assert "registered with qemu's D-Bus audio capture" in log, what
        assert all(peak == 0 for _, peak in quiet), f"without a client: {quiet}\n{what}"
        # The client gone: silence again, and the capture still runs.
        assert tail and all(peak == 0 for _, peak in tail), f"after the client: {tail}\n{what}"
        print(what)                                     # shown with pytest -rP

    @pytest.mark.timeout(240)
    def test_record_over_bus_qemu72(qemu_factory, guest, helper_binary, dbus_daemon):
        """qemu 7.2 takes a capture listener over a D-Bus bus."""
        q = recording_qemu(qemu_factory, flavour="host", display="dbus-bus",
                           dbus_address=dbus_daemon.address)
        port = free_tcp_port()
        with Helper(helper_binary, ["--dbus-address", dbus_daemon.address,
                                    "--listen", f"127.0.0.1:{port}",
                                    "--disable-ticketing"], control=False) as h:
            h.wait_listening(port)
            quiet = quiet_windows(q, h)
            since = len(q.serial_lines)
            lines, stderr = run_client(port, 9)
        log = h.stderr()
        what = check_tone(q, since, lines, stderr, log)
        # With the helper and no client: silence, and the capture runs.
        assert all(peak == 0 for _, peak in quiet), f"without a client: {quiet}\n{what}"
        print(what)

else:
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
