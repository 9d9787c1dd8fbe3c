# SPDX-License-Identifier: GPL-2.0-or-later
"""Cases that cannot run on a platform by design, told apart from skips.

A parametrised test may hold a combination that does not exist on some
platform (e.g. audio over peer-to-peer D-Bus on qemu 7.2, which the helper
leaves alone because qemu would crash). Such a case calls not_applicable();
tools/count-results counts it as "not applicable" by the prefix of its skip
message, apart from skips, so a skip that fires for a missing component or a
broken assumption still stands out."""

import pytest

PREFIX = "not applicable here: "


def not_applicable(reason):
    pytest.skip(PREFIX + reason)
