#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""qemu-spice --print-capabilities: one JSON object on one line, its type
and version those of the binary, and every feature backed by the options
it names in --help-all (a feature without its options would promise what
the helper cannot do). A feature that is no option (qemu's D-Bus chardevs,
a D-Bus method) names what --help-all must say instead: the interface and
names it serves, the method; AddClient must also be a method of the
control interface this build serves."""

import json
import subprocess
import sys

OPTIONS = {
    "dbus-p2p-fd": ["--dbus-p2p-fd"],
    "dbus-address": ["--dbus-address", "--vm"],
    "listen-fd": ["--listen-fd", "--tls-listen-fd"],
    "ticket-fd": ["--ticket-fd"],
    "control-fd": ["--control-fd"],
    "multi-console": ["--console"],
    "sessions": ["--max-sessions", "--when-full"],
    "max-fps": ["--max-fps"],
    "view-ticket": ["--view-ticket-file", "--view-ticket-fd"],
    "confinement": ["--user", "--confine"],
    "port-fd": ["--port-fd"],
    "usbredir-fd": ["--usbredir-fd"],
    "smartcard-fd": ["--smartcard-fd"],
    "agent-fd": ["--agent-fd"],
    "token-keys": ["--token-keys-file", "--token-keys-fd"],
    "console-page": ["--no-console-page", "--spice-html5-dir"],
    "tls": ["--tls-listen-fd", "--tls-dir"],
    "dbus-chardev": [],
    "add-client": ["--control-fd"],
}

# Text --help-all must hold for features that are not (only) options.
THINGS = {
    "dbus-chardev": ["org.qemu.Display1.Chardev", "com.redhat.spice.0", "org.qemu.usbredir",
                     "org.spice-space.smartcard", "org.spice-space.", "org.qemu.console."],
    "add-client": ["AddClient"],
}


def run(helper, *args):
    res = subprocess.run([helper, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=30)
    if res.returncode != 0:
        sys.exit(f"{helper} {' '.join(args)} exited {res.returncode}: {res.stderr}")
    return res.stdout


def main(helper, xml=None):
    out = run(helper, "--print-capabilities")
    assert out.endswith("\n") and out.count("\n") == 1, repr(out)
    caps = json.loads(out)
    assert set(caps) == {"type", "version", "features"}, caps
    assert caps["type"] == "qemu-spice", caps
    assert run(helper, "--version") == f"qemu-spice {caps['version']}\n"
    features = caps["features"]
    assert len(features) == len(set(features)), features
    unknown = set(features) - set(OPTIONS)
    assert not unknown, f"undocumented features {unknown}: add them to this test and the docs"
    # every build has these; tls depends on the TLS module, which every
    # build of the tree builds (the installed one is checked by the smoke tests)
    assert set(OPTIONS) <= set(features), set(OPTIONS) - set(features)
    help_all = run(helper, "--help-all")
    flat = " ".join(help_all.split())
    for f in features:
        for opt in OPTIONS[f]:
            assert f"  {opt}=" in help_all or f"  {opt} " in help_all or \
                f"  {opt}\n" in help_all, f"feature {f}: no {opt} in --help-all"
        for thing in THINGS.get(f, []):
            assert thing in flat, f"feature {f}: --help-all does not name {thing}"
        assert OPTIONS[f] or THINGS.get(f), f"feature {f} names nothing"
    if xml:
        with open(xml) as x:
            assert '<method name="AddClient">' in x.read(), f"no AddClient in {xml}"
    # --print-capabilities wins over everything else, like --version
    assert run(helper, "--print-capabilities", "--listen", "x") == out
    print(out, end="")


if __name__ == "__main__":
    main(*sys.argv[1:3])
