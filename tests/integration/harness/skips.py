# SPDX-License-Identifier: GPL-2.0-or-later
"""Cases that cannot run on a platform by design, told apart from skips.

A parametrised test may hold a combination that does not exist on some
platform (e.g. audio over peer-to-peer D-Bus on qemu 7.2, which the helper
leaves alone because qemu would crash). Such a case calls not_applicable();
tools/count-results counts it as skipped by the prefix of its skip message;
any other skip (a missing component, a broken assumption) counts as a
failure, so it cannot pass for an expected one. A GLib unit test's
g_test_skip() follows the same rule with the same prefix."""

import pytest

PREFIX = "not applicable here: "


def not_applicable(reason):
    pytest.skip(PREFIX + reason)
