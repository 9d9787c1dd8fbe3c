# SPDX-License-Identifier: GPL-2.0-or-later
"""Host-side measurements: CPU and peak RSS from /proc, the load average,
and image comparison (exact pixel counts, PSNR, SSIM)."""

import math
import os
import re
import time

import numpy as np
from PIL import Image

CLK_TCK = os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_seconds(pid):
    """utime + stime of every thread of pid, in seconds (None if gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def thread_seconds(pid):
    """{tid: (name, utime + stime in seconds)} for each live thread of pid;
    {} if the process is gone."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
        except OSError:
            continue                    # ended between the listing and the read
        name = text[text.index("(") + 1:text.rindex(")")]
        rest = text.rsplit(")", 1)[1].split()
        out[tid] = (name, (int(rest[11]) + int(rest[12])) / CLK_TCK)
    return out


def thread_group(name):
    """A thread's name without its instance number: 'qs-listener-1' and
    'pool-3' count as 'qs-listener' and 'pool'."""
    return re.sub(r"[-_]\d+$", "", name) or name


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss(pid):
    """Reset VmHWM (clear_refs 5), so a reused process's peak covers one cell."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class CpuWindow:
    """CPU seconds per wall second of a set of pids between start() and stop(),
    and of the threads of the pid named `by_thread`, grouped by thread name
    (thread_group). Threads that ended inside the window are gone from /proc
    but not from their process's total, and /proc rounds each thread's time
    down to a tick where the process's is rounded once: the difference is
    listed as 'rest'."""

    def __init__(self, pids, by_thread=None):
        self.pids = {k: v for k, v in pids.items() if v}
        self.by_thread = by_thread if by_thread in self.pids else None
        self.t0 = self.c0 = self.tc0 = None
        self.cores = {}
        self.threads = {}
        self.thread_count = 0

    def start(self):
        self.t0 = time.monotonic()
        self.c0 = {k: cpu_seconds(p) for k, p in self.pids.items()}
        if self.by_thread:
            self.tc0 = thread_seconds(self.pids[self.by_thread])

    def stop(self):
        dt = time.monotonic() - self.t0
        t1 = thread_seconds(self.pids[self.by_thread]) if self.by_thread else {}
        for k, p in self.pids.items():
            c1 = cpu_seconds(p)
            if c1 is None or self.c0.get(k) is None or dt <= 0:
                self.cores[k] = None
            else:
                self.cores[k] = (c1 - self.c0[k]) / dt
        self.seconds = dt
        total = self.cores.get(self.by_thread) if self.by_thread else None
        if total is not None and t1:
            groups = {}
            for tid, (name, secs) in t1.items():
                # A thread born inside the window spent all its time in it.
                before = self.tc0.get(tid, (name, 0.0))[1]
                g = thread_group(name)
                groups[g] = groups.get(g, 0.0) + (secs - before) / dt
            groups["rest"] = max(0.0, total - sum(groups.values()))
            self.threads = groups
            self.thread_count = len(t1)
        return self.cores


def load_rgb(path):
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.uint8)


def rgb_from_bytes(width, height, data):
    return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)


def mask_excluding(shape, rects):
    """Boolean HxW mask, True outside every (x, y, w, h) rect."""
    m = np.ones(shape[:2], dtype=bool)
    for x, y, w, h in rects:
        m[y:y + h, x:x + w] = False
    return m


def psnr(a, b, mask):
    diff = (a.astype(np.float64) - b.astype(np.float64))[mask]
    if diff.size == 0:
        return None
    mse = float(np.mean(diff * diff))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def _box(img, k):
    """Mean over k x k windows ('valid' positions), via an integral image."""
    s = np.pad(img, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    return (s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]) / (k * k)


def ssim(a, b, mask, k=8):
    """Mean SSIM on luma with k x k box windows, over windows wholly inside mask."""
    def luma(x):
        x = x.astype(np.float64)
        return 0.299 * x[..., 0] + 0.587 * x[..., 1] + 0.114 * x[..., 2]
    x, y = luma(a), luma(b)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = _box(x, k), _box(y, k)
    vx = _box(x * x, k) - mx * mx
    vy = _box(y * y, k) - my * my
    cxy = _box(x * y, k) - mx * my
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    inside = _box(mask.astype(np.float64), k) > 0.999
    return float(s[inside].mean()) if inside.any() else None


def compare_inside(client, reference, rect):
    """compare() inside one (x, y, w, h) rect only: the activity's picture
    quality. PSNR over R, G and B is the headline (docs/performance.md says
    why), SSIM beside it."""
    if client.shape != reference.shape:
        return compare(client, reference, [])
    x, y, w, h = rect
    return compare(client[y:y + h, x:x + w], reference[y:y + h, x:x + w], [])


def motion_offset(client, reference, rect, max_shift=8, step=2):
    """Whether the client's picture in rect is the reference's frame: PSNR of
    the rect's inner part (max_shift in from each side) against the
    reference shifted by up to max_shift pixels. Returns (psnr at no shift,
    best psnr, dx, dy). A moving picture whose best match is shifted was an
    earlier (or later) frame than the reference, whatever its coding."""
    x, y, w, h = rect
    m = max_shift
    if w <= 2 * m or h <= 2 * m or client.shape != reference.shape:
        return None
    a = client[y + m:y + h - m, x + m:x + w - m].astype(np.float64)
    best, zero = None, None
    for dy in range(-m, m + 1, step):
        for dx in range(-m, m + 1, step):
            b = reference[y + m + dy:y + h - m + dy, x + m + dx:x + w - m + dx]
            if b.shape != a.shape:
                continue
            mse = float(np.mean((a - b) ** 2))
            p = math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)
            if dx == 0 and dy == 0:
                zero = p
            if best is None or p > best[0]:
                best = (p, dx, dy)
    return zero, best[0], best[1], best[2]


def compare(client, reference, exclude):
    """Pixels differing, PSNR and SSIM of client against reference outside exclude."""
    if client.shape != reference.shape:
        return {"error": f"size {client.shape[1]}x{client.shape[0]} vs "
                         f"{reference.shape[1]}x{reference.shape[0]}"}
    mask = mask_excluding(client.shape, exclude)
    differs = np.any(client != reference, axis=2) & mask
    p = psnr(client, reference, mask)
    return {"pixels": int(mask.sum()), "differing": int(differs.sum()),
            "exact": bool(differs.sum() == 0),
            "psnr_db": None if p is None else (p if math.isfinite(p) else "inf"),
            "ssim": ssim(client, reference, mask)}
