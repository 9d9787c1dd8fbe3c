/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Uncompressed pixels: a rectangle's rows packed, the fallback everyone decodes. */
#include "encode/qs-encoder.h"

#include <string.h>

gboolean qs_pixel_rect_valid(const QsPixelRect *rect)
{
    return rect && rect->pixels && rect->width > 0 && rect->height > 0 &&
           rect->width <= QS_ENCODE_MAX_SIDE && rect->height <= QS_ENCODE_MAX_SIDE &&
           (uint64_t)rect->width * rect->height <= QS_ENCODE_MAX_PIXELS &&
           rect->stride >= (size_t)rect->width * 4;
}

size_t qs_enc_raw_size(uint32_t width, uint32_t height)
{
    return (size_t)width * height * 4;
}

void qs_enc_raw_append(const QsPixelRect *rect, GByteArray *out)
{
    size_t row = (size_t)rect->width * 4;
    size_t start = out->len;

    g_assert(qs_pixel_rect_valid(rect));
    g_byte_array_set_size(out, (guint)(start + row * rect->height));
    for (uint32_t y = 0; y < rect->height; y++) {
        memcpy(out->data + start + row * y, rect->pixels + rect->stride * y, row);
    }
}
