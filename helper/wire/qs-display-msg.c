/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the display channel's server messages: surfaces, monitors, DRAW_COPY. */
#include "wire/qs-msg.h"
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>

GBytes *qs_msg_surface_create(uint32_t surface_id, uint32_t width,
                              uint32_t height, uint32_t format, uint32_t flags)
{
    GByteArray *b = g_byte_array_sized_new(20);

    qs_wire_u32(b, surface_id);
    qs_wire_u32(b, width);
    qs_wire_u32(b, height);
    qs_wire_u32(b, format);
    qs_wire_u32(b, flags);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_surface_destroy(uint32_t surface_id)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u32(b, surface_id);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_monitors_config(const QsMonitor *monitors, uint16_t n,
                               uint16_t max_allowed)
{
    GByteArray *b = g_byte_array_sized_new(4 + 28u * n);

    qs_wire_u16(b, n);
    qs_wire_u16(b, max_allowed);
    for (uint16_t i = 0; i < n; i++) {
        qs_wire_u32(b, monitors[i].monitor_id);
        qs_wire_u32(b, monitors[i].surface_id);
        qs_wire_u32(b, monitors[i].width);
        qs_wire_u32(b, monitors[i].height);
        qs_wire_u32(b, monitors[i].x);
        qs_wire_u32(b, monitors[i].y);
        qs_wire_u32(b, monitors[i].flags);
    }
    return g_byte_array_free_to_bytes(b);
}

/* SpiceRect is {top, left, bottom, right}, not {x, y, w, h}. */
static void put_rect(GByteArray *b, int32_t x, int32_t y, uint32_t w, uint32_t h)
{
    qs_wire_i32(b, y);
    qs_wire_i32(b, x);
    qs_wire_i32(b, (int32_t)(y + (int64_t)h));
    qs_wire_i32(b, (int32_t)(x + (int64_t)w));
}

/*
 * The layout spice-server uses for a surface image (spice-protocol.md §3.3):
 * DisplayBase{surface_id, box, clip NONE}, then Copy{src_bitmap pointer,
 * src_area, rop_descriptor PUT, scale_mode, QMask{flags 0, pos, bitmap 0}},
 * and the image at offset 57, which the pointer designates.
 */
static GByteArray *draw_copy_header(uint32_t surface_id, int32_t x, int32_t y,
                                    const QsPixelRect *rect)
{
    GByteArray *b = g_byte_array_sized_new(
        (guint)(QS_DRAW_COPY_HEADER_SIZE + qs_image_bitmap_size(rect->width, rect->height)));

    qs_wire_u32(b, surface_id);
    put_rect(b, x, y, rect->width, rect->height);
    qs_wire_u8(b, SPICE_CLIP_TYPE_NONE);
    qs_wire_u32(b, QS_DRAW_COPY_HEADER_SIZE);       /* src_bitmap pointer */
    put_rect(b, 0, 0, rect->width, rect->height);   /* src_area */
    qs_wire_u16(b, SPICE_ROPD_OP_PUT);
    qs_wire_u8(b, SPICE_IMAGE_SCALE_MODE_INTERPOLATE);
    qs_wire_u8(b, 0);                               /* mask flags */
    qs_wire_i32(b, 0);                              /* mask pos */
    qs_wire_i32(b, 0);
    qs_wire_u32(b, 0);                              /* mask bitmap: none */
    g_assert(b->len == QS_DRAW_COPY_HEADER_SIZE);
    return b;
}

GBytes *qs_msg_draw_copy(uint32_t surface_id, int32_t x, int32_t y,
                         const QsPixelRect *rect, QsImageCodec codec,
                         uint64_t image_id, QsImageCodec *used)
{
    GByteArray *b = draw_copy_header(surface_id, x, y, rect);
    QsImageCodec got = qs_image_append(codec, rect, image_id, b);

    if (used) {
        *used = got;
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_draw_copy_jpeg(uint32_t surface_id, int32_t x, int32_t y,
                              const QsPixelRect *rect, int quality,
                              QsImageCodec fallback, uint64_t image_id,
                              QsImageCodec *used)
{
    GByteArray *b = draw_copy_header(surface_id, x, y, rect);
    QsImageCodec got = qs_image_choose_append(TRUE, quality, fallback, rect, image_id, b);

    if (used) {
        *used = got;
    }
    return g_byte_array_free_to_bytes(b);
}
