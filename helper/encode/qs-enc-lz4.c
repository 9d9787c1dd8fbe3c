/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LZ4: packed 32-bit rows in independent LZ4 blocks, each behind a big-endian length. */
#include "encode/qs-encoder.h"

#include <lz4.h>
#include <string.h>

/*
 * The block sequence SPICE_IMAGE_TYPE_LZ4 carries after its small header
 * (spice-protocol.md §3.3; the header is the channel's, qs-image-msg.c):
 * blocks of {u32 big-endian compressed length; LZ4 block}. The client decodes
 * them with LZ4_decompress_safe_continue into one buffer, so dependent blocks
 * would be allowed; independent ones compress almost as well (the LZ4 window
 * is 64 KiB anyway) and can be decoded and tested one by one.
 */

/* Input per block: whole rows, about this many bytes (at least one row). */
#define BLOCK_TARGET (128u * 1024u)

static void put_u32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

gboolean qs_enc_lz4_append(const QsPixelRect *rect, size_t limit, GByteArray *out)
{
    size_t row = (size_t)rect->width * 4;
    uint32_t rows_per_block = (uint32_t)MAX(1, BLOCK_TARGET / row);
    size_t start = out->len;
    g_autofree uint8_t *packed = NULL;

    g_assert(qs_pixel_rect_valid(rect));
    if (rect->stride != row) {
        packed = g_malloc(row * MIN(rows_per_block, rect->height));
    }


    for (uint32_t y = 0; y < rect->height; y += rows_per_block) {
        uint32_t n = MIN(rows_per_block, rect->height - y);
        const uint8_t *src = rect->pixels + rect->stride * y;
        int in_len = (int)(row * n);
        int bound = LZ4_compressBound(in_len);
        size_t at = out->len;
        int written;

        if (packed) {
            for (uint32_t i = 0; i < n; i++) {
                memcpy(packed + row * i, src + rect->stride * i, row);
            }
            src = packed;
        }
        g_byte_array_set_size(out, (guint)(at + 4 + (size_t)bound));
        written = LZ4_compress_default((const char *)src,
                                       (char *)out->data + at + 4, in_len, bound);
        /* Cannot fail with a full bound; treat it as "does not pay" anyway. */
        if (written <= 0 || at + 4 + (size_t)written - start >= limit) {
            g_byte_array_set_size(out, (guint)start);
            return FALSE;
        }
        put_u32_be(out->data + at, (uint32_t)written);
        g_byte_array_set_size(out, (guint)(at + 4 + (size_t)written));
    }
    return TRUE;
}
