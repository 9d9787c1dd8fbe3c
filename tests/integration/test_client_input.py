# SPDX-License-Identifier: GPL-2.0-or-later
"""qs-test-client's key and click commands reach the guest through qemu's SPICE."""

import subprocess

import pytest

from harness.qemu import parse_ppm

# Tests the test tooling, not qemu-spice: run once (pytest.ini, `tooling`).
pytestmark = pytest.mark.tooling

# Boot to READY takes ~3 s alone but much longer on a loaded 2-core machine.
READY_TIMEOUT = 45.0


def run_client(binary, port, *args, timeout=20, check=True):
    argv = [str(binary), "--port", str(port), "--timeout", str(timeout), *map(str, args)]
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, timeout=timeout + 30)
    if check and res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stderr.strip()[-1500:]}")
    return res


# The key test and the no-absolute-pointer click test share one idle guest
# (shared_qemu, conftest.py); the key test waits for its KEY lines after
# its own serial mark, and two presses always change the key box's
# colour (tests/guest/keydraw-draw.c), whatever presses came before.


def crop(width, pixels, rect):
    x, y, w, h = (int(v) for v in rect.split(","))
    return b"".join(pixels[((y + r) * width + x) * 3:((y + r) * width + x + w) * 3]
                    for r in range(h))


def test_keys_reach_guest_and_repaint_key_box(shared_qemu, guest, test_client, tmp_path):
    q = shared_qemu(vga="virtio", display="spice", mode="idle")
    ready = q.wait_ready(timeout=READY_TIMEOUT)
    before, after = tmp_path / "before.ppm", tmp_path / "after.ppm"
    mark = q.serial_mark()
    run_client(test_client, q.spice_port, "screenshot", before, "key", "0x1e", "48",
               "sleep", 500, "screenshot", after)
    assert q.wait_serial(r"^KEY code=30\b", timeout=5.0, since=mark)
    assert q.wait_serial(r"^KEY code=48\b", timeout=5.0, since=mark)
    w, _, pix_before = parse_ppm(before.read_bytes())
    _, _, pix_after = parse_ppm(after.read_bytes())
    # the screenshots see the repaint inside the key box and nothing outside it
    assert crop(w, pix_before, ready["keybox"]) != crop(w, pix_after, ready["keybox"])
    assert crop(w, pix_before, "400,20,200,100") == crop(w, pix_after, "400,20,200,100")


def test_click_with_absolute_pointer(qemu_factory, guest, test_client):
    q = qemu_factory(vga="virtio", display="spice", mode="idle",
                     extra_args=["-device", "virtio-tablet-pci"])
    q.wait_ready(timeout=READY_TIMEOUT)
    # the tablet may be probed after READY on a loaded machine
    q.wait_serial(r"^INPUT .*abs=1", timeout=READY_TIMEOUT)
    mark = q.serial_mark()
    res = run_client(test_client, q.spice_port, "info", "click", 300, 200, "click", 1279, 799, 3)
    assert '"mouse_mode":"client"' in res.stdout
    m = q.wait_serial(r"^CLICK x=(\d+) y=(\d+) button=(\d+)", timeout=5.0, since=mark)
    assert m.groups() == ("300", "200", "272"), m.string        # BTN_LEFT
    m = q.wait_serial(r"^CLICK x=(\d+) y=(\d+) button=(\d+)", timeout=5.0,
                      since=m.line_index + 1)
    assert m.groups() == ("1279", "799", "273"), m.string       # BTN_RIGHT


def test_click_without_absolute_pointer_is_unsupported(shared_qemu, guest, test_client):
    q = shared_qemu(vga="virtio", display="spice", mode="idle")
    q.wait_ready(timeout=READY_TIMEOUT)
    res = run_client(test_client, q.spice_port, "click", 10, 10, check=False)
    assert res.returncode == 11, res.stderr
    assert "server mouse mode" in res.stderr


def test_unknown_command_is_a_usage_error(test_client):
    res = subprocess.run([str(test_client), "--port", "1", "frobnicate"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=30)
    assert res.returncode == 2 and "unknown command 'frobnicate'" in res.stderr
