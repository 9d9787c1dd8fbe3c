# SPDX-License-Identifier: GPL-2.0-or-later
"""The shaped-link benchmark rig (qs-bench): link, cell, measure, report."""
