/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: libvirt's qemu.conf as the launcher reads it for SPICE
 * defaults (launcher/qs-launch-qemu-conf.c). Whatever is accepted keeps
 * only what the file says, and reads the same a second time; a refusal
 * names the file and a line. */

#include <stdint.h>
#include <string.h>

#include "qs-launch-qemu-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz-qemu.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsQemuConf a, b;
    GError *error = NULL;

    if (size > QS_QEMU_CONF_MAX + 16) {
        return 0;
    }
    if (!qs_qemu_conf_parse((const char *)data, size, NAME, &a, &error)) {
        if (!error || !g_str_has_prefix(error->message, NAME ":") ||
            a.spice_listen || a.spice_tls_dir || a.default_tls_dir || a.spice_tls != -1) {
            __builtin_trap();
        }
        g_error_free(error);
        return 0;
    }
    if (error || (a.spice_tls != -1 && a.spice_tls != 0 && a.spice_tls != 1) ||
        (a.spice_listen && !memmem(data, size, a.spice_listen, strlen(a.spice_listen))) ||
        (a.spice_tls_dir && !memmem(data, size, a.spice_tls_dir, strlen(a.spice_tls_dir)))) {
        __builtin_trap();
    }
    if (!qs_qemu_conf_parse((const char *)data, size, NAME, &b, NULL) ||
        g_strcmp0(a.spice_listen, b.spice_listen) || g_strcmp0(a.spice_tls_dir, b.spice_tls_dir) ||
        g_strcmp0(a.default_tls_dir, b.default_tls_dir) || a.spice_tls != b.spice_tls) {
        __builtin_trap();
    }
    qs_qemu_conf_clear(&a);
    qs_qemu_conf_clear(&b);
    return 0;
}
