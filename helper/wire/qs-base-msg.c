/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the base messages every channel sends, and of the inputs channel's few. */
#include "wire/qs-msg.h"
#include "wire/qs-wire.h"

GBytes *qs_msg_set_ack(uint32_t generation, uint32_t window)
{
    GByteArray *b = g_byte_array_sized_new(8);

    qs_wire_u32(b, generation);
    qs_wire_u32(b, window);
    return g_byte_array_free_to_bytes(b);
}

/* PING{u32 id; u64 timestamp}: spice-gtk echoes both in PONG, so the
 * timestamp is ours to interpret (monotonic microseconds). No padding: we
 * measure RTT, not bandwidth. */
GBytes *qs_msg_ping(uint32_t id, uint64_t timestamp_us)
{
    GByteArray *b = g_byte_array_sized_new(12);

    qs_wire_u32(b, id);
    qs_wire_u64(b, timestamp_us);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_inputs_init(uint16_t modifiers)
{
    GByteArray *b = g_byte_array_sized_new(2);

    qs_wire_u16(b, modifiers);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_inputs_key_modifiers(uint16_t modifiers)
{
    return qs_msg_inputs_init(modifiers);
}
