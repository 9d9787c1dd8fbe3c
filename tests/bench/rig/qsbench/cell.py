# SPDX-License-Identifier: GPL-2.0-or-later
"""One benchmark cell (link x activity x configuration) and the VM that a
run of cells with the same configuration and activity reuses."""

import contextlib
import json
import math
import os
import queue
import re
import socket
import subprocess
import threading
import time

from harness import Qemu, procs
from harness.qemu import free_tcp_port

from . import measure
from .link import RELAY_PORT, SERVER_ADDR, Link, Relay
from .viewers import Viewers

SPICE_DISPLAY = 2        # SPICE_CHANNEL_DISPLAY in the link message
PROBE_TIMEOUT_MS = 15000

CONFIGS = {
    "spice-off": dict(label="SPICE, streaming off", kind="spice", flavour="trixie",
                      vga="virtio", spice_opts="streaming-video=off"),
    "spice-all": dict(label="SPICE, streaming all", kind="spice", flavour="trixie",
                      vga="virtio", spice_opts="streaming-video=all"),
    "qs-virtio": dict(label="qemu-spice, virtio-gpu", kind="helper", flavour="trixie",
                      vga="virtio"),
    "qs-stdvga": dict(label="qemu-spice, std-vga", kind="helper", flavour="trixie",
                      vga="std"),
    "qs-host72": dict(label="qemu-spice, qemu 7.2 (copy path)", kind="helper",
                      flavour="host", vga="virtio"),
}


class CellFailed(Exception):
    """A cell that produced no samples, with the reason for the table."""


def helper_serves(helper):
    """Whether the helper binary can serve clients (has --listen; the
    option may sit in a help group of its own, so ask for all of them)."""
    try:
        res = subprocess.run([str(helper), "--help-all"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--listen=" in res.stdout and "Not yet implemented: serving" not in res.stdout


class Vm:
    """qemu (and for helper configurations qemu-spice) for a run of cells."""

    def __init__(self, config_name, activity, guest, paths, flavour, log_dir):
        self.config_name = config_name
        self.config = CONFIGS[config_name]
        self.activity = activity
        self.guest = guest
        self.paths = paths
        self.flavour = flavour
        self.log_dir = log_dir
        self.q = None
        self.helper = None
        self.helper_end = None
        self.helper_log = None
        self.port = None
        self.boot_s = None

    def start(self):
        c = self.config
        t0 = time.monotonic()
        if c["kind"] == "spice":
            self.q = Qemu(flavour=self.flavour, guest=self.guest, vga=c["vga"],
                          display="spice", spice_opts=c["spice_opts"], mode=self.activity,
                          name=f"qs-bench-{os.getpid()}", paths=self.paths)
        else:
            if not helper_serves(self.paths.helper):
                raise CellFailed("helper not serving (qemu-spice --help-all has no --listen)")
            self.q = Qemu(flavour=self.flavour, guest=self.guest, vga=c["vga"],
                          display="dbus-p2p", mode=self.activity,
                          name=f"qs-bench-{os.getpid()}", paths=self.paths)
        self.q.start(timeout=60)
        try:
            self.q.wait_ready(timeout=240)
            try:
                self.q.wait_serial(r"^NOTE input-modules", timeout=60)
            except Exception:  # noqa: BLE001 - only a hint to wait for
                pass
            if c["kind"] == "spice":
                self.port = self.q.spice_port
            else:
                self._start_helper()
        except Exception:
            self.close()
            raise
        self.boot_s = time.monotonic() - t0

    def _start_helper(self):
        sock = self.q.dbus_p2p_client()
        self.port = free_tcp_port()
        argv = [str(self.paths.helper), "--dbus-p2p-fd", str(sock.fileno()),
                "--listen", f"127.0.0.1:{self.port}", "--disable-ticketing"]
        self.helper_log = open(os.path.join(self.log_dir, "helper.log"), "ab")
        try:
            self.helper = procs.spawn(argv, kind="bench-helper", pass_fds=[sock.fileno()],
                                      stdout=self.helper_log, stderr=subprocess.STDOUT)
        finally:
            sock.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.helper.poll() is not None:
                raise CellFailed(f"helper exited ({self.helper.returncode}) at start; "
                                 f"see {self.log_dir}/helper.log")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise CellFailed("helper not serving (no listener on its port within 30 s)")

    def pids(self):
        return {"qemu": self.q.pid if self.q else None,
                "helper": self.helper.pid if self.helper else None}

    def alive(self):
        ok = self.q is not None and self.q.alive()
        if self.helper is not None:
            ok = ok and self.helper.poll() is None
        return ok

    def close(self):
        """Ends qemu and the helper; self.helper_end then holds how the
        helper ended ({"status", "log"}) for whoever judges the run."""
        if self.helper is not None:
            # LeakSanitizer's report at exit takes a sanitizer build a few
            # seconds: a SIGKILL before it would hide it.
            if self.helper.poll() is None:
                status = procs.kill_group(self.helper, grace=15.0)
            else:
                status = self.helper.returncode
                procs.forget(self.helper)
            self.helper_end = {"status": status,
                               "log": os.path.join(self.log_dir, "helper.log")}
            self.helper = None
        if self.helper_log is not None:
            self.helper_log.close()
            self.helper_log = None
        if self.q is not None:
            self.q.close(check=False)
            self.q = None


def rect(text):
    return tuple(int(v) for v in text.split(","))


def percentile(values, p):
    """Nearest-rank percentile, as qs-test-client computes it."""
    if not values:
        return None
    s = sorted(values)
    k = max(1, -(-len(s) * p // 100))
    return s[int(k) - 1]


def _delta(a, b, getter):
    """Sum over connections of getter(b) - getter(a) (a may lack a conn)."""
    before = {c["id"]: c for c in (a or {}).get("conns", [])}
    total = 0
    for c in (b or {}).get("conns", []):
        v1 = getter(c)
        v0 = getter(before[c["id"]]) if c["id"] in before else 0
        if v1 is not None:
            total += v1 - (v0 or 0)
    return total


def _tcp(key):
    return lambda c: c.get("tcp", {}).get(key)


def _display(getter):
    return lambda c: getter(c) if c.get("channel") == SPICE_DISPLAY else 0


def run_cell(vm, profile, link_mode, opts, cell_dir, viewers=()):
    """Measure one cell on a started Vm; returns the cell's record.
    `viewers` names the links of extra watching clients (qemu-spice only)."""
    if viewers and vm.config["kind"] != "helper":
        raise CellFailed("extra viewers need a qemu-spice configuration: spice-server "
                         "serves one client unless its experimental multi-client mode is on")
    os.makedirs(cell_dir, exist_ok=True)
    rec = {"load_start": measure.loadavg(), "t_start": time.time()}
    keybox = rect(vm.q.ready.get("keybox", "64,64,96,96"))
    activity = rect(vm.q.ready.get("activity", "624,160,640,480"))
    rec["keybox"], rec["activity_rect"] = keybox, activity
    mid_png = os.path.join(cell_dir, "mid.png")
    frozen_png = os.path.join(cell_dir, "frozen.png")
    stills = [os.path.join(cell_dir, still_name(i, "png")) for i in range(len(STILL_MS))]
    for p in [mid_png, frozen_png] + stills + [
            os.path.join(cell_dir, still_name(i, "go")) for i in range(len(STILL_MS))]:
        if os.path.exists(p):
            os.unlink(p)
    for pid in vm.pids().values():
        if pid:
            measure.reset_peak_rss(pid)
    with Link(profile, link_mode) as link:
        rec["tc"] = link.tc_lines
        relay = Relay(opts.relay, link, vm.port, queue_min=opts.relay_queue_min,
                      upstream_rcvbuf=opts.upstream_rcvbuf)
        rec["relay_argv"] = relay.argv
        watchers = Viewers(list(viewers), opts, vm.port, cell_dir) if viewers else None
        try:
            with watchers or contextlib.nullcontext():
                _drive_client(vm, link, relay, opts, rec, profile, keybox, mid_png,
                              frozen_png, cell_dir)
            if watchers:
                rec["viewers"] = watchers.record()
        finally:
            rec["qdisc"] = link.qdisc_stats()
            relay.close()
    if vm.q is not None and vm.q.alive():
        try:
            vm.q.cont()
        except Exception:  # noqa: BLE001 - the next cell restarts a dead VM
            pass
    for name, pid in vm.pids().items():
        if pid:
            rec[f"{name}_peak_mib"] = (measure.status_kib(pid, "VmHWM") or 0) / 1024
    rec["alive_after"] = vm.alive()
    if vm.q is not None and not vm.q.alive():
        rec["qemu_exit"] = vm.q.proc.returncode
    if vm.helper is not None and vm.helper.poll() is not None:
        # A negative status is the signal that ended the helper.
        rec["helper_exit"] = vm.helper.returncode
    rec["load_end"] = measure.loadavg()
    _score_images(rec, mid_png, frozen_png, os.path.join(cell_dir, "reference.png"),
                  keybox, activity, stills, profile)
    return rec


# The picture-quality measure: the client's screenshots STILL_MS[i] + RTT/2
# after the guest was stopped, scored inside the activity rectangle against
# qemu's screendump (the lossless reference of that same frozen frame). The
# first that shows the frozen frame counts: by 150 ms qemu-spice's last
# frame has reached the client (at most one frame interval plus its encode
# and serialisation), and it ends a still stream 300 ms after the last
# change; spice-server's client holds frames longer (its stamps lead by
# up to 400 ms), hence the later ones. Whether a still is the frozen frame
# is checked, not assumed: a moving picture that matches the reference
# better shifted is an older frame ("stale"). A frame that needs more than
# that on the link (heavy, 2 Mbit/s) may never be caught lossy.
STILL_MS = (150, 400, 700)


def still_name(i, ext):
    return f"still-{STILL_MS[i]}.{ext}"   # .go: created by the rig when the client is to take it


STILL_STALE_DB = 0.5          # a shifted match this much better: another frame
STILL_WAIT_MS = 60000          # the client's bound on that wait (the cell's own is shorter)


def _guest_frames(q):
    """(monotonic time the line arrived, frames drawn so far) from the
    guest's last FPS line (tests/guest/README.md), or None: what the guest
    drew beside the CPU it cost, since qemu's cores are mostly the guest's
    own work. The arrival time, not the lookup time: the guest prints about
    once a second, so the lookup can be up to a second after its count."""
    if q is None:
        return None
    for arrived, line in reversed(q.serial_entries):
        m = re.match(r"^FPS fps=\S+ frame=(\d+)", line)
        if m:
            return arrived, int(m.group(1))
    return None


def _drive_client(vm, link, relay, opts, rec, profile, keybox, mid_png, frozen_png,
                  cell_dir):
    freeze_ms = opts.freeze_ms(profile)
    still_cmds = []
    for i in range(len(STILL_MS)):
        still_cmds += ["wait-file", os.path.join(cell_dir, still_name(i, "go")), STILL_WAIT_MS,
                       "screenshot", os.path.join(cell_dir, still_name(i, "png"))]
    argv = link.client_argv([
        opts.client, "--host", SERVER_ADDR, "--port", RELAY_PORT, "--timeout",
        opts.client_timeout, "--settle", "0", "--rect", ",".join(map(str, keybox)),
        "--count", opts.presses + 1, "--interval", opts.interval_ms,
        "--sample-timeout", PROBE_TIMEOUT_MS,
        "sleep", opts.warmup_ms, "keylat", "screenshot", mid_png,
        *still_cmds,
        "sleep", freeze_ms, "screenshot", frozen_png])
    rec["client_argv"] = argv
    err = open(os.path.join(cell_dir, "client.stderr"), "wb")
    client = procs.spawn(argv, kind="bench-client", stdout=subprocess.PIPE, stderr=err)
    lines = queue.Queue()

    def reader():
        for raw in iter(client.stdout.readline, b""):
            lines.put((time.monotonic(), raw.decode(errors="replace").strip()))
        lines.put(None)
    threading.Thread(target=reader, daemon=True).start()

    cpu = measure.CpuWindow({**vm.pids(), "relay": relay.proc.pid}, by_thread="helper")
    samples, snap0, snap1 = [], None, None
    frames0 = frames1 = None
    deadline = time.monotonic() + opts.cell_timeout(profile)
    consecutive_timeouts = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CellFailed("cell timed out")
            try:
                item = lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if item is None:
                break
            t, line = item
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if "i" in obj:
                if obj["i"] == 0:
                    # The probe press: unmeasured, but it must draw within 15 s.
                    if obj.get("timeout"):
                        raise CellFailed("first press over 15 s")
                    cpu.start()
                    frames0 = _guest_frames(vm.q)
                    snap0 = relay.snapshot()
                    continue
                samples.append(obj)
                consecutive_timeouts = consecutive_timeouts + 1 if obj.get("timeout") else 0
                if consecutive_timeouts >= opts.max_consecutive_timeouts:
                    raise CellFailed(f"{consecutive_timeouts} presses in a row over 15 s")
            elif obj.get("summary"):
                cpu.stop()
                frames1 = _guest_frames(vm.q)
                snap1 = relay.snapshot()
                rec["client_summary"] = obj
                _freeze(vm, relay, client, rec, mid_png, cell_dir, deadline, profile)
    except CellFailed as e:
        rec["failure"] = str(e)
    finally:
        if client.poll() is None:
            procs.kill_group(client, grace=1.0)
        else:
            procs.forget(client)
        err.close()
        rec["client_status"] = client.returncode
        rec["samples"] = samples
        rec["final_relay"] = relay.snapshot()
    if not samples and "failure" not in rec:
        with open(os.path.join(cell_dir, "client.stderr"), errors="replace") as f:
            tail = f.read().strip().splitlines()[-1:] or ["no output"]
        rec["failure"] = f"client exited {client.returncode}: {tail[0][:200]}"
    if cpu.cores:
        rec["cpu_cores"] = cpu.cores
        rec["window_s"] = cpu.seconds
    if cpu.threads:
        rec["helper_threads"] = cpu.threads
        rec["helper_thread_count"] = cpu.thread_count
    # FPS lines come once a second, so the window is counted between the
    # last ones seen at its ends.
    if frames0 and frames1 and frames1[0] > frames0[0] + 1:
        rec["guest_fps"] = (frames1[1] - frames0[1]) / (frames1[0] - frames0[0])
    if snap0 and snap1:
        w = snap1["t"] - snap0["t"]
        s2c_out = _delta(snap0, snap1, lambda c: c["s2c"]["bytes_out"])
        disp_out = _delta(snap0, snap1, _display(lambda c: c["s2c"]["bytes_out"]))
        rec["traffic"] = {
            "window_s": w,
            "display_mbit_s": disp_out * 8 / w / 1e6 if w > 0 else None,
            "all_mbit_s": s2c_out * 8 / w / 1e6 if w > 0 else None,
            "server_bytes": _delta(snap0, snap1, lambda c: c["s2c"]["bytes_in"]),
            "server_reads": _delta(snap0, snap1, lambda c: c["s2c"]["reads"]),
            "relay_bytes_out": s2c_out,
            "relay_writes": _delta(snap0, snap1, lambda c: c["s2c"]["writes"]),
            "segs_out": _delta(snap0, snap1, _tcp("data_segs_out")),
            "display_segs_out": _delta(snap0, snap1, _display(_tcp("data_segs_out"))),
            "client_bytes": _delta(snap0, snap1, lambda c: c["c2s"]["bytes_out"]),
        }


def _freeze(vm, relay, client, rec, mid_png, cell_dir, deadline, profile):
    """Stop the guest once the mid-animation screenshot exists, have the
    client take its still screenshots STILL_MS + RTT/2 later, take qemu's
    screendump as the lossless reference, and watch the display connection
    until the client has taken its frozen screenshot."""
    while not os.path.exists(mid_png):
        if client.poll() is not None or time.monotonic() > deadline:
            raise CellFailed("no mid-animation screenshot")
        time.sleep(0.02)
    t_stop = time.monotonic()
    vm.q.stop()
    for i, ms in enumerate(STILL_MS):
        go = threading.Timer((ms + profile.rtt_ms / 2) / 1000.0,
                             lambda p=os.path.join(cell_dir, still_name(i, "go")):
                             open(p, "w").close())
        go.daemon = True
        go.start()
    first = relay.snapshot(timeout=2.0)
    w, h, data = vm.q.screendump()
    from PIL import Image
    Image.frombytes("RGB", (w, h), data).save(os.path.join(cell_dir, "reference.png"))
    acked = []           # (t, display bytes acked by the client)
    snap = first
    while snap is not None or (client.poll() is None and time.monotonic() < deadline):
        if snap:
            # Capped at the bytes written: the FIN counts as one acked byte.
            acked.append((snap["t"], sum(min(c.get("tcp", {}).get("bytes_acked", 0),
                                             c["s2c"]["bytes_out"])
                                         for c in snap["conns"]
                                         if c.get("channel") == SPICE_DISPLAY)))
        time.sleep(0.1)
        snap = None
        if client.poll() is None and time.monotonic() < deadline:
            snap = relay.snapshot(timeout=2.0)
    # The display connection's acknowledged bytes after the stop, as
    # (seconds after the stop, bytes since the stop) at each change.
    trace, prev = [], None
    for t, a in acked:
        if a != prev:
            trace.append((round(t - t_stop, 2), a - acked[0][1]))
            prev = a
    rec["settle_trace"] = trace
    rec["settle_end_s"] = round(acked[-1][0] - t_stop, 2) if acked else None
    rec["settle_s"], rec["settled"] = settle_from_trace(trace, rec["settle_end_s"])


# Changes smaller than this between two snapshots are keep-alive traffic
# (pings: 18 bytes a second from qemu-spice), not picture.
SETTLE_MIN_BYTES = 1024


def settle_from_trace(trace, end_s):
    """(seconds from the stop to the last picture-sized change, whether the
    display was then quiet for at least 1 s before the frozen screenshot)."""
    last = 0.0
    for (_, a0), (t1, a1) in zip(trace, trace[1:]):
        if a1 - a0 >= SETTLE_MIN_BYTES:
            last = t1
    settled = end_s is not None and end_s - last > 1.0
    return last, settled


def _score_images(rec, mid_png, frozen_png, ref_png, keybox, activity, stills, profile):
    if not os.path.exists(ref_png):
        return
    ref = measure.load_rgb(ref_png)
    rec["stills"] = []
    for i, path in enumerate(stills):
        if not os.path.exists(path):
            continue
        img = measure.load_rgb(path)
        sc = measure.compare_inside(img, ref, activity)
        sc["after_stop_ms"] = STILL_MS[i] + profile.rtt_ms / 2
        off = measure.motion_offset(img, ref, activity)
        if off:
            zero, best, dx, dy = off
            sc["best_shift"] = [dx, dy]
            sc["best_shift_psnr_db"] = best if math.isfinite(best) else "inf"
            sc["stale"] = (dx, dy) != (0, 0) and best > zero + STILL_STALE_DB
        rec["stills"].append(sc)
    # The score: the first still that is the frozen frame, else the last.
    fresh = [sc for sc in rec["stills"] if not sc.get("stale")]
    if fresh or rec["stills"]:
        rec["still"] = (fresh or rec["stills"])[-1 if not fresh else 0]
    if os.path.exists(mid_png):
        rec["mid"] = measure.compare(measure.load_rgb(mid_png), ref, [keybox, activity])
    if os.path.exists(frozen_png):
        rec["frozen"] = measure.compare(measure.load_rgb(frozen_png), ref, [keybox])
