/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE_IMAGE_TYPE_LZ4: packed 32-bit rows in independent LZ4 blocks, each behind a big-endian length. */
#include "encode/qs-encoder.h"
#include "encode/qs-enc-private.h"
#include "encode/qs-wire.h"

#include <lz4.h>
#include <spice/enums.h>
#include <string.h>

/*
 * Payload (spice-protocol.md §3.3): u32 data_size (little-endian, counts
 * everything after it), u8 top_down, u8 SpiceBitmapFmt, then blocks of
 * {u32 big-endian compressed length; LZ4 block}. The client decodes the blocks
 * with LZ4_decompress_safe_continue into one buffer, so dependent blocks would
 * be allowed; independent ones compress almost as well (the LZ4 window is
 * 64 KiB anyway) and can be decoded and tested one by one.
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

gboolean qs_enc_lz4_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    size_t row = (size_t)rect->width * 4;
    uint32_t rows_per_block = (uint32_t)MAX(1, BLOCK_TARGET / row);
    size_t limit = qs_enc_bitmap_size(rect->width, rect->height);
    size_t start = out->len;
    size_t size_at;
    g_autofree uint8_t *packed = NULL;

    g_assert(qs_pixel_rect_valid(rect));
    if (rect->stride != row) {
        packed = g_malloc(row * MIN(rows_per_block, rect->height));
    }

    qs_enc_image_descriptor(out, id, SPICE_IMAGE_TYPE_LZ4, rect->width,
                            rect->height);
    size_at = out->len;
    qs_wire_u32(out, 0);                        /* data_size, patched below */
    qs_wire_u8(out, 1);                         /* top_down */
    qs_wire_u8(out, SPICE_BITMAP_FMT_32BIT);

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
    qs_wire_set_u32(out, size_at, (uint32_t)(out->len - size_at - 4));
    return TRUE;
}
