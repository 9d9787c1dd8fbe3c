/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: post-link framing, a byte stream cut into messages. The
 * first byte picks the header kind and the chunking of the rest. */

#include <stdint.h>
#include <string.h>
#include "net/qs-frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsFrameReader r;
    gsize chunk, off = 1;

    if (size < 1) {
        return 0;
    }
    qs_frame_reader_init(&r, data[0] & 1, 4096);
    chunk = (data[0] >> 1) + 1;
    while (off < size) {
        gsize len = MIN(chunk, size - off);
        gsize pos = 0;

        while (pos < len) {
            gsize used = 0;
            QsFrameStatus st = qs_frame_reader_feed(&r, data + off + pos,
                                                    len - pos, &used, NULL);

            if (used > len - pos) {
                __builtin_trap();
            }
            pos += used;
            if (st == QS_FRAME_ERROR) {
                qs_frame_reader_clear(&r);
                return 0;
            }
            if (st == QS_FRAME_MESSAGE) {
                if (r.size > r.max_size) {
                    __builtin_trap();
                }
                /* Touch the whole body: ASan checks the bounds. */
                volatile guint8 sum = 0;
                for (guint32 i = 0; i < r.size; i++) {
                    sum ^= r.body[i];
                }
                (void)sum;
            } else if (used == 0) {
                __builtin_trap(); /* no progress */
            }
        }
        off += len;
    }
    qs_frame_reader_clear(&r);
    return 0;
}
