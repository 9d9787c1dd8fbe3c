# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 23 (N), point 6: the Debian package of this tree is built with
dpkg-buildpackage, passes lintian, installs with apt into a clean Debian 12
chroot (tools/make-chroot bookworm), and there the installed helper serves
the installed qemu's exact picture to our test client. Its AppArmor
profiles are installed where their file names say (the profile in
/etc/apparmor.d/usr.bin.X attaches to /usr/bin/X, the installed program) and
parse with the chroot's own apparmor_parser and abstractions (not loaded:
this kernel has no AppArmor).

The chroot in QS_CACHE_DIR holds qemu and the package's dependencies (read
from the built .deb), so apt installs with no source to download from: a new
dependency rebuilds the cached chroot. Each run installs into an overlay of
it, mounted in a mount namespace of its own, so the cache stays clean."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import procs
from harness.qemu import Qemu, parse_ppm
from serve_support import READY_TIMEOUT, run_client, serving

REPO = Path(__file__).resolve().parents[2]
# What the package build takes on 2 busy cores (30 s alone), with room.
BUILD_TIMEOUT = 600
# debootstrap and apt on a fresh cache (about 60 s here); then cached.
CHROOT_TIMEOUT = 900
CHROOT_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# profile file in /etc/apparmor.d -> (profile name, the program it confines)
PROFILES = {"usr.bin.qemu-spice": ("qemu-spice", "/usr/bin/qemu-spice"),
            "usr.bin.qemu-spice-launcher": ("qemu-spice-launcher",
                                            "/usr/bin/qemu-spice-launcher")}


def run(argv, timeout, **kwargs):
    """argv to completion; a failure names the command and its output."""
    res = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL, **kwargs)
    if res.returncode != 0:
        pytest.fail(f"{argv} exited {res.returncode}: {res.stdout[-3000:]}")
    return res.stdout


def copy_tree(dst):
    """The tree as git sees it (committed, staged and new files, not the
    ignored build directories), so the build never writes into the tree."""
    files = run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others",
                 "--exclude-standard"], timeout=60)
    for name in filter(None, files.split("\0")):
        src = REPO / name
        if not src.exists():          # deleted, not yet committed
            continue
        target = dst / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)


def attachments(profile_text, name):
    """The paths the profile NAME attaches to: its header's attachment with
    one level of {a,b} alternatives expanded."""
    m = re.search(rf"^profile {re.escape(name)} (\S+)", profile_text, re.M)
    assert m, f"no 'profile {name} PATH' line"
    pattern = m.group(1)
    alt = re.search(r"\{([^{}]*)\}", pattern)
    if not alt:
        return {pattern}
    return {pattern[:alt.start()] + a + pattern[alt.end():] for a in alt.group(1).split(",")}


def check_apparmor(overlay, listed):
    """The profiles where their names say, each attaching to the program it
    is named after, parsed by the chroot's apparmor_parser (-Q: no kernel
    load, -K: no cache) against the chroot's abstractions; the postinst made
    their local/ include files."""
    for fname, (name, program) in PROFILES.items():
        path = f"/etc/apparmor.d/{fname}"
        assert path in listed, f"{path} not in the package"
        assert program in listed, f"{program} not in the package"
        assert fname == "usr.bin." + Path(program).name
        text = overlay.run("cat", path)
        assert program in attachments(text, name), \
            f"{path}: profile {name} does not attach to {program}"
        overlay.run("apparmor_parser", "-Q", "-K", path)
        # (-N lists the names on stdout; its notes on stderr would mix in)
        names = overlay.run("sh", "-c", 'apparmor_parser -N "$0" 2>/dev/null', path).split()
        assert names == [name], f"{path} defines {names}, not {name}"
        overlay.run("test", "-f", f"/etc/apparmor.d/local/{fname}")
    conffiles = overlay.run("dpkg-query", "-W", "-f", "${Conffiles}", "qemu-spice")
    for fname in PROFILES:
        assert f"/etc/apparmor.d/{fname} " in conffiles, conffiles


def depends(deb):
    """The package names of the .deb's Depends (first alternative each)."""
    field = run(["dpkg-deb", "-f", deb, "Depends"], timeout=30)
    names = set()
    for alt in field.split(","):
        first = alt.split("|")[0].strip()
        names.add(re.sub(r"\s*\(.*\)", "", first).split(":")[0])
    return sorted(names)


class Overlay:
    """The chroot with an overlay on top, mounted in a mount namespace held
    by a process of ours: gone with that process, however the test ends."""

    def __init__(self, lower, base):
        self.root = base / "root"
        for d in ("root", "upper", "work"):
            (base / d).mkdir(parents=True)
        script = ('mount -t overlay overlay -o "lowerdir=$0,upperdir=$1,workdir=$2" "$3"'
                  ' && echo ready && read _')
        self.proc = procs.spawn(
            ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script,
             lower, base / "upper", base / "work", self.root],
            kind="package-ns", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode().strip()
        if line != "ready":
            self.proc.stdin.close()
            err = self.proc.stderr.read().decode()[-1000:]
            procs.kill_group(self.proc, grace=10.0)
            pytest.fail(f"overlay of {lower} not mounted: {err}")

    def prefix(self):
        """argv prefix: into the namespace, then chroot-run into the root."""
        return ["nsenter", "-t", str(self.proc.pid), "-m", "--",
                str(REPO / "tests/integration/harness/chroot-run"), str(self.root), "--"]

    def run(self, *argv, timeout=120):
        env = ["env", "-i", f"PATH={CHROOT_PATH}", "LC_ALL=C.UTF-8",
               "DEBIAN_FRONTEND=noninteractive"]
        return run([*self.prefix(), *env, *argv], timeout=timeout)

    def close(self):
        self.proc.stdin.close()
        procs.kill_group(self.proc, grace=10.0)
        self.proc.stdout.close()
        self.proc.stderr.close()


class PackagedQemu(Qemu):
    """The chroot's qemu (the harness's host flavour, run in the overlay)."""

    def __init__(self, overlay, **kwargs):
        super().__init__(flavour="host", **kwargs)
        self.overlay = overlay

    def argv(self):
        binds = ["--bind", str(self.guest.kernel.resolve().parent)]
        if self.guest.initrd.resolve().parent != self.guest.kernel.resolve().parent:
            binds += ["--bind", str(self.guest.initrd.resolve().parent)]
        prefix = self.overlay.prefix()
        return [*prefix[:-1], *binds, "--", *self._qemu_args()]


@pytest.fixture
def package(tmp_path):
    """(the .deb, the build log) of this tree, built with dpkg-buildpackage."""
    src = tmp_path / "src"
    copy_tree(src)
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=2",
               DEB_BUILD_PROFILES="nocheck")
    log = run(["dpkg-buildpackage", "-us", "-uc", "-b"], timeout=BUILD_TIMEOUT,
              cwd=src, env=env)
    debs = sorted(tmp_path.glob("qemu-spice_*.deb"))
    assert len(debs) == 1, f"dpkg-buildpackage made {debs}: {log[-2000:]}"
    changes = sorted(tmp_path.glob("qemu-spice_*.changes"))
    assert len(changes) == 1, f"no .changes beside {debs[0]}"
    return debs[0], changes[0]


@pytest.mark.timeout(BUILD_TIMEOUT + CHROOT_TIMEOUT + 300)
def test_package_serves_exact_picture(package, guest, test_client, paths, tmp_path):
    deb, changes = package

    # lintian: no error and no warning (a justified one is overridden in
    # debian/qemu-spice.lintian-overrides, with the reason).
    res = subprocess.run(["lintian", "--fail-on", "none", changes], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300)
    tags = [line for line in res.stdout.splitlines() if re.match(r"^[EW]: ", line)]
    assert res.returncode == 0 and not tags, f"lintian (exit {res.returncode}): {res.stdout}"

    # The D-Bus display module where Debian splits it out (trixie's qemu
    # 10.0: test_dbus_display_module_package), and the console page's
    # spice-html5, pulled in by default.
    recommends = run(["dpkg-deb", "-f", deb, "Recommends"], timeout=30)
    assert "qemu-system-modules-opengl | qemu-system-common (<< 1:8.1.0+ds-1~exp2)" in \
        recommends and "spice-html5" in recommends, recommends

    # apparmor: its parser and abstractions, to parse the installed
    # profiles; logrotate, to rotate the installed snippet's logs
    env = dict(os.environ, QS_CHROOT_EXTRA_PACKAGES=" ".join(depends(deb) +
                                                             ["apparmor", "logrotate"]))
    # make-chroot prints the tree's path last; when it has to make the tree
    # first (an empty cache), its progress lines come before it.
    lower = run([paths.make_chroot, "bookworm"], timeout=CHROOT_TIMEOUT,
                env=env).strip().splitlines()[-1]
    overlay = Overlay(lower, tmp_path / "overlay")
    try:
        # As an operator installs it, with no source to download from: what
        # the package needs must be in the chroot already.
        out = overlay.run("apt-get", "install", "-y", "-o", "Dir::Etc::SourceList=/dev/null",
                          "-o", "Dir::Etc::SourceParts=/nonexistent", deb, timeout=300)
        assert "Setting up qemu-spice" in out, out
        listed = set(overlay.run("dpkg", "-L", "qemu-spice").split())
        for f in ("/usr/bin/qemu-spice", "/usr/bin/qemu-spice-launcher",
                  "/etc/qemu-spice/qemu-spice.conf", "/etc/libvirt/hooks/qemu.d/qemu-spice",
                  "/lib/systemd/system/qemu-spice@.service",
                  "/usr/lib/sysusers.d/qemu-spice.conf", "/usr/lib/tmpfiles.d/qemu-spice.conf",
                  "/usr/lib/x86_64-linux-gnu/qemu-spice/qemu-spice-tls.so",
                  "/usr/share/man/man5/qemu-spice.conf.5.gz",
                  "/usr/share/qemu-spice/selinux/qemu_spice.te",
                  "/etc/logrotate.d/qemu-spice",
                  "/usr/share/doc/qemu-spice/examples/mint_token.py"):
            assert f in listed, f"{f} not in the package: {sorted(listed)}"
        # The documents the man pages cite, under /usr/share/doc (the larger
        # ones compressed), and readable.
        for doc in ("README", "operations", "integration", "security", "protocol",
                    "architecture", "performance"):
            found = [f for f in (f"/usr/share/doc/qemu-spice/{doc}.md",
                                 f"/usr/share/doc/qemu-spice/{doc}.md.gz") if f in listed]
            assert len(found) == 1, f"{doc}.md not in /usr/share/doc/qemu-spice: {sorted(listed)}"
        assert "## 3. Enable a domain" in overlay.run(
            "sh", "-c", "zcat -f /usr/share/doc/qemu-spice/operations.md*")
        # The domains' logs rotate: copied, then truncated in place (the
        # launcher and helper keep them open for appending).
        overlay.run("sh", "-c", "echo first > /var/log/qemu-spice/vm1.log")
        overlay.run("logrotate", "-f", "-s", "/var/lib/logrotate/qs-test.status",
                    "/etc/logrotate.d/qemu-spice")
        assert overlay.run("cat", "/var/log/qemu-spice/vm1.log.1") == "first\n"
        assert overlay.run("stat", "-c", "%s", "/var/log/qemu-spice/vm1.log").strip() == "0"
        check_apparmor(overlay, listed)
        # What the maintainer scripts did: the user and the directories.
        user = overlay.run("getent", "passwd", "qemu-spice").strip().split(":")
        assert user[6] in ("/usr/sbin/nologin", "/sbin/nologin"), user
        overlay.run("test", "-d", "/run/qemu-spice")
        overlay.run("test", "-d", "/var/log/qemu-spice")
        caps = json.loads(overlay.run("qemu-spice", "--print-capabilities"))
        assert "features" in caps, caps
        assert overlay.run("qemu-spice-launcher", "--version").strip()
        # The launcher's default [helper] user is the one the package made.
        status = overlay.run("qemu-spice-launcher", "status")
        assert "error" not in status.lower(), status

        helper = tmp_path / "installed-qemu-spice"
        helper.write_text("#!/bin/sh\nexec " + " ".join(overlay.prefix()) +
                          ' /usr/bin/qemu-spice "$@"\n')
        helper.chmod(0o755)
        q = PackagedQemu(overlay, guest=guest, vga="virtio", mode="idle", paths=paths)
        q.start()
        try:
            ready = q.wait_ready(timeout=READY_TIMEOUT)
            with serving(helper, q, "--disable-ticketing") as (h, port):
                run_client(test_client, "--port", port, "--settle", "500", "info",
                           timeout=30)
                q.stop()
                w, hgt, reference = q.screendump()
                assert (w, hgt) == (int(ready["w"]), int(ready["h"]))
                assert len({reference[i:i + 3]
                            for i in range(0, len(reference), 3 * 101)}) > 10
                shot = tmp_path / "shot.ppm"
                run_client(test_client, "--port", port, "--settle", "700",
                           "--expect-size", f"{w}x{hgt}", "screenshot", shot, timeout=30)
                sw, sh, pixels = parse_ppm(shot.read_bytes())
                assert (sw, sh) == (w, hgt)
                assert pixels == reference, "the installed helper's picture differs from " \
                    "the installed qemu's screendump"
                # It ran as the user the package made, not as root.
                uid = [line.split()[1] for line in
                       Path(f"/proc/{h.proc.pid}/status").read_text().splitlines()
                       if line.startswith("Uid:")][0]
                assert uid == user[2], f"helper uid {uid}, qemu-spice is {user[2]}"
        finally:
            q.close()

        # And it goes again: purge leaves none of its files (the user stays,
        # as Debian's policy wants for system users). Looked at inside the
        # namespace: the host sees an empty directory at overlay.root.
        overlay.run("apt-get", "purge", "-y", "qemu-spice", timeout=300)
        gone = ["/usr/bin/qemu-spice", "/usr/bin/qemu-spice-launcher", "/etc/qemu-spice",
                "/etc/logrotate.d/qemu-spice", "/usr/share/doc/qemu-spice",
                "/etc/libvirt/hooks/qemu.d/qemu-spice", "/lib/systemd/system/qemu-spice@.service",
                "/usr/lib/sysusers.d/qemu-spice.conf", "/usr/lib/x86_64-linux-gnu/qemu-spice"]
        gone += [f"/etc/apparmor.d/{d}{f}" for f in PROFILES for d in ("", "local/")]
        left = overlay.run("sh", "-c", 'for f; do if [ -e "$f" ]; then echo "$f"; fi; done',
                           "sh", *gone)
        assert not left.strip(), f"left after purge: {left}"
    finally:
        overlay.close()


@pytest.mark.timeout(CHROOT_TIMEOUT)
def test_dbus_display_module_package(paths):
    """The package recommends qemu-system-modules-opengl for qemu's D-Bus
    display: in Debian trixie (qemu 10.0) that package holds ui-dbus.so,
    which qemu-system-x86 itself no longer brings."""
    root = run([paths.make_chroot, "trixie"], timeout=CHROOT_TIMEOUT).strip().splitlines()[-1]
    chroot_run = str(REPO / "tests/integration/harness/chroot-run")
    owner = run([chroot_run, root, "--", "dpkg", "-S", "ui-dbus.so"], timeout=60)
    assert re.match(r"^qemu-system-modules-opengl(:\S+)?: \S+/ui-dbus\.so$", owner.strip()), owner
    deps = run([chroot_run, root, "--", "dpkg-query", "-W", "-f", "${Depends}",
                "qemu-system-x86"], timeout=60)
    assert "qemu-system-modules-opengl" not in deps, deps


@pytest.mark.timeout(BUILD_TIMEOUT)
def test_helper_builds_without_libvirt(tmp_path):
    """With libvirt's pkg-config file out of sight, the default build stops
    naming libvirt, and -Dlauncher=disabled builds and installs the helper
    alone (no launcher, hook, unit, configuration or snippets)."""
    pc_dirs = run(["pkg-config", "--variable", "pc_path", "pkg-config"], timeout=30)
    pc = tmp_path / "pkgconfig"
    pc.mkdir()
    for d in pc_dirs.strip().split(":"):
        for f in Path(d).glob("*.pc") if Path(d).is_dir() else []:
            if not f.name.startswith("libvirt") and not (pc / f.name).exists():
                (pc / f.name).symlink_to(f)
    env = dict(os.environ, PKG_CONFIG_LIBDIR=str(pc))

    res = subprocess.run(["meson", "setup", tmp_path / "with", REPO, "-Dtests=false"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert res.returncode != 0, "the launcher was configured without libvirt"
    assert re.search(r'Dependency "libvirt" not found', res.stdout), res.stdout[-1500:]

    build = tmp_path / "without"
    run(["meson", "setup", build, REPO, "-Dtests=false", "-Dlauncher=disabled",
         "-Dprefix=/usr", "-Dwerror=true"], timeout=120, env=env)
    run(["ninja", "-C", build], timeout=BUILD_TIMEOUT, env=env)
    dest = tmp_path / "dest"
    run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild"],
        timeout=120, env=env)
    installed = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if not p.is_dir())
    assert "usr/bin/qemu-spice" in installed, installed
    # the helper's AppArmor profile, not the launcher's
    assert "etc/apparmor.d/usr.bin.qemu-spice" in installed, installed
    assert any(p.endswith("qemu-spice/qemu-spice-tls.so") for p in installed), installed
    for p in installed:
        assert not re.search(r"launcher|hooks|systemd|sysusers|tmpfiles|\.conf", p), \
            f"{p} installed without the launcher: {installed}"
    assert run([dest / "usr/bin/qemu-spice", "--version"], timeout=30).strip()


# meson dependencies with no pkg-config file: meson finds them in libc.
LIBC_DEPENDENCIES = {"dl"}


def build_depends():
    """The package names in debian/control's Build-Depends, alternatives
    included, without versions or build profiles."""
    text = (REPO / "debian" / "control").read_text()
    m = re.search(r"^Build-Depends:\s*\n((?:[ \t].*\n)+)", text, re.M)
    assert m, "debian/control has no Build-Depends"
    names = set()
    for entry in m.group(1).split(","):
        for alt in entry.split("|"):
            name = re.sub(r"\(.*?\)|<.*?>|\[.*?\]", "", alt).strip()
            if name:
                names.add(name)
    return names


def test_build_depends_cover_meson_dependencies():
    """Every dependency() a meson.build of the tree names is in
    Build-Depends, found through the Debian package that ships its
    pkg-config file: a dependency installed here by tools/install-deps but
    missing from debian/control builds here and nowhere else (seen with
    libusbredirparser-0.5)."""
    wanted = set()
    for mb in run(["git", "-C", REPO, "ls-files", "meson.build", "*/meson.build"],
                  timeout=30).split():
        wanted |= set(re.findall(r"\bdependency\(\s*'([^']+)'", (REPO / mb).read_text()))
    assert "glib-2.0" in wanted, wanted
    declared = build_depends()
    missing = []
    for name in sorted(wanted - LIBC_DEPENDENCIES):
        pcdir = run(["pkg-config", "--variable", "pcfiledir", name], timeout=30).strip()
        owner = run(["dpkg-query", "-S", f"{pcdir}/{name}.pc"], timeout=30)
        pkg = owner.split(":")[0].strip()
        if pkg not in declared:
            missing.append(f"{name} ({pkg})")
    assert not missing, f"meson dependencies missing from Build-Depends: {missing}"
