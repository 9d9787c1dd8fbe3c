# SPDX-License-Identifier: GPL-2.0-or-later
"""Whether the helper under test is a sanitizer build, and how much longer
a correctness check's deadlines must then be.

Correctness tests run against tools/check's sanitizer build (ASan+UBSan),
whose code runs 2 to 3 times slower than the plain build's; a window that
a correctness check depends on (the first picture before the VM is paused,
a repaint after a stop) is stretched by slowdown(), never a figure's
bound (figures run against the plain build only)."""

import functools

SANITIZER_SLOWDOWN = 3.0


@functools.lru_cache(maxsize=None)
def sanitized(binary):
    """True if `binary` is built with AddressSanitizer or UBSan: it then
    names their runtime's entry points among its dynamic symbols."""
    with open(binary, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__ubsan_handle_" in data


def slowdown(binary):
    """SANITIZER_SLOWDOWN for a sanitizer build of `binary`, else 1."""
    return SANITIZER_SLOWDOWN if sanitized(str(binary)) else 1.0
