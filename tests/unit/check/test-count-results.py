#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tools/count-results, the verdict of tools/check, on made-up result files:
each way a broken phase could once end green (issue R) must count as a
failure, and a clean run must not."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                    "tools", "count-results")


def junit(path, cases):
    """cases: list of (name, outcome) with outcome 'pass', 'fail', or
    ('skip', message)."""
    out = ['<?xml version="1.0"?><testsuites><testsuite>']
    for name, outcome in cases:
        out.append(f'<testcase classname="t" name="{name}">')
        if outcome == "fail":
            out.append('<failure message="boom"/>')
        elif isinstance(outcome, tuple):
            out.append(f'<skipped message="{outcome[1]}"/>')
        out.append("</testcase>")
    out.append("</testsuite></testsuites>")
    with open(path, "w") as f:
        f.write("".join(out))


def testlog(path, entries):
    with open(path, "w") as f:
        for name, result, stdout in entries:
            f.write(json.dumps({"name": name, "result": result, "stdout": stdout}) + "\n")


def verdict(d, runs, expected=None, selection=None):
    exp = os.path.join(d, "expected")
    with open(exp, "w") as f:
        for k, v in (expected or {}).items():
            f.write(f"{k} {v}\n")
    argv = [sys.executable, TOOL, "--expected", exp]
    if selection:
        argv += ["--selection", selection]
    res = subprocess.run(argv + runs, capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    first, *rest = res.stdout.splitlines()
    return tuple(int(x) for x in first.split()), "\n".join(rest)


def main():
    failures = []

    def case(name, got, want, text=""):
        if got != want:
            failures.append(f"{name}: got {got}, want {want}\n{text}")

    with tempfile.TemporaryDirectory() as d:
        x = os.path.join(d, "x.xml")
        m = os.path.join(d, "m.json")

        junit(x, [("a", "pass"), ("b", "pass")])
        case("clean pytest phase", verdict(d, [f"x:0:{x}"], {"x": 2})[0], (2, 0, 0))

        # A usage error (the flaky marker refused) leaves a report of 0 cases.
        junit(x, [])
        got, text = verdict(d, [f"x:4:{x}"], {"x": 2})
        case("usage error", got, (0, 2, 0), text)  # the exit and the count
        got, text = verdict(d, [f"x:5:{x}"], {"x": 2})
        case("nothing collected", got[1] >= 1, True, text)
        got, text = verdict(d, [f"x:5:{x}"], selection="-k nothing")
        case("deselected on purpose", got, (0, 0, 0), text)
        got, text = verdict(d, [f"x:4:{x}"], selection="-k nothing")
        case("usage error with a selection", got, (0, 1, 0), text)

        junit(x, [("a", "pass"), ("b", "fail")])
        case("a failing test", verdict(d, [f"x:1:{x}"], {"x": 2})[0], (1, 1, 0))
        junit(x, [("a", "pass")])
        case("exit 1, no failure in the report", verdict(d, [f"x:1:{x}"], {"x": 1})[0],
             (1, 1, 0))
        case("fewer tests than expected", verdict(d, [f"x:0:{x}"], {"x": 2})[0], (1, 1, 0))
        case("more tests than expected", verdict(d, [f"x:0:{x}"], {"x": 0})[0], (1, 1, 0))
        case("no expected count", verdict(d, [f"x:0:{x}"], {"y": 1})[0], (1, 1, 0))
        case("missing report", verdict(d, [f"x:0:{d}/none.xml"], {"x": 1})[0], (0, 1, 0))
        case("not run", verdict(d, ["x:not-run:"], {"x": 1})[0], (0, 1, 0))

        junit(x, [("a", ("skip", "not applicable here: qemu 7.2")),
                  ("b", ("skip", "Skipped: no openssl"))])
        got, text = verdict(d, [f"x:0:{x}"], {"x": 2})
        case("expected skip and missing dependency", got, (0, 1, 1), text)

        testlog(m, [("u1", "OK", "ok 1 /a\nok 2 /b # SKIP not applicable here: big endian"),
                    ("u2", "OK", "ok 1 /c # SKIP needs root")])
        got, text = verdict(d, [f"m:0:{m}"], {"m": 2})
        case("GLib subtest skips", got, (2, 1, 1), text)
        testlog(m, [("u1", "OK", ""), ("u2", "OK", "")])
        case("meson exit without a failure", verdict(d, [f"m:1:{m}"], {"m": 2})[0], (2, 1, 0))
        testlog(m, [("u1", "OK", ""), ("u2", "FAIL", "")])
        case("meson failure", verdict(d, [f"m:1:{m}"], {"m": 2})[0], (1, 1, 0))
        testlog(m, [("u1", "SKIP", "")])
        case("meson skip (exit 77)", verdict(d, [f"m:0:{m}"], {"m": 1})[0], (0, 1, 0))

    for f in failures:
        print(f, file=sys.stderr)
    print(f"{len(failures)} of the cases failed" if failures else "all cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
