/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: qemu's D-Bus chardev names and object paths as
 * qs_chardev_role_of and qs_chardev_path_compare read them. The input is
 * two strings split at the first NUL. */

#include <stdint.h>
#include <string.h>

#include "display/qs-chardev-names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *a = NULL, *b = NULL;
    const uint8_t *nul;
    const char *why = NULL;
    QsChardevRole role;

    /* Names and paths are short; D-Bus bounds them anyway. */
    if (size > 4096) {
        return 0;
    }
    nul = memchr(data, 0, size);
    a = g_strndup((const char *)data, nul ? (gsize)(nul - data) : size);
    b = nul ? g_strndup((const char *)nul + 1, size - (gsize)(nul - data) - 1) : g_strdup("");

    role = qs_chardev_role_of(a, &why);
    if ((role == QS_CHARDEV_ROLE_NONE) != (why != NULL)) {
        __builtin_trap();
    }
    if (role == QS_CHARDEV_ROLE_PORT) {
        /* A port name a client is shown: short and plain. */
        if (strlen(a) > 127 || (!g_str_has_prefix(a, "org.spice-space.") &&
                                !g_str_has_prefix(a, "org.qemu.console."))) {
            __builtin_trap();
        }
        for (const char *p = a; *p; p++) {
            if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-') {
                __builtin_trap();
            }
        }
    }
    /* An order: equal only for equal strings, antisymmetric. */
    if (qs_chardev_path_compare(a, a) != 0 ||
        (qs_chardev_path_compare(a, b) == 0) != (strcmp(a, b) == 0) ||
        sign(qs_chardev_path_compare(a, b)) != -sign(qs_chardev_path_compare(b, a))) {
        __builtin_trap();
    }
    return 0;
}
