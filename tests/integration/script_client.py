# SPDX-License-Identifier: GPL-2.0-or-later
"""A client script run as a subprocess (Debian's python, with gi and
spice-client-glib) that reports on stdout one line per event and may take
commands on stdin. Its lines are read by a thread: select() on a buffered
pipe would miss lines already buffered."""

import queue
import subprocess
import threading
import time


class ScriptClient:
    def __init__(self, script, *args, commands=False):
        self.proc = subprocess.Popen(["/usr/bin/python3", str(script), "client",
                                      *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.PIPE if commands else subprocess.DEVNULL,
                                     text=True)
        self.lines = queue.Queue()
        self.seen = []
        self.stderr = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def command(self, *words):
        self.proc.stdin.write(" ".join(map(str, words)) + "\n")
        self.proc.stdin.flush()

    def wait_line(self, prefix, timeout):
        """The first new line starting with prefix, or None (at the
        timeout, or when the script ended); every line read goes to
        self.seen."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                self.lines.put(None)        # later waits end at once too
                return None
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def seen_or_wait(self, prefix, timeout):
        """A line starting with prefix already read (while waiting for
        another: the agent may connect after the first picture, when qemu's
        D-Bus clipboard registers late), or the next one (wait_line)."""
        for line in self.seen:
            if line.startswith(prefix):
                return line
        return self.wait_line(prefix, timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.stderr = self.proc.stderr.read()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass
