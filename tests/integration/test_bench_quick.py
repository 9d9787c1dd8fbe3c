# SPDX-License-Identifier: GPL-2.0-or-later
"""The shaped-link benchmark's --quick mode (tests/bench/rig) runs end to end.

Timings on this shared machine are not pass/fail material, so this asserts
only that the rig works: every cell produced keypress samples, the relay
counted display traffic, and the outputs were written. A qemu-spice cell
whose helper cannot serve yet must say so ("helper not serving") rather than
pass or fail silently."""

import csv
import json
import os
import subprocess
import sys

import pytest

from harness import MissingComponent

# A rig check that runs the plain build's helper; once per tools/check is enough.
pytestmark = pytest.mark.timing

RIG = os.path.join(os.path.dirname(__file__), "..", "bench", "rig")


@pytest.mark.timeout(1500)
def test_bench_quick(paths, guest, tmp_path):
    paths.require_test_client()
    paths.require_chroot("trixie")
    relay = paths.build_dir / "tests" / "bench" / "rig" / "qs-delay-relay"
    if not os.access(relay, os.X_OK):
        raise MissingComponent(f"delay relay {relay}",
                               f"meson setup {paths.build_dir} && ninja -C {paths.build_dir}")
    out = tmp_path / "quick"
    res = subprocess.run(
        [sys.executable, os.path.join(RIG, "qs-bench"), "--quick", "--out", str(out),
         "--relay", str(relay)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1400,
        env={**os.environ, "QS_BUILD_DIR": str(paths.build_dir)})
    print(res.stdout)
    assert res.returncode == 0, res.stdout[-3000:]
    data = json.loads((out / "cells.json").read_text())
    cells = data["cells"]
    assert len(cells) == 3, cells
    serves = data["meta"]["helper_serves"]
    for cell in cells:
        name = f"{cell['config']} {cell['activity']} {cell['link']}"
        if cell["config"].startswith("qs-") and not serves:
            assert cell.get("failure", "").startswith("helper not serving"), name
            continue
        lat = [s for s in cell.get("samples", []) if "latency_ms" in s]
        assert lat, f"{name}: no samples ({cell.get('failure')})"
        assert cell["traffic"]["relay_bytes_out"] > 0, name
        assert cell["load_start"] >= 0 and cell["load_end"] >= 0, name
    with open(out / "samples.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows, "samples.csv is empty"
    assert (out / "summary.md").read_text().count("\n|") >= 8
