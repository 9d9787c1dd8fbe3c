/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decodes set-1 scancode byte streams (E0 and E1 prefixes) into qnum press/release events. */
#include "wire/qs-scancode.h"

enum {
    ST_PLAIN,
    ST_E0,          /* after E0: the next byte is an extended key */
    ST_E1,          /* after E1: expecting 1D (Pause down) or 9D (up) */
    ST_E1_DOWN,     /* after E1 1D: expecting 45 */
    ST_E1_UP,       /* after E1 9D: expecting C5 */
};

void qs_scancode_decoder_init(QsScancodeDecoder *dec)
{
    dec->state = ST_PLAIN;
}

guint qs_scancode_key_bytes(uint32_t code, uint8_t bytes[4])
{
    guint n = 0;

    /* spice-gtk's spice_make_scancode puts the sequence in wire order, so the
     * u32 read little-endian yields the bytes lowest first. */
    while (n < 4 && (code & 0xff)) {
        bytes[n++] = (uint8_t)code;
        code >>= 8;
    }
    return n;
}

static void feed_plain(QsScancodeDecoder *dec, uint8_t b, QsKeyFunc func,
                       gpointer user_data)
{
    switch (b) {
    case 0x00:
    case 0xff:              /* keyboard error / overrun codes: no key */
        return;
    case 0xe0:
        dec->state = ST_E0;
        return;
    case 0xe1:
        dec->state = ST_E1;
        return;
    case 0xf1:              /* Hanja, Hangeul: one byte, no release code */
    case 0xf2:
        func(b, TRUE, user_data);
        func(b, FALSE, user_data);
        return;
    default:
        func(b & 0x7f, !(b & 0x80), user_data);
        return;
    }
}

void qs_scancode_feed(QsScancodeDecoder *dec, const uint8_t *bytes, size_t n,
                      QsKeyFunc func, gpointer user_data)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t b = bytes[i];

        switch (dec->state) {
        case ST_E0:
            dec->state = ST_PLAIN;
            if (b == 0xe0 || b == 0xe1 || b == 0x00 || b == 0xff) {
                feed_plain(dec, b, func, user_data);
            } else if ((b & 0x7f) == 0x2a || (b & 0x7f) == 0x36) {
                /* E0 2A / E0 36: the "fake shifts" keyboards wrap around
                 * PrintScreen and the keypad keys; not keys of their own. */
            } else {
                func(0x80 | (b & 0x7f), !(b & 0x80), user_data);
            }
            break;
        case ST_E1:
            dec->state = b == 0x1d ? ST_E1_DOWN : b == 0x9d ? ST_E1_UP : ST_PLAIN;
            if (dec->state == ST_PLAIN) {
                feed_plain(dec, b, func, user_data);
            }
            break;
        case ST_E1_DOWN:
        case ST_E1_UP:
            if (b == (dec->state == ST_E1_DOWN ? 0x45 : 0xc5)) {
                func(QS_QNUM_PAUSE, dec->state == ST_E1_DOWN, user_data);
                dec->state = ST_PLAIN;
            } else {
                dec->state = ST_PLAIN;
                feed_plain(dec, b, func, user_data);
            }
            break;
        default:
            feed_plain(dec, b, func, user_data);
            break;
        }
    }
}
