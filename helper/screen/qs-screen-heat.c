/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Heat: how often each block changed in the last second, at qemu's rate. */

/*
 * Why count here: a server that counts change when it sends (the andris
 * prototype, measured before this one) never sees a video on a link too slow to send its
 * first frames, and keeps sending it as still images into a full link. The
 * listener thread sees every change when qemu delivers it, so heat is counted
 * on now_us of the producer calls, and reads only look at it.
 *
 * Why these numbers (qs-screen.h): a 1 s window of 100 ms buckets is long
 * enough to smooth a video's jitter (qemu refreshes every 30 ms, std-vga
 * quantises to that) and short enough that a ring of 10 bytes per block
 * suffices and expiry costs one pass over the blocks per 100 ms. spice-server
 * wants 20 frames in 2 s; that is 633 ms of 30 fps before a stream, and the
 * requirement here is hot within 300 ms, so 8 changes: 233 ms at 30 fps,
 * 292 ms at 24 fps, never for typing, a cursor or a clock (under 8 changes a
 * second per block). The 200 ms gap, spice-server's too, makes a stopped
 * video cold quickly instead of after the whole window. Counting at most once
 * per 4 ms merges the rectangles of one guest flush (they can share edge
 * blocks) while still counting 240 Hz as 240 Hz.
 */

#include "qs-screen-private.h"

#include <string.h>

static int64_t bucket_of(int64_t now_us)
{
    return now_us >= 0 ? now_us / QS_SCREEN_HEAT_BUCKET_US : 0;
}

void qs_heat_advance(QsScreen *screen, int64_t now_us)
{
    QsSurface *s = screen->surface;
    size_t nblocks = (size_t)s->blocks_x * s->blocks_y;
    int64_t bucket = bucket_of(now_us);
    int64_t steps;

    if (bucket <= screen->heat_bucket) {
        /* Same bucket, or a clock that went back: count in the newest. */
        return;
    }
    steps = MIN(bucket - screen->heat_bucket, QS_SCREEN_HEAT_BUCKETS);
    for (int64_t i = 1; i <= steps; i++) {
        uint8_t *row = s->heat_counts +
            ((screen->heat_bucket + i) % QS_SCREEN_HEAT_BUCKETS) * nblocks;

        for (size_t b = 0; b < nblocks; b++) {
            if (!row[b]) {
                continue;
            }
            s->heat_total[b] -= row[b];
            if (!s->heat_total[b]) {
                s->extent[b] = QS_EXTENT_NONE;
            }
        }
        memset(row, 0, nblocks);
    }
    screen->heat_bucket = bucket;
}

void qs_heat_count(QsScreen *screen, uint32_t block, int64_t now_us)
{
    QsSurface *s = screen->surface;
    size_t nblocks = (size_t)s->blocks_x * s->blocks_y;
    uint8_t *count;

    if (now_us - s->heat_counted[block] < QS_SCREEN_HEAT_MIN_INTERVAL_US &&
        now_us >= s->heat_counted[block]) {
        return;
    }
    s->heat_counted[block] = now_us;
    count = &s->heat_counts[(screen->heat_bucket % QS_SCREEN_HEAT_BUCKETS) *
                            nblocks + block];
    if (*count < UINT8_MAX) {
        (*count)++;
        s->heat_total[block]++;
    }
}

static void rect_union(QsRect *r, const QsRect *add)
{
    int32_t x1, y1;

    if (add->width <= 0) {
        return;
    }
    if (r->width <= 0) {
        *r = *add;
        return;
    }
    x1 = MAX(r->x + r->width, add->x + add->width);
    y1 = MAX(r->y + r->height, add->y + add->height);
    r->x = MIN(r->x, add->x);
    r->y = MIN(r->y, add->y);
    r->width = x1 - r->x;
    r->height = y1 - r->y;
}

static QsScreenHeat *snapshot_locked(QsScreen *screen, int64_t now_us)
{
    QsScreenHeat *heat = g_new0(QsScreenHeat, 1);
    QsSurface *s = screen->surface;
    size_t nblocks;

    heat->serial = screen->serial;
    if (!s) {
        return heat;
    }
    qs_heat_advance(screen, now_us);
    heat->width = s->width;
    heat->height = s->height;
    heat->blocks_x = s->blocks_x;
    heat->blocks_y = s->blocks_y;
    nblocks = (size_t)s->blocks_x * s->blocks_y;
    heat->hot = g_new0(uint8_t, nblocks);
    heat->counts = g_memdup2(s->heat_total, nblocks * sizeof(uint16_t));
    heat->changed = g_new0(QsRect, nblocks);
    heat->last_change_us = g_new(int64_t, nblocks);
    for (uint32_t by = 0; by < s->blocks_y; by++) {
        for (uint32_t bx = 0; bx < s->blocks_x; bx++) {
            size_t b = (size_t)by * s->blocks_x + bx;
            const QsBlockExtent *e = &s->extent[b];
            QsRect block = {
                bx * QS_SCREEN_BLOCK, by * QS_SCREEN_BLOCK,
                MIN(QS_SCREEN_BLOCK, s->width - bx * QS_SCREEN_BLOCK),
                MIN(QS_SCREEN_BLOCK, s->height - by * QS_SCREEN_BLOCK),
            };

            heat->last_change_us[b] = s->block_time[b];
            if (e->x0 <= e->x1) {
                heat->changed[b] = (QsRect){
                    block.x + e->x0, block.y + e->y0,
                    e->x1 - e->x0 + 1, e->y1 - e->y0 + 1,
                };
            }
            if (s->heat_total[b] < QS_SCREEN_HEAT_HOT_COUNT ||
                now_us - s->block_time[b] > QS_SCREEN_HEAT_MAX_GAP_US) {
                continue;
            }
            heat->hot[b] = 1;
            heat->n_hot++;
            rect_union(&heat->hot_blocks, &block);
            rect_union(&heat->hot_pixels, &heat->changed[b]);
        }
    }
    return heat;
}

QsScreenHeat *qs_screen_heat_snapshot(QsScreen *screen, int64_t now_us)
{
    QsScreenHeat *heat;

    g_mutex_lock(&screen->lock);
    heat = snapshot_locked(screen, now_us);
    g_mutex_unlock(&screen->lock);
    return heat;
}

void qs_screen_heat_free(QsScreenHeat *heat)
{
    if (!heat) {
        return;
    }
    g_free(heat->hot);
    g_free(heat->counts);
    g_free(heat->changed);
    g_free(heat->last_change_us);
    g_free(heat);
}
