/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: qemu's QMP replies as qs_qmp_parse reads them. */

#include <stdint.h>
#include <string.h>

#include "display/qs-qmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsQmpMessage msg;
    GError *error = NULL;

    if (size > QS_QMP_MAX_LINE) {
        return 0;
    }
    if (qs_qmp_parse((const char *)data, size, &msg, &error)) {
        /* A success names exactly one kind, with its strings bounded. */
        if (msg.kind == QS_QMP_EVENT && !msg.event) {
            __builtin_trap();
        }
        if (msg.error_desc && strlen(msg.error_desc) > 4096) {
            __builtin_trap();
        }
        qs_qmp_message_clear(&msg);
    } else {
        if (!error || msg.event || msg.error_desc || msg.error_class) {
            __builtin_trap();
        }
        g_error_free(error);
    }
    return 0;
}
