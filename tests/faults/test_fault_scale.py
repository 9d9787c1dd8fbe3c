# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue I, point 6: scale, and what an idle helper costs.

N idle guests (4; 20 with --long), each with its own helper attached
peer-to-peer. Every helper is timed from its start to a spice-gtk client's
first full picture (the display channel's MARK follows the surface and its
image) and must serve qemu's exact screen; then, no client connected, every
helper's CPU over IDLE_S seconds and its memory are measured, and once more
with one idle client connected to the first helper. The figures go to
docs/performance.md ("Scale"); the test prints them (run with -s).

The scale run happens once (shared_run) and is judged by two tests:
test_idle_scale asserts what must hold (every picture exact, every helper
healthy and exiting 0, no TLS or NSS library mapped), also against the
sanitizer build; test_idle_scale_figures (`timing`) asserts the CPU, memory
and start-up figures, against the plain build only. Either runs the VMs if
the other has not."""

import contextlib
import os
import time

import pytest

from fault_support import (Client, assert_helper_healthy, assert_no_problems,
                           assert_same_picture, recorded, serving)
from harness.shared_run import shared_run
from serve_support import READY_TIMEOUT

VMS = 4
VMS_LONG = 20
IDLE_S = 30.0
# The goals for an idle helper at 1280x800 (docs/performance.md "Scale"). Measured with no
# client (plain build, qemu 7.2): 0.00006 cores median, 0.0003 worst on
# 2026-12-01; on 2026-12-03, waking every second (watchdog) and every 3 s
# (takeover probe), 0.00045-0.00078 here and 0.0013-0.0029 on a CI run,
# which missed; since the watchdog's idle check is every 5 s and the probe
# every 15 s without a client, 0.00013-0.00033 here (1 tick of 10 ms in 30 s).
IDLE_CPU_GOAL = 0.002           # cores
# Measured 0.0003-0.0007 cores with a client on a quiet machine (its 1/s
# PING, the PONG, the congestion sampling that follows): twice the no-client
# goal leaves room for a loaded host and still catches a timer left running.
IDLE_CPU_CLIENT = 0.004
# The goal is 16 MiB: measured 15.5-15.7 MiB on qemu 7.2 (docs/
# performance.md "Scale"), too close to the goal for a test on a shared
# host, so the bounds here catch regressions instead: what we hold
# ourselves (RssAnon: the 4 MiB screen copy, on qemu 7.2 GDBus's 4 MiB read
# buffer, ~1 MiB of heap and stacks) +50%, VmRSS a MiB above the figures,
# and the libraries an idle helper without TLS must not map at all.
RSS_ANON_KIB = 14 * 1024
RSS_KIB = 17 * 1024
NOT_MAPPED = ("libgnutls", "libp11-kit", "libnss_")
# Helper start to the first full picture (attach, Scanout, listen,
# spice-gtk's link of four channels, 4 MB of lz4): 0.10-0.22 s in two 4-VM
# runs, 0.16-0.40 s in the 20-VM run (plain build, docs/performance.md
# "Scale"); 0.9-1.5 s on the sanitizer build, where it is not asserted.
CONSOLE_S = 3.0

_TCK = os.sysconf("SC_CLK_TCK")


def thread_cpu_ns(pid):
    """{tid: ns on a CPU} of the live threads of `pid` (schedstat)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass    # a thread that ended meanwhile
    return out


def ticks_seconds(pid):
    """utime + stime of the whole process, dead threads included (10 ms
    ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TCK


def idle_cpu(pids, seconds):
    """Cores each pid used over the same `seconds` window: per thread from
    schedstat (precise; a thread that ends in the window is lost), or from
    the tick counts if those say more (they include such threads)."""
    t0 = time.monotonic()
    before = [(thread_cpu_ns(p), ticks_seconds(p)) for p in pids]
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    cores = []
    for p, (threads0, ticks0) in zip(pids, before):
        threads1 = thread_cpu_ns(p)
        ns = sum(v - threads0.get(tid, 0) for tid, v in threads1.items())
        cores.append(max(ns / 1e9, ticks_seconds(p) - ticks0) / elapsed)
    return cores


def memory_kib(pid):
    """VmRSS, RssAnon, RssFile, VmHWM (status) and Pss (smaps_rollup), KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0])
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                out["Pss"] = int(line.split()[1])
    return out


def mapped_libraries(pid):
    """File names of the shared objects mapped into `pid`."""
    out = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            path = line.split()[-1]
            if path.startswith("/") and ".so" in path:
                out.add(os.path.basename(path))
    return out


def spread(values, unit="", fmt="{:.5f}"):
    values = sorted(values)
    return (f"min {fmt.format(values[0])}{unit} median "
            f"{fmt.format(values[len(values) // 2])}{unit} max {fmt.format(values[-1])}{unit}")


def console(test_client, h, port, q, tmp_path, name, started, problems):
    """One spice-gtk session: seconds from `started` (the helper's launch)
    to the client's first full picture; that picture (after 300 ms without
    updates) must equal qemu's screendump, or what is wrong goes to
    `problems`."""
    shot = tmp_path / f"{name}.ppm"
    client = Client(test_client, port, ["--expect-size", "1280x800", "info",
                                        "screenshot", shot], tmp_path, name=name,
                    timeout=30)
    try:
        client.wait_output(1, timeout=40)
        seconds = time.monotonic() - started
        rc = client.wait(timeout=40)
    finally:
        client.kill()
    with recorded(problems, name):
        assert rc == 0, f"{client.argv} exited {rc}: {client.stderr()[-1500:]}"
        info = client.json_lines()[0]
        assert info.get("mark"), f"no MARK: {info}"
        assert_same_picture(shot, q)
        assert_helper_healthy(h)
    return seconds


def scale_scenario(qemu_factory, guest, helper_binary, test_client, tmp_path, n):
    """The scale run: figures, mapped libraries, exit statuses and the
    correctness problems, as data; every qemu is closed when it returns."""
    problems = []
    timing = {"boot_s": [], "console_s": [], "listen_s": []}
    helpers = []
    guests = []
    with contextlib.ExitStack() as stack:
        # Booted one after the other: a TCG boot costs 4-7 s of CPU, and
        # the idle guests already running must not starve the next.
        for _ in range(n):
            t0 = time.monotonic()
            q = qemu_factory(guest=guest, vga="virtio", mode="idle")
            stack.callback(q.close)
            q.wait_ready(timeout=READY_TIMEOUT)
            timing["boot_s"].append(time.monotonic() - t0)
            guests.append(q)
        for i, q in enumerate(guests):
            started = time.monotonic()
            h, port = stack.enter_context(serving(helper_binary, q, "--disable-ticketing"))
            timing["listen_s"].append(time.monotonic() - started)
            timing["console_s"].append(
                console(test_client, h, port, q, tmp_path, f"vm{i}", started, problems))
            helpers.append((h, port, q))
        pids = [h.proc.pid for h, _, _ in helpers]

        # Idle, no client: the sessions above are closed.
        time.sleep(2)
        q_cpu0 = [ticks_seconds(q.pid) for q in guests]
        t0 = time.monotonic()
        cpu_alone = idle_cpu(pids, IDLE_S)
        qemu_cores = [(ticks_seconds(q.pid) - c) / (time.monotonic() - t0)
                      for q, c in zip(guests, q_cpu0)]
        mem = [memory_kib(p) for p in pids]
        mapped = [sorted(mapped_libraries(p)) for p in pids]
        qemu_rss = [q.rss_kib() for q in guests]

        # One idle client on the first helper.
        h0, port0, _ = helpers[0]
        watcher = Client(test_client, port0, ["info", "sleep", int(IDLE_S * 1000 + 20000)],
                         tmp_path, name="idle-client", timeout=int(IDLE_S) + 60)
        try:
            watcher.wait_output(1)
            time.sleep(2)
            cpu_client = idle_cpu([h0.proc.pid], IDLE_S)[0]
            mem_client = memory_kib(h0.proc.pid)
            with recorded(problems, "the idle client"):
                assert watcher.proc.poll() is None, \
                    f"idle client exited {watcher.proc.returncode}: " \
                    f"{watcher.stderr()[-1500:]}"
        finally:
            watcher.kill()
        for i, (h, _, _) in enumerate(helpers):
            with recorded(problems, f"helper vm{i} after the idle phase"):
                assert_helper_healthy(h)
    # serving() terminated every helper (SIGTERM), the stack closed qemu.
    exits = [(h.proc.pid, h.proc.poll(), h.stderr()[-1500:]) for h, _, _ in helpers]

    report = [
        f"scale: {n} idle VMs at 1280x800",
        f"  guest boot to READY s: {spread(timing['boot_s'], fmt='{:.1f}')}",
        f"  helper start to listening s: {spread(timing['listen_s'], fmt='{:.2f}')}",
        f"  helper start to first full picture s: {spread(timing['console_s'], fmt='{:.2f}')}",
        f"  helper idle cores, no client: {spread(cpu_alone)} "
        f"(sum {sum(cpu_alone):.4f})",
        f"  helper idle cores, one idle client: {cpu_client:.5f}",
        f"  helper VmRSS KiB: {spread([m['VmRSS'] for m in mem], fmt='{}')}",
        f"  helper RssAnon KiB: {spread([m['RssAnon'] for m in mem], fmt='{}')}",
        f"  helper RssFile KiB: {spread([m['RssFile'] for m in mem], fmt='{}')}",
        f"  helper Pss KiB: {spread([m['Pss'] for m in mem], fmt='{}')}",
        f"  helper VmHWM KiB: {spread([m['VmHWM'] for m in mem], fmt='{}')}",
        f"  helper with a client: {mem_client}",
        f"  qemu idle cores: {spread(qemu_cores, fmt='{:.4f}')} "
        f"(sum {sum(qemu_cores):.3f})",
        f"  qemu VmRSS KiB: {spread(qemu_rss, fmt='{}')}",
    ]
    print("\n".join(report))
    return dict(problems=problems, exits=exits, mapped=mapped, report="\n".join(report),
                cpu_alone=cpu_alone, cpu_client=cpu_client, mem=mem,
                mem_client=mem_client, timing=timing)


def scale_run(qemu_factory, guest, helper_binary, test_client, tmp_path, long_run):
    n = VMS_LONG if long_run else VMS
    return shared_run(("scale", n),
                      lambda: scale_scenario(qemu_factory, guest, helper_binary,
                                             test_client, tmp_path, n))


@pytest.mark.timeout(900)
def test_idle_scale(qemu_factory, guest, helper_binary, test_client, tmp_path,
                    long_run, request):
    run = scale_run(qemu_factory, guest, helper_binary, test_client, tmp_path, long_run)
    request.node.user_properties.append(("scale", run["report"]))
    assert_no_problems(run)
    # Every helper exited cleanly at SIGTERM; qemu's are checked by the
    # harness's no-stray check after the test.
    for pid, rc, err in run["exits"]:
        assert rc is not None, f"helper {pid} left running"
        assert rc == 0, f"helper exited {rc}: {err}"
    # gnutls is loaded only for a TLS port, the user is looked up in a
    # child: neither belongs in a helper serving plain SPICE.
    for libs in run["mapped"]:
        assert not [l for l in libs if l.startswith(NOT_MAPPED)], \
            f"an idle helper without TLS maps {libs}"


@pytest.mark.timing
@pytest.mark.timeout(900)
def test_idle_scale_figures(qemu_factory, guest, helper_binary, test_client, tmp_path,
                            long_run):
    """The figures of the scale run against the goals; a test of its own so
    that the sanitizer run, whose shadow memory and quarantine inflate RSS
    and whose checks cost CPU, deselects it (-m "not timing") but still
    runs the VMs and the correctness checks (test_idle_scale)."""
    run = scale_run(qemu_factory, guest, helper_binary, test_client, tmp_path, long_run)
    cpu_alone, cpu_client = run["cpu_alone"], run["cpu_client"]
    mem, mem_client, timing = run["mem"], run["mem_client"], run["timing"]
    assert max(cpu_alone) <= IDLE_CPU_GOAL, \
        f"idle helper uses {max(cpu_alone):.5f} cores (goal {IDLE_CPU_GOAL}): {cpu_alone}"
    assert cpu_client <= IDLE_CPU_CLIENT, \
        f"idle helper with an idle client uses {cpu_client:.5f} cores " \
        f"(bound {IDLE_CPU_CLIENT})"
    worst = max(m["RssAnon"] for m in mem + [mem_client])
    assert worst <= RSS_ANON_KIB, f"idle helper RssAnon {worst} KiB > {RSS_ANON_KIB}"
    worst = max(m["VmRSS"] for m in mem + [mem_client])
    assert worst <= RSS_KIB, f"idle helper VmRSS {worst} KiB > {RSS_KIB}"
    assert max(timing["console_s"]) <= CONSOLE_S, \
        f"start to console took {max(timing['console_s']):.2f} s > {CONSOLE_S}"


def rss_shmem_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssShmem:"):
                return int(line.split()[1])
    raise AssertionError(f"no RssShmem in /proc/{pid}/status")


@pytest.mark.timeout(240)
def test_idle_helper_leaves_qemu_surface_alone(qemu_factory, guest, helper_binary,
                                               test_client, tmp_path):
    """qemu 9.2+ shares its 4 MB surface (a memfd) with the listener; reading
    it maps its pages into the helper, where they count as resident though
    they are qemu's. Once qemu goes quiet the helper drops its page-table
    entries for them (qs_listener_trim); an update afterwards faults back in
    what it reads, and must still be read exactly."""
    q = qemu_factory(guest=guest, vga="virtio", mode="idle", flavour="trixie")
    q.wait_ready(timeout=READY_TIMEOUT)
    with serving(helper_binary, q, "--disable-ticketing") as (h, port):
        problems = []
        console(test_client, h, port, q, tmp_path, "before", time.monotonic(), problems)
        assert not problems, problems
        time.sleep(2)
        shmem = rss_shmem_kib(h.proc.pid)
        print(f"idle helper on qemu 10.0: {memory_kib(h.proc.pid)} KiB, RssShmem {shmem} KiB")
        # Without the trim: 4000 KiB (measured) after the first picture.
        assert shmem < 512, f"idle helper keeps {shmem} KiB of qemu's surface resident"
        mark = q.serial_mark()
        q.send_key("a")
        q.wait_serial(r"^KEY code=30", timeout=5.0, since=mark)
        time.sleep(1)
        console(test_client, h, port, q, tmp_path, "after", time.monotonic(), problems)
        assert not problems, problems
        time.sleep(2)
        shmem = rss_shmem_kib(h.proc.pid)
        assert shmem < 512, f"after an update, the idle helper keeps {shmem} KiB resident"
