#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs a command of ours and passes only if it exits with exactly the
status given and its stderr holds no sanitizer or runtime-error report
(tests/integration/harness/exits.py decides what is one). meson's
should_fail would pass any non-zero exit, a sanitizer's abort included.

    expect-exit.py STATUS [--stdout REGEX] [--stderr REGEX] -- CMD [ARG...]

--stdout / --stderr: a regular expression the output must match
(re.search, multi-line), so that `--version` is checked to print a version
and a usage error to name the offending option."""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from harness import exits  # noqa: E402


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: expect-exit.py STATUS [--stdout RE] [--stderr RE] -- CMD...")
    split = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("status", type=int)
    ap.add_argument("--stdout")
    ap.add_argument("--stderr")
    a = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    if not cmd:
        ap.error("no command after --")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    try:
        exits.check(" ".join(cmd), res.returncode, res.stderr, a.status)
        for what, pattern, text in (("stdout", a.stdout, res.stdout),
                                    ("stderr", a.stderr, res.stderr)):
            if pattern and not re.search(pattern, text, re.M):
                raise AssertionError(f"{' '.join(cmd)}: {what} does not match "
                                     f"{pattern!r}: {text[-2000:]!r}")
    except AssertionError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"exit {res.returncode} as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
