/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Copies qemu's pixels into the screen and finds the 16x16 blocks whose
 * pixels really changed, since guests and qemu flush whole planes. */

#include "qs-screen-private.h"

#include <string.h>

/* Stored pixels carry 0 in the X byte, so alpha and padding never count as
 * change; PIXMAN_[ax]8r8g8b8 are native-endian 32-bit words. */
#define QS_RGB_MASK 0x00ffffffu

/* 4 pixels at a time: gcc -O2 does not vectorise these loops itself. GCC
 * vector extensions (also in clang) compile to SSE2/NEON or plain words. */
typedef uint32_t QsVec __attribute__((vector_size(16)));
#define QS_VEC_PIXELS 4

/* Copies n pixels from an unaligned source, dropping the top byte. */
static inline void copy_masked(uint32_t *dst, const uint8_t *src, uint32_t n)
{
    const QsVec mask = { QS_RGB_MASK, QS_RGB_MASK, QS_RGB_MASK, QS_RGB_MASK };
    uint32_t i = 0;

    /* 64 bytes an iteration: four loads in flight hide more of the
     * memory latency (qemu's buffer is rarely in cache). */
    for (; i + 4 * QS_VEC_PIXELS <= n; i += 4 * QS_VEC_PIXELS) {
        QsVec v[4];

        memcpy(v, src + (size_t)i * 4, sizeof(v));
        v[0] &= mask;
        v[1] &= mask;
        v[2] &= mask;
        v[3] &= mask;
        memcpy(dst + i, v, sizeof(v));
    }
    for (; i + QS_VEC_PIXELS <= n; i += QS_VEC_PIXELS) {
        QsVec v;

        memcpy(&v, src + (size_t)i * 4, sizeof(v));
        v &= mask;
        memcpy(dst + i, &v, sizeof(v));
    }
    for (; i < n; i++) {
        uint32_t v;

        memcpy(&v, src + (size_t)i * 4, 4);
        dst[i] = v & QS_RGB_MASK;
    }
}

void qs_copy_rows(uint32_t *dst, size_t dst_stride, const uint8_t *src,
                  size_t src_stride, uint32_t width, uint32_t height)
{
    /* A shared map is read exactly once, here; rows need not be aligned (a
     * D-Bus byte array). */
    for (uint32_t r = 0; r < height; r++) {
        copy_masked((uint32_t *)((uint8_t *)dst + r * dst_stride),
                    src + r * src_stride, width);
    }
}

/* Whether a whole block's row segment (16 pixels) is unchanged. */
static inline gboolean equal16(const uint32_t *a, const uint32_t *b)
{
    QsVec x = { 0, 0, 0, 0 };

    for (uint32_t i = 0; i < QS_SCREEN_BLOCK; i += QS_VEC_PIXELS) {
        QsVec va, vb;

        memcpy(&va, a + i, sizeof(va));
        memcpy(&vb, b + i, sizeof(vb));
        x |= va ^ vb;
    }
    return (x[0] | x[1] | x[2] | x[3]) == 0;
}

static inline void extent_add(QsBlockExtent *e, uint32_t x0, uint32_t x1,
                              uint32_t y)
{
    if (e->x0 > e->x1) {
        e->x0 = x0;
        e->x1 = x1;
        e->y0 = y;
        e->y1 = y;
        return;
    }
    e->x0 = MIN(e->x0, x0);
    e->x1 = MAX(e->x1, x1);
    e->y0 = MIN(e->y0, y);
    e->y1 = MAX(e->y1, y);
}

static inline void extent_union(QsBlockExtent *e, const QsBlockExtent *add)
{
    extent_add(e, add->x0, add->x1, add->y0);
    e->y1 = MAX(e->y1, add->y1);
}

/* One row of the rectangle: notes, per block, which columns differ, then
 * stores the row. `dst` and `src` point at the rectangle's first
 * pixel in the row; `x` is its surface column. */
static gboolean diff_row(uint32_t *dst, const uint32_t *src, uint32_t x,
                         uint32_t width, uint32_t y_in_block,
                         QsBlockExtent *band)
{
    uint32_t done = 0;

    if (memcmp(dst, src, (size_t)width * 4) == 0) {
        return FALSE;
    }
    while (done < width) {
        uint32_t col = x + done;
        uint32_t n = MIN(width - done,
                         QS_SCREEN_BLOCK - col % QS_SCREEN_BLOCK);
        uint32_t *d = dst + done;
        const uint32_t *s = src + done;
        uint32_t first = 0, last;

        /* Changed pixels at both ends (a whole-block change) need no scan;
         * an unchanged block is skipped 16 pixels at a time. */
        if (d[0] == s[0]) {
            if (n == QS_SCREEN_BLOCK && equal16(d, s)) {
                done += n;
                continue;
            }
            while (first < n && d[first] == s[first]) {
                first++;
            }
            if (first == n) {
                done += n;
                continue;
            }
        }
        last = n - 1;
        while (d[last] == s[last]) {
            last--;
        }
        extent_add(&band[col / QS_SCREEN_BLOCK],
                   col % QS_SCREEN_BLOCK + first,
                   col % QS_SCREEN_BLOCK + last, y_in_block);
        done += n;
    }
    /* One copy for the row: unchanged pixels are rewritten with themselves,
     * cheaper than a copy per block. */
    memcpy(dst, src, (size_t)width * 4);
    return TRUE;
}

gboolean qs_screen_apply(QsScreen *screen, uint32_t x, uint32_t y,
                         uint32_t width, uint32_t height, const uint8_t *src,
                         size_t src_stride, int64_t now_us)
{
    /* Only the producer replaces the surface, and it holds produce_lock. */
    QsSurface *s = screen->surface;
    uint32_t bx0 = x / QS_SCREEN_BLOCK;
    uint32_t bx1 = (x + width - 1) / QS_SCREEN_BLOCK;
    gboolean changed = FALSE;

    /* Band by band (one block row): copy the rows out of qemu's buffer, which
     * the guest may be writing, then compare and store under the lock what
     * was copied. The band is small enough to stay in cache between the two,
     * and taking the lock per band keeps consumers' waits short. */
    for (uint32_t by = y / QS_SCREEN_BLOCK; by * QS_SCREEN_BLOCK < y + height;
         by++) {
        uint32_t r0 = MAX(y, by * QS_SCREEN_BLOCK);
        uint32_t r1 = MIN(y + height, (by + 1) * QS_SCREEN_BLOCK);
        gboolean band_changed = FALSE;

        qs_copy_rows(s->scratch, (size_t)width * 4,
                     src + (size_t)(r0 - y) * src_stride, src_stride, width,
                     r1 - r0);

        g_mutex_lock(&screen->lock);
        for (uint32_t r = r0; r < r1; r++) {
            band_changed |= diff_row(s->pixels + (size_t)r * s->width + x,
                                     s->scratch + (size_t)(r - r0) * width,
                                     x, width, r % QS_SCREEN_BLOCK, s->band);
        }
        if (band_changed) {
            /* Each band is a commit of its own: a consumer may take its
             * damage between two bands of one call. */
            uint64_t commit = ++screen->commits;

            if (!changed) {
                qs_heat_advance(screen, now_us);
                changed = TRUE;
            }
            for (uint32_t bx = bx0; bx <= bx1; bx++) {
                uint32_t b = by * s->blocks_x + bx;

                if (s->band[bx].x0 > s->band[bx].x1) {
                    continue;
                }
                s->block_seq[b] = commit;
                s->block_time[b] = now_us;
                extent_union(&s->extent[b], &s->band[bx]);
                qs_heat_count(screen, b, now_us);
                s->band[bx] = QS_EXTENT_NONE;
            }
        }
        g_mutex_unlock(&screen->lock);
    }
    return changed;
}
