# SPDX-License-Identifier: GPL-2.0-or-later
"""A small synchronous QMP client over a unix socket, with fd passing."""

import array
import json
import socket
import threading
import time

from .errors import HarnessError


class QmpError(HarnessError):
    """qemu answered a command with an error."""

    def __init__(self, cmd, error):
        super().__init__(f"QMP {cmd}: {error.get('class')}: {error.get('desc')}")
        self.cmd = cmd
        self.error_class = error.get("class")
        self.desc = error.get("desc")


class Qmp:
    """Connected, capabilities negotiated, ready for command()."""

    def __init__(self, path, timeout=10.0, alive=None):
        """Connect to path, retrying until timeout (qemu creates it late).

        alive: optional callable; connecting gives up early when it is False."""
        self.path = str(path)
        self.events = []
        self._lock = threading.Lock()
        self._buf = b""
        self._next_id = 0
        self._sock = None
        deadline = time.monotonic() + timeout
        last = None
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            try:
                sock.connect(self.path)
                break
            except OSError as e:
                sock.close()
                last = e
            if alive is not None and not alive():
                raise HarnessError(f"QMP {self.path}: process exited before connecting")
            if time.monotonic() >= deadline:
                raise HarnessError(f"QMP {self.path}: no connection in {timeout}s ({last})")
            time.sleep(0.02)
        self._sock = sock
        greeting = self._read_message(deadline=time.monotonic() + timeout)
        if "QMP" not in greeting:
            raise HarnessError(f"QMP {self.path}: unexpected greeting {greeting!r}")
        self.version = greeting["QMP"].get("version", {}).get("qemu", {})
        self.command("qmp_capabilities")

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_message(self, deadline):
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessError(f"QMP {self.path}: no reply in time")
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise HarnessError(f"QMP {self.path}: connection closed by qemu")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, cmd, fds=(), timeout=30.0, **args):
        """Run cmd; returns its 'return' value, raises QmpError on 'error'.

        fds are sent with the command in one SCM_RIGHTS message (getfd)."""
        with self._lock:
            if self._sock is None:
                raise HarnessError("QMP connection is closed")
            self._next_id += 1
            ident = f"qs-{self._next_id}"
            msg = {"execute": cmd, "id": ident}
            if args:
                msg["arguments"] = args
            data = json.dumps(msg).encode() + b"\n"
            self._sock.settimeout(timeout)
            if fds:
                anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                        array.array("i", [int(fd) for fd in fds]))]
                sent = self._sock.sendmsg([data], anc)
                if sent < len(data):
                    self._sock.sendall(data[sent:])
            else:
                self._sock.sendall(data)
            deadline = time.monotonic() + timeout
            while True:
                reply = self._read_message(deadline)
                if "event" in reply:
                    self.events.append(reply)
                    continue
                if reply.get("id") != ident:
                    continue
                if "error" in reply:
                    raise QmpError(cmd, reply["error"])
                return reply.get("return")

    __call__ = command

    def getfd(self, fdname, fd):
        """Hand fd to qemu under fdname (qemu gets its own copy)."""
        return self.command("getfd", fds=[fd], fdname=fdname)

    def wait_event(self, name, timeout=10.0):
        """Return the first (already received or new) event called name."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for i, ev in enumerate(self.events):
                    if ev.get("event") == name:
                        return self.events.pop(i)
                reply = self._read_message(deadline)
                if "event" in reply:
                    self.events.append(reply)
