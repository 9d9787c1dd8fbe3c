/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the WebSocket upgrade request and client frames (net/qs-ws.c).
 * The first byte picks which, and the chunking and output size of frames. */

#include <stdint.h>
#include <string.h>
#include "net/qs-ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsWsDecoder d = { 0 };
    gsize chunk, out_size, off = 1;
    guint8 out[64];

    if (size < 1) {
        return 0;
    }
    if (data[0] & 1) {
        char *response = NULL;

        qs_ws_request((const char *)data + 1, MIN(size - 1, QS_WS_MAX_REQUEST + 16),
                      &response, NULL);
        g_free(response);
        return 0;
    }
    chunk = ((data[0] >> 1) & 7) + 1;
    out_size = ((data[0] >> 4) & 15) * 4 + 1;
    while (off < size) {
        gsize len = MIN(chunk, size - off), used = 0, produced = 0;
        QsWsEvent ev = qs_ws_decode(&d, data + off, len, &used, out, out_size, &produced, NULL);

        if (used > len || produced > out_size || d.control_len > QS_WS_MAX_CONTROL) {
            __builtin_trap();
        }
        if (ev == QS_WS_ERROR || ev == QS_WS_CLOSE) {
            return 0;
        }
        if (used == 0 && produced == 0 && ev == QS_WS_MORE) {
            __builtin_trap(); /* no progress */
        }
        off += used;
    }
    return 0;
}
