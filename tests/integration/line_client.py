# SPDX-License-Identifier: GPL-2.0-or-later
"""A client script run as a subprocess (Debian's python, with gi and
spice-client-glib) that says one line per event on stdout and may take
commands on stdin, its lines kept in order: a wait names the index it looks
from, so a test can wait for what came after its own action (marks), and a
line read while waiting for another is not lost. Read by a thread: select()
on a buffered pipe would miss lines already buffered. (script_client.py's
ScriptClient consumes the lines it waits through; this one keeps them.)"""

import queue
import subprocess
import threading
import time


class LineClient:
    def __init__(self, argv, commands=False):
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", *map(str, argv)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.PIPE if commands else subprocess.DEVNULL, text=True)
        self.commands = commands
        self.lines = []
        self._q = queue.Queue()
        self._ended = False
        self._err = []
        # Each pipe has one reader for its whole life: a communicate() that
        # read and closed stdout under the line thread made it fail with
        # "I/O operation on closed file".
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._readers:
            t.start()

    def _read(self):
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            self._err.append(line)

    def stderr(self):
        """What the script wrote to stderr so far."""
        return "".join(self._err)

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def mark(self):
        """The index the next line will have: wait(..., since=mark)."""
        return len(self.lines)

    def wait(self, prefix, timeout, since=0):
        """The first line from index `since` on starting with prefix, or
        None at the timeout or when the script has ended."""
        deadline = time.monotonic() + timeout
        i = since
        while True:
            while i < len(self.lines):
                if self.lines[i].startswith(prefix):
                    return self.lines[i]
                i += 1
            left = deadline - time.monotonic()
            if left <= 0 or self._ended:
                return None
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                self._ended = True
                return None
            self.lines.append(line)

    def finish(self, timeout=30):
        """Ask the script to quit (if it takes commands), wait for it;
        returns its stderr."""
        if self.commands:
            try:
                self.send("quit")
            except (BrokenPipeError, ValueError, OSError):
                pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for t in self._readers:
            t.join(timeout=10)
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
        return self.stderr()
