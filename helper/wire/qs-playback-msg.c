/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the playback and record channels' server messages. */
#include "wire/qs-playback-msg.h"
#include "wire/qs-wire.h"

GBytes *qs_msg_playback_mode(uint32_t mm_time, uint16_t mode)
{
    GByteArray *b = g_byte_array_sized_new(6);

    qs_wire_u32(b, mm_time);
    qs_wire_u16(b, mode);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_playback_start(uint32_t channels, uint16_t format,
                              uint32_t frequency, uint32_t mm_time)
{
    GByteArray *b = g_byte_array_sized_new(14);

    qs_wire_u32(b, channels);
    qs_wire_u16(b, format);
    qs_wire_u32(b, frequency);
    qs_wire_u32(b, mm_time);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_playback_data(uint32_t mm_time, GBytes *data)
{
    gsize size = 0;
    const uint8_t *p = g_bytes_get_data(data, &size);
    GByteArray *b = g_byte_array_sized_new((guint)(4 + size));

    qs_wire_u32(b, mm_time);
    if (size) {
        g_byte_array_append(b, p, (guint)size);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_audio_volume(const uint16_t *volume, uint8_t n)
{
    GByteArray *b = g_byte_array_sized_new(1 + 2u * n);

    qs_wire_u8(b, n);
    for (guint i = 0; i < n; i++) {
        qs_wire_u16(b, volume[i]);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_audio_mute(gboolean mute)
{
    GByteArray *b = g_byte_array_sized_new(1);

    qs_wire_u8(b, mute ? 1 : 0);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_record_start(uint32_t channels, uint16_t format, uint32_t frequency)
{
    GByteArray *b = g_byte_array_sized_new(10);

    qs_wire_u32(b, channels);
    qs_wire_u16(b, format);
    qs_wire_u32(b, frequency);
    return g_byte_array_free_to_bytes(b);
}
