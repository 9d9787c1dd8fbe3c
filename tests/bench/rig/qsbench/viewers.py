# SPDX-License-Identifier: GPL-2.0-or-later
"""Extra viewers of a qemu-spice cell: each one a qs-test-client that only
watches, behind a relay of its own on the host's loopback, paced per
connection at its own link's rate. The cell's measured client presses keys
as always; the viewers show whether one viewer's link slows another's
(issue L: each session has its own plan) and what each extra session costs
the helper."""

import json
import os
import subprocess
import threading
import time

from harness import procs
from harness.qemu import free_tcp_port

from .link import PROFILES, HostLink, Relay

# The watchers' own display counters; they hold the session until killed.
HOLD_MS = 3_600_000


def parse_spec(spec):
    """'LINK' or 'LINK+VIEWER+VIEWER...' -> (LINK, [VIEWER, ...])."""
    parts = spec.split("+")
    return parts[0], parts[1:]


def valid_spec(spec):
    link, viewers = parse_spec(spec)
    return link in PROFILES and all(v in PROFILES for v in viewers)


def label(link_label, viewers):
    if not viewers:
        return link_label
    names = ", ".join(PROFILES[v].label for v in viewers)
    return f"{link_label} + {len(viewers)} viewer{'s' if len(viewers) > 1 else ''} ({names})"


class Viewers:
    """Starts before the measured client, so every viewer's session is up
    when the presses begin; closed after the cell."""

    def __init__(self, names, opts, upstream_port, cell_dir):
        self.names = names
        self.opts = opts
        self.upstream_port = upstream_port
        self.cell_dir = cell_dir
        self.relays = []
        self.clients = []
        self.errs = []
        self.watches = []       # per viewer: its watch line, once printed
        self.started = None

    def watch_seconds(self):
        """Roughly the measured client's warm-up and presses: the window in
        which the viewers count what reaches them."""
        o = self.opts
        return o.warmup_ms / 1000 + (o.presses + 1) * o.interval_ms / 1000 + 2

    def __enter__(self):
        try:
            for i, name in enumerate(self.names):
                link = HostLink(PROFILES[name], free_tcp_port())
                relay = Relay(self.opts.relay, link, self.upstream_port,
                              queue_min=self.opts.relay_queue_min,
                              upstream_rcvbuf=self.opts.upstream_rcvbuf)
                self.relays.append(relay)
                argv = link.client_argv([
                    self.opts.client, "--host", "127.0.0.1", "--port", link.port,
                    "--timeout", self.opts.client_timeout,
                    "watch", "--seconds", f"{self.watch_seconds():.1f}",
                    "sleep", HOLD_MS])
                err = open(os.path.join(self.cell_dir, f"viewer{i}.stderr"), "wb")
                self.errs.append(err)
                client = procs.spawn(argv, kind="bench-viewer", stdout=subprocess.PIPE,
                                     stderr=err)
                self.clients.append(client)
                self.watches.append(None)
                threading.Thread(target=self._reader, args=(i, client), daemon=True).start()
            self.started = time.monotonic()
        except Exception:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _reader(self, i, client):
        for raw in iter(client.stdout.readline, b""):
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and "invalidates" in obj:
                self.watches[i] = obj

    def close(self):
        # A viewer's window starts once its display is up, a little after
        # the measured client's: wait (bounded) for every watch line.
        if self.started is not None:
            deadline = self.started + self.watch_seconds() + 60
            while time.monotonic() < deadline and any(
                    w is None and c.poll() is None for w, c in zip(self.watches, self.clients)):
                time.sleep(0.1)
            self.started = None
        for c in self.clients:
            if c.poll() is None:
                procs.kill_group(c, grace=1.0)
            else:
                procs.forget(c)
        for r in self.relays:
            r.close()
        for e in self.errs:
            e.close()

    def record(self):
        """Each viewer's watch line (frames and bytes that reached it in
        the window); read once the clients are gone."""
        out = []
        for i, (name, c) in enumerate(zip(self.names, self.clients)):
            watch = self.watches[i]
            item = {"link": name, "status": c.returncode, "watch": watch}
            if watch is None:
                path = os.path.join(self.cell_dir, f"viewer{i}.stderr")
                with open(path, errors="replace") as f:
                    tail = f.read().strip().splitlines()[-1:] or ["no output"]
                item["failure"] = f"no watch line: {tail[0][:200]}"
            out.append(item)
        return out
