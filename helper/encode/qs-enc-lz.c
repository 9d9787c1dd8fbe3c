/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE LZ (LZ_IMAGE_TYPE_RGB32): the lossless image every SPICE client decodes without a capability. */
#include "encode/qs-encoder.h"

#include <string.h>

/*
 * The format, as spice-gtk's and spice-html5's decoders read it
 * (spice-protocol.md §3.1 for the image around it; docs/protocol.md "LZ
 * images"):
 *
 * A header of seven big-endian u32: magic 0x20205a4c ("LZ  " read as a
 * little-endian word), version 0x00010001, type 8 (RGB32), width, height,
 * stride (width * 4) and top_down. Then codes over the image's pixels as one
 * sequence, row after row, until width * height pixels are out; spice-gtk
 * refuses bytes left over, so the codes stop exactly there.
 *
 * A code starts with a control byte c:
 * - c < 32: c + 1 literal pixels follow, 3 bytes each (B, G, R);
 * - else a copy of L pixels from D pixels back (overlap allowed, so D = 1 is
 *   a run): c >> 5 is L when L < 7, else 7 and L - 7 follows as bytes of
 *   255 closed by one below 255; then D - 1 in 13 bits, its high 5 in c and
 *   its low 8 in the next byte. D - 1 = 8191 (all ones) announces a far
 *   copy: two more bytes hold D - 8192 big-endian, so D reaches 73727.
 *
 * The pad byte is not coded: the decoders write 0 (spice-gtk) or an opaque
 * alpha (spice-html5), which a 32-bit xRGB surface ignores. So this is
 * LZ_RGB32, not LZ_RGBA, whose second pass would code an alpha nobody reads.
 *
 * The search is greedy with three candidates per position: the pixel before
 * (runs), the pixel above (screens repeat vertically) and the last position
 * whose next three pixels hashed alike. Each candidate is compared only as
 * far as it matches and the position then moves past the longest, so the
 * work is linear in the pixels (and positions are skipped where nothing
 * matched for long); the output is at most the all-literal size,
 * qs_enc_lz_bound(), below the raw 4 bytes a pixel.
 */

#define LZ_MAGIC 0x20205a4cu
#define LZ_VERSION 0x00010001u
#define LZ_TYPE_RGB32 8u
#define LZ_HEADER_SIZE 28u

#define MAX_LITERALS 32u
#define NEAR_DISTANCE 8191u             /* D - 1 fits 13 bits, all-ones excluded */
#define FAR_DISTANCE (8192u + 65535u)
#define MIN_MATCH 2u                    /* one copy code (2 bytes) beats 6 literal bytes */

/* After 2^SKIP_SHIFT positions without a copy, candidates are compared at
 * every other one, and so on up to SKIP_MAX + 1 apart. */
#define SKIP_SHIFT 6u
#define SKIP_MAX 15u

/* Hash table: 2^bits positions + 1 (0 = empty), sized to the image. */
#define HASH_BITS_MIN 10u
#define HASH_BITS_MAX 16u

typedef struct {
    const uint8_t *px;                  /* packed pixels, 4 bytes each */
    size_t n;                           /* pixel count */
    uint8_t *op, *end;                  /* output cursor and its bound */
} Lz;

static inline uint32_t rgb_at(const uint8_t *px, size_t i)
{
    const uint8_t *p = px + i * 4;

    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

static inline uint64_t two_at(const uint8_t *px, size_t i)
{
    uint64_t v;

    memcpy(&v, px + i * 4, 8);
    return GUINT64_FROM_LE(v) & G_GUINT64_CONSTANT(0x00ffffff00ffffff);
}

/* How many pixels from `at` equal those from `from` (from < at). */
static G_GNUC_NO_INLINE size_t match_length(const Lz *lz, size_t from, size_t at)
{
    size_t k = 0, left = lz->n - at;

    while (k + 2 <= left && two_at(lz->px, from + k) == two_at(lz->px, at + k)) {
        k += 2;
    }
    while (k < left && rgb_at(lz->px, from + k) == rgb_at(lz->px, at + k)) {
        k++;
    }
    return k;
}

static inline uint32_t hash3(const uint8_t *px, size_t i, unsigned bits)
{
    uint32_t h = rgb_at(px, i) * 0x9e3779b1u ^ rgb_at(px, i + 1) * 0x85ebca77u ^
                 rgb_at(px, i + 2) * 0xc2b2ae3du;

    return h >> (32 - bits);
}

static gboolean emit_literals(Lz *lz, size_t from, size_t to)
{
    while (from < to) {
        size_t count = MIN(to - from, (size_t)MAX_LITERALS);

        if ((size_t)(lz->end - lz->op) < 1 + 3 * count) {
            return FALSE;
        }
        *lz->op++ = (uint8_t)(count - 1);
        for (size_t i = from; i < from + count; i++) {
            const uint8_t *p = lz->px + i * 4;

            *lz->op++ = p[0];
            *lz->op++ = p[1];
            *lz->op++ = p[2];
        }
        from += count;
    }
    return TRUE;
}

static gboolean emit_copy(Lz *lz, size_t len, size_t dist)
{
    gboolean far = dist > NEAR_DISTANCE;
    size_t ext = len >= 7 ? len - 7 : 0;
    size_t need = 2 + (far ? 2 : 0) + (len >= 7 ? ext / 255 + 1 : 0);
    uint32_t code = far ? 8191u : (uint32_t)(dist - 1);

    if ((size_t)(lz->end - lz->op) < need) {
        return FALSE;
    }
    *lz->op++ = (uint8_t)((MIN(len, 7) << 5) | (code >> 8));
    if (len >= 7) {
        for (; ext >= 255; ext -= 255) {
            *lz->op++ = 255;
        }
        *lz->op++ = (uint8_t)ext;
    }
    *lz->op++ = (uint8_t)(code & 0xff);
    if (far) {
        *lz->op++ = (uint8_t)((dist - 8192) >> 8);
        *lz->op++ = (uint8_t)((dist - 8192) & 0xff);
    }
    return TRUE;
}

/* Keeps the longer of a candidate and the best so far; on a tie the nearer
 * one, whose code is shorter. Most candidates fail on their first pixel:
 * that test is inlined, the rest is not. */
static inline void consider(const Lz *lz, size_t from, size_t at, size_t *best_len,
                            size_t *best_dist)
{
    size_t len;

    if (rgb_at(lz->px, from) != rgb_at(lz->px, at)) {
        return;
    }
    len = match_length(lz, from, at);

    if (len > *best_len || (len == *best_len && at - from < *best_dist)) {
        *best_len = len;
        *best_dist = at - from;
    }
}

static gboolean compress(Lz *lz, uint32_t width)
{
    unsigned bits = HASH_BITS_MIN;
    g_autofree uint32_t *table = NULL;
    size_t i = 0, literal_from = 0, misses = 0;

    while (bits < HASH_BITS_MAX && ((size_t)1 << bits) < lz->n) {
        bits++;
    }
    table = g_new0(uint32_t, (size_t)1 << bits);
    while (i < lz->n) {
        size_t best_len = 0, best_dist = SIZE_MAX;

        if (i >= 1) {
            consider(lz, i - 1, i, &best_len, &best_dist);
        }
        if (i >= width && width > 1) {
            consider(lz, i - width, i, &best_len, &best_dist);
        }
        if (i + 3 <= lz->n) {
            uint32_t h = hash3(lz->px, i, bits);
            size_t cand = table[h];

            /* Positions are stored + 1 so that 0 means empty. */
            table[h] = (uint32_t)(i + 1);
            if (cand && i - (cand - 1) <= FAR_DISTANCE &&
                i - (cand - 1) != 1 && i - (cand - 1) != width) {
                consider(lz, cand - 1, i, &best_len, &best_dist);
            }
        }
        if (best_len < MIN_MATCH) {
            /* Noise: compare less often the longer nothing matched (as
             * LZ4 does), so what does not compress costs little time; the
             * positions passed still go into the table, so a copy of them
             * further on is found wherever it is probed. */
            size_t next = MIN(i + 1 + MIN(misses++ >> SKIP_SHIFT, (size_t)SKIP_MAX), lz->n);

            for (i++; i < next; i++) {
                if (i + 3 <= lz->n) {
                    table[hash3(lz->px, i, bits)] = (uint32_t)(i + 1);
                }
            }
            continue;
        }
        misses = 0;
        if (!emit_literals(lz, literal_from, i) || !emit_copy(lz, best_len, best_dist)) {
            return FALSE;
        }
        i += best_len;
        literal_from = i;
        /* The copy's last position stands for it in the table: finding
         * the whole copy again is rare, its end continuing often is. */
        if (i >= 1 && i + 2 <= lz->n) {
            table[hash3(lz->px, i - 1, bits)] = (uint32_t)i;
        }
    }
    return emit_literals(lz, literal_from, lz->n);
}

static void put_u32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

size_t qs_enc_lz_bound(uint32_t width, uint32_t height)
{
    size_t n = (size_t)width * height;

    return LZ_HEADER_SIZE + 3 * n + (n + MAX_LITERALS - 1) / MAX_LITERALS;
}

gboolean qs_enc_lz_append(const QsPixelRect *rect, size_t limit, GByteArray *out)
{
    size_t row = (size_t)rect->width * 4;
    size_t start = out->len;
    size_t room = MIN(limit, qs_enc_lz_bound(rect->width, rect->height));
    g_autofree uint8_t *packed = NULL;
    const uint32_t header[7] = {
        LZ_MAGIC, LZ_VERSION, LZ_TYPE_RGB32, rect->width, rect->height,
        (uint32_t)row, 1,               /* top_down */
    };
    Lz lz;

    g_assert(qs_pixel_rect_valid(rect));
    if (room <= LZ_HEADER_SIZE) {
        return FALSE;
    }
    /* Copies reach across rows, so the pixels must be one sequence. */
    if (rect->stride != row) {
        packed = g_malloc(row * rect->height);
        for (uint32_t y = 0; y < rect->height; y++) {
            memcpy(packed + row * y, rect->pixels + rect->stride * y, row);
        }
    }
    g_byte_array_set_size(out, (guint)(start + room));
    for (size_t k = 0; k < G_N_ELEMENTS(header); k++) {
        put_u32_be(out->data + start + 4 * k, header[k]);
    }
    lz = (Lz){
        .px = packed ? packed : rect->pixels,
        .n = (size_t)rect->width * rect->height,
        .op = out->data + start + LZ_HEADER_SIZE,
        .end = out->data + start + room,
    };
    /* The limit is exclusive: output that reaches it does not pay. */
    if (!compress(&lz, rect->width) || (size_t)(lz.op - (out->data + start)) >= limit) {
        g_byte_array_set_size(out, (guint)start);
        return FALSE;
    }
    g_byte_array_set_size(out, (guint)(lz.op - out->data));
    return TRUE;
}
