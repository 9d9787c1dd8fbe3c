# SPDX-License-Identifier: GPL-2.0-or-later
"""Several viewers at once: each client its own session over the one
screen. Two clients connected together both get qemu's exact picture;
--max-sessions bounds them, refusing a client beyond it with a link error
(or replacing the oldest, --when-full replace) while the others keep
serving; bad values of either option are usage errors naming the option."""

import json
import re
import subprocess
import time

import pytest

from harness import exits
from harness.qemu import parse_ppm
from serve_support import READY_TIMEOUT, run_client, serving, ticket_file


def client(test_client, port, *args, timeout=40):
    """qs-test-client in the background (its session stays while it runs)."""
    argv = [str(test_client), "--timeout", str(timeout), "--port", str(port), *map(str, args)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def finish(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def wait_linked(helper, count, timeout=20):
    """Until `count` main channels have linked since the helper started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if helper.stderr().count("main channel 1:0 linked") >= count:
            return
        time.sleep(0.1)
    pytest.fail(f"{count} main channels did not link within {timeout} s:\n"
                f"{helper.stderr()[-3000:]}")


def exact(shot, reference, size):
    w, h = size
    sw, sh, pixels = parse_ppm(shot.read_bytes())
    assert (sw, sh) == (w, h)
    if pixels != reference:
        diff = sum(1 for i in range(0, len(pixels), 3) if pixels[i:i + 3] != reference[i:i + 3])
        pytest.fail(f"{shot.name} differs from the screendump in {diff} of {w * h} pixels")


# The idle guest, booted once for the tests below that attach a helper,
# watch and detach (shared_qemu, conftest.py). Those that pause qemu for a
# screendump boot their own, as does the view-only test, whose USB tablet
# the others do not have.
IDLE = dict(vga="virtio", mode="idle")


@pytest.mark.timeout(180)
def test_two_clients_exact(qemu_factory, qemu_flavour, guest, helper_binary, test_client,
                           tmp_path):
    """Both clients, connected at the same time, show qemu's exact picture
    (qemu 7.2 over the p2p messages, 10.0 from its shared memory)."""
    q = qemu_factory(vga="virtio", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-sessions", "2") as (h, port):
        run_client(test_client, "--port", port, "--settle", "500", "info", timeout=30)
        q.stop()
        w, hgt, reference = q.screendump()
        assert len({reference[i:i + 3] for i in range(0, len(reference), 3 * 101)}) > 10
        # a settles for 4 s: b links, settles and takes its picture meanwhile.
        a_shot, b_shot = tmp_path / "a.ppm", tmp_path / "b.ppm"
        a = client(test_client, port, "--settle", "4000", "--expect-size", f"{w}x{hgt}",
                   "screenshot", a_shot)
        wait_linked(h, 2)
        b = client(test_client, port, "--settle", "700", "--expect-size", f"{w}x{hgt}",
                   "screenshot", b_shot)
        b_rc, _, b_err = finish(b)
        assert a.poll() is None, "a left before b had its picture: no overlap"
        a_rc, _, a_err = finish(a)
        assert (a_rc, b_rc) == (0, 0), (a_err[-1500:], b_err[-1500:])
        exact(a_shot, reference, (w, hgt))
        exact(b_shot, reference, (w, hgt))
        assert "refused" not in h.stderr()


SHARED = re.compile(r"display session: .* frames (\d+) \(\d+ bytes, \d+ flushes, "
                    r"(\d+) from a shared encoder")


@pytest.mark.timeout(240)
def test_two_clients_share_one_encoder(qemu_factory, qemu_flavour, guest, helper_binary,
                                       test_client, tmp_path, monkeypatch):
    """Two LAN viewers of the busy guest stream the same area: they share
    one encoder (frames one session took from the other's encodes), both
    decode stream frames while it animates, and once the guest stops both
    show qemu's exact picture.

    Viewers share only while their plans agree on the stream's bit rate
    class and frame rate. Measured on loopback, the link's rate is capped
    by the helper's own speed (3.7 to 11.6 Mbit/s on the sanitizer build,
    differing between the two viewers). That no longer lowers a frame
    rate (a rate the helper never got past is not held against a stream),
    but the streams' ceilings still follow it, and viewers in different
    bit rate classes rightly share nothing. QS_TEST_LINK_BYTES_PER_S (test
    builds) gives both plans a 1 Gbit/s LAN instead."""
    monkeypatch.setenv("QS_TEST_LINK_BYTES_PER_S", "125000000")
    q = qemu_factory(vga="virtio", mode="busy")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-sessions", "2") as (h, port):
        shots = [tmp_path / "a.ppm", tmp_path / "b.ppm"]
        # Each watches 6 s of animation, then waits while the test stops
        # the guest (its screenshot must not settle on a pause mid-animation).
        procs = [client(test_client, port, "--settle", "1500", "watch", "--seconds", "6",
                        "sleep", "12000", "screenshot", shot, timeout=120) for shot in shots]
        watches = []
        for p in procs:
            line = read_line(p, timeout=90)
            assert line, f"no watch line: {p.stderr.read()[-1500:] if p.poll() is not None else ''}"
            watches.append(json.loads(line))
        q.stop()
        w, hgt, reference = q.screendump()
        results = [finish(p, timeout=120) for p in procs]
        (tmp_path / "helper.log").write_text(h.stderr())
        for (rc, _, err), watch in zip(results, watches):
            assert rc == 0, err[-1500:]
            assert watch["stream_frames"] > 0, watch
        for shot in shots:
            exact(shot, reference, (w, hgt))
        deadline = time.monotonic() + 15
        while len(SHARED.findall(h.stderr())) < 2:
            assert time.monotonic() < deadline, h.stderr()[-3000:]
            time.sleep(0.1)
        sessions = [tuple(map(int, m)) for m in SHARED.findall(h.stderr())]
        assert sum(shared for _, shared in sessions) > 0, (sessions, h.stderr()[-3000:])
        assert "shares its encoder with 1 other viewer" in h.stderr(), h.stderr()[-3000:]
        assert "the link is taken to carry 125000000 bytes/s" in h.stderr()


IMAGES = re.compile(r"display session: .* lossless repairs \d+, (\d+) from another viewer's")


@pytest.mark.timeout(180)
def test_two_clients_share_still_images(shared_qemu, guest, helper_binary, test_client):
    """Keys drawn on the idle guest while two viewers watch: both sessions
    send the same key box with the same pixels, and one of them takes the
    other's image instead of encoding it again."""
    q = shared_qemu(**IDLE)
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-sessions", "2") as (h, port):
        procs = [client(test_client, port, "watch", "--seconds", "8", timeout=60)
                 for _ in range(2)]
        wait_linked(h, 2)
        time.sleep(2)           # both first pictures sent
        for key in "qsqsqsqs":
            q.send_key(key)
            time.sleep(0.4)
        for p in procs:
            rc, _, err = finish(p, timeout=60)
            assert rc == 0, err[-1500:]
        deadline = time.monotonic() + 15
        while len(IMAGES.findall(h.stderr())) < 2:
            assert time.monotonic() < deadline, h.stderr()[-3000:]
            time.sleep(0.1)
        shared = [int(n) for n in IMAGES.findall(h.stderr())]
        assert sum(shared) > 0, (shared, h.stderr()[-3000:])


def read_line(proc, timeout):
    """The client's next stdout line, or None once it exited or the time is up."""
    import select
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            return line.strip() or None
    return None


@pytest.mark.timeout(150)
def test_full_refuses_third(shared_qemu, guest, helper_binary, test_client, tmp_path):
    """--max-sessions 2: a third client gets a link error and the helper says
    why; the two keep their sessions and still get pictures."""
    q = shared_qemu(**IDLE)
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-sessions", "2") as (h, port):
        a = client(test_client, port, "sleep", "6000")
        b = client(test_client, port, "sleep", "6000")
        wait_linked(h, 2)
        third = run_client(test_client, "--port", port, "info", timeout=20, check=False)
        assert third.returncode == 4, (third.returncode, third.stderr[-1500:])
        log = h.stderr()
        assert "refused: 2 sessions are connected, the most allowed (--max-sessions)" in log
        for name, proc in (("a", a), ("b", b)):
            rc, _, err = finish(proc)
            assert rc == 0, (name, rc, err[-1500:])
        # Room again: a new client is served.
        run_client(test_client, "--port", port, "--settle", "300", "screenshot",
                   tmp_path / "after.ppm", timeout=30)


@pytest.mark.timeout(150)
def test_full_replaces_oldest(shared_qemu, guest, helper_binary, test_client):
    """--max-sessions 1 --when-full replace: one viewer at a time, the newest
    wins (qemu's own SPICE server's behaviour)."""
    q = shared_qemu(**IDLE)
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing", "--max-sessions", "1",
                 "--when-full", "replace") as (h, port):
        old = client(test_client, port, "sleep", "20000")
        wait_linked(h, 1)
        run_client(test_client, "--port", port, "info", timeout=30)
        rc, _, err = finish(old, timeout=30)
        assert rc == 7, (rc, err[-1500:])       # disconnected
        assert "replaced by a new client session (at most 1 at once)" in h.stderr()


@pytest.mark.parametrize("args, message", [
    (["--max-sessions", "0"], "--max-sessions takes a number of clients from 1 to 16, not 0"),
    (["--max-sessions", "17"], "--max-sessions takes a number of clients from 1 to 16, not 17"),
    (["--max-sessions", "two"], "max-sessions"),
    (["--when-full", "kick"], "--when-full takes 'refuse' or 'replace', not 'kick'"),
    (["--max-fps", "0"], "--max-fps takes a frame rate from 1 to 30, not 0"),
    (["--max-fps", "31"], "--max-fps takes a frame rate from 1 to 30, not 31"),
    (["--max-fps", "ten"], "max-fps"),
])
def test_bad_session_options(helper_binary, args, message):
    res = exits.run([helper_binary, "--qmp", "/nonexistent", "--listen",
                     "127.0.0.1:1", *args], "the helper", expect=2)
    assert message in res.stderr, res.stderr


@pytest.mark.timeout(150)
def test_view_only_input_stays_out(qemu_factory, guest, helper_binary, test_client, tmp_path):
    """A client with the view-only ticket gets the picture; its key press
    and click never reach the guest (the guest's serial KEY/CLICK lines),
    while a control client's key beside it does."""
    q = qemu_factory(vga="virtio", mode="idle",
                     extra_args=["-device", "qemu-xhci", "-device", "usb-tablet"])
    q.wait_ready(timeout=READY_TIMEOUT)
    q.wait_serial(r"^INPUT .*abs=1", timeout=READY_TIMEOUT)
    control = ticket_file(tmp_path, "control", "control-pw")
    view = ticket_file(tmp_path, "view", "view-pw")
    with serving(helper_binary, q, "--ticket-file", control,
                 "--view-ticket-file", view) as (h, port):
        mark = q.serial_mark()
        viewer = client(test_client, port, "--ticket-file", view, "info", "key", "0x10",
                        "click", 300, 200, "sleep", 3000)
        wait_linked(h, 1)
        run_client(test_client, "--port", port, "--ticket-file", control,
                   "--settle", "300", "screenshot", tmp_path / "c.ppm", timeout=30)
        rc, out, err = finish(viewer)
        assert rc == 0, (rc, err[-1500:])
        assert '"surface"' in out, out
        run_client(test_client, "--port", port, "--ticket-file", control, "key", "0x1e",
                   "sleep", 300)
        m = q.wait_serial(r"^(KEY code=\d+|CLICK .*)", timeout=10.0, since=mark)
        assert m.group(1).startswith("KEY code=30"), m.string
        log = h.stderr()
        assert "linked from 127.0.0.1" in log and "(view only)" in log
        assert "input from a view-only client dropped" in log
        assert "view-only client: no agent" in log
