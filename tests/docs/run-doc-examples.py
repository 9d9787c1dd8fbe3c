#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs the shell examples of README.md and docs/*.md that are marked
runnable, and checks that every other shell example names the test that
runs it. The convention is in tests/docs/README.md.

Usage: run-doc-examples.py [--timeout S] BUILDDIR [FILE.md ...]
Exit status: 0 all good, 1 an example failed or a note is missing or wrong
(each named FILE:LINE), 2 usage."""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

SRC_ROOT = Path(__file__).resolve().parent.parent.parent
SHELLS = ("sh", "bash")
NOTE = re.compile(r"<!--\s*(tested-by|untested):\s*(.*?)\s*-->", re.S)


class Block:
    def __init__(self, path, line, info, text):
        self.path, self.line, self.text = path, line, text
        words = info.split()
        self.lang = words[0] if words else ""
        self.runnable = self.lang in SHELLS and "runnable" in words[1:]
        self.note = None        # (kind, value) of the comment right above

    @property
    def where(self):
        path = Path(self.path).resolve()
        if path.is_relative_to(SRC_ROOT):
            path = path.relative_to(SRC_ROOT)
        return f"{path}:{self.line}"


def parse(path):
    """Fenced blocks of a Markdown file, each with the HTML comment (if any)
    that ends on the last non-blank line above its opening fence."""
    lines = Path(path).read_text().splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = re.match(r"^ {0,3}(`{3,})(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2).strip(), i
        body = []
        i += 1
        while i < len(lines) and not re.match(rf"^ {{0,3}}{fence}`*\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        block = Block(path, start + 1, info, "\n".join(body) + "\n")
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and lines[j].rstrip().endswith("-->"):
            k = j
            while k >= 0 and "<!--" not in lines[k]:
                k -= 1
            note = NOTE.search("\n".join(lines[max(k, 0):j + 1]))
            if note:
                block.note = (note.group(1), " ".join(note.group(2).split()))
        blocks.append(block)
        i += 1
    return blocks


def meson_suites():
    suites = set()
    for top, dirs, names in os.walk(SRC_ROOT):
        # build directories and hidden ones hold no meson.build of ours
        dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
        if "meson.build" in names:
            text = (Path(top) / "meson.build").read_text()
            suites.update(re.findall(r"suite:\s*'([^']+)'", text))
    return suites


def check_note(block, suites):
    """An error message, or None when the note is there and names real tests."""
    if not block.note:
        return ("a shell example that is not runnable needs "
                "<!-- tested-by: TEST --> or <!-- untested: WHY --> right above it")
    kind, value = block.note
    if not value:
        return f"empty {kind} note"
    if kind == "untested":
        return None
    for ref in re.split(r"[,\s]+", value):
        if not ref:
            continue
        if ref.startswith("suite:"):
            if ref[6:] not in suites:
                return f"tested-by names meson suite '{ref[6:]}', which no meson.build defines"
            continue
        file, _, name = ref.partition("::")
        target = SRC_ROOT / file
        if not target.is_file():
            return f"tested-by names {file}, which does not exist"
        if name and not re.search(rf"\b{re.escape(name)}\b", target.read_text()):
            return f"tested-by names {name}, which {file} does not contain"
    return None


def run(block, builddir, timeout):
    """None on success, else the failure text."""
    tmp = Path(tempfile.mkdtemp(prefix="qs-doc-example-"))
    try:
        (tmp / "build").symlink_to(builddir)
        script = tmp / ".example.sh"
        script.write_text("set -euo pipefail\n" + block.text)
        env = dict(os.environ,
                   PATH=f"{builddir / 'helper'}:{builddir / 'launcher'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   BUILDDIR=str(builddir), SRCDIR=str(SRC_ROOT), HOME=str(tmp), PAGER="cat", MANPAGER="cat",
                   LC_ALL="C.UTF-8")
        proc = subprocess.Popen(["/bin/bash", str(script)], cwd=tmp, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return f"timed out after {timeout} s\n{out.decode(errors='replace')[-3000:]}"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            return f"exit status {proc.returncode}\n{out.decode(errors='replace')[-3000:]}"
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=int, default=60, help="seconds per example (60)")
    ap.add_argument("builddir", type=Path)
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    builddir = args.builddir.resolve()
    for exe in ("helper/qemu-spice", "launcher/qemu-spice-launcher"):
        if not os.access(builddir / exe, os.X_OK):
            print(f"run-doc-examples: {builddir / exe} is not built", file=sys.stderr)
            return 2
    files = args.files or [SRC_ROOT / "README.md", *sorted((SRC_ROOT / "docs").glob("*.md"))]
    suites = meson_suites()
    failures, ran, noted = [], 0, 0
    for path in files:
        for block in parse(path):
            if block.lang not in SHELLS:
                continue
            if not block.runnable:
                err = check_note(block, suites)
                if err:
                    failures.append(f"{block.where}: {err}")
                else:
                    noted += 1
                continue
            if not block.text.strip():
                failures.append(f"{block.where}: empty runnable example")
                continue
            err = run(block, builddir, args.timeout)
            ran += 1
            if err:
                failures.append(f"{block.where}: runnable example failed: {err}")
                print(f"FAIL {block.where}", flush=True)
            else:
                print(f"ok   {block.where}", flush=True)
    if ran == 0:
        failures.append("no runnable examples found (```sh runnable blocks): nothing was tested")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{ran} runnable examples run, {noted} other shell examples name their test, "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
