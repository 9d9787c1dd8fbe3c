# SPDX-License-Identifier: GPL-2.0-or-later
"""The shaped-link benchmark's --quick mode (tests/bench/rig) runs end to end.

One --quick run per build (a module fixture), judged twice:
- test_bench_quick (correctness, unmarked: tools/check runs it on the
  sanitizer build) asserts what must hold whatever the machine's load:
  every cell ran, every press was drawn and none before the link's round
  trip, every process stayed alive, the helper ended with status 0 and no
  sanitizer report in its log (harness/exits.py), the watched processes
  have CPU and memory figures, the helper's by-thread figures add up to its
  total, the still was scored, and the qemu-spice cell's frozen frame
  equals qemu's screendump;
- test_bench_quick_figures and test_bench_quick_bytes_ratio (`timing`,
  the plain build alone on the machine) assert figures, each with the
  spread it was measured with written beside its bound."""

import csv
import json
import os
import re
import subprocess
import sys

import pytest

from harness import MissingComponent, exits

RIG = os.path.join(os.path.dirname(__file__), "..", "bench", "rig")
PRESSES = 10                    # qs-bench --quick (tests/bench/rig/README.md)
SAMPLE_TIMEOUT_MS = 15000       # the client's --sample-timeout in the rig


def link_of(name):
    """(RTT ms, Mbit/s) of a rig link name such as '80ms-10mbit'; (0, 0) unshaped."""
    if name == "unshaped":
        return 0, 0
    m = re.fullmatch(r"(\d+)ms-(\d+)mbit", name)
    assert m, f"unknown link name {name!r}"
    return int(m.group(1)), int(m.group(2))


def check_cell(cell):
    """What must hold in every cell on any build and any load."""
    name = f"{cell['config']} {cell['activity']} {cell['link']}"
    rtt_ms, mbit = link_of(cell["link"])
    assert "failure" not in cell, f"{name}: {cell['failure']}"
    assert not cell.get("crash") and cell.get("alive_after") is True, f"{name}: a process died"
    assert "helper_exit" not in cell and "qemu_exit" not in cell, name

    samples = cell.get("samples", [])
    assert len(samples) == PRESSES, f"{name}: {len(samples)} samples"
    assert not [s for s in samples if s.get("timeout")], f"{name}: presses not drawn: {samples}"
    lat = [s["latency_ms"] for s in samples]
    # The relay holds each direction for half the RTT: nothing can be drawn
    # sooner than one round trip (2 ms for the relay's timer granularity).
    assert all(rtt_ms - 2 <= x < SAMPLE_TIMEOUT_MS for x in lat), f"{name}: {lat}"

    traffic = cell.get("traffic")
    assert traffic, f"{name}: no relay counters over the presses"
    assert traffic["window_s"] > 0 and traffic["relay_bytes_out"] > 0, f"{name}: {traffic}"
    # Every press redraws the key box, so display bytes flow in every cell;
    # on a shaped link no more than its rate (tbf) gets through, give or take
    # what the relay's socket buffer took in at either end of the window.
    assert traffic["display_mbit_s"] > 0, f"{name}: {traffic}"
    if mbit:
        assert traffic["all_mbit_s"] <= mbit * 1.25, f"{name}: {traffic}"

    cores = cell.get("cpu_cores", {})
    watched = {"qemu", "relay"} | ({"helper"} if cell["config"].startswith("qs-") else set())
    assert set(cores) == watched, f"{name}: {cores}"
    assert all(c is not None for c in cores.values()), f"{name}: {cores}"
    # qemu's TCG guest and the helper work in every cell; the relay of an
    # idle cell may not use one 10 ms tick in the window.
    assert all(cores[p] > 0 for p in watched - {"relay"}), f"{name}: {cores}"
    for proc in watched - {"relay"}:
        assert cell.get(f"{proc}_peak_mib", 0) > 0, f"{name}: no peak RSS of {proc}"
    if "helper" in watched:
        # The helper's cores by thread add up to its total: /proc rounds
        # each thread's time down to a tick where the process's is rounded
        # once, so per window the sum may be short by a tick a thread at
        # each end, which 'rest' makes up; it may never be over by more.
        threads = cell.get("helper_threads") or {}
        assert {"qemu-spice", "qs-listener", "rest"} <= set(threads), f"{name}: {threads}"
        assert all(v >= 0 for v in threads.values()), f"{name}: {threads}"
        tick_cores = 1 / os.sysconf("SC_CLK_TCK") / cell["window_s"]
        over = sum(threads.values()) - cores["helper"]
        n = cell.get("helper_thread_count", 0)
        assert n >= 2, f"{name}: {n} threads"
        assert -1e-9 <= over <= 2 * n * tick_cores, f"{name}: {threads} {cores}"

    # The picture-quality measure: the client's activity rectangle shortly
    # after the stop, scored against qemu's screendump (tests/bench/rig).
    still = cell.get("still")
    assert still and "error" not in still and still.get("pixels", 0) > 0, f"{name}: still {still}"

    if cell["config"].startswith("qs-"):
        frozen = cell.get("frozen")
        assert frozen and frozen.get("exact") is True, f"{name}: frozen frame {frozen}"


@pytest.fixture(scope="module")
def quick_run(paths, guest, tmp_path_factory):
    """One --quick run for both tests below: (cells.json's contents, output dir)."""
    paths.require_test_client()
    paths.require_chroot("trixie")
    relay = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if not os.access(relay, os.X_OK):
        raise MissingComponent(f"delay relay {relay}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    out = tmp_path_factory.mktemp("bench") / "quick"
    res = subprocess.run(
        [sys.executable, os.path.join(RIG, "qs-bench"), "--quick", "--out", str(out),
         "--relay", str(relay)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1400,
        env={**os.environ, "QS_BUILD_DIR": str(paths.build_dir)})
    print(res.stdout)
    assert res.returncode == 0, res.stdout[-3000:]
    return json.loads((out / "cells.json").read_text()), out


@pytest.mark.timeout(1500)
def test_bench_quick(quick_run):
    data, out = quick_run
    assert data["meta"]["helper_serves"] is True, "the helper under test does not serve"
    cells = data["cells"]
    assert sorted(c["config"] for c in cells) == ["qs-virtio", "spice-all", "spice-off"], cells
    for cell in cells:
        check_cell(cell)
    with open(out / "samples.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(cells) * PRESSES, rows
    assert all(float(r["latency_ms"]) > 0 for r in rows), rows
    assert (out / "summary.md").read_text().count("\n|") >= 8
    # The helper's end, heard as every test's helper is.
    ends = data["meta"].get("helper_ends", [])
    assert [e["config"] for e in ends] == ["qs-virtio"], ends
    for end in ends:
        with open(end["log"], errors="replace") as f:
            exits.check(f"the bench's helper ({end['config']} {end['activity']})",
                        end["status"], f.read())


# The qemu-spice cell (busy, 80 ms / 10 Mbit) against issue 22's goals.
# p50 within RTT + 10 ms and p95 within RTT + 30 ms: measured 84-87 ms and
# 86-91 ms in the side-by-side and full runs of docs/performance.md
# (2026-12-03/04, 20 presses, plain build). The still's PSNR: 34.4 to 37.0 dB
# over the same runs; the bound, 33 dB, is a dB and a half under the lowest.
P50_OVER_RTT_MS = 10
P95_OVER_RTT_MS = 30
STILL_PSNR_MIN_DB = 33.0


@pytest.mark.timing
@pytest.mark.timeout(1500)
def test_bench_quick_figures(quick_run):
    data, _ = quick_run
    ours = [c for c in data["cells"] if c["config"] == "qs-virtio"]
    assert len(ours) == 1, data["cells"]
    cell = ours[0]
    rtt_ms, _ = link_of(cell["link"])
    lat = sorted(s["latency_ms"] for s in cell["samples"])
    p50 = lat[(len(lat) + 1) // 2 - 1]
    p95 = lat[-(-len(lat) * 95 // 100) - 1]
    psnr = cell["still"]["psnr_db"]
    print(f"qemu-spice busy {cell['link']}: p50 {p50} ms, p95 {p95} ms, "
          f"still {psnr} dB")
    assert p50 <= rtt_ms + P50_OVER_RTT_MS, f"p50 {p50} ms on {cell['link']}: {lat}"
    assert p95 <= rtt_ms + P95_OVER_RTT_MS, f"p95 {p95} ms on {cell['link']}: {lat}"
    assert psnr == "inf" or psnr >= STILL_PSNR_MIN_DB, cell["still"]


# Issue 22's goal is a quarter of streaming-video=all's display bytes on busy
# content. The quick pair (busy, 80 ms / 10 Mbit, one link each) measured
# 0.14x to 0.15x in side-by-side runs (docs/performance.md, "Rate by picture
# quality"); the bound is the goal itself, 0.25x, which leaves 1.7x for a short
# window's spread: spice-server's MJPEG rate moved 4.1-4.9 Mbit/s between
# runs, ours 0.6-0.9. Display Mbit/s, not bytes, since the two windows differ
# in length.
BYTES_RATIO_BOUND = 0.25


@pytest.mark.timing
@pytest.mark.timeout(1500)
def test_bench_quick_bytes_ratio(quick_run):
    data, _ = quick_run
    busy = {c["config"]: c for c in data["cells"] if c["activity"] == "busy"}
    assert set(busy) == {"spice-all", "qs-virtio"}, data["cells"]
    assert busy["spice-all"]["link"] == busy["qs-virtio"]["link"], busy
    ours = busy["qs-virtio"]["traffic"]["display_mbit_s"]
    theirs = busy["spice-all"]["traffic"]["display_mbit_s"]
    assert theirs > 0, busy["spice-all"]["traffic"]
    ratio = ours / theirs
    print(f"display Mbit/s on busy {busy['qs-virtio']['link']}: qemu-spice {ours:.2f}, "
          f"spice-server (all) {theirs:.2f}, ratio {ratio:.3f} (bound {BYTES_RATIO_BOUND})")
    assert ratio <= BYTES_RATIO_BOUND, \
        f"qemu-spice sent {ratio:.2f}x spice-server's display bytes (bound {BYTES_RATIO_BOUND})"
