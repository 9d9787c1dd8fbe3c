# SPDX-License-Identifier: GPL-2.0-or-later
"""An emulated link: two network namespaces of our own joined by a veth
pair, tbf on each end for the rate, and qs-delay-relay for the delay.

The client runs in the client namespace and connects to the relay, which
listens in the server namespace and forwards each connection to the server
on 127.0.0.1 in the host's namespace (its upstream sockets are made there).
No address outside our own namespaces and the host's loopback is used.

Link modes (see docs/performance.md, "How faithful the link is"):
- shared: every connection of a session crosses the same tbf on the veth,
  so they share one bottleneck queue (the realistic case);
- per-conn: the veth is unshaped and the relay paces each connection on
  its own at the link rate, as if each had a link of its own.
"""

import json
import os
import queue
import signal
import subprocess
import threading
import time

from harness import procs

SERVER_ADDR = "10.254.77.1"
CLIENT_ADDR = "10.254.77.2"
RELAY_PORT = 5900


class LinkProfile:
    """RTT in ms and rate in Mbit/s (0 = not shaped)."""

    def __init__(self, rtt_ms, mbit):
        self.rtt_ms = rtt_ms
        self.mbit = mbit

    @property
    def name(self):
        if self.rtt_ms == 0 and self.mbit == 0:
            return "unshaped"
        return f"{self.rtt_ms}ms-{self.mbit}mbit"

    @property
    def label(self):
        if self.rtt_ms == 0 and self.mbit == 0:
            return "unshaped"
        return f"{self.rtt_ms} ms / {self.mbit:g} Mbit"

    @property
    def rate_kbit(self):
        return int(self.mbit * 1000)

    def relay_queue_bytes(self, minimum=64 << 10):
        """The delay line must hold rate x one-way delay to carry the full
        rate; twice that, rate x RTT (and at least minimum), like a receive
        window of one BDP. Anything above that is buffering a real path
        would not have."""
        if not self.mbit:
            return 4 << 20
        bdp = self.rate_kbit * 1000 // 8 * max(self.rtt_ms, 1) // 2 // 1000
        return max(minimum, 2 * bdp)

    def tbf_params(self):
        """(burst bytes, queue limit bytes) of the tbf on each veth end."""
        rate_bps = self.rate_kbit * 1000 // 8
        burst = max(3028, rate_bps * 2 // 1000)          # 2 ms of line rate, >= 2 MTU
        # A router queue of one BDP (at least 20 ms of line rate).
        limit = max(burst * 2, rate_bps * max(self.rtt_ms, 20) // 1000)
        return burst, limit


PROFILES = {p.name: p for p in (
    LinkProfile(0, 0), LinkProfile(20, 50), LinkProfile(80, 50),
    LinkProfile(80, 10), LinkProfile(80, 5), LinkProfile(150, 2))}


def run(argv, check=True):
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         timeout=30, stdin=subprocess.DEVNULL)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {res.stderr.strip()}")
    return res


class Link:
    """The namespaces and veth (context manager); shaped per profile."""

    def __init__(self, profile, mode="shared"):
        if mode not in ("shared", "per-conn"):
            raise ValueError(f"link mode {mode!r}")
        self.profile = profile
        self.mode = mode
        tag = f"{os.getpid() % 100000}"
        self.ns_server = f"qsb{tag}s"
        self.ns_client = f"qsb{tag}c"
        self.dev_server = f"qsb{tag}vs"
        self.dev_client = f"qsb{tag}vc"
        self.tc_lines = []

    def __enter__(self):
        self.close(quiet=True)
        run(["ip", "netns", "add", self.ns_server])
        run(["ip", "netns", "add", self.ns_client])
        try:
            s, c = self.ns_server, self.ns_client
            run(["ip", "-n", s, "link", "add", self.dev_server, "type", "veth",
                 "peer", "name", self.dev_client, "netns", c])
            run(["ip", "-n", s, "addr", "add", f"{SERVER_ADDR}/30", "dev", self.dev_server])
            run(["ip", "-n", c, "addr", "add", f"{CLIENT_ADDR}/30", "dev", self.dev_client])
            for ns, dev in ((s, self.dev_server), (c, self.dev_client)):
                run(["ip", "-n", ns, "link", "set", "lo", "up"])
                run(["ip", "-n", ns, "link", "set", dev, "up"])
            if self.mode == "shared" and self.profile.mbit:
                burst, limit = self.profile.tbf_params()
                for ns, dev in ((s, self.dev_server), (c, self.dev_client)):
                    argv = ["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf",
                            "rate", f"{self.profile.rate_kbit}kbit",
                            "burst", str(burst), "limit", str(limit)]
                    run(argv)
                    self.tc_lines.append(" ".join(argv))
        except Exception:
            self.close(quiet=True)
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self, quiet=False):
        for ns in (self.ns_server, self.ns_client):
            res = run(["ip", "netns", "del", ns], check=False)
            if res.returncode != 0 and not quiet and "No such file" not in res.stderr:
                raise RuntimeError(f"ip netns del {ns}: {res.stderr.strip()}")

    def client_argv(self, argv):
        """argv run inside the client namespace."""
        return ["ip", "netns", "exec", self.ns_client] + [str(a) for a in argv]

    def qdisc_stats(self):
        """tc -s output of both ends (drops, overlimits), for the record."""
        out = {}
        for ns, dev in ((self.ns_server, self.dev_server), (self.ns_client, self.dev_client)):
            out[dev] = run(["tc", "-n", ns, "-s", "qdisc", "show", "dev", dev],
                           check=False).stdout.strip()
        return out


class HostLink:
    """A link of one extra viewer: no namespaces, no tbf; its relay listens
    on the host's loopback and paces each connection at the profile's rate
    (per-conn), so a second viewer's link is its own, not the cell's."""

    def __init__(self, profile, port):
        self.profile = profile
        self.mode = "per-conn"
        self.port = port

    def listen_argv(self):
        return ["--listen", f"127.0.0.1:{self.port}"]

    def client_argv(self, argv):
        return [str(a) for a in argv]


class Relay:
    """qs-delay-relay for one cell: listens in the server namespace (or, for
    a HostLink, on the host's loopback)."""

    def __init__(self, binary, link, upstream_port, queue_min=64 << 10,
                 upstream_rcvbuf=64 << 10):
        self.link = link
        p = link.profile
        if isinstance(link, HostLink):
            listen = link.listen_argv()
        else:
            listen = ["--listen", f"{SERVER_ADDR}:{RELAY_PORT}",
                      "--listen-netns", f"/run/netns/{link.ns_server}"]
        argv = [binary] + listen + [
                "--connect", f"127.0.0.1:{upstream_port}",
                "--delay-ms", str(p.rtt_ms // 2),
                "--queue-bytes", str(p.relay_queue_bytes(queue_min))]
        if p.mbit and upstream_rcvbuf:
            # Keeps the server's loopback leg from holding a backlog that
            # its socket would not hold on a real path (docs/performance.md).
            argv += ["--upstream-rcvbuf", str(upstream_rcvbuf)]
        if link.mode == "shared" and p.mbit:
            # The kernel doubles SO_SNDBUF: half the tbf queue keeps what the
            # relay has in flight towards the client within that queue, so
            # the relay's TCP, whose own RTT is near zero, cannot overrun it
            # and lose packets a real sender at this RTT would not, and the
            # backlog stays in the relay's bounded queue and the server.
            _, limit = p.tbf_params()
            argv += ["--downstream-sndbuf", str(max(4608, limit // 2))]
        if link.mode == "per-conn" and p.mbit:
            # 10 ms of line rate: the relay's timers are millisecond-grained
            # and the host is loaded, so a smaller bucket loses rate.
            burst = max(3028, p.rate_kbit * 1000 // 8 // 100)
            argv += ["--rate-kbit", str(p.rate_kbit), "--burst-bytes", str(burst)]
        self.argv = argv
        self.proc = procs.spawn(argv, kind="bench-relay", stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self._lines = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._reader, daemon=True).start()
        first = self._next(10.0)
        if first is None or "listening" not in first:
            self.close()
            raise RuntimeError(f"relay did not start: {self.proc.stderr.read()[-500:]}")

    def _reader(self):
        for line in iter(self.proc.stdout.readline, b""):
            try:
                self._lines.put(json.loads(line))
            except ValueError:
                pass
        self._lines.put(None)

    def _next(self, timeout):
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def snapshot(self, timeout=5.0):
        """The relay's counters now: {'t': monotonic, 'conns': [...]}."""
        with self._lock:
            if self.proc.poll() is not None:
                return None
            t = time.monotonic()
            self.proc.send_signal(signal.SIGUSR1)
            stats = self._next(timeout)
        if stats is not None:
            stats["t"] = t
        return stats

    def close(self):
        if self.proc.poll() is None:
            procs.kill_group(self.proc, grace=2.0)
        else:
            procs.forget(self.proc)
