/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE_IMAGE_TYPE_BITMAP: uncompressed top-down 32-bit rows, the fallback everyone decodes. */
#include "encode/qs-encoder.h"
#include "encode/qs-enc-private.h"
#include "encode/qs-wire.h"

#include <spice/enums.h>
#include <string.h>

gboolean qs_pixel_rect_valid(const QsPixelRect *rect)
{
    return rect && rect->pixels && rect->width > 0 && rect->height > 0 &&
           rect->width <= QS_ENCODE_MAX_SIDE && rect->height <= QS_ENCODE_MAX_SIDE &&
           (uint64_t)rect->width * rect->height <= QS_ENCODE_MAX_PIXELS &&
           rect->stride >= (size_t)rect->width * 4;
}

void qs_enc_image_descriptor(GByteArray *out, uint64_t id, uint8_t type,
                             uint32_t width, uint32_t height)
{
    qs_wire_u64(out, id);
    qs_wire_u8(out, type);
    qs_wire_u8(out, 0);         /* no CACHE_ME: we never use the pixmap cache */
    qs_wire_u32(out, width);
    qs_wire_u32(out, height);
}

size_t qs_enc_bitmap_size(uint32_t width, uint32_t height)
{
    return QS_BITMAP_HEADER_SIZE + (size_t)width * height * 4;
}

void qs_enc_bitmap_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    size_t row = (size_t)rect->width * 4;
    size_t start;

    g_assert(qs_pixel_rect_valid(rect));
    qs_enc_image_descriptor(out, id, SPICE_IMAGE_TYPE_BITMAP, rect->width,
                            rect->height);
    qs_wire_u8(out, SPICE_BITMAP_FMT_32BIT);
    qs_wire_u8(out, SPICE_BITMAP_FLAGS_TOP_DOWN);
    qs_wire_u32(out, rect->width);
    qs_wire_u32(out, rect->height);
    qs_wire_u32(out, (uint32_t)row);    /* rows are packed on the wire */
    qs_wire_u32(out, 0);                /* palette pointer: none for 32BIT */

    start = out->len;
    g_byte_array_set_size(out, (guint)(start + row * rect->height));
    for (uint32_t y = 0; y < rect->height; y++) {
        memcpy(out->data + start + row * y, rect->pixels + rect->stride * y, row);
    }
}
