# SPDX-License-Identifier: GPL-2.0-or-later
"""The run's outputs: every sample as CSV, every cell as JSON, markdown
tables in the reference's shape, and PNG plots."""

import csv
import json
import os

from .cell import CONFIGS, percentile


def latencies(rec):
    return [s["latency_ms"] for s in rec.get("samples", []) if "latency_ms" in s]


def timeouts(rec):
    return sum(1 for s in rec.get("samples", []) if s.get("timeout"))


def write_samples(records, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["link", "activity", "config", "press", "latency_ms", "timeout"])
        for r in records:
            for s in r.get("samples", []):
                w.writerow([r.get("spec", r["link"]), r["activity"], r["config"], s["i"],
                            s.get("latency_ms", ""), int(bool(s.get("timeout")))])


def write_json(records, meta, path):
    with open(path, "w") as f:
        json.dump({"meta": meta, "cells": records}, f, indent=1, default=str)


def _f(v, fmt):
    return "-" if v is None else format(v, fmt)


def _db(v):
    if v is None:
        return "-"
    return "inf" if v == "inf" else f"{v:.1f}"


def reference_order(records):
    """Rows by link, then activity, then configuration, as the reference."""
    from .link import PROFILES
    links, acts, cfgs = list(PROFILES), ["idle", "busy", "heavy", "typing"], list(CONFIGS)

    def key(r):
        return (links.index(r["link"]) if r["link"] in links else 99,
                acts.index(r["activity"]) if r["activity"] in acts else 99,
                cfgs.index(r["config"]) if r["config"] in cfgs else 99)
    return sorted(records, key=key)


def _settle(r):
    """(settle s, settled), recomputed from the trace with today's rule."""
    from .cell import settle_from_trace
    trace = r.get("settle_trace")
    if not trace:
        return r.get("settle_s"), r.get("settled")
    end = r.get("settle_end_s")
    if end is None:          # records from before settle_end_s was kept
        end = trace[-1][0] if r.get("settled") is False else trace[-1][0] + 1.5
    return settle_from_trace(trace, end)


def tables(records, meta):
    """Markdown: results and cost tables, in the reference page's columns."""
    records = reference_order(records)
    out = []
    out.append("| Link | Activity | Config | Samples | p50 ms | p95 ms | Timeouts | "
               "Display Mbit/s | Activity PSNR dB (still) | Activity SSIM (still) | "
               "Background exact (px differing) | Background PSNR dB | "
               "Frozen exact (px differing) | Frozen SSIM | Frozen PSNR dB | Settle s | "
               "Load start/end |")
    out.append("|" + "---|" * 17)
    for r in records:
        lat = latencies(r)
        load = f"{r.get('load_start', 0):.1f} / {r.get('load_end', 0):.1f}"
        if not lat:
            out.append(f"| {r['link_label']} | {r['activity']} | {r['config_label']} | 0 | "
                       f"{r.get('failure', 'no samples')} | - | - | - | - | - | - | - | - | - | - | - "
                       f"| {load} |")
            continue
        mid, fro, still = r.get("mid", {}), r.get("frozen", {}), r.get("still", {})
        tr = r.get("traffic", {})
        bg = "-" if not mid or "exact" not in mid else \
            f"{'yes' if mid['exact'] else 'no'} ({mid['differing']})"
        fz = "-" if not fro or "exact" not in fro else \
            f"{'yes' if fro['exact'] else 'no'} ({fro['differing']})"
        st, settled = _settle(r)
        settle = "-" if st is None else f"{st:.1f}" + ("" if settled else " (not settled)")
        out.append(
            f"| {r['link_label']} | {r['activity']} | {r['config_label']} | {len(lat)} | "
            f"{percentile(lat, 50):.0f} | {percentile(lat, 95):.0f} | {timeouts(r)} | "
            f"{_f(tr.get('display_mbit_s'), '.1f')} | {_db(still.get('psnr_db'))}"
            f"{' at ' + format(still['after_stop_ms'], '.0f') + ' ms' if 'after_stop_ms' in still else ''}"
            f"{' (stale)' if still.get('stale') else ''} | "
            f"{_f(still.get('ssim'), '.4f')} | {bg} | {_db(mid.get('psnr_db'))} | "
            f"{fz} | {_f(fro.get('ssim'), '.4f')} | {_db(fro.get('psnr_db'))} | {settle} | "
            f"{load} |")
    out.append("")
    out.append("| Link | Activity | Config | qemu cores | helper cores | qemu + helper | "
               "relay cores | qemu peak MiB | helper peak MiB | Server bytes | "
               "Server reads | Relay writes | Segments out (display) | Guest fps |")
    out.append("|" + "---|" * 14)
    for r in records:
        cores = r.get("cpu_cores") or {}
        tr = r.get("traffic") or {}
        q, h = cores.get("qemu"), cores.get("helper")
        both = None if q is None or h is None else q + h
        hp = r.get("helper_peak_mib")
        out.append(
            f"| {r['link_label']} | {r['activity']} | {r['config_label']} | {_f(q, '.3f')} | "
            f"{_f(h, '.3f')} | {_f(both, '.3f')} | {_f(cores.get('relay'), '.3f')} | "
            f"{_f(r.get('qemu_peak_mib'), '.0f')} | {_f(hp, '.0f')} | "
            f"{tr.get('server_bytes', '-')} | {tr.get('server_reads', '-')} | "
            f"{tr.get('relay_writes', '-')} | {tr.get('segs_out', '-')} "
            f"({tr.get('display_segs_out', '-')}) | {_f(r.get('guest_fps'), '.1f')} |")
    out += viewers_table(records)
    return "\n".join(out) + "\n"


def viewers_table(records):
    """What reached each extra viewer while the cell's client pressed keys:
    its display stayed live if frames and invalidates kept arriving."""
    rows = [r for r in records if r.get("viewers")]
    if not rows:
        return []
    out = ["", "| Cell | Activity | Viewer link | Window s | Invalidates/s | Stream frames | "
           "Display bytes | Client exit |", "|" + "---|" * 8]
    for r in rows:
        for v in r["viewers"]:
            w = v.get("watch") or {}
            disp = sum(b for k, b in (w.get("bytes_received") or {}).items()
                       if k.startswith("display"))
            if not w:
                out.append(f"| {r['link_label']} | {r['activity']} | {v['link']} | "
                           f"{v.get('failure', '-')} | - | - | - | {v.get('status')} |")
                continue
            out.append(f"| {r['link_label']} | {r['activity']} | {v['link']} | "
                       f"{_f(w.get('seconds'), '.1f')} | "
                       f"{_f(w.get('invalidates_per_s'), '.1f')} | "
                       f"{w.get('stream_frames', '-')} | {disp} | {v.get('status')} |")
    return out


def _cores(r):
    c = (r or {}).get("cpu_cores") or {}
    if c.get("qemu") is None:
        return None
    return c["qemu"] + (c.get("helper") or 0)


def goals_table(records, config="qs-virtio", against="spice-all"):
    """One row per cell of `config` with issue 22's bounds beside it: p50
    and p95 within RTT + 10 and RTT + 30 ms, display bytes as a ratio of
    `against`'s in busy and heavy cells, the activity still's PSNR and the
    cores of qemu + helper beside `against`'s in the same cell."""
    from .link import PROFILES
    by_cell = {(r["config"], r["activity"], r["link"]): r for r in records}
    rows = [r for r in reference_order(records) if r["config"] == config]
    rows.sort(key=lambda r: ["busy", "heavy", "idle", "typing"].index(r["activity"])
              if r["activity"] in ("busy", "heavy", "idle", "typing") else 99)
    if not rows:
        return []
    out = ["", f"Against issue 22's goals: {config} beside {against} in the same cell.", "",
           "| Link | Activity | p50 / p95 ms | within RTT+10 / +30 | display bytes ratio | "
           "activity PSNR dB, ours / theirs | cores qemu+helper, ours / theirs | "
           "helper cores |", "|" + "---|" * 8]
    for r in rows:
        a = by_cell.get((against, r["activity"], r["link"]))
        lat = latencies(r)
        prof = PROFILES.get(r["link"])
        if not lat or prof is None:
            out.append(f"| {r['link_label']} | {r['activity']} | "
                       f"{r.get('failure', 'no samples')} | - | - | - | - | - |")
            continue
        p50, p95, rtt = percentile(lat, 50), percentile(lat, 95), prof.rtt_ms
        within = (f"{'yes' if p50 <= rtt + 10 else 'no'} / "
                  f"{'yes' if p95 <= rtt + 30 else 'no'}")
        if p50 > rtt + 10 or p95 > rtt + 30:
            within += f" (RTT + {p50 - rtt:.0f} / + {p95 - rtt:.0f})"
        ratio = "-"
        ours_mbit = (r.get("traffic") or {}).get("display_mbit_s")
        theirs_mbit = ((a or {}).get("traffic") or {}).get("display_mbit_s")
        if r["activity"] in ("busy", "heavy") and ours_mbit is not None and theirs_mbit:
            ratio = f"{ours_mbit / theirs_mbit:.2f}"

        def still(rec):
            st = (rec or {}).get("still") or {}
            return _db(st.get("psnr_db")) + (" stale" if st.get("stale") else "")
        out.append(f"| {r['link_label']} | {r['activity']} | {p50:.0f} / {p95:.0f} | "
                   f"{within} | {ratio} | {still(r)} / {still(a)} | "
                   f"{_f(_cores(r), '.3f')} / {_f(_cores(a), '.3f')} | "
                   f"{_f((r.get('cpu_cores') or {}).get('helper'), '.3f')} |")
    return out


def threads_table(records):
    """The helper's cores by thread in each cell that ran one: the main loop
    (the process's own name), qemu's listener and audio threads, GDBus,
    GLib's pool (the encoders), and the rest: threads that ended in the
    window, and /proc's rounding (measure.CpuWindow)."""
    rows = [r for r in reference_order(records) if r.get("helper_threads")]
    if not rows:
        return []
    names = {}
    for r in rows:
        for k, v in r["helper_threads"].items():
            names[k] = names.get(k, 0.0) + v
    cols = [k for k in sorted(names, key=lambda k: -names[k]) if k != "rest"] + ["rest"]
    out = ["", "The helper's cores by thread, in the same window (/proc/PID/task).", "",
           "| Config | Link | Activity | helper | " + " | ".join(cols) + " |",
           "|" + "---|" * (4 + len(cols))]
    for r in rows:
        t = r["helper_threads"]
        out.append(f"| {r['config']} | {r['link_label']} | {r['activity']} | "
                   f"{_f((r.get('cpu_cores') or {}).get('helper'), '.3f')} | "
                   + " | ".join(_f(t.get(c), '.3f') for c in cols) + " |")
    return out


def write_summary(records, meta, path):
    with open(path, "w") as f:
        f.write(f"# qs-bench run {meta['started']}\n\n")
        f.write(f"Host: {meta['host']}. Link mode: {meta['link_mode']}. Presses per cell: "
                f"{meta['presses']} (+1 unmeasured probe). Load average at start "
                f"{meta['load_start']:.1f}, at end {meta.get('load_end', 0):.1f}. "
                f"No CPU pinning.\n\n")
        f.write(tables(records, meta))
        goals = goals_table(records)
        if goals:
            f.write("\n".join(goals) + "\n")
        threads = threads_table(records)
        if threads:
            f.write("\n".join(threads) + "\n")


def plots(records, out_dir):
    """p50 per link per config, and display bytes per config; returns paths."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    configs = [c for c in CONFIGS if any(r["config"] == c for r in records)]
    for activity in sorted({r["activity"] for r in records}):
        rows = [r for r in records if r["activity"] == activity]
        links = []
        for r in rows:
            if r["link_label"] not in links:
                links.append(r["link_label"])
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        width = 0.8 / max(1, len(configs))
        for k, c in enumerate(configs):
            p50, mbit, mbytes = [], [], []
            for link in links:
                cell = [r for r in rows if r["config"] == c and r["link_label"] == link]
                lat = latencies(cell[0]) if cell else []
                p50.append(percentile(lat, 50) if lat else 0)
                tr = cell[0].get("traffic", {}) if cell else {}
                mbit.append(tr.get("display_mbit_s") or 0)
                mbytes.append((tr.get("server_bytes") or 0) / 1e6)
            xs = [i + k * width for i in range(len(links))]
            axes[0].bar(xs, p50, width, label=CONFIGS[c]["label"])
            axes[1].bar(xs, mbit, width, label=CONFIGS[c]["label"])
            axes[2].bar(xs, mbytes, width, label=CONFIGS[c]["label"])
        for ax, title in ((axes[0], "keypress-to-draw p50 (ms, log)"),
                          (axes[1], "display Mbit/s during the presses"),
                          (axes[2], "MB sent by the server during the presses")):
            ax.set_xticks([i + width * (len(configs) - 1) / 2 for i in range(len(links))])
            ax.set_xticklabels(links, rotation=20, fontsize=8)
            ax.set_title(f"{activity}: {title}", fontsize=9)
        axes[0].set_yscale("log")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(out_dir, f"plot-{activity}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)
    return made
