/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For fuzz targets of key files: an error message must never carry a key. */
#pragma once

#include <glib.h>

/* Whether `msg` has a run of `min` or more hex digits, which a key file's
 * error must not (a key is 32 hex digits at least). */
static inline gboolean qs_fuzz_has_hex_run(const char *msg, gsize min)
{
    gsize run = 0;

    for (const char *p = msg; *p; p++) {
        run = g_ascii_isxdigit(*p) ? run + 1 : 0;
        if (run >= min) {
            return TRUE;
        }
    }
    return FALSE;
}
