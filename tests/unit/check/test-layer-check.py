#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The helper's layer checks, made to fail on purpose.

    test-layer-check.py LAYER_CHECK SOURCE_ROOT BUILD_ROOT

tools/layer-check on a scratch copy of helper/: an include up the layer
table in each spelling (relative, angle, bare, from and into a sub-folder,
a root file, a generated header) must fail with its one-line message, and
the untouched copy must pass; a circle of files must fail with
--cycles=error and only warn with --cycles=warn, and parts of one object
(X.c, X-*.c around X-private.h) must not count as a circle.
Then helper/meson.build's link check for flow, its own link command (from
the build's ninja file) with flow's library swapped for a copy holding one
more object that calls up into channels (and that nothing calls, so only a
whole-archive link sees it), must fail on that call, while the command as
built links."""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

failures = []


def case(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'}: {name}")
    if not ok:
        failures.append(name)
        if detail:
            print(detail, file=sys.stderr)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def append(path, text):
    with open(path, encoding="utf-8") as f:
        n = sum(1 for _ in f)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
    return n + 1


def layer_cases(tool, source_root, tmp):
    helper = os.path.join(tmp, "helper")
    shutil.copytree(os.path.join(source_root, "helper"), helper)
    may_flow = "flow may use util, screen (the layer table in helper/meson.build)"
    r = run([tool, "--cycles=off", helper])
    case("the helper as it is passes", r.returncode == 0 and not r.stderr, r.stderr)

    pacer = os.path.join(helper, "flow", "qs-pacer.h")
    with open(pacer, encoding="utf-8") as f:
        pristine = f.read()
    msg = os.path.join(helper, "channels", "qs-session.h")
    spellings = [
        ('"../channels/qs-session.h"', msg, "layer channels"),
        ("<channels/qs-session.h>", msg, "layer channels"),
        ('"channels/../channels/qs-session.h"', msg, "layer channels"),
        ('"qs-helper-control.h"', os.path.join(helper, "qs-helper-control.h"),
         "one of the helper's root files (main.c's neighbours, the top)"),
        ('"qs-session.h"', msg, "layer channels"),
        ('"qs-dbus-display1.h"', os.path.join(helper, "display", "qs-dbus-display1.h"),
         "layer display"),
        ('"channels/sub/qs-deep.h"', os.path.join(helper, "channels", "sub", "qs-deep.h"),
         "layer channels"),
    ]
    write(os.path.join(helper, "channels", "sub", "qs-deep.h"), "#pragma once\n")
    for spelling, target, what in spellings:
        with open(pacer, "w", encoding="utf-8") as f:
            f.write(pristine)
        line = append(pacer, f"#include {spelling}\n")
        r = run([tool, "--cycles=off", helper])
        want = (f"{pacer}:{line}: flow includes {spelling}, which is {target} "
                f"in {what}; {may_flow}\n")
        case(f"flow including {spelling} fails", r.returncode == 1 and r.stderr == want,
             f"status {r.returncode}\nwant: {want}got:  {r.stderr}")
    with open(pacer, "w", encoding="utf-8") as f:
        f.write(pristine)

    # A file in a sub-folder is its layer's: net may not use screen.
    deep = os.path.join(helper, "net", "web", "qs-deep.c")
    write(deep, '#include <glib.h>\n#include "../../screen/qs-screen.h"\n')
    r = run([tool, "--cycles=off", helper])
    want = (f"{deep}:2: net includes \"../../screen/qs-screen.h\", which is "
            f"{os.path.join(helper, 'screen', 'qs-screen.h')} in layer screen; "
            f"net may use util (the layer table in helper/meson.build)\n")
    case("net/web/ including screen fails", r.returncode == 1 and r.stderr == want,
         f"status {r.returncode}\nwant: {want}got:  {r.stderr}")
    os.remove(deep)

    # A folder the table does not list is refused until it has its row.
    extra = os.path.join(helper, "extra", "qs-extra-x.c")
    write(extra, '#include "util/qs-rect.h"\n')
    r = run([tool, "--cycles=off", helper])
    case("a folder outside the table fails",
         r.returncode == 1 and "folder extra/ is not in the layer table" in r.stderr,
         r.stderr)
    rows = [f"{k}={v}" for k, v in [("util", ""), ("screen", "util"),
                                    ("flow", "util,screen"), ("encode", "util"),
                                    ("wire", "encode"), ("extra", "util"),
                                    ("display", "util,screen,flow"), ("net", "util"),
                                    ("channels", "util,screen,flow,encode,wire,display,net"),
                                    ("control", "")]]
    r = run([tool, "--cycles=off", helper] + rows)
    case("... and passes once its row is given", r.returncode == 0 and not r.stderr,
         r.stderr)
    shutil.rmtree(os.path.dirname(extra))


def cycle_cases(tool, tmp):
    flat = os.path.join(tmp, "flat")
    write(os.path.join(flat, "qs-a.h"), "#pragma once\nvoid qs_a(void);\n")
    write(os.path.join(flat, "qs-a.c"), '#include "qs-a.h"\n#include "qs-b.h"\n')
    write(os.path.join(flat, "qs-b.h"), "#pragma once\nvoid qs_b(void);\n")
    write(os.path.join(flat, "qs-b.c"), '#include "qs-b.h"\n')
    # One object in three files around its private header: not a circle.
    write(os.path.join(flat, "qs-c-private.h"), '#pragma once\n#include "qs-c.h"\n')
    write(os.path.join(flat, "qs-c.h"), "#pragma once\n")
    write(os.path.join(flat, "qs-c.c"), '#include "qs-c-private.h"\n#include "qs-c-io.h"\n')
    write(os.path.join(flat, "qs-c-io.h"), "#pragma once\n")
    write(os.path.join(flat, "qs-c-io.c"), '#include "qs-c-private.h"\n#include "qs-c.h"\n')
    r = run([tool, "--cycles=error", flat])
    case("a flat folder without a circle passes", r.returncode == 0 and not r.stderr,
         r.stderr)

    append(os.path.join(flat, "qs-b.c"), '#include "qs-a.h"\n')
    want = (f"error: {flat}: a circle of includes among 2 nodes: qs-a qs-b; "
            f"e.g. {flat}/qs-a.c:2 -> qs-b, {flat}/qs-b.c:2 -> qs-a\n")
    r = run([tool, "--cycles=error", flat])
    case("a circle fails with --cycles=error", r.returncode == 1 and r.stderr == want,
         f"status {r.returncode}\nwant: {want}got:  {r.stderr}")
    r = run([tool, "--cycles=warn", flat])
    case("... and only warns with --cycles=warn",
         r.returncode == 0 and r.stderr == want.replace("error: ", "warning: ", 1),
         f"status {r.returncode}\n{r.stderr}")

    # A circle in a layer of a helper-like tree, through a header.
    tree = os.path.join(tmp, "tree")
    write(os.path.join(tree, "meson.build"), "qs_layers = {\n  'util': [],\n}\n")
    write(os.path.join(tree, "util", "qs-x.h"), '#pragma once\n#include "util/qs-y.h"\n')
    write(os.path.join(tree, "util", "qs-y.h"), "#pragma once\n")
    write(os.path.join(tree, "util", "qs-y.c"), '#include "qs-y.h"\n#include <util/qs-x.h>\n')
    r = run([tool, "--cycles=error", tree])
    want = (f"error: {tree}/util: a circle of includes among 2 nodes: util/qs-x util/qs-y; "
            f"e.g. {tree}/util/qs-x.h:2 -> qs-y, {tree}/util/qs-y.c:2 -> qs-x\n")
    case("a circle inside a layer fails", r.returncode == 1 and r.stderr == want,
         f"status {r.returncode}\nwant: {want}got:  {r.stderr}")


def link_cases(build_root, tmp):
    ninja = shutil.which("ninja") or shutil.which("ninja-build")
    if not ninja:
        case("ninja found to read the link check's command", False)
        return
    target = os.path.join("helper", "qs-layer-link-flow")
    r = run([ninja, "-C", build_root, "-t", "commands", "-s", target])
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    if r.returncode != 0 or not lines:
        case("the link check for flow has a command", False, r.stdout + r.stderr)
        return
    argv = shlex.split(lines[-1])
    if "-o" not in argv:
        case("the link check for flow's command names its output", False, lines[-1])
        return
    out = argv.index("-o") + 1
    argv[out] = os.path.join(tmp, "linked")
    r = run(argv, cwd=build_root)
    case("flow's link check links as built", r.returncode == 0, r.stderr)

    up_c = os.path.join(tmp, "qs-upward.c")
    up_o = os.path.join(tmp, "qs-upward.o")
    write(up_c, "void qs_channels_free(void *channels);\n"
                "void qs_upward(void);\n"
                "void qs_upward(void) { qs_channels_free((void *)0); }\n")
    r = run([argv[0], "-c", "-o", up_o, up_c])
    if r.returncode != 0:
        case("the upward call compiles", False, r.stderr)
        return
    # Into a copy of flow's library (its own objects and this one): linked
    # only if the check links flow's library whole, as it must.
    lib = os.path.join("helper", "flow", "libqs-flow.a")
    r = run([ninja, "-C", build_root, "-t", "commands", "-s", lib])
    archive = shlex.split(r.stdout.strip().splitlines()[-1].split("&&")[-1]) \
        if r.returncode == 0 and r.stdout.strip() else []
    if len(archive) < 4 or archive[2] != lib or lib not in argv:
        case("flow's library and its archive command are found", False,
             r.stdout + r.stderr)
        return
    scratch = os.path.join(tmp, "libqs-flow.a")
    r = run([archive[0], "csr", scratch] + archive[3:] + [up_o], cwd=build_root)
    if r.returncode != 0:
        case("the scratch copy of flow's library is made", False, r.stderr)
        return
    upward = [scratch if a == lib else a for a in argv]
    r = run(upward, cwd=build_root)
    case("flow's library calling channels fails flow's link check",
         r.returncode != 0 and "qs_channels_free" in r.stderr
         and "undefined reference" in r.stderr,
         f"status {r.returncode}\n{r.stderr}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tool, source_root, build_root = (os.path.abspath(a) for a in argv)
    with tempfile.TemporaryDirectory() as tmp:
        layer_cases(tool, source_root, tmp)
        cycle_cases(tool, tmp)
        link_cases(build_root, tmp)
    print(f"{len(failures)} of the cases failed" if failures else "all cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
