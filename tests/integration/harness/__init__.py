# SPDX-License-Identifier: GPL-2.0-or-later
"""Integration-test harness for qemu-spice: qemu under test, QMP, services."""

from .errors import HarnessError, MissingComponent, QemuError
from .paths import Paths
from .qmp import Qmp, QmpError
from .qemu import Qemu, Guest, FLAVOURS
from .services import DBusDaemon, Libvirtd, Xvfb
from .procs import stray_processes, kill_strays
from .skips import not_applicable
from . import exits

__all__ = [
    "HarnessError", "MissingComponent", "QemuError", "Paths", "Qmp",
    "QmpError", "Qemu", "Guest", "FLAVOURS", "DBusDaemon", "Libvirtd", "Xvfb",
    "stray_processes", "kill_strays", "not_applicable",
]
