/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the main channel's server messages (INIT, CHANNELS_LIST, MOUSE_MODE, NAME, UUID...). */
#include "wire/qs-msg.h"
#include "wire/qs-wire.h"

#include <string.h>

GBytes *qs_msg_main_init(const QsMainInit *init)
{
    GByteArray *b = g_byte_array_sized_new(32);

    qs_wire_u32(b, init->session_id);
    qs_wire_u32(b, init->display_channels_hint);
    qs_wire_u32(b, init->supported_mouse_modes);
    qs_wire_u32(b, init->current_mouse_mode);
    qs_wire_u32(b, init->agent_connected);
    qs_wire_u32(b, init->agent_tokens);
    qs_wire_u32(b, init->multi_media_time);
    qs_wire_u32(b, init->ram_hint);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_main_channels_list(const QsChannelId *channels, guint n)
{
    GByteArray *b = g_byte_array_sized_new(4 + 2 * n);

    qs_wire_u32(b, n);
    for (guint i = 0; i < n; i++) {
        qs_wire_u8(b, channels[i].type);
        qs_wire_u8(b, channels[i].id);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_main_mouse_mode(uint16_t supported, uint16_t current)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u16(b, supported);
    qs_wire_u16(b, current);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_main_multi_media_time(uint32_t mm_time)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u32(b, mm_time);
    return g_byte_array_free_to_bytes(b);
}

/* NAME{u32 len; u8 name[len]}: len counts the terminating NUL. */
GBytes *qs_msg_main_name(const char *name)
{
    size_t len = strnlen(name, QS_MAIN_NAME_MAX - 1);
    GByteArray *b = g_byte_array_sized_new((guint)(4 + len + 1));

    qs_wire_u32(b, (uint32_t)(len + 1));
    g_byte_array_append(b, (const guint8 *)name, (guint)len);
    qs_wire_u8(b, 0);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_main_uuid(const uint8_t uuid[16])
{
    return g_bytes_new(uuid, 16);
}

gboolean qs_uuid_parse(const char *text, uint8_t uuid[16])
{
    guint n = 0;

    for (const char *p = text; *p; p++) {
        int hi, lo;

        if (*p == '-') {
            continue;
        }
        hi = g_ascii_xdigit_value(p[0]);
        lo = p[1] ? g_ascii_xdigit_value(p[1]) : -1;
        if (hi < 0 || lo < 0 || n == 16) {
            return FALSE;
        }
        uuid[n++] = (uint8_t)(hi << 4 | lo);
        p++;
    }
    return n == 16;
}
