# SPDX-License-Identifier: GPL-2.0-or-later
"""Where the repository, the build, the cache and the tools are."""

import os
import re
import subprocess
from pathlib import Path

from .errors import MissingComponent

CHROOT_SUITES = ("bookworm", "trixie", "sid")


class Paths:
    """Locations, from the environment (QS_BUILD_DIR, QS_CACHE_DIR)."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        self.repo = Path(__file__).resolve().parents[3]
        self.build_dir = Path(env.get("QS_BUILD_DIR") or self.repo / "build")
        self.cache_dir = Path(env.get("QS_CACHE_DIR") or "/var/cache/qemu-spice")
        self.make_chroot = self.repo / "tools" / "make-chroot"
        self.chroot_run = Path(__file__).resolve().parent / "chroot-run"
        self.build_guest = self.repo / "tests" / "guest" / "build-guest"

    @property
    def helper(self):
        """The qemu-spice helper binary (not checked)."""
        return self.build_dir / "helper" / "qemu-spice"

    @property
    def test_client(self):
        """The qs-test-client SPICE test client (not checked)."""
        return self.build_dir / "tests" / "tools" / "qs-test-client"

    def _build_cmd(self):
        return f"meson setup {self.build_dir} && ninja -C {self.build_dir}"

    def require_helper(self):
        if not os.access(self.helper, os.X_OK):
            raise MissingComponent(f"helper binary {self.helper}", self._build_cmd())
        return self.helper

    def require_test_client(self):
        if not os.access(self.test_client, os.X_OK):
            raise MissingComponent(f"test client {self.test_client}", self._build_cmd())
        return self.test_client

    def chroot(self, suite):
        """Path of the cached chroot for suite (not checked)."""
        if suite not in CHROOT_SUITES:
            raise ValueError(f"unknown chroot suite {suite!r}")
        return self.cache_dir / f"chroot-{suite}"

    def require_chroot(self, suite):
        root = self.chroot(suite)
        if not (root / ".qs-chroot-stamp").is_file():
            env = "" if self.cache_dir == Path("/var/cache/qemu-spice") else \
                f"QS_CACHE_DIR={self.cache_dir} "
            raise MissingComponent(f"{suite} chroot {root}",
                                   f"{env}{self.make_chroot} {suite}")
        return root

    def require_guest(self, timeout=600):
        """Run tests/guest/build-guest; returns {'KERNEL': Path, 'INITRD': Path}."""
        cmd = str(self.build_guest)
        if not os.access(self.build_guest, os.X_OK):
            raise MissingComponent("test guest builder tests/guest/build-guest",
                                   f"{cmd} (not in this tree yet)")
        try:
            res = subprocess.run([cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise MissingComponent(f"test guest (build-guest took over {timeout}s)", cmd)
        if res.returncode != 0:
            raise MissingComponent(
                f"test guest (build-guest exited {res.returncode}: "
                f"{res.stderr.strip()[-800:]})", cmd)
        found = {}
        for line in res.stdout.splitlines():
            m = re.match(r"^(KERNEL|INITRD)=(.+)$", line.strip())
            if m:
                found[m.group(1)] = Path(m.group(2))
        for key in ("KERNEL", "INITRD"):
            if key not in found or not found[key].is_file():
                raise MissingComponent(
                    f"test guest {key} (build-guest printed {res.stdout.strip()!r})", cmd)
        return found
