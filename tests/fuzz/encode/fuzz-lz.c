/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the SPICE LZ encoder on any pixels qemu could hand it, checked by decoding. */
#include "encode/qs-encoder.h"
#include "../../unit/wire/lz-decode.h"

#include <string.h>

/*
 * The pixels are the guest's, so outside input: whatever they are, the
 * encoder must stay within its bound and the limit, and its output must
 * decode (strictly, as spice-gtk does) to the same picture. Input: byte 0
 * the width (1..256), byte 1 a limit selector, then pixels, 3 bytes each
 * and a pad byte; the data is read round again to fill 4/3 of its pixels,
 * so repeats at every distance occur).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t width, height;
    size_t n, limit;
    g_autofree uint8_t *px = NULL;
    g_autofree uint8_t *dec = NULL;
    g_autoptr(GByteArray) out = NULL;
    QsPixelRect rect;

    if (size < 5) {
        return 0;
    }
    width = (uint32_t)data[0] + 1;
    n = (size - 2) / 3 * 4;              /* expand to at least 4/3 of the data */
    height = (uint32_t)MAX(n / width, 1);
    n = (size_t)width * height;
    px = g_malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < 3; c++) {
            px[i * 4 + c] = data[2 + (i * 3 + c) % (size - 2)];
        }
        px[i * 4 + 3] = (uint8_t)i;     /* the pad byte is not part of the picture */
    }
    rect = (QsPixelRect){ px, (size_t)width * 4, width, height };
    /* Either no real limit, or one somewhere under the bound. */
    limit = data[1] < 128 ? G_MAXSIZE
                          : qs_enc_lz_bound(width, height) * (data[1] - 127) / 128;
    out = g_byte_array_new();
    g_byte_array_append(out, (const guint8 *)"x", 1);
    if (!qs_enc_lz_append(&rect, limit, out)) {
        g_assert(limit != G_MAXSIZE);
        g_assert(out->len == 1);
        return 0;
    }
    g_assert(out->len - 1 < limit);
    g_assert(out->len - 1 <= qs_enc_lz_bound(width, height));
    dec = lz_decode(out->data + 1, out->len - 1, width, height);
    for (size_t i = 0; i < n; i++) {
        g_assert(memcmp(dec + i * 4, px + i * 4, 3) == 0);
    }
    return 0;
}
