/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seccomp allowlist the helper loads as its last confinement step. */
#pragma once

#include <glib.h>

/* Loads the filter on every thread (TSYNC); what it allows and why:
 * docs/security.md. */
gboolean qs_confine_seccomp_load(GError **error);
