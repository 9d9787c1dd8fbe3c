/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: qemu-spice.conf as qs_launch_config_load_data reads it. */

#include <stdint.h>
#include <string.h>

#include "qs-launch-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Larger than any configuration; GKeyFile has no bound of its own. */
#define QS_FUZZ_INPUT_MAX (64 * 1024)
#define NAME "fuzz.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = NULL;
    g_autoptr(QsLaunchConfig) cfg = NULL;
    GError *error = NULL;

    if (size > QS_FUZZ_INPUT_MAX) {
        return 0;
    }
    /* The file's bytes up to a NUL, as g_key_file_load_from_data sees them. */
    text = g_strndup((const char *)data, size);
    cfg = qs_launch_config_load_data(text, NAME, &error);
    if (cfg) {
        if (error) {
            __builtin_trap();
        }
        return 0;
    }
    /* Every refusal names the file it is about (qemu-spice.conf(5)), or
     * says it is about libvirt's qemu.conf that [launcher] qemu-conf names. */
    if (!error || (!g_str_has_prefix(error->message, NAME) &&
                   !g_str_has_prefix(error->message, "libvirt's qemu.conf, "))) {
        __builtin_trap();
    }
    g_error_free(error);
    return 0;
}
