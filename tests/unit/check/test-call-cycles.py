#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tools/call-cycles, made to fail on purpose, then run on the real build.

    test-call-cycles.py CALL_CYCLES BUILD_ROOT [--no-launcher]

A scratch project of three files compiled with cc: a.c calls b.c, b.c
calls c.c, which is clean; then c.c calls a.c back, a circle of three
that no include shows (every prototype is in one shared header), which
must fail naming the three files and the symbol of each step; a file
that only calls a part of itself (an object and its part) must not count.
Last, the build's own helper/ and launcher/ (unless the build has no
launcher: --no-launcher) must hold no circle of calls."""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def case(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'}: {name}")
    if not ok:
        failures.append(name)
        print(detail, file=sys.stderr)


def scratch(tmp, sources):
    """Compiles {name: text} under tmp/proj/part/ into tmp/build and writes
    the build's compile_commands.json."""
    proj, build = os.path.join(tmp, "proj"), os.path.join(tmp, "build")
    os.makedirs(os.path.join(proj, "part"), exist_ok=True)
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(proj, "part", "all.h"), "w") as f:
        f.write("int a(int); int b(int); int c(int); int a_part(int);\n")
    commands = []
    for name, text in sources.items():
        src = os.path.join(proj, "part", name)
        with open(src, "w") as f:
            f.write('#include "all.h"\n' + text)
        out = f"part/{name}.o"
        os.makedirs(os.path.join(build, "part"), exist_ok=True)
        subprocess.run(["cc", "-c", src, "-o", os.path.join(build, out)], check=True)
        commands.append({"directory": build, "file": os.path.relpath(src, build),
                         "output": out, "command": "cc"})
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump(commands, f)
    return build


def run(tool, build, *folders):
    return subprocess.run([tool, build, *folders], capture_output=True, text=True)


def main(tool, build_root, *opts):
    folders = ["helper"] if "--no-launcher" in opts else ["helper", "launcher"]
    with tempfile.TemporaryDirectory() as tmp:
        build = scratch(tmp, {"a.c": "int a(int x) { return b(x) + a_part(x); }\n",
                              "a-part.c": "int a_part(int x) { return x; }\n",
                              "b.c": "int b(int x) { return c(x); }\n",
                              "c.c": "int c(int x) { return x + 1; }\n"})
        r = run(tool, build, "part")
        case("a chain and an object's part are no circle",
             r.returncode == 0 and "4 files, no circle" in r.stdout, r.stdout + r.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        build = scratch(tmp, {"a.c": "int a(int x) { return b(x) + a_part(x); }\n",
                              "a-part.c": "int a_part(int x) { return x; }\n",
                              "b.c": "int b(int x) { return c(x); }\n",
                              "c.c": "int c(int x) { return x > 9 ? x : a(x + 1); }\n"})
        r = run(tool, build, "part")
        want = ["a circle of 3 files calling each other: part/a.c, part/b.c, part/c.c",
                "part/c.c -> part/a.c: a", "part/a.c -> part/b.c: b"]
        case("a call back up a chain is a circle",
             r.returncode == 1 and all(w in r.stdout for w in want) and
             "a-part" not in r.stdout, r.stdout + r.stderr)
        r = run(tool, os.path.join(tmp, "nowhere"), "part")
        case("a build that is missing is a usage error", r.returncode == 2, r.stderr)
    r = run(tool, build_root, *folders)
    case(f"{' and '.join(folders)} hold no circle of calls", r.returncode == 0,
         r.stdout + r.stderr)
    print(r.stdout, end="")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
