/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's D-Bus chardev names: what each becomes, and their order. */
#include "display/qs-chardev-names.h"

#include <string.h>

/* As --port-fd's names: what a SPICE client is shown must be short and
 * plain. */
#define PORT_NAME_MAX 127

static gboolean port_name_ok(const char *name)
{
    gsize n = strlen(name);

    if (n == 0 || n > PORT_NAME_MAX) {
        return FALSE;
    }
    for (gsize i = 0; i < n; i++) {
        if (!g_ascii_isalnum(name[i]) && name[i] != '.' && name[i] != '_' &&
            name[i] != '-') {
            return FALSE;
        }
    }
    return TRUE;
}

QsChardevRole qs_chardev_role_of(const char *name, const char **why)
{
    const char *dummy;

    why = why ? why : &dummy;
    *why = NULL;
    if (strcmp(name, QS_CHARDEV_NAME_AGENT) == 0) {
        return QS_CHARDEV_ROLE_AGENT;
    }
    if (strcmp(name, QS_CHARDEV_NAME_USBREDIR) == 0) {
        return QS_CHARDEV_ROLE_USBREDIR;
    }
    if (strcmp(name, QS_CHARDEV_NAME_SMARTCARD) == 0) {
        return QS_CHARDEV_ROLE_SMARTCARD;
    }
    if (!g_str_has_prefix(name, "org.spice-space.") &&
        !g_str_has_prefix(name, "org.qemu.console.")) {
        *why = "not a SPICE channel's name (ports are org.spice-space.* and "
               "org.qemu.console.*)";
        return QS_CHARDEV_ROLE_NONE;
    }
    if (!port_name_ok(name)) {
        *why = "not a port name (at most 127 letters, digits, '.', '_', '-')";
        return QS_CHARDEV_ROLE_NONE;
    }
    return QS_CHARDEV_ROLE_PORT;
}

int qs_chardev_path_compare(const char *a, const char *b)
{
    int tie = 0;                /* leading zeros: fewer first */

    while (*a && *b) {
        if (g_ascii_isdigit(*a) && g_ascii_isdigit(*b)) {
            gsize ra, rb, za = 0, zb = 0;
            int c;

            for (ra = 0; g_ascii_isdigit(a[ra]); ra++) {
            }
            for (rb = 0; g_ascii_isdigit(b[rb]); rb++) {
            }
            while (za + 1 < ra && a[za] == '0') {
                za++;
            }
            while (zb + 1 < rb && b[zb] == '0') {
                zb++;
            }
            if (ra - za != rb - zb) {
                return ra - za < rb - zb ? -1 : 1;
            }
            if ((c = strncmp(a + za, b + zb, ra - za)) != 0) {
                return c < 0 ? -1 : 1;
            }
            if (!tie && ra != rb) {
                tie = ra < rb ? -1 : 1;
            }
            a += ra;
            b += rb;
            continue;
        }
        if (*a != *b) {
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        }
        a++;
        b++;
    }
    if (*a || *b) {
        return *a ? 1 : -1;
    }
    return tie;
}
