/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PC set-1 scancode bytes, as SPICE clients send them, to qemu key numbers (qnum). */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * qnum is set 1 with the E0 prefix folded into bit 7: 0x1e = A,
 * 0xc8 = E0 48 (Up). Pause (E1 1D 45 / E1 9D C5) is qnum 0xc6, as qemu's
 * keymaps give it. The decoder keeps state between calls because spice-gtk
 * sends Pause as two KEY_DOWN messages (E1 1D, then 45).
 */
#define QS_QNUM_PAUSE 0xc6

typedef struct {
    uint8_t state;
} QsScancodeDecoder;

typedef void (*QsKeyFunc)(uint32_t qnum, gboolean down, gpointer user_data);

void qs_scancode_decoder_init(QsScancodeDecoder *dec);

/* Feeds scancode bytes; calls `func` for every complete key event. */
void qs_scancode_feed(QsScancodeDecoder *dec, const uint8_t *bytes, size_t n,
                      QsKeyFunc func, gpointer user_data);

/* The bytes of a KEY_DOWN/KEY_UP code: little-endian, up to the first 0.
 * Returns how many (0..4). */
guint qs_scancode_key_bytes(uint32_t code, uint8_t bytes[4]);
