/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A strict SPICE LZ (RGB32) decoder for the unit tests (lz-decode.c). */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Decodes LZ's stream (header and codes, `len` bytes) of a w x h picture
 * into B, G, R, 0 pixels, asserting every rule spice-gtk checks. */
uint8_t *lz_decode(const uint8_t *p, size_t len, uint32_t w, uint32_t h);
