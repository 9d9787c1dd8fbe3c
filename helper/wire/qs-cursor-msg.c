/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the cursor channel's server messages (INIT, SET with ALPHA shapes, MOVE, TRAIL). */
#include "wire/qs-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>

gboolean qs_spice_cursor_valid(const QsSpiceCursor *shape)
{
    return shape && shape->argb && shape->width > 0 && shape->height > 0 &&
           shape->width <= QS_SPICE_CURSOR_MAX_SIDE && shape->height <= QS_SPICE_CURSOR_MAX_SIDE &&
           g_bytes_get_size(shape->argb) == (gsize)shape->width * shape->height * 4;
}

/* SpiceCursor: u16 flags; unless NONE a header {u64 unique; u8 type;
 * u16 width, height, hot_spot_x, hot_spot_y} and the data up to the end of
 * the message. ALPHA data is ARGB32 little-endian, as qemu's CursorDefine
 * gives it, so it is copied verbatim. Hot spots are clamped to the shape as
 * spice-gtk would do anyway. */
static void put_cursor(GByteArray *b, const QsSpiceCursor *shape)
{
    gsize size;
    const guint8 *data;

    if (!shape) {
        qs_wire_u16(b, SPICE_CURSOR_FLAGS_NONE);
        return;
    }
    g_assert(qs_spice_cursor_valid(shape));
    qs_wire_u16(b, 0);
    qs_wire_u64(b, shape->unique);
    qs_wire_u8(b, SPICE_CURSOR_TYPE_ALPHA);
    qs_wire_u16(b, shape->width);
    qs_wire_u16(b, shape->height);
    qs_wire_u16(b, MIN(shape->hot_x, shape->width - 1));
    qs_wire_u16(b, MIN(shape->hot_y, shape->height - 1));
    data = g_bytes_get_data(shape->argb, &size);
    g_byte_array_append(b, data, (guint)size);
}

static gsize cursor_size(const QsSpiceCursor *shape)
{
    return 2 + (shape ? 17 + g_bytes_get_size(shape->argb) : 0);
}

GBytes *qs_msg_cursor_init(int16_t x, int16_t y, uint16_t trail_len,
                           uint16_t trail_freq, gboolean visible,
                           const QsSpiceCursor *shape)
{
    GByteArray *b = g_byte_array_sized_new((guint)(9 + cursor_size(shape)));

    qs_wire_u16(b, (uint16_t)x);
    qs_wire_u16(b, (uint16_t)y);
    qs_wire_u16(b, trail_len);
    qs_wire_u16(b, trail_freq);
    qs_wire_u8(b, visible && shape ? 1 : 0);
    put_cursor(b, shape);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_cursor_set(int16_t x, int16_t y, gboolean visible,
                          const QsSpiceCursor *shape)
{
    GByteArray *b = g_byte_array_sized_new((guint)(5 + cursor_size(shape)));

    qs_wire_u16(b, (uint16_t)x);
    qs_wire_u16(b, (uint16_t)y);
    qs_wire_u8(b, visible && shape ? 1 : 0);
    put_cursor(b, shape);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_cursor_move(int16_t x, int16_t y)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u16(b, (uint16_t)x);
    qs_wire_u16(b, (uint16_t)y);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_cursor_trail(uint16_t length, uint16_t frequency)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u16(b, length);
    qs_wire_u16(b, frequency);
    return g_byte_array_free_to_bytes(b);
}
