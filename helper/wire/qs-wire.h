/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Little-endian marshalling of the fields of SPICE messages: put and get, no state. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * SPICE messages are packed little-endian structures. We write them field by
 * field instead of memcpy'ing packed structs, so the byte layout is visible at
 * the call site and does not depend on the host's endianness.
 */

static inline void qs_wire_u8(GByteArray *b, uint8_t v)
{
    g_byte_array_append(b, &v, 1);
}

static inline void qs_wire_u16(GByteArray *b, uint16_t v)
{
    uint8_t t[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
    g_byte_array_append(b, t, sizeof(t));
}

static inline void qs_wire_u32(GByteArray *b, uint32_t v)
{
    uint8_t t[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24) };
    g_byte_array_append(b, t, sizeof(t));
}

static inline void qs_wire_u64(GByteArray *b, uint64_t v)
{
    qs_wire_u32(b, (uint32_t)v);
    qs_wire_u32(b, (uint32_t)(v >> 32));
}

static inline void qs_wire_i32(GByteArray *b, int32_t v)
{
    qs_wire_u32(b, (uint32_t)v);
}

static inline void qs_wire_set_u32(GByteArray *b, size_t offset, uint32_t v)
{
    g_assert(offset + 4 <= b->len);
    b->data[offset] = (uint8_t)v;
    b->data[offset + 1] = (uint8_t)(v >> 8);
    b->data[offset + 2] = (uint8_t)(v >> 16);
    b->data[offset + 3] = (uint8_t)(v >> 24);
}

/* Readers: the caller has checked that the bytes are there. */
static inline uint16_t qs_wire_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t qs_wire_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t qs_wire_get_u64(const uint8_t *p)
{
    return (uint64_t)qs_wire_get_u32(p) | ((uint64_t)qs_wire_get_u32(p + 4) << 32);
}

static inline int32_t qs_wire_get_i32(const uint8_t *p)
{
    return (int32_t)qs_wire_get_u32(p);
}
