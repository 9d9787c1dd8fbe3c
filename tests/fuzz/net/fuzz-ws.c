/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the WebSocket upgrade of a parsed request and client frames (net/qs-ws.c).
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
        QsHttpRequest *req = NULL;
        char *response = NULL;

        if (size > 1 && qs_http_parse((const char *)data + 1, size - 1, &req, NULL) == QS_HTTP_OK) {
            if (qs_ws_upgrade(req, &response, NULL) == QS_WS_REQUEST_OK &&
                !g_str_has_prefix(response, "HTTP/1.1 101 ")) {
                __builtin_trap();
            }
            g_free(response);
            qs_http_request_free(req);
        }
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
