/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the launcher's state files (/run/qemu-spice/DOMAIN.json) as
 * qs_launch_state_from_json reads them; what it accepts must survive a
 * write and a second read unchanged. */

#include <stdint.h>
#include <string.h>

#include "qs-launch-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A state file is under a kilobyte; this leaves room for long strings. */
#define QS_FUZZ_INPUT_MAX (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *json = NULL;
    g_autoptr(QsLaunchState) st = NULL;
    g_autoptr(QsLaunchState) again = NULL;
    g_autofree char *out = NULL;
    g_autofree char *out2 = NULL;
    GError *error = NULL;

    if (size > QS_FUZZ_INPUT_MAX) {
        return 0;
    }
    json = g_strndup((const char *)data, size);
    st = qs_launch_state_from_json(json, &error);
    if (!st) {
        if (!error) {
            __builtin_trap();
        }
        g_error_free(error);
        return 0;
    }
    if (error || !st->domain) {
        __builtin_trap();
    }
    out = qs_launch_state_to_json(st);
    again = qs_launch_state_from_json(out, &error);
    if (!again) {
        __builtin_trap();
    }
    out2 = qs_launch_state_to_json(again);
    if (strcmp(out, out2) != 0) {
        __builtin_trap();
    }
    return 0;
}
