/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A strict SPICE LZ (RGB32) decoder for the unit tests. */
#include "lz-decode.h"

#include <string.h>

/*
 * Written for the tests from the format (the comment at the top of
 * helper/encode/qs-enc-lz.c), as strict as spice-gtk's decoder: every code
 * must stay inside the picture and inside the bytes, a copy may not reach
 * before the first pixel, and no byte may be left over.
 */

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint8_t *lz_decode(const uint8_t *p, size_t len, uint32_t w, uint32_t h)
{
    size_t n = (size_t)w * h, op = 0, at = 28;
    uint8_t *dec = g_malloc0(n * 4);

    g_assert_cmpuint(len, >=, 28);
    g_assert_cmpmem(p, 4, "  ZL", 4);
    g_assert_cmphex(get_be32(p + 4), ==, 0x00010001);
    g_assert_cmpuint(get_be32(p + 8), ==, 8);           /* LZ_IMAGE_TYPE_RGB32 */
    g_assert_cmpuint(get_be32(p + 12), ==, w);
    g_assert_cmpuint(get_be32(p + 16), ==, h);
    g_assert_cmpuint(get_be32(p + 20), ==, w * 4);
    g_assert_cmpuint(get_be32(p + 24), ==, 1);          /* top_down */
    while (op < n) {
        uint8_t c;

        g_assert_cmpuint(at, <, len);
        c = p[at++];
        if (c < 32) {
            g_assert_cmpuint(op + c + 1, <=, n);
            g_assert_cmpuint(at + 3 * ((size_t)c + 1), <=, len);
            for (unsigned k = 0; k <= c; k++, op++, at += 3) {
                memcpy(dec + op * 4, p + at, 3);
            }
        } else {
            size_t l = c >> 5, d = (size_t)(c & 31) << 8;
            uint8_t b;

            if (l == 7) {
                do {
                    g_assert_cmpuint(at, <, len);
                    b = p[at++];
                    l += b;
                } while (b == 255);
            }
            g_assert_cmpuint(at, <, len);
            b = p[at++];
            d += b;
            if (d == 8191) {
                g_assert_cmpuint(at + 2, <=, len);
                d = 8191 + ((size_t)p[at] << 8 | p[at + 1]);
                at += 2;
            }
            d += 1;
            g_assert_cmpuint(d, <=, op);
            g_assert_cmpuint(op + l, <=, n);
            for (size_t k = 0; k < l; k++, op++) {
                memcpy(dec + op * 4, dec + (op - d) * 4, 4);
            }
        }
    }
    g_assert_cmpuint(at, ==, len);
    return dec;
}

